//! What accumulation produces: complete choices, their tool calls and why each ended.

use crate::wire::{self, Extra, Message, Usage};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// Why a choice ended.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FinishReason {
    /// The model finished its answer.
    Stop,
    /// The token limit cut the answer off.
    Length,
    /// The model wants tools run.
    ToolCalls,
    /// A content filter stopped the answer.
    ContentFilter,
    /// Legacy single function call.
    FunctionCall,
    /// Anything else a provider sends (`end_turn`, `eos`, …), kept as sent.
    Other(String),
}

impl FinishReason {
    /// Reads a provider's finish reason; `None` for the empty string, which some providers send
    /// on chunks that do not finish anything.
    pub fn parse(s: &str) -> Option<FinishReason> {
        Some(match s {
            "" => return None,
            "stop" => FinishReason::Stop,
            "length" => FinishReason::Length,
            "tool_calls" => FinishReason::ToolCalls,
            "content_filter" => FinishReason::ContentFilter,
            "function_call" => FinishReason::FunctionCall,
            other => FinishReason::Other(other.to_owned()),
        })
    }

    /// The reason as the wire spells it.
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::FunctionCall => "function_call",
            FinishReason::Other(s) => s,
        }
    }
}

impl fmt::Display for FinishReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FinishReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for FinishReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        FinishReason::parse(&s).ok_or_else(|| serde::de::Error::custom("empty finish reason"))
    }
}

/// A tool call put together from its fragments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallParts {
    /// The provider's `index`, or the call's position among the choice's calls when the
    /// provider sent none.
    pub index: u32,
    /// The call id; `None` when the provider never sent one.
    pub id: Option<String>,
    /// The `type` (always `function` today).
    pub kind: Option<String>,
    /// The function name; empty when the provider never sent one.
    pub name: String,
    /// The concatenated argument fragments.
    pub arguments: String,
    /// Unknown fields of the `function` object.
    pub function_extra: Extra,
    /// Unknown fields of the tool call (Gemini's thought signature, …).
    pub extra: Extra,
}

/// A legacy `function_call` put together from its fragments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionCallParts {
    /// The function name.
    pub name: String,
    /// The concatenated arguments.
    pub arguments: String,
}

/// One choice, complete or in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// The choice index.
    pub index: u32,
    /// The first non-empty role (normally `assistant`).
    pub role: Option<String>,
    /// The text.
    pub content: String,
    /// The reasoning text, if any arrived.
    pub reasoning: Option<String>,
    /// The refusal text, if any arrived.
    pub refusal: Option<String>,
    /// Tool calls, ordered by index.
    pub tool_calls: Vec<ToolCallParts>,
    /// A legacy function call.
    pub function_call: Option<FunctionCallParts>,
    /// The last non-empty finish reason.
    pub finish_reason: Option<FinishReason>,
    /// Log probabilities, merged across chunks.
    pub logprobs: Option<Value>,
    /// Unknown fields of the deltas (such as `reasoning_details`); sent back in the history.
    pub extra: Extra,
    /// Unknown fields of the choice objects themselves (`native_finish_reason`, `stop_reason`):
    /// metadata about the answer, not part of the message.
    pub meta: Extra,
}

impl Choice {
    pub(super) fn new(index: u32) -> Self {
        Choice {
            index,
            role: None,
            content: String::new(),
            reasoning: None,
            refusal: None,
            tool_calls: Vec::new(),
            function_call: None,
            finish_reason: None,
            logprobs: None,
            extra: Extra::new(),
            meta: Extra::new(),
        }
    }

    /// The assistant message for the history.
    ///
    /// A message with tool calls keeps its reasoning in `reasoning_content`, which DeepSeek-
    /// and Kimi-style providers require on a tool-call continuation. A tool call without an id
    /// gets a stable one (`call_<choice>_<n>`) so its result can refer to it, and an id used by
    /// an earlier call is renamed by [`crate::history::unique_call_ids`].
    pub fn to_message(&self) -> Message {
        self.clone().into_message()
    }

    /// [`Choice::to_message`], moving the choice's text into the message instead of copying
    /// it: a session keeps one copy of a long answer, not two (issue 36's peak memory).
    pub fn into_message(self) -> Message {
        let index = self.index;
        let calls_only = self.content.is_empty() && !self.tool_calls.is_empty();
        let mut msg = Message::assistant(self.content);
        if calls_only {
            msg.content = None;
        }
        msg.refusal = self.refusal;
        msg.tool_calls = self
            .tool_calls
            .into_iter()
            .enumerate()
            .map(|(n, call)| wire::ToolCall {
                id: call.id.unwrap_or_else(|| format!("call_{index}_{n}")),
                kind: call.kind.unwrap_or_else(|| "function".to_owned()),
                function: wire::FunctionCall {
                    name: call.name,
                    arguments: call.arguments,
                    extra: call.function_extra,
                },
                extra: call.extra,
            })
            .collect();
        // Two calls the provider gave the same id (at different indexes) are kept apart here.
        crate::history::unique_call_ids(&mut msg.tool_calls);
        if !msg.tool_calls.is_empty() {
            msg.reasoning_content = self.reasoning;
        }
        msg.extra = self.extra;
        msg
    }
}

/// A provider's streamed answer, put together.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// The completion id of the first chunk that had one.
    pub id: Option<String>,
    /// The model of the first chunk that named one.
    pub model: Option<String>,
    /// The choices, ordered by index.
    pub choices: Vec<Choice>,
    /// The last usage the provider reported.
    pub usage: Option<Usage>,
    /// Whether the stream ended with `[DONE]`.
    pub done: bool,
    /// Unknown top-level chunk fields (`provider`, `x_groq`, …), merged.
    pub extra: Extra,
}
