//! The tool-call path of a turn: decide what to do with each call of an answer, ask for
//! approvals one at a time, release calls to the driver in an order that keeps their effects
//! in the model's order, take their results, time them out, and answer them all in the
//! history.

use super::event::{Event, ToolStatus, TurnError};
use super::shared::Shared;
use super::{Action, Approval, Confinement, SessionError, ToolRun};
use crate::checkpoint::{CheckpointDue, CheckpointOutcome};
use crate::hooks::{HookEvent, HookWait, Permission};
use crate::tool::{Effect, ToolOutput};
use crate::wire::Message;
use std::time::Instant;

/// The tool calls of one answer. The assistant message that made them enters the history
/// together with their results, so the history is a valid request at every moment.
#[derive(Debug)]
pub(super) struct Calls {
    assistant: Box<Message>,
    calls: Vec<PendingCall>,
}

#[derive(Debug)]
struct PendingCall {
    id: String,
    name: String,
    /// The arguments it runs with (a `PreToolUse` hook may have changed them).
    arguments: String,
    state: CallState,
    /// Context from its `PreToolUse` hooks, added to its result for the model.
    context: Vec<String>,
    /// The snapshot of what it changed, asked for when it ended and not handed back yet: the
    /// calls after it and the next request wait for it (its hooks do not).
    checkpoint_after: Option<CheckpointDue>,
}

/// What a call does once its `PreToolUse` hooks let it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Next {
    /// Run (the policy allows it).
    Run,
    /// Ask the user (the policy says ask).
    Ask,
}

/// Where an approval question stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Asked {
    /// Not yet: its turn to be asked has not come.
    No,
    /// Its `PermissionRequest` hooks run (these).
    Hooking(u64),
    /// Its hooks had their say without deciding; the user is asked next.
    Hooked,
    /// The question went out.
    Yes,
}

#[derive(Debug)]
pub(super) enum CallState {
    /// Allowed to run; waits until the calls before it allow it to start.
    Ready(ToolRun),
    /// Handed to the driver; past `deadline` it is stopped and answered "timed out".
    Running {
        effect: Effect,
        deadline: Option<Instant>,
        confinement: Confinement,
    },
    /// Allowed to run and its turn to start came, but it may change files and the turn has no
    /// snapshot of the state before it yet: it waits for that checkpoint (`due`), which the
    /// driver takes ([`Action::TakeCheckpoint`]), then runs, whether the snapshot was taken
    /// or failed (a failure is a warning, [`Event::CheckpointFailed`]).
    Checkpoint { run: ToolRun, due: CheckpointDue },
    /// Waits for the user; asked once the approval request went out (one at a time).
    AwaitingApproval { run: ToolRun, asked: Asked },
    /// Waits for its `PreToolUse` hooks (`id`), then runs or is asked about (`next`).
    PreHook { run: ToolRun, next: Next, id: u64 },
    /// Ran; waits for its `PostToolUse` (or `PostToolUseFailure`) hooks before its result
    /// stands.
    PostHook {
        effect: Effect,
        status: ToolStatus,
        output: ToolOutput,
        id: u64,
    },
    Done {
        status: ToolStatus,
        output: ToolOutput,
    },
}

/// What a tool call is to the ordering of effects: read-only calls may overlap each other;
/// any other call runs alone, after every earlier call and before every later one.
fn runs_alone(effect: Effect) -> bool {
    match effect {
        Effect::ReadOnly => false,
        Effect::Write | Effect::Exec | Effect::Network => true,
    }
}

impl Calls {
    /// Decides about every call of `message` (an answer that has tool calls): emits the calls
    /// and the results of those that will not run, and releases the first calls that may run.
    /// `cut_off` names the finish reason when the answer was cut off: then no call runs.
    pub(super) fn new(
        s: &mut Shared,
        now: Instant,
        message: Message,
        cut_off: Option<&str>,
    ) -> Self {
        s.emit(Event::Message {
            message: Box::new(message.clone()),
        });
        let mut calls = Vec::with_capacity(message.tool_calls.len());
        for c in &message.tool_calls {
            let (id, name, arguments) = (&c.id, &c.function.name, &c.function.arguments);
            s.emit(Event::ToolCall {
                id: id.clone(),
                name: name.clone(),
                arguments: arguments.clone(),
            });
            let state = match cut_off {
                Some(reason) => done(
                    ToolStatus::NotRun,
                    format!(
                        "Not run: the answer was cut off (finish_reason `{reason}`) before this call was complete."
                    ),
                ),
                None => {
                    let state = super::decide::decide(s, id, name, arguments);
                    pre_hook(s, state)
                }
            };
            if let CallState::Done { status, output } = &state {
                s.emit(Event::ToolResult {
                    id: id.clone(),
                    name: name.clone(),
                    status: *status,
                    output: output.clone(),
                });
            }
            calls.push(PendingCall {
                id: id.clone(),
                name: name.clone(),
                arguments: arguments.clone(),
                state,
                context: Vec::new(),
                checkpoint_after: None,
            });
        }
        let mut calls = Calls {
            assistant: Box::new(message),
            calls,
        };
        calls.release(s, now);
        calls.ask_next(s);
        calls
    }

    /// Whether every call has its result.
    pub(super) fn all_done(&self) -> bool {
        self.calls
            .iter()
            .all(|c| matches!(c.state, CallState::Done { .. }) && c.checkpoint_after.is_none())
    }

    /// The outcome of checkpoint `id`, which one of these calls waits for: the call goes on
    /// (it runs, or the calls after it may). Returns whether a call waited for it; the
    /// outcome of a checkpoint nobody waits for any more is ignored.
    pub(super) fn on_checkpoint(
        &mut self,
        s: &mut Shared,
        now: Instant,
        id: u64,
        outcome: CheckpointOutcome,
    ) -> bool {
        let Some(call) = self.calls.iter_mut().find(|c| {
            c.checkpoint_after.as_ref().is_some_and(|d| d.id == id)
                || matches!(&c.state, CallState::Checkpoint { due, .. } if due.id == id)
        }) else {
            return false;
        };
        if let Some(due) = call.checkpoint_after.take_if(|d| d.id == id) {
            super::checkpoints::handed_back(s, due, outcome);
        } else if let CallState::Checkpoint { run, due } = &call.state {
            let (run, due) = (run.clone(), due.clone());
            super::checkpoints::handed_back(s, due, outcome);
            call.state = CallState::Ready(run);
        }
        self.release(s, now);
        true
    }

    /// The call whose approval request went out and is not answered yet.
    pub(super) fn asked(&self) -> Option<&ToolRun> {
        self.calls.iter().find_map(|c| match &c.state {
            CallState::AwaitingApproval {
                run,
                asked: Asked::Yes,
            } => Some(run),
            CallState::AwaitingApproval { .. }
            | CallState::Ready(_)
            | CallState::Checkpoint { .. }
            | CallState::Running { .. }
            | CallState::PreHook { .. }
            | CallState::PostHook { .. }
            | CallState::Done { .. } => None,
        })
    }

    /// Whether the call `call_id` runs now.
    pub(super) fn runs(&self, call_id: &str) -> bool {
        self.calls
            .iter()
            .any(|c| c.id == call_id && matches!(c.state, CallState::Running { .. }))
    }

    /// The earliest deadline of a running call.
    pub(super) fn deadline(&self) -> Option<Instant> {
        self.calls
            .iter()
            .filter_map(|c| match c.state {
                CallState::Running { deadline, .. } => deadline,
                CallState::Ready(_)
                | CallState::Checkpoint { .. }
                | CallState::AwaitingApproval { .. }
                | CallState::PreHook { .. }
                | CallState::PostHook { .. }
                | CallState::Done { .. } => None,
            })
            .min()
    }

    /// A call's output. Output for a call that already has its result (timed out, cancelled)
    /// is ignored; one for an id this session never issued is an error.
    pub(super) fn output(
        &mut self,
        s: &mut Shared,
        now: Instant,
        call_id: &str,
        output: ToolOutput,
    ) -> Result<(), SessionError> {
        let Some(call) = self
            .calls
            .iter_mut()
            .find(|c| c.id == call_id && matches!(c.state, CallState::Running { .. }))
        else {
            return s.late_call(call_id);
        };
        let CallState::Running {
            effect,
            confinement,
            ..
        } = call.state
        else {
            unreachable!("found as running above");
        };
        call.checkpoint_after = super::checkpoints::after_call(s, effect);
        let mut output = output;
        match confinement {
            Confinement::Sandboxed => {}
            Confinement::Unsandboxed => output.content.push_str(crate::sandbox::UNSANDBOXED_NOTE),
        }
        let (status, event) = if output.is_error {
            (ToolStatus::Error, HookEvent::PostToolUseFailure)
        } else {
            (ToolStatus::Ok, HookEvent::PostToolUse)
        };
        // `env` or a config file read by the model must not hand it (or the logs) a key.
        let output = ToolOutput {
            content: s.redact(output.content),
            ..output
        };
        let mut input = s
            .hook_input(event)
            .with_tool(&call.name, &call.arguments)
            .with("tool_use_id", call.id.clone());
        input = match event {
            HookEvent::PostToolUseFailure => input.with("error", output.content.clone()),
            _ => input.with(
                "tool_response",
                serde_json::json!({"output": output.content, "is_error": output.is_error}),
            ),
        };
        match s.run_hooks(
            event,
            Some(&call.name),
            Some(&call.id),
            input,
            HookWait::Awaited,
        ) {
            Some(id) => {
                call.state = CallState::PostHook {
                    effect,
                    status,
                    output,
                    id,
                }
            }
            None => call.finish(s, status, output),
        }
        self.release(s, now);
        Ok(())
    }

    /// The user's decision about a call that waited for approval.
    pub(super) fn approve(
        &mut self,
        s: &mut Shared,
        now: Instant,
        call_id: &str,
        approval: Approval,
    ) -> Result<(), SessionError> {
        let Some(pos) = self
            .calls
            .iter()
            .position(|c| c.id == call_id && matches!(c.state, CallState::AwaitingApproval { .. }))
        else {
            return s.late_call(call_id);
        };
        match approval {
            Approval::Once => self.calls[pos].allow(),
            Approval::OnceUnsandboxed => self.calls[pos].allow_unsandboxed(),
            Approval::AlwaysThisTool => {
                let name = self.calls[pos].name.clone();
                s.approved_tools.insert(name.clone());
                for call in self.calls.iter_mut().filter(|c| c.name == name) {
                    call.allow();
                }
            }
            Approval::NeverThisTool => {
                let name = self.calls[pos].name.clone();
                s.denied_tools.insert(name.clone());
                let text = format!(
                    "The user denied this `{name}` call and every later one in this session. Do not call it again; ask the user how to proceed if it is needed."
                );
                for call in self.calls.iter_mut().filter(|c| c.name == name) {
                    if let CallState::AwaitingApproval { .. } = call.state {
                        call.finish(s, ToolStatus::Denied, ToolOutput::error(text.clone()));
                    }
                }
            }
            Approval::Deny { reason } => {
                let call = &mut self.calls[pos];
                let mut text = format!("The user denied this `{}` call.", call.name);
                match reason.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
                    Some(reason) => {
                        text.push_str(" Their reason: ");
                        text.push_str(reason);
                    }
                    None => text.push_str(
                        " Do not repeat it; ask the user how to proceed if it is needed.",
                    ),
                }
                call.finish(s, ToolStatus::Denied, ToolOutput::error(text));
            }
            Approval::Unattended => {
                let call = &mut self.calls[pos];
                let text = format!(
                    "The user denied this `{}` call. Their reason: nobody is there to approve it",
                    call.name
                );
                call.finish(s, ToolStatus::Denied, ToolOutput::error(text));
            }
        }
        self.release(s, now);
        self.ask_next(s);
        Ok(())
    }

    /// The answer of hooks one of these calls waited on: its `PreToolUse` hooks (block,
    /// allow, ask, new arguments, context), its `PermissionRequest` hooks (allow or deny
    /// instead of asking), or its `PostToolUse` hooks (feedback and context for the model).
    pub(super) fn on_hooks(&mut self, s: &mut Shared, now: Instant, answer: super::hooks::Answer) {
        let id = answer.id;
        let Some(pos) = self.calls.iter().position(|c| match &c.state {
            CallState::PreHook { id: h, .. } | CallState::PostHook { id: h, .. } => *h == id,
            CallState::AwaitingApproval {
                asked: Asked::Hooking(h),
                ..
            } => *h == id,
            CallState::AwaitingApproval { .. }
            | CallState::Ready(_)
            | CallState::Checkpoint { .. }
            | CallState::Running { .. }
            | CallState::Done { .. } => false,
        }) else {
            return;
        };
        let c = answer.combined;
        let call = &mut self.calls[pos];
        let state = std::mem::replace(&mut call.state, done(ToolStatus::Cancelled, String::new()));
        match state {
            CallState::PreHook { run, next, .. } => {
                let event = HookEvent::PreToolUse;
                if let Some(reason) = c.stop {
                    call.stopped_by_hook(s, event, reason);
                } else if let Some(reason) = c.block {
                    let text = format!(
                        "A {event} hook blocked this `{}` call. Its reason: {reason}",
                        call.name
                    );
                    call.finish(s, ToolStatus::BlockedByHook, ToolOutput::error(text));
                } else {
                    call.context.extend(c.context);
                    let state = match c.updated_input {
                        Some(updated) => updated_call(s, call, run, next, updated),
                        None => match next {
                            Next::Run => CallState::Ready(run),
                            Next::Ask => CallState::AwaitingApproval {
                                run,
                                asked: Asked::No,
                            },
                        },
                    };
                    // `allow` spares the question, `ask` asks one; neither passes a refusal.
                    call.state = match (state, c.permission) {
                        (CallState::AwaitingApproval { run, .. }, Some(Permission::Allow)) => {
                            CallState::Ready(run)
                        }
                        (CallState::Ready(run), Some(Permission::Ask)) => {
                            CallState::AwaitingApproval {
                                run,
                                asked: Asked::No,
                            }
                        }
                        (state, _) => state,
                    };
                    if let CallState::Done { status, output } = &call.state {
                        let (status, output) = (*status, output.clone());
                        call.finish(s, status, output);
                    }
                }
            }
            CallState::AwaitingApproval { run, .. } => {
                let event = HookEvent::PermissionRequest;
                if let Some(reason) = c.stop {
                    call.stopped_by_hook(s, event, reason);
                } else if let Some(reason) = c.block {
                    let text = format!(
                        "A {event} hook denied this `{}` call. Its reason: {reason}",
                        call.name
                    );
                    call.finish(s, ToolStatus::BlockedByHook, ToolOutput::error(text));
                } else {
                    let state = match c.updated_input {
                        Some(updated) => updated_call(s, call, run, Next::Ask, updated),
                        None => CallState::AwaitingApproval {
                            run,
                            asked: Asked::Hooked,
                        },
                    };
                    call.state = match (state, c.permission) {
                        (CallState::AwaitingApproval { run, .. }, Some(Permission::Allow)) => {
                            CallState::Ready(run)
                        }
                        (CallState::AwaitingApproval { run, .. }, Some(Permission::Ask) | None) => {
                            CallState::AwaitingApproval {
                                run,
                                asked: Asked::Hooked,
                            }
                        }
                        (state, _) => state,
                    };
                    if let CallState::Done { status, output } = &call.state {
                        let (status, output) = (*status, output.clone());
                        call.finish(s, status, output);
                    }
                }
            }
            CallState::PostHook {
                status, mut output, ..
            } => {
                let event = match status {
                    ToolStatus::Ok => HookEvent::PostToolUse,
                    _ => HookEvent::PostToolUseFailure,
                };
                if let Some(reason) = c.block {
                    output
                        .content
                        .push_str(&format!("\n\nA {event} hook says: {reason}"));
                }
                if let Some(text) = super::hooks::context_text(event, &c.context) {
                    output.content.push_str("\n\n");
                    output.content.push_str(&text);
                }
                if let Some(reason) = c.stop {
                    s.hook_stop.get_or_insert(TurnError::HookStopped {
                        event: event.name().to_owned(),
                        reason,
                    });
                }
                call.finish(s, status, output);
            }
            other @ (CallState::Ready(_)
            | CallState::Checkpoint { .. }
            | CallState::Running { .. }
            | CallState::Done { .. }) => {
                call.state = other;
            }
        }
        self.release(s, now);
        self.ask_next(s);
    }

    /// Stops the running calls whose deadline passed; the model is told they timed out.
    pub(super) fn on_timeout(&mut self, s: &mut Shared, now: Instant) {
        let limit = s.config.tool_timeout.unwrap_or_default().as_secs_f64();
        let mut any = false;
        for call in &mut self.calls {
            if let CallState::Running {
                deadline: Some(deadline),
                ..
            } = call.state
            {
                if now >= deadline {
                    s.outbox.push(Action::AbortTool {
                        call_id: call.id.clone(),
                    });
                    if let CallState::Running { effect, .. } = call.state {
                        call.checkpoint_after = super::checkpoints::after_call(s, effect);
                    }
                    let text = format!(
                        "`{}` did not finish within {limit} s and was stopped",
                        call.name
                    );
                    call.finish(s, ToolStatus::Error, ToolOutput::error(text));
                    any = true;
                }
            }
        }
        if any {
            self.release(s, now);
        }
    }

    /// Gives every call without a result a "cancelled" one; running calls are aborted.
    pub(super) fn cancel(&mut self, s: &mut Shared) {
        for call in &mut self.calls {
            match call.state {
                CallState::Done { .. } => continue,
                CallState::Running { .. } => s.outbox.push(Action::AbortTool {
                    call_id: call.id.clone(),
                }),
                // It ran: its own result stands, without its hooks' say.
                CallState::PostHook { .. } => {
                    let CallState::PostHook { status, output, .. } = std::mem::replace(
                        &mut call.state,
                        super::calls::done(ToolStatus::Cancelled, String::new()),
                    ) else {
                        unreachable!("matched as post-hook above");
                    };
                    call.finish(s, status, output);
                    continue;
                }
                CallState::Ready(_)
                | CallState::Checkpoint { .. }
                | CallState::AwaitingApproval { .. }
                | CallState::PreHook { .. } => {}
            }
            let output = ToolOutput::error("Cancelled by the user before this call finished.");
            call.finish(s, ToolStatus::Cancelled, output);
        }
    }

    /// Puts the assistant message and a tool message for every call into the history, in
    /// call order; then, when the model takes images and some results had them, one `user`
    /// message with those images (see [`super::ImageInputs`] for why they travel there).
    pub(super) fn answer(self, s: &mut Shared) {
        s.append(*self.assistant);
        let mut attached = super::images::Attachments::default();
        for call in self.calls {
            let text = match call.state {
                CallState::Done { output, .. } => {
                    attached.take(s.config.images, &call.id, &call.name, output)
                }
                CallState::Ready(_)
                | CallState::Checkpoint { .. }
                | CallState::Running { .. }
                | CallState::AwaitingApproval { .. }
                | CallState::PreHook { .. }
                | CallState::PostHook { .. } => crate::history::MISSING_RESULT.to_owned(),
            };
            s.push_history(Message::tool(call.id, text));
        }
        if let Some(message) = attached.into_message() {
            s.push_history(message);
        }
    }

    /// Hands the driver every ready call that may start now: in the model's order, a
    /// read-only call starts when no earlier call with effects is unfinished; a call with
    /// effects starts only when every earlier call is finished, and holds back every later
    /// one until it is.
    pub(super) fn release(&mut self, s: &mut Shared, now: Instant) {
        let deadline = s.config.tool_timeout.map(|t| now + t);
        let mut earlier_unfinished = false;
        for call in &mut self.calls {
            if call.checkpoint_after.is_some() {
                return; // the snapshot of what it changed comes before any later call
            }
            let alone = match &call.state {
                CallState::Done { .. } => continue,
                CallState::Checkpoint { run, .. } => runs_alone(run.effect),
                CallState::Running { effect, .. } => runs_alone(*effect),
                CallState::AwaitingApproval { run, .. } => runs_alone(run.effect),
                CallState::PreHook { run, .. } => runs_alone(run.effect),
                CallState::PostHook { effect, .. } => runs_alone(*effect),
                CallState::Ready(run) => runs_alone(run.effect),
            };
            if let CallState::Ready(run) = &call.state {
                if alone && earlier_unfinished {
                    return;
                }
                if let Some(due) = super::checkpoints::before_call(s, run.effect) {
                    // It starts once the snapshot of the state before it is handed back.
                    let run = run.clone();
                    call.state = CallState::Checkpoint { run, due };
                    return;
                }
                let (effect, confinement) = (run.effect, run.confinement);
                let running = CallState::Running {
                    effect,
                    deadline,
                    confinement,
                };
                let CallState::Ready(run) = std::mem::replace(&mut call.state, running) else {
                    unreachable!("matched as ready above");
                };
                s.issued_calls.insert(run.call_id.clone());
                s.outbox.push(Action::RunTool(run));
            }
            if alone {
                return; // a call with effects holds back every later call
            }
            earlier_unfinished = true;
        }
    }

    /// Sends the next approval request, one at a time, so a UI can ask in order and an
    /// "always" answer covers the calls after it.
    fn ask_next(&mut self, s: &mut Shared) {
        let mut waiting = self.calls.iter_mut().filter_map(|c| match &mut c.state {
            CallState::AwaitingApproval { run, asked } => Some((run, asked)),
            CallState::Ready(_)
            | CallState::Checkpoint { .. }
            | CallState::Running { .. }
            | CallState::PreHook { .. }
            | CallState::PostHook { .. }
            | CallState::Done { .. } => None,
        });
        let Some((run, asked)) = waiting.next() else {
            return;
        };
        match *asked {
            Asked::Yes | Asked::Hooking(_) => return,
            Asked::No => {
                let input = s
                    .hook_input(HookEvent::PermissionRequest)
                    .with_tool(&run.name, &run.arguments)
                    .with("tool_use_id", run.call_id.clone());
                let event = HookEvent::PermissionRequest;
                let (name, id) = (run.name.clone(), run.call_id.clone());
                if let Some(hooks) =
                    s.run_hooks(event, Some(&name), Some(&id), input, HookWait::Awaited)
                {
                    *asked = Asked::Hooking(hooks);
                    return;
                }
            }
            Asked::Hooked => {}
        }
        *asked = Asked::Yes;
        // hrns now waits for the user: `Notification` hooks hear of it, in the background.
        let label = crate::hooks::claude_tool_name(&run.name).unwrap_or(&run.name);
        let input = s
            .hook_input(HookEvent::Notification)
            .with(
                "message",
                format!("hrns needs your permission to use {label}"),
            )
            .with("notification_type", "permission_prompt");
        s.run_hooks(
            HookEvent::Notification,
            Some("permission_prompt"),
            None,
            input,
            HookWait::Background,
        );
        s.issued_calls.insert(run.call_id.clone());
        s.emit(Event::ApprovalRequested {
            id: run.call_id.clone(),
            name: run.name.clone(),
            arguments: run.arguments.clone(),
        });
        s.outbox.push(Action::AskApproval(run.clone()));
    }
}

impl PendingCall {
    fn finish(&mut self, s: &mut Shared, status: ToolStatus, mut output: ToolOutput) {
        if let Some(text) = super::hooks::context_text(HookEvent::PreToolUse, &self.context) {
            output.content.push_str("\n\n");
            output.content.push_str(&text);
        }
        s.emit(Event::ToolResult {
            id: self.id.clone(),
            name: self.name.clone(),
            status,
            output: output.clone(),
        });
        self.state = CallState::Done { status, output };
    }

    /// A hook of `event` answered `"continue": false` for this call: it is not run, and the
    /// turn stops with the first such reason.
    fn stopped_by_hook(&mut self, s: &mut Shared, event: HookEvent, reason: String) {
        let text = format!("Not run: a {event} hook stopped the run: {reason}");
        s.hook_stop.get_or_insert(TurnError::HookStopped {
            event: event.name().to_owned(),
            reason,
        });
        self.finish(s, ToolStatus::BlockedByHook, ToolOutput::error(text));
    }

    /// An approved call becomes ready to run.
    fn allow(&mut self) {
        if let CallState::AwaitingApproval { run, .. } = &self.state {
            self.state = CallState::Ready(run.clone());
        }
    }

    /// A call approved to run once outside the sandbox becomes ready to run so, when it is a
    /// command; any other call (a `task` call's child would take the leave to all of its
    /// own commands) is allowed as usual.
    fn allow_unsandboxed(&mut self) {
        if let CallState::AwaitingApproval { run, .. } = &self.state {
            let mut run = run.clone();
            if run.effect == Effect::Exec && run.name != crate::task::TASK_TOOL {
                run.confinement = Confinement::Unsandboxed;
            }
            self.state = CallState::Ready(run);
        }
    }
}

/// A call the policy lets run (or ask about) waits for its `PreToolUse` hooks first, when
/// any match it; any other state stays.
fn pre_hook(s: &mut Shared, state: CallState) -> CallState {
    let (run, next) = match state {
        CallState::Ready(run) => (run, Next::Run),
        CallState::AwaitingApproval { run, .. } => (run, Next::Ask),
        other @ (CallState::Checkpoint { .. }
        | CallState::Running { .. }
        | CallState::PreHook { .. }
        | CallState::PostHook { .. }
        | CallState::Done { .. }) => return other,
    };
    let input = s
        .hook_input(HookEvent::PreToolUse)
        .with_tool(&run.name, &run.arguments)
        .with("tool_use_id", run.call_id.clone());
    let event = HookEvent::PreToolUse;
    match s.run_hooks(
        event,
        Some(&run.name),
        Some(&run.call_id),
        input,
        HookWait::Awaited,
    ) {
        Some(id) => CallState::PreHook { run, next, id },
        None => match next {
            Next::Run => CallState::Ready(run),
            Next::Ask => CallState::AwaitingApproval {
                run,
                asked: Asked::No,
            },
        },
    }
}

/// A call with the arguments a hook gave it (`updatedInput`): they are checked again as the
/// model's would be, the new call is shown, and it runs or is asked about as the policy says
/// for them (never less strictly than `next`).
fn updated_call(
    s: &mut Shared,
    call: &mut PendingCall,
    run: ToolRun,
    next: Next,
    updated: serde_json::Map<String, serde_json::Value>,
) -> CallState {
    let arguments = crate::hooks::input::updated_arguments(&run.name, &run.arguments, updated);
    // The model's own call was counted for repeats; the hook's version is not one more.
    let last = s.last_call.clone();
    let state = super::decide::decide(s, &run.call_id, &run.name, &arguments);
    s.last_call = last;
    s.emit(Event::ToolCall {
        id: run.call_id.clone(),
        name: run.name.clone(),
        arguments: arguments.clone(),
    });
    call.arguments = arguments;
    match (state, next) {
        (CallState::Ready(run), Next::Ask) => CallState::AwaitingApproval {
            run,
            asked: Asked::No,
        },
        (state, _) => state,
    }
}

pub(super) fn done(status: ToolStatus, text: String) -> CallState {
    CallState::Done {
        status,
        output: ToolOutput::error(text),
    }
}
