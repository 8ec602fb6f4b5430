//! The deltas of one body read leave the session merged: one event per run of a kind, in the
//! stream's order, and nothing waits for a later read.

use super::*;
use proptest::prelude::*;

/// One streamed piece of an answer, as the provider sends it (one SSE event each).
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Reasoning(String),
    Refusal(String),
    /// The start of a whole tool call (its index, in order).
    Call(usize),
}

impl Piece {
    fn chunk(&self) -> Value {
        match self {
            Piece::Text(t) => delta(json!({"content": t}), None),
            Piece::Reasoning(t) => delta(json!({"reasoning_content": t}), None),
            Piece::Refusal(t) => delta(json!({"refusal": t}), None),
            Piece::Call(index) => delta(
                json!({"tool_calls": [{"index": index, "id": format!("c{index}"),
                    "type": "function",
                    "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}]}),
                None,
            ),
        }
    }

    /// The piece as the owner sees it, `None` for events that are not streamed pieces.
    fn of_event(event: &Event) -> Option<Piece> {
        Some(match event {
            Event::TextDelta { text } => Piece::Text(text.to_string()),
            Event::ReasoningDelta { text } => Piece::Reasoning(text.to_string()),
            Event::RefusalDelta { text } => Piece::Refusal(text.to_string()),
            Event::ToolCallStreaming { index, .. } => Piece::Call(*index),
            _ => return None,
        })
    }

    /// Whether `self` and `next` are deltas of one kind (which a read must have merged).
    fn same_kind(&self, next: &Piece) -> bool {
        matches!(
            (self, next),
            (Piece::Text(_), Piece::Text(_))
                | (Piece::Reasoning(_), Piece::Reasoning(_))
                | (Piece::Refusal(_), Piece::Refusal(_))
        )
    }
}

/// `pieces` with each run of one kind of delta joined into one: what the stream says, however
/// it was cut into reads.
fn runs(pieces: impl IntoIterator<Item = Piece>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    for piece in pieces {
        match (out.last_mut(), piece) {
            (Some(Piece::Text(run)), Piece::Text(t))
            | (Some(Piece::Reasoning(run)), Piece::Reasoning(t))
            | (Some(Piece::Refusal(run)), Piece::Refusal(t)) => run.push_str(&t),
            (_, piece) => out.push(piece),
        }
    }
    out
}

/// An SSE body that streams `pieces` after a role-only first delta, then finishes.
fn body_of(pieces: &[Piece]) -> String {
    let mut chunks = vec![delta(json!({"role": "assistant", "content": ""}), None)];
    chunks.extend(pieces.iter().map(Piece::chunk));
    let finish = if pieces.iter().any(|p| matches!(p, Piece::Call(_))) {
        "tool_calls"
    } else {
        "stop"
    };
    chunks.push(delta(json!({}), Some(finish)));
    sse_body(&chunks)
}

/// Feeds `body` to a fresh session in the given reads, returning the streamed pieces each
/// read brought (each `handle_response_data` and the end, in order).
fn feed_in_reads(body: &[u8], cuts: &[usize]) -> Vec<Vec<Piece>> {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("go");
    h.head(200, &[("content-type", "text/event-stream")]);
    let req = h.req();
    let mut reads = Vec::new();
    let mut from = 0;
    for &to in cuts.iter().chain([&body.len()]) {
        let before = h.events.len();
        h.s.handle_response_data(h.now, req, &body[from..to])
            .unwrap();
        h.drain();
        reads.push(
            h.events[before..]
                .iter()
                .filter_map(Piece::of_event)
                .collect(),
        );
        from = to;
    }
    let before = h.events.len();
    // The session may have finished the request at [DONE] already.
    let _ = h.s.handle_response_end(h.now, req);
    h.drain();
    reads.push(
        h.events[before..]
            .iter()
            .filter_map(Piece::of_event)
            .collect(),
    );
    reads
}

fn text(t: &str) -> Piece {
    Piece::Text(t.into())
}

/// A read of a fast stream brings many one-token deltas: the owner gets one `TextDelta`
/// with all their text, not one event per token.
#[test]
fn one_read_of_many_tokens_is_one_text_delta() {
    let tokens: Vec<String> = (0..300).map(|i| format!("tok{i} ")).collect();
    let pieces: Vec<Piece> = tokens.iter().map(|t| text(t)).collect();
    let body = body_of(&pieces);
    let reads = feed_in_reads(body.as_bytes(), &[]);
    assert_eq!(reads[0], vec![text(&tokens.concat())]);
    assert!(reads[1].is_empty(), "nothing was held for the end");
}

/// Text, reasoning, text and refusal in one read stay four events, in their order; a tool
/// call's start ends a run and keeps its place.
#[test]
fn kinds_keep_their_order_and_a_tool_call_ends_a_run() {
    let pieces = vec![
        text("Hel"),
        text("lo"),
        Piece::Reasoning("hm".into()),
        Piece::Reasoning("m".into()),
        text(" wor"),
        text("ld"),
        Piece::Refusal("no".into()),
        Piece::Refusal("pe".into()),
        text("a"),
        Piece::Call(0),
        text("b"),
        text("c"),
    ];
    let body = body_of(&pieces);
    let reads = feed_in_reads(body.as_bytes(), &[]);
    assert_eq!(
        reads[0],
        vec![
            text("Hello"),
            Piece::Reasoning("hmm".into()),
            text(" world"),
            Piece::Refusal("nope".into()),
            text("a"),
            Piece::Call(0),
            text("bc"),
        ]
    );
}

/// Two reads give two events: the first read's text is out before the second read comes,
/// and is not joined with it later.
#[test]
fn two_reads_give_two_events_and_none_waits() {
    let pieces = vec![text("one "), text("two "), text("three "), text("four")];
    let body = body_of(&pieces);
    // Cut right after the SSE event that carries "two ".
    let at = body.find("two ").unwrap();
    let cut = at + body[at..].find("\n\n").unwrap() + 2;
    let reads = feed_in_reads(body.as_bytes(), &[cut]);
    assert_eq!(reads[0], vec![text("one two ")]);
    assert_eq!(reads[1], vec![text("three four")]);
}

fn token() -> impl Strategy<Value = String> {
    // Multi-byte characters too, so that reads also cut inside a UTF-8 sequence.
    proptest::string::string_regex("[a-z é\u{1F980}\n\"\\\\]{1,6}").unwrap()
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        6 => token().prop_map(Piece::Text),
        3 => token().prop_map(Piece::Reasoning),
        1 => token().prop_map(Piece::Refusal),
    ]
}

/// A stream of deltas with up to two tool calls among them, and where to cut its body.
fn stream_and_cuts() -> impl Strategy<Value = (Vec<Piece>, Vec<usize>)> {
    (
        proptest::collection::vec(piece(), 0..60),
        proptest::collection::vec(any::<proptest::sample::Index>(), 0..3),
    )
        .prop_flat_map(|(mut pieces, calls)| {
            for (n, at) in calls.iter().enumerate() {
                let at = at.index(pieces.len() + 1);
                pieces.insert(at, Piece::Call(n));
            }
            // The calls start in index order, whatever their places.
            let mut n = 0;
            for piece in &mut pieces {
                if let Piece::Call(index) = piece {
                    *index = n;
                    n += 1;
                }
            }
            let len = body_of(&pieces).len();
            let cuts = proptest::collection::vec(0..=len, 0..12).prop_map(|mut cuts| {
                cuts.sort_unstable();
                cuts
            });
            (Just(pieces), cuts)
        })
}

proptest! {
    #![proptest_config(crate::proptest_seeds::with_cases(256))]

    /// However the body is cut into reads: each kind's text, and the order of the runs and
    /// tool calls, are the stream's; and no read gives two deltas of one kind in a row.
    #[test]
    fn any_cut_into_reads_keeps_the_text_and_merges_each_read(
        (pieces, cuts) in stream_and_cuts()
    ) {
        let body = body_of(&pieces);
        let reads = feed_in_reads(body.as_bytes(), &cuts);
        for (n, read) in reads.iter().enumerate() {
            for pair in read.windows(2) {
                prop_assert!(
                    !pair[0].same_kind(&pair[1]),
                    "read {n} gave two deltas of one kind in a row: {read:?}"
                );
            }
        }
        prop_assert_eq!(runs(reads.into_iter().flatten()), runs(pieces));
    }
}

/// A read whose tokens are followed by a broken chunk (and more tokens after it): the text
/// before the break comes out as one delta, before the turn's failure; nothing after the
/// break is shown.
#[test]
fn a_read_that_breaks_after_its_tokens_shows_them_first_then_fails() {
    for broken in [
        "data: not json\n\n",
        "data: {\"error\":{\"message\":\"overloaded\",\"code\":503}}\n\n",
    ] {
        let mut h = H::new(config(ApprovalPolicy::Auto));
        h.submit("go");
        h.head(200, &[("content-type", "text/event-stream")]);
        let mut body: String = ["Hel", "lo", " there"]
            .iter()
            .map(|t| format!("data: {}\n\n", delta(json!({"content": t}), None)))
            .collect();
        body.push_str(broken);
        body.push_str(&format!(
            "data: {}\n\n",
            delta(json!({"content": "LOST"}), None)
        ));
        let before = h.events.len();
        h.data(&body);
        h.end();
        let read = &h.events[before..];
        let deltas: Vec<&Event> = read.iter().filter(|e| e.is_delta()).collect();
        assert_eq!(
            deltas,
            [&Event::TextDelta {
                text: "Hello there".into()
            }],
            "{broken}"
        );
        let delta_at = read.iter().position(|e| e.is_delta()).unwrap();
        let final_at = read.iter().position(|e| e.is_final()).unwrap();
        assert!(delta_at < final_at, "{broken}: {read:?}");
        assert!(
            matches!(read[final_at], Event::TurnFailed { .. }),
            "{broken}: a broken stream after output is not retried: {read:?}"
        );
        assert_eq!(h.finals().len(), 1);
    }
}
