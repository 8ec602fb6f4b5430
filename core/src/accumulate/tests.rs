//! Unit tests for DESIGN.md's accumulation rules 3–7, one rule (or quirk) per test.

use super::*;
use crate::wire;
use serde_json::json;

/// Applies every chunk (each must be accepted) and returns the completion and the events.
fn accumulate(chunks: &[&str]) -> (Completion, Vec<StreamEvent>) {
    let mut acc = Accumulator::new();
    let mut events = VecDeque::new();
    for chunk in chunks {
        if let Err(e) = acc.handle_chunk(chunk, &mut events) {
            panic!("chunk refused: {e}\n{chunk}");
        }
    }
    (acc.into_completion(true), events.into())
}

/// Like [`accumulate`], for streams with exactly one choice.
fn one_choice(chunks: &[&str]) -> Choice {
    let (mut completion, _) = accumulate(chunks);
    assert_eq!(completion.choices.len(), 1, "{:?}", completion.choices);
    completion.choices.remove(0)
}

/// A chunk with one delta for choice 0.
fn delta(delta: &str) -> String {
    format!(r#"{{"object":"chat.completion.chunk","choices":[{{"index":0,"delta":{delta}}}]}}"#)
}

/// A chunk with tool-call fragments for choice 0.
fn calls(fragments: &str) -> String {
    delta(&format!(r#"{{"tool_calls":[{fragments}]}}"#))
}

/// A chunk for choice 0 with a finish reason (given as JSON: `"stop"`, `null`, `""`).
fn finish(reason: &str) -> String {
    format!(r#"{{"choices":[{{"index":0,"delta":{{}},"finish_reason":{reason}}}]}}"#)
}

/// `(id, name, arguments)` of a tool call.
type CallSummary<'a> = (Option<&'a str>, &'a str, &'a str);

/// `(id, name, arguments)` of each tool call, in output order.
fn call_summary(choice: &Choice) -> Vec<CallSummary<'_>> {
    choice
        .tool_calls
        .iter()
        .map(|c| (c.id.as_deref(), c.name.as_str(), c.arguments.as_str()))
        .collect()
}

fn usage(prompt: u64, completion: u64, total: u64) -> Usage {
    Usage {
        prompt_tokens: Some(prompt),
        completion_tokens: Some(completion),
        total_tokens: Some(total),
        extra: Extra::new(),
    }
}

fn refs(chunks: &[String]) -> Vec<&str> {
    chunks.iter().map(String::as_str).collect()
}

// ---- rule 3: chunk shapes that are normal, and errors ----

#[test]
fn role_only_first_delta_sets_the_role_and_nothing_else() {
    let (c, events) = accumulate(&[
        &delta(r#"{"role":"assistant","content":""}"#),
        &delta(r#"{"role":"","content":"Hi"}"#),
        &delta(r#"{"role":"user","content":"!"}"#),
    ]);
    let choice = &c.choices[0];
    assert_eq!(
        choice.role.as_deref(),
        Some("assistant"),
        "first non-empty role"
    );
    assert_eq!(choice.content, "Hi!");
    assert_eq!(
        events,
        [
            StreamEvent::ContentDelta {
                choice: 0,
                text: "Hi".into()
            },
            StreamEvent::ContentDelta {
                choice: 0,
                text: "!".into()
            },
        ],
        "a role-only delta and empty content emit nothing"
    );
}

#[test]
fn null_fields_are_absent() {
    let choice = one_choice(&[
        &delta(
            r#"{"role":null,"content":null,"reasoning_content":null,"reasoning":null,"refusal":null,"tool_calls":null,"function_call":null}"#,
        ),
        &delta(r#"{"content":"a"}"#),
        &delta(r#"{"content":null}"#),
        r#"{"choices":[{"index":0,"delta":null,"logprobs":null,"finish_reason":null}],"usage":null,"error":null}"#,
    ]);
    assert_eq!(choice.role, None);
    assert_eq!(choice.content, "a");
    assert_eq!(choice.reasoning, None);
    assert_eq!(choice.refusal, None);
    assert!(choice.tool_calls.is_empty());
    assert_eq!(choice.function_call, None);
    assert_eq!(choice.logprobs, None);
    assert!(choice.extra.is_empty() && choice.meta.is_empty());
}

#[test]
fn chunks_without_choices_are_normal() {
    for chunk in [
        r#"{"choices":[]}"#,
        r#"{"id":"x","object":"chat.completion.chunk"}"#,
        r#"{"choices":null}"#,
        r#"{}"#,
        r#"{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0}]}"#,
    ] {
        let mut acc = Accumulator::new();
        let mut events = VecDeque::new();
        acc.handle_chunk(chunk, &mut events).unwrap();
        assert!(events.is_empty(), "{chunk}");
        assert_eq!(acc.choices().count(), 0, "{chunk}");
        assert!(acc.is_empty(), "{chunk}");
    }
}

#[test]
fn error_chunks_are_errors_and_apply_nothing() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"error":{"message":"Provider disconnected","code":502},"choices":[{"index":0,"delta":{"content":"X"},"finish_reason":"error"}]}"#,
            "Provider disconnected",
        ),
        (r#"{"error":"overloaded"}"#, "overloaded"),
        (
            r#"{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}"#,
            "max_tokens is too large",
        ),
        (r#"{"error":{"message":7}}"#, r#"{"message":7}"#),
        (r#"{"error":42}"#, "42"),
    ];
    for (chunk, message) in cases {
        let mut acc = Accumulator::new();
        let mut events = VecDeque::new();
        acc.handle_chunk(&delta(r#"{"content":"kept"}"#), &mut events)
            .unwrap();
        match acc.handle_chunk(chunk, &mut events) {
            Err(ChunkError::Provider(e)) => assert_eq!(e.message, *message, "{chunk}"),
            other => panic!("{chunk}: {other:?}"),
        }
        let c = acc.into_completion(false);
        assert_eq!(c.choices[0].content, "kept", "{chunk}");
        assert_eq!(c.choices[0].finish_reason, None, "{chunk}");
        assert_eq!(
            events.len(),
            1,
            "{chunk}: nothing of the error chunk applied"
        );
    }
    let e = match Accumulator::new().handle_chunk(
        r#"{"error":{"message":"bad","type":"server_error","code":"x"}}"#,
        &mut VecDeque::new(),
    ) {
        Err(ChunkError::Provider(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(e.kind.as_deref(), Some("server_error"));
    assert_eq!(e.code, Some(json!("x")));
}

#[test]
fn malformed_chunks_are_errors_with_a_short_payload() {
    for bad in [
        "[1,2]",
        "\"text\"",
        "42",
        "null",
        "{\"choices\":",
        r#"{"choices":[{"delta":{"content":5}}]}"#,
        r#"{"choices":[{"index":0,"logprobs":{"content":[}}]}"#,
    ] {
        match Accumulator::new().handle_chunk(bad, &mut VecDeque::new()) {
            Err(ChunkError::Malformed { payload, .. }) => assert_eq!(payload, bad),
            other => panic!("{bad}: {other:?}"),
        }
    }
    let huge = format!(
        r#"{{"choices":[{{"delta":{{"content":"{}"}}}}]"#,
        "x".repeat(100_000)
    );
    match Accumulator::new().handle_chunk(&huge, &mut VecDeque::new()) {
        Err(ChunkError::Malformed { payload, error }) => {
            assert!(payload.len() < 400, "{} bytes", payload.len());
            assert!(payload.starts_with(r#"{"choices":[{"delta":{"content":"xxx"#));
            assert!(payload.contains("more bytes"), "{payload}");
            assert!(!error.is_empty());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn id_and_model_come_from_the_first_chunk_with_a_non_empty_one() {
    let (c, _) = accumulate(&[
        r#"{"id":"","model":"","choices":[]}"#,
        r#"{"id":"chatcmpl-1","model":"m-1","choices":[]}"#,
        r#"{"id":"chatcmpl-2","model":"m-2","choices":[]}"#,
    ]);
    assert_eq!(c.id.as_deref(), Some("chatcmpl-1"));
    assert_eq!(c.model.as_deref(), Some("m-1"));
}

// ---- rule 6: usage ----

#[test]
fn usage_chunk_with_empty_choices() {
    let (c, events) = accumulate(&[
        &delta(r#"{"content":"a"}"#),
        &finish(r#""stop""#),
        r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6,"prompt_tokens_details":{"cached_tokens":2}}}"#,
    ]);
    let mut want = usage(5, 1, 6);
    want.extra
        .insert("prompt_tokens_details".into(), json!({"cached_tokens": 2}));
    assert_eq!(c.usage.as_ref(), Some(&want));
    assert_eq!(events.last(), Some(&StreamEvent::Usage(want)));
    assert_eq!(c.choices.len(), 1);
}

#[test]
fn usage_is_the_last_non_null_one() {
    let (c, events) = accumulate(&[
        r#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}"#,
        r#"{"choices":[],"usage":null}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":4,"total_tokens":5}}"#,
        r#"{"choices":[],"usage":null}"#,
    ]);
    assert_eq!(c.usage, Some(usage(1, 4, 5)));
    let reported: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Usage(_)))
        .collect();
    assert_eq!(reported.len(), 2, "a null usage is not reported");
}

#[test]
fn nested_usage_is_the_fallback() {
    let groq_last = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"x_groq":{"id":"req_1","usage":{"queue_time":0.01,"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}}"#;
    let top =
        r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":13}}"#;
    let cases: &[(&[&str], Option<u64>)] = &[
        (&[groq_last], Some(12)),
        (&[groq_last, top], Some(13)),
        (&[top, groq_last], Some(13)),
        (&[r#"{"x_groq":{"id":"req_1"}}"#], None),
        (&[r#"{"x_groq":{"usage":null}}"#], None),
        // Some servers put usage on the choice.
        (
            &[r#"{"choices":[{"index":0,"delta":{},"usage":{"total_tokens":7}}]}"#],
            Some(7),
        ),
    ];
    for (chunks, total) in cases {
        let (c, events) = accumulate(chunks);
        assert_eq!(
            c.usage.as_ref().and_then(|u| u.total_tokens),
            *total,
            "{chunks:?}"
        );
        let last_reported = events.iter().rev().find_map(|e| match e {
            StreamEvent::Usage(u) => u.total_tokens,
            _ => None,
        });
        assert_eq!(
            last_reported, *total,
            "{chunks:?}: the events tell the same"
        );
    }
    let (c, _) = accumulate(&[groq_last]);
    let u = c.usage.unwrap();
    assert_eq!(u.extra["queue_time"], json!(0.01));
    assert_eq!(c.extra["x_groq"]["id"], "req_1", "x_groq itself is kept");
}

// ---- rule 4: text, refusal, reasoning, role, finish reason ----

#[test]
fn finish_reason_is_the_last_non_null_value() {
    let cases: &[(&[&str], Option<FinishReason>, usize)] = &[
        (&[r#""stop""#], Some(FinishReason::Stop), 1),
        (&[r#""stop""#, "null"], Some(FinishReason::Stop), 1),
        (&[r#""stop""#, r#""""#], Some(FinishReason::Stop), 1),
        (&[r#""""#], None, 0),
        (&["null", r#""""#, "null"], None, 0),
        (&[r#""length""#, r#""stop""#], Some(FinishReason::Stop), 2),
        (&[r#""stop""#, r#""stop""#], Some(FinishReason::Stop), 1),
        (&[r#""tool_calls""#], Some(FinishReason::ToolCalls), 1),
        (
            &[r#""content_filter""#],
            Some(FinishReason::ContentFilter),
            1,
        ),
        (
            &[r#""eos""#],
            Some(FinishReason::Other("eos".to_owned())),
            1,
        ),
    ];
    for (reasons, want, n_events) in cases {
        let mut chunks = vec![delta(r#"{"content":"x"}"#)];
        chunks.extend(reasons.iter().map(|r| finish(r)));
        let (c, events) = accumulate(&refs(&chunks));
        assert_eq!(c.choices[0].finish_reason, *want, "{reasons:?}");
        let finished: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ChoiceFinished { reason, .. } => Some(reason.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(finished.len(), *n_events, "{reasons:?}: {finished:?}");
        assert_eq!(finished.last(), want.as_ref(), "{reasons:?}");
    }
}

#[test]
fn finish_reason_round_trips_through_its_wire_name() {
    for s in [
        "stop",
        "length",
        "tool_calls",
        "content_filter",
        "function_call",
        "end_turn",
    ] {
        let r = FinishReason::parse(s).unwrap();
        assert_eq!(r.as_str(), s);
        assert_eq!(serde_json::to_value(&r).unwrap(), json!(s));
        assert_eq!(serde_json::from_value::<FinishReason>(json!(s)).unwrap(), r);
    }
    assert_eq!(FinishReason::parse(""), None);
    assert!(serde_json::from_value::<FinishReason>(json!("")).is_err());
}

#[test]
fn content_and_refusal_are_concatenated() {
    let (c, events) = accumulate(&[
        &delta(r#"{"content":"Hel"}"#),
        &delta(r#"{"content":"lo, \"w\u00f6rld\"\n"}"#),
        &delta(r#"{"refusal":"I can"}"#),
        &delta(r#"{"refusal":""}"#),
        &delta(r#"{"refusal":"'t."}"#),
    ]);
    let choice = &c.choices[0];
    assert_eq!(choice.content, "Hello, \"wörld\"\n");
    assert_eq!(choice.refusal.as_deref(), Some("I can't."));
    let refusals: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::RefusalDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(refusals, ["I can", "'t."]);
}

#[test]
fn reasoning_prefers_reasoning_content_never_both() {
    // (delta fields, expected reasoning)
    let cases: &[(&str, Option<&str>)] = &[
        (r#"{"reasoning_content":"a"}"#, Some("a")),
        (r#"{"reasoning":"b"}"#, Some("b")),
        (r#"{"reasoning_content":"a","reasoning":"a"}"#, Some("a")),
        (r#"{"reasoning":"a","reasoning_content":"a"}"#, Some("a")),
        (r#"{"reasoning_content":"a","reasoning":"b"}"#, Some("a")),
        (r#"{"reasoning_content":"","reasoning":"b"}"#, Some("b")),
        (r#"{"reasoning_content":null,"reasoning":"b"}"#, Some("b")),
        (r#"{"reasoning_content":"a","reasoning":null}"#, Some("a")),
        (r#"{"reasoning_content":"","reasoning":""}"#, None),
        (r#"{"reasoning":null}"#, None),
    ];
    for (fields, want) in cases {
        let (c, events) = accumulate(&[&delta(fields)]);
        assert_eq!(c.choices[0].reasoning.as_deref(), *want, "{fields}");
        let n = events
            .iter()
            .filter(|e| matches!(e, StreamEvent::ReasoningDelta { .. }))
            .count();
        assert_eq!(n, usize::from(want.is_some()), "{fields}");
    }
    // Across deltas both fields accumulate (one provider may switch between them).
    let choice = one_choice(&[
        &delta(r#"{"reasoning_content":"one ","reasoning":"one "}"#),
        &delta(r#"{"reasoning":"two "}"#),
        &delta(r#"{"reasoning_content":"three"}"#),
    ]);
    assert_eq!(choice.reasoning.as_deref(), Some("one two three"));
}

#[test]
fn content_parts_split_into_text_and_reasoning() {
    let choice = one_choice(&[
        &delta(r#"{"role":"assistant","content":""}"#),
        &delta(
            r#"{"content":[{"type":"thinking","thinking":[{"type":"text","text":"Let me "}]}]}"#,
        ),
        &delta(
            r#"{"content":[{"type":"thinking","thinking":[{"type":"text","text":"see."}],"closed":true}]}"#,
        ),
        &delta(r#"{"content":[{"type":"thinking","thinking":"Plain."}]}"#),
        &delta(r#"{"content":[{"type":"reasoning","text":" R"}]}"#),
        &delta(r#"{"content":[{"type":"text","text":"The answer"}]}"#),
        &delta(
            r#"{"content":[{"type":"image_url","image_url":{"url":"data:,"}},{"type":"text","text":" is 4."}]}"#,
        ),
        &delta(r#"{"content":[]}"#),
    ]);
    assert_eq!(choice.reasoning.as_deref(), Some("Let me see.Plain. R"));
    assert_eq!(choice.content, "The answer is 4.");
}

#[test]
fn a_whole_message_counts_only_when_nothing_was_streamed() {
    let choice = one_choice(&[
        r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}]}"#,
    ]);
    assert_eq!(choice.content, "whole");
    assert_eq!(choice.finish_reason, Some(FinishReason::Stop));
    let choice = one_choice(&[
        &delta(r#"{"content":"streamed"}"#),
        r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"streamed"},"finish_reason":"stop"}]}"#,
    ]);
    assert_eq!(choice.content, "streamed", "not doubled");
    // Streamed reasoning (or refusal) counts as streamed too.
    let choice = one_choice(&[
        &delta(r#"{"reasoning_content":"think"}"#),
        r#"{"choices":[{"index":0,"message":{"role":"assistant","reasoning_content":"think"},"finish_reason":"length"}]}"#,
    ]);
    assert_eq!(choice.reasoning.as_deref(), Some("think"), "not doubled");
    let choice = one_choice(&[
        &delta(r#"{"refusal":"No."}"#),
        r#"{"choices":[{"index":0,"message":{"role":"assistant","refusal":"No."},"finish_reason":"stop"}]}"#,
    ]);
    assert_eq!(choice.refusal.as_deref(), Some("No."), "not doubled");
}

#[test]
fn legacy_function_call_accumulates() {
    let choice = one_choice(&[
        &delta(r#"{"function_call":{"name":"f","arguments":""}}"#),
        &delta(r#"{"function_call":{"name":"","arguments":"{\"a\":"}}"#),
        &delta(r#"{"function_call":{"arguments":"1}"}}"#),
    ]);
    assert_eq!(
        choice.function_call,
        Some(FunctionCallParts {
            name: "f".into(),
            arguments: r#"{"a":1}"#.into()
        })
    );
}

#[test]
fn logprobs_merge_across_chunks() {
    let choice = one_choice(&[
        r#"{"choices":[{"index":0,"delta":{"content":"a"},"logprobs":{"content":[{"token":"a","logprob":-0.1}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"b"},"logprobs":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"c"},"logprobs":{"content":[{"token":"c","logprob":-0.3}],"refusal":null}}]}"#,
    ]);
    assert_eq!(
        choice.logprobs,
        Some(
            json!({"content":[{"token":"a","logprob":-0.1},{"token":"c","logprob":-0.3}],
            "refusal":null})
        )
    );
}

#[test]
fn several_choices_interleaved() {
    let (c, events) = accumulate(&[
        r#"{"choices":[{"index":1,"delta":{"role":"assistant","content":"B1"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"A1"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"A2"}},{"index":1,"delta":{"content":"B2"}}]}"#,
        r#"{"choices":[{"index":2,"delta":{"tool_calls":[{"index":0,"id":"c2","function":{"name":"f","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"index":1,"delta":{},"finish_reason":"length"}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"A3"},"finish_reason":"stop"},{"index":2,"delta":{},"finish_reason":"tool_calls"}]}"#,
    ]);
    let summary: Vec<_> = c
        .choices
        .iter()
        .map(|ch| (ch.index, ch.content.as_str(), ch.finish_reason.clone()))
        .collect();
    assert_eq!(
        summary,
        [
            (0, "A1A2A3", Some(FinishReason::Stop)),
            (1, "B1B2", Some(FinishReason::Length)),
            (2, "", Some(FinishReason::ToolCalls)),
        ]
    );
    assert_eq!(call_summary(&c.choices[2]), [(Some("c2"), "f", "{}")]);
    assert_eq!(
        events[0],
        StreamEvent::ContentDelta {
            choice: 1,
            text: "B1".into()
        }
    );
    // A choice without an index (or with a null one) is choice 0.
    let (c, _) = accumulate(&[
        r#"{"choices":[{"delta":{"content":"a"}}]}"#,
        r#"{"choices":[{"index":null,"delta":{"content":"b"}}]}"#,
    ]);
    assert_eq!(c.choices.len(), 1);
    assert_eq!(c.choices[0].content, "ab");
}

// ---- rule 5: tool calls ----

#[test]
fn tool_call_id_type_and_name_come_from_the_first_non_empty_fragment() {
    let choice = one_choice(&[
        &calls(r#"{"index":0,"id":"","type":"","function":{"name":"","arguments":""}}"#),
        &calls(
            r#"{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{"}}"#,
        ),
        &calls(
            r#"{"index":0,"id":"call_1","type":"other","function":{"name":"write_file","arguments":"}"}}"#,
        ),
    ]);
    let call = &choice.tool_calls[0];
    assert_eq!(call.id.as_deref(), Some("call_1"));
    assert_eq!(call.kind.as_deref(), Some("function"));
    assert_eq!(call.name, "read_file");
    assert_eq!(call.arguments, "{}");
    assert_eq!(choice.tool_calls.len(), 1);
}

#[test]
fn the_same_id_at_two_indexes_is_two_calls_renamed_by_the_history_rule() {
    // Both calls whole in one chunk, then a continuation of each by index.
    let both = calls(
        r#"{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":"{\"path\":"}},
           {"index":1,"id":"call_a","type":"function","function":{"name":"list_files","arguments":"{"}}"#,
    );
    let chunks = [
        both.as_str(),
        &calls(r#"{"index":1,"id":"call_a","function":{"arguments":"}"}}"#),
        &calls(r#"{"index":0,"function":{"arguments":"\"a\"}"}}"#),
    ];
    let choice = one_choice(&chunks);
    assert_eq!(
        call_summary(&choice),
        [
            (Some("call_a"), "read_file", r#"{"path":"a"}"#),
            (Some("call_a"), "list_files", "{}"),
        ]
    );
    let message = choice.to_message();
    let ids: Vec<&str> = message.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_a", "call_a_1"]);
    // The same rule history repair applies.
    let mut repaired = message.tool_calls.clone();
    repaired[1].id = "call_a".into();
    assert_eq!(crate::history::unique_call_ids(&mut repaired), 1);
    assert_eq!(repaired, message.tool_calls);
    // Index-less fragments still find their call by id.
    let choice = one_choice(&[
        &calls(r#"{"id":"x","function":{"name":"f","arguments":"{"}}"#),
        &calls(r#"{"id":"y","function":{"name":"g","arguments":"{}"}}"#),
        &calls(r#"{"id":"x","function":{"arguments":"}"}}"#),
    ]);
    assert_eq!(
        call_summary(&choice),
        [(Some("x"), "f", "{}"), (Some("y"), "g", "{}")]
    );
}

#[test]
fn tool_call_begin_and_argument_events() {
    let (c, events) = accumulate(&[
        &calls(
            r#"{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}"#,
        ),
        &calls(r#"{"index":0,"function":{"arguments":"{\"a\""}}"#),
        &calls(r#"{"index":0,"function":{"arguments":":1}"}}"#),
    ]);
    assert_eq!(c.choices[0].tool_calls[0].arguments, r#"{"a":1}"#);
    assert_eq!(
        events,
        [
            StreamEvent::ToolCallBegin {
                choice: 0,
                call: 0,
                id: Some("call_1".into()),
                name: Some("f".into())
            },
            StreamEvent::ToolCallArgumentsDelta {
                choice: 0,
                call: 0,
                fragment: r#"{"a""#.into()
            },
            StreamEvent::ToolCallArgumentsDelta {
                choice: 0,
                call: 0,
                fragment: ":1}".into()
            },
        ]
    );
}

#[test]
fn parallel_calls_interleaved_and_ordered_by_index() {
    let choice = one_choice(&[
        &calls(
            r#"{"index":1,"id":"b","type":"function","function":{"name":"g","arguments":"{\"y\""}}"#,
        ),
        &calls(r#"{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":""}}"#),
        &calls(
            r#"{"index":0,"function":{"arguments":"{\"x\":"}},{"index":1,"function":{"arguments":":2"}}"#,
        ),
        &calls(r#"{"index":2,"id":"c","function":{"name":"h","arguments":"{}"}}"#),
        &calls(
            r#"{"index":1,"function":{"arguments":"}"}},{"index":0,"function":{"arguments":"1}"}}"#,
        ),
    ]);
    assert_eq!(
        call_summary(&choice),
        [
            (Some("a"), "f", r#"{"x":1}"#),
            (Some("b"), "g", r#"{"y":2}"#),
            (Some("c"), "h", "{}"),
        ]
    );
    let indexes: Vec<u32> = choice.tool_calls.iter().map(|c| c.index).collect();
    assert_eq!(indexes, [0, 1, 2]);
}

#[test]
fn tool_calls_without_index() {
    // (chunks, expected calls). A missing and a null index behave alike.
    let cases: Vec<(Vec<String>, Vec<CallSummary<'_>>)> = vec![
        // Ollama: whole calls, several in one chunk, no index.
        (
            vec![calls(
                r#"{"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},{"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}"#,
            )],
            vec![
                (Some("call_a"), "f", r#"{"x":1}"#),
                (Some("call_b"), "g", "{}"),
            ],
        ),
        // Gemini: index null, no id, each call has a name.
        (
            vec![calls(
                r#"{"index":null,"function":{"name":"f","arguments":"{}"}},{"index":null,"type":"function","function":{"name":"f","arguments":"{\"n\":2}"}}"#,
            )],
            vec![(None, "f", "{}"), (None, "f", r#"{"n":2}"#)],
        ),
        // A bare arguments fragment continues the last call.
        (
            vec![
                calls(r#"{"id":"call_a","function":{"name":"f","arguments":"{\"x\""}}"#),
                calls(r#"{"function":{"arguments":":1}"}}"#),
                calls(r#"{"index":null,"function":{"name":"g","arguments":""}}"#),
                calls(r#"{"index":null,"function":{"arguments":"[]"}}"#),
            ],
            vec![(Some("call_a"), "f", r#"{"x":1}"#), (None, "g", "[]")],
        ),
        // A known id continues its call even when another call came after it.
        (
            vec![
                calls(r#"{"id":"a","function":{"name":"f","arguments":"{"}}"#),
                calls(r#"{"id":"b","function":{"name":"g","arguments":"{"}}"#),
                calls(r#"{"id":"a","function":{"arguments":"}"}}"#),
                calls(r#"{"id":"b","function":{"arguments":"}"}}"#),
            ],
            vec![(Some("a"), "f", "{}"), (Some("b"), "g", "{}")],
        ),
    ];
    for (chunks, want) in cases {
        let choice = one_choice(&refs(&chunks));
        assert_eq!(call_summary(&choice), want, "{chunks:?}");
        let indexes: Vec<u32> = choice.tool_calls.iter().map(|c| c.index).collect();
        let positions: Vec<u32> = (0..want.len() as u32).collect();
        assert_eq!(indexes, positions, "{chunks:?}");
    }
}

#[test]
fn same_index_with_different_ids_is_a_new_call() {
    // Whole calls sharing index 0.
    let choice = one_choice(&[&calls(
        r#"{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{\"p\":1}"}},{"index":0,"id":"b","type":"function","function":{"name":"f","arguments":"{\"p\":2}"}}"#,
    )]);
    assert_eq!(
        call_summary(&choice),
        [
            (Some("a"), "f", r#"{"p":1}"#),
            (Some("b"), "f", r#"{"p":2}"#)
        ]
    );
    // Streamed: bare fragments go to the latest call with the index; id-carrying fragments to
    // their own call.
    let choice = one_choice(&[
        &calls(r#"{"index":0,"id":"a","function":{"name":"f","arguments":"{\"p\":"}}"#),
        &calls(r#"{"index":0,"function":{"arguments":"1}"}}"#),
        &calls(r#"{"index":0,"id":"b","function":{"name":"g","arguments":"{\"q\":"}}"#),
        &calls(r#"{"index":0,"function":{"arguments":"2"}}"#),
        &calls(r#"{"index":0,"id":"b","function":{"arguments":"}"}}"#),
        &calls(r#"{"index":1,"id":"c","function":{"name":"h","arguments":"{}"}}"#),
    ]);
    assert_eq!(
        call_summary(&choice),
        [
            (Some("a"), "f", r#"{"p":1}"#),
            (Some("b"), "g", r#"{"q":2}"#),
            (Some("c"), "h", "{}"),
        ]
    );
    // The first fragment had no id: a later id on the same index names that call.
    let choice = one_choice(&[
        &calls(r#"{"index":0,"function":{"name":"f","arguments":"{"}}"#),
        &calls(r#"{"index":0,"id":"late","function":{"arguments":"}"}}"#),
    ]);
    assert_eq!(call_summary(&choice), [(Some("late"), "f", "{}")]);
}

#[test]
fn a_repeated_whole_call_in_a_final_chunk_is_ignored() {
    let repeat = r#"{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\": 1}"}}"#;
    let cases: Vec<Vec<String>> = vec![
        // Streamed, then repeated whole with the finish reason (OpenRouter).
        vec![
            calls(
                r#"{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}"#,
            ),
            calls(r#"{"index":0,"function":{"arguments":"{\"a\":"}}"#),
            calls(r#"{"index":0,"function":{"arguments":" 1}"}}"#),
            format!(
                r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{repeat}]}},"finish_reason":"tool_calls"}}]}}"#
            ),
        ],
        // Sent whole, then the same chunk again.
        vec![calls(repeat), calls(repeat)],
        // Repeated without the id (name and index only).
        vec![
            calls(repeat),
            calls(r#"{"index":0,"function":{"name":"f","arguments":"{\"a\": 1}"}}"#),
        ],
    ];
    for chunks in cases {
        let (c, events) = accumulate(&refs(&chunks));
        let choice = &c.choices[0];
        assert_eq!(
            call_summary(choice),
            [(Some("call_1"), "f", r#"{"a": 1}"#)],
            "{chunks:?}"
        );
        let fragments: String = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallArgumentsDelta { fragment, .. } => Some(fragment.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(fragments, r#"{"a": 1}"#, "events match the result");
    }
}

#[test]
fn arguments_sent_as_a_json_object_are_kept_as_text() {
    let choice = one_choice(&[&calls(
        r#"{"index":0,"id":"c","function":{"name":"f","arguments":{"path":"a b","n":[1,2]}}}"#,
    )]);
    assert_eq!(
        choice.tool_calls[0].arguments,
        r#"{"path":"a b","n":[1,2]}"#
    );
    let choice = one_choice(&[
        &calls(r#"{"index":0,"id":"c","function":{"name":"f","arguments":null}}"#),
        &calls(r#"{"index":0,"function":{"arguments":{}}}"#),
    ]);
    assert_eq!(choice.tool_calls[0].arguments, "{}");
}

#[test]
fn escaped_argument_fragments_are_decoded() {
    let choice = one_choice(&[
        &calls(r#"{"index":0,"id":"c","function":{"name":"f","arguments":"{\"s\":\"\\u00e9\\n"}}"#),
        &calls(r#"{"index":0,"function":{"arguments":"\u00e9\"}"}}"#),
    ]);
    assert_eq!(choice.tool_calls[0].arguments, "{\"s\":\"\\u00e9\\né\"}");
}

// ---- rule 7: unknown fields ----

#[test]
fn unknown_fields_merge_everywhere() {
    let (c, _) = accumulate(&[
        r#"{"provider":"A","meta":{"a":1},"list":[1],"choices":[{"index":0,"native_finish_reason":null,"content_filter_results":{},"delta":{"role":"assistant","reasoning_details":[{"type":"reasoning.text","text":"x"}],"annotations":null,"tool_calls":[{"index":0,"id":"c","type":"function","extra_content":{"google":{"thought_signature":"sig"}},"function":{"name":"f","arguments":"","strict":true}}]}}]}"#,
        r#"{"provider":"B","meta":{"b":2,"a":null},"list":[2],"choices":[{"index":0,"native_finish_reason":"end_turn","content_filter_results":{"hate":{"filtered":false}},"delta":{"reasoning_details":[{"type":"reasoning.text","text":"y"}],"annotations":[{"type":"url"}],"tool_calls":[{"index":0,"extra_content":null,"tags":[1],"function":{"arguments":"{}","strict":null}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"reasoning_details":[],"tool_calls":[{"index":0,"tags":[2],"extra_content":{"google":{"x":1}}}]}}]}"#,
    ]);
    assert_eq!(c.extra["provider"], "B", "scalars are replaced");
    assert_eq!(
        c.extra["meta"],
        json!({"a":1,"b":2}),
        "objects merge, null ignored"
    );
    assert_eq!(c.extra["list"], json!([1, 2]), "arrays are appended");
    let choice = &c.choices[0];
    assert_eq!(choice.meta["native_finish_reason"], "end_turn");
    assert_eq!(
        choice.meta["content_filter_results"],
        json!({"hate":{"filtered":false}})
    );
    assert_eq!(
        choice.extra["reasoning_details"],
        json!([{"type":"reasoning.text","text":"x"},{"type":"reasoning.text","text":"y"}])
    );
    assert_eq!(choice.extra["annotations"], json!([{"type":"url"}]));
    let call = &choice.tool_calls[0];
    assert_eq!(
        call.extra["extra_content"],
        json!({"google":{"thought_signature":"sig","x":1}})
    );
    assert_eq!(call.extra["tags"], json!([1, 2]));
    assert_eq!(call.function_extra["strict"], json!(true));
    assert_eq!(call.arguments, "{}");
}

// ---- Choice::to_message ----

#[test]
fn to_message_for_text_only() {
    let choice = one_choice(&[
        &delta(r#"{"role":"assistant","reasoning_content":"think"}"#),
        &delta(r#"{"content":"Hi"}"#),
        &finish(r#""stop""#),
    ]);
    let msg = choice.to_message();
    assert_eq!(msg.role, wire::Role::Assistant);
    assert_eq!(msg.content, Some(wire::Content::Text("Hi".into())));
    assert_eq!(
        msg.reasoning_content, None,
        "reasoning only with tool calls"
    );
    assert!(msg.tool_calls.is_empty());
    // An empty answer is still an empty string, not null.
    let msg = one_choice(&[&finish(r#""stop""#)]).to_message();
    assert_eq!(msg.content, Some(wire::Content::Text(String::new())));
}

#[test]
fn to_message_with_tool_calls() {
    let choice = one_choice(&[
        &delta(
            r#"{"role":"assistant","content":null,"reasoning_content":"I should look.","reasoning_details":[{"type":"reasoning.encrypted","data":"abc"}]}"#,
        ),
        &calls(
            r#"{"index":0,"id":"call_x","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}"#,
        ),
        &calls(
            r#"{"index":1,"function":{"name":"list_files","arguments":"{}"},"extra_content":{"google":{"thought_signature":"c2ln"}}}"#,
        ),
        &finish(r#""tool_calls""#),
    ]);
    let msg = choice.to_message();
    assert_eq!(msg.content, None, "no text with tool calls is null content");
    assert_eq!(msg.reasoning_content.as_deref(), Some("I should look."));
    let ids: Vec<&str> = msg.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_x", "call_0_1"], "missing ids are synthesized");
    assert!(msg.tool_calls.iter().all(|c| c.kind == "function"));
    let v = serde_json::to_value(&msg).unwrap();
    assert_eq!(
        v,
        json!({
            "role": "assistant",
            "content": null,
            "reasoning_content": "I should look.",
            "tool_calls": [
                {"id": "call_x", "type": "function",
                 "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}},
                {"id": "call_0_1", "type": "function",
                 "function": {"name": "list_files", "arguments": "{}"},
                 "extra_content": {"google": {"thought_signature": "c2ln"}}}
            ],
            "reasoning_details": [{"type": "reasoning.encrypted", "data": "abc"}]
        })
    );
    // Text and tool calls together keep the text.
    let choice = one_choice(&[
        &delta(r#"{"content":"Let me check."}"#),
        &calls(r#"{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}"#),
    ]);
    let msg = choice.to_message();
    assert_eq!(
        msg.content,
        Some(wire::Content::Text("Let me check.".into()))
    );
    assert_eq!(msg.reasoning_content, None, "no reasoning arrived");
}

#[test]
fn to_message_ids_are_unique_per_choice() {
    let (c, _) = accumulate(&[
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"f","arguments":"{}"}},{"function":{"name":"g","arguments":"{}"}}]}},{"index":1,"delta":{"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}]}"#,
    ]);
    let ids: Vec<String> = c
        .choices
        .iter()
        .flat_map(|ch| ch.to_message().tool_calls)
        .map(|t| t.id)
        .collect();
    assert_eq!(ids, ["call_0_0", "call_0_1", "call_1_0"]);
}

#[test]
fn odd_usage_and_empty_error_placeholders_do_not_fail_the_answer() {
    for chunk in [
        r#"{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":"lots"}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":1.5}}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"a"}}],"error":false}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"a"}}],"error":{}}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"a"}}],"error":""}"#,
    ] {
        let mut acc = Accumulator::new();
        acc.handle_chunk(chunk, &mut VecDeque::new()).unwrap();
        assert_eq!(acc.choices().next().unwrap().content, "a", "{chunk}");
        assert!(acc.usage().is_none());
    }
}

mod fast_path {
    use super::*;
    use proptest::prelude::*;

    /// Chunks of the shapes the fast path learns, and of shapes that break it, with strings
    /// that need escapes, hold quotes, backslashes and control characters, and invalid UTF-8
    /// (as the bytes arrive, before any decoding).
    fn chunk() -> impl Strategy<Value = Vec<u8>> {
        let text = prop_oneof![
            "[a-z ]{0,6}",
            Just("\"".to_owned()),
            Just("\\".to_owned()),
            Just("\n".to_owned()),
            Just("é\u{1F600}".to_owned()),
            Just("\",\"role\":\"x".to_owned()),
            // `§` stands for an invalid sequence, put in after the JSON is written.
            Just("a§b".to_owned()),
            Just("§".to_owned()),
        ];
        let invalid = prop_oneof![
            Just(&b"\xFF"[..]),
            Just(&b"\xC3"[..]),
            Just(&b"\xE2\x82"[..]),
            Just(&b"\xED\xA0\x80"[..]),
        ];
        // The string of a last, varying chunk field (OpenAI's `obfuscation`).
        let pad = prop_oneof![
            "[A-Za-z0-9]{0,5}",
            Just("\"".to_owned()),
            Just("\\".to_owned()),
            Just("\n".to_owned()),
            Just("a§".to_owned()),
        ];
        (0..13u8, text, 0..2u32, 0..3u32, invalid, pad).prop_map(|(kind, t, choice, ix, invalid, pad)| {
            let p = serde_json::to_string(&pad).unwrap();
            let s = serde_json::to_string(&t).unwrap();
            let raw = t.replace(['"', '\\'], "");
            let json = match kind {
                0 => format!(r#"{{"id":"x","choices":[{{"index":{choice},"delta":{{"content":{s}}},"finish_reason":null}}]}}"#),
                1 => format!(r#"{{"id":"x","choices":[{{"index":{choice},"delta":{{"reasoning_content":{s}}}}}]}}"#),
                2 => format!(r#"{{"choices":[{{"index":{choice},"delta":{{"tool_calls":[{{"index":{ix},"function":{{"arguments":{s}}}}}]}}}}]}}"#),
                3 => format!(r#"{{"choices":[{{"index":{choice},"delta":{{"tool_calls":[{{"index":{ix},"id":"c{ix}","function":{{"name":"f","arguments":""}}}}]}}}}]}}"#),
                4 => format!(r#"{{"id":"x","choices":[{{"index":{choice},"delta":{{"content":"{raw}"}},"finish_reason":null}}]}}"#),
                5 => format!(r#"{{"choices":[{{"index":{choice},"delta":{{}},"finish_reason":"stop"}}]}}"#),
                6 => format!(r#"{{"id":"x","choices":[{{"index":{choice},"delta":{{"content":"{raw}\n"}},"finish_reason":null}}]}}"#),
                7 => format!(r#"{{"choices":[{{"index":{choice},"delta":{{"reasoning":{s}}}}}]}}"#),
                9 => format!(r#"{{"id":"x","service_tier":"default","choices":[{{"index":{choice},"delta":{{"content":{s}}},"finish_reason":null}}],"obfuscation":{p}}}"#),
                10 => format!(r#"{{"id":"x","service_tier":"flex","choices":[{{"index":{choice},"delta":{{"content":{s}}},"finish_reason":null}}],"obfuscation":{p}}}"#),
                11 => format!(r#"{{"id":"x","service_tier":{{"a":[{ix}]}},"obfuscation":[{choice}],"choices":[{{"index":{choice},"delta":{{"reasoning_content":{s}}}}}],"n":{ix}}}"#),
                12 => format!(r#"{{"choices":[{{"index":{choice},"delta":{{"tool_calls":[{{"index":{ix},"function":{{"arguments":{s}}}}}]}}}}],"n":null,"provider":{p}}}"#),
                _ => format!(r#"{{"choices":[{{"index":{choice},"delta":{{"tool_calls":[{{"index":{ix},"function":{{"arguments":"{raw}"}}}}]}}}}]}}"#),
            };
            let mut bytes = Vec::new();
            for (i, part) in json.split('§').enumerate() {
                if i > 0 {
                    bytes.extend_from_slice(invalid);
                }
                bytes.extend_from_slice(part.as_bytes());
            }
            bytes
        })
    }

    /// How a chunk's bytes reach the accumulator.
    #[derive(Debug, Clone, Copy)]
    enum Path {
        /// Raw, through the fast path where it fits.
        Bytes,
        /// Raw, always parsed in full.
        BytesFull,
        /// Decoded lossily first, then through the fast path where it fits (as before the
        /// fast path took raw bytes).
        Decoded,
    }

    type Outcome = (Vec<Result<(), String>>, Vec<StreamEvent>, Completion);

    fn run(chunks: &[Vec<u8>], path: Path) -> Outcome {
        let mut acc = Accumulator::new();
        acc.no_fast_path = matches!(path, Path::BytesFull);
        let mut events = VecDeque::new();
        let results = chunks
            .iter()
            .map(|c| {
                let result = match path {
                    Path::Bytes | Path::BytesFull => acc.handle_chunk_bytes(c, &mut events),
                    Path::Decoded => acc.handle_chunk(&String::from_utf8_lossy(c), &mut events),
                };
                result.map_err(|e| e.to_string())
            })
            .collect();
        (results, events.into(), acc.into_completion(true))
    }

    #[test]
    fn invalid_utf8_in_a_known_envelope_is_replaced_as_in_full_parsing() {
        let chunk = |token: &[u8]| {
            let mut c = br#"{"id":"x","choices":[{"index":0,"delta":{"content":""#.to_vec();
            c.extend_from_slice(token);
            c.extend_from_slice(br#""},"finish_reason":null}]}"#);
            c
        };
        let mut acc = Accumulator::new();
        let mut events = VecDeque::new();
        for token in [&b"a"[..], b"b\xFFc", b"\xC3", b"\\n\xE2\x82"] {
            acc.handle_chunk_bytes(&chunk(token), &mut events).unwrap();
        }
        assert_eq!(
            acc.choices().next().unwrap().content,
            "ab\u{FFFD}c\u{FFFD}\n\u{FFFD}"
        );
    }

    proptest! {
        #![proptest_config(crate::proptest_seeds::with_cases(512))]
        #[test]
        fn the_fast_path_equals_full_parsing(chunks in proptest::collection::vec(chunk(), 1..40)) {
            let full = run(&chunks, Path::BytesFull);
            prop_assert_eq!(&run(&chunks, Path::Bytes), &full);
            prop_assert_eq!(&run(&chunks, Path::Decoded), &full);
        }
    }
}
