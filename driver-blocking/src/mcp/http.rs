//! The streamable HTTP transport (MCP 2025-03-26 and later): every message is one POST to the
//! server's endpoint; an answer comes back as a JSON body or as a server-sent event stream,
//! decoded by the core's [`Decoder`].
//!
//! One worker thread sends the messages in order (so `notifications/initialized` reaches the
//! server before `tools/list`); a response that is an event stream is read on a thread of its
//! own, so a long tool call does not hold back a cancellation. The `Mcp-Session-Id` the server
//! gives with its (2xx) answer to `initialize` is sent with every later request, and the
//! negotiated version as `MCP-Protocol-Version`; a refusal's id is ignored.
//!
//! A 404 to a request that carried the session id means the server forgot the session: the
//! client starts a new one ([`hrns_core::mcp::Client::handle_session_expired`]).
//!
//! A server that answers the `initialize` POST with 400, 404 or 405 may speak only the older
//! HTTP+SSE transport of 2024-11-05: the connection goes on with it ([`super::legacy`]). When
//! that fails too, the failure quotes what the refused POST's body said.
//!
//! Not yet: the optional GET stream for messages the server starts.

use super::connection::{Connection, Outgoing};
use hrns_core::mcp::jsonrpc::{DEFAULT_MAX_MESSAGE_SIZE, Message};
use hrns_core::secrets::Secrets;
use hrns_core::sse::Decoder;
use std::collections::BTreeMap;
use std::io::Read;
use std::ops::ControlFlow;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

/// Where the worker finds the connection it feeds (set right after the connection is made).
pub(crate) type Slot = Arc<OnceLock<Weak<Connection>>>;

/// Queues each message for the worker thread.
pub(crate) struct HttpOutgoing(Option<Sender<Message>>);

impl Outgoing for HttpOutgoing {
    fn send(&mut self, message: &Message) -> std::io::Result<()> {
        let sent = self.0.as_ref().map(|queue| queue.send(message.clone()));
        match sent {
            Some(Ok(())) => Ok(()),
            Some(Err(_)) | None => Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the HTTP connection is closed",
            )),
        }
    }

    fn close(&mut self) {
        self.0 = None;
    }
}

/// How long the head of each answer is awaited. A server that takes the POST and then says
/// nothing would otherwise hold the worker, and every message queued behind it, for good.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// For `initialize`: the start-up time (and the client's request timeout, if shorter).
    pub(crate) initialize: Duration,
    /// For `tools/call`: the client's call timeout.
    pub(crate) call: Duration,
    /// For the body of a `tools/call` answer: the call's total limit (`totalTimeout`), past
    /// which the client has ended the call; a server streaming progress for ever then keeps
    /// no reading thread or connection.
    pub(crate) call_total: Duration,
    /// For every other message: the client's request timeout.
    pub(crate) request: Duration,
}

/// Added to each limit of [`Limits`]: the client's own timer for the same request runs out
/// first and names what timed out (and the setting that sets it); then the worker stops
/// waiting and goes on with the next message.
const HEAD_GRACE: Duration = Duration::from_secs(1);

impl Limits {
    /// How long the head of the answer to `message` is awaited.
    pub(super) fn head(&self, message: &Message) -> Duration {
        let limit = match message {
            Message::Request { method, .. } if method == "initialize" => self.initialize,
            Message::Request { method, .. } if method == "tools/call" => self.call,
            Message::Request { .. }
            | Message::Notification { .. }
            | Message::Response { .. }
            | Message::Error { .. } => self.request,
        };
        limit + HEAD_GRACE
    }
}

/// Starts the worker for `url` with the configured `headers`, whose `secrets` never appear in
/// what the worker reports.
///
/// `limits.initialize` also bounds the reading of the body of each answer to `initialize`:
/// the client stops waiting for that answer by then, and a server that sends a head and then
/// holds the body would otherwise keep a reading thread and its connection for good (the
/// body of a refusal is read on a thread of its own, see [`refusal`]).
pub(crate) fn start(
    url: String,
    headers: BTreeMap<String, String>,
    secrets: Secrets,
    slot: Slot,
    limits: Limits,
) -> std::io::Result<HttpOutgoing> {
    let (queue, messages) = channel();
    std::thread::Builder::new()
        .name("mcp-http".into())
        .spawn(move || worker(&url, &headers, &secrets, &slot, &messages, limits))?;
    Ok(HttpOutgoing(Some(queue)))
}

/// Whether a failed POST or GET is the answer's head not coming within its limit (the one
/// timeout [`head_timed_out`] handles); any other timeout — connecting, sending — is a
/// failure of the connection, closed with its reason.
pub(super) fn is_head_timeout(error: &ureq::Error) -> bool {
    matches!(error, ureq::Error::Timeout(ureq::Timeout::RecvResponse))
}

/// The head of the answer to a message did not come within its limit: the client's timer
/// for it ran out just before and is handled now (the failure or the call's result names the
/// limit). Returns `Break` when the worker should stop: an unanswered `initialize` (after the
/// start-up time, nothing else can be sent) closes the connection.
pub(super) fn head_timed_out(slot: &Slot, message: &Message, waited: Duration) -> ControlFlow<()> {
    if let Some(connection) = connection(slot) {
        connection.with_client(|client, now| client.handle_timeout(now));
    }
    match message {
        Message::Request { method, .. } if method == "initialize" => {
            close(
                slot,
                format!(
                    "no answer to initialize came within {} s",
                    waited.as_secs_f32()
                ),
            );
            ControlFlow::Break(())
        }
        Message::Request { .. }
        | Message::Notification { .. }
        | Message::Response { .. }
        | Message::Error { .. } => ControlFlow::Continue(()),
    }
}

pub(super) fn connection(slot: &Slot) -> Option<Arc<Connection>> {
    slot.get().and_then(Weak::upgrade)
}

pub(super) fn close(slot: &Slot, reason: String) {
    if let Some(connection) = connection(slot) {
        connection.with_client(|client, _| client.handle_closed(reason));
    }
}

fn worker(
    url: &str,
    headers: &BTreeMap<String, String>,
    secrets: &Secrets,
    slot: &Slot,
    messages: &Receiver<Message>,
    limits: Limits,
) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(Duration::from_secs(10)))
        // Not followed: the server's headers (an API key, the session id) would go along to
        // whatever host the `Location` names, past the refusal of foreign endpoints.
        .max_redirects(0)
        .build()
        .into();
    let mut session: Option<String> = None;
    for message in messages {
        let initialize =
            matches!(&message, Message::Request { method, .. } if method == "initialize");
        let is_request = matches!(message, Message::Request { .. });
        let mut request = agent
            .post(url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let head_limit = limits.head(&message);
        let mut request = request
            .config()
            .timeout_recv_response(Some(head_limit))
            .build();
        let is_call = matches!(&message, Message::Request { method, .. } if method == "tools/call");
        if initialize {
            request = request
                .config()
                .timeout_recv_body(Some(limits.initialize))
                .build();
        } else if is_call {
            request = request
                .config()
                .timeout_recv_body(Some(limits.call_total + HEAD_GRACE))
                .build();
        }
        if let Some(id) = &session {
            request = request.header("Mcp-Session-Id", id.as_str());
        }
        let version =
            connection(slot).and_then(|c| c.lock().client.protocol_version().map(str::to_owned));
        if let Some(version) = &version {
            request = request.header("MCP-Protocol-Version", version.as_str());
        }
        let response = match request.send(&message.to_bytes()[..]) {
            Ok(response) => response,
            Err(e) if is_head_timeout(&e) => match head_timed_out(slot, &message, head_limit) {
                ControlFlow::Continue(()) => continue,
                ControlFlow::Break(()) => return,
            },
            Err(e) => return close(slot, format!("the POST to {url} failed: {e}")),
        };
        let status = response.status().as_u16();
        // Only an accepted message's answer names the session: a refusal (a 400 to a
        // notification, a 404 of a forgotten session) must not replace it.
        if let Some(id) = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .filter(|_| (200..300).contains(&status))
        {
            session = Some(id.to_owned());
        }
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        match status {
            300..=399 => {
                let location = response
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("nowhere");
                let location: String = location.chars().take(200).collect();
                return close(
                    slot,
                    format!(
                        "the server answered HTTP {status}, a redirect to {location}, which \
                         hrns does not follow (it would carry the server's headers there); \
                         put the address it should use in the configuration"
                    ),
                );
            }
            202 | 204 => continue,
            // "The client MUST start a new session by sending a new InitializeRequest without
            // a session ID attached."
            404 if session.is_some() => {
                session = None;
                if let Some(connection) = connection(slot) {
                    connection.with_client(|client, now| client.handle_session_expired(now));
                }
                continue;
            }
            // "If it fails with an HTTP 4xx status code (e.g., 405 Method Not Allowed or 404
            // Not Found): Issue a GET request to the server URL, expecting that this will open
            // an SSE stream" — 400 too, which some servers of that time answer.
            400 | 404 | 405 if initialize => {
                let refused = refusal(status, response, secrets);
                return super::legacy::run(
                    &agent, url, headers, slot, message, messages, limits, &refused,
                );
            }
            400..=499 if initialize => return close(slot, refusal(status, response, secrets)),
            200..=299 => {}
            _ if is_request => return close(slot, format!("the server answered HTTP {status}")),
            _ => continue,
        }
        let body = response.into_body().into_reader();
        if content_type.starts_with("text/event-stream") {
            let events_slot = Arc::clone(slot);
            let spawned = std::thread::Builder::new()
                .name("mcp-http-sse".into())
                .spawn(move || read_events(body, &events_slot));
            if let Err(e) = spawned {
                return close(slot, format!("cannot start a reader thread: {e}"));
            }
        } else if content_type.starts_with("application/json") {
            read_json(body, slot);
        } else if is_request {
            return close(
                slot,
                format!("the server answered with {content_type:?}, not JSON or events"),
            );
        }
    }
}

/// Most bytes of a refused answer's body read for its failure text.
const REFUSAL_BODY_BYTES: u64 = 4096;
/// How long a refused answer's body is waited for: a server that sends the head and then
/// nothing must not hold up the fallback. (The reading thread itself ends at the request's
/// body timeout, `limits.initialize` of [`start`].)
const REFUSAL_BODY_WAIT: Duration = Duration::from_secs(2);

/// "the server answered the initialize POST with HTTP {status}", and what the body said
/// ([`hrns_core::mcp::legacy::quote_refusal`]) when it said something in time. The server's
/// secrets (a 401 quoting the rejected key, or a piece of it) are cut out before the quote is
/// shortened: whatever prints the failure redacts it again, but a secret split by the cut
/// could leave a piece too short to be recognised on its own.
fn refusal(status: u16, response: ureq::http::Response<ureq::Body>, secrets: &Secrets) -> String {
    let mut text = format!("the server answered the initialize POST with HTTP {status}");
    let reader = response.into_body().into_reader();
    let (said, body) = channel();
    let spawned = std::thread::Builder::new()
        .name("mcp-http-refusal".into())
        .spawn(move || {
            let mut bytes = Vec::new();
            let _ = reader.take(REFUSAL_BODY_BYTES).read_to_end(&mut bytes);
            let _ = said.send(bytes);
        });
    let quoted = spawned
        .ok()
        .and_then(|_| body.recv_timeout(REFUSAL_BODY_WAIT).ok())
        .and_then(|bytes| {
            let body = String::from_utf8_lossy(&bytes);
            hrns_core::mcp::legacy::quote_refusal(secrets.redact(&body).as_bytes())
        });
    if let Some(quoted) = quoted {
        text.push_str(&format!(" (\"{quoted}\")"));
    }
    text
}

/// Hands the messages of one JSON text (or a malformed-message note) to the connection.
fn deliver(slot: &Slot, text: &[u8]) {
    let Some(connection) = connection(slot) else {
        return;
    };
    match Message::parse(text) {
        Ok(messages) => connection.with_client(|client, now| {
            for message in messages {
                client.handle_message(now, message);
            }
        }),
        Err(e) => connection.with_client(|client, _| client.handle_malformed(&e.to_string())),
    }
}

/// A JSON body: at most [`DEFAULT_MAX_MESSAGE_SIZE`] bytes.
fn read_json(body: impl Read, slot: &Slot) {
    let mut text = Vec::new();
    let limit = DEFAULT_MAX_MESSAGE_SIZE as u64;
    match body.take(limit + 1).read_to_end(&mut text) {
        Ok(_) if text.len() as u64 > limit => {
            close(slot, format!("an answer exceeds the {limit}-byte limit"));
        }
        Ok(_) => deliver(slot, &text),
        Err(e) => close(slot, format!("reading an answer failed: {e}")),
    }
}

/// An event stream: each event's data is one JSON-RPC message (or batch).
fn read_events(body: impl Read, slot: &Slot) {
    let mut decoder = Decoder::new();
    read_pieces(body, |piece| {
        match piece {
            Some(bytes) => decoder.feed(bytes),
            None => decoder.feed_eof(),
        }
        loop {
            match decoder.poll_event() {
                Ok(Some(event)) if !event.data.trim().is_empty() => {
                    deliver(slot, event.data.as_bytes())
                }
                Ok(Some(_)) => {}
                Ok(None) => return ControlFlow::Continue(()),
                Err(e) => {
                    close(slot, e.to_string());
                    return ControlFlow::Break(());
                }
            }
        }
    });
}

/// Reads a streamed body in pieces: `feed` gets each piece, then `None` at the end, and may
/// stop the reading early. A broken read ends the body too: a request left unanswered then
/// times out in the client.
pub(super) fn read_pieces(
    mut body: impl Read,
    mut feed: impl FnMut(Option<&[u8]>) -> ControlFlow<()>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match body.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => 0,
        };
        let piece = (n > 0).then(|| &buf[..n]);
        if feed(piece).is_break() || n == 0 {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a head that did not come is waited out; a server that cannot be reached (a connect
    /// timeout) or that stops reading the request fails the connection with its reason, as
    /// before per-message head limits existed.
    #[test]
    fn only_the_answers_head_timing_out_is_a_head_timeout() {
        assert!(is_head_timeout(&ureq::Error::Timeout(
            ureq::Timeout::RecvResponse
        )));
        for other in [
            ureq::Timeout::Connect,
            ureq::Timeout::Resolve,
            ureq::Timeout::SendRequest,
            ureq::Timeout::SendBody,
            ureq::Timeout::RecvBody,
            ureq::Timeout::PerWrite,
            ureq::Timeout::Global,
        ] {
            assert!(!is_head_timeout(&ureq::Error::Timeout(other)), "{other:?}");
        }
        assert!(!is_head_timeout(&ureq::Error::ConnectionFailed));
    }
}
