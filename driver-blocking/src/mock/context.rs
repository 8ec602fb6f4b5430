//! What the mock knows about context windows: how long a request is, whether it is a
//! compaction's summary request, and the overflow error it answers with.

use super::Reply;
use hrns_core::context::SUMMARY_PROMPT;
use serde_json::{Value, json};

/// Bytes of request body the mock counts as one token.
pub const MOCK_BYTES_PER_TOKEN: u64 = 4;

/// The tokens the mock counts for a request body.
pub(super) fn request_tokens(body: &[u8]) -> u64 {
    body.len() as u64 / MOCK_BYTES_PER_TOKEN
}

/// Whether `body` is a summary request: no tools, and the summary prompt in a message.
pub(super) fn is_summary_request(body: &[u8]) -> bool {
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    let no_tools = v
        .get("tools")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    no_tools
        && v.get("messages")
            .and_then(Value::as_array)
            .is_some_and(|ms| {
                ms.iter().any(|m| {
                    m.get("content")
                        .and_then(Value::as_str)
                        .is_some_and(|c| c.contains(SUMMARY_PROMPT))
                })
            })
}

/// OpenAI's answer to a request over the window.
pub(super) fn overflow_reply(window: u64, tokens: u64) -> Reply {
    Reply::json(
        400,
        json!({"error": {
            "message": format!("This model's maximum context length is {window} tokens. However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."),
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded"
        }}),
    )
}
