//! What the accumulator reports as a stream arrives: the deltas a UI shows.

use super::{DeltaText, FinishReason};
use crate::wire::Usage;
use serde::{Deserialize, Serialize};

/// Something new in the stream, for a UI to show as it arrives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// Text was appended to a choice.
    ContentDelta {
        /// The choice index.
        choice: u32,
        /// The new text.
        text: DeltaText,
    },
    /// Reasoning text was appended to a choice.
    ReasoningDelta {
        /// The choice index.
        choice: u32,
        /// The new reasoning text.
        text: DeltaText,
    },
    /// Refusal text was appended to a choice.
    RefusalDelta {
        /// The choice index.
        choice: u32,
        /// The new refusal text.
        text: DeltaText,
    },
    /// A new tool call started.
    ToolCallBegin {
        /// The choice index.
        choice: u32,
        /// The call's position among the choice's calls, in order of arrival; later events
        /// about the call carry the same number.
        call: usize,
        /// The call id, if the first fragment had one.
        id: Option<String>,
        /// The tool name, if the first fragment had one.
        name: Option<String>,
    },
    /// A fragment of a tool call's arguments arrived.
    ToolCallArgumentsDelta {
        /// The choice index.
        choice: u32,
        /// The call's position (see [`StreamEvent::ToolCallBegin`]).
        call: usize,
        /// The new piece of the arguments text.
        fragment: DeltaText,
    },
    /// A choice got its finish reason.
    ChoiceFinished {
        /// The choice index.
        choice: u32,
        /// Why it finished.
        reason: FinishReason,
    },
    /// The provider reported token usage.
    Usage(Usage),
    /// The provider sent `[DONE]`.
    Done,
}
