//! Tests of the SSE decoder: vectors run whole, byte by byte and at random splits, against a
//! slow reference transcription of the standard.

use super::*;
use proptest::prelude::*;

/// Everything a run observes, compared between feeding strategies.
#[derive(Debug, Default, PartialEq)]
struct Outcome {
    events: Vec<SseEvent>,
    error: Option<DecodeError>,
    truncated: bool,
    retry: Option<u64>,
}

/// Polls until `Ok(None)` or an error; returns false once an error was recorded.
fn drain(decoder: &mut Decoder, out: &mut Outcome) -> bool {
    loop {
        match decoder.poll_event() {
            Ok(Some(event)) => out.events.push(event),
            Ok(None) => return true,
            Err(error) => {
                assert_eq!(decoder.poll_event(), Err(error.clone()), "error not sticky");
                out.error = Some(error);
                return false;
            }
        }
    }
}

/// Feeds `chunks` in order, draining after each, then optionally EOF.
fn run<'a>(limit: usize, chunks: impl IntoIterator<Item = &'a [u8]>, eof: bool) -> Outcome {
    let mut decoder = Decoder::with_max_event_size(limit);
    let mut out = Outcome::default();
    let mut ok = true;
    for chunk in chunks {
        decoder.feed(chunk);
        ok = drain(&mut decoder, &mut out);
        if !ok {
            break;
        }
    }
    // After an error the decoder returns it again (checked in `drain`); only a clean end
    // must stay `Ok(None)`. EOF can itself raise the error: a partial BOM held back at the
    // start is measured against the limit only once no more input can complete it.
    if ok && eof {
        decoder.feed_eof();
        if drain(&mut decoder, &mut out) {
            assert_eq!(decoder.poll_event(), Ok(None), "end not stable");
        }
    }
    out.truncated = decoder.is_truncated();
    out.retry = decoder.reconnection_time();
    out
}

/// [`run`] with each chunk, by its mode, fed and polled (0), decoded in place (1), or decoded
/// in place with the sink stopping after its first event, the rest polled out (2).
fn run_in_place(limit: usize, chunks: &[Vec<u8>], modes: &[u8]) -> Outcome {
    let mut decoder = Decoder::with_max_event_size(limit);
    let mut out = Outcome::default();
    let mut ok = true;
    for (i, chunk) in chunks.iter().enumerate() {
        let mode = modes.get(i).copied().unwrap_or(1);
        if mode == 0 {
            decoder.feed(chunk);
        } else {
            let mut seen = 0;
            let events = &mut out.events;
            let decoded = decoder.decode_bytes(chunk, |e| {
                events.push(SseEvent {
                    event: e.event.map(str::to_owned),
                    data: String::from_utf8_lossy(e.data).into_owned(),
                    id: e.id.map(str::to_owned),
                });
                seen += 1;
                if mode == 2 && seen == 1 {
                    std::ops::ControlFlow::Break(())
                } else {
                    std::ops::ControlFlow::Continue(())
                }
            });
            if let Err(error) = decoded {
                assert_eq!(decoder.poll_event(), Err(error.clone()), "error not sticky");
                out.error = Some(error);
                ok = false;
                break;
            }
        }
        ok = drain(&mut decoder, &mut out);
        if !ok {
            break;
        }
    }
    if ok {
        decoder.feed_eof();
        if drain(&mut decoder, &mut out) {
            assert_eq!(decoder.poll_event(), Ok(None), "end not stable");
        }
    }
    out.truncated = decoder.is_truncated();
    out.retry = decoder.reconnection_time();
    out
}

fn whole(input: &[u8], eof: bool) -> Outcome {
    run(DEFAULT_MAX_EVENT_SIZE, [input], eof)
}

fn bytewise(input: &[u8]) -> Outcome {
    run(DEFAULT_MAX_EVENT_SIZE, input.chunks(1), true)
}

type Expected = (Option<&'static str>, &'static str, Option<&'static str>);

fn ev((event, data, id): Expected) -> SseEvent {
    SseEvent {
        event: event.map(Into::into),
        data: data.into(),
        id: id.map(Into::into),
    }
}

/// A test vector: input bytes, expected events `(event, data, id)`, truncation, retry.
struct Case {
    name: &'static str,
    input: &'static [u8],
    events: &'static [Expected],
    truncated: bool,
    retry: Option<u64>,
}

const fn case(name: &'static str, input: &'static [u8], events: &'static [Expected]) -> Case {
    Case {
        name,
        input,
        events,
        truncated: false,
        retry: None,
    }
}

const fn cut(mut c: Case) -> Case {
    c.truncated = true;
    c
}

const fn retry(mut c: Case, ms: u64) -> Case {
    c.retry = Some(ms);
    c
}

const M: Option<&str> = None;

#[rustfmt::skip]
const CASES: &[Case] = &[
    case("empty input", b"", &[]),
    case("lf", b"data: a\n\n", &[(M, "a", M)]),
    case("crlf", b"data: a\r\n\r\n", &[(M, "a", M)]),
    case("cr", b"data: a\r\r", &[(M, "a", M)]),
    case("mixed ends", b"data: a\r\ndata: b\rdata: c\n\r\n", &[(M, "a\nb\nc", M)]),
    case("lf then cr is two ends", b"data: a\n\r", &[(M, "a", M)]),
    case("cr cr lf", b"data: a\r\r\n", &[(M, "a", M)]),
    case("blank lines between", b"\n\n\r\ndata: a\n\n\n\r", &[(M, "a", M)]),
    case("bom", b"\xEF\xBB\xBFdata: a\n\n", &[(M, "a", M)]),
    case("second bom kept", b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n", &[]),
    case("bom not at start", b"data: a\n\n\xEF\xBB\xBFdata: b\n\n", &[(M, "a", M)]),
    case("bom in value", b"data: \xEF\xBB\xBFx\n\n", &[(M, "\u{FEFF}x", M)]),
    case("partial bom", b"\xEF\xBBdata: a\n\n", &[]),
    cut(case("partial bom then eof", b"\xEF\xBB", &[])),
    case("bom alone", b"\xEF\xBB\xBF", &[]),
    case("comments", b":hi\ndata: a\n: x\n\n:\n\n", &[(M, "a", M)]),
    case("comment only block", b":x\n\n", &[]),
    case("event", b"event: add\ndata: 1\n\n", &[(Some("add"), "1", M)]),
    case("empty event is message", b"event:\ndata: 1\n\n", &[(M, "1", M)]),
    case("event last wins", b"event: a\nevent: b\ndata: 1\n\n", &[(Some("b"), "1", M)]),
    case("event resets", b"event: a\ndata: 1\n\ndata: 2\n\n", &[(Some("a"), "1", M), (M, "2", M)]),
    case("event reset without data", b"event: a\n\ndata: 2\n\n", &[(M, "2", M)]),
    case("id persists", b"id: 1\ndata: a\n\ndata: b\n\n", &[(M, "a", Some("1")), (M, "b", Some("1"))]),
    case("empty id resets", b"id: 1\ndata: a\n\nid\ndata: b\n\n", &[(M, "a", Some("1")), (M, "b", Some(""))]),
    case("id from no-data block", b"id: 7\n\ndata: a\n\n", &[(M, "a", Some("7"))]),
    case("id with nul ignored", b"id: 1\n\nid: a\0b\ndata: x\n\n", &[(M, "x", Some("1"))]),
    retry(case("retry", b"retry: 1000\n\n", &[]), 1000),
    retry(cut(case("retry leading zeros", b"retry:007\n", &[])), 7),
    retry(case("retry non-digits ignored", b"retry: 5\nretry: 6a\nretry: -1\nretry:\nretry\nretry:  8\n\n", &[]), 5),
    retry(case("retry saturates", b"retry: 99999999999999999999999\n\n", &[]), u64::MAX),
    case("unknown field", b"foo: bar\ndata: a\n\n", &[(M, "a", M)]),
    case("case sensitive", b"Data: a\nDATA: b\nEvent: e\n\n", &[]),
    case("case sensitive event", b"Event: e\ndata: a\n\n", &[(M, "a", M)]),
    case("space before colon", b"data : a\n\n", &[]),
    case("leading space in name", b" data: a\n\n", &[]),
    case("no colon is empty value", b"data\n\n", &[(M, "", M)]),
    case("no colon twice", b"data\ndata\n\n", &[(M, "\n", M)]),
    case("no space", b"data:a\n\n", &[(M, "a", M)]),
    case("one space stripped", b"data:  a\n\n", &[(M, " a", M)]),
    case("tab kept", b"data:\ta\n\n", &[(M, "\ta", M)]),
    case("colon in value", b"data: a:b\n\n", &[(M, "a:b", M)]),
    case("multi-line data", b"data: a\ndata:\ndata: b\n\n", &[(M, "a\n\nb", M)]),
    case("empty data dispatches", b"data:\n\ndata: \n\n", &[(M, "", M), (M, "", M)]),
    case("no data no dispatch", b"event: x\nid\nretry: x\n\n", &[]),
    case("nul in data", b"data: a\0b\n\n", &[(M, "a\0b", M)]),
    cut(case("truncated event", b"data: a\n\ndata: b\n", &[(M, "a", M)])),
    cut(case("unterminated line", b"data: a", &[])),
    cut(case("unterminated comment", b"data: a\n\n:c", &[(M, "a", M)])),
    case("terminated comment tail", b"data: a\n\n:c\n", &[(M, "a", M)]),
    cut(case("pending id only", b"id: 1\n", &[])),
    cut(case("unterminated field", b"data: a\n\nid", &[(M, "a", M)])),
    case("invalid byte", b"data: a\xFFb\n\n", &[(M, "a\u{FFFD}b", M)]),
    case("truncated sequence", b"data: \xE2\x82\n\n", &[(M, "\u{FFFD}", M)]),
    case("invalid in event", b"event: \xC0\ndata: x\n\n", &[(Some("\u{FFFD}"), "x", M)]),
    case("invalid in name", b"dat\xE1: x\n\n", &[]),
    case("utf8 kept", b"data: \xC3\xBC\xE2\x82\xAC\xF0\x9F\x98\x80\n\n", &[(M, "ü€😀", M)]),
    case("spec stock", b"data: YHOO\ndata: +2\ndata: 10\n\n", &[(M, "YHOO\n+2\n10", M)]),
    cut(case(
        "spec four blocks",
        b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n",
        &[(M, "first event", Some("1")), (M, "second event", Some(""))],
    )),
    cut(case("spec empty data", b"data\n\ndata\ndata\n\ndata:", &[(M, "", M), (M, "\n", M)])),
    case("spec space", b"data:test\n\ndata: test\n\n", &[(M, "test", M), (M, "test", M)]),
];

#[test]
fn vectors_three_ways() {
    for case in CASES {
        let events: Vec<SseEvent> = case.events.iter().copied().map(ev).collect();
        let expected = Outcome {
            events,
            error: None,
            truncated: case.truncated,
            retry: case.retry,
        };
        let no_eof = whole(case.input, false);
        assert_eq!(
            no_eof.events, expected.events,
            "{}: whole, no EOF",
            case.name
        );
        assert_eq!(no_eof.error, None, "{}: whole, no EOF", case.name);
        assert_eq!(whole(case.input, true), expected, "{}: whole", case.name);
        assert_eq!(
            bytewise(case.input),
            expected,
            "{}: byte at a time",
            case.name
        );
    }
}

#[test]
fn cr_split_across_feeds_is_one_line_end() {
    let chunks: [&[u8]; 4] = [b"data: a\r", b"\ndata: b\r", b"\n", b"\r\n"];
    let out = run(DEFAULT_MAX_EVENT_SIZE, chunks, true);
    assert_eq!(out.events, [ev((M, "a\nb", M))]);
    assert!(!out.truncated);
}

#[test]
fn cr_at_end_of_feed_ends_the_line_at_once() {
    let mut decoder = Decoder::new();
    decoder.feed(b"data: a\r");
    assert_eq!(decoder.poll_event(), Ok(None));
    decoder.feed(b"\r");
    assert_eq!(decoder.poll_event(), Ok(Some(ev((M, "a", M)))));
    decoder.feed(b"\n");
    assert_eq!(
        decoder.poll_event(),
        Ok(None),
        "LF after CR CR is a blank line"
    );
}

#[test]
fn utf8_split_across_feeds() {
    let input = "data: é€😀\n\n".as_bytes();
    for split in 0..=input.len() {
        let out = run(
            DEFAULT_MAX_EVENT_SIZE,
            [&input[..split], &input[split..]],
            true,
        );
        assert_eq!(out.events, [ev((M, "é€😀", M))], "split at {split}");
    }
}

#[test]
fn bom_split_across_feeds() {
    let mut decoder = Decoder::new();
    for byte in BOM {
        decoder.feed(&[*byte]);
        assert_eq!(decoder.poll_event(), Ok(None));
    }
    decoder.feed(b"\xEF\xBB\xBFdata: a\n\n");
    assert_eq!(
        decoder.poll_event(),
        Ok(None),
        "second BOM is part of the field name"
    );
    decoder.feed(b"data: b\n\n");
    assert_eq!(decoder.poll_event(), Ok(Some(ev((M, "b", M)))));
}

#[test]
fn event_type_defaults_to_message() {
    assert_eq!(SseEvent::default().event_type(), "message");
    let event = SseEvent {
        event: Some("add".into()),
        ..SseEvent::default()
    };
    assert_eq!(event.event_type(), "add");
}

#[test]
fn constructors() {
    assert_eq!(Decoder::new().max_event_size(), DEFAULT_MAX_EVENT_SIZE);
    assert_eq!(Decoder::default().max_event_size(), DEFAULT_MAX_EVENT_SIZE);
    assert_eq!(Decoder::with_max_event_size(10).max_event_size(), 10);
}

#[test]
fn limit_counts_data_type_and_line() {
    // "data: abc" is 9 bytes; with limit 9 it fits, with 8 it does not.
    let input = b"data: abc\n\n";
    assert_eq!(run(9, [&input[..]], true).events, [ev((M, "abc", M))]);
    let too_large = Some(DecodeError::EventTooLarge { limit: 8 });
    assert_eq!(run(8, [&input[..]], true).error, too_large);
    // Pending data (3) + type (1) + "data: xyz" (9) = 13.
    let input = b"event: t\ndata: abc\ndata: xyz\n\n";
    assert_eq!(
        run(13, [&input[..]], true).events,
        [ev((Some("t"), "abc\nxyz", M))]
    );
    assert!(run(12, [&input[..]], true).error.is_some());
}

#[test]
fn event_too_large_is_sticky() {
    let mut decoder = Decoder::with_max_event_size(16);
    decoder.feed(b"data: ok\n\ndata: 0123456789\ndata: 0123456789\n\n");
    assert_eq!(decoder.poll_event(), Ok(Some(ev((M, "ok", M)))));
    let error = DecodeError::EventTooLarge { limit: 16 };
    assert_eq!(decoder.poll_event(), Err(error.clone()));
    assert_eq!(decoder.poll_event(), Err(error.clone()));
    decoder.feed(b"data: x\n\n");
    decoder.feed_eof();
    assert_eq!(decoder.poll_event(), Err(error.clone()));
    assert_eq!(decoder.buffered_len(), 0);
    assert!(!decoder.is_truncated());
    assert!(error.to_string().contains("16-byte limit"));
}

#[test]
fn replacement_characters_count_towards_the_limit() {
    // 12 raw bytes fit in 20, but seven U+FFFD take 21.
    let out = run(20, [&b"data:\xFF\xFF\xFF\xFF\xFF\xFF\xFF\n\n"[..]], true);
    assert_eq!(out.error, Some(DecodeError::EventTooLarge { limit: 20 }));
}

#[test]
fn long_line_errors_before_eof_with_bounded_memory() {
    let limit = 1000;
    let chunk = [b'x'; 100];
    let mut decoder = Decoder::with_max_event_size(limit);
    decoder.feed(b"data: ");
    let mut polls = 0;
    let error = loop {
        decoder.feed(&chunk);
        polls += 1;
        match decoder.poll_event() {
            Ok(None) => assert!(decoder.buffered_len() <= limit, "buffered too much"),
            Ok(Some(event)) => panic!("unexpected {event:?}"),
            Err(error) => break error,
        }
        assert!(polls < 100, "no error");
    };
    assert_eq!(error, DecodeError::EventTooLarge { limit });
    assert_eq!(polls, 10);
    for _ in 0..100 {
        decoder.feed(&chunk);
    }
    assert_eq!(
        decoder.buffered_len(),
        0,
        "input after an error is not kept"
    );
}

#[test]
fn long_comment_counts_towards_the_limit() {
    let mut input = vec![b':'; 2000];
    input.push(b'\n');
    assert!(run(1000, [&input[..]], true).error.is_some());
}

#[test]
fn buffer_is_compacted() {
    let event = b"data: 0123456789\n\n: ping\n";
    let mut decoder = Decoder::new();
    for _ in 0..10_000 {
        for piece in event.chunks(7) {
            decoder.feed(piece);
            while decoder.poll_event().unwrap().is_some() {}
            assert!(decoder.buffered_len() <= 2 * event.len());
        }
    }
}

#[test]
fn many_comments_in_one_poll() {
    let mut input = b": ping\n".repeat(100_000);
    input.extend_from_slice(b"data: a\n\n");
    assert_eq!(whole(&input, true).events, [ev((M, "a", M))]);
}

#[test]
fn feed_after_eof_is_ignored() {
    let mut decoder = Decoder::new();
    decoder.feed(b"data: a\n");
    decoder.feed_eof();
    decoder.feed(b"\n");
    assert_eq!(decoder.poll_event(), Ok(None));
    assert!(decoder.is_truncated());
    assert_eq!(decoder.buffered_len(), 0);
}

#[test]
fn truncation_is_only_reported_at_the_end() {
    let mut decoder = Decoder::new();
    decoder.feed(b"data: a\n");
    assert_eq!(decoder.poll_event(), Ok(None));
    assert!(!decoder.is_truncated());
    decoder.feed_eof();
    assert!(!decoder.is_truncated());
    assert_eq!(decoder.poll_event(), Ok(None));
    assert!(decoder.is_truncated());
}

#[test]
fn encode_wire_form() {
    let event = SseEvent {
        event: Some("add".into()),
        data: "a\n\nb".into(),
        id: Some("7".into()),
    };
    assert_eq!(
        encode(&event),
        "event: add\nid: 7\ndata: a\ndata: \ndata: b\n\n"
    );
    assert_eq!(encode(&SseEvent::default()), "data: \n\n");
}

#[test]
fn encode_normalises_cr_to_lf() {
    let event = SseEvent {
        data: "a\rb\r\nc\n".into(),
        ..SseEvent::default()
    };
    let wire = encode(&event);
    assert_eq!(wire, "data: a\ndata: b\ndata: c\ndata: \n\n");
    assert_eq!(
        whole(wire.as_bytes(), true).events,
        [ev((M, "a\nb\nc\n", M))]
    );
}

/// A direct, slow transcription of the standard: decode all, split lines, process.
fn reference(input: &[u8]) -> Outcome {
    let text = String::from_utf8_lossy(input.strip_prefix(BOM).unwrap_or(input));
    let mut rest: &str = &text;
    let (mut data, mut event_type) = (String::new(), String::new());
    let (mut id, mut in_event) = (None::<String>, false);
    let mut out = Outcome::default();
    while let Some(end) = rest.find(['\r', '\n']) {
        let line = &rest[..end];
        rest = &rest[end
            + if rest[end..].starts_with("\r\n") {
                2
            } else {
                1
            }..];
        if line.is_empty() {
            in_event = false;
            if !data.is_empty() {
                if data.ends_with('\n') {
                    data.pop();
                }
                let event = (!event_type.is_empty()).then(|| event_type.clone());
                let data = std::mem::take(&mut data);
                out.events.push(SseEvent {
                    event,
                    data,
                    id: id.clone(),
                });
            }
            data.clear();
            event_type.clear();
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        in_event = true;
        let (name, value) = match line.split_once(':') {
            Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match name {
            "event" => event_type = value.to_owned(),
            "data" => data.extend([value, "\n"]),
            "id" if !value.contains('\0') => id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                out.retry = Some(value.parse().unwrap_or(u64::MAX));
            }
            _ => {}
        }
    }
    out.truncated = in_event || !rest.is_empty();
    out
}

/// SSE-ish fragments, some of them partial UTF-8 or BOM bytes.
const TOKENS: &[&[u8]] = &[
    b"data",
    b"data:",
    b"data: ",
    b"event:",
    b"event: e",
    b"id",
    b"id: ",
    b"retry:",
    b"12",
    b":",
    b" ",
    b"\r",
    b"\n",
    b"\r\n",
    b"x",
    b"\0",
    "ü".as_bytes(),
    b"\xC3",
    b"\xBC",
    b"\xFF",
    BOM,
    b"\xEF",
];

fn token_input() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..48).prop_map(|tokens| tokens.concat())
}

fn any_input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![prop::collection::vec(any::<u8>(), 0..256), token_input()]
}

fn splits() -> impl Strategy<Value = Vec<prop::sample::Index>> {
    prop::collection::vec(any::<prop::sample::Index>(), 0..8)
}

fn limits() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(0),
        Just(5),
        Just(16),
        Just(64),
        Just(DEFAULT_MAX_EVENT_SIZE)
    ]
}

/// Cuts `input` at the given points.
fn split_at(input: &[u8], cuts: &[prop::sample::Index]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts.iter().map(|cut| cut.index(input.len() + 1)).collect();
    points.sort_unstable();
    points.push(input.len());
    let mut start = 0;
    let mut chunks = Vec::new();
    for end in points {
        chunks.push(input[start..end].to_vec());
        start = end;
    }
    chunks
}

fn event_strategy() -> impl Strategy<Value = SseEvent> {
    (
        prop::option::of("[^\r\n]{1,12}"),
        "[^\r]{0,40}",
        prop::option::of("[^\r\n\0]{0,12}"),
    )
        .prop_map(|(event, data, id)| SseEvent { event, data, id })
}

proptest! {
    #![proptest_config(crate::proptest_seeds::config())]
    #[test]
    fn any_split_matches_whole(input in any_input(), cuts in splits(), limit in limits()) {
        let chunks = split_at(&input, &cuts);
        let whole = run(limit, [&input[..]], true);
        let split = run(limit, chunks.iter().map(Vec::as_slice), true);
        prop_assert_eq!(split, whole);
    }

    #[test]
    fn raw_data_decoded_lossily_is_the_events_data(input in any_input(), cuts in splits()) {
        let mut decoder = Decoder::new();
        let mut events = Vec::new();
        let mut error = None;
        let chunks = split_at(&input, &cuts);
        for chunk in chunks.iter().map(Some).chain([None]) {
            match chunk {
                Some(chunk) => decoder.feed(chunk),
                None => decoder.feed_eof(),
            }
            loop {
                match decoder.poll_event_bytes() {
                    Ok(Some(e)) => events.push(SseEvent {
                        event: e.event.map(str::to_owned),
                        data: String::from_utf8_lossy(e.data).into_owned(),
                        id: e.id.map(str::to_owned),
                    }),
                    Ok(None) => break,
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            if error.is_some() {
                break;
            }
        }
        let expected = whole(&input, true);
        prop_assert_eq!(events, expected.events);
        prop_assert_eq!(error, expected.error);
    }

    #[test]
    fn decoding_in_place_matches_feeding(
        input in any_input(),
        cuts in splits(),
        modes in prop::collection::vec(0..3u8, 0..64),
        limit in limits(),
    ) {
        let chunks = split_at(&input, &cuts);
        let fed = run(limit, chunks.iter().map(Vec::as_slice), true);
        prop_assert_eq!(run_in_place(limit, &chunks, &modes), fed);
    }

    #[test]
    fn matches_reference(input in any_input()) {
        prop_assert_eq!(whole(&input, true), reference(&input));
        prop_assert_eq!(bytewise(&input), reference(&input));
    }

    #[test]
    fn encode_round_trips(event in event_strategy()) {
        let wire = encode(&event);
        prop_assert_eq!(whole(wire.as_bytes(), true).events, vec![event]);
    }

    #[test]
    fn encode_round_trips_a_stream(events in prop::collection::vec(event_strategy(), 0..6)) {
        // The ID persists, so an event without one decodes with the previous event's ID.
        let mut last_id = None;
        let expected: Vec<SseEvent> = events.iter().map(|event| {
            if event.id.is_some() {
                last_id.clone_from(&event.id);
            }
            SseEvent { id: last_id.clone(), ..event.clone() }
        }).collect();
        let wire: String = events.iter().map(encode).collect();
        let out = whole(wire.as_bytes(), true);
        prop_assert!(!out.truncated);
        prop_assert_eq!(out.events, expected);
    }
}

#[test]
fn lent_events_match_the_owned_ones_across_feeds_and_compaction() {
    // A one-line event is lent from the input; the input moves (compaction) while its blank
    // line is still to come; invalid UTF-8 and several data lines go through the buffer.
    let mut decoder = Decoder::new();
    decoder.feed(b": a comment long enough to be compacted away\ndata: kept in place");
    assert_eq!(decoder.poll_event_ref(), Ok(None));
    decoder.feed(b"\n");
    assert_eq!(decoder.poll_event_ref(), Ok(None));
    decoder.feed(b"\nevent: two\ndata: a\xFFb\n\ndata: x\ndata: y\n\ndata: last\n\n");
    let mut got = Vec::new();
    while let Some(event) = decoder.poll_event_ref().unwrap() {
        got.push((event.event.map(str::to_owned), event.data.to_owned()));
    }
    assert_eq!(
        got,
        [
            (None, "kept in place".to_owned()),
            (Some("two".to_owned()), "a\u{FFFD}b".to_owned()),
            (None, "x\ny".to_owned()),
            (None, "last".to_owned()),
        ]
    );
}

#[test]
fn a_large_events_buffers_are_not_kept_for_the_next_one() {
    let mut d = Decoder::new();
    // Two data lines, so the data is built in the decoder's own buffer.
    let line = "x".repeat(400_000);
    d.feed(format!("event: {line}\ndata: {line}\ndata: {line}\n\n").as_bytes());
    let event = d.poll_event_ref().unwrap().unwrap();
    assert_eq!(event.data.len(), 2 * line.len() + 1);
    // The lent event holds the large buffers; the ones for the next event are small again.
    assert!(d.state.data.capacity() <= KEPT_CAPACITY);
    assert!(d.state.event_type.capacity() <= KEPT_CAPACITY);
    d.feed(b"data: small\n\n");
    assert_eq!(d.poll_event_ref().unwrap().unwrap().data, "small");
    assert!(d.state.data.capacity() <= KEPT_CAPACITY);
    assert!(d.state.lent_data.capacity() <= KEPT_CAPACITY);
}

#[test]
fn a_lent_large_event_is_let_go_while_the_next_one_fills() {
    let mut d = Decoder::new();
    let line = "x".repeat(400_000);
    d.feed(format!("event: {line}\ndata: {line}\ndata: {line}\n\n").as_bytes());
    assert!(d.poll_event_ref().unwrap().is_some());
    // The next event is still pending: the lend is over, so the large buffers are gone
    // instead of being held beside it.
    d.feed(format!("data: {line}\ndata: ").as_bytes());
    assert!(d.poll_event_ref().unwrap().is_none());
    assert!(d.state.lent_data.capacity() <= KEPT_CAPACITY);
    assert!(d.state.lent_type.capacity() <= KEPT_CAPACITY);
}

#[test]
fn a_large_event_decoded_in_place_is_let_go_before_the_next_one_fills() {
    // Decoding in place, a sink's event of several lines is in the lent buffers only while
    // the sink has it: the next event (here still pending) is not held beside it.
    let mut d = Decoder::new();
    let line = "x".repeat(400_000);
    let input = format!("event: {line}\ndata: {line}\ndata: {line}\n\ndata: {line}\ndata: ");
    let mut seen = 0;
    d.decode_bytes(input.as_bytes(), |e| {
        seen += e.data.len();
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(seen, 2 * line.len() + 1);
    assert!(d.state.lent_data.capacity() <= KEPT_CAPACITY);
    assert!(d.state.lent_type.capacity() <= KEPT_CAPACITY);
}

#[test]
fn decoding_in_place_after_an_unpolled_feed_keeps_order_and_the_rest_after_a_stop() {
    // Lines fed but not polled yet are read first; a sink that stops at the first event
    // leaves the rest of the input for the next poll, as `feed` would.
    let mut decoder = Decoder::new();
    decoder.feed(b"data: a\n");
    let mut seen = Vec::new();
    decoder
        .decode_bytes(b"\ndata: b\n\ndata: c", |e| {
            seen.push(String::from_utf8_lossy(e.data).into_owned());
            std::ops::ControlFlow::Break(())
        })
        .unwrap();
    assert_eq!(seen, ["a"]);
    decoder.feed(b"\n\n");
    let mut out = Outcome::default();
    assert!(drain(&mut decoder, &mut out));
    let data: Vec<&str> = out.events.iter().map(|e| e.data.as_str()).collect();
    assert_eq!(data, ["b", "c"]);
}
