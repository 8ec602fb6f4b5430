//! Recognising a provider's answer that the request is longer than the model's context window,
//! and the window it states.
//!
//! No two servers word it alike:
//!
//! | server | what it says |
//! | --- | --- |
//! | OpenAI, Azure, DeepSeek, Groq, OpenRouter | code `context_length_exceeded`; "This model's maximum context length is 128000 tokens. However, your messages resulted in …" |
//! | vLLM | "This model's maximum context length is 4096 tokens. However, you requested …", "… is longer than the maximum model length of 4096", "Input prompt (5000 tokens) is too long and exceeds limit of 4096" |
//! | Anthropic-compatible | "prompt is too long: 210000 tokens > 200000 maximum" |
//! | llama.cpp | type `exceed_context_size_error`, "the request exceeds the available context size, try increasing it", with `n_ctx` |
//! | Ollama | "input length exceeds the context length", "… exceeds maximum context length" |
//! | Gemini (OpenAI-compatible) | "The input token count (1234567) exceeds the maximum number of tokens allowed (1048576)." |
//! | Mistral | "Prompt contains 40000 tokens … too large for model with 32768 maximum context length" |
//! | any proxy | HTTP 413 |
//!
//! A 429 is never an overflow: "Request too large … tokens per min" is a rate limit.

use crate::wire::ApiError;
use serde_json::Value;

/// Lower-case phrases that mark an overflow message.
const PHRASES: &[&str] = &[
    "context_length_exceeded",
    "maximum context length",
    "max context length",
    "context length exceeded",
    "prompt is too long",
    "input is too long",
    "exceeds the available context size",
    "exceed_context_size_error",
    "maximum model length",
    "is too long and exceeds limit",
    "exceeds the maximum number of tokens",
    "exceeds the context length",
    "exceeds the context window",
    "exceeds maximum context length",
    "reduce the length of the messages",
];

/// Phrases followed by the window, in order of trust.
const WINDOW_AFTER: &[&str] = &[
    "maximum context length is",
    "maximum number of tokens allowed",
    "maximum model length of",
    "exceeds limit of",
    "context window of",
    "context length of",
    "tokens >",
];

/// Phrases preceded by the window.
const WINDOW_BEFORE: &[&str] = &["maximum context length", "max context length"];

/// Smallest number taken as a window.
const MIN_WINDOW: u64 = 256;

/// A provider's "the request is too long" answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow {
    /// The window the message states, when it states one.
    pub window: Option<u64>,
}

/// Whether an error answer (`status` for an HTTP error, `None` for an error inside a stream)
/// says the request was too long for the context window.
pub fn recognise_overflow(status: Option<u16>, error: &ApiError) -> Option<Overflow> {
    if status == Some(429) {
        return None;
    }
    let message = error.message.to_lowercase();
    let code = match &error.code {
        Some(Value::String(s)) => s.to_lowercase(),
        _ => String::new(),
    };
    let kind = error.kind.as_deref().unwrap_or("").to_lowercase();
    let matched = status == Some(413)
        || PHRASES
            .iter()
            .any(|p| message.contains(p) || code.contains(p) || kind.contains(p));
    if !matched {
        return None;
    }
    let n_ctx = ["n_ctx", "max_context_length", "context_length"]
        .iter()
        .find_map(|f| error.extra.get(*f).and_then(Value::as_u64))
        .filter(|n| *n >= MIN_WINDOW);
    let window = n_ctx
        .or_else(|| WINDOW_AFTER.iter().find_map(|p| number_after(&message, p)))
        .or_else(|| {
            WINDOW_BEFORE
                .iter()
                .find_map(|p| number_before(&message, p))
        });
    Some(Overflow { window })
}

/// The number that follows `phrase` within a few characters ("is 4096", "(1048576)",
/// "128,000").
fn number_after(text: &str, phrase: &str) -> Option<u64> {
    let at = text.find(phrase)? + phrase.len();
    let rest = &text[at..];
    let start = rest.find(|c: char| c.is_ascii_digit())?;
    if start > 4 || rest[..start].chars().any(|c| c.is_alphabetic()) {
        return None;
    }
    parse_digits(&rest[start..])
}

/// The number just before `phrase` ("32768 maximum context length").
fn number_before(text: &str, phrase: &str) -> Option<u64> {
    let at = text.find(phrase)?;
    let head = text[..at].trim_end();
    let start = head
        .rfind(|c: char| !(c.is_ascii_digit() || c == ','))
        .map_or(0, |i| i + 1);
    parse_digits(&head[start..])
}

/// Digits (commas and underscores allowed between them) at the start of `s`.
fn parse_digits(s: &str) -> Option<u64> {
    let digits: String = s
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '_')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|n| *n >= MIN_WINDOW)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn api(v: Value) -> ApiError {
        ApiError::from_body(v.to_string().as_bytes())
    }

    #[test]
    fn every_known_wording_is_recognised_with_its_window() {
        let cases: Vec<(Option<u16>, ApiError, Option<u64>)> = vec![
            (
                Some(400),
                api(
                    json!({"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}),
                ),
                Some(128000),
            ),
            (
                Some(400),
                api(
                    json!({"error":{"message":"Invalid request","code":"context_length_exceeded"}}),
                ),
                None,
            ),
            (
                Some(400),
                api(
                    json!({"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4096 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}),
                ),
                Some(4096),
            ),
            (
                Some(400),
                api(
                    json!({"object":"error","message":"The decoder prompt (length 9000) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens.","type":"BadRequestError","code":400}),
                ),
                Some(8192),
            ),
            (
                Some(400),
                api(
                    json!({"error":{"message":"Input prompt (5000 tokens) is too long and exceeds limit of 4,096","code":400}}),
                ),
                Some(4096),
            ),
            (
                Some(400),
                api(
                    json!({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210417 tokens > 200000 maximum"}}),
                ),
                Some(200000),
            ),
            (
                Some(400),
                api(
                    json!({"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5123,"n_ctx":4096}}),
                ),
                Some(4096),
            ),
            (
                Some(400),
                api(
                    json!({"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"invalid_request_error"}}),
                ),
                None,
            ),
            (
                Some(400),
                api(
                    json!({"error":{"message":"the input length exceeds the context length","type":"api_error"}}),
                ),
                None,
            ),
            (
                Some(500),
                api(json!({"error":"input length exceeds maximum context length"})),
                None,
            ),
            (
                Some(400),
                api(
                    json!([{"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]),
                ),
                Some(1048576),
            ),
            (
                Some(400),
                api(
                    json!({"error":{"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).","code":400}}),
                ),
                Some(1048576),
            ),
            (
                Some(400),
                api(
                    json!({"object":"error","message":"Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_message_error"}),
                ),
                Some(32768),
            ),
            (
                Some(413),
                ApiError::from_body(b"<html>413 Request Entity Too Large</html>"),
                None,
            ),
            (
                None,
                api(
                    json!({"message":"This endpoint's maximum context length is 163840 tokens. However, you requested about 200000 tokens","code":400}),
                ),
                Some(163840),
            ),
        ];
        for (status, error, window) in cases {
            assert_eq!(
                recognise_overflow(status, &error),
                Some(Overflow { window }),
                "{status:?} {error:?}"
            );
        }
    }

    #[test]
    fn other_errors_are_not_overflows() {
        let cases: Vec<(Option<u16>, ApiError)> = vec![
            (
                Some(429),
                api(
                    json!({"error":{"message":"Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 50000.","code":"rate_limit_exceeded"}}),
                ),
            ),
            (
                Some(429),
                api(
                    json!({"error":{"message":"This model's maximum context length is 8192 tokens"}}),
                ),
            ),
            (
                Some(401),
                api(
                    json!({"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}),
                ),
            ),
            (
                Some(400),
                api(
                    json!({"error":{"message":"Unrecognized request argument supplied: stream_options"}}),
                ),
            ),
            (
                Some(404),
                api(json!({"error":{"message":"The model `gpt-9` does not exist"}})),
            ),
            (
                None,
                api(json!({"error":{"message":"overloaded","code":503}})),
            ),
            (Some(400), ApiError::default()),
        ];
        for (status, error) in cases {
            assert_eq!(recognise_overflow(status, &error), None, "{error:?}");
        }
    }

    #[test]
    fn numbers_are_read_carefully() {
        assert_eq!(number_after("is 128,000 tokens", "is"), Some(128000));
        assert_eq!(number_after("is about 4096", "is"), None, "words between");
        assert_eq!(number_after("is 12", "is"), None, "too small for a window");
        assert_eq!(number_after("is", "is"), None);
        assert_eq!(number_before("with 32768 maximum", "maximum"), Some(32768));
        assert_eq!(number_before("maximum", "maximum"), None);
        assert_eq!(parse_digits("99999999999999999999999"), None);
    }
}
