//! Provider-shaped test vectors for `ChatStream`, each run whole, one byte at a time and split
//! at seeded random points; plus the stream's error and end-of-input cases.
//!
//! The vectors are written for this project, in the shapes each provider sends (field order,
//! nulls, keep-alives, quirks); ids and numbers are made up.

use super::*;
use crate::accumulate::{Choice, FinishReason};
use serde_json::{Value, json};

/// A piece as large as a socket read of a busy stream (many events, cut anywhere).
pub(super) const LARGE: usize = 8 * 1024;

// ---- the runner ----

/// Everything one run observes; must not depend on how the body was split.
#[derive(Debug, PartialEq)]
pub(super) struct Outcome {
    events: Vec<StreamEvent>,
    error: Option<StreamError>,
    result: Result<Completion, StreamFailure>,
}

/// Polls until `Ok(None)` or an error, which must be sticky.
fn drain(stream: &mut ChatStream, events: &mut Vec<StreamEvent>) -> Option<StreamError> {
    loop {
        match stream.poll_event() {
            Ok(Some(event)) => events.push(event),
            Ok(None) => return None,
            Err(error) => {
                for _ in 0..2 {
                    assert_eq!(stream.poll_event(), Err(error.clone()), "error not sticky");
                }
                return Some(error);
            }
        }
    }
}

/// Feeds `pieces` in order, polling after each, then the end of input.
fn run<'a>(limit: usize, pieces: impl IntoIterator<Item = &'a [u8]>) -> Outcome {
    run_with(ChatStream::with_max_event_size(limit), pieces)
}

/// [`run`] on a stream made with other limits.
pub(super) fn run_with<'a>(
    mut stream: ChatStream,
    pieces: impl IntoIterator<Item = &'a [u8]>,
) -> Outcome {
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
        if error.is_none() {
            assert_eq!(stream.poll_event(), Ok(None), "end not stable");
        }
    }
    let result = stream.finish();
    assert_eq!(
        result.as_ref().err().map(|f| &f.error),
        error.as_ref(),
        "finish() disagrees with poll_event()"
    );
    Outcome {
        events,
        error,
        result,
    }
}

/// A small deterministic generator (SplitMix64), so the tests need no extra crate.
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
}

/// Cuts `body` into pieces of 0 to 24 bytes (empty feeds included), chosen by `seed`.
fn random_pieces(body: &[u8], seed: u64) -> Vec<&[u8]> {
    let mut rng = SplitMix(seed);
    let mut pieces = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let n = rng.below(25).min(rest.len());
        let (piece, tail) = rest.split_at(n);
        pieces.push(piece);
        rest = tail;
    }
    pieces
}

const SEEDS: [u64; 4] = [1, 2, 0x5EED, 0xDEAD_BEEF];

/// Runs `body` whole, one byte at a time and split at random points; all runs must observe
/// the same events and the same result, which is returned.
fn three_ways(name: &str, body: &[u8], limit: usize) -> Outcome {
    let whole = run(limit, [body]);
    let bytewise = run(limit, body.chunks(1));
    assert_eq!(
        bytewise, whole,
        "{name}: one byte at a time differs from whole"
    );
    for seed in SEEDS {
        let split = run(limit, random_pieces(body, seed));
        assert_eq!(
            split, whole,
            "{name}: split with seed {seed} differs from whole"
        );
    }
    whole
}

// ---- expectations ----

#[derive(Debug)]
struct WantCall {
    id: Option<&'static str>,
    name: &'static str,
    arguments: &'static str,
    /// Unknown fields of the tool call, as a JSON object.
    extra: Value,
}

fn call(id: Option<&'static str>, name: &'static str, arguments: &'static str) -> WantCall {
    WantCall {
        id,
        name,
        arguments,
        extra: json!({}),
    }
}

#[derive(Debug)]
struct WantChoice {
    index: u32,
    content: &'static str,
    reasoning: Option<&'static str>,
    finish: Option<&'static str>,
    calls: Vec<WantCall>,
}

fn choice(content: &'static str, finish: Option<&'static str>) -> WantChoice {
    WantChoice {
        index: 0,
        content,
        reasoning: None,
        finish,
        calls: Vec::new(),
    }
}

impl WantChoice {
    fn reasoning(mut self, r: &'static str) -> Self {
        self.reasoning = Some(r);
        self
    }

    fn calls(mut self, calls: Vec<WantCall>) -> Self {
        self.calls = calls;
        self
    }

    fn index(mut self, index: u32) -> Self {
        self.index = index;
        self
    }
}

#[derive(Debug)]
enum WantError {
    Truncated(Truncation),
    /// The provider's message.
    Provider(&'static str),
    /// The exact payload.
    Malformed(&'static str),
    TooLarge(usize),
}

/// A test vector: a body and what the stream must make of it. For an error, `choices` and
/// `usage` describe the partial completion kept with it.
struct Vector {
    name: &'static str,
    body: String,
    limit: usize,
    choices: Vec<WantChoice>,
    /// `(prompt, completion, total)` tokens.
    usage: Option<(u64, u64, u64)>,
    done: bool,
    error: Option<WantError>,
    /// Further checks on the completion (or the partial one).
    check: Option<fn(&Completion)>,
}

fn vector(name: &'static str, body: String, choices: Vec<WantChoice>) -> Vector {
    Vector {
        name,
        body,
        limit: sse::DEFAULT_MAX_EVENT_SIZE,
        choices,
        usage: None,
        done: true,
        error: None,
        check: None,
    }
}

impl Vector {
    fn usage(mut self, prompt: u64, completion: u64, total: u64) -> Self {
        self.usage = Some((prompt, completion, total));
        self
    }

    fn no_done(mut self) -> Self {
        self.done = false;
        self
    }

    fn error(mut self, e: WantError) -> Self {
        self.error = Some(e);
        self.done = false;
        self
    }

    fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    fn check(mut self, f: fn(&Completion)) -> Self {
        self.check = Some(f);
        self
    }
}

/// An SSE body: each item is one event's lines (or a comment), followed by a blank line.
fn sse(items: &[&str]) -> String {
    items.iter().map(|item| format!("{item}\n\n")).collect()
}

/// `data: {<head>,<rest>}`: a chunk whose common fields are written once per vector.
fn chunk(head: &str, rest: &str) -> String {
    format!("data: {{{head},{rest}}}")
}

fn check_choice(name: &str, got: &Choice, want: &WantChoice) {
    assert_eq!(got.index, want.index, "{name}: choice index");
    assert_eq!(got.content, want.content, "{name}: content");
    assert_eq!(
        got.reasoning.as_deref(),
        want.reasoning,
        "{name}: reasoning"
    );
    assert_eq!(
        got.finish_reason.as_ref().map(FinishReason::as_str),
        want.finish,
        "{name}: finish reason"
    );
    assert_eq!(
        got.tool_calls.len(),
        want.calls.len(),
        "{name}: tool calls {:#?}",
        got.tool_calls
    );
    for (n, (g, w)) in got.tool_calls.iter().zip(&want.calls).enumerate() {
        assert_eq!(g.id.as_deref(), w.id, "{name}: call {n} id");
        assert_eq!(g.name, w.name, "{name}: call {n} name");
        assert_eq!(g.arguments, w.arguments, "{name}: call {n} arguments");
        assert_eq!(
            Value::Object(g.extra.clone()),
            w.extra,
            "{name}: call {n} extra"
        );
    }
}

/// The events must tell the same story as the completion: the text deltas concatenate to the
/// text, the argument fragments to the arguments, the last finish event is the finish reason.
fn check_events_match(name: &str, events: &[StreamEvent], completion: &Completion) {
    for c in &completion.choices {
        let mut content = String::new();
        let mut reasoning = String::new();
        let mut refusal = String::new();
        let mut finished = None;
        // Per call, in order of arrival: (id, arguments).
        let mut calls: Vec<(Option<String>, String)> = Vec::new();
        for e in events {
            match e {
                StreamEvent::ContentDelta { choice, text } if *choice == c.index => {
                    assert!(!text.is_empty(), "{name}: empty content delta");
                    content.push_str(text);
                }
                StreamEvent::ReasoningDelta { choice, text } if *choice == c.index => {
                    reasoning.push_str(text)
                }
                StreamEvent::RefusalDelta { choice, text } if *choice == c.index => {
                    refusal.push_str(text)
                }
                StreamEvent::ToolCallBegin {
                    choice, call, id, ..
                } if *choice == c.index => {
                    assert_eq!(*call, calls.len(), "{name}: calls are numbered in order");
                    calls.push((id.clone(), String::new()));
                }
                StreamEvent::ToolCallArgumentsDelta {
                    choice,
                    call,
                    fragment,
                } if *choice == c.index => calls[*call].1.push_str(fragment),
                StreamEvent::ChoiceFinished { choice, reason } if *choice == c.index => {
                    finished = Some(reason.clone())
                }
                _ => {}
            }
        }
        assert_eq!(content, c.content, "{name}: content events");
        assert_eq!(
            reasoning,
            c.reasoning.clone().unwrap_or_default(),
            "{name}: reasoning events"
        );
        assert_eq!(
            refusal,
            c.refusal.clone().unwrap_or_default(),
            "{name}: refusal events"
        );
        assert_eq!(finished, c.finish_reason, "{name}: finish events");
        let mut from_events: Vec<_> = calls.into_iter().map(|(_, args)| args).collect();
        let mut from_result: Vec<_> = c.tool_calls.iter().map(|t| t.arguments.clone()).collect();
        from_events.sort();
        from_result.sort();
        assert_eq!(from_events, from_result, "{name}: argument events");
    }
    let last_usage = events.iter().rev().find_map(|e| match e {
        StreamEvent::Usage(u) => Some(u),
        _ => None,
    });
    assert_eq!(
        last_usage,
        completion.usage.as_ref(),
        "{name}: usage events"
    );
    let done_events = events.iter().filter(|e| **e == StreamEvent::Done).count();
    assert_eq!(
        done_events,
        usize::from(completion.done),
        "{name}: Done event"
    );
    if completion.done {
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Done),
            "{name}: Done is last"
        );
    }
}

fn check_vector(v: &Vector) {
    let out = three_ways(v.name, v.body.as_bytes(), v.limit);
    let completion = match (&out.result, &v.error) {
        (Ok(c), None) => c,
        (Err(f), Some(want)) => {
            match (&f.error, want) {
                (StreamError::Truncated { truncation }, WantError::Truncated(w)) => {
                    assert_eq!(truncation, w)
                }
                (StreamError::Provider { error }, WantError::Provider(m)) => {
                    assert_eq!(error.message, *m, "{}", v.name)
                }
                (StreamError::Malformed { payload, error }, WantError::Malformed(p)) => {
                    assert_eq!(payload, p, "{}", v.name);
                    assert!(!error.is_empty());
                }
                (StreamError::EventTooLarge { limit }, WantError::TooLarge(l)) => {
                    assert_eq!(limit, l)
                }
                (got, want) => panic!("{}: got {got:?}, want {want:?}", v.name),
            }
            &f.partial
        }
        (got, want) => panic!("{}: got {got:?}, want error {want:?}", v.name),
    };
    assert_eq!(completion.done, v.done, "{}: done", v.name);
    assert_eq!(
        completion.choices.len(),
        v.choices.len(),
        "{}: choices {:#?}",
        v.name,
        completion.choices
    );
    for (got, want) in completion.choices.iter().zip(&v.choices) {
        check_choice(v.name, got, want);
    }
    let usage = completion.usage.as_ref().map(|u| {
        (
            u.prompt_tokens.unwrap_or(0),
            u.completion_tokens.unwrap_or(0),
            u.total_tokens.unwrap_or(0),
        )
    });
    assert_eq!(usage, v.usage, "{}: usage", v.name);
    check_events_match(v.name, &out.events, completion);
    if let Some(check) = v.check {
        check(completion);
    }
}

// ---- provider vectors ----

const OPENAI: &str = r#""id":"chatcmpl-Bv41x","object":"chat.completion.chunk","created":1736000000,"model":"gpt-4.1-mini-2025-04-14","service_tier":"default","system_fingerprint":"fp_6f2eabb9a5""#;

fn openai_text() -> Vector {
    let body = sse(&[
        &chunk(
            OPENAI,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null"#,
        ),
        &chunk(
            OPENAI,
            r#""choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null"#,
        ),
        &chunk(
            OPENAI,
            r#""choices":[{"index":0,"delta":{"content":" there \u2014 \"quoted\"\n\ttab \ud83d\ude00"},"logprobs":null,"finish_reason":null}],"usage":null"#,
        ),
        &chunk(
            OPENAI,
            r#""choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null"#,
        ),
        &chunk(
            OPENAI,
            r#""choices":[],"usage":{"prompt_tokens":21,"completion_tokens":9,"total_tokens":30,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "openai text with usage chunk",
        body,
        vec![choice("Hello there — \"quoted\"\n\ttab 😀", Some("stop")).calls(vec![])],
    )
    .usage(21, 9, 30)
    .check(|c| {
        assert_eq!(c.id.as_deref(), Some("chatcmpl-Bv41x"));
        assert_eq!(c.model.as_deref(), Some("gpt-4.1-mini-2025-04-14"));
        assert_eq!(c.choices[0].role.as_deref(), Some("assistant"));
        assert_eq!(c.extra["service_tier"], "default");
        let u = c.usage.as_ref().unwrap();
        assert_eq!(u.extra["completion_tokens_details"]["reasoning_tokens"], 0);
    })
}

fn openai_tool_call() -> Vector {
    let body = sse(&[
        &chunk(
            OPENAI,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_Qx81mZ","type":"function","function":{"name":"read_file","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}],"usage":null"#,
        ),
        &chunk(
            OPENAI,
            r#""choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]},"logprobs":null,"finish_reason":null}],"usage":null"#,
        ),
        &chunk(
            OPENAI,
            r#""choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"path"}}]},"logprobs":null,"finish_reason":null}],"usage":null"#,
        ),
        &chunk(
            OPENAI,
            r#""choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\":\"src/"}}]},"logprobs":null,"finish_reason":null}],"usage":null"#,
        ),
        &chunk(
            OPENAI,
            r#""choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"main.rs\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null"#,
        ),
        &chunk(
            OPENAI,
            r#""choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null"#,
        ),
        &chunk(
            OPENAI,
            r#""choices":[],"usage":{"prompt_tokens":80,"completion_tokens":17,"total_tokens":97}"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "openai tool call",
        body,
        vec![choice("", Some("tool_calls")).calls(vec![call(
            Some("call_Qx81mZ"),
            "read_file",
            r#"{"path":"src/main.rs"}"#,
        )])],
    )
    .usage(80, 17, 97)
    .check(|c| {
        let msg = c.choices[0].to_message();
        assert_eq!(msg.content, None);
        assert_eq!(msg.tool_calls[0].kind, "function");
    })
}

fn azure() -> Vector {
    const AZ: &str = r#""created":1736000100,"id":"chatcmpl-Az9k","model":"gpt-4o-2024-11-20","object":"chat.completion.chunk","system_fingerprint":"fp_ee1d74bde0""#;
    let body = sse(&[
        r#"data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"jailbreak":{"filtered":false,"detected":false},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}}]}"#,
        &chunk(
            AZ,
            r#""choices":[{"content_filter_results":{},"delta":{"content":"","refusal":null,"role":"assistant"},"finish_reason":null,"index":0,"logprobs":null}]"#,
        ),
        &chunk(
            AZ,
            r#""choices":[{"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}},"delta":{"content":"Bonjour"},"finish_reason":null,"index":0,"logprobs":null}]"#,
        ),
        &chunk(
            AZ,
            r#""choices":[{"content_filter_results":{"protected_material_text":{"filtered":false,"detected":false}},"delta":{"content":" !"},"finish_reason":null,"index":0,"logprobs":null}]"#,
        ),
        &chunk(
            AZ,
            r#""choices":[{"content_filter_results":{},"delta":{},"finish_reason":"stop","index":0,"logprobs":null}]"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "azure prompt filter chunk",
        body,
        vec![choice("Bonjour !", Some("stop"))],
    )
    .check(|c| {
        assert_eq!(c.id.as_deref(), Some("chatcmpl-Az9k"), "empty id skipped");
        assert_eq!(c.model.as_deref(), Some("gpt-4o-2024-11-20"));
        assert_eq!(
            c.extra["prompt_filter_results"][0]["content_filter_results"]["hate"]["severity"],
            "safe"
        );
        let cfr = &c.choices[0].meta["content_filter_results"];
        assert_eq!(cfr["violence"]["filtered"], false);
        assert_eq!(cfr["protected_material_text"]["detected"], false);
        assert!(
            c.choices[0].extra.is_empty(),
            "filter results are not message fields"
        );
    })
}

const DEEPSEEK: &str = r#""id":"5f0c2a1e-7d3b-4c1a-9e11-3b4f5a6d7e8f","object":"chat.completion.chunk","created":1736000200,"model":"deepseek-reasoner","system_fingerprint":"fp_5417b77867_prod0820""#;

fn deepseek_reasoning() -> Vector {
    let body = sse(&[
        &chunk(
            DEEPSEEK,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            DEEPSEEK,
            r#""choices":[{"index":0,"delta":{"content":null,"reasoning_content":"The user"},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            DEEPSEEK,
            r#""choices":[{"index":0,"delta":{"content":null,"reasoning_content":" wants 2+2."},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            DEEPSEEK,
            r#""choices":[{"index":0,"delta":{"content":"2 + 2","reasoning_content":null},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            DEEPSEEK,
            r#""choices":[{"index":0,"delta":{"content":" = 4.","reasoning_content":null},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            DEEPSEEK,
            r#""choices":[{"index":0,"delta":{"content":"","reasoning_content":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":14,"completion_tokens":25,"total_tokens":39,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":18},"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":14}"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "deepseek reasoning then content",
        body,
        vec![choice("2 + 2 = 4.", Some("stop")).reasoning("The user wants 2+2.")],
    )
    .usage(14, 25, 39)
    .check(|c| {
        let msg = c.choices[0].to_message();
        assert_eq!(
            msg.reasoning_content, None,
            "no tool calls, no reasoning sent back"
        );
        assert_eq!(msg.text(), "2 + 2 = 4.");
    })
}

fn deepseek_tool_calls() -> Vector {
    let body = sse(&[
        &chunk(
            DEEPSEEK,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            DEEPSEEK,
            r#""choices":[{"index":0,"delta":{"content":null,"reasoning_content":"Need the time first."},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            DEEPSEEK,
            r#""choices":[{"index":0,"delta":{"content":null,"reasoning_content":null,"tool_calls":[{"index":0,"id":"call_00_Jt4bWq","type":"function","function":{"name":"run_command","arguments":""}}]},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            DEEPSEEK,
            r#""choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\": "}}]},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            DEEPSEEK,
            r#""choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"date\"}"}}]},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            DEEPSEEK,
            r#""choices":[{"index":0,"delta":{"content":"","reasoning_content":null},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":300,"completion_tokens":40,"total_tokens":340}"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "deepseek reasoning then tool call",
        body,
        vec![
            choice("", Some("tool_calls"))
                .reasoning("Need the time first.")
                .calls(vec![call(
                    Some("call_00_Jt4bWq"),
                    "run_command",
                    r#"{"command": "date"}"#,
                )]),
        ],
    )
    .usage(300, 40, 340)
    .check(|c| {
        let msg = c.choices[0].to_message();
        assert_eq!(msg.content, None);
        assert_eq!(
            msg.reasoning_content.as_deref(),
            Some("Need the time first."),
            "the continuation carries reasoning_content"
        );
    })
}

const OPENROUTER: &str = r#""id":"gen-1736000300-Kp2sLm","provider":"Google","model":"google/gemini-2.5-pro","object":"chat.completion.chunk","created":1736000300"#;

fn openrouter_reasoning() -> Vector {
    let body = sse(&[
        ": OPENROUTER PROCESSING",
        ": OPENROUTER PROCESSING",
        &chunk(
            OPENROUTER,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"**Weighing","reasoning_details":[{"type":"reasoning.text","text":"**Weighing","format":"google-gemini-v1","index":0}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]"#,
        ),
        ": OPENROUTER PROCESSING",
        &chunk(
            OPENROUTER,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":" options**","reasoning_details":[{"type":"reasoning.text","text":" options**","format":"google-gemini-v1","index":0}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]"#,
        ),
        &chunk(
            OPENROUTER,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":"Use a B-tree."},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]"#,
        ),
        &chunk(
            OPENROUTER,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop","native_finish_reason":"STOP","logprobs":null}],"usage":{"prompt_tokens":40,"completion_tokens":120,"total_tokens":160,"cost":0.00125,"is_byok":false,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":100}}"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "openrouter reasoning with keep-alive comments",
        body,
        vec![choice("Use a B-tree.", Some("stop")).reasoning("**Weighing options**")],
    )
    .usage(40, 120, 160)
    .check(|c| {
        assert_eq!(c.extra["provider"], "Google");
        let ch = &c.choices[0];
        assert_eq!(ch.meta["native_finish_reason"], "STOP");
        assert_eq!(ch.extra["reasoning_details"].as_array().unwrap().len(), 2);
        assert_eq!(c.usage.as_ref().unwrap().extra["cost"], json!(0.00125));
    })
}

fn openrouter_error() -> Vector {
    const OR: &str = r#""id":"gen-1736000400-Zx0","provider":"Fireworks","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1736000400"#;
    let body = sse(&[
        ": OPENROUTER PROCESSING",
        &chunk(
            OR,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":"Partial ans"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]"#,
        ),
        &chunk(
            OR,
            r#""error":{"code":502,"message":"Upstream provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error","native_finish_reason":"error"}]"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "openrouter mid-stream error",
        body,
        vec![choice("Partial ans", None)],
    )
    .error(WantError::Provider("Upstream provider disconnected"))
    .check(|c| assert_eq!(c.extra["provider"], "Fireworks"))
}

fn openrouter_duplicated_tool_calls() -> Vector {
    const OR: &str = r#""id":"gen-1736000500-Dup","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion.chunk","created":1736000500"#;
    let body = sse(&[
        ": OPENROUTER PROCESSING",
        &chunk(
            OR,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":"Reading both."},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]"#,
        ),
        &chunk(
            OR,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"toolu_01Ab","type":"function","function":{"name":"read_file","arguments":""}}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]"#,
        ),
        &chunk(
            OR,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"type":"function","function":{"arguments":"{\"path\": \"a.txt\"}"}}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]"#,
        ),
        &chunk(
            OR,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":1,"id":"toolu_01Cd","type":"function","function":{"name":"read_file","arguments":""}}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]"#,
        ),
        &chunk(
            OR,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":1,"type":"function","function":{"arguments":"{\"path\": "}}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]"#,
        ),
        &chunk(
            OR,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":1,"type":"function","function":{"arguments":"\"b.txt\"}"}}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]"#,
        ),
        &chunk(
            OR,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"toolu_01Ab","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"a.txt\"}"}},{"index":1,"id":"toolu_01Cd","type":"function","function":{"name":"read_file","arguments":"{\"path\": \"b.txt\"}"}}]},"finish_reason":"tool_calls","native_finish_reason":"tool_use","logprobs":null}],"usage":{"prompt_tokens":500,"completion_tokens":60,"total_tokens":560}"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "openrouter duplicated final tool-call chunk",
        body,
        vec![choice("Reading both.", Some("tool_calls")).calls(vec![
            call(Some("toolu_01Ab"), "read_file", r#"{"path": "a.txt"}"#),
            call(Some("toolu_01Cd"), "read_file", r#"{"path": "b.txt"}"#),
        ])],
    )
    .usage(500, 60, 560)
}

fn ollama() -> Vector {
    const OL: &str = r#""id":"chatcmpl-417","object":"chat.completion.chunk","created":1736000600,"model":"qwen3:8b","system_fingerprint":"fp_ollama""#;
    let body = sse(&[
        &chunk(
            OL,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"List, then read."},"finish_reason":null}]"#,
        ),
        &chunk(
            OL,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_k3j2h1g0","type":"function","function":{"name":"list_files","arguments":"{\"dir\":\".\"}"}},{"id":"call_z9y8x7w6","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"Cargo.toml\"}"}}]},"finish_reason":null}]"#,
        ),
        &chunk(
            OL,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls"}]"#,
        ),
        &chunk(
            OL,
            r#""choices":[],"usage":{"prompt_tokens":210,"completion_tokens":51,"total_tokens":261}"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "ollama tool calls without index",
        body,
        vec![
            choice("", Some("tool_calls"))
                .reasoning("List, then read.")
                .calls(vec![
                    call(Some("call_k3j2h1g0"), "list_files", r#"{"dir":"."}"#),
                    call(
                        Some("call_z9y8x7w6"),
                        "read_file",
                        r#"{"path":"Cargo.toml"}"#,
                    ),
                ]),
        ],
    )
    .usage(210, 51, 261)
}

const VLLM: &str = r#""id":"chatcmpl-9c1e0b7a4f2d","object":"chat.completion.chunk","created":1736000700,"model":"Qwen/QwQ-32B""#;

fn vllm() -> Vector {
    let body = sse(&[
        &chunk(
            VLLM,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            VLLM,
            r#""choices":[{"index":0,"delta":{"reasoning_content":"Okay, so"},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            VLLM,
            r#""choices":[{"index":0,"delta":{"reasoning_content":" primes..."},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            VLLM,
            r#""choices":[{"index":0,"delta":{"content":"2, 3, 5"},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            VLLM,
            r#""choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":151645}]"#,
        ),
        &chunk(
            VLLM,
            r#""choices":[],"usage":{"prompt_tokens":12,"total_tokens":90,"completion_tokens":78,"prompt_tokens_details":null}"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "vllm reasoning_content and stop_reason",
        body,
        vec![choice("2, 3, 5", Some("stop")).reasoning("Okay, so primes...")],
    )
    .usage(12, 78, 90)
    .check(|c| assert_eq!(c.choices[0].meta["stop_reason"], 151645))
}

fn vllm_error() -> Vector {
    let body = sse(&[
        &chunk(
            VLLM,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            VLLM,
            r#""choices":[{"index":0,"delta":{"content":"Sure"},"logprobs":null,"finish_reason":null}]"#,
        ),
        r#"data: {"object":"error","message":"The decoder prompt is longer than the maximum model length.","type":"BadRequestError","param":null,"code":400}"#,
        "data: [DONE]",
    ]);
    vector("vllm object:error", body, vec![choice("Sure", None)]).error(WantError::Provider(
        "The decoder prompt is longer than the maximum model length.",
    ))
}

fn vllm_nested_error() -> Vector {
    let body = sse(&[
        &chunk(
            VLLM,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":"Sure"},"logprobs":null,"finish_reason":null}]"#,
        ),
        r#"data: {"error": {"object": "error", "message": "Internal server error", "type": "InternalServerError", "param": null, "code": 500}}"#,
    ]);
    vector("vllm nested error", body, vec![choice("Sure", None)])
        .error(WantError::Provider("Internal server error"))
}

const MISTRAL: &str = r#""id":"8b1f2c3d4e5f60718293a4b5c6d7e8f9","object":"chat.completion.chunk","created":1736000800,"model":"mistral-large-latest""#;

fn mistral_tool_calls() -> Vector {
    let body = sse(&[
        &chunk(
            MISTRAL,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]"#,
        ),
        &chunk(
            MISTRAL,
            r#""choices":[{"index":0,"delta":{"tool_calls":[{"id":"Dp3xK9aQz","function":{"name":"web_fetch","arguments":"{\"url\": \"https://example.com\"}"},"index":0},{"id":"Vn7Yt2LmB","function":{"name":"list_files","arguments":"{}"},"index":1}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":95,"total_tokens":131,"completion_tokens":36}"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "mistral whole tool calls with the finish reason",
        body,
        vec![choice("", Some("tool_calls")).calls(vec![
            call(
                Some("Dp3xK9aQz"),
                "web_fetch",
                r#"{"url": "https://example.com"}"#,
            ),
            call(Some("Vn7Yt2LmB"), "list_files", "{}"),
        ])],
    )
    .usage(95, 36, 131)
    .check(|c| {
        let msg = c.choices[0].to_message();
        assert_eq!(msg.tool_calls[0].kind, "function", "type filled in");
    })
}

fn mistral_thinking() -> Vector {
    const M: &str = r#""id":"c0ffee","object":"chat.completion.chunk","created":1736000900,"model":"magistral-medium-latest""#;
    let body = sse(&[
        &chunk(
            M,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]"#,
        ),
        &chunk(
            M,
            r#""choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"Count the "}]}]},"finish_reason":null}]"#,
        ),
        &chunk(
            M,
            r#""choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"letters."}]}]},"finish_reason":null}]"#,
        ),
        &chunk(
            M,
            r#""choices":[{"index":0,"delta":{"content":"There are "},"finish_reason":null}]"#,
        ),
        &chunk(
            M,
            r#""choices":[{"index":0,"delta":{"content":[{"type":"text","text":"three."}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"total_tokens":40,"completion_tokens":30}"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "mistral thinking parts",
        body,
        vec![choice("There are three.", Some("stop")).reasoning("Count the letters.")],
    )
    .usage(10, 30, 40)
}

const GEMINI: &str = r#""created":1736001000,"id":"aHR0cHM6Ly9leGFtcGxl","model":"gemini-2.5-flash","object":"chat.completion.chunk""#;

fn gemini_tool_calls() -> Vector {
    let body = sse(&[
        &chunk(
            GEMINI,
            r#""choices":[{"delta":{"content":"Checking both cities.","role":"assistant"},"index":0}]"#,
        ),
        &chunk(
            GEMINI,
            r#""choices":[{"delta":{"role":"assistant","tool_calls":[{"extra_content":{"google":{"thought_signature":"CqUBAdHtim9kX2"}},"function":{"arguments":"{\"city\":\"Paris\"}","name":"get_weather"},"id":"","type":"function"},{"function":{"arguments":"{\"city\":\"Rome\"}","name":"get_weather"},"index":null,"type":"function"}]},"finish_reason":"tool_calls","index":0}],"usage":{"completion_tokens":31,"prompt_tokens":77,"total_tokens":108}"#,
        ),
    ]);
    vector(
        "gemini tool calls without index or id, no [DONE]",
        body,
        vec![
            choice("Checking both cities.", Some("tool_calls")).calls(vec![
                WantCall {
                    extra: json!({"extra_content":{"google":{"thought_signature":"CqUBAdHtim9kX2"}}}),
                    ..call(None, "get_weather", r#"{"city":"Paris"}"#)
                },
                call(None, "get_weather", r#"{"city":"Rome"}"#),
            ]),
        ],
    )
    .usage(77, 31, 108)
    .no_done()
    .check(|c| {
        let msg = c.choices[0].to_message();
        let v = serde_json::to_value(&msg.tool_calls).unwrap();
        assert_eq!(
            v,
            json!([
                {"id": "call_0_0", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
                 "extra_content": {"google": {"thought_signature": "CqUBAdHtim9kX2"}}},
                {"id": "call_0_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\":\"Rome\"}"}}
            ])
        );
    })
}

fn gemini_text() -> Vector {
    let body = sse(&[
        &chunk(
            GEMINI,
            r#""choices":[{"delta":{"content":"The sky","role":"assistant"},"index":0}]"#,
        ),
        &chunk(
            GEMINI,
            r#""choices":[{"delta":{"content":" is blue."},"index":null}]"#,
        ),
        &chunk(
            GEMINI,
            r#""choices":[{"delta":{"content":"","role":"assistant"},"finish_reason":"stop","index":0}],"usage":{"completion_tokens":5,"prompt_tokens":6,"total_tokens":11}"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "gemini text, choice index null",
        body,
        vec![choice("The sky is blue.", Some("stop"))],
    )
    .usage(6, 5, 11)
}

fn groq() -> Vector {
    const GQ: &str = r#""id":"chatcmpl-5b2e9a71","object":"chat.completion.chunk","created":1736001100,"model":"llama-3.3-70b-versatile","system_fingerprint":"fp_9a8b91ba77""#;
    let body = sse(&[
        &chunk(
            GQ,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"x_groq":{"id":"req_01jh8x2"}"#,
        ),
        &chunk(
            GQ,
            r#""choices":[{"index":0,"delta":{"content":"Fast"},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            GQ,
            r#""choices":[{"index":0,"delta":{"content":"!"},"logprobs":null,"finish_reason":null}]"#,
        ),
        &chunk(
            GQ,
            r#""choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"x_groq":{"id":"req_01jh8x2","usage":{"queue_time":0.0412,"prompt_tokens":18,"prompt_time":0.0011,"completion_tokens":2,"completion_time":0.0045,"total_tokens":20,"total_time":0.0056}}"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "groq usage in x_groq",
        body,
        vec![choice("Fast!", Some("stop"))],
    )
    .usage(18, 2, 20)
    .check(|c| {
        assert_eq!(c.extra["x_groq"]["id"], "req_01jh8x2");
        assert_eq!(c.usage.as_ref().unwrap().extra["queue_time"], json!(0.0412));
    })
}

fn llama_cpp() -> Vector {
    const LC: &str = r#""created":1736001200,"id":"chatcmpl-yP3kQwE","model":"gpt-3.5-turbo","system_fingerprint":"b5123-9f2a1c0d","object":"chat.completion.chunk""#;
    let body = sse(&[
        &format!(
            "data: {{\"choices\":[{{\"finish_reason\":null,\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":null}}}}],{LC}}}"
        ),
        &format!(
            "data: {{\"choices\":[{{\"finish_reason\":null,\"index\":0,\"delta\":{{\"content\":\"Hi\"}}}}],{LC}}}"
        ),
        &format!(
            "data: {{\"choices\":[{{\"finish_reason\":null,\"index\":0,\"delta\":{{\"content\":\"\"}}}}],{LC}}}"
        ),
        &format!(
            "data: {{\"choices\":[{{\"finish_reason\":null,\"index\":0,\"delta\":{{\"content\":\" there\"}}}}],{LC}}}"
        ),
        &format!(
            "data: {{\"choices\":[{{\"finish_reason\":\"stop\",\"index\":0,\"delta\":{{}}}}],{LC},\"usage\":{{\"completion_tokens\":3,\"prompt_tokens\":9,\"total_tokens\":12}},\"timings\":{{\"prompt_n\":9,\"prompt_ms\":31.2,\"prompt_per_token_ms\":3.46,\"predicted_n\":3,\"predicted_ms\":40.1,\"predicted_per_second\":74.8}}}}"
        ),
        "data: [DONE]",
    ]);
    vector(
        "llama.cpp timings and empty deltas",
        body,
        vec![choice("Hi there", Some("stop"))],
    )
    .usage(9, 3, 12)
    .check(|c| assert_eq!(c.extra["timings"]["predicted_n"], 3))
}

fn parallel_interleaved() -> Vector {
    let head = OPENAI;
    let frag = |calls: &str| {
        chunk(
            head,
            &format!(
                r#""choices":[{{"index":0,"delta":{{"tool_calls":[{calls}]}},"logprobs":null,"finish_reason":null}}]"#
            ),
        )
    };
    let body = sse(&[
        &chunk(
            head,
            r#""choices":[{"index":0,"delta":{"role":"assistant","content":null},"logprobs":null,"finish_reason":null}]"#,
        ),
        &frag(
            r#"{"index":0,"id":"call_A","type":"function","function":{"name":"read_file","arguments":""}}"#,
        ),
        &frag(
            r#"{"index":1,"id":"call_B","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}"#,
        ),
        &frag(r#"{"index":0,"function":{"arguments":"{\"path\":"}}"#),
        &frag(
            r#"{"index":2,"id":"call_C","type":"function","function":{"name":"run_command","arguments":""}},{"index":1,"function":{"arguments":"th\":\"b\"}"}}"#,
        ),
        &frag(r#"{"index":2,"function":{"arguments":"{\"command\":\"ls -la\"}"}}"#),
        &frag(r#"{"index":0,"function":{"arguments":"\"a\"}"}}"#),
        &chunk(
            head,
            r#""choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]"#,
        ),
        "data: [DONE]",
    ]);
    vector(
        "parallel tool calls interleaved",
        body,
        vec![choice("", Some("tool_calls")).calls(vec![
            call(Some("call_A"), "read_file", r#"{"path":"a"}"#),
            call(Some("call_B"), "read_file", r#"{"path":"b"}"#),
            call(Some("call_C"), "run_command", r#"{"command":"ls -la"}"#),
        ])],
    )
}

fn two_choices() -> Vector {
    let body = sse(&[
        r#"data: {"id":"c2","choices":[{"index":0,"delta":{"role":"assistant","content":"Yes"}},{"index":1,"delta":{"role":"assistant","content":"No"}}]}"#,
        r#"data: {"id":"c2","choices":[{"index":1,"delta":{"content":"pe"},"finish_reason":"stop"}]}"#,
        r#"data: {"id":"c2","choices":[{"index":0,"delta":{"content":"!"},"finish_reason":"stop"}]}"#,
        "data: [DONE]",
    ]);
    vector(
        "two choices (n=2)",
        body,
        vec![
            choice("Yes!", Some("stop")),
            choice("Nope", Some("stop")).index(1),
        ],
    )
}

fn crlf() -> Vector {
    let mut v = openai_text();
    v.name = "openai text, CRLF framing";
    v.body = v.body.replace('\n', "\r\n");
    v
}

fn lone_cr() -> Vector {
    let mut v = openai_tool_call();
    v.name = "openai tool call, CR framing";
    v.body = v.body.replace('\n', "\r");
    v
}

fn provider_vectors() -> Vec<Vector> {
    vec![
        openai_text(),
        openai_tool_call(),
        azure(),
        deepseek_reasoning(),
        deepseek_tool_calls(),
        openrouter_reasoning(),
        openrouter_error(),
        openrouter_duplicated_tool_calls(),
        ollama(),
        vllm(),
        vllm_error(),
        vllm_nested_error(),
        mistral_tool_calls(),
        mistral_thinking(),
        gemini_tool_calls(),
        gemini_text(),
        groq(),
        llama_cpp(),
        parallel_interleaved(),
        two_choices(),
        crlf(),
        lone_cr(),
    ]
}

#[test]
fn provider_vectors_three_ways() {
    for v in provider_vectors() {
        check_vector(&v);
    }
}

// ---- end of input, errors and framing ----

const HI: &str = r#"data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}"#;
const STOP: &str = r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#;

fn edge_vectors() -> Vec<Vector> {
    let mut partial_event = sse(&[HI]);
    partial_event.push_str(r#"data: {"choices":[{"index":0,"delta":{"content":" the"#);
    let huge_bad = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{}\"}}}}\n\n",
        "y".repeat(50_000)
    );
    vec![
        vector("empty body", String::new(), vec![]).error(WantError::Truncated(Truncation::Empty)),
        vector("only comments", sse(&[": ping", ": ping"]), vec![])
            .error(WantError::Truncated(Truncation::Empty)),
        vector("EOF mid-event", partial_event, vec![choice("Hi", None)])
            .error(WantError::Truncated(Truncation::MidEvent)),
        // The SSE specification drops an event the body leaves open; an answer whose every
        // choice finished is whole whatever was cut after it, and an open event that is a
        // chunk or `[DONE]` is read as if closed (servers that end without the blank line).
        vector(
            "EOF mid-line after a finish",
            format!("{}data: [DO", sse(&[HI, STOP])),
            vec![choice("Hi", Some("stop"))],
        )
        .no_done(),
        vector(
            "EOF after [DONE]'s data line, before the blank line",
            format!("{}data: [DONE]\n", sse(&[HI, STOP])),
            vec![choice("Hi", Some("stop"))],
        ),
        vector(
            "EOF right after [DONE], no line end",
            format!("{}data: [DONE]", sse(&[HI, STOP])),
            vec![choice("Hi", Some("stop"))],
        ),
        vector(
            "EOF right after the finishing chunk, no line end",
            format!("{}{STOP}", sse(&[HI])),
            vec![choice("Hi", Some("stop"))],
        )
        .no_done(),
        vector(
            "EOF right after the finishing chunk and one CR",
            format!("{}{STOP}\r", sse(&[HI])),
            vec![choice("Hi", Some("stop"))],
        )
        .no_done(),
        vector(
            "EOF after a finish, inside a usage chunk",
            format!(
                "{}data: {{\"choices\":[],\"usage\":{{\"prompt_tokens\":3",
                sse(&[HI, STOP])
            ),
            vec![choice("Hi", Some("stop"))],
        )
        .no_done(),
        vector(
            "EOF inside an event whose line is whole, unfinished",
            format!("{}data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"!\"}}}}]}}", sse(&[HI])),
            vec![choice("Hi!", None)],
        )
        .error(WantError::Truncated(Truncation::MidEvent)),
        vector(
            "EOF between events, unfinished",
            sse(&[HI]),
            vec![choice("Hi", None)],
        )
        .error(WantError::Truncated(Truncation::Unfinished)),
        vector(
            "EOF between events, one of two choices unfinished",
            sse(&[
                HI,
                STOP,
                r#"data: {"choices":[{"index":1,"delta":{"content":"Yo"}}]}"#,
            ]),
            vec![choice("Hi", Some("stop")), choice("Yo", None).index(1)],
        )
        .error(WantError::Truncated(Truncation::Unfinished)),
        vector(
            "EOF without [DONE], all choices finished",
            sse(&[HI, STOP]),
            vec![choice("Hi", Some("stop"))],
        )
        .no_done(),
        vector(
            "[DONE] without a finish reason",
            sse(&[HI, "data: [DONE]"]),
            vec![choice("Hi", None)],
        ),
        vector(
            "malformed JSON",
            sse(&[HI, r#"data: {"choices":[{"index":0,"delta":{"content":"x"}}"#, "data: [DONE]"]),
            vec![choice("Hi", None)],
        )
        .error(WantError::Malformed(
            r#"{"choices":[{"index":0,"delta":{"content":"x"}}"#,
        )),
        vector("data is an array", sse(&["data: [1,2]"]), vec![])
            .error(WantError::Malformed("[1,2]")),
        vector("data is a string", sse(&[HI, "data: \"hello\""]), vec![choice("Hi", None)])
            .error(WantError::Malformed("\"hello\"")),
        vector("data is a number", sse(&["data: 42"]), vec![]).error(WantError::Malformed("42")),
        vector("data is null", sse(&["data: null"]), vec![]).error(WantError::Malformed("null")),
        vector("data is plain text", sse(&["data: upstream timeout"]), vec![])
            .error(WantError::Malformed("upstream timeout")),
        vector(
            "event: error with JSON",
            sse(&[
                HI,
                "event: error\ndata: {\"error\":{\"message\":\"Overloaded\",\"type\":\"overloaded_error\"}}",
                STOP,
                "data: [DONE]",
            ]),
            vec![choice("Hi", None)],
        )
        .error(WantError::Provider("Overloaded")),
        vector(
            "event: error with plain text",
            sse(&[HI, "event: error\ndata: model crashed\ndata: (exit 137)"]),
            vec![choice("Hi", None)],
        )
        .error(WantError::Provider("model crashed\n(exit 137)")),
        vector(
            "event: error with JSON that holds no error",
            sse(&["event: error\ndata: {\"status\":503}"]),
            vec![],
        )
        .error(WantError::Provider("{\"status\":503}")),
        vector(
            "keep-alives: empty and whitespace data, comments, other fields",
            sse(&[
                "data:",
                "data: ",
                "data:  \t ",
                "data:\ndata:",
                ": keep-alive",
                "event: ping\ndata:  ",
                "id: 7\nretry: 100",
                HI,
                "data: \t[DONE]  ",
            ]),
            vec![choice("Hi", None)],
        ),
        vector(
            "bytes after [DONE] are ignored",
            format!(
                "{}{}",
                sse(&[HI, STOP, "data: [DONE]"]),
                "data: {not json\n\nevent: error\ndata: boom\n\n\u{FFFD}\r\rgarbage without end"
            ),
            vec![choice("Hi", Some("stop"))],
        ),
        vector(
            "[DONE] then a huge line, with a small limit",
            format!("{}{}", sse(&[HI, "data: [DONE]"]), "x".repeat(4096)),
            vec![choice("Hi", None)],
        )
        .limit(200),
        vector(
            "an error chunk stops the stream; later chunks are ignored",
            sse(&[
                HI,
                r#"data: {"error":{"message":"quota exceeded","code":429}}"#,
                r#"data: {"choices":[{"index":0,"delta":{"content":" more"},"finish_reason":"stop"}]}"#,
                "data: [DONE]",
            ]),
            vec![choice("Hi", None)],
        )
        .error(WantError::Provider("quota exceeded")),
        vector(
            "oversize event",
            sse(&[
                HI,
                &format!(
                    r#"data: {{"choices":[{{"index":0,"delta":{{"content":"{}"}}}}]}}"#,
                    "z".repeat(300)
                ),
                STOP,
                "data: [DONE]",
            ]),
            vec![choice("Hi", None)],
        )
        .limit(256)
        .error(WantError::TooLarge(256)),
        vector(
            "oversize event split over data lines",
            sse(&[HI, &"data: 0123456789\n".repeat(30), "data: [DONE]"]),
            vec![choice("Hi", None)],
        )
        .limit(256)
        .error(WantError::TooLarge(256)),
        vector(
            "BOM and UTF-8 text",
            format!("\u{FEFF}{}", sse(&[r#"data: {"choices":[{"index":0,"delta":{"content":"naïve ☕ 𝄞"},"finish_reason":"stop"}]}"#, "data: [DONE]"])),
            vec![choice("naïve ☕ 𝄞", Some("stop"))],
        ),
        // The huge malformed payload is checked separately (its payload is shortened).
        vector("huge malformed payload", huge_bad, vec![]).error(WantError::Malformed("")),
    ]
}

#[test]
fn edge_vectors_three_ways() {
    for v in edge_vectors() {
        if v.name == "huge malformed payload" {
            let out = three_ways(v.name, v.body.as_bytes(), v.limit);
            let failure = out.result.unwrap_err();
            let StreamError::Malformed { payload, error } = &failure.error else {
                panic!("{failure:?}")
            };
            assert!(
                payload.len() < 400,
                "payload not shortened: {}",
                payload.len()
            );
            assert!(payload.starts_with(r#"{"choices":[{"index":0,"delta":{"content":"yyy"#));
            assert!(payload.ends_with("more bytes)"), "{payload}");
            assert!(error.contains("EOF"), "{error}");
            assert!(failure.to_string().len() < 600);
            continue;
        }
        check_vector(&v);
    }
}

/// Cuts `body` into pieces of which about half are [`LARGE`] or more (many events each, as a
/// busy socket's reads), cut anywhere (inside lines, CRLF pairs and UTF-8).
pub(super) fn mixed_pieces(body: &[u8], seed: u64) -> Vec<&[u8]> {
    let mut rng = SplitMix(seed);
    let mut pieces = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let n = if rng.below(2) == 0 {
            rng.below(25)
        } else {
            LARGE + 1 + rng.below(2 * LARGE)
        };
        let (piece, tail) = rest.split_at(n.min(rest.len()));
        pieces.push(piece);
        rest = tail;
    }
    pieces
}

#[test]
fn streams_can_be_shared_and_sent_between_threads() {
    // Embedders hold streams across `.await` in `Send` futures and share them by reference.
    fn check<T: Send + Sync>() {}
    check::<ChatStream>();
    check::<Accumulator>();
    check::<crate::answer::AnswerReader>();
    check::<crate::client::StreamedChat>();
}

#[test]
fn large_pieces_decoded_in_place_match_small_ones() {
    // Every vector after enough keep-alive comments that its pieces pass the size decoded at
    // once, and once more with its events repeated so that they are cut inside too.
    let pad = ": keep-alive\n".repeat(LARGE / 6);
    for v in provider_vectors().into_iter().chain(edge_vectors()) {
        let times = (4 * LARGE / v.body.len().max(1)).clamp(1, 200);
        let events_first = v
            .body
            .split("data: [DONE]")
            .next()
            .unwrap_or("")
            .repeat(times);
        for body in [
            format!("{pad}{}", v.body),
            format!("{events_first}{}", v.body),
        ] {
            let body = body.as_bytes();
            let bytewise = run(v.limit, body.chunks(1));
            assert_eq!(run(v.limit, [body]), bytewise, "{}: whole", v.name);
            for seed in SEEDS {
                let pieces = mixed_pieces(body, seed);
                assert_eq!(run(v.limit, pieces), bytewise, "{}: seed {seed}", v.name);
            }
        }
    }
}

#[test]
fn feeding_after_done_or_error_changes_nothing() {
    let mut s = ChatStream::new();
    s.feed(sse(&[HI, "data: [DONE]"]).as_bytes());
    let mut events = Vec::new();
    assert_eq!(drain(&mut s, &mut events), None);
    assert_eq!(events.last(), Some(&StreamEvent::Done));
    s.feed(sse(&[r#"data: {"choices":[{"index":0,"delta":{"content":"late"}}]}"#]).as_bytes());
    assert_eq!(s.poll_event(), Ok(None));
    assert_eq!(s.accumulator().choices().next().unwrap().content, "Hi");

    let mut s = ChatStream::new();
    s.feed(b"data: nope\n\n");
    let err = s.poll_event().unwrap_err();
    s.feed(sse(&[HI, "data: [DONE]"]).as_bytes());
    s.feed_eof();
    assert_eq!(s.poll_event(), Err(err.clone()));
    let failure = s.finish().unwrap_err();
    assert_eq!(failure.error, err);
    assert!(failure.partial.choices.is_empty());
}

#[test]
fn finish_without_feed_eof_ends_the_stream() {
    let mut s = ChatStream::new();
    s.feed(sse(&[HI, STOP]).as_bytes());
    let c = s.finish().unwrap();
    assert!(!c.done);
    assert_eq!(c.choices[0].content, "Hi");

    let mut s = ChatStream::new();
    s.feed(HI.as_bytes());
    let f = s.finish().unwrap_err();
    assert_eq!(
        f.error,
        StreamError::Truncated {
            truncation: Truncation::MidEvent,
        }
    );
}

#[test]
fn incomplete_input_is_not_an_error() {
    let body = sse(&[HI, STOP, "data: [DONE]"]);
    let bytes = body.as_bytes();
    let mut s = ChatStream::new();
    s.feed(&bytes[..bytes.len() - 1]);
    let mut events = Vec::new();
    assert_eq!(drain(&mut s, &mut events), None);
    assert!(
        !events.contains(&StreamEvent::Done),
        "[DONE] needs its blank line"
    );
    s.feed(&bytes[bytes.len() - 1..]);
    assert_eq!(drain(&mut s, &mut events), None);
    assert_eq!(events.last(), Some(&StreamEvent::Done));
}

#[test]
fn errors_display_whose_fault() {
    let cases = [
        (
            StreamError::Truncated {
                truncation: Truncation::Empty,
            },
            "the body was empty",
        ),
        (
            StreamError::Truncated {
                truncation: Truncation::MidEvent,
            },
            "middle of an event",
        ),
        (
            StreamError::Truncated {
                truncation: Truncation::Unfinished,
            },
            "no [DONE] and no finish reason",
        ),
        (
            StreamError::EventTooLarge { limit: 9 },
            "larger than 9 bytes",
        ),
    ];
    for (e, text) in cases {
        assert!(e.to_string().contains(text), "{e}");
    }
}

#[test]
fn a_failed_stream_keeps_nothing_of_a_large_feed() {
    // A malformed chunk first, then far more than one slice: after the failure nothing more is
    // read, so nothing of the piece is kept.
    let mut body = b"data: {not json}\n\n".to_vec();
    while body.len() < 200_000 {
        body.extend_from_slice(
            b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n",
        );
    }
    body.extend_from_slice(b"data: {\"choices\":[");
    let mut s = ChatStream::new();
    s.feed(&body);
    assert!(matches!(s.poll_event(), Err(StreamError::Malformed { .. })));
    assert_eq!(s.decoder.buffered_len(), 0);
}
