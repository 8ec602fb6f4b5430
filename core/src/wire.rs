//! Serde mirrors of the OpenAI chat-completions JSON.
//!
//! Every type keeps the fields it does not know in `extra` and writes them back unchanged, so a
//! provider's own additions (`reasoning_details`, Gemini's thought signatures, `x_groq`, …)
//! survive a round trip through the history. These owned types are for requests, history and
//! non-streaming answers; the streaming hot path parses chunks with borrowed views of its own
//! (see [`crate::accumulate`]). Owned mirrors of streamed chunks (`ChatChunk` and its parts) exist
//! only for tests, which build and inspect chunks with them, behind the `test-support` feature.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

#[cfg(any(test, feature = "test-support"))]
mod chunk;
#[cfg(any(test, feature = "test-support"))]
pub use chunk::{ChatChunk, ChunkChoice, Delta, FunctionDelta, ToolCallDelta};

/// Unknown JSON fields kept verbatim, in the order they arrived.
pub type Extra = serde_json::Map<String, Value>;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions from the harness.
    System,
    /// OpenAI's newer name for system instructions to reasoning models.
    Developer,
    /// The person using hrns.
    User,
    /// The model.
    Assistant,
    /// The result of a tool call.
    Tool,
    /// The legacy (pre-`tools`) function result role.
    Function,
}

impl Role {
    /// The role as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Function => "function",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Message content: plain text, or a list of typed parts (text, images, …) passed through as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// A plain string.
    Text(String),
    /// Content parts such as `{"type":"text","text":…}` or `{"type":"image_url",…}`.
    Parts(Vec<Value>),
}

impl Content {
    /// The text of the content: the string itself, or the `text` of every text part joined.
    pub fn text(&self) -> String {
        match self {
            Content::Text(s) => s.clone(),
            Content::Parts(parts) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
        }
    }
}

impl From<&str> for Content {
    fn from(s: &str) -> Self {
        Content::Text(s.to_owned())
    }
}

impl From<String> for Content {
    fn from(s: String) -> Self {
        Content::Text(s)
    }
}

/// One message of a conversation, as sent in a request and kept in the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// The content; `null` for an assistant message that only calls tools.
    #[serde(default)]
    pub content: Option<Content>,
    /// An optional participant name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The model's reasoning, sent back on assistant messages that call tools: DeepSeek- and
    /// Kimi-style thinking models reject a tool-call continuation without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// A refusal message from the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// The tool calls of an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// On a tool message: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Fields this type does not know, kept and sent back.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Message {
    fn with(role: Role, content: Option<Content>) -> Self {
        Message {
            role,
            content,
            name: None,
            reasoning_content: None,
            refusal: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            extra: Extra::new(),
        }
    }

    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self::with(Role::System, Some(Content::Text(text.into())))
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::with(Role::User, Some(Content::Text(text.into())))
    }

    /// An assistant message with text only.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::with(Role::Assistant, Some(Content::Text(text.into())))
    }

    /// A tool result answering the call `call_id`.
    pub fn tool(call_id: impl Into<String>, text: impl Into<String>) -> Self {
        let mut m = Self::with(Role::Tool, Some(Content::Text(text.into())));
        m.tool_call_id = Some(call_id.into());
        m
    }

    /// The message's text (empty when it has none).
    pub fn text(&self) -> String {
        self.content.as_ref().map(Content::text).unwrap_or_default()
    }
}

/// A complete tool call of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id that the tool result must quote.
    pub id: String,
    /// Always `"function"` today.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// Which function, with which arguments.
    pub function: FunctionCall,
    /// Unknown fields (for example Gemini's `extra_content` thought signature), sent back.
    #[serde(flatten)]
    pub extra: Extra,
}

fn function_type() -> String {
    "function".to_owned()
}

/// The function part of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The tool's name.
    pub name: String,
    /// The arguments as the model wrote them: a JSON text, not yet validated.
    #[serde(default)]
    pub arguments: String,
    /// Unknown fields, sent back.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `stream_options` of a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamOptions {
    /// Ask for a final usage chunk.
    pub include_usage: bool,
}

/// A `/chat/completions` request body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model name.
    pub model: String,
    /// The conversation.
    pub messages: Vec<Message>,
    /// Tool definitions (`{"type":"function","function":{…}}`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Value>,
    /// Whether to stream the answer as server-sent events.
    #[serde(default)]
    pub stream: bool,
    /// Streaming options; some providers reject the field, so it is optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Limit on generated tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Reasoning effort for reasoning models (`low`, `medium`, `high`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Any other request fields, passed through.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Token counts of one answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens in the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// Tokens generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    /// Their sum, as the provider reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    /// Details such as `prompt_tokens_details`, kept as sent.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A non-streaming `/chat/completions` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The completion id.
    #[serde(default)]
    pub id: Option<String>,
    /// The model that answered.
    #[serde(default)]
    pub model: Option<String>,
    /// The answers.
    #[serde(default)]
    pub choices: Vec<ResponseChoice>,
    /// Token counts.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One choice of a non-streaming answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseChoice {
    /// The choice index.
    #[serde(default)]
    pub index: u32,
    /// The complete message.
    pub message: Message,
    /// Why it ended.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The `/models` list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelList {
    /// The models.
    #[serde(default)]
    pub data: Vec<ModelInfo>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One entry of the `/models` list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The name to put in `model`.
    pub id: String,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// An error object from a provider, in an error response or in the stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ApiError {
    /// The provider's message.
    #[serde(default)]
    pub message: String,
    /// The provider's error type (`invalid_request_error`, …).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// A code, string or number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Value>,
    /// The request parameter at fault, when the provider names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<Value>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

impl ApiError {
    /// Reads the error out of a provider's error body, whatever its shape: `{"error":{…}}`,
    /// `{"error":"text"}`, `{"message":…}`, FastAPI's `{"detail":…}`, or plain text.
    ///
    /// Never fails: an unreadable body becomes the message (shortened to a few hundred bytes).
    pub fn from_body(body: &[u8]) -> ApiError {
        let Ok(value) = serde_json::from_slice::<Value>(body) else {
            return ApiError {
                message: crate::text::shorten(&String::from_utf8_lossy(body), 400).into_owned(),
                ..ApiError::default()
            };
        };
        Self::from_value(&value).unwrap_or_else(|| ApiError {
            message: crate::text::shorten(&value.to_string(), 400).into_owned(),
            ..ApiError::default()
        })
    }

    /// Reads an error object out of a JSON value; `None` when it holds none.
    pub fn from_value(value: &Value) -> Option<ApiError> {
        let obj = value.as_object()?;
        match obj.get("error") {
            Some(Value::String(s)) => {
                return Some(ApiError {
                    message: s.clone(),
                    ..ApiError::default()
                });
            }
            Some(inner @ Value::Object(_)) => {
                let mut err: ApiError = serde_json::from_value(inner.clone()).ok()?;
                if err.message.is_empty() {
                    err.message = inner.to_string();
                }
                return Some(err);
            }
            _ => {}
        }
        if let Some(Value::String(m)) = obj.get("message") {
            let mut err: ApiError = serde_json::from_value(value.clone()).unwrap_or_default();
            err.message = m.clone();
            return Some(err);
        }
        match obj.get("detail") {
            Some(Value::String(d)) => Some(ApiError {
                message: d.clone(),
                ..ApiError::default()
            }),
            Some(d @ (Value::Array(_) | Value::Object(_))) => Some(ApiError {
                message: d.to_string(),
                ..ApiError::default()
            }),
            _ => None,
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            f.write_str("(no message)")?;
        } else {
            f.write_str(&self.message)?;
        }
        match (&self.kind, &self.code) {
            (Some(kind), Some(code)) => write!(f, " ({kind}, code {code})"),
            (Some(kind), None) => write!(f, " ({kind})"),
            (None, Some(code)) => write!(f, " (code {code})"),
            (None, None) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_round_trip_on_every_type() {
        let msg = json!({
            "role": "assistant",
            "content": null,
            "reasoning_content": "think",
            "reasoning_details": [{"type": "reasoning.text", "text": "think"}],
            "tool_calls": [{
                "id": "call_1",
                "type": "function",
                "function": {"name": "f", "arguments": "{}", "strict": true},
                "extra_content": {"google": {"thought_signature": "sig"}}
            }]
        });
        let parsed: Message = serde_json::from_value(msg.clone()).unwrap();
        assert_eq!(
            parsed.tool_calls[0].extra["extra_content"]["google"]["thought_signature"],
            "sig"
        );
        assert_eq!(serde_json::to_value(&parsed).unwrap(), msg);

        let req = json!({"model": "m", "messages": [], "stream": true, "top_k": 3, "seed": 1});
        let parsed: ChatRequest = serde_json::from_value(req.clone()).unwrap();
        assert_eq!(serde_json::to_value(&parsed).unwrap(), req);

        let chunk = json!({"id": "x", "choices": [{"index": 0, "delta": {"content": "a", "p": 1},
            "finish_reason": null, "native_finish_reason": null}], "provider": "P"});
        let parsed: ChatChunk = serde_json::from_value(chunk).unwrap();
        assert_eq!(parsed.extra["provider"], "P");
        assert_eq!(parsed.choices[0].delta.extra["p"], 1);
        assert!(parsed.choices[0].extra.contains_key("native_finish_reason"));

        let usage = json!({"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": 0}});
        let parsed: Usage = serde_json::from_value(usage.clone()).unwrap();
        assert_eq!(serde_json::to_value(&parsed).unwrap(), usage);
    }

    #[test]
    fn content_parts_pass_through() {
        let m = json!({"role": "user", "content": [{"type": "text", "text": "hi "},
            {"type": "image_url", "image_url": {"url": "data:,"}}, {"type": "text", "text": "there"}]});
        let parsed: Message = serde_json::from_value(m.clone()).unwrap();
        assert_eq!(parsed.text(), "hi there");
        assert_eq!(serde_json::to_value(&parsed).unwrap(), m);
    }

    #[test]
    fn assistant_tool_call_message_serializes_null_content() {
        let mut m = Message::assistant("");
        m.content = None;
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(v, json!({"role": "assistant", "content": null}));
    }

    #[test]
    fn api_error_from_every_body_shape() {
        let e = ApiError::from_body(
            br#"{"error":{"message":"bad key","type":"auth","code":"invalid_api_key"}}"#,
        );
        assert_eq!(e.message, "bad key");
        assert_eq!(e.to_string(), "bad key (auth, code \"invalid_api_key\")");
        assert_eq!(
            ApiError::from_body(br#"{"error":"overloaded"}"#).message,
            "overloaded"
        );
        assert_eq!(
            ApiError::from_body(
                br#"{"object":"error","message":"m","type":"BadRequestError","code":400}"#
            )
            .message,
            "m"
        );
        assert_eq!(
            ApiError::from_body(br#"{"detail":"Not Found"}"#).message,
            "Not Found"
        );
        assert_eq!(
            ApiError::from_body(b"<html>502 Bad Gateway</html>").message,
            "<html>502 Bad Gateway</html>"
        );
        let long = vec![b'x'; 10_000];
        assert!(ApiError::from_body(&long).message.len() < 500);
        assert_eq!(ApiError::from_body(b"").message, "");
        assert_eq!(ApiError::from_body(b"[1,2]").message, "[1,2]");
    }
}
