//! The conversation's setup: the runner and session for the current provider and agent,
//! the session log, and resuming a saved session.

use super::{App, ChildAsk, Msg};
use crate::host::sessions::{self, SessionHeader, SessionLog};
use crate::tui::markdown::MarkdownRenderer;
use crate::tui::text::{Line, SpanStyle};
use crate::tui::view;
use hrns_core::session::Approval;
use hrns_core::wire::{Message, Role};
use std::time::Duration;

impl App {
    /// Builds the runner and a session for the current provider and agent, continuing
    /// `history`.
    pub(super) fn rebuild(&mut self, history: Vec<Message>) {
        let asks = self.tx.clone();
        let subagents = crate::host::conversation::Subagents {
            // A child's question is asked here like the parent's; no answer denies it.
            ask: std::sync::Arc::new(move |agent: String, run| {
                let (reply, answer) = tokio::sync::oneshot::channel();
                let _ = asks.send(Msg::ChildApproval(ChildAsk { agent, run, reply }));
                Box::pin(async move { answer.await.unwrap_or(Approval::Unattended) })
            }),
        };
        let checkpointer = self.checkpointer();
        let start = std::mem::replace(
            &mut self.hook_start,
            hrns_core::hooks::StartSource::Continued,
        );
        let hooks = crate::setup::hooks::for_session(
            &self.hooks,
            &self.setup.workspace,
            self.log.as_ref().map(|l| (l.id(), l.path())),
            start,
        );
        let built = crate::host::conversation::build(
            &self.setup,
            self.policy,
            &self.shared,
            subagents,
            checkpointer,
            hooks,
            history,
        );
        if let Some(why) = &built.history_refused {
            self.error(why);
        }
        self.client = built.client;
        self.diffs = built.diffs;
        // The ending session's tokens are counted at its own model's prices.
        self.spent_before = self.spent();
        self.pricing = self.setup.pricing();
        self.session = Some(built.session);
        self.sessions_built += 1;
        self.runner = Some(built.runner);
        self.look_up_window();
    }

    /// The checkpoints of the current session's log (none without a log, with
    /// `"checkpoints": false`, or without `git`: said once).
    fn checkpointer(&mut self) -> Option<std::sync::Arc<hrns_blocking::Checkpointer>> {
        let id = self.log.as_ref()?.id().to_owned();
        let (checkpointer, warning) = crate::host::checkpoints::checkpointer(
            &self.setup.file.config,
            &self.setup.workspace,
            &id,
        );
        if let Some(warning) = warning {
            if !std::mem::replace(&mut self.checkpoints_warned, true) {
                self.error(&format!("warning: {warning}"));
            }
        }
        checkpointer
    }

    /// Asks the provider's `/models` for the window in the background when nothing else
    /// gave it, once per model; the answer arrives as [`Msg::Window`].
    pub(super) fn look_up_window(&mut self) {
        let model = self.setup.provider.model.clone();
        if !self.setup.needs_window_lookup()
            || self.window_looked_up.as_ref() == Some(&model)
            || tokio::runtime::Handle::try_current().is_err()
        {
            return;
        }
        self.window_looked_up = Some(model);
        let client = self.client.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            if let Ok(Ok(models)) =
                tokio::time::timeout(Duration::from_secs(10), client.list_models()).await
            {
                let _ = tx.send(Msg::Window(models));
            }
        });
    }

    pub(super) fn history(&self) -> Vec<Message> {
        self.session
            .as_ref()
            .map(|s| s.messages().to_vec())
            .unwrap_or_default()
    }

    pub(super) fn new_log(&mut self) {
        let Ok(state) = crate::setup::paths::state_dir() else {
            return;
        };
        let header = SessionHeader {
            hrns_session: sessions::SESSION_VERSION,
            id: String::new(),
            started: String::new(),
            cwd: self.setup.workspace.display().to_string(),
            provider: self.setup.provider.name.clone(),
            model: self.setup.provider.model.clone(),
            agent: self.setup.agent.name.clone(),
        };
        match SessionLog::create(&state.join("sessions"), header) {
            Ok(log) => self.log = Some(log),
            Err(e) => self.error(&format!("this session is not saved: {e}")),
        }
    }

    /// Closes the current session's log (see [`SessionLog::keep_if_answered`]): a conversation
    /// begun in this run that got no answer is not saved. Returns whether a file stays.
    pub(super) fn close_log(&mut self) -> bool {
        let history = self.history();
        self.log = self
            .log
            .take()
            .and_then(|log| log.keep_if_answered(&history));
        self.log.is_some()
    }

    /// Continues the saved session `claimed` (locked by this run) in place of the current one.
    pub(super) fn resume(&mut self, claimed: sessions::Claimed) {
        // The conversation on screen ends (none yet when the UI starts with `--resume`).
        self.end_session(hrns_core::hooks::EndReason::Other);
        self.close_log();
        let path = claimed.path().to_owned();
        let loaded = match sessions::load(&path) {
            Ok(l) => l,
            Err(e) => {
                self.error(&e.to_string());
                self.new_log();
                self.rebuild(Vec::new());
                return;
            }
        };
        for w in &loaded.warnings {
            self.error(w);
        }
        let width = self.screen.wrap_width();
        for m in &loaded.messages {
            let lines = match m.role {
                Role::User => match hrns_core::session::tool_images(m) {
                    Some(calls) => vec![Line::styled(
                        crate::exec::output::tool_images_text(&calls),
                        SpanStyle::PLAIN.dim(),
                    )],
                    // A pruned image message: the stub says what it was.
                    None if hrns_core::session::is_tool_images(m) => {
                        vec![Line::styled(m.text(), SpanStyle::PLAIN.dim())]
                    }
                    None => view::user_message(&m.text(), width),
                },
                Role::Assistant => {
                    let mut lines = MarkdownRenderer::new(width, self.highlight)
                        .with_links(self.links)
                        .document(&m.text());
                    for c in &m.tool_calls {
                        lines.push(view::tool_call_line(
                            &c.function.name,
                            &c.function.arguments,
                            width,
                        ));
                    }
                    lines
                }
                Role::Tool => vec![Line::styled(
                    view::short_arguments(&m.text()),
                    SpanStyle::PLAIN.dim(),
                )],
                Role::System | Role::Developer | Role::Function => Vec::new(),
            };
            self.print(&lines);
        }
        self.info(&format!(
            "resumed session {} ({})",
            loaded.header.id,
            crate::exec::output::count(loaded.messages.len(), "message")
        ));
        match SessionLog::append_to(claimed, &loaded.header.id) {
            Ok(log) => self.log = Some(log),
            Err(e) => self.error(&format!("this session is not saved: {e}")),
        }
        self.hook_start = hrns_core::hooks::StartSource::Resume;
        self.rebuild(loaded.messages);
    }
}
