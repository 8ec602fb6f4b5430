//! The HTTP+SSE transport of MCP 2024-11-05, without IO: the event stream a client reads
//! from such a server, and the endpoint it posts its messages to.
//!
//! The specification's backwards-compatibility rule, which drivers follow: "Attempt to POST
//! an InitializeRequest to the server URL [...]. If it fails with an HTTP 4xx status code
//! (e.g., 405 Method Not Allowed or 404 Not Found): Issue a GET request to the server URL,
//! expecting that this will open an SSE stream and return an `endpoint` event as the first
//! event. When the `endpoint` event arrives, use this as the endpoint for all future
//! messages." Every message from the server then arrives on that stream as a `message`
//! event, and every message of the client is a POST to the endpoint (whose answer carries
//! nothing but its status).
//!
//! [`EventStream`] decodes the stream with [`crate::sse::Decoder`] and hands out the endpoint
//! (resolved against the server URL and refused when it names another origin, so a server
//! cannot send the client's headers elsewhere) and the messages, in order.

use super::jsonrpc::Message;
use crate::sse::{DecodeError, Decoder};
use crate::tool::fetch::{UrlError, host_and_port, resolve_redirect};

/// What the event stream of a 2024-11-05 server said.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// The URL to POST messages to: the first `endpoint` event's, resolved against the
    /// server URL. Later `endpoint` events are ignored.
    Endpoint(String),
    /// The JSON-RPC messages of one `message` event (a batch gives several).
    Messages(Vec<Message>),
    /// A `message` event whose data is not JSON-RPC; the text says what was wrong. The
    /// stream goes on (the client decides what a malformed message means).
    Malformed(String),
}

/// Why the event stream of a 2024-11-05 server cannot be used any longer. Each error is
/// terminal: [`EventStream::poll_event`] returns it again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// The server closed the stream before naming its endpoint (the server's fault, or not
    /// an HTTP+SSE server at all).
    #[error(
        "the server's event stream ended before its `endpoint` event; check that the URL is \
         the server's SSE endpoint"
    )]
    NoEndpoint,
    /// The server closed the stream after the endpoint: no answer can arrive any more.
    #[error("the server closed its event stream")]
    Closed,
    /// The `endpoint` event names a URL that cannot be used (the server's fault).
    #[error("the server's `endpoint` event is not a usable URL ({0})")]
    BadEndpoint(UrlError),
    /// The `endpoint` event names another origin than the server URL: refused, as the
    /// configured headers (credentials, often) would go there.
    #[error(
        "the server's `endpoint` event names another origin ({endpoint}) than the server URL; \
         refused, as the configured headers would be sent there"
    )]
    ForeignEndpoint {
        /// The endpoint as resolved.
        endpoint: String,
    },
    /// The stream is not valid SSE (an event past the size limit).
    #[error("the server's event stream is unusable: {0}")]
    Sse(DecodeError),
}

/// The event stream of one 2024-11-05 server: feed it bytes, then drain
/// [`EventStream::poll_event`] until it returns `Ok(None)`.
#[derive(Debug)]
pub struct EventStream {
    url: String,
    decoder: Decoder,
    endpoint: Option<String>,
    error: Option<StreamError>,
}

impl EventStream {
    /// A stream read from the server URL `url` (the URL of the GET).
    pub fn new(url: &str) -> Self {
        EventStream {
            url: url.to_owned(),
            decoder: Decoder::new(),
            endpoint: None,
            error: None,
        }
    }

    /// Buffers the next bytes of the stream.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.decoder.feed(bytes);
    }

    /// Marks the end of the stream.
    pub fn feed_eof(&mut self) {
        self.decoder.feed_eof();
    }

    /// The endpoint, once the server named it.
    pub fn endpoint(&self) -> Option<&str> {
        self.endpoint.as_deref()
    }

    /// The next event; `Ok(None)` when more bytes are needed.
    pub fn poll_event(&mut self) -> Result<Option<StreamEvent>, StreamError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        let result = self.next_event();
        if let Err(error) = &result {
            self.error = Some(error.clone());
        }
        result
    }

    fn next_event(&mut self) -> Result<Option<StreamEvent>, StreamError> {
        loop {
            let Some(event) = self.decoder.poll_event().map_err(StreamError::Sse)? else {
                if self.decoder.is_eof() {
                    return Err(match self.endpoint {
                        None => StreamError::NoEndpoint,
                        Some(_) => StreamError::Closed,
                    });
                }
                return Ok(None);
            };
            match event.event_type() {
                "endpoint" if self.endpoint.is_none() => {
                    let endpoint = self.resolve(event.data.trim())?;
                    self.endpoint = Some(endpoint.clone());
                    return Ok(Some(StreamEvent::Endpoint(endpoint)));
                }
                // "message" is also the type of an event that names none.
                "message" => {
                    if event.data.trim().is_empty() {
                        continue;
                    }
                    return Ok(Some(match Message::parse(event.data.as_bytes()) {
                        Ok(messages) => StreamEvent::Messages(messages),
                        Err(e) => StreamEvent::Malformed(e.to_string()),
                    }));
                }
                // A repeated endpoint, pings and types of later revisions.
                _ => continue,
            }
        }
    }

    /// `data` resolved against the server URL, when it has the server URL's origin.
    fn resolve(&self, data: &str) -> Result<String, StreamError> {
        let endpoint = resolve_redirect(&self.url, data).map_err(StreamError::BadEndpoint)?;
        // Two URLs whose origin cannot be read are not the same origin.
        match (origin(&endpoint), origin(&self.url)) {
            (Some(a), Some(b)) if a == b => Ok(endpoint),
            _ => Err(StreamError::ForeignEndpoint { endpoint }),
        }
    }
}

/// The scheme, host and port of an URL, compared without regard to case.
fn origin(url: &str) -> Option<(String, String, u16)> {
    let scheme = url.split_once(':')?.0.to_ascii_lowercase();
    let (host, port) = host_and_port(url).ok()?;
    Some((scheme, host.to_ascii_lowercase(), port))
}

/// Most bytes of a refused answer's body that [`quote_refusal`] quotes.
pub const MAX_QUOTED_REFUSAL: usize = 200;

/// What the body of an answer that refused the streamable-HTTP `initialize` said, as one
/// shortened line for the failure text when the fallback fails too (a server's "Bad Request:
/// No valid session ID" tells the user more than either status). Control characters and runs
/// of white space become one space, so a hostile body cannot reach the terminal as such;
/// `None` for a body with nothing to show.
pub fn quote_refusal(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let mut line = String::with_capacity(text.len().min(4 * MAX_QUOTED_REFUSAL));
    for word in text
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
    {
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    (!line.is_empty()).then(|| crate::text::shorten(&line, MAX_QUOTED_REFUSAL).into_owned())
}

#[cfg(test)]
#[path = "legacy_tests.rs"]
mod tests;
