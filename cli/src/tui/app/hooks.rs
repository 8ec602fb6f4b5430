//! The hooks the UI runs itself, outside a turn: `SessionEnd` when the conversation ends
//! (leaving the UI, `/new`, `/resume`) and the `Notification` of a prompt left idle after a
//! turn (`idle_prompt`). The session says which are due and reads their answers; their
//! `hook` lines are shown like a turn's.

use super::{App, Msg};
use hrns_core::hooks::{EndReason, HookRun};
use std::time::{Duration, Instant};

impl App {
    /// Runs the `SessionEnd` hooks of the current session for `reason`, waiting for them
    /// (they are the last thing the session does), and shows their lines.
    pub(super) fn end_session(&mut self, reason: EndReason) {
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let (workspace, env) = (&self.setup.workspace, &self.setup.sandbox.env);
        // The UI's runtime has worker threads: the others go on meanwhile.
        let ran = tokio::task::block_in_place(|| {
            crate::host::hooks::end(session, workspace, env, reason)
        });
        if ran {
            self.dispatch();
        }
    }

    /// The turn ended and the prompt waits for the user: `Notification` hooks hear of it once
    /// the prompt stayed idle for `idleNotificationMs` (Claude Code's 60 s by default).
    pub(super) fn start_idle_wait(&mut self) {
        let after = self
            .setup
            .file
            .config
            .extra
            .get("idleNotificationMs")
            .and_then(serde_json::Value::as_u64)
            .map_or(
                hrns_core::hooks::IDLE_NOTIFICATION_AFTER,
                Duration::from_millis,
            );
        self.idle_notify_at = Some(tokio::time::Instant::now() + after);
    }

    /// The prompt stayed idle: runs the `idle_prompt` notification hooks in the background;
    /// their results come back as [`Msg::HookRuns`].
    pub(super) fn notify_idle(&mut self) {
        self.idle_notify_at = None;
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let Some(due) = session.notify_idle() else {
            return;
        };
        let workspace = self.setup.workspace.clone();
        let env = self.setup.sandbox.env.clone();
        let secrets = session.secrets().clone();
        let tx = self.tx.clone();
        let built = self.sessions_built;
        tokio::task::spawn_blocking(move || {
            let runs = crate::host::hooks::run(&due, &workspace, &env, &secrets);
            let _ = tx.send(Msg::HookRuns {
                built,
                id: due.id,
                runs,
            });
        });
    }

    /// The results of hooks the UI ran itself, for the session to read and show. Results
    /// for a session made again meanwhile (`/model`, `/new`: its hook ids start again) are
    /// dropped.
    pub(super) fn on_hook_runs(&mut self, built: u64, id: u64, runs: Vec<HookRun>) {
        if built != self.sessions_built {
            return;
        }
        if let Some(session) = self.session.as_mut() {
            if session.handle_hooks(Instant::now(), id, runs).is_ok() {
                self.dispatch();
            }
        }
    }
}
