//! The `mcp_jsonrpc` fuzz body: the stdio framing of MCP ([`LineDecoder`]) and the client
//! state machine behind it.
//!
//! Input layout as for the other targets: byte 0 picks the message size limit, byte 1 how the
//! body is cut into feeds. The body is decoded fed whole and fed in pieces (polling after each)
//! and every decoded message goes to a started [`Client`]. These must hold: no panic; the same
//! messages, errors and client outputs whichever way the body was cut; at most the limit plus a
//! CR held after each drain; the terminal error sticky; every message the client sends is valid
//! JSON-RPC on one line; every call ends at most once.

use super::Input;
use crate::mcp::jsonrpc::{DecodeError, LineDecoder, Message};
use crate::mcp::{Action, Client, ClientConfig, Event};
use std::collections::BTreeSet;
use std::time::Instant;

/// Message size limits: byte 0 modulo 8 picks one.
const LIMITS: [usize; 8] = [
    0,
    1,
    16,
    64,
    200,
    1024,
    65536,
    crate::mcp::jsonrpc::DEFAULT_MAX_MESSAGE_SIZE,
];

/// What one run observed.
#[derive(Debug, PartialEq)]
struct Outcome {
    decoded: Vec<Result<Message, DecodeError>>,
    actions: Vec<Action>,
}

fn drain_client(client: &mut Client, out: &mut Outcome, ended: &mut BTreeSet<i64>) {
    while let Some(action) = client.poll() {
        match &action {
            Action::Send(message) => {
                let bytes = message.to_bytes();
                assert!(!bytes.contains(&b'\n'), "a sent message spans lines");
                assert_eq!(
                    Message::parse(&bytes).as_deref(),
                    Ok(std::slice::from_ref(message))
                );
            }
            Action::Emit(Event::CallFinished { call, .. }) => {
                assert!(ended.insert(call.0), "call {} ended twice", call.0);
            }
            Action::Emit(_) => {}
        }
        out.actions.push(action);
    }
}

fn run(limit: usize, pieces: &[&[u8]], now: Instant) -> Outcome {
    let mut decoder = LineDecoder::with_max_message_size(limit);
    let mut client = Client::new(ClientConfig::new("fuzz"));
    let mut out = Outcome {
        decoded: Vec::new(),
        actions: Vec::new(),
    };
    let mut ended = BTreeSet::new();
    client.start(now).expect("a new client starts");
    drain_client(&mut client, &mut out, &mut ended);
    let mut failed = false;
    let mut pieces = pieces.iter();
    loop {
        let piece = pieces.next();
        match piece {
            Some(piece) => decoder.feed(piece),
            None => decoder.feed_eof(),
        }
        while !failed {
            match decoder.poll_message() {
                Ok(Some(message)) => {
                    out.decoded.push(Ok(message.clone()));
                    client.handle_message(now, message);
                    // Once ready, call a tool so that answers to calls are exercised too.
                    if matches!(client.phase(), crate::mcp::Phase::Ready)
                        && client.calls_in_flight().count() == 0
                    {
                        let _ = client.call_tool(now, "t", serde_json::json!({}));
                    }
                }
                Ok(None) => break,
                Err(error @ DecodeError::Malformed(_)) => {
                    client.handle_malformed(&error.to_string());
                    out.decoded.push(Err(error));
                }
                Err(error) => {
                    assert_eq!(
                        decoder.poll_message(),
                        Err(error.clone()),
                        "error not sticky"
                    );
                    client.handle_closed(error.to_string());
                    out.decoded.push(Err(error));
                    failed = true;
                }
            }
            drain_client(&mut client, &mut out, &mut ended);
        }
        assert!(
            decoder.buffered_len() <= limit + 1,
            "held more than the limit"
        );
        if piece.is_none() {
            break;
        }
    }
    client.handle_closed("end of input");
    drain_client(&mut client, &mut out, &mut ended);
    assert_eq!(
        client.poll_timeout(),
        None,
        "requests left in flight after the close"
    );
    out
}

/// Fuzz body for the MCP stdio framing and client; see the module docs.
pub fn mcp_jsonrpc(data: &[u8]) {
    let Some(input) = Input::parse(data, &LIMITS) else {
        return;
    };
    #[allow(clippy::disallowed_methods)] // a base instant; nothing reads the clock after
    let now = Instant::now();
    let whole = run(input.limit, &[input.body], now);
    let split = run(input.limit, &input.pieces(), now);
    assert_eq!(split, whole, "feeding in pieces changed the outcome");
}
