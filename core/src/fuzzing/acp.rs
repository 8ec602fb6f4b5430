//! The `acp_decoder` fuzz body: ACP's framing ([`LineDecoder`]), the sorting of lines into
//! JSON-RPC messages, and the decoding of the client's calls.
//!
//! Input layout as for the other targets: byte 0 picks the line limit, byte 1 how the body is
//! cut into feeds. The body is decoded fed whole and fed in pieces (polling after each). These
//! must hold: no panic; the same lines, errors and decoded calls whichever way the body was cut;
//! the buffer within the limit after each drain; every error answer one valid JSON line.

use super::Input;
use crate::acp::frame::{FrameError, LineDecoder};
use crate::acp::methods::ClientCall;
use crate::acp::rpc::{self, Incoming};

/// Line limits: byte 0 modulo 8 picks one.
const LIMITS: [usize; 8] = [
    0,
    1,
    16,
    64,
    200,
    1024,
    65536,
    crate::acp::frame::DEFAULT_MAX_LINE,
];

/// What one line became, in a comparable form.
#[derive(Debug, PartialEq)]
enum Seen {
    Frame(FrameError),
    Call(String),
    Answer(String),
    Error(i64),
}

fn see(line: &[u8]) -> Seen {
    match rpc::parse(line) {
        Err(malformed) => {
            let answer = rpc::encode_error(&malformed.id, &malformed.error);
            assert!(!answer.contains('\n'), "an answer spans lines");
            let value: serde_json::Value =
                serde_json::from_str(&answer).expect("an answer is JSON");
            assert_eq!(value["error"]["code"], malformed.error.code);
            Seen::Error(malformed.error.code)
        }
        Ok(Incoming::Request { method, params, .. })
        | Ok(Incoming::Notification { method, params }) => {
            match ClientCall::decode(&method, params) {
                Ok(call) => Seen::Call(format!("{call:?}")),
                Err(e) => Seen::Error(e.code),
            }
        }
        Ok(Incoming::Response { id, outcome }) => Seen::Answer(format!("{id} {outcome:?}")),
    }
}

fn run(limit: usize, pieces: &[&[u8]]) -> Vec<Seen> {
    let mut decoder = LineDecoder::new(limit);
    let mut out = Vec::new();
    let mut pieces = pieces.iter();
    loop {
        let piece = pieces.next();
        match piece {
            Some(piece) => decoder.feed(piece),
            None => decoder.feed_eof(),
        }
        loop {
            match decoder.poll_line() {
                Ok(Some(line)) => {
                    assert!(line.len() <= limit, "a line past the limit");
                    out.push(see(&line));
                }
                Ok(None) => break,
                Err(e) => out.push(Seen::Frame(e)),
            }
        }
        assert!(
            decoder.buffered_len() <= limit.saturating_add(1),
            "held more than the limit"
        );
        if piece.is_none() {
            return out;
        }
    }
}

/// Fuzz body for `acp_decoder`; see the module documentation.
pub fn acp_decoder(data: &[u8]) {
    let Some(input) = Input::parse(data, &LIMITS) else {
        return;
    };
    let whole = run(input.limit, &[input.body]);
    let pieces = run(input.limit, &input.pieces());
    assert_eq!(whole, pieces, "the result depends on how the input was cut");
}
