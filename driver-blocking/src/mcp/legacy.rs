//! The HTTP+SSE transport of MCP 2024-11-05, the fallback of a server that answers the
//! streamable-HTTP `initialize` POST with 400, 404 or 405: a GET to the server URL opens
//! an event stream whose first event names the endpoint; every message of the client is
//! then a POST to that endpoint, and every message of the server arrives on the stream.
//! What the stream says (and whether the endpoint may be used) is decided by the core's
//! [`EventStream`]; this module only moves bytes.

use super::http::{Limits, Slot, close, connection, head_timed_out, is_head_timeout, read_pieces};
use hrns_core::mcp::jsonrpc::Message;
use hrns_core::mcp::legacy::{EventStream, StreamEvent};
use std::collections::BTreeMap;
use std::io::Read;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError, channel};
use std::time::Duration;

/// Opens the event stream of `url` and sends `first` (the `initialize` the server refused
/// as a POST) and then every queued message to the endpoint the stream names.
/// `refused` says how the POST was refused (its status and what its body said), for the
/// failure texts. Each head is awaited as long as `limits` says (the stream's as long as
/// `initialize`'s answer).
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    agent: &ureq::Agent,
    url: &str,
    headers: &BTreeMap<String, String>,
    slot: &Slot,
    first: Message,
    messages: &Receiver<Message>,
    limits: Limits,
    refused: &str,
) {
    let mut request = agent.get(url).header("Accept", "text/event-stream");
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let head_limit = limits.head(&first);
    let request = request
        .config()
        .timeout_recv_response(Some(head_limit))
        .build();
    let response = match request.call() {
        Ok(response) => response,
        Err(e) if is_head_timeout(&e) => {
            let _ = head_timed_out(slot, &first, head_limit);
            return;
        }
        Err(e) => {
            return close(
                slot,
                format!("{refused}, and the GET of the older HTTP+SSE transport failed: {e}"),
            );
        }
    };
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if status != 200 || !content_type.starts_with("text/event-stream") {
        return close(
            slot,
            format!(
                "{refused}, and the GET of the older HTTP+SSE transport with HTTP {status} \
                 ({content_type:?}, not an event stream): this URL speaks neither transport"
            ),
        );
    }
    let (endpoint_found, endpoint) = channel();
    let body = response.into_body().into_reader();
    let (reader_slot, stream_url) = (Arc::clone(slot), url.to_owned());
    let spawned = std::thread::Builder::new()
        .name("mcp-sse-stream".into())
        .spawn(move || read_stream(&stream_url, body, &reader_slot, endpoint_found));
    if let Err(e) = spawned {
        return close(slot, format!("cannot start a reader thread: {e}"));
    }
    let mut queued = vec![first];
    let endpoint = loop {
        match endpoint.recv_timeout(Duration::from_millis(100)) {
            Ok(endpoint) => break endpoint,
            // The reader stopped, and closed the connection saying why.
            Err(RecvTimeoutError::Disconnected) => return,
            // No endpoint yet: the client's `initialize` times out on its own; stop with it.
            Err(RecvTimeoutError::Timeout) => {
                if connection(slot).is_none_or(|c| c.failure().is_some()) {
                    return;
                }
                loop {
                    match messages.try_recv() {
                        Ok(message) => queued.push(message),
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => return,
                    }
                }
            }
        }
    };
    for message in queued.into_iter().chain(messages) {
        let is_request = matches!(message, Message::Request { .. });
        let mut request = agent
            .post(&endpoint)
            .header("Content-Type", "application/json");
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let head_limit = limits.head(&message);
        let request = request
            .config()
            .timeout_recv_response(Some(head_limit))
            .build();
        match request.send(&message.to_bytes()[..]) {
            // The answer comes on the stream; the POST's body says nothing more.
            Ok(response) if response.status().is_success() => {}
            Ok(response) if is_request => {
                return close(
                    slot,
                    format!(
                        "the server answered a POST to its endpoint with HTTP {}",
                        response.status().as_u16()
                    ),
                );
            }
            Ok(_) => {}
            Err(e) if is_head_timeout(&e) => {
                if head_timed_out(slot, &message, head_limit).is_break() {
                    return;
                }
            }
            Err(e) => return close(slot, format!("the POST to {endpoint} failed: {e}")),
        }
    }
}

/// Reads the event stream: the endpoint goes to `endpoint_found`, messages to the client;
/// the end of the stream (or a refused endpoint) closes the connection.
fn read_stream(url: &str, body: impl Read, slot: &Slot, endpoint_found: Sender<String>) {
    let mut stream = EventStream::new(url);
    let mut endpoint_found = Some(endpoint_found);
    read_pieces(body, |piece| {
        match piece {
            Some(bytes) => stream.feed(bytes),
            None => stream.feed_eof(),
        }
        loop {
            let event = match stream.poll_event() {
                Ok(Some(event)) => event,
                Ok(None) => return ControlFlow::Continue(()),
                Err(e) => {
                    close(slot, e.to_string());
                    return ControlFlow::Break(());
                }
            };
            let Some(connection) = connection(slot) else {
                return ControlFlow::Break(());
            };
            match event {
                StreamEvent::Endpoint(endpoint) => {
                    if let Some(found) = endpoint_found.take() {
                        let _ = found.send(endpoint);
                    }
                }
                StreamEvent::Messages(messages) => connection.with_client(|client, now| {
                    for message in messages {
                        client.handle_message(now, message);
                    }
                }),
                StreamEvent::Malformed(why) => {
                    connection.with_client(|client, _| client.handle_malformed(&why));
                }
            }
        }
    });
}
