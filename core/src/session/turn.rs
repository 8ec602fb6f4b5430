//! One turn of the loop: its phases and every decision the session makes within it.

use super::context::Compaction;
use super::event::{Event, ToolStatus, TransportError, TurnError};
use super::retry;
use super::{Approval, PolicyDecision, Session, SessionError, TokenTotals, ToolRun};
use crate::accumulate::{Completion, FinishReason};
use crate::http::RequestId;
use crate::stream::{ChatStream, StreamError, StreamEvent, StreamFailure};
use crate::tool::ToolOutput;
use crate::wire::{ApiError, ChatResponse, Message};
use std::time::{Duration, Instant};

/// Most of an error body that is kept for the error message.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// The marker appended to answer text the user saw before cancelling.
pub(crate) const INTERRUPTED_MARKER: &str = "\n\n[interrupted by the user]";

#[derive(Debug)]
pub(super) struct Turn {
    /// The model request of this turn, from 1.
    pub(super) step: u32,
    usage: TokenTotals,
    /// Whether any request of the turn reported usage.
    usage_reported: bool,
    phase: Phase,
    /// A compaction under way: the request out is its summary request.
    pub(super) compaction: Option<Compaction>,
    /// What was done after an overflow answer in this step; a second overflow fails.
    pub(super) overflow_tried: Option<String>,
}

#[derive(Debug)]
enum Phase {
    /// Between creation and the first request.
    Starting,
    Requesting {
        req: RequestId,
        attempt: u32,
        response: Response,
    },
    RetryWait {
        deadline: Instant,
        attempt: u32,
    },
    /// Tool calls are running or waiting. The assistant message that made them enters the
    /// history together with their results, so the history is a valid request at every moment.
    Tools {
        assistant: Box<Message>,
        calls: Vec<PendingCall>,
    },
    Over,
}

#[derive(Debug)]
enum Response {
    AwaitingHead,
    Stream {
        stream: Box<ChatStream>,
        shown: bool,
    },
    Json {
        body: Vec<u8>,
    },
    Error {
        status: u16,
        retry_after: Option<Duration>,
        body: Vec<u8>,
    },
}

#[derive(Debug)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
    state: CallState,
}

#[derive(Debug)]
enum CallState {
    Running,
    /// Waits for the user; `asked` once the approval request went out (one at a time).
    AwaitingApproval {
        run: ToolRun,
        asked: bool,
    },
    Done {
        status: ToolStatus,
        output: ToolOutput,
    },
}

impl Turn {
    pub(super) fn new() -> Self {
        Turn {
            step: 1,
            usage: TokenTotals::default(),
            usage_reported: false,
            phase: Phase::Starting,
            compaction: None,
            overflow_tried: None,
        }
    }

    pub(super) fn sent(&mut self, req: RequestId, attempt: u32) {
        self.phase = Phase::Requesting {
            req,
            attempt,
            response: Response::AwaitingHead,
        };
    }

    pub(super) fn awaits(&self, id: RequestId) -> bool {
        matches!(self.phase, Phase::Requesting { req, .. } if req == id)
    }

    pub(super) fn deadline(&self) -> Option<Instant> {
        match self.phase {
            Phase::RetryWait { deadline, .. } => Some(deadline),
            _ => None,
        }
    }

    pub(super) fn is_over(&self) -> bool {
        matches!(self.phase, Phase::Over)
    }

    // ----- responses -----

    pub(super) fn on_head<'a>(
        &mut self,
        s: &mut Session,
        _now: Instant,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) -> Result<(), SessionError> {
        let Phase::Requesting { response, .. } = &mut self.phase else {
            return Ok(());
        };
        if !matches!(response, Response::AwaitingHead) {
            return Ok(());
        }
        let headers: Vec<(&str, &[u8])> = headers.into_iter().collect();
        *response = if (200..300).contains(&status) {
            let json = headers.iter().any(|(n, v)| {
                n.eq_ignore_ascii_case("content-type")
                    && std::str::from_utf8(v)
                        .is_ok_and(|v| v.contains("json") && !v.contains("event-stream"))
            });
            if json {
                Response::Json { body: Vec::new() }
            } else {
                Response::Stream {
                    stream: Box::new(ChatStream::with_max_event_size(s.config.max_event_size)),
                    shown: false,
                }
            }
        } else {
            Response::Error {
                status,
                retry_after: retry::retry_after(headers.iter().copied()),
                body: Vec::new(),
            }
        };
        Ok(())
    }

    pub(super) fn on_data(
        &mut self,
        s: &mut Session,
        now: Instant,
        req: RequestId,
        bytes: &[u8],
    ) -> Result<(), SessionError> {
        let Phase::Requesting { response, .. } = &mut self.phase else {
            return Ok(());
        };
        match response {
            Response::AwaitingHead => Err(SessionError::DataBeforeHead(req)),
            Response::Stream { .. } => {
                // Small slices keep the decoder's buffer in the first-level cache: feeding a
                // 64 KiB read at once is half as fast as feeding it 8 KiB at a time.
                for piece in bytes.chunks(crate::stream::FEED_SLICE) {
                    let Phase::Requesting {
                        response: Response::Stream { stream, .. },
                        ..
                    } = &mut self.phase
                    else {
                        break; // the answer ended (or failed) within these bytes
                    };
                    stream.feed(piece);
                    self.drain_stream(s, now);
                }
                Ok(())
            }
            Response::Json { body } => {
                if body.len() + bytes.len() > s.config.max_event_size {
                    let limit = s.config.max_event_size;
                    self.stream_failed(s, now, StreamError::EventTooLarge { limit }, false);
                } else {
                    body.extend_from_slice(bytes);
                }
                Ok(())
            }
            Response::Error { body, .. } => {
                let room = MAX_ERROR_BODY.saturating_sub(body.len());
                body.extend_from_slice(&bytes[..bytes.len().min(room)]);
                Ok(())
            }
        }
    }

    pub(super) fn on_end(
        &mut self,
        s: &mut Session,
        now: Instant,
        _req: RequestId,
    ) -> Result<(), SessionError> {
        let phase = std::mem::replace(&mut self.phase, Phase::Over);
        let Phase::Requesting {
            req,
            attempt,
            response,
        } = phase
        else {
            self.phase = phase;
            return Ok(());
        };
        match response {
            Response::AwaitingHead => {
                self.phase = Phase::Requesting {
                    req,
                    attempt,
                    response: Response::AwaitingHead,
                };
                let err = TransportError::new(
                    super::TransportErrorKind::Io,
                    "the response ended before its status line",
                );
                self.on_transport_error(s, now, err);
            }
            Response::Stream { mut stream, shown } => {
                stream.feed_eof();
                self.phase = Phase::Requesting {
                    req,
                    attempt,
                    response: Response::Stream { stream, shown },
                };
                self.drain_stream(s, now);
            }
            Response::Json { body } => {
                self.phase = Phase::Requesting {
                    req,
                    attempt,
                    response: Response::AwaitingHead,
                };
                match serde_json::from_slice::<ChatResponse>(&body) {
                    Ok(resp) => {
                        let completion = completion_from_response(resp);
                        if let Some(choice) = completion.choices.first() {
                            if !choice.content.is_empty() {
                                s.emit(Event::TextDelta {
                                    text: choice.content.clone(),
                                });
                            }
                        }
                        self.completed(s, completion);
                    }
                    Err(e) => {
                        let text = String::from_utf8_lossy(&body);
                        let error = StreamError::Malformed {
                            error: e.to_string(),
                            payload: crate::text::shorten(&text, 300).into_owned(),
                        };
                        self.stream_failed(s, now, error, false);
                    }
                }
            }
            Response::Error {
                status,
                retry_after,
                body,
            } => {
                self.phase = Phase::Requesting {
                    req,
                    attempt,
                    response: Response::AwaitingHead,
                };
                self.error_status(s, now, status, retry_after, &body);
            }
        }
        Ok(())
    }

    pub(super) fn on_transport_error(
        &mut self,
        s: &mut Session,
        now: Instant,
        error: TransportError,
    ) {
        let Phase::Requesting { response, .. } = &self.phase else {
            return;
        };
        let message = s.redact(error.message);
        if let Response::Stream { shown: true, .. } = response {
            self.fail(s, TurnError::StreamBroken { message });
            return;
        }
        // Name the URL that could not be reached: a typo in it is the usual cause.
        let url = super::request::endpoint(&s.config.provider.base_url, "chat/completions");
        let failure = TurnError::Transport {
            kind: error.kind,
            message: format!("{url}: {message}"),
        };
        if error.kind.is_retryable() {
            self.retry_or_fail(s, now, message, None, failure);
        } else {
            self.fail(s, failure);
        }
    }

    /// Moves stream events to the UI; finishes the request when the stream is complete.
    fn drain_stream(&mut self, s: &mut Session, now: Instant) {
        let Phase::Requesting {
            response: Response::Stream { stream, shown },
            ..
        } = &mut self.phase
        else {
            return;
        };
        let finished = loop {
            match stream.poll_event() {
                Ok(Some(ev)) => {
                    if let Some(event) = ui_event(ev).filter(|_| self.compaction.is_none()) {
                        *shown = true;
                        s.emit(event);
                    }
                }
                Ok(None) | Err(_) => break stream.is_finished(),
            }
        };
        if !finished {
            return;
        }
        let phase = std::mem::replace(&mut self.phase, Phase::Over);
        let Phase::Requesting {
            req,
            attempt,
            response: Response::Stream { stream, shown },
        } = phase
        else {
            unreachable!("checked above");
        };
        self.phase = Phase::Requesting {
            req,
            attempt,
            response: Response::AwaitingHead,
        };
        match stream.finish() {
            Ok(completion) => self.completed(s, completion),
            Err(StreamFailure { error, .. }) => self.stream_failed(s, now, error, shown),
        }
    }

    fn stream_failed(&mut self, s: &mut Session, now: Instant, error: StreamError, shown: bool) {
        if let StreamError::Provider { error: api } = &error {
            if !shown && s.on_overflow(self, None, api) {
                return;
            }
        }
        let retryable = match &error {
            StreamError::Truncated { .. } => true,
            StreamError::Provider { error } => provider_error_is_retryable(error),
            _ => false,
        };
        let error = redact_stream_error(s, error);
        if shown || !retryable {
            self.fail(s, TurnError::Stream { error });
        } else {
            let reason = error.to_string();
            self.retry_or_fail(s, now, reason, None, TurnError::Stream { error });
        }
    }

    fn error_status(
        &mut self,
        s: &mut Session,
        now: Instant,
        status: u16,
        retry_after: Option<Duration>,
        body: &[u8],
    ) {
        // Redacted before it is parsed or shortened, so no field (message, type, code, param,
        // unknown ones) and no cut-off piece of a key survives.
        let body = s.redact(String::from_utf8_lossy(body).into_owned());
        let body = body.as_bytes();
        let api = ApiError::from_body(body);
        if matches!(status, 400 | 422) {
            let param = api
                .param
                .as_ref()
                .map(|p| p.to_string())
                .unwrap_or_default();
            let raw = String::from_utf8_lossy(body);
            if let Some((field, quirks)) = s.quirks.learn_rejection(&[&api.message, &param, &raw]) {
                s.quirks = quirks;
                s.emit(Event::OptionDropped {
                    field: field.to_owned(),
                    reason: api.message.clone(),
                });
                let attempt = match self.phase {
                    Phase::Requesting { attempt, .. } => attempt,
                    _ => 1,
                };
                s.send_request(self, attempt);
                return;
            }
        }
        if s.on_overflow(self, Some(status), &api) {
            return;
        }
        let failure = TurnError::Api { status, error: api };
        if retry::is_retryable_status(status) {
            let reason = failure.to_string();
            self.retry_or_fail(s, now, reason, retry_after, failure);
        } else {
            self.fail(s, failure);
        }
    }

    fn retry_or_fail(
        &mut self,
        s: &mut Session,
        now: Instant,
        reason: String,
        retry_after: Option<Duration>,
        failure: TurnError,
    ) {
        let attempt = match self.phase {
            Phase::Requesting { attempt, .. } => attempt,
            _ => return,
        };
        let policy = &s.config.retry;
        if attempt >= policy.max_attempts {
            self.fail(s, failure);
            return;
        }
        if retry_after.is_some_and(|d| d > policy.max_retry_after) {
            self.fail(s, failure);
            return;
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

    pub(super) fn on_timeout(&mut self, s: &mut Session, now: Instant) {
        if let Phase::RetryWait { deadline, attempt } = self.phase {
            if now >= deadline {
                s.send_request(self, attempt);
            }
        }
    }

    // ----- the answer -----

    fn completed(&mut self, s: &mut Session, completion: Completion) {
        if let Some(usage) = &completion.usage {
            self.usage.add(usage);
            self.usage_reported = true;
            s.totals.add(usage);
            s.emit(Event::Usage {
                usage: usage.clone(),
            });
        }
        let Some(choice) = completion
            .choices
            .iter()
            .find(|c| c.index == 0)
            .or(completion.choices.first())
        else {
            self.fail(s, TurnError::NoChoices);
            return;
        };
        if let Some(compaction) = self.compaction.take() {
            s.summary_done(self, compaction, choice.content.clone());
            return;
        }
        self.overflow_tried = None;
        if let Some(tokens) = completion.usage.as_ref().and_then(|u| u.prompt_tokens) {
            let bytes = s.context.sent_bytes;
            s.context.meter.observe(bytes, tokens);
        }
        let finish = choice.finish_reason.clone();
        let mut message = choice.to_message();
        // Already unique when it came through `Choice::to_message`; kept for any other path.
        crate::history::unique_call_ids(&mut message.tool_calls);
        let calls: Vec<(String, String, String)> = message
            .tool_calls
            .iter()
            .map(|c| {
                (
                    c.id.clone(),
                    c.function.name.clone(),
                    c.function.arguments.clone(),
                )
            })
            .collect();
        if calls.is_empty() {
            s.push_history(message);
            self.finish(s, finish);
            return;
        }
        s.emit(Event::Message {
            message: message.clone(),
        });
        let cut_off = matches!(
            finish,
            Some(FinishReason::Length | FinishReason::ContentFilter)
        );
        let mut pending = Vec::with_capacity(calls.len());
        for (id, name, arguments) in calls {
            s.emit(Event::ToolCall {
                id: id.clone(),
                name: name.clone(),
                arguments: arguments.clone(),
            });
            let state = if cut_off {
                let reason = finish
                    .as_ref()
                    .map(FinishReason::as_str)
                    .unwrap_or("length");
                done(
                    ToolStatus::NotRun,
                    format!(
                        "Not run: the answer was cut off (finish_reason `{reason}`) before this call was complete."
                    ),
                )
            } else {
                decide(s, &id, &name, &arguments)
            };
            pending.push(PendingCall {
                id,
                name,
                arguments,
                state,
            });
        }
        for call in &pending {
            match &call.state {
                CallState::Running => {
                    if let Some(run) = make_run(s, call) {
                        s.actions.push_back(super::Action::RunTool(run));
                    }
                }
                CallState::Done { status, output } => s.emit(Event::ToolResult {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    status: *status,
                    output: output.clone(),
                }),
                CallState::AwaitingApproval { .. } => {}
            }
        }
        self.phase = Phase::Tools {
            assistant: Box::new(message),
            calls: pending,
        };
        if cut_off {
            self.answer_calls(s);
            self.finish(s, finish);
            return;
        }
        self.ask_next(s);
        self.advance(s);
    }

    fn finish(&mut self, s: &mut Session, finish_reason: Option<FinishReason>) {
        self.phase = Phase::Over;
        s.emit(Event::TurnFinished {
            finish_reason,
            usage: self.usage_reported.then(|| self.usage.to_usage()),
        });
    }

    pub(super) fn fail_with(&mut self, s: &mut Session, error: TurnError) {
        self.fail(s, error);
    }

    pub(super) fn finish_with(&mut self, s: &mut Session) {
        self.finish(s, None);
    }

    fn fail(&mut self, s: &mut Session, error: TurnError) {
        self.phase = Phase::Over;
        s.emit(Event::TurnFailed { error });
    }

    // ----- tools -----

    pub(super) fn on_tool_output(
        &mut self,
        s: &mut Session,
        call_id: &str,
        output: ToolOutput,
    ) -> Result<(), SessionError> {
        let Phase::Tools { calls, .. } = &mut self.phase else {
            return Err(SessionError::UnknownCall(call_id.to_owned()));
        };
        let Some(call) = calls
            .iter_mut()
            .find(|c| c.id == call_id && matches!(c.state, CallState::Running))
        else {
            return Err(SessionError::UnknownCall(call_id.to_owned()));
        };
        let status = if output.is_error {
            ToolStatus::Error
        } else {
            ToolStatus::Ok
        };
        // `env` or a config file read by the model must not hand it (or the logs) a key.
        let output = ToolOutput {
            content: s.redact(output.content),
            ..output
        };
        s.emit(Event::ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            status,
            output: output.clone(),
        });
        call.state = CallState::Done { status, output };
        self.advance(s);
        Ok(())
    }

    pub(super) fn on_approval(
        &mut self,
        s: &mut Session,
        call_id: &str,
        approval: Approval,
    ) -> Result<(), SessionError> {
        let Phase::Tools { calls, .. } = &mut self.phase else {
            return Err(SessionError::UnknownCall(call_id.to_owned()));
        };
        let Some(pos) = calls
            .iter()
            .position(|c| c.id == call_id && matches!(c.state, CallState::AwaitingApproval { .. }))
        else {
            return Err(SessionError::UnknownCall(call_id.to_owned()));
        };
        match approval {
            Approval::Once => start(s, &mut calls[pos]),
            Approval::AlwaysThisTool => {
                let name = calls[pos].name.clone();
                s.approved_tools.insert(name.clone());
                for call in calls.iter_mut() {
                    if call.name == name && matches!(call.state, CallState::AwaitingApproval { .. })
                    {
                        start(s, call);
                    }
                }
            }
            Approval::Deny { reason } => {
                let mut text = format!("The user denied this `{}` call.", calls[pos].name);
                if let Some(reason) = reason.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
                    text.push_str(" Their reason: ");
                    text.push_str(reason);
                } else {
                    text.push_str(
                        " Do not repeat it; ask the user how to proceed if it is needed.",
                    );
                }
                let call = &mut calls[pos];
                let output = ToolOutput::error(text);
                s.emit(Event::ToolResult {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    status: ToolStatus::Denied,
                    output: output.clone(),
                });
                call.state = CallState::Done {
                    status: ToolStatus::Denied,
                    output,
                };
            }
        }
        self.ask_next(s);
        self.advance(s);
        Ok(())
    }

    /// Sends the next approval request, one at a time, so a UI can ask in order and an
    /// "always" answer covers the calls after it.
    fn ask_next(&mut self, s: &mut Session) {
        let Phase::Tools { calls, .. } = &mut self.phase else {
            return;
        };
        if calls
            .iter()
            .any(|c| matches!(c.state, CallState::AwaitingApproval { asked: true, .. }))
        {
            return;
        }
        if let Some(call) = calls
            .iter_mut()
            .find(|c| matches!(c.state, CallState::AwaitingApproval { .. }))
        {
            if let CallState::AwaitingApproval { run, asked } = &mut call.state {
                *asked = true;
                s.emit(Event::ApprovalRequested {
                    id: run.call_id.clone(),
                    name: run.name.clone(),
                    arguments: run.arguments.clone(),
                });
                s.actions.push_back(super::Action::AskApproval(run.clone()));
            }
        }
    }

    /// When every call has its result: the results enter the history in call order and the
    /// next request goes out (or the step limit ends the turn).
    fn advance(&mut self, s: &mut Session) {
        let Phase::Tools { calls, .. } = &self.phase else {
            return;
        };
        if !calls
            .iter()
            .all(|c| matches!(c.state, CallState::Done { .. }))
        {
            return;
        }
        self.answer_calls(s);
        if self.step >= s.config.max_steps {
            let limit = s.config.max_steps;
            self.fail(s, TurnError::StepLimit { limit });
            return;
        }
        self.step += 1;
        s.send_step(self);
    }

    /// Puts a tool message for every call into the history, in call order.
    fn answer_calls(&mut self, s: &mut Session) {
        let Phase::Tools { assistant, calls } = std::mem::replace(&mut self.phase, Phase::Starting)
        else {
            return;
        };
        s.append(*assistant);
        for call in calls {
            let text = match call.state {
                CallState::Done { output, .. } => output.content,
                CallState::Running | CallState::AwaitingApproval { .. } => {
                    crate::history::MISSING_RESULT.to_owned()
                }
            };
            s.push_history(Message::tool(call.id, text));
        }
    }

    // ----- cancellation -----

    pub(super) fn cancel(mut self, s: &mut Session) {
        match std::mem::replace(&mut self.phase, Phase::Over) {
            Phase::Requesting {
                response:
                    Response::Stream {
                        stream,
                        shown: true,
                    },
                ..
            } => {
                let text = stream
                    .accumulator()
                    .choices()
                    .find(|c| c.index == 0)
                    .map(|c| c.content.clone())
                    .unwrap_or_default();
                if !text.is_empty() {
                    s.push_history(Message::assistant(text + INTERRUPTED_MARKER));
                }
            }
            Phase::Tools {
                assistant,
                mut calls,
            } => {
                for call in &mut calls {
                    if !matches!(call.state, CallState::Done { .. }) {
                        let output =
                            ToolOutput::error("Cancelled by the user before this call finished.");
                        s.emit(Event::ToolResult {
                            id: call.id.clone(),
                            name: call.name.clone(),
                            status: ToolStatus::Cancelled,
                            output: output.clone(),
                        });
                        call.state = CallState::Done {
                            status: ToolStatus::Cancelled,
                            output,
                        };
                    }
                }
                self.phase = Phase::Tools { assistant, calls };
                self.answer_calls(s);
            }
            Phase::Starting | Phase::Requesting { .. } | Phase::RetryWait { .. } | Phase::Over => {}
        }
    }
}

fn done(status: ToolStatus, text: String) -> CallState {
    CallState::Done {
        status,
        output: ToolOutput::error(text),
    }
}

/// What to do with one call: the checks in order are unknown tool, arguments not an object,
/// the same call repeated, then the approval policy.
fn decide(s: &mut Session, id: &str, name: &str, arguments: &str) -> CallState {
    let Some(spec) = s.config.tools.iter().find(|t| t.name == name) else {
        let names: Vec<&str> = s.config.tools.iter().map(|t| t.name.as_str()).collect();
        let available = if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        };
        return done(
            ToolStatus::UnknownTool,
            format!(
                "There is no tool named `{name}`. Available tools: {available}. Call one of these by its exact name."
            ),
        );
    };
    let effect = spec.effect;
    let trimmed = arguments.trim();
    let parsed = if trimmed.is_empty() {
        Ok(serde_json::Value::Object(Default::default()))
    } else {
        serde_json::from_str::<serde_json::Value>(trimmed)
    };
    let canonical = match parsed {
        Ok(v @ serde_json::Value::Object(_)) => v.to_string(),
        Ok(other) => {
            return done(
                ToolStatus::InvalidArguments,
                format!(
                    "The arguments of `{name}` must be a JSON object matching its parameters schema, but they were {}: {}",
                    json_kind(&other),
                    crate::text::shorten(trimmed, 200)
                ),
            );
        }
        Err(e) => {
            return done(
                ToolStatus::InvalidArguments,
                format!(
                    "The arguments of `{name}` are not valid JSON ({e}): {}. Send them again as one JSON object.",
                    crate::text::shorten(trimmed, 200)
                ),
            );
        }
    };
    let signature = format!("{name}\u{0}{canonical}");
    let count = match &s.last_call {
        Some((sig, n)) if *sig == signature => n + 1,
        _ => 1,
    };
    s.last_call = Some((signature, count));
    if count > s.config.max_repeated_calls {
        return done(
            ToolStatus::Repeated,
            format!(
                "Not run: this exact `{name}` call was already made {} times in a row with the same arguments, so its result will not change. Try a different approach or answer the user.",
                count - 1
            ),
        );
    }
    let decision = if s.approved_tools.contains(name) {
        PolicyDecision::Run
    } else {
        s.config.approval.decide(effect)
    };
    match decision {
        PolicyDecision::Run => CallState::Running,
        PolicyDecision::Ask => CallState::AwaitingApproval {
            run: ToolRun {
                call_id: id.to_owned(),
                name: name.to_owned(),
                arguments: if trimmed.is_empty() {
                    "{}".to_owned()
                } else {
                    arguments.to_owned()
                },
                effect,
            },
            asked: false,
        },
        PolicyDecision::Deny => done(
            ToolStatus::DeniedByPolicy,
            format!(
                "Denied by policy: the session is read-only, so `{name}` (which can {}) may not run. Use read-only tools, or ask the user to allow it.",
                effect_text(effect)
            ),
        ),
    }
}

fn make_run(s: &Session, call: &PendingCall) -> Option<ToolRun> {
    let spec = s.config.tools.iter().find(|t| t.name == call.name)?;
    let arguments = call.arguments.clone();
    Some(ToolRun {
        call_id: call.id.clone(),
        name: call.name.clone(),
        arguments: if arguments.trim().is_empty() {
            "{}".to_owned()
        } else {
            arguments
        },
        effect: spec.effect,
    })
}

fn start(s: &mut Session, call: &mut PendingCall) {
    if let CallState::AwaitingApproval { run, .. } =
        std::mem::replace(&mut call.state, CallState::Running)
    {
        s.actions.push_back(super::Action::RunTool(run));
    }
}

fn effect_text(effect: crate::tool::Effect) -> &'static str {
    match effect {
        crate::tool::Effect::ReadOnly => "only read",
        crate::tool::Effect::Write => "change files",
        crate::tool::Effect::Exec => "run commands",
        crate::tool::Effect::Network => "reach the network",
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The stream events a user sees, for choice 0.
fn ui_event(ev: StreamEvent) -> Option<Event> {
    match ev {
        StreamEvent::ContentDelta { choice: 0, text } => Some(Event::TextDelta { text }),
        StreamEvent::ReasoningDelta { choice: 0, text } => Some(Event::ReasoningDelta { text }),
        StreamEvent::RefusalDelta { choice: 0, text } => Some(Event::RefusalDelta { text }),
        StreamEvent::ToolCallBegin {
            choice: 0,
            call,
            name,
            ..
        } => Some(Event::ToolCallStreaming { index: call, name }),
        StreamEvent::ContentDelta { .. }
        | StreamEvent::ReasoningDelta { .. }
        | StreamEvent::RefusalDelta { .. }
        | StreamEvent::ToolCallBegin { .. }
        | StreamEvent::ToolCallArgumentsDelta { .. }
        | StreamEvent::ChoiceFinished { .. }
        | StreamEvent::Usage(_)
        | StreamEvent::Done => None,
    }
}

/// Whether an error object inside a 200 stream says the provider is overloaded or rate
/// limited (worth a retry when nothing was shown yet).
fn provider_error_is_retryable(error: &ApiError) -> bool {
    let code = match &error.code {
        Some(serde_json::Value::Number(n)) => n.as_u64().map(|c| c as u16),
        Some(serde_json::Value::String(s)) => s.parse().ok(),
        _ => None,
    };
    if code.is_some_and(retry::is_retryable_status) {
        return true;
    }
    let kind = error.kind.as_deref().unwrap_or("");
    ["overloaded", "rate_limit", "server_error", "timeout"]
        .iter()
        .any(|k| kind.contains(k))
}

/// Every field of a provider's error, unknown ones included, without secrets.
fn redact_api_error(s: &Session, error: ApiError) -> ApiError {
    let Ok(mut value) = serde_json::to_value(&error) else {
        return error;
    };
    s.secrets.redact_json(&mut value);
    serde_json::from_value(value).unwrap_or(error)
}

fn redact_stream_error(s: &Session, error: StreamError) -> StreamError {
    match error {
        StreamError::Provider { error } => StreamError::Provider {
            error: Box::new(redact_api_error(s, *error)),
        },
        StreamError::Malformed { error, payload } => StreamError::Malformed {
            error,
            payload: s.redact(payload),
        },
        other => other,
    }
}

/// A non-streaming answer (a provider that ignored `stream: true`) as a completion.
fn completion_from_response(resp: ChatResponse) -> Completion {
    let choices = resp
        .choices
        .into_iter()
        .map(|c| {
            let m = c.message;
            crate::accumulate::Choice {
                index: c.index,
                role: Some(m.role.as_str().to_owned()),
                content: m.text(),
                reasoning: m.reasoning_content.clone(),
                refusal: m.refusal.clone(),
                tool_calls: m
                    .tool_calls
                    .into_iter()
                    .enumerate()
                    .map(|(i, t)| crate::accumulate::ToolCallParts {
                        index: i as u32,
                        id: Some(t.id),
                        kind: Some(t.kind),
                        name: t.function.name,
                        arguments: t.function.arguments,
                        function_extra: t.function.extra,
                        extra: t.extra,
                    })
                    .collect(),
                function_call: None,
                finish_reason: c.finish_reason.as_deref().and_then(FinishReason::parse),
                logprobs: None,
                extra: m.extra,
                meta: c.extra,
            }
        })
        .collect();
    Completion {
        id: resp.id,
        model: resp.model,
        choices,
        usage: resp.usage,
        done: true,
        extra: resp.extra,
    }
}
