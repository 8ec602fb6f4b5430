//! The HTTP client on hyper 1: a pooled hyper-util client over hyper-rustls (HTTP/1.1 and
//! HTTP/2 by ALPN), requests from hrns-core's descriptions, bodies read frame by frame with an
//! idle timeout, errors mapped to the core's types.

use crate::tls;
use futures_core::Stream;
use hrns_core::Completion;
use hrns_core::answer::AnswerError;
use hrns_core::client::{
    self as pure, MAX_CHAT_BODY, MAX_MODELS_BODY, Next, Opening, StreamedChat,
};
use hrns_core::http::HttpRequest;
use hrns_core::session::{Provider, TransportError, TransportErrorKind};
use hrns_core::stream::StreamEvent;
use hrns_core::wire::{ChatRequest, ChatResponse, ModelInfo};
use http_body_util::Full;
use hyper::body::{Body as _, Bytes, Incoming};
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::{self, connect::HttpConnector};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use std::error::Error as StdError;
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

pub use hrns_blocking::ClientConfig;
pub use hrns_core::client::ClientError;

type Pool = legacy::Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// The most one HTTP/1 read takes from the socket (hyper's default is 400 KiB). hyper grows
/// its read buffer only while reads fill it, so a slow stream keeps small reads; a fast one
/// (a local server, a large answer) is read in fewer, larger pieces, which costs the kernel's
/// receive path less: on a 50 MB loopback stream the reading alone took about a fifth less
/// CPU (`BENCHMARKS.md`, issue 20 item 2). Also the bound on a response head.
const MAX_READ_BUF: usize = 1 << 20;

/// A pooled HTTP(S) client: connections are kept and reused, HTTP/2 is used where the server
/// offers it. Cheap to clone (clones share the pool). [`Client`] adds a provider to it;
/// `web_fetch` uses it alone.
#[derive(Clone)]
pub struct HttpClient {
    pool: Pool,
    read_idle_timeout: Duration,
    user_agent: String,
}

impl fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpClient")
            .field("read_idle_timeout", &self.read_idle_timeout)
            .field("user_agent", &self.user_agent)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    /// A client with these settings. Certificates are checked against Mozilla's roots unless
    /// `config.skip_verify` is set.
    pub fn new(config: &ClientConfig) -> Self {
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(config.connect_timeout));
        let https = HttpsConnectorBuilder::new()
            .with_tls_config(tls::client_config(config.skip_verify))
            .https_or_http()
            .enable_http1()
            .enable_http2()
            .wrap_connector(http);
        let pool = legacy::Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .timer(TokioTimer::new())
            .http1_max_buf_size(MAX_READ_BUF)
            .build(https);
        HttpClient {
            pool,
            read_idle_timeout: config.read_idle_timeout,
            user_agent: config.user_agent.clone(),
        }
    }

    /// Sends a request described by hrns-core and returns once its head arrived (or the read
    /// idle timeout passed). The body is read from the [`IncomingResponse`] as it arrives.
    pub async fn send(&self, req: HttpRequest) -> Result<IncomingResponse, TransportError> {
        let request = self.build(req)?;
        let response =
            match tokio::time::timeout(self.read_idle_timeout, self.pool.request(request)).await {
                Err(_) => {
                    return Err(TransportError::new(
                        TransportErrorKind::Timeout,
                        format!(
                            "no response within {} s",
                            self.read_idle_timeout.as_secs_f64()
                        ),
                    ));
                }
                Ok(Err(e)) => return Err(transport_error(&e, e.is_connect())),
                Ok(Ok(r)) => r,
            };
        let (parts, body) = response.into_parts();
        Ok(IncomingResponse {
            status: parts.status.as_u16(),
            headers: parts
                .headers
                .iter()
                .map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec()))
                .collect(),
            body,
            idle: self.read_idle_timeout,
            timer: Box::pin(tokio::time::sleep(self.read_idle_timeout)),
        })
    }

    fn build(&self, req: HttpRequest) -> Result<hyper::Request<Full<Bytes>>, TransportError> {
        let invalid = |what: String| TransportError::new(TransportErrorKind::InvalidRequest, what);
        let uri: hyper::Uri = req
            .url
            .parse()
            .map_err(|e| invalid(format!("the URL '{}' is not valid: {e}", req.url)))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(invalid(format!(
                "the URL '{}' is not an http:// or https:// URL",
                req.url
            )));
        }
        let mut builder = hyper::Request::builder()
            .method(req.method.as_str())
            .uri(uri);
        let mut has_agent = false;
        for (name, value) in req.wire_headers() {
            has_agent |= name.eq_ignore_ascii_case("user-agent");
            builder = builder.header(name, value);
        }
        if !has_agent {
            builder = builder.header(hyper::header::USER_AGENT, self.user_agent.as_str());
        }
        // The error names the header at fault but never shows its value (it may be the key).
        builder
            .body(Full::new(Bytes::from(req.body)))
            .map_err(|e| invalid(format!("the request could not be built: {e}")))
    }
}

/// An OpenAI-compatible endpoint on a pooled async HTTP client. Cheap to clone (the
/// connection pool is shared).
#[derive(Debug, Clone)]
pub struct Client {
    http: HttpClient,
    provider: Provider,
}

impl Client {
    /// A client for `provider` with its own connection pool.
    pub fn new(provider: Provider, config: &ClientConfig) -> Self {
        Self::with_http(provider, HttpClient::new(config))
    }

    /// A client for `provider` sharing the pool of `http`.
    pub fn with_http(provider: Provider, http: HttpClient) -> Self {
        Client { http, provider }
    }

    /// The provider this client talks to.
    pub fn provider(&self) -> &Provider {
        &self.provider
    }

    /// The HTTP client underneath.
    pub fn http(&self) -> &HttpClient {
        &self.http
    }

    /// Sends a request described by hrns-core; see [`HttpClient::send`].
    pub async fn send(&self, req: HttpRequest) -> Result<IncomingResponse, TransportError> {
        self.http.send(req).await
    }

    /// The provider's models (`GET /models`).
    pub async fn list_models(&self) -> Result<Vec<ModelInfo>, ClientError> {
        let mut resp = self.send(pure::models_request(&self.provider)).await?;
        let (body, _) = resp.read_all(MAX_MODELS_BODY).await?;
        let headers = resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_slice()));
        pure::read_models(resp.status, headers, &body)
    }

    /// A non-streaming chat completion (`stream` is forced off).
    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ClientError> {
        let req = pure::chat_request(&self.provider, request, false);
        let mut resp = self.send(req).await?;
        let (body, _) = resp.read_all(MAX_CHAT_BODY).await?;
        let headers = resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_slice()));
        pure::read_chat(resp.status, headers, &body)
    }

    /// A streaming chat completion: a [`Stream`] of events, each yielded as soon as its bytes
    /// arrive. After the last event, [`ChatEvents::finish`] gives the complete answer.
    ///
    /// An answer that fails before its first event — an error status, a page that is not an
    /// event stream — fails here, with the provider's message; a provider that sends one whole
    /// JSON answer instead of a stream gives its text as one event.
    pub async fn stream_chat(&self, request: &ChatRequest) -> Result<ChatEvents, ClientError> {
        let req = pure::chat_request(&self.provider, request, true);
        let response = self.send(req).await?;
        let answer = StreamedChat::new(
            response.status,
            response
                .headers
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_slice())),
        );
        let mut events = ChatEvents { response, answer };
        loop {
            match events.answer.opening() {
                Opening::Open => return Ok(events),
                Opening::Failed(error) => return Err(error),
                Opening::NeedsBody => poll_fn(|cx| events.poll_read(cx)).await?,
            }
        }
    }
}

/// A response head and its body, read frame by frame. Each wait for the next frame is bounded
/// by the client's read idle timeout; dropping the response closes its stream.
pub struct IncomingResponse {
    /// The status code.
    pub status: u16,
    /// The headers (names lower-case).
    pub headers: Vec<(String, Vec<u8>)>,
    body: Incoming,
    idle: Duration,
    timer: Pin<Box<Sleep>>,
}

impl fmt::Debug for IncomingResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IncomingResponse")
            .field("status", &self.status)
            .field("headers", &self.headers.len())
            .finish_non_exhaustive()
    }
}

impl IncomingResponse {
    /// The next piece of the body as it arrives; `None` at its end. A stall longer than the
    /// read idle timeout is a [`TransportErrorKind::Timeout`] error.
    pub async fn chunk(&mut self) -> Option<Result<Bytes, TransportError>> {
        poll_fn(|cx| self.poll_chunk(cx)).await
    }

    /// The poll form of [`IncomingResponse::chunk`].
    pub fn poll_chunk(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, TransportError>>> {
        loop {
            match Pin::new(&mut self.body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) if !data.is_empty() => {
                        self.timer.as_mut().reset(Instant::now() + self.idle);
                        return Poll::Ready(Some(Ok(data)));
                    }
                    _ => continue, // empty data or trailers
                },
                Poll::Ready(Some(Err(e))) => {
                    return Poll::Ready(Some(Err(transport_error(&e, false))));
                }
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => {
                    ready!(self.timer.as_mut().poll(cx));
                    return Poll::Ready(Some(Err(TransportError::new(
                        TransportErrorKind::Timeout,
                        format!(
                            "the response stalled: no data for {} s",
                            self.idle.as_secs_f64()
                        ),
                    ))));
                }
            }
        }
    }

    /// Reads the body to its end, or to `limit` bytes; the flag says whether it was cut there.
    pub(crate) async fn read_all(&mut self, limit: u64) -> Result<(Vec<u8>, bool), TransportError> {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        let mut out = Vec::new();
        while let Some(chunk) = self.chunk().await {
            let chunk = chunk?;
            if out.len() + chunk.len() > limit {
                out.extend_from_slice(&chunk[..limit - out.len()]);
                return Ok((out, true));
            }
            out.extend_from_slice(&chunk);
        }
        Ok((out, false))
    }
}

/// The events of a streamed answer, a [`Stream`]; see [`Client::stream_chat`]. A read loop
/// around the core's [`StreamedChat`], which decides what the answer is.
pub struct ChatEvents {
    response: IncomingResponse,
    answer: StreamedChat,
}

impl fmt::Debug for ChatEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatEvents")
            .field("answer", &self.answer)
            .finish_non_exhaustive()
    }
}

impl ChatEvents {
    /// The next event, as soon as its bytes arrived; `None` after the last one (or after the
    /// first error).
    pub async fn next(&mut self) -> Option<Result<StreamEvent, ClientError>> {
        poll_fn(|cx| self.poll_event(cx)).await
    }

    /// Reads the rest of the stream and gives the complete answer, or the error with what
    /// arrived before it.
    pub async fn finish(mut self) -> Result<Completion, AnswerError> {
        while self.next().await.is_some() {}
        self.answer.finish()
    }

    fn poll_event(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<StreamEvent, ClientError>>> {
        loop {
            match self.answer.poll_next() {
                Next::Event(event) => return Poll::Ready(Some(Ok(event))),
                Next::Failed(error) => return Poll::Ready(Some(Err(error))),
                Next::End => return Poll::Ready(None),
                Next::NeedsBody => {
                    if let Err(error) = ready!(self.poll_read(cx)) {
                        return Poll::Ready(Some(Err(error)));
                    }
                }
            }
        }
    }

    /// Reads the next piece of the body into the answer.
    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ClientError>> {
        match ready!(self.response.poll_chunk(cx)) {
            Some(Ok(bytes)) => self.answer.handle_data(&bytes),
            Some(Err(error)) => {
                return Poll::Ready(Err(self.answer.handle_transport_error(error)));
            }
            None => self.answer.handle_end(),
        }
        Poll::Ready(Ok(()))
    }
}

impl Stream for ChatEvents {
    type Item = Result<StreamEvent, ClientError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().poll_event(cx)
    }
}

/// Maps a hyper, hyper-util, rustls or IO error to the core's transport error classes. The
/// message is the chain of causes; a rejected certificate says so plainly.
pub(crate) fn transport_error(
    error: &(dyn StdError + 'static),
    connecting: bool,
) -> TransportError {
    use TransportErrorKind as K;
    let mut messages: Vec<String> = Vec::new();
    let mut io_kind = None;
    let mut tls = None;
    let mut hyper_timeout = false;
    let mut cause: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(e) = cause {
        let shown = e.to_string();
        if !messages.iter().any(|m| m.contains(&shown)) {
            messages.push(shown);
        }
        if let Some(r) = e.downcast_ref::<rustls::Error>() {
            tls = Some(r);
            break;
        }
        hyper_timeout |= e
            .downcast_ref::<hyper::Error>()
            .is_some_and(hyper::Error::is_timeout);
        cause = match e.downcast_ref::<std::io::Error>() {
            Some(io) => {
                io_kind.get_or_insert(io.kind());
                // io::Error::source skips the wrapped error; look inside it instead.
                match io.get_ref() {
                    Some(inner) => Some(inner as &(dyn StdError + 'static)),
                    None => e.source(),
                }
            }
            None => e.source(),
        };
    }
    if let Some(r) = tls {
        let message = match r {
            rustls::Error::InvalidCertificate(_) => format!(
                "TLS certificate verification failed: {r}; the server's certificate is not \
                 trusted (if it is your own server with a self-signed certificate, enable \
                 skip_verify for this provider)"
            ),
            _ => format!("TLS failed: {r}"),
        };
        return TransportError::new(K::Tls, message);
    }
    let timed_out = hyper_timeout || io_kind == Some(std::io::ErrorKind::TimedOut);
    let kind = match (timed_out, connecting) {
        (true, _) => K::Timeout,
        (false, true) => K::Connect,
        (false, false) => K::Io,
    };
    TransportError::new(kind, messages.join(": "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[test]
    fn errors_are_classed_by_their_causes() {
        let timed_out = io::Error::new(io::ErrorKind::TimedOut, "connect timed out");
        assert_eq!(
            transport_error(&timed_out, true).kind,
            TransportErrorKind::Timeout
        );
        let refused = io::Error::new(io::ErrorKind::ConnectionRefused, "refused");
        let e = transport_error(&refused, true);
        assert_eq!(e.kind, TransportErrorKind::Connect);
        assert_eq!(e.message, "refused");
        let reset = io::Error::new(io::ErrorKind::ConnectionReset, "reset by peer");
        assert_eq!(transport_error(&reset, false).kind, TransportErrorKind::Io);
    }

    #[test]
    fn a_rejected_certificate_inside_an_io_error_is_a_tls_error_that_says_so() {
        let cert = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let wrapped = io::Error::new(io::ErrorKind::InvalidData, cert);
        let e = transport_error(&wrapped, true);
        assert_eq!(e.kind, TransportErrorKind::Tls);
        assert!(e.message.contains("certificate") && e.message.contains("skip_verify"));
        let other = io::Error::new(io::ErrorKind::InvalidData, rustls::Error::DecryptError);
        let e = transport_error(&other, true);
        assert_eq!(e.kind, TransportErrorKind::Tls);
        assert!(e.message.starts_with("TLS failed"), "{}", e.message);
    }
}
