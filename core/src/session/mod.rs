//! The agent loop as a state machine: what to send, which tools to run, when to ask, retry,
//! stop — with no IO.
//!
//! # Method families and call order
//!
//! - getters (`&self`): [`Session::messages`], [`Session::is_idle`], [`Session::poll_timeout`],
//!   [`Session::wants_response`], [`Session::usage`];
//! - inputs: [`Session::handle_response_head`] (or [`Session::handle_response_head_at`]),
//!   [`Session::handle_response_data`],
//!   [`Session::handle_response_end`], [`Session::handle_transport_error`],
//!   [`Session::handle_tool_output`], [`Session::handle_approval`], [`Session::handle_timeout`],
//!   [`Session::handle_checkpoint`], [`Session::handle_tools_changed`] (the tool set changed);
//! - commands: [`Session::submit`], [`Session::cancel`];
//! - output: [`Session::poll`] (or [`Session::poll_into`], everything at once).
//!
//! **After any input or command, drain [`Session::poll`] until it returns `None`** (or call
//! [`Session::poll_into`] once), then wait
//! for whichever comes first: a response for a request you sent, a tool result, the user, or
//! the deadline of [`Session::poll_timeout`].
//!
//! A driver keeps its bookkeeping between steps (calls waiting for a slot, the request in
//! flight, the turn's outcome) in a [`Ledger`], which turns these actions into its work.
//!
//! Time enters only as `now` arguments and randomness only as the configured seed, so the same
//! inputs always give the same actions.

mod calls;
mod checkpoints;
mod config;
mod context;
#[cfg(test)]
mod context_tests;
mod decide;
mod deltas;
mod event;
mod history;
#[cfg(test)]
mod history_tests;
mod hooks;
#[cfg(test)]
mod hooks_tests;
mod images;
mod ledger;
mod outbox;
#[cfg(test)]
mod outbox_tests;
mod output;
mod questions;
mod request;
mod response;
mod retry;
mod shared;
#[cfg(test)]
mod tests;
mod tools_reason;
mod turn;

pub use config::endpoint;
pub use config::{
    Approval, ApprovalPolicy, DEFAULT_STREAM_IDLE_TIMEOUT, ImageInputs, PolicyDecision, Provider,
    RequestOptions, RetryPolicy, SessionApprovals, SessionConfig,
};
pub use context::ContextUsage;
pub use event::{
    CompactMethod, CompactReason, EVENT_SCHEMA_VERSION, Event, ToolStatus, TransportError,
    TransportErrorKind, TurnError, TurnOutcome,
};
pub use images::{ToolImages, is_tool_images, tool_images};
pub use ledger::{
    DEFAULT_MAX_PARALLEL_TOOLS, Ledger, ToolEnd, ToolsChange, Wait, Waited, Waiting, Work,
};
pub use output::{MAX_ERRORS_TOLD, OutputCheck, OutputSchema, SCHEMA_NAME};
pub use questions::{ChildQuestion, PARENT_STOPPED, Question};
pub(crate) use retry::retry_after;
pub use tools_reason::{ToolsReason, WhenUnchanged};

use crate::history::HistoryError;
use crate::http::{HttpRequest, RequestId};
use crate::quirks::ProviderQuirks;
use crate::tool::{Effect, ToolOutput, ToolSpec};
use crate::wire::{Message, Usage};
use shared::Shared;
use std::time::{Instant, SystemTime};
use turn::Turn;

/// What the driver should do next.
#[must_use]
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send this request and feed its response back with its id.
    SendRequest(HttpRequest),
    /// Run this tool call and hand its output to [`Session::handle_tool_output`]. Several may
    /// run at once.
    RunTool(ToolRun),
    /// Ask the user about this call and hand the answer to [`Session::handle_approval`].
    AskApproval(ToolRun),
    /// Stop this running call (it timed out, or the turn was cancelled): its result is
    /// already decided, and a late output for it is ignored.
    AbortTool {
        /// The call id of an earlier [`Action::RunTool`].
        call_id: String,
    },
    /// Take a snapshot of the workspace and hand the outcome to
    /// [`Session::handle_checkpoint`]; the session waits for it before the calls go on (only
    /// with [`Checkpoints::On`](crate::checkpoint::Checkpoints::On)).
    TakeCheckpoint(crate::checkpoint::CheckpointDue),
    /// Run these hooks, all at once, and hand their results to [`Session::handle_hooks`]
    /// ([`crate::hooks`]). Unless they run in the background
    /// ([`HookWait::Background`](crate::hooks::HookWait)), something waits on them: the turn,
    /// or a tool call.
    RunHooks(crate::hooks::HookDue),
    /// Hand this answer to the subagent of the running `task` call `parent_call_id`, which
    /// waits for it ([`Session::handle_answer`] on a [`Question::Child`]; or the session's
    /// own denial when that call stopped first). A child that is gone needs no answer.
    AnswerChild {
        /// The parent's `task` call.
        parent_call_id: String,
        /// The child's call the answer is about.
        call_id: String,
        /// The answer, for the child's session's `handle_approval`.
        approval: Approval,
    },
    /// Show, log or print this event.
    Emit(Event),
}

/// A tool call the session decided to run (or to ask about).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRun {
    /// The call id; hand it back with the output.
    pub call_id: String,
    /// The tool name (one of the configured tools).
    pub name: String,
    /// The arguments text, already checked to be a JSON object.
    pub arguments: String,
    /// The call's effect class, which orders it among the answer's calls. It is the tool's,
    /// except for a `task` call: there it is what its child may do
    /// ([`crate::task::call_effect`]), so a child that may write runs alone.
    pub effect: Effect,
    /// Whether the driver runs it in the session's sandbox or, by the user's answer
    /// [`Approval::OnceUnsandboxed`], outside it.
    pub confinement: Confinement,
}

/// Where a driver runs a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Confinement {
    /// In the sandbox the driver was set up with.
    #[default]
    Sandboxed,
    /// Without any sandbox (`danger-full-access`), once: the user answered
    /// [`Approval::OnceUnsandboxed`]. The session adds [`crate::sandbox::UNSANDBOXED_NOTE`]
    /// to its result, so the model knows it ran unconfined by the user's leave.
    Unsandboxed,
}

/// A misuse of the session by its caller. The session's state is unchanged by a call that
/// returns one of these.
///
/// Input that merely comes late is not misuse: a response for a request that finished or was
/// cancelled, or a tool output or approval for a call that already has its result, is
/// accepted and ignored. So a driver can propagate these errors (or `expect` on them): they
/// mean a bug, never a race.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// `submit` while a turn is running; cancel it or wait for its final event.
    #[error("a turn is already running; wait for it to finish or cancel it")]
    Busy,
    /// A response for a request this session never issued.
    #[error("{0} was never issued by this session")]
    UnknownRequest(RequestId),
    /// A tool output or approval for a call id this session never issued.
    #[error("tool call `{0}` was never issued by this session")]
    UnknownCall(String),
    /// An answer to a subagent's question that is not pending: the child never asked it,
    /// it was answered already, or its parent call stopped (the session then denied it).
    #[error(
        "subagent call `{call_id}` of task call `{parent_call_id}` is not waiting for an answer (never asked, already answered, or its task was stopped)"
    )]
    UnknownChildQuestion {
        /// The parent's `task` call.
        parent_call_id: String,
        /// The child's call.
        call_id: String,
    },
    /// Response data before the response head.
    #[error("response data for {0} arrived before its head")]
    DataBeforeHead(RequestId),
    /// `compact` with an empty history.
    #[error("there is nothing to compact yet")]
    NothingToCompact,
    /// `compact` of a conversation too short to shrink: the summary and the user's latest
    /// message, which a compaction keeps verbatim, would take about as much room as the whole
    /// history. Nothing was sent and the history is unchanged.
    #[error(
        "there is nothing worth compacting: the conversation is short (about {tokens} tokens), and a summary with your latest message would not be shorter"
    )]
    NothingWorthCompacting {
        /// The estimated size of the history.
        tokens: u64,
    },
    /// Hook results for an id this session never issued.
    #[error("hooks {0} were never asked for by this session")]
    UnknownHooks(u64),
    /// Hook results that are not one per command asked for.
    #[error("hooks {id}: {expected} commands were asked for, but {got} results came back")]
    HookCount {
        /// The id of the [`Action::RunHooks`].
        id: u64,
        /// How many commands it had.
        expected: usize,
        /// How many results came.
        got: usize,
    },
    /// A resumed history is not a valid conversation.
    #[error("invalid history: {0}")]
    InvalidHistory(#[from] HistoryError),
}

/// Token counts summed over requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenTotals {
    /// Prompt tokens.
    pub prompt: u64,
    /// Of the prompt tokens, those the provider served from its cache, where it reports
    /// them ([`crate::pricing::cached_tokens`]); they are often cheaper.
    pub cached: u64,
    /// Completion tokens.
    pub completion: u64,
}

impl TokenTotals {
    pub(crate) fn add(&mut self, usage: &Usage) {
        self.prompt += usage.prompt_tokens.unwrap_or(0);
        self.cached += crate::pricing::cached_tokens(usage).unwrap_or(0);
        self.completion += usage.completion_tokens.unwrap_or(0);
    }

    /// The sum of two totals (a session's and those before it, say).
    pub fn plus(self, other: TokenTotals) -> TokenTotals {
        TokenTotals {
            prompt: self.prompt + other.prompt,
            cached: self.cached + other.cached,
            completion: self.completion + other.completion,
        }
    }

    fn to_usage(self) -> Usage {
        let mut extra = crate::wire::Extra::new();
        if self.cached > 0 {
            extra.insert(
                "prompt_tokens_details".into(),
                serde_json::json!({ "cached_tokens": self.cached }),
            );
        }
        Usage {
            prompt_tokens: Some(self.prompt),
            completion_tokens: Some(self.completion),
            total_tokens: Some(self.prompt + self.completion),
            extra,
        }
    }
}

/// The agent loop; see the module docs for the call order.
///
/// The session owns all of its state: what lasts across turns (its shared state) and the running
/// turn. Turn logic borrows both; nothing is taken out and put back.
#[derive(Debug)]
pub struct Session {
    shared: Shared,
    turn: Option<Turn>,
    /// Subagents' questions waiting for the owner's answer.
    child_questions: questions::ChildQuestions,
}

impl Session {
    /// A session with an empty history.
    pub fn new(config: SessionConfig) -> Self {
        Session {
            shared: Shared::new(config),
            turn: None,
            child_questions: Default::default(),
        }
    }

    /// A session that continues `history` (a resumed conversation). The history is repaired the
    /// way cancellation repairs it (unanswered calls get a placeholder result) and then checked.
    pub fn with_history(
        config: SessionConfig,
        mut history: Vec<Message>,
    ) -> Result<Self, SessionError> {
        crate::history::repair(&mut history);
        crate::history::validate(&history)?;
        let mut s = Self::new(config);
        s.shared.context.remeasure(&history);
        s.shared.history = history::History::from_messages(history);
        Ok(s)
    }

    /// Takes in what the user decided about whole tools in an earlier session of the same
    /// conversation (see [`SessionApprovals`]). A tool the user denied stays denied even if it
    /// was also allowed: the later "never" of the two sets wins, as it would have in the old
    /// session, where answering "never" is only asked about a tool not allowed yet.
    pub fn keep_approvals(&mut self, approvals: SessionApprovals) {
        for name in approvals.never {
            self.shared.approved_tools.remove(&name);
            self.shared.denied_tools.insert(name);
        }
        for name in approvals.always {
            if !self.shared.denied_tools.contains(&name) {
                self.shared.approved_tools.insert(name);
            }
        }
    }

    // ----- getters -----

    /// What the user allowed or denied for whole tools in this session, to hand to a session
    /// that continues the conversation ([`Session::keep_approvals`]).
    pub fn approvals(&self) -> SessionApprovals {
        SessionApprovals {
            always: self.shared.approved_tools.iter().cloned().collect(),
            never: self.shared.denied_tools.iter().cloned().collect(),
        }
    }

    /// The conversation so far (without the system prompt). Always a valid request history.
    pub fn messages(&self) -> &[Message] {
        &self.shared.history
    }

    /// The plan the model last sent with `update_plan`, if any (it survives compaction).
    pub fn plan(&self) -> Option<&crate::plan::Plan> {
        self.shared.plan.as_ref()
    }

    /// The configuration.
    pub fn config(&self) -> &SessionConfig {
        &self.shared.config
    }

    /// Whether no turn is running and the final event of the last one was polled.
    pub fn is_idle(&self) -> bool {
        self.turn.is_none() && !self.shared.outbox.has_final()
    }

    /// When to call [`Session::handle_timeout`] next: a retry is waiting, a running tool
    /// call has a deadline, or a response stream dies unless data comes first
    /// ([`SessionConfig::stream_idle_timeout`]; keep-alives do not count as data).
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.turn.as_ref().and_then(Turn::deadline)
    }

    /// Whether the session still wants the response of `req`; when this turns false, the
    /// driver should drop the connection (the answer is complete, failed or cancelled).
    pub fn wants_response(&self, req: RequestId) -> bool {
        self.turn.as_ref().is_some_and(|t| t.awaits(req))
    }

    /// Tokens used in this session so far (callable at any time, mid-turn too).
    pub fn usage(&self) -> TokenTotals {
        self.shared.totals
    }

    /// Whether events or other actions wait to be taken with [`Session::poll`].
    pub fn has_output(&self) -> bool {
        !self.shared.outbox.is_empty()
    }

    /// The call whose approval the session asked for ([`Event::ApprovalRequested`]) and
    /// that is not answered yet. One at a time.
    pub fn asked(&self) -> Option<&ToolRun> {
        self.turn.as_ref().and_then(Turn::asked)
    }

    /// The subagents' calls waiting for the owner's answer, in the order they were asked
    /// ([`Session::handle_answer`]).
    pub fn child_questions(&self) -> &[ChildQuestion] {
        self.child_questions.all()
    }

    /// The secrets this session redacts: the provider's key and secret header values, and
    /// [`SessionConfig::secrets`]. Front ends use the same set for what they print and save.
    pub fn secrets(&self) -> &crate::secrets::Secrets {
        &self.shared.secrets
    }

    /// The provider quirks requests obey now: the configured ones plus what this session
    /// learned from rejections.
    pub fn quirks(&self) -> ProviderQuirks {
        self.shared.quirks
    }

    // ----- commands -----

    /// Starts a turn with the user's message.
    pub fn submit(&mut self, text: impl Into<String>) -> Result<(), SessionError> {
        self.submit_message(Message::user(text))
    }

    /// Starts a turn with a prepared user message (content parts, images).
    pub fn submit_message(&mut self, message: Message) -> Result<(), SessionError> {
        if self.turn.is_some() {
            return Err(SessionError::Busy);
        }
        let s = &mut self.shared;
        s.turns += 1;
        s.checkpoint.turn_started();
        s.emit(Event::TurnStarted { turn: s.turns });
        // The prompt enters the history once its hooks let it (`SessionStart` and
        // `UserPromptSubmit`, when any are configured).
        self.turn = Some(Turn::start(s, message));
        // A turn can end before any request (a compaction that cannot succeed).
        self.end_if_over();
        Ok(())
    }

    /// Cancels the running turn at once, whatever it is doing. The history stays valid: every
    /// tool call gets a result ("cancelled"), and answer text the user already saw is kept,
    /// marked as interrupted. Running calls get [`Action::AbortTool`]. Ends the turn with
    /// [`Event::TurnCancelled`]. Does nothing when idle.
    pub fn cancel(&mut self) {
        if let Some(mut turn) = self.turn.take() {
            turn.cancel(&mut self.shared);
        }
        self.settle_child_questions();
    }

    /// Replaces the tools offered to the model, at any moment (mid-turn too): every request
    /// built from now on offers `tools`, and the calls of later answers are checked against
    /// them (a call to a tool that is gone is answered as an unknown tool, naming the ones
    /// there are). Calls already decided or running keep going. When the set differs from
    /// the one before, emits [`Event::ToolsChanged`] with `reason` (for people, redacted like
    /// all output); otherwise does nothing, unless `reason` is news even so
    /// ([`WhenUnchanged::Report`]: the event then comes with empty lists).
    ///
    /// A driver calls it before it gives the session an input, so that the request that input
    /// may start (after the last tool result) already offers the new set.
    ///
    /// `update_plan` is the session's own tool (no driver runs it, so a driver's set does not
    /// hold it): while it is offered, it stays offered.
    pub fn handle_tools_changed(
        &mut self,
        mut tools: Vec<ToolSpec>,
        reason: impl Into<ToolsReason>,
    ) {
        let reason = reason.into();
        let s = &mut self.shared;
        let own = crate::plan::UPDATE_PLAN;
        if !tools.iter().any(|t| t.name == own) {
            if let Some(plan) = s.config.tools.iter().find(|t| t.name == own) {
                tools.push(plan.clone());
            }
        }
        let by_name = |list: &[ToolSpec]| -> std::collections::HashMap<String, ToolSpec> {
            list.iter().map(|t| (t.name.clone(), t.clone())).collect()
        };
        let (before, after) = (by_name(&s.config.tools), by_name(&tools));
        let added: Vec<String> = tools
            .iter()
            .filter(|t| !before.contains_key(&t.name))
            .map(|t| t.name.clone())
            .collect();
        let removed: Vec<String> = s
            .config
            .tools
            .iter()
            .filter(|t| !after.contains_key(&t.name))
            .map(|t| t.name.clone())
            .collect();
        let updated: Vec<String> = tools
            .iter()
            .filter(|t| before.get(&t.name).is_some_and(|b| b != *t))
            .map(|t| t.name.clone())
            .collect();
        let unchanged = added.is_empty() && removed.is_empty() && updated.is_empty();
        if unchanged && reason.when_unchanged != WhenUnchanged::Report {
            return;
        }
        if !unchanged {
            s.config.tools = tools;
            s.context.tools_changed(&s.config);
        }
        let reason = s.redact(reason.text);
        s.emit(Event::ToolsChanged {
            reason,
            added,
            removed,
            updated,
        });
    }

    /// Counts tokens a subagent of the running turn used (one of its requests' `usage`): they
    /// go into the session's [`Session::usage`] and the turn's usage in
    /// [`Event::TurnFinished`], so what a turn cost includes its children. The parent's
    /// context measure is untouched: the child's prompt is not in this history. When idle,
    /// only the session's totals count them.
    pub fn add_child_usage(&mut self, usage: &Usage) {
        self.shared.totals.add(usage);
        if let Some(turn) = &mut self.turn {
            turn.add_child_usage(usage);
        }
    }

    /// A subagent's event: the child session a running `task` call `child.parent_call_id`
    /// drives produced it, and the driver's task tool handed it to this session's runner.
    /// It comes out of this session's [`Session::poll`] as [`Event::Child`], so the owner
    /// reads a child's activity where it reads the parent's; a child's [`Event::Usage`] is
    /// counted as [`Session::add_child_usage`] counts it, before the event goes out. Late
    /// events (the turn ended, a stopped child still finishing) still come out, at the next
    /// poll: a child's final event belongs in the record.
    ///
    /// A child's [`Event::ApprovalRequested`] is a question to this session's owner: the
    /// child waits until the answer comes back as [`Action::AnswerChild`]. It is pending
    /// ([`Session::child_questions`]) while its parent call runs; one whose parent call does
    /// not run (any more) is denied at once, so the child never waits in vain.
    pub fn handle_child_event(&mut self, child: crate::task::ChildEvent) {
        match &child.event {
            Event::Usage { usage } => self.add_child_usage(usage),
            Event::ApprovalRequested {
                id,
                name,
                arguments,
            } => self.child_questions.push(ChildQuestion {
                parent_call_id: child.parent_call_id.clone(),
                agent: child.agent.clone(),
                call_id: id.clone(),
                name: name.clone(),
                arguments: arguments.clone(),
            }),
            Event::TurnStarted { .. }
            | Event::RequestStarted { .. }
            | Event::TextDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::RefusalDelta { .. }
            | Event::ToolCallStreaming { .. }
            | Event::ToolCall { .. }
            | Event::ToolResult { .. }
            | Event::Retry { .. }
            | Event::OptionDropped { .. }
            | Event::ToolsChanged { .. }
            | Event::ContextCompacted { .. }
            | Event::PlanUpdated { .. }
            | Event::Message { .. }
            | Event::Checkpoint { .. }
            | Event::CheckpointFailed { .. }
            | Event::Hook { .. }
            | Event::TurnFinished { .. }
            | Event::TurnFailed { .. }
            | Event::TurnCancelled
            | Event::Child(_) => {}
        }
        self.shared.emit(Event::Child(Box::new(child)));
        self.settle_child_questions();
    }

    /// The owner's answer to `question`, the session's own call's or a subagent's: one path
    /// for both. A subagent's answer goes out as [`Action::AnswerChild`] and keeps the
    /// meaning it has for the child's own session ("always" is for the child's later calls
    /// of that tool). Fails with [`SessionError::UnknownChildQuestion`] for a child's
    /// question that is not pending (late, or never asked), as [`Session::handle_approval`]
    /// fails for an unknown call.
    pub fn handle_answer(
        &mut self,
        now: Instant,
        question: &Question,
        approval: Approval,
    ) -> Result<(), SessionError> {
        match question {
            Question::Call(run) => self.handle_approval(now, &run.call_id, approval),
            Question::Child(q) => {
                self.handle_child_approval(&q.parent_call_id, &q.call_id, approval)
            }
        }
    }

    /// The owner's answer about the call `call_id` of the subagent of the `task` call
    /// `parent_call_id` ([`Session::handle_answer`]).
    pub fn handle_child_approval(
        &mut self,
        parent_call_id: &str,
        call_id: &str,
        approval: Approval,
    ) -> Result<(), SessionError> {
        self.settle_child_questions();
        let Some(q) = self.child_questions.take(parent_call_id, call_id) else {
            return Err(SessionError::child_question(parent_call_id, call_id));
        };
        self.shared.outbox.push(Action::AnswerChild {
            parent_call_id: q.parent_call_id,
            call_id: q.call_id,
            approval,
        });
        Ok(())
    }

    // ----- inputs -----
    //
    // Each takes `now` and returns an error only for misuse: an id this session never issued,
    // or data before a head. Input that comes late (for a request or call that finished or
    // was cancelled meanwhile) is accepted and ignored.

    /// The status line and headers of the response to `req` arrived. Without the wall time a
    /// `Retry-After` HTTP date cannot be read (backoff applies instead); drivers call
    /// [`Session::handle_response_head_at`].
    pub fn handle_response_head<'a>(
        &mut self,
        now: Instant,
        req: RequestId,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) -> Result<(), SessionError> {
        self.response_head(now, None, req, status, headers)
    }

    /// [`Session::handle_response_head`] with the wall time the head arrived at (the core has
    /// no clock), so that `Retry-After: <HTTP-date>` is honoured like `Retry-After: <seconds>`.
    pub fn handle_response_head_at<'a>(
        &mut self,
        now: Instant,
        wall: SystemTime,
        req: RequestId,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) -> Result<(), SessionError> {
        self.response_head(now, Some(wall), req, status, headers)
    }

    fn response_head<'a>(
        &mut self,
        now: Instant,
        wall: Option<SystemTime>,
        req: RequestId,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) -> Result<(), SessionError> {
        if let Some(turn) = awaiting(&self.shared, &mut self.turn, req)? {
            turn.on_head(&self.shared, now, wall, status, headers);
        }
        Ok(())
    }

    /// Body bytes of the response to `req` arrived (any split, any size).
    pub fn handle_response_data(
        &mut self,
        now: Instant,
        req: RequestId,
        bytes: &[u8],
    ) -> Result<(), SessionError> {
        if let Some(turn) = awaiting(&self.shared, &mut self.turn, req)? {
            let result = turn.on_data(&mut self.shared, now, bytes);
            self.end_if_over();
            return result;
        }
        Ok(())
    }

    /// The body of the response to `req` ended.
    pub fn handle_response_end(
        &mut self,
        now: Instant,
        req: RequestId,
    ) -> Result<(), SessionError> {
        if let Some(turn) = awaiting(&self.shared, &mut self.turn, req)? {
            turn.on_end(&mut self.shared, now);
            self.end_if_over();
        }
        Ok(())
    }

    /// The request `req` failed in transport (before or during its response). Before any
    /// answer text was shown a passing failure (not TLS, say) is retried; after, the turn fails (a retry would show the
    /// text twice) and the text shown stays in the history, marked as cut off. An answer
    /// whose every choice already has its finish reason is whole: the break ends it as
    /// [`Session::handle_response_end`] would.
    pub fn handle_transport_error(
        &mut self,
        now: Instant,
        req: RequestId,
        error: TransportError,
    ) -> Result<(), SessionError> {
        if let Some(turn) = awaiting(&self.shared, &mut self.turn, req)? {
            turn.on_transport_error(&mut self.shared, now, error);
            self.end_if_over();
        }
        Ok(())
    }

    /// A tool finished (in any order).
    pub fn handle_tool_output(
        &mut self,
        now: Instant,
        call_id: &str,
        output: ToolOutput,
    ) -> Result<(), SessionError> {
        let result = match &mut self.turn {
            Some(turn) => turn.on_tool_output(&mut self.shared, now, call_id, output),
            None => self.shared.late_call(call_id),
        };
        self.end_if_over();
        result
    }

    /// The driver has no tool of this call's name: the model is told so.
    pub fn handle_tool_unavailable(
        &mut self,
        now: Instant,
        call_id: &str,
        name: &str,
    ) -> Result<(), SessionError> {
        let text = format!("The tool `{name}` is not available in this driver.");
        self.handle_tool_output(now, call_id, ToolOutput::error(text))
    }

    /// The user decided about a call that waited for approval ([`Approval::Unattended`] when
    /// nobody can be asked).
    pub fn handle_approval(
        &mut self,
        now: Instant,
        call_id: &str,
        approval: Approval,
    ) -> Result<(), SessionError> {
        let result = match &mut self.turn {
            Some(turn) => turn.on_approval(&mut self.shared, now, call_id, approval),
            None => self.shared.late_call(call_id),
        };
        self.end_if_over();
        result
    }

    /// The outcome of an [`Action::TakeCheckpoint`]: the session records it
    /// ([`Event::Checkpoint`], or a warning when it failed) and lets the calls go on. An
    /// outcome for a checkpoint no longer awaited (the turn was cancelled) is ignored.
    pub fn handle_checkpoint(
        &mut self,
        now: Instant,
        id: u64,
        outcome: crate::checkpoint::CheckpointOutcome,
    ) {
        if let Some(turn) = &mut self.turn {
            turn.on_checkpoint(&mut self.shared, now, id, outcome);
            self.end_if_over();
        }
    }

    /// The results of an [`Action::RunHooks`], one per command in its order. Each becomes a
    /// [`Event::Hook`], and their combined decision goes to whatever waited on them (a call,
    /// the prompt, the end of the turn). Results nobody waits for any more (the turn was
    /// cancelled) are ignored.
    pub fn handle_hooks(
        &mut self,
        now: Instant,
        id: u64,
        runs: Vec<crate::hooks::HookRun>,
    ) -> Result<(), SessionError> {
        let Some(answer) = self.shared.hook_answers(id, runs)? else {
            return Ok(());
        };
        if let Some(turn) = &mut self.turn {
            turn.on_hooks(&mut self.shared, now, answer);
            self.end_if_over();
        }
        Ok(())
    }

    /// The hooks of `SessionEnd`, for the owner to run when the session ends (`reason` as
    /// Claude Code names it); their results go to [`Session::handle_hooks`] like any others.
    /// `None` when none is configured.
    pub fn end(&mut self, reason: crate::hooks::EndReason) -> Option<crate::hooks::HookDue> {
        let input = self
            .shared
            .hook_input(crate::hooks::HookEvent::SessionEnd)
            .with("reason", reason.as_str());
        self.shared.due_hooks(
            crate::hooks::HookEvent::SessionEnd,
            Some(reason.as_str()),
            None,
            input,
            crate::hooks::HookWait::Background,
        )
    }

    /// The `Notification` hooks (`notification_type: idle_prompt`) for the owner to run when
    /// the prompt has waited idle for the user after a turn (Claude Code waits
    /// [`IDLE_NOTIFICATION_AFTER`](crate::hooks::IDLE_NOTIFICATION_AFTER)); their results go
    /// to [`Session::handle_hooks`] and are only shown. `None` when none is due.
    pub fn notify_idle(&mut self) -> Option<crate::hooks::HookDue> {
        let kind = "idle_prompt";
        let input = self
            .shared
            .hook_input(crate::hooks::HookEvent::Notification)
            .with("message", "hrns is waiting for your input")
            .with("notification_type", kind);
        self.shared.due_hooks(
            crate::hooks::HookEvent::Notification,
            Some(kind),
            None,
            input,
            crate::hooks::HookWait::Background,
        )
    }

    /// Time passed: a retry whose delay is over is sent; tool calls past their deadline are
    /// stopped; a response stream idle past [`SessionConfig::stream_idle_timeout`] fails as a
    /// transport error ([`TransportErrorKind::Timeout`]), retried when nothing was shown yet.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(turn) = &mut self.turn {
            turn.on_timeout(&mut self.shared, now);
            self.end_if_over();
        }
        self.settle_child_questions();
    }

    // ----- output -----

    /// The next thing to do, or `None` when the session waits for input.
    pub fn poll(&mut self) -> Option<Action> {
        self.shared.outbox.pop()
    }

    /// Everything [`Session::poll`] would return until `None`, at once: the events appended to
    /// `events` and the other actions to `actions`, each list in order.
    ///
    /// What is lost is only the order between an event and an action, which no driver needs
    /// (an action is done, an event shown, whichever comes first). What is gained: a fast
    /// stream queues hundreds of deltas per read, and they are handed over together — into
    /// an empty `events`, by swapping buffers — instead of each moving through `poll` on its
    /// own.
    pub fn poll_into(&mut self, events: &mut Vec<Event>, actions: &mut Vec<Action>) {
        self.shared.outbox.take_into(events, actions);
    }

    // ----- internals -----

    /// Drops the turn once its final event went out.
    fn end_if_over(&mut self) {
        if self.turn.as_ref().is_some_and(Turn::is_over) {
            self.turn = None;
        }
        self.settle_child_questions();
    }

    /// Denies and forgets the children's questions whose parent call stopped (timed out,
    /// cancelled, ended): their children are stopped and must not wait. Nothing to do (one
    /// test) on the stream path, where no child asks.
    fn settle_child_questions(&mut self) {
        let turn = self.turn.as_ref();
        let outbox = &mut self.shared.outbox;
        self.child_questions.settle(
            |call_id| turn.is_some_and(|t| t.runs(call_id)),
            |answer| outbox.push(answer),
        );
    }
}

/// The turn if it awaits `req`; `None` for a request that was issued but is no longer awaited
/// (late input, ignored); an error for one never issued.
fn awaiting<'t>(
    shared: &Shared,
    turn: &'t mut Option<Turn>,
    req: RequestId,
) -> Result<Option<&'t mut Turn>, SessionError> {
    if !shared.issued(req) {
        return Err(SessionError::UnknownRequest(req));
    }
    Ok(turn.as_mut().filter(|t| t.awaits(req)))
}
