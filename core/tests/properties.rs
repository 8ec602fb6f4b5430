//! Properties of `ChatStream` (DESIGN.md, "Testing"):
//! - any split of a byte stream gives the same events and the same final result;
//! - splitting a message into random deltas and accumulating them gives the message back.

#[allow(dead_code)] // not every helper is used here
#[path = "../src/proptest_seeds.rs"]
mod proptest_seeds;
use hrns_core::stream::{ChatStream, StreamError, StreamEvent, StreamFailure};
use hrns_core::wire::{
    ChatChunk, ChunkChoice, Delta, FunctionCall, FunctionDelta, Message, ToolCall, ToolCallDelta,
    Usage,
};
use hrns_core::{Completion, FinishReason};
use proptest::prelude::*;
use std::collections::VecDeque;

// ---- running a stream ----

/// Everything one run observes.
#[derive(Debug, PartialEq)]
struct Outcome {
    events: Vec<StreamEvent>,
    error: Option<StreamError>,
    result: Result<Completion, StreamFailure>,
}

fn drain(stream: &mut ChatStream, events: &mut Vec<StreamEvent>) -> Option<StreamError> {
    loop {
        match stream.poll_event() {
            Ok(Some(event)) => events.push(event),
            Ok(None) => return None,
            Err(error) => {
                assert_eq!(stream.poll_event(), Err(error.clone()), "error not sticky");
                return Some(error);
            }
        }
    }
}

/// Feeds `pieces`, polling after each, then the end of input.
fn run<'a>(limit: usize, pieces: impl IntoIterator<Item = &'a [u8]>) -> Outcome {
    let mut stream = ChatStream::with_max_event_size(limit);
    let mut events = Vec::new();
    let mut error = None;
    for piece in pieces {
        stream.feed(piece);
        if error.is_none() {
            error = drain(&mut stream, &mut events);
        }
    }
    stream.feed_eof();
    if error.is_none() {
        error = drain(&mut stream, &mut events);
    }
    let result = stream.finish();
    assert_eq!(result.as_ref().err().map(|f| &f.error), error.as_ref());
    Outcome {
        events,
        error,
        result,
    }
}

/// Cuts `body` into pieces of the given sizes, cycled; a size of 0 is an empty feed.
fn pieces<'a>(body: &'a [u8], sizes: &[usize]) -> Vec<&'a [u8]> {
    let all_empty = sizes.iter().all(|&s| s == 0);
    let mut out = Vec::new();
    let mut rest = body;
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let size = if all_empty { 1 } else { size };
        let (piece, tail) = rest.split_at(size.min(rest.len()));
        out.push(piece);
        rest = tail;
    }
    out
}

/// A small deterministic generator (SplitMix64) driven by a proptest seed.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

// ---- generators ----

/// Text with the characters that stress escaping and UTF-8 splitting.
fn text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::char::range('a', 'z'),
            1 => Just(' '),
            1 => Just('"'),
            1 => Just('\\'),
            1 => Just('\n'),
            1 => Just('\r'),
            1 => Just('\u{0}'),
            1 => Just('\u{2028}'),
            1 => Just('é'),
            1 => Just('😀'),
            1 => any::<char>(),
        ],
        0..max,
    )
    .prop_map(String::from_iter)
}

/// Argument text that looks like JSON (and sometimes is not quite).
fn json_ish() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("[".to_owned()),
            Just("]".to_owned()),
            Just(":".to_owned()),
            Just(",".to_owned()),
            Just("\"".to_owned()),
            Just("\\\"".to_owned()),
            Just("\\u00e9".to_owned()),
            Just(" ".to_owned()),
            "[a-z_]{1,6}",
            "-?[0-9]{1,4}",
            text(6),
        ],
        0..16,
    )
    .prop_map(|parts| parts.concat())
}

fn finish_reason() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        4 => Just(None),
        1 => Just(Some(String::new())),
        1 => Just(Some("stop".to_owned())),
        1 => Just(Some("tool_calls".to_owned())),
        1 => Just(Some("length".to_owned())),
    ]
}

fn tool_call_delta() -> impl Strategy<Value = ToolCallDelta> {
    (
        prop::option::of(0u32..3),
        prop::option::of(prop_oneof![Just(String::new()), "call_[a-c]"]),
        prop::option::of("[a-c]{0,2}"),
        prop::option::of(json_ish()),
        any::<bool>(),
    )
        .prop_map(|(index, id, name, arguments, typed)| ToolCallDelta {
            index,
            id,
            kind: typed.then(|| "function".to_owned()),
            function: Some(FunctionDelta {
                name,
                arguments,
                ..FunctionDelta::default()
            }),
            ..ToolCallDelta::default()
        })
}

fn delta() -> impl Strategy<Value = Delta> {
    (
        prop::option::of(prop_oneof![
            Just("assistant".to_owned()),
            Just(String::new())
        ]),
        prop::option::of(text(12)),
        prop::option::of(text(8)),
        prop::option::of(text(8)),
        prop::collection::vec(tool_call_delta(), 0..3),
    )
        .prop_map(
            |(role, content, reasoning_content, reasoning, tool_calls)| Delta {
                role,
                content,
                reasoning_content,
                reasoning,
                tool_calls,
                ..Delta::default()
            },
        )
}

fn chunk() -> impl Strategy<Value = ChatChunk> {
    (
        prop::collection::vec((prop::option::of(0u32..2), delta(), finish_reason()), 0..3),
        prop::option::of(0u64..100),
    )
        .prop_map(|(choices, usage)| ChatChunk {
            id: Some("chatcmpl-p".to_owned()),
            object: Some("chat.completion.chunk".to_owned()),
            choices: choices
                .into_iter()
                .map(|(index, delta, finish_reason)| ChunkChoice {
                    index,
                    delta,
                    finish_reason,
                    ..ChunkChoice::default()
                })
                .collect(),
            usage: usage.map(|n| Usage {
                prompt_tokens: Some(n),
                completion_tokens: Some(1),
                total_tokens: Some(n + 1),
                ..Usage::default()
            }),
            ..ChatChunk::default()
        })
}

/// One SSE event (or comment) of a generated body, as its lines.
#[derive(Debug, Clone)]
enum Item {
    Chunk(ChatChunk),
    /// The chunk's JSON cut in two `data:` lines at this byte (may break the JSON).
    SplitChunk(ChatChunk, usize),
    Comment,
    KeepAlive,
    Done,
    ErrorEvent,
    Garbage(String),
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        12 => chunk().prop_map(Item::Chunk),
        2 => (chunk(), any::<usize>()).prop_map(|(c, at)| Item::SplitChunk(c, at)),
        2 => Just(Item::Comment),
        2 => Just(Item::KeepAlive),
        1 => Just(Item::Done),
        1 => Just(Item::ErrorEvent),
        1 => text(10).prop_map(Item::Garbage),
    ]
}

fn render(items: &[Item], line_end: &str, cut: Option<usize>) -> Vec<u8> {
    let mut body = String::new();
    for item in items {
        match item {
            Item::Chunk(c) => {
                body.push_str("data: ");
                body.push_str(&serde_json::to_string(c).unwrap());
                body.push_str(line_end);
            }
            Item::SplitChunk(c, at) => {
                let json = serde_json::to_string(c).unwrap();
                let mut at = at % (json.len() + 1);
                while !json.is_char_boundary(at) {
                    at -= 1;
                }
                body.push_str("data: ");
                body.push_str(&json[..at]);
                body.push_str(line_end);
                body.push_str("data:");
                body.push_str(&json[at..]);
                body.push_str(line_end);
            }
            Item::Comment => {
                body.push_str(": keep-alive");
                body.push_str(line_end);
            }
            Item::KeepAlive => {
                body.push_str("data: ");
                body.push_str(line_end);
            }
            Item::Done => {
                body.push_str("data: [DONE]");
                body.push_str(line_end);
            }
            Item::ErrorEvent => {
                body.push_str("event: error");
                body.push_str(line_end);
                body.push_str("data: {\"error\":{\"message\":\"boom\"}}");
                body.push_str(line_end);
            }
            Item::Garbage(g) => {
                // Line ends inside the garbage make it several lines, as a server might.
                body.push_str("data: ");
                body.push_str(g);
                body.push_str(line_end);
            }
        }
        body.push_str(line_end);
    }
    let mut bytes = body.into_bytes();
    if let Some(cut) = cut {
        bytes.truncate(cut % (bytes.len() + 1));
    }
    bytes
}

proptest! {
    #![proptest_config(proptest_seeds::config())]
    /// Any split of a byte stream gives the same events and the same final result.
    #[test]
    fn byte_split_invariance(
        items in prop::collection::vec(item(), 0..12),
        line_end in prop_oneof![Just("\n"), Just("\r\n"), Just("\r")],
        cut in prop::option::weighted(0.2, any::<usize>()),
        sizes in prop::collection::vec(0usize..40, 1..20),
        limit in prop_oneof![3 => Just(usize::MAX), 1 => 64usize..1024],
    ) {
        let body = render(&items, line_end, cut);
        let whole = run(limit, [body.as_slice()]);
        prop_assert_eq!(&run(limit, pieces(&body, &sizes)), &whole);
        prop_assert_eq!(&run(limit, body.chunks(1)), &whole);
    }
}

// ---- split a message into deltas and put it back together ----

#[derive(Debug, Clone)]
struct Call {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Debug, Clone)]
struct Answer {
    content: String,
    reasoning: Option<String>,
    calls: Vec<Call>,
}

fn answer() -> impl Strategy<Value = Answer> {
    (
        text(60),
        prop::option::of(text(40)),
        prop::collection::vec(("[a-z_]{1,12}", json_ish()), 0..5),
    )
        .prop_map(|(content, reasoning, calls)| Answer {
            content,
            reasoning,
            calls: calls
                .into_iter()
                .enumerate()
                .map(|(k, (name, arguments))| Call {
                    id: format!("call_{k}_{}", name.len()),
                    name,
                    arguments,
                })
                .collect(),
        })
}

/// Splits `s` into 1 to 6 pieces at random character boundaries (empty pieces allowed).
fn split_text(s: &str, rng: &mut SplitMix) -> Vec<String> {
    let bounds: Vec<usize> = (0..=s.len()).filter(|&i| s.is_char_boundary(i)).collect();
    let mut cuts: Vec<usize> = (0..rng.below(6))
        .map(|_| bounds[rng.below(bounds.len())])
        .collect();
    cuts.sort_unstable();
    let mut out = Vec::new();
    let mut start = 0;
    for cut in cuts {
        out.push(s[start..cut].to_owned());
        start = cut;
    }
    out.push(s[start..].to_owned());
    out
}

/// One fragment of the answer, for one chunk's delta.
enum Fragment {
    Content(String),
    Reasoning(String),
    /// Tool call `k`; the first fragment carries id, type and name.
    Call {
        k: usize,
        first: bool,
        text: String,
    },
}

impl Fragment {
    /// Fragments of the same kind (or of the same call) never share a chunk.
    fn slot(&self) -> usize {
        match self {
            Fragment::Content(_) => 0,
            Fragment::Reasoning(_) => 1,
            Fragment::Call { k, .. } => 2 + k,
        }
    }
}

/// Builds the chunks of `answer`: every string split into fragments, the streams of fragments
/// interleaved at random, then packed into chunks.
fn chunks_of(answer: &Answer, seed: u64) -> Vec<ChatChunk> {
    let mut rng = SplitMix(seed);
    let mut streams: Vec<VecDeque<Fragment>> = Vec::new();
    if !answer.content.is_empty() {
        streams.push(
            split_text(&answer.content, &mut rng)
                .into_iter()
                .map(Fragment::Content)
                .collect(),
        );
    }
    if let Some(r) = &answer.reasoning {
        streams.push(
            split_text(r, &mut rng)
                .into_iter()
                .map(Fragment::Reasoning)
                .collect(),
        );
    }
    for (k, call) in answer.calls.iter().enumerate() {
        streams.push(
            split_text(&call.arguments, &mut rng)
                .into_iter()
                .enumerate()
                .map(|(n, text)| Fragment::Call {
                    k,
                    first: n == 0,
                    text,
                })
                .collect(),
        );
    }
    let new_chunk = |role: bool| ChatChunk {
        id: Some("chatcmpl-rt".to_owned()),
        object: Some("chat.completion.chunk".to_owned()),
        choices: vec![ChunkChoice {
            index: Some(0),
            delta: Delta {
                role: role.then(|| "assistant".to_owned()),
                ..Delta::default()
            },
            ..ChunkChoice::default()
        }],
        ..ChatChunk::default()
    };
    let mut chunks = vec![new_chunk(true)];
    let mut used = Vec::new();
    loop {
        let live: Vec<usize> = (0..streams.len())
            .filter(|&i| !streams[i].is_empty())
            .collect();
        if live.is_empty() {
            break;
        }
        let fragment = streams[live[rng.below(live.len())]].pop_front().unwrap();
        if used.contains(&fragment.slot()) || rng.chance(30) {
            chunks.push(new_chunk(false));
            used.clear();
        }
        used.push(fragment.slot());
        let delta = &mut chunks.last_mut().unwrap().choices[0].delta;
        match fragment {
            Fragment::Content(t) => delta.content = Some(t),
            Fragment::Reasoning(t) => match rng.below(3) {
                0 => delta.reasoning_content = Some(t),
                1 => delta.reasoning = Some(t),
                _ => {
                    // Both fields with the same text: counted once.
                    delta.reasoning = Some(t.clone());
                    delta.reasoning_content = Some(t);
                }
            },
            Fragment::Call { k, first, text } => {
                let call = &answer.calls[k];
                delta.tool_calls.push(ToolCallDelta {
                    index: Some(k as u32),
                    id: first.then(|| call.id.clone()),
                    kind: (first && rng.chance(70)).then(|| "function".to_owned()),
                    function: Some(FunctionDelta {
                        name: first.then(|| call.name.clone()),
                        arguments: Some(text),
                        ..FunctionDelta::default()
                    }),
                    ..ToolCallDelta::default()
                });
            }
        }
    }
    let mut last = new_chunk(false);
    last.choices[0].finish_reason = Some(
        if answer.calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        }
        .to_owned(),
    );
    chunks.push(last);
    chunks
}

fn expected_message(answer: &Answer) -> Message {
    let reasoning = answer.reasoning.clone().filter(|r| !r.is_empty());
    let mut msg = Message::assistant(answer.content.clone());
    if !answer.calls.is_empty() {
        if answer.content.is_empty() {
            msg.content = None;
        }
        msg.reasoning_content = reasoning;
    }
    msg.tool_calls = answer
        .calls
        .iter()
        .map(|c| ToolCall {
            id: c.id.clone(),
            kind: "function".to_owned(),
            function: FunctionCall {
                name: c.name.clone(),
                arguments: c.arguments.clone(),
                extra: Default::default(),
            },
            extra: Default::default(),
        })
        .collect();
    msg
}

proptest! {
    #![proptest_config(proptest_seeds::config())]
    /// Splitting an answer into random deltas and accumulating them gives the answer back.
    #[test]
    fn deltas_accumulate_to_the_message(
        answer in answer(),
        seed in any::<u64>(),
        sizes in prop::collection::vec(1usize..64, 1..8),
    ) {
        let mut body = String::new();
        for c in chunks_of(&answer, seed) {
            body.push_str("data: ");
            body.push_str(&serde_json::to_string(&c).unwrap());
            body.push_str("\n\n");
        }
        body.push_str("data: [DONE]\n\n");
        let out = run(usize::MAX, pieces(body.as_bytes(), &sizes));
        let completion = out.result.unwrap();
        prop_assert!(completion.done);
        prop_assert_eq!(completion.choices.len(), 1);
        let choice = &completion.choices[0];
        prop_assert_eq!(&choice.content, &answer.content);
        prop_assert_eq!(
            choice.reasoning.as_deref(),
            answer.reasoning.as_deref().filter(|r| !r.is_empty())
        );
        let got: Vec<(Option<&str>, &str, &str)> = choice
            .tool_calls
            .iter()
            .map(|c| (c.id.as_deref(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        let want: Vec<(Option<&str>, &str, &str)> = answer
            .calls
            .iter()
            .map(|c| (Some(c.id.as_str()), c.name.as_str(), c.arguments.as_str()))
            .collect();
        prop_assert_eq!(got, want);
        let want_finish = if answer.calls.is_empty() { FinishReason::Stop } else { FinishReason::ToolCalls };
        prop_assert_eq!(choice.finish_reason.as_ref(), Some(&want_finish));
        let msg = choice.to_message();
        prop_assert_eq!(&msg, &expected_message(&answer));
        // The history message survives its own serialization.
        let json = serde_json::to_string(&msg).unwrap();
        prop_assert_eq!(serde_json::from_str::<Message>(&json).unwrap(), msg);
    }
}
