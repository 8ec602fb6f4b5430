//! Fuzz bodies, shared by the cargo-fuzz targets in `fuzz/` and by `cargo test`, which runs the
//! committed seed corpora (`fuzz/seeds/<target>/`) through them.
//!
//! Not part of the public API: compiled only for tests and with the `fuzzing` feature.
//!
//! Every input has the same layout: byte 0 picks the maximum event size, byte 1 picks how the
//! rest (the body) is cut into feeds, and the body follows. Each function decodes the body twice,
//! fed whole and fed in pieces with a poll after every piece ([`sse_decoder`] a third time, its
//! pieces decoded in place with `Decoder::decode_bytes`), and panics when an invariant
//! breaks:
//! - no panic inside the decoder;
//! - the same events, errors and end state whichever way the body was cut;
//! - errors are sticky, and bytes fed after an error or the end are ignored;
//! - [`sse_decoder`]: `buffered_len()` stays within the limit (plus a partial BOM) after each
//!   drain, and within the limit plus the last piece after each feed;
//! - [`chat_stream`]: `finish()` never panics, fails exactly when polling failed, and its
//!   (partial) completion holds exactly the text of the content, reasoning and tool-call
//!   argument deltas that were polled.

mod acp;
mod mcp;
mod mcp_legacy;
mod session;
pub use acp::acp_decoder;
pub use mcp::mcp_jsonrpc;
pub use mcp_legacy::mcp_legacy_stream;
pub use session::session;

use crate::sse::{self, DecodeError, Decoder, SseEvent};
use crate::stream::{ChatStream, StreamError, StreamEvent, StreamFailure};
use crate::{Completion, FinishReason};
use std::collections::BTreeMap;

/// Event size limits for the SSE target: byte 0 modulo 8 picks one.
const SSE_LIMITS: [usize; 8] = [0, 1, 7, 32, 100, 512, 4096, sse::DEFAULT_MAX_EVENT_SIZE];

/// Event size limits for the chat target: small enough to hit `EventTooLarge`, large enough to
/// let realistic chunks through.
const CHAT_LIMITS: [usize; 8] = [
    16,
    64,
    200,
    512,
    1024,
    4096,
    65536,
    sse::DEFAULT_MAX_EVENT_SIZE,
];

/// Largest feed for byte 1 modulo 8; pieces are 1 to that many bytes long.
const MAX_PIECES: [usize; 8] = [1, 2, 3, 5, 16, 64, 1024, usize::MAX];

/// The decoder may hold up to two bytes of a leading BOM before it checks any limit.
const BOM_SLACK: usize = 3;

/// A fuzz input cut into its parts.
#[derive(Debug)]
struct Input<'a> {
    limit: usize,
    max_piece: usize,
    seed: u32,
    body: &'a [u8],
}

impl<'a> Input<'a> {
    /// `None` when `data` is shorter than the two header bytes.
    fn parse(data: &'a [u8], limits: &[usize; 8]) -> Option<Self> {
        let (&[limit, split], body) = data.split_first_chunk::<2>()?;
        Some(Input {
            limit: limits[usize::from(limit % 8)],
            max_piece: MAX_PIECES[usize::from(split % 8)],
            // The upper five bits seed the piece lengths; never zero, as xorshift needs.
            seed: u32::from(split >> 3).wrapping_mul(0x9E37_79B9) | 1,
            body,
        })
    }

    /// The body cut into pieces of pseudo-random lengths between 1 and `max_piece`.
    fn pieces(&self) -> Vec<&'a [u8]> {
        let mut state = self.seed;
        let mut rest = self.body;
        let mut pieces = Vec::new();
        while !rest.is_empty() {
            // xorshift32: cheap, deterministic, and good enough to vary cut points.
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let max = self.max_piece.min(rest.len());
            let len = 1 + state as usize % max;
            let (piece, tail) = rest.split_at(len);
            pieces.push(piece);
            rest = tail;
        }
        pieces
    }
}

/// What one SSE decoding run observed.
#[derive(Debug, Default, PartialEq)]
struct SseOutcome {
    events: Vec<SseEvent>,
    error: Option<DecodeError>,
    truncated: bool,
    retry: Option<u64>,
}

/// Polls until `Ok(None)` or an error, checking that an error is sticky.
fn drain_sse(decoder: &mut Decoder, out: &mut SseOutcome) {
    loop {
        match decoder.poll_event() {
            Ok(Some(event)) => {
                assert!(out.error.is_none(), "event after an error");
                out.events.push(event);
            }
            Ok(None) => {
                assert!(out.error.is_none(), "error not sticky");
                return;
            }
            Err(error) => {
                if let Some(earlier) = &out.error {
                    assert_eq!(&error, earlier, "error changed");
                }
                assert_eq!(decoder.poll_event(), Err(error.clone()), "error not sticky");
                out.error = Some(error);
                return;
            }
        }
    }
}

/// Fuzz body for [`sse::Decoder`]; see the module docs for the input layout and invariants.
pub fn sse_decoder(data: &[u8]) {
    let Some(input) = Input::parse(data, &SSE_LIMITS) else {
        return;
    };
    let limit = input.limit;

    let mut whole = SseOutcome::default();
    let mut decoder = Decoder::with_max_event_size(limit);
    decoder.feed(input.body);
    decoder.feed_eof();
    drain_sse(&mut decoder, &mut whole);
    whole.truncated = decoder.is_truncated();
    whole.retry = decoder.reconnection_time();
    assert_eq!(decoder.buffered_len(), 0, "buffers kept after the end");

    let mut split = SseOutcome::default();
    let mut decoder = Decoder::with_max_event_size(limit);
    for piece in input.pieces() {
        decoder.feed(piece);
        let held = decoder.buffered_len();
        assert!(
            held <= limit + BOM_SLACK + piece.len(),
            "{held} bytes buffered after a {}-byte feed, limit {limit}",
            piece.len()
        );
        drain_sse(&mut decoder, &mut split);
        let held = decoder.buffered_len();
        assert!(
            held <= limit + BOM_SLACK,
            "{held} bytes buffered after polling, limit {limit}"
        );
    }
    decoder.feed_eof();
    drain_sse(&mut decoder, &mut split);
    split.truncated = decoder.is_truncated();
    split.retry = decoder.reconnection_time();
    assert_eq!(decoder.buffered_len(), 0, "buffers kept after the end");

    // Input after the end is ignored.
    decoder.feed(b"data: late\n\n");
    let late = decoder.poll_event();
    match &split.error {
        Some(error) => assert_eq!(late, Err(error.clone()), "error not sticky"),
        None => assert_eq!(late, Ok(None), "input after the end was decoded"),
    }

    assert_eq!(split, whole, "feeding in pieces changed the outcome");

    // The same pieces decoded where they lie.
    let mut in_place = SseOutcome::default();
    let mut decoder = Decoder::with_max_event_size(limit);
    for piece in input.pieces() {
        let events = &mut in_place.events;
        let decoded = decoder.decode_bytes(piece, |event| {
            events.push(SseEvent {
                event: event.event.map(str::to_owned),
                data: String::from_utf8_lossy(event.data).into_owned(),
                id: event.id.map(str::to_owned),
            });
            std::ops::ControlFlow::Continue(())
        });
        if decoded.is_ok() {
            let held = decoder.buffered_len();
            assert!(
                held <= limit + BOM_SLACK,
                "{held} bytes buffered after decoding in place, limit {limit}"
            );
        }
    }
    decoder.feed_eof();
    drain_sse(&mut decoder, &mut in_place);
    in_place.truncated = decoder.is_truncated();
    in_place.retry = decoder.reconnection_time();
    assert_eq!(in_place, whole, "decoding in place changed the outcome");
}

/// What one chat stream run observed.
#[derive(Debug, PartialEq)]
struct ChatOutcome {
    events: Vec<StreamEvent>,
    error: Option<StreamError>,
    finish: Result<Completion, StreamFailure>,
}

/// Polls until `Ok(None)` or an error, checking that an error is sticky (also across a feed).
fn drain_chat(stream: &mut ChatStream, events: &mut Vec<StreamEvent>) -> Option<StreamError> {
    loop {
        match stream.poll_event() {
            Ok(Some(event)) => events.push(event),
            Ok(None) => return None,
            Err(error) => {
                assert_eq!(stream.poll_event(), Err(error.clone()), "error not sticky");
                stream.feed(b"data: {\"choices\":[]}\n\n");
                assert_eq!(stream.poll_event(), Err(error.clone()), "error not sticky");
                return Some(error);
            }
        }
    }
}

/// Feeds `pieces`, polling after each unless an error already came, then ends the stream.
fn run_chat(limit: usize, pieces: &[&[u8]], poll_each: bool) -> ChatOutcome {
    run_chat_with(ChatStream::with_max_event_size(limit), pieces, poll_each)
}

/// [`run_chat`] on a given stream.
fn run_chat_with(mut stream: ChatStream, pieces: &[&[u8]], poll_each: bool) -> ChatOutcome {
    let mut events = Vec::new();
    let mut error = None;
    for piece in pieces {
        stream.feed(piece);
        if poll_each && error.is_none() {
            error = drain_chat(&mut stream, &mut events);
        }
    }
    if poll_each {
        stream.feed_eof();
        if error.is_none() {
            error = drain_chat(&mut stream, &mut events);
        }
        // Nothing comes after the end, neither from polling nor from new input.
        stream.feed(b"data: {\"choices\":[{\"delta\":{\"content\":\"late\"}}]}\n\n");
        match &error {
            Some(e) => assert_eq!(stream.poll_event(), Err(e.clone()), "error not sticky"),
            None => assert_eq!(
                stream.poll_event(),
                Ok(None),
                "input after the end was used"
            ),
        }
    }
    let finish = stream.finish();
    if poll_each {
        match (&error, &finish) {
            (None, Ok(_)) => {}
            (Some(e), Err(failure)) => assert_eq!(&failure.error, e, "finish changed the error"),
            (None, Err(failure)) => panic!("finish failed after a clean end: {failure}"),
            (Some(e), Ok(_)) => panic!("finish succeeded after the error {e}"),
        }
        check_completion(&events, &finish);
    }
    ChatOutcome {
        events,
        error,
        finish,
    }
}

/// Text that one choice's events carried.
#[derive(Debug, Default)]
struct Streamed {
    content: String,
    reasoning: String,
    /// Argument text per call position.
    arguments: Vec<String>,
    finish_reason: Option<FinishReason>,
}

/// The completion holds exactly what the polled events announced.
fn check_completion(events: &[StreamEvent], finish: &Result<Completion, StreamFailure>) {
    let mut streamed: BTreeMap<u32, Streamed> = BTreeMap::new();
    let mut done = false;
    for event in events {
        match event {
            StreamEvent::ContentDelta { choice, text } => {
                streamed.entry(*choice).or_default().content.push_str(text);
            }
            StreamEvent::ReasoningDelta { choice, text } => {
                streamed
                    .entry(*choice)
                    .or_default()
                    .reasoning
                    .push_str(text);
            }
            StreamEvent::ToolCallBegin { choice, call, .. } => {
                let calls = &mut streamed.entry(*choice).or_default().arguments;
                assert_eq!(*call, calls.len(), "tool calls not numbered in order");
                calls.push(String::new());
            }
            StreamEvent::ToolCallArgumentsDelta {
                choice,
                call,
                fragment,
            } => {
                let calls = &mut streamed.entry(*choice).or_default().arguments;
                let Some(arguments) = calls.get_mut(*call) else {
                    panic!("arguments for call {call} before it began");
                };
                arguments.push_str(fragment);
            }
            StreamEvent::ChoiceFinished { choice, reason } => {
                streamed.entry(*choice).or_default().finish_reason = Some(reason.clone());
            }
            StreamEvent::Done => {
                assert!(!done, "two Done events");
                done = true;
            }
            StreamEvent::RefusalDelta { .. } | StreamEvent::Usage(_) => {}
        }
    }
    let completion = match finish {
        Ok(completion) => completion,
        Err(failure) => &failure.partial,
    };
    assert_eq!(
        completion.done, done,
        "done flag differs from the Done event"
    );
    for choice in &completion.choices {
        let seen = streamed.remove(&choice.index).unwrap_or_default();
        assert_eq!(
            choice.content, seen.content,
            "content differs from its deltas"
        );
        let reasoning = choice.reasoning.as_deref().unwrap_or_default();
        assert_eq!(
            reasoning, seen.reasoning,
            "reasoning differs from its deltas"
        );
        // The completion orders calls by index, the events by arrival: compare as multisets.
        let mut arguments: Vec<&str> = choice.tool_calls.iter().map(|c| &*c.arguments).collect();
        let mut seen_arguments: Vec<&str> = seen.arguments.iter().map(String::as_str).collect();
        arguments.sort_unstable();
        seen_arguments.sort_unstable();
        assert_eq!(arguments, seen_arguments, "tool-call arguments differ");
        assert_eq!(
            choice.finish_reason, seen.finish_reason,
            "finish reason differs"
        );
    }
    assert!(
        streamed.is_empty(),
        "events for choices missing from the completion: {:?}",
        streamed.keys()
    );
}

/// Fuzz body for [`ChatStream`]; see the module docs for the input layout and invariants.
pub fn chat_stream(data: &[u8]) {
    let Some(input) = Input::parse(data, &CHAT_LIMITS) else {
        return;
    };
    let whole = run_chat(input.limit, &[input.body], true);
    let split = run_chat(input.limit, &input.pieces(), true);
    assert_eq!(split, whole, "feeding in pieces changed the outcome");
    // The fast path (envelopes, events taken straight from the input) changes nothing: the
    // same pieces with every chunk parsed in full.
    let full = ChatStream::with_max_event_size(input.limit).without_fast_path();
    assert_eq!(
        run_chat_with(full, &input.pieces(), true),
        whole,
        "the fast path changed the outcome"
    );
    // `finish` without any polling gives the same result.
    let unpolled = run_chat(input.limit, &[input.body], false);
    assert_eq!(
        unpolled.finish, whole.finish,
        "finish without polling differs"
    );
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// The seed files of one fuzz target, sorted by name; panics if there are none.
    fn seeds(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fuzz/seeds")
            .join(target);
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot read the seed corpus {}: {e}", dir.display()));
        let mut seeds: Vec<(PathBuf, Vec<u8>)> = entries
            .map(|entry| {
                let path = entry.expect("seed directory entry").path();
                let data = std::fs::read(&path)
                    .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
                (path, data)
            })
            .collect();
        seeds.sort();
        assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
        seeds
    }

    /// Runs each seed as committed, then its body under every limit and several cuttings.
    fn run_seeds(target: &str, body: fn(&[u8])) {
        for (path, data) in seeds(target) {
            eprintln!("seed {}", path.display());
            body(&data);
            let Some(rest) = data.get(2..) else { continue };
            for limit in 0..8u8 {
                for split in [0u8, 1, 2, 3, 4, 5, 6, 7, 0x0c, 0xf9] {
                    let mut variant = vec![limit, split];
                    variant.extend_from_slice(rest);
                    body(&variant);
                }
            }
        }
    }

    #[test]
    fn sse_decoder_seeds() {
        run_seeds("sse_decoder", super::sse_decoder);
    }

    #[test]
    fn chat_stream_seeds() {
        run_seeds("chat_stream", super::chat_stream);
    }

    #[test]
    fn acp_decoder_seeds() {
        run_seeds("acp_decoder", super::acp_decoder);
    }

    #[test]
    fn mcp_jsonrpc_seeds() {
        run_seeds("mcp_jsonrpc", super::mcp_jsonrpc);
    }

    #[test]
    fn mcp_legacy_stream_seeds() {
        run_seeds("mcp_legacy_stream", super::mcp_legacy_stream);
    }

    #[test]
    fn session_seeds() {
        for (path, data) in seeds("session") {
            eprintln!("seed {}", path.display());
            super::session(&data);
        }
    }

    #[test]
    fn short_inputs_are_ignored() {
        for data in [&b""[..], b"\x00", b"\x07"] {
            super::sse_decoder(data);
            super::chat_stream(data);
            super::mcp_legacy_stream(data);
        }
    }

    #[test]
    fn pieces_cover_the_body() {
        let body: Vec<u8> = (0..=255).collect();
        for split in 0..=255u8 {
            let mut data = vec![0, split];
            data.extend_from_slice(&body);
            let input = super::Input::parse(&data, &super::SSE_LIMITS).unwrap();
            let pieces = input.pieces();
            assert!(pieces.iter().all(|p| !p.is_empty()));
            assert_eq!(pieces.concat(), body);
        }
    }
}
