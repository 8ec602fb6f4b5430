//! The answer-size cap: text, reasoning, refusal and tool arguments counted together, exactly
//! (decoded bytes, not wire bytes), whatever the split; past the cap the stream fails and stops
//! growing.

use super::*;
use serde_json::json;

fn event(delta: serde_json::Value) -> String {
    let chunk = json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]});
    format!("data: {chunk}\n\n")
}

/// 4 bytes of text ("ab" and an escaped "é"), 2 of reasoning, 2 of refusal, 4 of arguments:
/// 12 in all.
fn twelve_byte_answer() -> String {
    let mut body = String::new();
    body.push_str(&event(json!({"role": "assistant", "content": "ab"})));
    body.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\u00e9\"}}]}\n\n");
    body.push_str(&event(json!({"reasoning_content": "rs"})));
    body.push_str(&event(json!({"refusal": "no"})));
    body.push_str(&event(
        json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
        "function": {"name": "echo", "arguments": "{\""}}]}),
    ));
    body.push_str(&event(
        json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"}"}}]}),
    ));
    body.push_str(
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    );
    body.push_str("data: [DONE]\n\n");
    body
}

/// Feeds `body` in pieces of `piece` bytes, draining after each; returns the error, if any, and
/// the bytes of the deltas handed out.
fn run(body: &[u8], piece: usize, cap: usize) -> (Option<StreamError>, usize) {
    let mut stream = ChatStream::with_limits(sse::DEFAULT_MAX_EVENT_SIZE, cap);
    let mut shown = 0;
    let mut error = None;
    for p in body.chunks(piece) {
        stream.feed(p);
        loop {
            match stream.poll_event() {
                Ok(Some(ev)) => shown += delta_len(&ev),
                Ok(None) => break,
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
    }
    let finished = stream.finish();
    assert_eq!(finished.as_ref().err().map(|f| f.error.clone()), error);
    (error, shown)
}

fn delta_len(ev: &StreamEvent) -> usize {
    match ev {
        StreamEvent::ContentDelta { text, .. }
        | StreamEvent::ReasoningDelta { text, .. }
        | StreamEvent::RefusalDelta { text, .. } => text.len(),
        StreamEvent::ToolCallArgumentsDelta { fragment, .. } => fragment.len(),
        _ => 0,
    }
}

#[test]
fn the_cap_counts_decoded_bytes_of_every_kind_whatever_the_split() {
    let body = twelve_byte_answer();
    for piece in [1, 7, body.len()] {
        assert_eq!(run(body.as_bytes(), piece, 12), (None, 12), "piece {piece}");
        let (error, shown) = run(body.as_bytes(), piece, 11);
        assert_eq!(
            error,
            Some(StreamError::AnswerTooLarge { limit: 11 }),
            "piece {piece}"
        );
        assert!(shown <= 11, "nothing past the cap is handed out: {shown}");
    }
}

#[test]
fn an_endless_stream_of_argument_fragments_fails_and_stops_growing() {
    let cap = 64 * 1024;
    let mut stream = ChatStream::with_limits(sse::DEFAULT_MAX_EVENT_SIZE, cap);
    stream.feed(
        event(
            json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
            "function": {"name": "write_file", "arguments": "{\"content\":\""}}]}),
        )
        .as_bytes(),
    );
    let fragment =
        event(json!({"tool_calls": [{"index": 0, "function": {"arguments": "x".repeat(100)}}]}));
    let mut fed = 0;
    let error = loop {
        stream.feed(fragment.as_bytes());
        fed += 1;
        match stream.poll_event() {
            Err(e) => break e,
            Ok(_) => while let Ok(Some(_)) = stream.poll_event() {},
        }
        assert!(fed < 10_000, "the cap never fired");
    };
    assert_eq!(error, StreamError::AnswerTooLarge { limit: cap });
    assert!(
        fed <= cap / 100 + 2,
        "failed as soon as it passed the cap: {fed}"
    );
    // Later bytes are ignored: the answer does not grow past the cap.
    for _ in 0..1000 {
        stream.feed(fragment.as_bytes());
    }
    let held: usize = stream
        .accumulator()
        .choices()
        .flat_map(|c| c.tool_calls.iter())
        .map(|t| t.arguments.len())
        .sum();
    assert!(held <= cap + 200, "{held}");
    let shown = error.to_string();
    assert!(shown.contains("65536 bytes"), "{shown}");
    assert!(shown.contains("maxAnswerBytes"), "{shown}");
}

#[test]
fn the_default_cap_is_in_the_tens_of_mib() {
    assert_eq!(DEFAULT_MAX_ANSWER_BYTES, 32 * 1024 * 1024);
    let body = twelve_byte_answer();
    let mut stream = ChatStream::new();
    stream.feed(body.as_bytes());
    while let Ok(Some(_)) = stream.poll_event() {}
    assert!(stream.finish().is_ok());
}

/// A body of `n` chunks, each made by `chunk`, after a role chunk (no finish, no `[DONE]`: the
/// stream is still going when the cap must have stopped it).
fn endless(n: usize, chunk: impl Fn(usize) -> serde_json::Value) -> String {
    let mut body = event(json!({"role": "assistant"}));
    for i in 0..n {
        body.push_str(&event(chunk(i)));
    }
    body
}

/// `body` with a finish reason and `[DONE]`: an answer that ended.
fn finished(mut body: String) -> String {
    body.push_str(
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    );
    body.push_str("data: [DONE]\n\n");
    body
}

#[test]
fn legacy_function_call_arguments_count_toward_the_cap() {
    // 2 000 chunks of 10 bytes of arguments: 20 000 bytes, no stream event carries them.
    let body = endless(
        2_000,
        |_| json!({"function_call": {"arguments": "0123456789"}}),
    );
    let (error, _) = run(body.as_bytes(), body.len(), 10_000);
    assert_eq!(error, Some(StreamError::AnswerTooLarge { limit: 10_000 }));
    assert_eq!(run(finished(body).as_bytes(), 4096, 30_000).0, None);
}

#[test]
fn unknown_fields_that_grow_count_toward_the_cap() {
    // An appended array (as OpenRouter's `reasoning_details`) and logprobs keep growing.
    let details = endless(
        2_000,
        |i| json!({"reasoning_details": [{"type": "reasoning.text", "text": format!("step {i}")}]}),
    );
    let (error, _) = run(details.as_bytes(), 4096, 10_000);
    assert_eq!(error, Some(StreamError::AnswerTooLarge { limit: 10_000 }));

    let mut logprobs = event(json!({"role": "assistant"}));
    for _ in 0..2_000 {
        let chunk = json!({"choices": [{"index": 0, "delta": {},
            "logprobs": {"content": [{"token": "a", "logprob": -0.5, "bytes": [97]}]}}]});
        logprobs.push_str(&format!("data: {chunk}\n\n"));
    }
    let (error, _) = run(logprobs.as_bytes(), 4096, 10_000);
    assert_eq!(error, Some(StreamError::AnswerTooLarge { limit: 10_000 }));
}

#[test]
fn unknown_fields_that_are_only_replaced_do_not_count() {
    // Each chunk repeats a scalar and an object of scalars: the answer holds one copy of each.
    let body = endless(2_000, |i| {
        json!({"content": "x", "native_finish_reason": null,
            "provider": {"name": "p", "seq": i}, "status": format!("s{i}")})
    });
    // The first chunk adds each key once (well under 200 bytes); the 2 000 repeats add nothing.
    assert_eq!(run(finished(body).as_bytes(), 4096, 2_200), (None, 2_000));
}
