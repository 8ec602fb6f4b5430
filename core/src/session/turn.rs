//! One turn of the loop and its transitions, all in this file:
//!
//! ```text
//! Requesting ──answer complete──► (no calls) Over: TurnFinished
//!     │  │                      │   (no calls, an output schema missed once) ──► Requesting
//!     │  │                      └► (calls)    Tools ──all answered──► Requesting (next step)
//!     │  └─failed, retryable, nothing shown──► RetryWait ──deadline──► Requesting (next attempt)
//!     └─failed otherwise──► Over: TurnFailed            (cancel, any phase) ──► Over: TurnCancelled
//! ```
//!
//! The response path (reading one answer) is [`AnswerReader`] plus the helpers in
//! `response.rs`; the tool-call path is [`Calls`]. Both borrow the session's [`Shared`]
//! state; this file only moves between phases.

use super::TokenTotals;
use super::calls::Calls;
use super::context::Compaction;
use super::deltas::{Deltas, Kind as DeltaKind};
use super::event::{Event, TransportError, TransportErrorKind, TurnError};
use super::response::{self, BROKEN_MARKER, INTERRUPTED_MARKER};
use super::shared::Shared;
use super::{Approval, SessionError, retry};
use crate::accumulate::{Completion, FinishReason};
use crate::answer::{AnswerError, AnswerReader};
use crate::hooks::{HookEvent, HookWait};
use crate::http::RequestId;
use crate::stream::{StreamError, StreamEvent, StreamFailure};
use crate::tool::ToolOutput;
use crate::wire::{ApiError, Message, Usage};
use std::time::{Duration, Instant, SystemTime};

#[derive(Debug)]
pub(super) struct Turn {
    /// The model request of this turn, from 1.
    step: u32,
    usage: TokenTotals,
    /// Whether any request of the turn reported usage.
    usage_reported: bool,
    phase: Phase,
    /// A compaction under way: the request out is its summary request.
    pub(super) compaction: Option<Compaction>,
    /// What was done after an overflow answer in this step; a second overflow fails.
    pub(super) overflow_tried: Option<String>,
    /// Whether the model was already asked again for an answer that matches the output schema.
    output_tries: OutputTries,
    /// How many times in a row a `Stop` hook kept this turn going.
    stop_blocks: u32,
    /// Context from `SessionStart` hooks, added to the prompt.
    start_context: Vec<String>,
}

/// How many times in a row a `Stop` hook may keep a turn going; then the turn ends.
pub(super) const MAX_STOP_BLOCKS: u32 = 8;

/// What waits on hooks the turn asked for.
#[derive(Debug)]
enum AfterHooks {
    /// `SessionStart`: then the prompt's own hooks, then the prompt.
    SessionStart(Box<Message>),
    /// `UserPromptSubmit`: then the prompt enters the history and goes out.
    Prompt(Box<Message>),
    /// `Stop`: the turn ends, unless a hook keeps it going.
    Stop {
        finish_reason: Option<FinishReason>,
        text: String,
    },
}

/// How often the final answer was asked for under an output schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutputTries {
    /// Not asked again yet: a miss is told to the model, which answers once more.
    First,
    /// Asked again once: a second miss fails the turn.
    Retried,
}

#[derive(Debug)]
enum Phase {
    /// A request is out; its answer is being read. `shown` once the user saw part of it.
    /// `idle_until`: from the response head on, when the stream counts as dead unless data
    /// (a stream event: text, reasoning, a tool call, usage, the end) comes first; SSE
    /// comments, empty keep-alive events and chunks that carry nothing do not move it
    /// ([`SessionConfig::stream_idle_timeout`](super::SessionConfig::stream_idle_timeout)).
    Requesting {
        req: RequestId,
        attempt: u32,
        answer: Box<AnswerReader>,
        shown: bool,
        idle_until: Option<Instant>,
    },
    /// A failed request waits for its retry.
    RetryWait { deadline: Instant, attempt: u32 },
    /// The answer's tool calls are running or waiting.
    Tools(Calls),
    /// Hooks run; what follows waits on their answer.
    Hooks { id: u64, then: AfterHooks },
    /// The final event went out; the session drops the turn.
    Over,
}

impl Turn {
    fn new() -> Self {
        Turn {
            step: 1,
            usage: TokenTotals::default(),
            usage_reported: false,
            phase: Phase::Over,
            compaction: None,
            overflow_tried: None,
            output_tries: OutputTries::First,
            stop_blocks: 0,
            start_context: Vec::new(),
        }
    }

    /// Starts a turn with the user's `message`: it enters the history and the first request
    /// goes out (after pruning or compacting, when the history is past the threshold) — once
    /// the hooks of `SessionStart` (the session's first turn) and `UserPromptSubmit` let it.
    pub(super) fn start(s: &mut Shared, message: Message) -> Self {
        let mut turn = Turn::new();
        let starts = match s.config.hooks.start {
            crate::hooks::StartSource::Startup
            | crate::hooks::StartSource::Resume
            | crate::hooks::StartSource::Clear => true,
            crate::hooks::StartSource::Continued => false,
        };
        if s.turns == 1 && starts && s.config.hooks.role == crate::hooks::AgentRole::Main {
            let source = s.config.hooks.start.as_str();
            let input = s
                .hook_input(HookEvent::SessionStart)
                .with("source", source)
                .with("model", s.config.model.clone());
            if let Some(id) = s.run_hooks(
                HookEvent::SessionStart,
                Some(source),
                None,
                input,
                HookWait::Awaited,
            ) {
                turn.phase = Phase::Hooks {
                    id,
                    then: AfterHooks::SessionStart(Box::new(message)),
                };
                return turn;
            }
        }
        turn.prompt(s, message);
        turn
    }

    /// Runs the prompt's hooks, or sends it when there are none.
    fn prompt(&mut self, s: &mut Shared, message: Message) {
        let input = s
            .hook_input(HookEvent::UserPromptSubmit)
            .with("prompt", message.text());
        match s.run_hooks(
            HookEvent::UserPromptSubmit,
            None,
            None,
            input,
            HookWait::Awaited,
        ) {
            Some(id) => {
                self.phase = Phase::Hooks {
                    id,
                    then: AfterHooks::Prompt(Box::new(message)),
                }
            }
            None => self.send_prompt(s, message),
        }
    }

    /// The prompt enters the history, with the hooks' context, and goes out.
    fn send_prompt(&mut self, s: &mut Shared, mut message: Message) {
        let context = std::mem::take(&mut self.start_context);
        if let Some(text) = super::hooks::context_text(HookEvent::UserPromptSubmit, &context) {
            add_text(&mut message, &text);
        }
        s.push_history(message);
        self.send_step(s);
    }

    /// The answer of hooks this turn (or one of its calls) waited on.
    pub(super) fn on_hooks(&mut self, s: &mut Shared, now: Instant, answer: super::hooks::Answer) {
        match &mut self.phase {
            Phase::Tools(calls) => {
                calls.on_hooks(s, now, answer);
                self.advance(s);
            }
            Phase::Hooks { id, .. } if *id == answer.id => {
                let Phase::Hooks { then, .. } = std::mem::replace(&mut self.phase, Phase::Over)
                else {
                    unreachable!("matched as hooks above");
                };
                self.after_hooks(s, then, answer.combined);
            }
            Phase::Hooks { .. }
            | Phase::Requesting { .. }
            | Phase::RetryWait { .. }
            | Phase::Over => {}
        }
    }

    fn after_hooks(&mut self, s: &mut Shared, then: AfterHooks, c: crate::hooks::Combined) {
        match then {
            AfterHooks::SessionStart(message) => {
                if let Some(reason) = c.stop {
                    let event = HookEvent::SessionStart.name().to_owned();
                    return self.fail(s, TurnError::HookStopped { event, reason });
                }
                self.start_context = c.context;
                self.prompt(s, *message);
            }
            AfterHooks::Prompt(message) => {
                let event = HookEvent::UserPromptSubmit.name().to_owned();
                if let Some(reason) = c.stop {
                    return self.fail(s, TurnError::HookStopped { event, reason });
                }
                if let Some(reason) = c.block {
                    return self.fail(s, TurnError::HookBlocked { event, reason });
                }
                self.start_context.extend(c.context);
                self.send_prompt(s, *message);
            }
            AfterHooks::Stop {
                finish_reason,
                text,
            } => match c.block {
                Some(reason) if c.stop.is_none() => {
                    self.stop_blocks += 1;
                    if self.step >= s.config.max_steps {
                        let limit = s.config.max_steps;
                        return self.fail(s, TurnError::StepLimit { limit });
                    }
                    let event = s.stop_event();
                    s.push_history(Message::user(format!(
                        "A {event} hook did not let the turn end yet. Its reason: {reason}\n\nContinue the work; answer again when it is done."
                    )));
                    self.step += 1;
                    self.send_step(s);
                }
                Some(_) | None => self.answered_now(s, finish_reason, &text),
            },
        }
    }

    /// Starts a turn that only compacts the history (`/compact`).
    pub(super) fn start_compaction(s: &mut Shared, compaction: Compaction) -> Self {
        let mut turn = Turn::new();
        turn.begin_compaction(s, compaction);
        turn
    }

    /// A subagent's request usage, counted in the turn's.
    pub(super) fn add_child_usage(&mut self, usage: &Usage) {
        self.usage.add(usage);
        self.usage_reported = true;
    }

    pub(super) fn awaits(&self, id: RequestId) -> bool {
        matches!(self.phase, Phase::Requesting { req, .. } if req == id)
    }

    pub(super) fn deadline(&self) -> Option<Instant> {
        match &self.phase {
            Phase::RetryWait { deadline, .. } => Some(*deadline),
            Phase::Tools(calls) => calls.deadline(),
            Phase::Requesting { idle_until, .. } => *idle_until,
            // A hook's timeout is the driver's: it kills the hook and reports it.
            Phase::Hooks { .. } | Phase::Over => None,
        }
    }

    pub(super) fn asked(&self) -> Option<&super::ToolRun> {
        match &self.phase {
            Phase::Tools(calls) => calls.asked(),
            Phase::Requesting { .. }
            | Phase::RetryWait { .. }
            | Phase::Hooks { .. }
            | Phase::Over => None,
        }
    }

    /// Whether the call `call_id` runs now (a `task` call whose child may ask).
    pub(super) fn runs(&self, call_id: &str) -> bool {
        match &self.phase {
            Phase::Tools(calls) => calls.runs(call_id),
            Phase::Requesting { .. }
            | Phase::RetryWait { .. }
            | Phase::Hooks { .. }
            | Phase::Over => false,
        }
    }

    pub(super) fn is_over(&self) -> bool {
        matches!(self.phase, Phase::Over)
    }

    // ----- the response path -----

    pub(super) fn on_head<'a>(
        &mut self,
        s: &Shared,
        now: Instant,
        wall: Option<SystemTime>,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) {
        if let Phase::Requesting {
            answer, idle_until, ..
        } = &mut self.phase
        {
            *idle_until = s.config.stream_idle_timeout.map(|idle| now + idle);
            match wall {
                Some(wall) => answer.handle_head_at(wall, status, headers),
                None => answer.handle_head(status, headers),
            }
        }
    }

    pub(super) fn on_data(
        &mut self,
        s: &mut Shared,
        now: Instant,
        bytes: &[u8],
    ) -> Result<(), SessionError> {
        let Phase::Requesting { req, answer, .. } = &mut self.phase else {
            return Ok(());
        };
        if !answer.handle_data(bytes) {
            return Err(SessionError::DataBeforeHead(*req));
        }
        self.drain_answer(s, now);
        Ok(())
    }

    pub(super) fn on_end(&mut self, s: &mut Shared, now: Instant) {
        if let Phase::Requesting { answer, .. } = &mut self.phase {
            answer.handle_end();
            self.drain_answer(s, now);
        }
    }

    pub(super) fn on_transport_error(
        &mut self,
        s: &mut Shared,
        now: Instant,
        error: TransportError,
    ) {
        if let Phase::Requesting { attempt, shown, .. } = self.phase {
            self.transport_failed(s, now, attempt, shown, error);
        }
    }

    /// Whether the answer being read is whole, so that a connection that breaks (or stalls)
    /// now ends it rather than failing it: every choice has its finish reason, and only usage
    /// or `[DONE]` could still come.
    fn answer_is_whole(&self) -> bool {
        matches!(&self.phase, Phase::Requesting { answer, .. } if answer.is_whole())
    }

    fn transport_failed(
        &mut self,
        s: &mut Shared,
        now: Instant,
        attempt: u32,
        shown: bool,
        error: TransportError,
    ) {
        if self.answer_is_whole() {
            return self.on_end(s, now);
        }
        let message = s.redact(error.message);
        if shown {
            if let Phase::Requesting { answer, .. } = &self.phase {
                keep_shown(s, answer.content(), BROKEN_MARKER);
            }
            return self.fail(s, TurnError::StreamBroken { message });
        }
        // Name the URL that could not be reached: a typo in it is the usual cause.
        let url = super::config::endpoint(&s.config.provider.base_url, "chat/completions");
        let failure = TurnError::Transport {
            kind: error.kind,
            message: format!("{url}: {message}"),
        };
        if error.kind.is_retryable() {
            self.retry_or_fail(s, now, attempt, message, None, failure);
        } else {
            self.fail(s, failure);
        }
    }

    /// Moves the answer's events to the user; once it is complete, decides what follows.
    fn drain_answer(&mut self, s: &mut Shared, now: Instant) {
        let Phase::Requesting {
            answer,
            shown,
            idle_until,
            ..
        } = &mut self.phase
        else {
            return;
        };
        // A summary request's answer is not shown: only its outcome is.
        let quiet = self.compaction.is_some();
        let mut data = false;
        // The deltas of this read leave merged, one event per run of a kind.
        let mut deltas = Deltas::default();
        let mut emit = |event| s.emit(event);
        while let Some(ev) = answer.poll_event() {
            data = true;
            if quiet {
                continue;
            }
            // The deltas of the answer (choice 0) go straight into the run of their kind.
            let (kind, text) = match ev {
                StreamEvent::ContentDelta { choice: 0, text } => (DeltaKind::Text, text),
                StreamEvent::ReasoningDelta { choice: 0, text } => (DeltaKind::Reasoning, text),
                StreamEvent::RefusalDelta { choice: 0, text } => (DeltaKind::Refusal, text),
                other => {
                    if let Some(event) = response::ui_event(other) {
                        *shown = true;
                        deltas.push(event, &mut emit);
                    }
                    continue;
                }
            };
            *shown = true;
            deltas.push_delta(kind, text, &mut emit);
        }
        deltas.flush(&mut emit);
        if data {
            *idle_until = s.config.stream_idle_timeout.map(|idle| now + idle);
        }
        if !answer.is_complete() {
            return;
        }
        let Phase::Requesting {
            attempt,
            answer,
            shown,
            ..
        } = std::mem::replace(&mut self.phase, Phase::Over)
        else {
            unreachable!("matched as requesting above");
        };
        match answer.finish() {
            Ok(completion) => self.completed(s, now, completion),
            // The reader's parse of the body is not used: the body is redacted first.
            Err(AnswerError::Status {
                status,
                retry_after,
                body,
                ..
            }) => self.error_status(s, now, attempt, status, retry_after, &body),
            Err(AnswerError::Stream(StreamFailure { error, partial })) => {
                // An answer past the size cap stays out: it is what the cap keeps out of
                // memory and out of the next request.
                if shown && !matches!(error, StreamError::AnswerTooLarge { .. }) {
                    let text = partial.choices.into_iter().find(|c| c.index == 0);
                    keep_shown(
                        s,
                        text.map(|c| c.content).unwrap_or_default(),
                        BROKEN_MARKER,
                    );
                }
                self.stream_failed(s, now, attempt, error, shown)
            }
            Err(AnswerError::UnexpectedContent {
                status,
                content_type,
                body_start,
            }) => {
                let body_start = s.redact(body_start);
                let error = TurnError::UnexpectedContent {
                    status,
                    content_type,
                    body_start,
                };
                self.fail(s, error);
            }
            Err(AnswerError::NoHead) => {
                let err = TransportError::new(
                    TransportErrorKind::Io,
                    "the response ended before its status line",
                );
                self.transport_failed(s, now, attempt, shown, err);
            }
        }
    }

    fn stream_failed(
        &mut self,
        s: &mut Shared,
        now: Instant,
        attempt: u32,
        error: StreamError,
        shown: bool,
    ) {
        if let StreamError::Provider { error: api } = &error {
            if !shown && self.on_overflow(s, None, api) {
                return;
            }
        }
        let retryable = response::stream_error_is_retryable(&error);
        let error = response::redact_stream_error(s, error);
        if shown || !retryable {
            self.fail(s, TurnError::Stream { error });
        } else {
            let reason = error.to_string();
            self.retry_or_fail(s, now, attempt, reason, None, TurnError::Stream { error });
        }
    }

    fn error_status(
        &mut self,
        s: &mut Shared,
        now: Instant,
        attempt: u32,
        status: u16,
        retry_after: Option<Duration>,
        body: &str,
    ) {
        // Redacted before it is parsed or shortened, so no field (message, type, code, param,
        // unknown ones) and no cut-off piece of a key survives.
        let body = s.redact(body.to_owned());
        let body = body.as_str();
        let api = ApiError::from_body(body.as_bytes());
        if matches!(status, 400 | 422) {
            let param = api
                .param
                .as_ref()
                .map(|p| p.to_string())
                .unwrap_or_default();
            let text = [api.message.as_str(), &param, body];
            // Only a turn request with an output schema carries `response_format`.
            let learned = match (&s.config.output, &self.compaction) {
                (Some(_), None) => s.quirks.learn_rejection_with_format(&text),
                (Some(_), Some(_)) | (None, _) => s.quirks.learn_rejection(&text),
            };
            if let Some((field, quirks)) = learned {
                s.quirks = quirks;
                s.emit(Event::OptionDropped {
                    field: field.to_owned(),
                    reason: api.message.clone(),
                });
                return self.request(s, attempt);
            }
        }
        if self.on_overflow(s, Some(status), &api) {
            return;
        }
        let failure = TurnError::Api {
            status,
            error: Box::new(api),
        };
        if retry::is_retryable_status(status) {
            let reason = failure.to_string();
            self.retry_or_fail(s, now, attempt, reason, retry_after, failure);
        } else {
            self.fail(s, failure);
        }
    }

    fn retry_or_fail(
        &mut self,
        s: &mut Shared,
        now: Instant,
        attempt: u32,
        reason: String,
        retry_after: Option<Duration>,
        failure: TurnError,
    ) {
        let policy = &s.config.retry;
        if let Some(wait) = retry_after.filter(|d| *d > policy.max_retry_after) {
            // Waiting that long would look like a hang: fail now and say how long.
            let error = TurnError::RetryAfterTooLong {
                wait_secs: whole_secs(wait),
                budget_secs: whole_secs(policy.max_retry_after),
                failure: Box::new(failure),
            };
            return self.fail(s, error);
        }
        if attempt >= policy.max_attempts {
            return self.fail(s, failure);
        }
        let delay = match retry_after {
            Some(d) => d,
            None => {
                let policy = s.config.retry.clone();
                s.jitter.backoff(&policy, attempt)
            }
        };
        s.emit(Event::Retry {
            attempt: attempt + 1,
            delay_ms: delay.as_millis().min(u64::MAX as u128) as u64,
            reason,
        });
        self.phase = Phase::RetryWait {
            deadline: now + delay,
            attempt: attempt + 1,
        };
    }

    // ----- the answer, and its tool calls -----

    fn completed(&mut self, s: &mut Shared, now: Instant, completion: Completion) {
        if let Some(usage) = &completion.usage {
            self.usage.add(usage);
            self.usage_reported = true;
            s.totals.add(usage);
            s.emit(Event::Usage {
                usage: Box::new(usage.clone()),
            });
        }
        let prompt_tokens = completion.usage.as_ref().and_then(|u| u.prompt_tokens);
        let mut choices = completion.choices;
        // The choice is moved out, not copied: a long answer exists once (issue 36).
        let first = (!choices.is_empty()).then_some(0);
        let Some(at) = choices.iter().position(|c| c.index == 0).or(first) else {
            return self.fail(s, TurnError::NoChoices);
        };
        let choice = choices.swap_remove(at);
        if let Some(compaction) = self.compaction.take() {
            let called: Vec<String> = choice.tool_calls.into_iter().map(|c| c.name).collect();
            return self.summary_done(s, compaction, choice.content, called);
        }
        self.overflow_tried = None;
        if let Some(tokens) = prompt_tokens {
            let bytes = s.context.sent_bytes;
            s.context.meter.observe(bytes, tokens);
        }
        let finish = choice.finish_reason.clone();
        let mut message = choice.into_message();
        // Already unique when it came through `Choice::into_message`; kept for any other path.
        crate::history::unique_call_ids(&mut message.tool_calls);
        if message.tool_calls.is_empty() {
            // Copied only for a `Stop` hook or an output schema to read: an answer of
            // megabytes is otherwise not duplicated on its way into the history.
            let text = if self.wants_text(s) {
                message.text()
            } else {
                String::new()
            };
            s.push_history(message);
            return self.answered(s, finish, &text);
        }
        let cut_off = match &finish {
            Some(reason @ (FinishReason::Length | FinishReason::ContentFilter)) => {
                Some(reason.as_str())
            }
            Some(_) | None => None,
        };
        s.checkpoint.step = self.step;
        let text = message.text();
        let calls = Calls::new(s, now, message, cut_off);
        if cut_off.is_some() {
            calls.answer(s);
            return self.answered(s, finish, &text);
        }
        if let Some(error) = s.stuck.take() {
            let mut calls = calls;
            calls.cancel(s);
            calls.answer(s);
            return self.fail(s, error);
        }
        self.phase = Phase::Tools(calls);
        self.advance(s);
    }

    pub(super) fn on_tool_output(
        &mut self,
        s: &mut Shared,
        now: Instant,
        call_id: &str,
        output: ToolOutput,
    ) -> Result<(), SessionError> {
        let Phase::Tools(calls) = &mut self.phase else {
            return s.late_call(call_id);
        };
        calls.output(s, now, call_id, output)?;
        self.advance(s);
        Ok(())
    }

    pub(super) fn on_approval(
        &mut self,
        s: &mut Shared,
        now: Instant,
        call_id: &str,
        approval: Approval,
    ) -> Result<(), SessionError> {
        let Phase::Tools(calls) = &mut self.phase else {
            return s.late_call(call_id);
        };
        calls.approve(s, now, call_id, approval)?;
        self.advance(s);
        Ok(())
    }

    pub(super) fn on_checkpoint(
        &mut self,
        s: &mut Shared,
        now: Instant,
        id: u64,
        outcome: crate::checkpoint::CheckpointOutcome,
    ) {
        if let Phase::Tools(calls) = &mut self.phase {
            if calls.on_checkpoint(s, now, id, outcome) {
                self.advance(s);
            }
        }
    }

    pub(super) fn on_timeout(&mut self, s: &mut Shared, now: Instant) {
        match &mut self.phase {
            Phase::RetryWait { deadline, attempt } => {
                if now >= *deadline {
                    let attempt = *attempt;
                    self.request(s, attempt);
                }
            }
            Phase::Tools(calls) => {
                calls.on_timeout(s, now);
                self.advance(s);
            }
            Phase::Requesting {
                idle_until: Some(deadline),
                attempt,
                shown,
                ..
            } => {
                if now >= *deadline {
                    let (attempt, shown) = (*attempt, *shown);
                    let error = stream_idle(s.config.stream_idle_timeout);
                    self.transport_failed(s, now, attempt, shown, error);
                }
            }
            Phase::Requesting {
                idle_until: None, ..
            }
            | Phase::Hooks { .. }
            | Phase::Over => {}
        }
    }

    /// When every call has its result: the results enter the history in call order and the
    /// next request goes out (or the step limit ends the turn).
    fn advance(&mut self, s: &mut Shared) {
        let Phase::Tools(calls) = &self.phase else {
            return;
        };
        if !calls.all_done() {
            return;
        }
        let Phase::Tools(calls) = std::mem::replace(&mut self.phase, Phase::Over) else {
            unreachable!("matched as tools above");
        };
        calls.answer(s);
        if let Some(error) = s.hook_stop.take() {
            return self.fail(s, error);
        }
        if self.step >= s.config.max_steps {
            let limit = s.config.max_steps;
            return self.fail(s, TurnError::StepLimit { limit });
        }
        self.step += 1;
        self.send_step(s);
    }

    // ----- ends -----

    pub(super) fn request(&mut self, s: &mut Shared, attempt: u32) {
        let req = s.send_request(self.step, attempt, self.compaction.as_ref());
        self.phase = Phase::Requesting {
            req,
            attempt,
            answer: Box::new(AnswerReader::with_limits(
                s.config.max_event_size,
                s.config.max_answer_bytes,
            )),
            shown: false,
            idle_until: None,
        };
    }

    /// Whether [`Turn::answered`] reads the answer's text: for a `Stop` hook that may run,
    /// or for the output schema. Otherwise the text is not copied out of the message.
    fn wants_text(&self, s: &Shared) -> bool {
        let stop_hook = self.stop_blocks < MAX_STOP_BLOCKS && s.has_hooks(s.stop_event());
        stop_hook || s.config.output.is_some()
    }

    /// The model answered without calls to run (`text` is its answer): the turn finishes,
    /// unless the answer must match an output schema and does not. A first miss is told to
    /// the model, which is asked once more (a step of its own, within the step limit); a
    /// second miss, or a first one at the step limit, fails the turn with the errors.
    /// `text` is the answer's text where [`Turn::wants_text`] says it is read (it may be
    /// empty otherwise).
    fn answered(&mut self, s: &mut Shared, finish_reason: Option<FinishReason>, text: &str) {
        // `Stop` hooks may keep the turn going, at most `MAX_STOP_BLOCKS` times in a row.
        if self.stop_blocks < MAX_STOP_BLOCKS && s.has_hooks(s.stop_event()) {
            let event = s.stop_event();
            let input = s
                .hook_input(event)
                .with("stop_hook_active", self.stop_blocks > 0)
                .with("last_assistant_message", text);
            if let Some(id) = s.run_hooks(event, None, None, input, HookWait::Awaited) {
                self.phase = Phase::Hooks {
                    id,
                    then: AfterHooks::Stop {
                        finish_reason,
                        text: text.to_owned(),
                    },
                };
                return;
            }
        }
        self.answered_now(s, finish_reason, text);
    }

    /// The turn's answer stands: it finishes (see [`Turn::answered`]).
    fn answered_now(&mut self, s: &mut Shared, finish_reason: Option<FinishReason>, text: &str) {
        let Some(output) = &s.config.output else {
            return self.finish(s, finish_reason);
        };
        match output.read(text) {
            Ok(value) => {
                self.phase = Phase::Over;
                s.emit(Event::TurnFinished {
                    finish_reason,
                    usage: self.usage_reported.then(|| Box::new(self.usage.to_usage())),
                    output: Some(Box::new(value)),
                });
            }
            Err(errors) => match self.output_tries {
                OutputTries::First if self.step < s.config.max_steps => {
                    self.output_tries = OutputTries::Retried;
                    s.push_history(Message::user(super::output::retry_message(&errors)));
                    self.step += 1;
                    self.send_step(s);
                }
                OutputTries::First | OutputTries::Retried => {
                    self.fail(s, TurnError::OutputSchemaUnmet { errors })
                }
            },
        }
    }

    pub(super) fn finish(&mut self, s: &mut Shared, finish_reason: Option<FinishReason>) {
        self.phase = Phase::Over;
        s.emit(Event::TurnFinished {
            finish_reason,
            usage: self.usage_reported.then(|| Box::new(self.usage.to_usage())),
            output: None,
        });
    }

    pub(super) fn fail(&mut self, s: &mut Shared, error: TurnError) {
        self.phase = Phase::Over;
        s.emit(Event::TurnFailed { error });
    }

    /// Ends the turn at once, leaving a valid history; see [`super::Session::cancel`].
    pub(super) fn cancel(&mut self, s: &mut Shared) {
        match std::mem::replace(&mut self.phase, Phase::Over) {
            Phase::Requesting {
                answer,
                shown: true,
                ..
            } => keep_shown(s, answer.content(), INTERRUPTED_MARKER),
            Phase::Tools(mut calls) => {
                calls.cancel(s);
                calls.answer(s);
            }
            Phase::Requesting { shown: false, .. }
            | Phase::RetryWait { .. }
            | Phase::Hooks { .. }
            | Phase::Over => {}
        }
        s.emit(Event::TurnCancelled);
    }
}

/// Keeps answer text the user already saw in the history, `marker` saying how it ended, so
/// that the next turn and the saved session hold what was shown. The history stays valid: a
/// tool call still being written is left out with its (unrun) call.
fn keep_shown(s: &mut Shared, text: String, marker: &str) {
    if !text.is_empty() {
        s.push_history(Message::assistant(text + marker));
    }
}

/// Adds `text` to a user message: after its text, or as one more text part.
fn add_text(message: &mut Message, text: &str) {
    match &mut message.content {
        Some(crate::wire::Content::Text(t)) => {
            t.push_str("\n\n");
            t.push_str(text);
        }
        Some(crate::wire::Content::Parts(parts)) => {
            parts.push(serde_json::json!({"type": "text", "text": text}));
        }
        None => message.content = Some(crate::wire::Content::Text(text.to_owned())),
    }
}

/// Seconds, rounded up: a wait of 0.2 s is "1 s", never "0 s".
fn whole_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// The transport error of a stream that sent no data for `idle` (only keep-alives, comments,
/// or nothing): retried like any timeout before output, a broken stream after.
fn stream_idle(idle: Option<Duration>) -> TransportError {
    let secs = idle.unwrap_or_default().as_secs_f64();
    TransportError {
        kind: TransportErrorKind::Timeout,
        message: format!(
            "the provider sent no data for {secs} s (only keep-alives or nothing); raise \
             `streamIdleTimeout` in the config if the model needs longer to answer"
        ),
    }
}
