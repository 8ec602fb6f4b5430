//! "Run without the sandbox": under `--approval ask`, the user may let one `run_command` call
//! run with `danger-full-access` (Codex's escalation). Under `auto` nobody is asked, so there
//! is none. The answer is [`Approval::OnceUnsandboxed`](hrns_core::session::Approval); the
//! session marks the call and the driver runs it unconfined. What is left here is whether
//! the question offers it.

use hrns_core::sandbox::SandboxPolicy;
use hrns_core::session::ApprovalPolicy;
use hrns_core::tool::builtin::RUN_COMMAND;

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

#[cfg(test)]
mod tests;
