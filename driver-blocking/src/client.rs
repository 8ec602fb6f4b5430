//! The HTTP client on ureq: one agent per provider, requests from hrns-core's descriptions,
//! errors mapped to the core's types.

use hrns_core::Completion;
use hrns_core::client::{self as pure, MAX_CHAT_BODY, MAX_ERROR_BODY, MAX_MODELS_BODY};
use hrns_core::http::{HttpRequest, Method};
use hrns_core::session::{Provider, TransportError, TransportErrorKind};
use hrns_core::stream::{ChatStream, StreamEvent, StreamFailure};
use hrns_core::wire::{ChatRequest, ChatResponse, ModelInfo};
use std::io::Read;

pub use hrns_core::client::{ClientConfig, ClientError};

/// Size of one body read of [`ChatEvents`] (the stream decodes large pieces in slices).
const READ_SIZE: usize = 64 * 1024;

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
            .build()
            .into();
        Client { agent, provider }
    }

    /// The provider this client talks to.
    pub fn provider(&self) -> &Provider {
        &self.provider
    }

    /// Sends a request described by hrns-core and returns the response head and body reader.
    pub fn send(&self, req: &HttpRequest) -> Result<Response, TransportError> {
        let response = match req.method {
            Method::Get => {
                let mut r = self.agent.get(&req.url);
                for (name, value) in req.wire_headers() {
                    r = r.header(name, value);
                }
                r.call()
            }
            Method::Post => {
                let mut r = self.agent.post(&req.url);
                for (name, value) in req.wire_headers() {
                    r = r.header(name, value);
                }
                r.send(&req.body[..])
            }
        }
        .map_err(|e| transport_error(&e))?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec()))
            .collect();
        Ok(Response {
            status,
            headers,
            body: Box::new(response.into_body().into_reader()),
        })
    }

    /// The provider's models (`GET /models`).
    pub fn list_models(&self) -> Result<Vec<ModelInfo>, ClientError> {
        let mut resp = self.send(&pure::models_request(&self.provider))?;
        let body = resp.read_all(MAX_MODELS_BODY)?;
        pure::read_models(resp.status, &body)
    }

    /// A non-streaming chat completion (`stream` is forced off).
    pub fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ClientError> {
        let mut resp = self.send(&pure::chat_request(&self.provider, request, false))?;
        let body = resp.read_all(MAX_CHAT_BODY)?;
        pure::read_chat(resp.status, &body)
    }

    /// A streaming chat completion: an iterator of stream events, each yielded as soon as its
    /// bytes arrive. After the last event, [`ChatEvents::finish`] gives the complete answer.
    pub fn stream_chat(&self, request: &ChatRequest) -> Result<ChatEvents, ClientError> {
        let mut resp = self.send(&pure::chat_request(&self.provider, request, true))?;
        if !(200..300).contains(&resp.status) {
            let status = resp.status;
            let body = resp.read_all(MAX_ERROR_BODY)?;
            pure::check_status(status, &body)?;
        }
        Ok(ChatEvents {
            body: Box::new(crate::read_ahead::ReadAhead::new(std::mem::replace(
                &mut resp.body,
                Box::new(std::io::empty()),
            ))),
            stream: ChatStream::new(),
            buf: vec![0; READ_SIZE],
            ended: false,
        })
    }
}

/// Something that sends requests described by hrns-core: the [`Client`], or a recording or a
/// replay of one (the CLI's `--record` and `hrns replay`).
pub trait Transport: Send + Sync {
    /// Sends `req` and returns the response head with a reader of its body.
    fn send(&self, req: &HttpRequest) -> Result<Response, TransportError>;
}

impl Transport for Client {
    fn send(&self, req: &HttpRequest) -> Result<Response, TransportError> {
        Client::send(self, req)
    }
}

/// A response head and its body, as the runner reads it.
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers (names lower-case).
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body, read as it arrives.
    pub body: Box<dyn Read + Send>,
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("headers", &self.headers.len())
            .finish_non_exhaustive()
    }
}

impl Response {
    fn read_all(&mut self, limit: u64) -> Result<Vec<u8>, TransportError> {
        let mut out = Vec::new();
        (&mut self.body)
            .take(limit)
            .read_to_end(&mut out)
            .map_err(|e| io_error(&e))?;
        Ok(out)
    }
}

/// The events of a streamed answer; see [`Client::stream_chat`].
pub struct ChatEvents {
    body: Box<dyn Read + Send>,
    stream: ChatStream,
    buf: Vec<u8>,
    ended: bool,
}

impl std::fmt::Debug for ChatEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatEvents")
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

impl ChatEvents {
    /// Reads the rest of the stream and gives the complete answer, or the error with what
    /// arrived before it.
    pub fn finish(mut self) -> Result<Completion, StreamFailure> {
        for _ in self.by_ref() {}
        self.stream.finish()
    }
}

impl Iterator for ChatEvents {
    type Item = Result<StreamEvent, ClientError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.stream.poll_event() {
                Ok(Some(ev)) => return Some(Ok(ev)),
                Ok(None) if self.ended || self.stream.is_finished() => return None,
                Ok(None) => {}
                Err(e) => {
                    if self.ended {
                        return None;
                    }
                    self.ended = true;
                    return Some(Err(e.into()));
                }
            }
            match self.body.read(&mut self.buf) {
                Ok(0) => {
                    self.stream.feed_eof();
                    self.ended = true;
                }
                Ok(n) => self.stream.feed(&self.buf[..n]),
                Err(e) => {
                    self.stream.feed_eof();
                    self.ended = true;
                    return Some(Err(io_error(&e).into()));
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
