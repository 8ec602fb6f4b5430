//! The hooks a front end runs itself, outside a turn: `SessionEnd` when a conversation ends
//! (`exec` done, the UI left or cleared, an editor closing a session or going away) and the
//! `Notification` of an idle prompt. The session says which are due and reads their answers
//! ([`Session::end`], [`Session::notify_idle`]); this only runs the processes, as the
//! drivers run the hooks of a turn.

use hrns_core::hooks::{EndReason, HookDue, HookRun};
use hrns_core::sandbox::EnvPolicy;
use hrns_core::secrets::Secrets;
use hrns_core::session::Session;
use std::path::Path;

/// Runs the commands of `due` in `workspace` (blocking until they end or time out).
pub(crate) fn run(
    due: &HookDue,
    workspace: &Path,
    env: &EnvPolicy,
    secrets: &Secrets,
) -> Vec<HookRun> {
    let env = hrns_blocking::hooks::HookEnv::new(workspace, env, secrets);
    hrns_blocking::hooks::run_hooks(due, &env)
}

/// Runs the `SessionEnd` hooks of `session` for `reason`, blocking until they end, and hands
/// their results to it: their `hook` events wait in its outbox for the caller to show.
/// `false` when none ran.
pub(crate) fn end(
    session: &mut Session,
    workspace: &Path,
    env: &EnvPolicy,
    reason: EndReason,
) -> bool {
    let Some(due) = session.end(reason) else {
        return false;
    };
    let runs = run(&due, workspace, env, session.secrets());
    session
        .handle_hooks(std::time::Instant::now(), due.id, runs)
        .is_ok()
}
