//! The events a large piece's decoding takes straight from the input (`sse::Sink::at_boundary`
//! with `Accumulator::apply_sse_events`) must be exactly those the SSE decoder and the full
//! chunk path would give: the same events, errors and completion however the body is cut.

use super::tests::{LARGE, Outcome, mixed_pieces, run_with};
use super::*;
use proptest::prelude::*;
use sse::Sink;

/// A chunk in one of the shapes providers stream, `T` standing for the token and `P` for a
/// varying last string (OpenAI's `obfuscation`).
const SHAPES: [&str; 14] = [
    r#"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":T},"finish_reason":null}]}"#,
    r#"{"id":"x","service_tier":"default","choices":[{"index":0,"delta":{"content":T},"finish_reason":null}],"obfuscation":P}"#,
    r#"{"choices":[{"index":0,"delta":{"reasoning_content":T}}]}"#,
    r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c0","function":{"name":"f","arguments":""}}]}}]}"#,
    r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":T}}]}}]}"#,
    r#"{"id":"x","choices":[{"index":1,"delta":{"content":T}}]}"#,
    r#"{ "id": "x", "choices": [ { "index": 0, "delta": { "content": T } } ] }"#,
    r#"{"id":"x","created":T,"choices":[{"index":0,"delta":{"content":"a"}}]}"#,
    r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
    // The first shape's prefix with another ending.
    r#"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":T},"finish_reason":"stop"}]}"#,
    r#"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":T},"finish_reason":null}],"usage":{"total_tokens":3}}"#,
    r#"{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":T},"finish_reason":"ab"}]}"#,
    // An unknown list that grows (kept, and counted against the answer-size cap).
    r#"{"id":"x","reasoning_details":[{"text":T}],"choices":[{"index":0,"delta":{"content":"d"}}]}"#,
    // The same constant field with another value, for reasoning: alternating runs of these two
    // must each set it again.
    r#"{"id":"x","service_tier":"priority","choices":[{"index":0,"delta":{"reasoning":T},"finish_reason":null}],"obfuscation":P}"#,
];

/// A token's JSON text: plain, escaped, non-ASCII, long (past the scanner's 8-byte words),
/// broken (a stray quote, a raw control character, invalid UTF-8, a lone surrogate).
fn token() -> impl Strategy<Value = Vec<u8>> {
    // A broken token ends the stream, so those are rare.
    prop_oneof![
        40 => "[ a-z]{0,12}".prop_map(|t| format!("\"{t}\"").into_bytes()),
        20 => "[ a-zé😀\n\"\\\\\t]{0,40}".prop_map(|t| serde_json::to_string(&t).unwrap().into_bytes()),
        5 => Just(br#""\u00e9\ud83d\ude00\/""#.to_vec()),
        5 => Just(b"\"a\xFFb\xC3\"".to_vec()),
        1 => Just(br#""\ud800""#.to_vec()),
        1 => Just(b"\"a\"b\"".to_vec()),
        1 => Just(b"\"a\x01b\"".to_vec()),
        1 => Just(b"\"tail\\\"".to_vec()),
        1 => Just(b"7".to_vec()),
    ]
}

/// How one event is framed: the field's spelling, the line ends, and lines around it.
fn framing() -> impl Strategy<Value = (usize, usize, usize, usize)> {
    (0..4usize, 0..5usize, 0..6usize, 0..8usize)
}

/// One event's bytes: `shape` with its token, framed; its data sometimes cut into two lines,
/// or followed by another line.
fn event(shape: usize, token: &[u8], pad: &str, framing: (usize, usize, usize, usize)) -> Vec<u8> {
    let (field, ends, before, cut) = framing;
    let mut json = Vec::new();
    for (i, part) in SHAPES[shape].split('T').enumerate() {
        if i > 0 {
            json.extend_from_slice(token);
        }
        json.extend_from_slice(part.replace('P', pad).as_bytes());
    }
    let mut out = Vec::new();
    match before {
        1 => out.extend_from_slice(b": keep-alive\n"),
        2 => out.extend_from_slice(b"id: 7\n"),
        3 => out.extend_from_slice(b"event: message\n"),
        4 => out.extend_from_slice(b"event: error\n"),
        _ => {}
    }
    let field: &[u8] = [&b"data: "[..], b"data:", b"data:  ", b"data: "][field];
    let (line_end, blank): (&[u8], &[u8]) = match ends {
        1 => (b"\r\n", b"\r\n"),
        2 => (b"\r", b"\r"),
        3 => (b"\n", b"\r\n"),
        _ => (b"\n", b"\n"),
    };
    if cut == 5 {
        // The chunk twice in one event's data (not JSON, once joined).
        out.extend_from_slice(field);
        out.extend_from_slice(&json);
        out.extend_from_slice(line_end);
        out.extend_from_slice(field);
        out.extend_from_slice(&json);
    } else if cut == 6 {
        // A line after the data line, before the blank line.
        out.extend_from_slice(field);
        out.extend_from_slice(&json);
        out.extend_from_slice(line_end);
        out.extend_from_slice([&b": c"[..], b"id: 8"][json.len() % 2]);
    } else if cut == 7 && json.len() > 2 {
        // Two data lines, joined by the decoder with an LF (JSON whitespace here).
        let at = json.len() / 2;
        out.extend_from_slice(field);
        out.extend_from_slice(&json[..at]);
        out.extend_from_slice(line_end);
        out.extend_from_slice(field);
        out.extend_from_slice(&json[at..]);
    } else {
        out.extend_from_slice(field);
        out.extend_from_slice(&json);
    }
    out.extend_from_slice(line_end);
    out.extend_from_slice(blank);
    out
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    let pad = prop_oneof![
        4 => "[a-zA-Z0-9]{0,6}".prop_map(|p| format!("\"{p}\"")),
        1 => Just(r#""a\"b""#.to_owned()),
        1 => Just(r#""\n""#.to_owned()),
        1 => Just("null".to_owned()),
    ];
    // Runs of the same shape, token and framing, as streams are; the varying last string
    // changes with every chunk, as OpenAI's does.
    let run = (
        0..SHAPES.len(),
        token(),
        proptest::collection::vec(pad, 1..30),
        framing(),
    );
    (proptest::collection::vec(run, 1..8), any::<bool>()).prop_map(|(runs, done)| {
        let mut body = Vec::new();
        for (shape, token, pads, framing) in runs {
            for pad in pads {
                body.extend(event(shape, &token, &pad, framing));
            }
        }
        if done {
            body.extend_from_slice(b"data: [DONE]\n\n");
        }
        body
    })
}

/// Runs `body` with the limits: one byte at a time with every chunk parsed in full (the
/// reference: no envelope, and no piece ever holds a whole event for the sink to take), one
/// byte at a time with envelopes, whole, and in pieces of which half are large.
/// A body is also run after enough keep-alive comments that it is one large piece.
fn every_way(body: &[u8], max_event: usize, max_answer: usize) -> Outcome {
    let stream = || ChatStream::with_limits(max_event, max_answer);
    let padded = [": keep-alive\n".repeat(LARGE / 13 + 1).as_bytes(), body].concat();
    assert_eq!(
        run_with(stream(), [&padded[..]]),
        run_with(stream(), padded.chunks(1)),
        "padded, whole"
    );
    // The reference: the decoder's line-by-line way, every chunk parsed in full.
    let bytewise = run_with(stream().without_fast_path(), body.chunks(1));
    assert_eq!(
        run_with(stream(), body.chunks(1)),
        bytewise,
        "one byte at a time"
    );
    assert_eq!(run_with(stream(), [body]), bytewise, "whole");
    for seed in [1, 7] {
        assert_eq!(
            run_with(stream(), mixed_pieces(body, seed)),
            bytewise,
            "seed {seed}"
        );
    }
    bytewise
}

proptest! {
    #![proptest_config(crate::proptest_seeds::with_cases(256))]
    #[test]
    fn events_taken_in_place_equal_the_decoders(
        body in body(),
        max_event in prop_oneof![Just(sse::DEFAULT_MAX_EVENT_SIZE), 100..300usize],
        max_answer in prop_oneof![Just(DEFAULT_MAX_ANSWER_BYTES), 0..400usize],
    ) {
        every_way(&body, max_event, max_answer);
    }
}

/// A stream with the envelope of `shape` learned from one chunk.
fn learned(shape: &str) -> ChatStream {
    let mut stream = ChatStream::new();
    stream.feed(format!("data: {}\n\n", shape.replace('T', "\"a\"")).as_bytes());
    assert!(matches!(stream.poll_event(), Ok(Some(_))));
    stream
}

/// The property above would pass if nothing were ever taken in place: these check that the
/// common events are, and what is left to the decoder.
#[test]
fn common_events_are_taken_in_place_and_the_rest_is_not() {
    let content = SHAPES[0];
    let one = |token: &str, framing: (usize, usize, usize, usize)| {
        event(0, token.as_bytes(), "", framing)
    };
    let plain = (0, 0, 0, 0);
    let mut stream = learned(content);
    let mut input = Vec::new();
    for (token, framing) in [
        ("\" hello\"", plain),
        ("\"x\"", (1, 0, 0, 0)),   // `data:` without a space
        ("\"\\n\"", (0, 1, 0, 0)), // CRLF line ends
        ("\"\"", plain),           // empty token: no event
        ("\"0123456789abcdefghij\"", plain),
    ] {
        input.extend(one(token, framing));
    }
    let taken = stream.out.at_boundary(&input, sse::DEFAULT_MAX_EVENT_SIZE);
    assert_eq!(taken, input.len());
    let texts: Vec<String> = std::iter::from_fn(|| stream.poll_event().unwrap())
        .map(|e| match e {
            StreamEvent::ContentDelta { text, .. } => text.to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(texts, [" hello", "x", "\n", "0123456789abcdefghij"]);
    // The learned chunk's "a", then these.
    assert_eq!(
        stream.out.answer_bytes,
        "a hellox\n0123456789abcdefghij".len()
    );

    // Each of these stops the run at its start, after one event taken.
    for (name, second) in [
        ("comment first", one("\"b\"", (0, 0, 1, 0))),
        ("two spaces", one("\"b\"", (2, 0, 0, 0))),
        ("lone CR", one("\"b\"", (0, 2, 0, 0))),
        ("LF then CRLF", one("\"b\"", (0, 3, 0, 0))),
        ("event type", one("\"b\"", (0, 0, 3, 0))),
        ("two data lines", one("\"bcd\"", (0, 0, 0, 7))),
        ("the chunk twice in one event", one("\"b\"", (0, 0, 0, 5))),
        (
            "a comment line before the blank line",
            one("\"b\"", (0, 0, 0, 6)),
        ),
        ("control character", one("\"a\x01\"", plain)),
        ("stray quote", one("\"a\"b\"", plain)),
        ("another envelope", event(2, b"\"b\"", "", plain)),
        ("unfinished", one("\"b\"", plain)[..40].to_vec()),
        ("[DONE]", b"data: [DONE]\n\n".to_vec()),
    ] {
        let mut stream = learned(content);
        let first = one("\"a\"", plain);
        let input = [first.clone(), second].concat();
        let taken = stream.out.at_boundary(&input, sse::DEFAULT_MAX_EVENT_SIZE);
        assert_eq!(taken, first.len(), "{name}");
    }

    // A line over the event size limit, or text over the answer-size cap, goes the usual way
    // (which fails the stream).
    let input = one("\"abc\"", plain);
    let line = input.len() - 2;
    let mut stream = learned(content);
    assert_eq!(stream.out.at_boundary(&input, line - 1), 0);
    assert_eq!(stream.out.at_boundary(&input, line), input.len());
    let mut stream = ChatStream::with_limits(sse::DEFAULT_MAX_EVENT_SIZE, 2);
    stream.feed(format!("data: {}\n\n", content.replace('T', "\"a\"")).as_bytes());
    assert!(matches!(stream.poll_event(), Ok(Some(_))));
    assert_eq!(stream.out.at_boundary(&one("\"bc\"", plain), usize::MAX), 0);
    assert_eq!(
        stream.out.at_boundary(&one("\"b\"", plain), usize::MAX),
        input.len() - 2
    );
}

/// Consecutive chunks in one envelope are applied as a run, their target and fields resolved
/// once: the tail field must still end as the last chunk's, and runs of two envelopes that
/// alternate must each resume where they were.
#[test]
fn runs_end_with_their_last_tail_and_alternate_cleanly() {
    let plain = (0, 0, 0, 0);
    let mut stream = ChatStream::new();
    stream.feed(&event(1, b"\"a\"", "\"p0\"", plain));
    assert!(matches!(stream.poll_event(), Ok(Some(_))));
    let mut input = Vec::new();
    for (token, pad) in [
        ("\"b\"", "\"p1\""),
        ("\"c\"", "\"p2\""),
        ("\"d\"", "\"p3\""),
    ] {
        input.extend(event(1, token.as_bytes(), pad, plain));
    }
    let taken = stream.out.at_boundary(&input, sse::DEFAULT_MAX_EVENT_SIZE);
    assert_eq!(taken, input.len());
    stream.feed(b"data: [DONE]\n\n");
    let done = stream.finish().unwrap();
    assert_eq!(done.extra["obfuscation"], "p3");
    assert_eq!(done.extra["service_tier"], "default");
    assert_eq!(done.choices[0].content, "abcd");

    // Runs of two envelopes whose constant field differs: each run sets it again.
    let mut stream = ChatStream::new();
    stream.feed(&event(1, b"\"a\"", "\"p0\"", plain));
    stream.feed(&event(13, b"\"r\"", "\"q0\"", plain));
    while let Ok(Some(_)) = stream.poll_event() {}
    let mut input = Vec::new();
    for (shape, token, pad) in [
        (1, "\"b\"", "\"p1\""),
        (13, "\"s\"", "\"q1\""),
        (1, "\"c\"", "\"p2\""),
        (13, "\"t\"", "\"q2\""),
    ] {
        input.extend(event(shape, token.as_bytes(), pad, plain));
    }
    let taken = stream.out.at_boundary(&input, sse::DEFAULT_MAX_EVENT_SIZE);
    assert_eq!(taken, input.len());
    stream.feed(b"data: [DONE]\n\n");
    let done = stream.finish().unwrap();
    assert_eq!(done.extra["service_tier"], "priority");
    assert_eq!(done.extra["obfuscation"], "q2");
    assert_eq!(done.choices[0].content, "abc");
    assert_eq!(done.choices[0].reasoning.as_deref(), Some("rst"));

    // Content of choice 0 and 1, alternating: each event is a run of one.
    let mut stream = learned(SHAPES[0]);
    stream.feed(format!("data: {}\n\n", SHAPES[5].replace('T', "\"z\"")).as_bytes());
    let mut input = Vec::new();
    for token in ["\"1\"", "\"2\"", "\"3\""] {
        input.extend(event(0, token.as_bytes(), "", plain));
        input.extend(event(5, token.as_bytes(), "", plain));
    }
    let taken = stream.out.at_boundary(&input, sse::DEFAULT_MAX_EVENT_SIZE);
    assert_eq!(taken, input.len());
    stream.feed(b"data: [DONE]\n\n");
    let done = stream.finish().unwrap();
    assert_eq!(
        (
            done.choices[0].content.as_str(),
            done.choices[1].content.as_str()
        ),
        ("a123", "z123")
    );
}
