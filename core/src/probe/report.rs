//! What a probe reports: one finding per check, and the quirks learned.

use crate::quirks::ProviderQuirks;
use serde::Serialize;

/// What the probe checks, in the order of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// The server answers HTTP, and how (TLS verified, TLS unverified, plain HTTP).
    Reachable,
    /// The key is accepted (or none is needed).
    Authentication,
    /// `GET /models` answers a list.
    Models,
    /// The chosen model is in that list.
    ModelListed,
    /// The list reports the model's context window.
    ContextWindow,
    /// A non-streamed chat completion.
    Chat,
    /// A streamed chat completion, with time to first token and tokens per second.
    Streaming,
    /// `stream_options.include_usage` accepted, and a usage chunk sent.
    StreamUsage,
    /// A tool call in a non-streamed answer, with `tool_choice: "auto"`.
    Tools,
    /// A tool call in a streamed answer, with `tool_choice: "auto"`.
    ToolsStreamedAuto,
    /// A tool call in a streamed answer without `tool_choice` (as sessions ask).
    ToolsStreamed,
    /// Two tool calls in one answer.
    ParallelToolCalls,
    /// The names of the fields reasoning arrived in.
    Reasoning,
    /// `max_tokens` or `max_completion_tokens`.
    TokenLimitField,
    /// Deviations in the stream that the accumulator absorbed.
    StreamQuirks,
    /// `response_format: {"type": "json_schema"}` accepted, and the answer matching it.
    StructuredOutput,
}

impl Check {
    /// Every check, in report order.
    pub const ALL: [Check; 16] = [
        Check::Reachable,
        Check::Authentication,
        Check::Models,
        Check::ModelListed,
        Check::ContextWindow,
        Check::Chat,
        Check::Streaming,
        Check::StreamUsage,
        Check::Tools,
        Check::ToolsStreamedAuto,
        Check::ToolsStreamed,
        Check::ParallelToolCalls,
        Check::Reasoning,
        Check::TokenLimitField,
        Check::StreamQuirks,
        Check::StructuredOutput,
    ];

    /// A short title for the table.
    pub fn title(self) -> &'static str {
        match self {
            Check::Reachable => "reachable, TLS",
            Check::Authentication => "authentication",
            Check::Models => "/models",
            Check::ModelListed => "model listed",
            Check::ContextWindow => "context window",
            Check::Chat => "chat",
            Check::Streaming => "streaming chat",
            Check::StreamUsage => "stream usage",
            Check::Tools => "tools",
            Check::ToolsStreamedAuto => "tools streamed, auto",
            Check::ToolsStreamed => "tools streamed",
            Check::ParallelToolCalls => "parallel tool calls",
            Check::Reasoning => "reasoning fields",
            Check::TokenLimitField => "token limit field",
            Check::StreamQuirks => "stream quirks",
            Check::StructuredOutput => "structured output",
        }
    }
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Works as hrns expects.
    Ok,
    /// Works with a limitation hrns works around.
    Degraded,
    /// The provider does not offer it.
    Unsupported,
    /// It failed.
    Failed,
    /// Not tried, because an earlier check failed.
    Skipped,
}

impl Verdict {
    /// The word in the table.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Degraded => "degraded",
            Verdict::Unsupported => "unsupported",
            Verdict::Failed => "failed",
            Verdict::Skipped => "skipped",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// What was checked.
    pub check: Check,
    /// How it came out.
    pub verdict: Verdict,
    /// What was seen.
    pub detail: String,
    /// What hrns does about it (empty when nothing needs doing).
    pub action: String,
}

/// The outcome of a probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// One finding per [`Check`], in [`Check::ALL`] order.
    pub findings: Vec<Finding>,
    /// The quirks learned; sessions obey them once saved.
    #[serde(serialize_with = "serialize_quirks")]
    pub quirks: ProviderQuirks,
    /// Whether a session can chat with the provider (the streamed request worked).
    pub chat_works: bool,
}

fn serialize_quirks<S: serde::Serializer>(q: &ProviderQuirks, s: S) -> Result<S::Ok, S::Error> {
    q.serialize(s)
}

#[cfg(test)]
impl Report {
    /// The finding of `check`, for tests (front ends show every finding in order).
    pub(crate) fn finding(&self, check: Check) -> &Finding {
        self.findings
            .iter()
            .find(|f| f.check == check)
            .expect("a report has every check")
    }
}
