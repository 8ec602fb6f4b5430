//! "Run without the sandbox": under `--approval ask`, the user may let one `run_command` call
//! run with `danger-full-access` (Codex's escalation). Under `auto` nobody is asked, so there
//! is none.

use hrns_blocking::tools::RunCommand;
use hrns_blocking::{Tool, ToolContext, Toolbox};
use hrns_core::sandbox::SandboxPolicy;
use hrns_core::session::ApprovalPolicy;
use hrns_core::tool::builtin::RUN_COMMAND;
use hrns_core::tool::{ToolOutput, ToolSpec};
use std::sync::{Arc, Mutex, PoisonError};

/// The arguments of `run_command` calls the user allowed to run once without the sandbox.
#[derive(Debug, Clone, Default)]
pub(crate) struct Escalations(Arc<Mutex<Vec<String>>>);

impl Escalations {
    /// Lets the call with these arguments run once without the sandbox.
    pub(crate) fn allow(&self, arguments: &str) {
        self.lock().push(arguments.to_owned());
    }

    /// Forgets the allowances not used (a turn that ended before the call ran): an
    /// allowance never outlives the turn it was given in.
    pub(crate) fn clear(&self) {
        self.lock().clear();
    }

    /// Whether a call with these arguments was allowed; the allowance is used up.
    fn take(&self, arguments: &str) -> bool {
        let mut allowed = self.lock();
        match allowed.iter().position(|a| a == arguments) {
            Some(i) => {
                allowed.remove(i);
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `run_command` that runs the calls in [`Escalations`] with `danger-full-access`.
#[derive(Debug, Clone)]
pub(crate) struct EscalatableCommand(pub(crate) Escalations);

impl Tool for EscalatableCommand {
    fn spec(&self) -> ToolSpec {
        Tool::spec(&RunCommand)
    }

    fn run(&self, arguments: &str, ctx: &ToolContext) -> ToolOutput {
        if !self.0.take(arguments) {
            return RunCommand.run(arguments, ctx);
        }
        let mut unconfined = ctx.clone();
        unconfined.sandbox.policy = SandboxPolicy::unconfined();
        let mut output = RunCommand.run(arguments, &unconfined);
        output
            .content
            .push_str(hrns_core::sandbox::UNSANDBOXED_NOTE);
        output
    }
}

/// Whether an approval question offers to run the call once without the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unsandboxed {
    /// `[u]nsandboxed, once` is one of the answers.
    Offered,
    /// It is not: the tool is not `run_command`, the run is not confined, or nobody is asked.
    NotOffered,
}

/// Whether commands of a run may be let out of the sandbox at all: only when the user is asked
/// (`ask`) and commands are confined. Under `auto` and `read-only` there is no escalation.
pub(crate) fn possible(approval: ApprovalPolicy, sandbox: &SandboxPolicy) -> bool {
    approval == ApprovalPolicy::Ask && sandbox.is_confined()
}

/// What the approval question for `tool` offers, for a run where escalation is
/// [`possible`] or not.
pub(crate) fn offer(approval: ApprovalPolicy, sandbox: &SandboxPolicy, tool: &str) -> Unsandboxed {
    if possible(approval, sandbox) && tool == RUN_COMMAND {
        Unsandboxed::Offered
    } else {
        Unsandboxed::NotOffered
    }
}

/// `toolbox` with its `run_command` (if any) able to run escalated calls.
pub(crate) fn escalatable(toolbox: &Toolbox, escalations: &Escalations) -> Toolbox {
    let mut toolbox = toolbox.clone();
    if toolbox.get(RUN_COMMAND).is_some() {
        toolbox.add(EscalatableCommand(escalations.clone()));
    }
    toolbox
}

/// [`escalatable`] for the async driver's toolbox (the TUI's): the same command, run on a
/// blocking thread.
pub(crate) fn make_async_escalatable(toolbox: &mut hrns_tokio::Toolbox, escalations: &Escalations) {
    if toolbox.get(RUN_COMMAND).is_some() {
        toolbox.add(EscalatableCommand(escalations.clone()));
    }
}

#[cfg(test)]
mod tests;
