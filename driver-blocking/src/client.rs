//! The HTTP client on ureq: one agent per provider, requests from hrns-core's descriptions,
//! errors mapped to the core's types.

use crate::ClientConfig;
use crate::read_ahead::READ_SIZE;
use hrns_core::Completion;
use hrns_core::answer::AnswerError;
use hrns_core::client::{
    self as pure, MAX_CHAT_BODY, MAX_MODELS_BODY, Next, Opening, StreamedChat,
};
use hrns_core::http::{HttpRequest, Method};
use hrns_core::session::{Provider, TransportError, TransportErrorKind};
use hrns_core::stream::StreamEvent;
use hrns_core::wire::{ChatRequest, ChatResponse, ModelInfo};
use std::io::{BufRead, BufReader, Read};
use std::time::Duration;

/// The connection's own input buffer (ureq's default is 128 KiB): one system call takes up to
/// this much of a fast stream, so far fewer calls for the same bytes (issue 20's
/// `BENCHMARKS.md`). ureq zeroes it on a connection's first use, so each pooled connection
/// keeps 1 MiB resident.
pub(crate) const INPUT_BUFFER: usize = 1024 * 1024;

pub use hrns_core::client::ClientError;

/// An OpenAI-compatible endpoint on a blocking HTTP agent. Cheap to clone (the connection
/// pool is shared).
#[derive(Debug, Clone)]
pub struct Client {
    agent: ureq::Agent,
    provider: Provider,
}

impl Client {
    /// A client for `provider`.
    pub fn new(provider: Provider, config: &ClientConfig) -> Self {
        let tls = ureq::tls::TlsConfig::builder()
            .disable_verification(config.skip_verify)
            .build();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(config.connect_timeout))
            .timeout_recv_response(Some(config.read_idle_timeout))
            .timeout_per_read(Some(config.read_idle_timeout))
            .user_agent(config.user_agent.as_str())
            .tls_config(tls)
            .max_redirects(0)
            .input_buffer_size(INPUT_BUFFER)
            .build()
            .into();
        Client { agent, provider }
    }

    /// The provider this client talks to.
    pub fn provider(&self) -> &Provider {
        &self.provider
    }

    /// Sends a request described by hrns-core and returns the response head and body reader.
    pub fn send(&self, req: &HttpRequest) -> Result<HttpResponse, TransportError> {
        self.send_within(req, None)
    }

    /// [`Client::send`], giving up after `within` when given (for the whole exchange).
    fn send_within(
        &self,
        req: &HttpRequest,
        within: Option<Duration>,
    ) -> Result<HttpResponse, TransportError> {
        let response = match req.method {
            Method::Get => {
                let mut r = self.agent.get(&req.url);
                for (name, value) in req.wire_headers() {
                    r = r.header(name, value);
                }
                match within {
                    Some(t) => r.config().timeout_global(Some(t)).build().call(),
                    None => r.call(),
                }
            }
            Method::Post => {
                let mut r = self.agent.post(&req.url);
                for (name, value) in req.wire_headers() {
                    r = r.header(name, value);
                }
                match within {
                    Some(t) => r
                        .config()
                        .timeout_global(Some(t))
                        .build()
                        .send(&req.body[..]),
                    None => r.send(&req.body[..]),
                }
            }
        }
        .map_err(|e| transport_error(&e))?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec()))
            .collect();
        Ok(HttpResponse {
            status,
            headers,
            body: Box::new(response.into_body().into_reader()),
        })
    }

    /// The provider's models (`GET /models`).
    pub fn list_models(&self) -> Result<Vec<ModelInfo>, ClientError> {
        self.list_models_within(None)
    }

    /// [`Client::list_models`] giving up after `within`, for a lookup that must not hold a
    /// run up. On the client's own connections: the run's next request reuses the one it
    /// opened (no second connection, handshake or input buffer).
    pub fn list_models_within(
        &self,
        within: Option<Duration>,
    ) -> Result<Vec<ModelInfo>, ClientError> {
        let mut resp = self.send_within(&pure::models_request(&self.provider), within)?;
        let body = resp.read_all(MAX_MODELS_BODY)?;
        let headers = resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_slice()));
        pure::read_models(resp.status, headers, &body)
    }

    /// A non-streaming chat completion (`stream` is forced off).
    pub fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ClientError> {
        let mut resp = self.send(&pure::chat_request(&self.provider, request, false))?;
        let body = resp.read_all(MAX_CHAT_BODY)?;
        let headers = resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_slice()));
        pure::read_chat(resp.status, headers, &body)
    }

    /// A streaming chat completion: an iterator of stream events, each yielded as soon as its
    /// bytes arrive. After the last event, [`ChatEvents::finish`] gives the complete answer.
    ///
    /// An answer that fails before its first event — an error status, a page that is not an
    /// event stream — fails here, with the provider's message; a provider that sends one whole
    /// JSON answer instead of a stream gives its text as one event.
    pub fn stream_chat(&self, request: &ChatRequest) -> Result<ChatEvents, ClientError> {
        let resp = self.send(&pure::chat_request(&self.provider, request, true))?;
        let answer = StreamedChat::new(
            resp.status,
            resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_slice())),
        );
        let mut events = ChatEvents {
            body: BufReader::with_capacity(READ_SIZE, resp.body),
            answer,
        };
        loop {
            match events.answer.opening() {
                Opening::Open => return Ok(events),
                Opening::Failed(error) => return Err(error),
                Opening::NeedsBody => events.read()?,
            }
        }
    }
}

/// Something that sends requests described by hrns-core: the [`Client`], or a recording or a
/// replay of one (the CLI's `--record` and `hrns replay`).
pub trait Transport: Send + Sync {
    /// Sends `req` and returns the response head with a reader of its body.
    fn send(&self, req: &HttpRequest) -> Result<HttpResponse, TransportError>;
}

impl Transport for Client {
    fn send(&self, req: &HttpRequest) -> Result<HttpResponse, TransportError> {
        Client::send(self, req)
    }
}

/// A response head and its body reader, as a [`Transport`] hands it back.
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The headers (names lower-case).
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body, read as it arrives.
    pub body: Box<dyn Read + Send>,
}

impl std::fmt::Debug for HttpResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpResponse")
            .field("status", &self.status)
            .field("headers", &self.headers.len())
            .finish_non_exhaustive()
    }
}

impl HttpResponse {
    fn read_all(&mut self, limit: u64) -> Result<Vec<u8>, TransportError> {
        let mut out = Vec::new();
        (&mut self.body)
            .take(limit)
            .read_to_end(&mut out)
            .map_err(|e| io_error(&e))?;
        Ok(out)
    }
}

/// The events of a streamed answer; see [`Client::stream_chat`]. A read loop around the
/// core's [`StreamedChat`], which decides what the answer is.
///
/// The body is read on the caller's thread, in reads of up to 256 KiB (what the connection has
/// buffered, never waiting for more). A reading thread beside it was measured slower: on a
/// fast stream its hand-offs cost more than the overlap gained (issue 20's `BENCHMARKS.md`).
pub struct ChatEvents {
    body: BufReader<Box<dyn Read + Send>>,
    answer: StreamedChat,
}

impl std::fmt::Debug for ChatEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatEvents")
            .field("answer", &self.answer)
            .finish_non_exhaustive()
    }
}

impl ChatEvents {
    /// Reads the rest of the stream and gives the complete answer, or the error with what
    /// arrived before it.
    pub fn finish(mut self) -> Result<Completion, AnswerError> {
        for _ in self.by_ref() {}
        self.answer.finish()
    }

    /// Hands the next piece of the body to the answer, as the reader thread read it.
    fn read(&mut self) -> Result<(), ClientError> {
        let n = match self.body.fill_buf() {
            Ok([]) => {
                self.answer.handle_end();
                return Ok(());
            }
            Ok(piece) => {
                self.answer.handle_data(piece);
                piece.len()
            }
            Err(e) => return Err(self.answer.handle_transport_error(io_error(&e))),
        };
        self.body.consume(n);
        Ok(())
    }
}

impl Iterator for ChatEvents {
    type Item = Result<StreamEvent, ClientError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.answer.poll_next() {
                Next::Event(event) => return Some(Ok(event)),
                Next::Failed(error) => return Some(Err(error)),
                Next::End => return None,
                Next::NeedsBody => {
                    if let Err(error) = self.read() {
                        return Some(Err(error));
                    }
                }
            }
        }
    }
}

/// Maps a ureq error to the core's transport error classes.
pub fn transport_error(e: &ureq::Error) -> TransportError {
    use TransportErrorKind as K;
    let kind = match e {
        ureq::Error::Timeout(_) | ureq::Error::BodyStalled => K::Timeout,
        ureq::Error::HostNotFound
        | ureq::Error::ConnectionFailed
        | ureq::Error::ConnectProxyFailed(_) => K::Connect,
        ureq::Error::Io(io) => return io_error(io),
        ureq::Error::Tls(_)
        | ureq::Error::Rustls(_)
        | ureq::Error::Pem(_)
        | ureq::Error::TlsRequired => K::Tls,
        ureq::Error::BadUri(_)
        | ureq::Error::Http(_)
        | ureq::Error::RequireHttpsOnly(_)
        | ureq::Error::InvalidProxyUrl => K::InvalidRequest,
        ureq::Error::Protocol(_) | ureq::Error::Decompress(..) => K::Io,
        _ => K::Other,
    };
    TransportError::new(kind, e.to_string())
}

/// Maps an IO error while reading or writing to a transport error.
pub fn io_error(e: &std::io::Error) -> TransportError {
    use TransportErrorKind as K;
    use std::io::ErrorKind as E;
    let kind = match e.kind() {
        E::TimedOut | E::WouldBlock => K::Timeout,
        E::ConnectionRefused | E::NotFound | E::AddrNotAvailable => K::Connect,
        _ => {
            // ureq wraps its own errors (timeouts, TLS) in io::Error when reading a body.
            match e
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<ureq::Error>())
            {
                Some(inner) => return transport_error(inner),
                None => K::Io,
            }
        }
    };
    TransportError::new(kind, e.to_string())
}
