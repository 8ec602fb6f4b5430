//! "Run without the sandbox": under `--approval ask`, the user may let one `run_command` call
//! run with `danger-full-access` (Codex's escalation). Under `auto` nobody is asked, so there
//! is none.

use hrns_blocking::tools::RunCommand;
use hrns_blocking::{Tool, ToolContext, Toolbox};
use hrns_core::sandbox::SandboxPolicy;
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
        output.content.push_str(
            "hrns: ran without the sandbox (danger-full-access), as the user allowed once\n",
        );
        output
    }
}

/// `toolbox` with its `run_command` (if any) able to run escalated calls.
pub(crate) fn escalatable(toolbox: &Toolbox, escalations: &Escalations) -> Toolbox {
    let mut toolbox = toolbox.clone();
    if toolbox.get(hrns_core::tool::builtin::RUN_COMMAND).is_some() {
        toolbox.add(EscalatableCommand(escalations.clone()));
    }
    toolbox
}
