//! The agent loop as a state machine: what to send, which tools to run, when to ask, retry,
//! stop — with no IO.
//!
//! # Method families and call order
//!
//! - getters (`&self`): [`Session::messages`], [`Session::is_idle`], [`Session::poll_timeout`],
//!   [`Session::wants_response`], [`Session::usage`];
//! - inputs: [`Session::handle_response_head`], [`Session::handle_response_data`],
//!   [`Session::handle_response_end`], [`Session::handle_transport_error`],
//!   [`Session::handle_tool_output`], [`Session::handle_approval`], [`Session::handle_timeout`];
//! - commands: [`Session::submit`], [`Session::cancel`];
//! - output: [`Session::poll`].
//!
//! **After any input or command, drain [`Session::poll`] until it returns `None`**, then wait
//! for whichever comes first: a response for a request you sent, a tool result, the user, or
//! the deadline of [`Session::poll_timeout`].
//!
//! Time enters only as `now` arguments and randomness only as the configured seed, so the same
//! inputs always give the same actions.

mod config;
mod context;
#[cfg(test)]
mod context_tests;
mod event;
mod request;
mod retry;
#[cfg(test)]
mod tests;
mod turn;

pub use config::{
    Approval, ApprovalPolicy, PolicyDecision, Provider, RequestOptions, RetryPolicy, SessionConfig,
};
pub use context::ContextUsage;
pub use event::{
    CompactMethod, CompactReason, EVENT_SCHEMA_VERSION, Event, ToolStatus, TransportError,
    TransportErrorKind, TurnError, TurnOutcome,
};
pub use request::endpoint;

use crate::history::{self, HistoryError};
use crate::http::{HttpRequest, RequestId};
use crate::quirks::ProviderQuirks;
use crate::secrets::Secrets;
use crate::tool::{Effect, ToolOutput};
use crate::wire::{Message, Usage};
use std::collections::{HashSet, VecDeque};
use std::time::Instant;
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
    /// The tool's effect class.
    pub effect: Effect,
}

/// A misuse of the session by its caller. The session's state is unchanged by a call that
/// returns one of these.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// `submit` while a turn is running; cancel it or wait for its final event.
    #[error("a turn is already running; wait for it to finish or cancel it")]
    Busy,
    /// A response for a request the session is not waiting for (never sent, already finished,
    /// or cancelled). Drop the response.
    #[error("{0} is not awaited (finished, cancelled or never sent)")]
    UnknownRequest(RequestId),
    /// A tool output or approval for a call the session is not waiting for.
    #[error("tool call `{0}` is not awaited (finished, cancelled or never issued)")]
    UnknownCall(String),
    /// Response data before the response head.
    #[error("response data for {0} arrived before its head")]
    DataBeforeHead(RequestId),
    /// `compact` with an empty history.
    #[error("there is nothing to compact yet")]
    NothingToCompact,
    /// A resumed history is not a valid conversation.
    #[error("invalid history: {0}")]
    InvalidHistory(#[from] HistoryError),
}

/// Token counts summed over requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenTotals {
    /// Prompt tokens.
    pub prompt: u64,
    /// Completion tokens.
    pub completion: u64,
}

impl TokenTotals {
    fn add(&mut self, usage: &Usage) {
        self.prompt += usage.prompt_tokens.unwrap_or(0);
        self.completion += usage.completion_tokens.unwrap_or(0);
    }

    fn to_usage(self) -> Usage {
        Usage {
            prompt_tokens: Some(self.prompt),
            completion_tokens: Some(self.completion),
            total_tokens: Some(self.prompt + self.completion),
            extra: Default::default(),
        }
    }
}

/// The agent loop; see the module docs for the call order.
#[derive(Debug)]
pub struct Session {
    config: SessionConfig,
    history: Vec<Message>,
    actions: VecDeque<Action>,
    turn: Option<Turn>,
    turns: u64,
    next_request: u64,
    jitter: retry::Jitter,
    approved_tools: HashSet<String>,
    quirks: ProviderQuirks,
    totals: TokenTotals,
    /// The last call signature (name and arguments) and how many times in a row it was made.
    last_call: Option<(String, u32)>,
    context: context::ContextState,
    /// The provider's secrets and the configured extra ones, redacted from everything that
    /// leaves the session.
    secrets: Secrets,
}

impl Session {
    /// A session with an empty history.
    pub fn new(config: SessionConfig) -> Self {
        let mut secrets = Secrets::of_provider(&config.provider);
        secrets.extend(&config.secrets);
        Session {
            secrets,
            jitter: retry::Jitter::new(config.seed),
            quirks: config.provider.quirks,
            context: context::ContextState::new(&config),
            config,
            history: Vec::new(),
            actions: VecDeque::new(),
            turn: None,
            turns: 0,
            next_request: 0,
            approved_tools: HashSet::new(),
            totals: TokenTotals::default(),
            last_call: None,
        }
    }

    /// A session that continues `history` (a resumed conversation). The history is repaired the
    /// way cancellation repairs it (unanswered calls get a placeholder result) and then checked.
    pub fn with_history(
        config: SessionConfig,
        mut history: Vec<Message>,
    ) -> Result<Self, SessionError> {
        history::repair(&mut history);
        history::validate(&history)?;
        let mut s = Self::new(config);
        s.context.remeasure(&history);
        s.history = history;
        Ok(s)
    }

    // ----- getters -----

    /// The conversation so far (without the system prompt). Always a valid request history.
    pub fn messages(&self) -> &[Message] {
        &self.history
    }

    /// The configuration.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// Whether no turn is running.
    pub fn is_idle(&self) -> bool {
        self.turn.is_none()
    }

    /// When to call [`Session::handle_timeout`] next, if a retry is waiting.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.turn.as_ref().and_then(Turn::deadline)
    }

    /// Whether the session still wants the response of `req`; when this turns false, the
    /// driver should drop the connection (the answer is complete, failed or cancelled).
    pub fn wants_response(&self, req: RequestId) -> bool {
        self.turn.as_ref().is_some_and(|t| t.awaits(req))
    }

    /// Tokens used in this session so far.
    pub fn usage(&self) -> TokenTotals {
        self.totals
    }

    /// Whether `stream_options` is still sent (false after the provider rejected it).
    pub fn sends_stream_options(&self) -> bool {
        self.quirks.stream_options == crate::quirks::StreamOptions::Send
    }

    /// The provider quirks requests obey now: the configured ones plus what this session
    /// learned from rejections.
    pub fn quirks(&self) -> ProviderQuirks {
        self.quirks
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
        self.turns += 1;
        self.emit(Event::TurnStarted { turn: self.turns });
        self.push_history(message);
        let mut turn = Turn::new();
        self.send_step(&mut turn);
        self.turn = Some(turn);
        Ok(())
    }

    /// Cancels the running turn at once, whatever it is doing. The history stays valid: every
    /// tool call gets a result ("cancelled"), and answer text the user already saw is kept,
    /// marked as interrupted. Ends the turn with [`Event::TurnCancelled`]. Does nothing when idle.
    pub fn cancel(&mut self) {
        let Some(turn) = self.turn.take() else {
            return;
        };
        turn.cancel(self);
        self.emit(Event::TurnCancelled);
    }

    // ----- inputs -----

    /// The status line and headers of the response to `req` arrived.
    pub fn handle_response_head<'a>(
        &mut self,
        now: Instant,
        req: RequestId,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) -> Result<(), SessionError> {
        self.with_turn(req, |turn, s| turn.on_head(s, now, status, headers))
    }

    /// Body bytes of the response to `req` arrived (any split).
    pub fn handle_response_data(
        &mut self,
        now: Instant,
        req: RequestId,
        bytes: &[u8],
    ) -> Result<(), SessionError> {
        self.with_turn(req, |turn, s| turn.on_data(s, now, req, bytes))
    }

    /// The body of the response to `req` ended.
    pub fn handle_response_end(
        &mut self,
        now: Instant,
        req: RequestId,
    ) -> Result<(), SessionError> {
        self.with_turn(req, |turn, s| turn.on_end(s, now, req))
    }

    /// The request `req` failed in transport (before or during its response).
    pub fn handle_transport_error(
        &mut self,
        now: Instant,
        req: RequestId,
        error: TransportError,
    ) -> Result<(), SessionError> {
        self.with_turn(req, |turn, s| {
            turn.on_transport_error(s, now, error);
            Ok(())
        })
    }

    /// A tool finished (in any order).
    pub fn handle_tool_output(
        &mut self,
        call_id: &str,
        output: ToolOutput,
    ) -> Result<(), SessionError> {
        let Some(mut turn) = self.turn.take() else {
            return Err(SessionError::UnknownCall(call_id.to_owned()));
        };
        let result = turn.on_tool_output(self, call_id, output);
        self.restore(turn);
        result
    }

    /// The user decided about a call that waited for approval.
    pub fn handle_approval(
        &mut self,
        call_id: &str,
        approval: Approval,
    ) -> Result<(), SessionError> {
        let Some(mut turn) = self.turn.take() else {
            return Err(SessionError::UnknownCall(call_id.to_owned()));
        };
        let result = turn.on_approval(self, call_id, approval);
        self.restore(turn);
        result
    }

    /// Time passed: a retry whose delay is over is sent.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(mut turn) = self.turn.take() {
            turn.on_timeout(self, now);
            self.restore(turn);
        }
    }

    // ----- output -----

    /// The next thing to do, or `None` when the session waits for input.
    pub fn poll(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    // ----- internals shared with `turn` -----

    fn with_turn(
        &mut self,
        req: RequestId,
        f: impl FnOnce(&mut Turn, &mut Session) -> Result<(), SessionError>,
    ) -> Result<(), SessionError> {
        let Some(mut turn) = self.turn.take() else {
            return Err(SessionError::UnknownRequest(req));
        };
        if !turn.awaits(req) {
            self.turn = Some(turn);
            return Err(SessionError::UnknownRequest(req));
        }
        let result = f(&mut turn, self);
        self.restore(turn);
        result
    }

    /// Puts the turn back unless it ended.
    fn restore(&mut self, turn: Turn) {
        if !turn.is_over() {
            self.turn = Some(turn);
        }
    }

    fn emit(&mut self, event: Event) {
        self.actions.push_back(Action::Emit(event));
    }

    fn push_history(&mut self, message: Message) {
        self.emit(Event::Message {
            message: message.clone(),
        });
        self.append(message);
    }

    /// Appends to the history, keeping its measure up to date.
    fn append(&mut self, message: Message) {
        self.context.appended(&message);
        self.history.push(message);
    }

    fn send_request(&mut self, turn: &mut Turn, attempt: u32) {
        let id = RequestId(self.next_request);
        self.next_request += 1;
        let req = match &turn.compaction {
            Some(compaction) => self.summary_request(id, compaction),
            None => {
                self.context.sent_bytes = self.context.request_bytes();
                request::chat_request(id, &self.config, &self.history, &self.quirks)
            }
        };
        turn.sent(id, attempt);
        self.emit(Event::RequestStarted {
            step: turn.step,
            attempt,
        });
        self.actions.push_back(Action::SendRequest(req));
    }

    /// Takes every known secret (and fragment of one) out of a text from outside.
    fn redact(&self, text: String) -> String {
        self.secrets.redact_string(text)
    }

    /// The secrets this session redacts: the provider's key and secret header values, and
    /// [`SessionConfig::secrets`]. Front ends use the same set for what they print and save.
    pub fn secrets(&self) -> &Secrets {
        &self.secrets
    }
}
