//! Builders for realistic `chat.completion.chunk` JSON, one SSE event's data each.
//!
//! Every function returns the JSON text of one streamed chunk in the shape OpenAI-compatible
//! servers send, ready to hand to [`Reply::sse`](super::Reply::sse):
//!
//! ```text
//! {"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model",
//!  "choices":[{"index":0,"delta":{...},"finish_reason":null}]}
//! ```
//!
//! Keys come out in that fixed order whatever `serde_json` features are enabled, and every
//! string argument is escaped by `serde_json`, so quotes, newlines and non-ASCII text are safe.

use serde_json::Value;

/// The `id` of every chunk these helpers build.
pub const CHUNK_ID: &str = "chatcmpl-mock";

/// The `model` of every chunk these helpers build, and the mock provider's default model.
pub const MODEL: &str = "mock-model";

/// A chunk whose single choice carries `delta` and `finish_reason` (`None` gives `null`).
///
/// The escape hatch for shapes the other helpers do not cover; `delta`'s own keys come out in
/// `serde_json`'s map order.
pub fn delta_chunk(delta: &Value, finish_reason: Option<&str>) -> String {
    envelope(&delta.to_string(), finish_reason)
}

/// The opening chunk most providers send: `{"role":"assistant","content":""}`.
pub fn role_chunk() -> String {
    envelope(r#"{"role":"assistant","content":""}"#, None)
}

/// A chunk with a piece of answer text: `{"content":content}`.
pub fn text_chunk(content: &str) -> String {
    envelope(&format!(r#"{{"content":{}}}"#, quote(content)), None)
}

/// A chunk with a piece of reasoning, DeepSeek style: `{"reasoning_content":text}`.
pub fn reasoning_chunk(text: &str) -> String {
    envelope(&format!(r#"{{"reasoning_content":{}}}"#, quote(text)), None)
}

/// A chunk with one tool-call delta at `index`.
///
/// The first delta of a call usually carries `id` and `name` (then `"type":"function"` is
/// added too) and an empty `args_fragment`; later deltas pass `None` for both and carry the
/// next piece of the arguments' JSON text.
pub fn tool_call_chunk(
    index: usize,
    id: Option<&str>,
    name: Option<&str>,
    args_fragment: &str,
) -> String {
    let mut call = format!(r#"{{"index":{index}"#);
    if let Some(id) = id {
        call.push_str(&format!(r#","id":{},"type":"function""#, quote(id)));
    }
    call.push_str(r#","function":{"#);
    if let Some(name) = name {
        call.push_str(&format!(r#""name":{},"#, quote(name)));
    }
    call.push_str(&format!(r#""arguments":{}}}}}"#, quote(args_fragment)));
    envelope(&format!(r#"{{"tool_calls":[{call}]}}"#), None)
}

/// The closing chunk of a choice: an empty delta and `finish_reason` set to `reason`
/// (`"stop"`, `"length"`, `"tool_calls"`, ...).
pub fn finish_chunk(reason: &str) -> String {
    envelope("{}", Some(reason))
}

/// The usage chunk sent after the finish chunk when `stream_options.include_usage` is on:
/// no choices and a `usage` object whose `total_tokens` is the sum.
pub fn usage_chunk(prompt_tokens: u64, completion_tokens: u64) -> String {
    let total = prompt_tokens.saturating_add(completion_tokens);
    format!(
        r#"{{"id":"{CHUNK_ID}","object":"chat.completion.chunk","created":0,"model":"{MODEL}","choices":[],"usage":{{"prompt_tokens":{prompt_tokens},"completion_tokens":{completion_tokens},"total_tokens":{total}}}}}"#
    )
}

/// Wraps the JSON text of a delta in the chunk envelope.
fn envelope(delta: &str, finish_reason: Option<&str>) -> String {
    let finish = finish_reason.map_or_else(|| "null".to_owned(), quote);
    format!(
        r#"{{"id":"{CHUNK_ID}","object":"chat.completion.chunk","created":0,"model":"{MODEL}","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#
    )
}

/// `s` as a JSON string literal, escaped.
fn quote(s: &str) -> String {
    Value::from(s).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn parse(chunk: &str) -> Value {
        serde_json::from_str(chunk).expect("chunk is valid JSON")
    }

    #[test]
    fn envelope_has_the_openai_shape_in_order() {
        assert_eq!(
            text_chunk("hi"),
            r#"{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}"#
        );
    }

    #[test]
    fn deltas() {
        let table: [(String, Value, Value); 7] = [
            (
                role_chunk(),
                json!({"role": "assistant", "content": ""}),
                Value::Null,
            ),
            (
                text_chunk("a\"b\n\u{e9}"),
                json!({"content": "a\"b\n\u{e9}"}),
                Value::Null,
            ),
            (
                reasoning_chunk("hmm"),
                json!({"reasoning_content": "hmm"}),
                Value::Null,
            ),
            (
                tool_call_chunk(1, Some("call_1"), Some("read_file"), ""),
                json!({"tool_calls": [{"index": 1, "id": "call_1", "type": "function",
                    "function": {"name": "read_file", "arguments": ""}}]}),
                Value::Null,
            ),
            (
                tool_call_chunk(0, None, None, "{\"pa"),
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"pa"}}]}),
                Value::Null,
            ),
            (finish_chunk("stop"), json!({}), json!("stop")),
            (
                delta_chunk(&json!({"refusal": "no"}), Some("length")),
                json!({"refusal": "no"}),
                json!("length"),
            ),
        ];
        for (chunk, delta, finish) in table {
            let v = parse(&chunk);
            assert_eq!(v["id"], CHUNK_ID, "{chunk}");
            assert_eq!(v["object"], "chat.completion.chunk", "{chunk}");
            assert_eq!(v["model"], MODEL, "{chunk}");
            assert_eq!(v["choices"][0]["index"], 0, "{chunk}");
            assert_eq!(v["choices"][0]["delta"], delta, "{chunk}");
            assert_eq!(v["choices"][0]["finish_reason"], finish, "{chunk}");
        }
    }

    #[test]
    fn usage() {
        let v = parse(&usage_chunk(12, 30));
        assert_eq!(v["choices"], json!([]));
        assert_eq!(
            v["usage"],
            json!({"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42})
        );
    }
}
