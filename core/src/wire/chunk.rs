//! Owned mirrors of streamed `chat.completion.chunk`s, for tests that build and inspect chunks.
//!
//! Production never needs them: the accumulator parses chunks with borrowed views of its own, so
//! these exist only under `cfg(test)` and the `test-support` feature, which the crate's own
//! integration tests enable through a dev-dependency on the crate itself.

use super::{Extra, Usage};
use serde::{Deserialize, Serialize};

/// One streamed `chat.completion.chunk`, owned. For building and inspecting chunks; the
/// accumulator parses chunks with its own zero-copy views.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatChunk {
    /// The completion id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `"chat.completion.chunk"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// Unix time of creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<u64>,
    /// The model that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Per-choice deltas; empty for usage-only and filter-result chunks.
    #[serde(default)]
    pub choices: Vec<ChunkChoice>,
    /// Usage, usually on a last chunk with no choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One choice of a chunk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChunkChoice {
    /// Which choice this delta extends.
    #[serde(default)]
    pub index: Option<u32>,
    /// What is new.
    #[serde(default)]
    pub delta: Delta,
    /// Why the choice ended, on its last chunk.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The new parts of a choice in one chunk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// The role, usually only on the first chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Text to append.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Reasoning text (DeepSeek, Kimi, vLLM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Reasoning text (OpenRouter, Groq, Ollama).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Refusal text to append.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// Tool-call fragments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallDelta>,
    /// Legacy function-call fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_call: Option<FunctionDelta>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A fragment of a tool call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCallDelta {
    /// Which call of the choice this fragment extends (missing or null on some providers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// The call id, on the first fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `"function"`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name and argument fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionDelta>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A fragment of a function call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionDelta {
    /// The function name, on the first fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A piece of the arguments text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}
