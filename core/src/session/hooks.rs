//! Hooks in the session: asking the driver to run the hooks due at an event, and reading
//! their answers into one [`Combined`] decision for whoever waits on them (the turn, or a
//! tool call). What the decision does is decided where it is awaited (`turn.rs`,
//! `calls.rs`).

use super::event::Event;
use super::shared::Shared;
use super::{Action, SessionError};
use crate::hooks::input::Input;
use crate::hooks::{
    AgentRole, Combined, HookCommand, HookDue, HookEvent, HookRun, HookWait, combine, verdict,
};
use std::collections::HashMap;

/// The hooks asked for and not answered yet.
#[derive(Debug, Default)]
pub(super) struct HookState {
    /// The id the next [`HookDue`] gets; every id below it was issued.
    next_id: u64,
    pending: HashMap<u64, Pending>,
}

#[derive(Debug)]
struct Pending {
    event: HookEvent,
    commands: Vec<HookCommand>,
    call_id: Option<String>,
}

/// The answer of one event's hooks, for whoever waits on it.
#[derive(Debug)]
pub(super) struct Answer {
    pub(super) id: u64,
    pub(super) combined: Combined,
}

impl Shared {
    /// The input every hook of `event` gets, before the event's own fields.
    pub(super) fn hook_input(&self, event: HookEvent) -> Input {
        Input::new(&self.config.hooks.context, event, self.config.approval)
    }

    /// Whether any hook is configured for `event` (its input need not be built otherwise).
    pub(super) fn has_hooks(&self, event: HookEvent) -> bool {
        self.config.hooks.hooks.has(event)
    }

    /// `Stop` is `SubagentStop` in a subagent's session.
    pub(super) fn stop_event(&self) -> HookEvent {
        match self.config.hooks.role {
            AgentRole::Main => HookEvent::Stop,
            AgentRole::Subagent => HookEvent::SubagentStop,
        }
    }

    /// Asks the driver to run the hooks of `event` for `subject` with `input`; returns the id
    /// their answer will come with, or `None` when no hook is due.
    pub(super) fn run_hooks(
        &mut self,
        event: HookEvent,
        subject: Option<&str>,
        call_id: Option<&str>,
        input: Input,
        wait: HookWait,
    ) -> Option<u64> {
        let due = self.due_hooks(event, subject, call_id, input, wait)?;
        let id = due.id;
        self.outbox.push(Action::RunHooks(due));
        Some(id)
    }

    /// The hooks of `event` due for `subject`, registered as asked for (their answer is
    /// awaited with the returned id); `None` when no hook is due.
    pub(super) fn due_hooks(
        &mut self,
        event: HookEvent,
        subject: Option<&str>,
        call_id: Option<&str>,
        input: Input,
        wait: HookWait,
    ) -> Option<HookDue> {
        if !self.config.hooks.hooks.has(event) {
            return None;
        }
        let commands = self.config.hooks.hooks.due(event, subject);
        if commands.is_empty() {
            return None;
        }
        let id = self.hooks.next_id;
        self.hooks.next_id += 1;
        let input = input.finish(&self.secrets);
        self.hooks.pending.insert(
            id,
            Pending {
                event,
                commands: commands.clone(),
                call_id: call_id.map(str::to_owned),
            },
        );
        Some(HookDue {
            id,
            event,
            commands,
            input,
            wait,
        })
    }

    /// Reads the answers of the hooks asked for with `id`: one `hook` event per hook, and the
    /// combined decision. `None` for an answer nobody waits for any more (a cancelled turn).
    pub(super) fn hook_answers(
        &mut self,
        id: u64,
        runs: Vec<HookRun>,
    ) -> Result<Option<Answer>, SessionError> {
        if id >= self.hooks.next_id {
            return Err(SessionError::UnknownHooks(id));
        }
        let Some(pending) = self.hooks.pending.get(&id) else {
            return Ok(None);
        };
        if pending.commands.len() != runs.len() {
            return Err(SessionError::HookCount {
                id,
                expected: pending.commands.len(),
                got: runs.len(),
            });
        }
        let pending = self.hooks.pending.remove(&id).expect("looked up above");
        let mut verdicts = Vec::with_capacity(runs.len());
        for (command, run) in pending.commands.iter().zip(&runs) {
            let v = verdict(pending.event, command, run, &self.secrets);
            let message = [
                v.error.as_deref(),
                v.stop.as_deref(),
                v.block.as_deref(),
                v.system_message.as_deref(),
            ]
            .into_iter()
            .flatten()
            .fold(String::new(), |mut all, m| {
                if !all.contains(m) {
                    if !all.is_empty() {
                        all.push_str(" — ");
                    }
                    all.push_str(m);
                }
                all
            });
            self.emit(Event::Hook {
                event: pending.event.name().to_owned(),
                hook: self.redact(command.command.clone()),
                outcome: v.outcome(),
                duration_ms: run.duration_ms,
                message: (!message.is_empty()).then_some(message),
                call_id: pending.call_id.clone(),
            });
            verdicts.push(v);
        }
        Ok(Some(Answer {
            id,
            combined: combine(&verdicts),
        }))
    }
}

/// Context from hooks, as one text for the model.
pub(super) fn context_text(event: HookEvent, context: &[String]) -> Option<String> {
    let parts: Vec<&str> = context
        .iter()
        .map(|c| c.trim())
        .filter(|c| !c.is_empty())
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "<hook-context event=\"{}\">\n{}\n</hook-context>",
        event.name(),
        parts.join("\n")
    ))
}
