//! Scripted mock provider: a real HTTP/1.1 server on 127.0.0.1 for tests and benchmarks.
//!
//! [`MockProvider::start`] binds an ephemeral loopback port and answers
//! `POST /v1/chat/completions` with the scripted [`Reply`]s in order, `GET /v1/models` with a
//! configurable model list, and records every request it parsed so a test can assert on what
//! the client sent (`/models` lookups apart from the others). Dropping the provider stops it promptly, even with connections in the
//! middle of a delayed reply.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use hrns_blocking::mock::{MockProvider, Reply, chunk};
//!
//! let mock = MockProvider::start([
//!     Reply::text_answer("Hello world"),
//!     Reply::sse([chunk::text_chunk("slow"), chunk::finish_chunk("stop")])
//!         .split_every(7)
//!         .delay(Duration::from_millis(20)),
//!     Reply::rate_limited("1"),
//! ])?;
//! let base_url = mock.base_url(); // "http://127.0.0.1:PORT/v1"
//! // ... run the client against `base_url` ...
//! assert!(mock.wait_for_requests(1, Duration::from_secs(5)));
//! let sent = &mock.requests()[0];
//! assert_eq!(sent.header("content-type"), Some("application/json"));
//! assert_eq!(sent.json()["stream"], true);
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # Routes
//!
//! | request | answer |
//! | --- | --- |
//! | `POST /v1/chat/completions`, `POST /chat/completions` | the next scripted reply; when the script is exhausted the repeated reply ([`MockProvider::start_repeating`]), else 500 |
//! | … over the context window ([`MockProvider::with_context_window`]) | 400 `context_length_exceeded`, the script untouched |
//! | … a compaction's summary request ([`MockProvider::with_summary_reply`]) | the summary reply, the script untouched |
//! | `GET /v1/models`, `GET /models` | `{"object":"list","data":[{"id":..,"object":"model","owned_by":"mock"}]}` (with `context_length` when a window is set) |
//! | another method on those paths | 405 |
//! | anything else | 404 |
//!
//! A provider started with [`MockProvider::start_with`] asks its responder first, for every
//! route.
//!
//! The errors the mock makes up itself look like
//! `{"error":{"message":"mock provider: script exhausted","type":"mock"}}`.
//!
//! # On the wire
//!
//! - One thread per connection; keep-alive as HTTP/1.1 says (until `Connection: close` or
//!   end of stream; HTTP/1.0 only with `Connection: keep-alive`); pipelined requests work.
//! - Request bodies with `Content-Length` or `Transfer-Encoding: chunked`, up to 64 MiB
//!   (413 beyond); heads up to 64 KiB (431 beyond); `Expect: 100-continue` is answered. A
//!   request that does not parse gets 400 (505 for another HTTP version) and the connection
//!   is closed; it is not recorded.
//! - Streamed replies use `Transfer-Encoding: chunked`, each piece its own chunk written in
//!   one `write` on a `TCP_NODELAY` socket, so the client sees it at once; see [`Reply`].
//! - A client that goes away mid-reply only ends its connection's thread.

mod context;
mod http;
mod script;
mod server;

pub mod chunk;

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub use context::MOCK_BYTES_PER_TOKEN;
pub use script::Reply;

use server::{Server, State, lock};

/// A function that answers a request itself (`Some`), or leaves it to the script (`None`);
/// see [`MockProvider::start_with`].
pub type Responder = Arc<dyn Fn(&RecordedRequest) -> Option<Reply> + Send + Sync>;

/// A scripted OpenAI-compatible provider on a loopback port; stops when dropped.
pub struct MockProvider {
    server: Server,
}

impl MockProvider {
    /// Starts serving `script`: each chat request takes the next reply, in order.
    ///
    /// # Errors
    ///
    /// When binding 127.0.0.1 or starting the accept thread fails.
    pub fn start(script: impl IntoIterator<Item = Reply>) -> io::Result<Self> {
        let state = State::new(script.into_iter().collect(), None);
        Ok(Self {
            server: Server::start(state)?,
        })
    }

    /// Starts serving `reply` to every chat request (after any [`push`](Self::push)ed
    /// replies), for benchmarks. Clones share the body.
    ///
    /// # Errors
    ///
    /// When binding 127.0.0.1 or starting the accept thread fails.
    pub fn start_repeating(reply: Reply) -> io::Result<Self> {
        let state = State::new(VecDeque::new(), Some(reply));
        Ok(Self {
            server: Server::start(state)?,
        })
    }

    /// Starts a provider whose answers `responder` chooses from each request (any route), for
    /// tests of providers that behave by what they are sent (refusing a field, wanting a key).
    /// Requests it returns `None` for get the default routes (and an empty script).
    ///
    /// # Errors
    ///
    /// When binding 127.0.0.1 or starting the accept thread fails.
    pub fn start_with(
        responder: impl Fn(&RecordedRequest) -> Option<Reply> + Send + Sync + 'static,
    ) -> io::Result<Self> {
        let mut state = State::new(VecDeque::new(), None);
        state.responder = Some(server::ResponderSlot(Arc::new(responder)));
        Ok(Self {
            server: Server::start(state)?,
        })
    }

    /// Sets the ids `GET /v1/models` lists (default: `["mock-model"]`).
    #[must_use]
    pub fn with_models(self, models: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.set_models(models);
        self
    }

    /// Answers every summary request of a compaction (a chat request without tools whose
    /// messages carry [`hrns_core::context::SUMMARY_PROMPT`]) with `reply`, wherever it comes,
    /// without taking a scripted reply.
    #[must_use]
    pub fn with_summary_reply(self, reply: Reply) -> Self {
        lock(&self.server.shared().state).summary = Some(reply);
        self
    }

    /// Gives the model a context window of `tokens`: `/models` lists it as `context_length`,
    /// and a chat request longer than that ([`MOCK_BYTES_PER_TOKEN`] bytes of body per token)
    /// is answered 400 with OpenAI's `context_length_exceeded` error instead of a scripted
    /// reply.
    #[must_use]
    pub fn with_context_window(self, tokens: u64) -> Self {
        lock(&self.server.shared().state).window = Some(tokens);
        self
    }

    /// Replaces the ids `GET /v1/models` lists, while running.
    pub fn set_models(&self, models: impl IntoIterator<Item = impl Into<String>>) {
        let models = models.into_iter().map(Into::into).collect();
        lock(&self.server.shared().state).models = models;
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// The base URL to configure a client with: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr())
    }

    /// Appends `reply` to the script, while running.
    pub fn push(&self, reply: Reply) {
        lock(&self.server.shared().state).script.push_back(reply);
    }

    /// How many scripted replies have not been served yet.
    pub fn remaining(&self) -> usize {
        lock(&self.server.shared().state).script.len()
    }

    /// The requests received so far, in order (while recording is on; see
    /// [`set_recording`](Self::set_recording)), except `GET /models` lookups, which
    /// [`model_requests`](Self::model_requests) lists.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.server.shared().state).requests.clone()
    }

    /// How many connections clients opened to the provider so far (a client that keeps its
    /// connection alive sends its next request on the same one).
    pub fn connections(&self) -> u64 {
        self.server.shared().connections_accepted()
    }

    /// The `GET /models` (and `HEAD`) requests received so far, in order.
    pub fn model_requests(&self) -> Vec<RecordedRequest> {
        lock(&self.server.shared().state).model_requests.clone()
    }

    /// The chat requests received so far, in order: [`requests`](Self::requests) without
    /// requests to other paths.
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        let state = lock(&self.server.shared().state);
        state
            .requests
            .iter()
            .filter(|r| r.path.ends_with("/chat/completions"))
            .cloned()
            .collect()
    }

    /// How many requests were received so far, recorded or not.
    pub fn request_count(&self) -> usize {
        lock(&self.server.shared().state).seen
    }

    /// Waits until `n` requests in all were received (counted before their replies are
    /// written); `false` if `timeout` passed first.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        self.server.shared().wait_for_requests(n, timeout)
    }

    /// Turns recording of requests on (the default) or off, e.g. for long benchmarks whose
    /// requests would pile up; [`request_count`](Self::request_count) keeps counting.
    pub fn set_recording(&self, on: bool) {
        lock(&self.server.shared().state).recording = on;
    }
}

impl fmt::Debug for MockProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.server.shared().state);
        f.debug_struct("MockProvider")
            .field("addr", &self.server.addr())
            .field("remaining", &state.script.len())
            .field("repeating", &state.repeat.is_some())
            .field("models", &state.models)
            .field("requests_seen", &state.seen)
            .finish()
    }
}

/// A request the mock provider received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `POST`, `GET`, ...
    pub method: String,
    /// The target as sent, query included (`/v1/chat/completions`); an absolute-form target
    /// is reduced to its path.
    pub path: String,
    /// Header names lowercased, values trimmed, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body, decoded from chunked encoding if it was sent so.
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The first value of the header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The body as text, invalid UTF-8 replaced.
    pub fn body_str(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.body)
    }

    /// The body parsed as JSON.
    ///
    /// # Panics
    ///
    /// When the body is not JSON; the message shows the body.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "mock provider: request body is not JSON ({e}): {}",
                self.body_str()
            )
        })
    }
}

#[cfg(test)]
mod tests;
