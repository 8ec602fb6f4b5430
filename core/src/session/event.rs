//! What the session tells its driver's UI, logs and `exec --json`: one [`Event`] enum with a
//! documented, versioned JSON shape.

use crate::accumulate::{DeltaText, FinishReason};
use crate::stream::StreamError;
use crate::tool::ToolOutput;
use crate::wire::{ApiError, Message, Usage};
use serde::{Deserialize, Serialize};

/// The version of the JSON shape of [`Event`]. It changes when a field is renamed, removed or
/// changes its type; new event types and new fields may appear without a change, so readers
/// should ignore what they do not know. `hrns exec --json` prints it first, in its
/// `session_started` event.
///
/// Version 2: `turn_finished.usage` is `null` when the provider reported no usage (it was
/// all zeros), and transport errors name the URL in their message.
pub const EVENT_SCHEMA_VERSION: u32 = 2;

/// Something that happened in a session.
///
/// Serialized as one JSON object with a `"type"` field in snake case, for example
/// `{"type":"text_delta","text":"Hel"}` or `{"type":"turn_finished","finish_reason":"stop",…}`.
/// Every turn ends with exactly one of `turn_finished`, `turn_failed` or `turn_cancelled`.
///
/// Not `#[non_exhaustive]`, on purpose: a front end matches it without a wildcard arm, so a
/// new variant fails to compile in every front end until that front end decides what to do
/// with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A turn began with the user's message.
    TurnStarted {
        /// The turn number in this session, from 1.
        turn: u64,
    },
    /// A request to the model is going out.
    RequestStarted {
        /// The model request of this turn, from 1.
        step: u32,
        /// The attempt of this request, from 1.
        attempt: u32,
    },
    /// Answer text arrived: the text of one or more consecutive deltas of the stream that
    /// came in one read (a token on a slow stream, a few hundred joined on a fast one).
    TextDelta {
        /// The new text. Short text (a token) is kept inline, without an allocation.
        text: DeltaText,
    },
    /// Reasoning text arrived, joined like [`Event::TextDelta`]'s.
    ReasoningDelta {
        /// The new reasoning text. Short text (a token) is kept inline, without an allocation.
        text: DeltaText,
    },
    /// Refusal text arrived, joined like [`Event::TextDelta`]'s.
    RefusalDelta {
        /// The new refusal text. Short text (a token) is kept inline, without an allocation.
        text: DeltaText,
    },
    /// The model started writing a tool call.
    ToolCallStreaming {
        /// The call's position in the answer.
        index: usize,
        /// The tool's name, when already known.
        name: Option<String>,
    },
    /// A complete tool call, before the session decides what to do with it.
    ToolCall {
        /// The call id.
        id: String,
        /// The tool name.
        name: String,
        /// The arguments text as the model wrote it.
        arguments: String,
    },
    /// The call waits for the user's approval.
    ApprovalRequested {
        /// The call id.
        id: String,
        /// The tool name.
        name: String,
        /// The arguments text.
        arguments: String,
    },
    /// A tool call got its result (run, refused or cancelled).
    ToolResult {
        /// The call id.
        id: String,
        /// The tool name.
        name: String,
        /// What happened to the call.
        status: ToolStatus,
        /// What the model is told.
        output: ToolOutput,
    },
    /// The provider reported token usage for one request.
    Usage {
        /// The counts.
        usage: Box<Usage>,
    },
    /// A failed request will be retried after a delay.
    Retry {
        /// The attempt that will be made.
        attempt: u32,
        /// How long the session waits first, in milliseconds.
        delay_ms: u64,
        /// Why the last attempt failed.
        reason: String,
    },
    /// The provider rejected an optional field that hrns added; the request is sent again
    /// without it. Drivers may remember this for the provider.
    OptionDropped {
        /// The field, such as `stream_options`.
        field: String,
        /// The provider's message.
        reason: String,
    },
    /// The tools offered to the model changed ([`Session::handle_tools_changed`](super::Session::handle_tools_changed)):
    /// an MCP server stopped, or listed other tools. Requests from now on offer the new set,
    /// and a later call to a tool that is gone is answered as an unknown tool.
    ToolsChanged {
        /// Why, for people (`MCP server github stopped: …`).
        reason: String,
        /// Tools offered from now on that were not offered before.
        added: Vec<String>,
        /// Tools no longer offered.
        removed: Vec<String>,
        /// Tools still offered whose description, parameters or effect changed.
        updated: Vec<String>,
    },
    /// The history was shrunk to fit the context window. With `method: summarized` the
    /// history was replaced: the `message` events that follow are the whole new history.
    ContextCompacted {
        /// Why: past the threshold, an overflow answer, or the user's `/compact`.
        reason: CompactReason,
        /// What was done: old tool outputs pruned only, or the history summarised.
        method: CompactMethod,
        /// Estimated tokens of the next request before.
        tokens_before: u64,
        /// Estimated tokens of the next request after.
        tokens_after: u64,
        /// The context window, when known.
        window: Option<u64>,
        /// The calls whose outputs (text, images or both) were replaced by stubs, each once.
        pruned: Vec<crate::context::PrunedOutput>,
        /// How many messages the summary replaced (0 when only pruned).
        summarized_messages: usize,
    },
    /// The model sent its plan with `update_plan` (the whole plan, each time).
    PlanUpdated {
        /// Why the plan is so, or what changed, when the model said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        explanation: Option<String>,
        /// The steps in order, each with its status.
        plan: Vec<crate::plan::PlanStep>,
    },
    /// A message entered the history (the user's, the model's answer, a tool result).
    Message {
        /// The message as it will be sent back to the model. Boxed, as the payloads of all the
        /// larger variants are: every delta is an `Event` too, and moving a small one is cheap.
        message: Box<Message>,
    },
    /// A snapshot of the workspace was taken (before the turn's first call that may change
    /// files, or after such a call): `hrns undo` and `/undo` go back to these.
    Checkpoint {
        /// The checkpoint's id in the store.
        id: String,
        /// The turn, from 1.
        turn: u64,
        /// The model request whose calls it is about, from 1.
        step: u32,
        /// Before the turn's changes, or after a call.
        moment: crate::checkpoint::Moment,
        /// The paths that changed since the previous checkpoint.
        changed: Vec<String>,
        /// The paths left out of it (too large, too many files), with why.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
    },
    /// A snapshot could not be taken; the call goes on without one.
    CheckpointFailed {
        /// The turn, from 1.
        turn: u64,
        /// The model request whose calls it is about, from 1.
        step: u32,
        /// Which checkpoint.
        moment: crate::checkpoint::Moment,
        /// Why, for people.
        reason: String,
    },
    /// A hook ran ([`crate::hooks`]): one line in the UI, on exec's stderr, and a `hook`
    /// event in `--json`.
    Hook {
        /// The hook event (`PreToolUse`, `Stop`, …).
        event: String,
        /// The hook's command (redacted).
        hook: String,
        /// What became of it.
        outcome: crate::hooks::HookOutcome,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
        /// What it said or why it failed (a block reason, an error, its `systemMessage`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// The tool call it was about, for tool events.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
    },
    /// The turn ended normally.
    TurnFinished {
        /// The model's last finish reason (`stop`, `length`, `content_filter`, …).
        finish_reason: Option<FinishReason>,
        /// Tokens used over the whole turn; `None` (JSON `null`) when no request of the turn
        /// reported usage, so that "unknown" is not mistaken for zero.
        usage: Option<Box<Usage>>,
        /// The final answer as the JSON value that matched the session's output schema
        /// ([`SessionConfig::output`](super::SessionConfig)); absent without one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<Box<serde_json::Value>>,
    },
    /// The turn ended with an error.
    TurnFailed {
        /// What went wrong.
        error: TurnError,
    },
    /// The turn was cancelled by the user.
    TurnCancelled,
    /// An event of a subagent: the child session a running `task` call drives handed it to
    /// this session ([`Session::handle_child_event`](super::Session::handle_child_event)),
    /// tagged with that call's id and the child's agent. Boxed: it is rare, and an event is
    /// moved on every delta. Serialized as `{"type":"child","parent_call_id":…,"agent":…,
    /// "event":{…}}`.
    Child(Box<crate::task::ChildEvent>),
}

impl Event {
    /// Whether this event ends a turn (as [`TurnOutcome::from_event`] says, without making
    /// the outcome: it is asked of every event, deltas included).
    pub fn is_final(&self) -> bool {
        matches!(self.place(), Place::Ending(_))
    }

    /// Whether this event is a piece of a message still streaming in: text, reasoning or
    /// refusal text, or a tool call being written. The [`Event::Message`] that follows carries
    /// all of it, and nothing else is told by it, so a record of the turn (a session file)
    /// leaves deltas out, and nothing that learns from events (quirks) or follows tool calls
    /// (diffs) needs to see them: a front end may hand them straight to its printer. Most
    /// events of a stream are deltas.
    pub fn is_delta(&self) -> bool {
        matches!(self.place(), Place::Delta)
    }

    /// Where this event stands in its turn. The one place that sorts events into deltas,
    /// final events and the rest ([`Event::is_delta`], [`Event::is_final`],
    /// [`TurnOutcome::from_event`]).
    fn place(&self) -> Place<'_> {
        match self {
            Event::TurnFinished { .. } => Place::Ending(Ending::Finished),
            Event::TurnFailed { error } => Place::Ending(Ending::Failed(error)),
            Event::TurnCancelled => Place::Ending(Ending::Cancelled),
            Event::TextDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::RefusalDelta { .. }
            | Event::ToolCallStreaming { .. } => Place::Delta,
            // A child's streaming piece is one to the parent too (the child's message carries
            // it); a child's end is not the parent's.
            Event::Child(child) if child.event.is_delta() => Place::Delta,
            Event::Child(_) => Place::Step,
            Event::TurnStarted { .. }
            | Event::RequestStarted { .. }
            | Event::ToolCall { .. }
            | Event::ApprovalRequested { .. }
            | Event::ToolResult { .. }
            | Event::Usage { .. }
            | Event::PlanUpdated { .. }
            | Event::Retry { .. }
            | Event::OptionDropped { .. }
            | Event::ToolsChanged { .. }
            | Event::ContextCompacted { .. }
            | Event::Checkpoint { .. }
            | Event::CheckpointFailed { .. }
            | Event::Hook { .. }
            | Event::Message { .. } => Place::Step,
        }
    }
}

/// Where an event stands in its turn (see [`Event::place`]).
enum Place<'a> {
    /// A piece of a message still streaming in.
    Delta,
    /// Any other event before the end.
    Step,
    /// The end of the turn, and how.
    Ending(Ending<'a>),
}

/// A final event's [`TurnOutcome`], borrowed from the event.
enum Ending<'a> {
    Finished,
    Failed(&'a TurnError),
    Cancelled,
}

/// How a turn ended, as a driver's `run` reports it: the final [`Event`] in short.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    /// The model finished its answer ([`Event::TurnFinished`]).
    Finished,
    /// The turn failed; the error says why ([`Event::TurnFailed`]).
    Failed(TurnError),
    /// The turn was cancelled ([`Event::TurnCancelled`]).
    Cancelled,
}

impl TurnOutcome {
    /// The outcome a final event stands for; `None` for every other event.
    pub fn from_event(event: &Event) -> Option<TurnOutcome> {
        match event.place() {
            Place::Ending(Ending::Finished) => Some(TurnOutcome::Finished),
            Place::Ending(Ending::Failed(error)) => Some(TurnOutcome::Failed(error.clone())),
            Place::Ending(Ending::Cancelled) => Some(TurnOutcome::Cancelled),
            Place::Delta | Place::Step => None,
        }
    }
}

/// Why the history was compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CompactReason {
    /// The next request would have passed the threshold.
    Threshold,
    /// The provider answered that the request was too long.
    Overflow,
    /// The user asked (`/compact`).
    Requested,
}

/// How the history was compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CompactMethod {
    /// Old tool outputs were replaced by stubs; nothing else changed.
    Pruned,
    /// The history was replaced by a summary and the latest messages.
    Summarized,
}

/// What happened to a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolStatus {
    /// The tool ran and succeeded.
    Ok,
    /// The tool ran and failed.
    Error,
    /// The model named a tool that does not exist.
    UnknownTool,
    /// The arguments were not a JSON object.
    InvalidArguments,
    /// The approval policy does not allow it.
    DeniedByPolicy,
    /// The user said no.
    Denied,
    /// The same call was made too many times in a row.
    Repeated,
    /// The answer was cut off (`length` / `content_filter`), so the call was not run.
    NotRun,
    /// The turn was cancelled before the call finished.
    Cancelled,
    /// A `PreToolUse` or `PermissionRequest` hook blocked it.
    BlockedByHook,
}

/// Why a turn failed. Each variant says whose fault it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "code", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TurnError {
    /// A hook blocked the user's prompt (`UserPromptSubmit`): nothing was sent, and the prompt
    /// is not in the history. The reason is the hook's.
    #[error("a {event} hook blocked the prompt: {reason}")]
    HookBlocked {
        /// The hook event.
        event: String,
        /// The hook's reason.
        reason: String,
    },
    /// A hook stopped the run (`"continue": false`); the reason is the hook's `stopReason`.
    #[error("a {event} hook stopped the run: {reason}")]
    HookStopped {
        /// The hook event.
        event: String,
        /// The hook's reason.
        reason: String,
    },
    /// The provider answered with an error status (bad key, unknown model, rate limit after
    /// all retries, …). The provider's message says what to fix.
    #[error("the provider answered {status}: {error}{}", status_hint(*status))]
    Api {
        /// The HTTP status.
        status: u16,
        /// The provider's error (boxed: it is the largest, and a turn error rides in an
        /// [`Event`]).
        error: Box<ApiError>,
    },
    /// The stream could not be read (truncated, malformed, an error inside it).
    #[error("{error}")]
    Stream {
        /// What went wrong.
        error: StreamError,
    },
    /// The connection broke after part of the answer was shown; it is not retried silently.
    /// The partial answer is not kept in the history.
    #[error(
        "the connection broke in the middle of the answer: {message}; send the message again to retry"
    )]
    StreamBroken {
        /// The transport's or the stream's message.
        message: String,
    },
    /// The request could not be sent or its answer not received (network, DNS, TLS, timeout).
    #[error("could not reach the provider ({kind}): {message}")]
    Transport {
        /// The class of failure.
        kind: TransportErrorKind,
        /// The transport's message.
        message: String,
    },
    /// A 2xx answer that was neither an event stream nor JSON (a proxy's or captive portal's
    /// login page, or a wrong base URL). Not retried; check the base URL and the network.
    #[error(
        "the provider answered {status} with `{content_type}` instead of an event stream or JSON (a proxy or login page, or a wrong base URL?); it began: {body_start}"
    )]
    UnexpectedContent {
        /// The status.
        status: u16,
        /// The content type it named.
        content_type: String,
        /// The start of the body, shortened and redacted.
        body_start: String,
    },
    /// The provider answered, but with no choice in it.
    #[error("the provider's answer had no choices")]
    NoChoices,
    /// The provider is rate limited or overloaded and asked (`Retry-After`) to wait longer than
    /// the retry budget ([`RetryPolicy::max_retry_after`](super::RetryPolicy)), so the turn
    /// fails at once rather than seem to hang. Try again later, or raise the budget
    /// (`retryMaxWait` in config.json, which the message names).
    #[error(
        "the provider asked to wait {wait_secs} s before retrying; more than the retry budget of \
         {budget_secs} s, so hrns did not wait. Try again later, or raise `retryMaxWait` in \
         config.json. ({failure})"
    )]
    RetryAfterTooLong {
        /// How long the provider asked to wait, in seconds (rounded up).
        wait_secs: u64,
        /// The longest wait the session accepts, in seconds.
        budget_secs: u64,
        /// The failure that asked for the wait (a 429 or 503 with the provider's error).
        failure: Box<TurnError>,
    },
    /// The provider still said the request was too long for the model's context window after
    /// hrns shrank the history. Start a new session, or use a model with a larger window.
    #[error(
        "the request is too long for the model's context window even after {tried}: {error}; start a new session (/new) or use a model with a larger window"
    )]
    ContextOverflow {
        /// What was tried.
        tried: String,
        /// The provider's last error (boxed, as in [`TurnError::Api`]).
        error: Box<ApiError>,
    },
    /// The history could not be compacted enough to continue (or the summary failed).
    #[error(
        "could not compact the conversation: {reason}; start a new session (/new) or raise the context window"
    )]
    CompactionFailed {
        /// Why.
        reason: String,
    },
    /// A compaction asked for (`/compact`) did not happen: the model's summary was empty, a
    /// tool call, or no shorter than the conversation. The history is kept as it was and the
    /// session goes on; nothing is wrong with the window.
    #[error("the conversation was not compacted: {reason}")]
    NotCompacted {
        /// Why.
        reason: String,
    },
    /// The turn made as many model requests as allowed; the model kept calling tools.
    #[error(
        "stopped after {limit} model requests in one turn (the step limit); send a message to continue"
    )]
    StepLimit {
        /// The limit.
        limit: u32,
    },
    /// The final answer still did not match the output schema after the model was told the
    /// errors and asked once more. The model's fault (or the schema's: too strict for it).
    #[error("the answer does not match the output schema: {}", errors.join("; "))]
    OutputSchemaUnmet {
        /// The first errors of the last answer ([`MAX_ERRORS_TOLD`](super::MAX_ERRORS_TOLD)
        /// at most).
        errors: Vec<String>,
    },
    /// The model made the same call again after being told it would not run: it is stuck in
    /// a loop. Rephrase the request, or start a new session.
    #[error(
        "stopped: the model repeated the same `{name}` call {times} times in a row, after being told it would not run again; rephrase the request or start a new session"
    )]
    RepeatedCall {
        /// The tool.
        name: String,
        /// How many times in a row the call was made.
        times: u32,
    },
}

/// The class of a transport failure, which decides whether it is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportErrorKind {
    /// Connecting failed (refused, DNS, unreachable). Retried.
    Connect,
    /// No answer or no bytes within the timeout. Retried.
    Timeout,
    /// The connection broke while reading or writing. Retried before any output.
    Io,
    /// TLS failed (certificate, protocol). Not retried: it will fail again.
    Tls,
    /// The request itself is wrong (a bad URL). Not retried.
    InvalidRequest,
    /// Anything else. Not retried.
    Other,
}

impl TransportErrorKind {
    /// Whether a failure of this kind is worth another attempt.
    pub fn is_retryable(self) -> bool {
        match self {
            TransportErrorKind::Connect | TransportErrorKind::Timeout | TransportErrorKind::Io => {
                true
            }
            TransportErrorKind::Tls
            | TransportErrorKind::InvalidRequest
            | TransportErrorKind::Other => false,
        }
    }
}

impl std::fmt::Display for TransportErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TransportErrorKind::Connect => "connect",
            TransportErrorKind::Timeout => "timeout",
            TransportErrorKind::Io => "connection",
            TransportErrorKind::Tls => "tls",
            TransportErrorKind::InvalidRequest => "invalid request",
            TransportErrorKind::Other => "other",
        })
    }
}

/// A transport failure as the driver reports it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not reach the provider ({kind}): {message}")]
pub struct TransportError {
    /// The class of failure.
    pub kind: TransportErrorKind,
    /// A message for the user (it must not contain the API key; the session redacts it anyway).
    pub message: String,
}

impl TransportError {
    /// A transport error of `kind`.
    pub fn new(kind: TransportErrorKind, message: impl Into<String>) -> Self {
        TransportError {
            kind,
            message: message.into(),
        }
    }
}

/// What to check after an error status whose cause is nearly always on the user's side: a
/// provider's own message for these (`Not Found`, `Unauthorized`) rarely says it.
fn status_hint(status: u16) -> &'static str {
    match status {
        401 => " (check the API key)",
        403 => " (check the API key and its permissions)",
        404 => " (check the base URL and the model name)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_of_final_events_only() {
        assert_eq!(
            TurnOutcome::from_event(&Event::TurnCancelled),
            Some(TurnOutcome::Cancelled)
        );
        let error = TurnError::NoChoices;
        assert_eq!(
            TurnOutcome::from_event(&Event::TurnFailed {
                error: error.clone()
            }),
            Some(TurnOutcome::Failed(error))
        );
        let finished = Event::TurnFinished {
            finish_reason: None,
            usage: None,
            output: None,
        };
        assert_eq!(
            TurnOutcome::from_event(&finished),
            Some(TurnOutcome::Finished)
        );
        assert!(finished.is_final() && Event::TurnCancelled.is_final());
        for e in [
            Event::TurnStarted { turn: 1 },
            Event::TextDelta { text: "x".into() },
        ] {
            assert!(!e.is_final());
            assert_eq!(TurnOutcome::from_event(&e), None);
        }
    }

    #[test]
    fn the_deltas_are_the_pieces_a_message_carries_again() {
        let deltas = [
            Event::TextDelta { text: "x".into() },
            Event::ReasoningDelta { text: "x".into() },
            Event::RefusalDelta { text: "x".into() },
            Event::ToolCallStreaming {
                index: 0,
                name: None,
            },
        ];
        assert!(deltas.iter().all(|e| e.is_delta() && !e.is_final()));
        let others = [
            Event::TurnStarted { turn: 1 },
            Event::Message {
                message: Box::new(crate::wire::Message::assistant("x")),
            },
            Event::TurnCancelled,
        ];
        assert!(others.iter().all(|e| !e.is_delta()));
    }

    #[test]
    fn an_api_error_says_what_its_status_usually_means() {
        let error: crate::wire::ApiError =
            serde_json::from_value(serde_json::json!({"message": "Not Found"})).unwrap();
        let text = |status| {
            TurnError::Api {
                status,
                error: Box::new(error.clone()),
            }
            .to_string()
        };
        assert_eq!(
            text(401),
            "the provider answered 401: Not Found (check the API key)"
        );
        assert!(text(403).ends_with("(check the API key and its permissions)"));
        assert!(text(404).ends_with("(check the base URL and the model name)"));
        assert_eq!(text(500), "the provider answered 500: Not Found");
    }
}

#[cfg(test)]
mod size {
    /// Most events of a stream are deltas, each moved from the answer into the outbox and on
    /// to the driver: an event is as large as its largest variant, so the large payloads
    /// (a message, usage, an output value, a provider's error) are boxed. It was 192 bytes.
    #[test]
    fn an_event_stays_small() {
        assert!(
            std::mem::size_of::<super::Event>() <= 112,
            "{}",
            std::mem::size_of::<super::Event>()
        );
        assert!(std::mem::size_of::<super::TurnError>() <= 56);
    }
}
