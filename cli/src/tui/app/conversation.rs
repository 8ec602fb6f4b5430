//! The conversation's setup: the runner and session for the current provider and agent,
//! the session log, and resuming a saved session.

use super::{App, Msg};
use crate::host::opening::{NotSaved, Note, Opened};
use crate::host::plan::Keep;
use crate::host::sessions;
use crate::tui::markdown::MarkdownRenderer;
use crate::tui::text::{Line, SpanStyle};
use crate::tui::view;
use hrns_core::wire::{Message, Role};
use std::time::Duration;

/// Whether a rebuilt session keeps what the user allowed or denied for whole tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answers {
    /// The same conversation goes on (another model, agent or provider, a retry, an undo):
    /// the user is not asked again about a tool they always allowed, nor sees one they
    /// never allowed run.
    Kept,
    /// Another conversation starts (`/new`, a resumed session, the first one).
    Forgotten,
}

impl App {
    /// Builds the runner and a session for the current provider and agent, continuing
    /// `history`; with [`Answers::Kept`] the new session keeps the user's "always" and
    /// "never" answers of the one it replaces.
    pub(super) fn rebuild(&mut self, history: Vec<Message>, answers: Answers) {
        let approvals = match answers {
            Answers::Kept => self.session.as_ref().map(|s| s.approvals()),
            Answers::Forgotten => None,
        };
        let start = std::mem::replace(
            &mut self.hook_start,
            hrns_core::hooks::StartSource::Continued,
        );
        let hooks = self.saved.hooks(&self.hooks, &self.setup, start);
        let built = crate::host::conversation::build(
            &self.setup,
            self.policy,
            &self.shared,
            self.saved.checkpointer.clone(),
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
        let mut session = built.session;
        if let Some(approvals) = approvals {
            session.keep_approvals(approvals);
        }
        self.session = Some(session);
        self.sessions_built += 1;
        self.runner = Some(built.runner);
        self.look_up_window();
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

    /// Starts a new session's log (see [`crate::host::opening`]), for the next rebuild.
    pub(super) fn new_log(&mut self) {
        let opened = crate::host::opening::open_new(&self.setup, Keep::Session);
        self.opened(opened);
    }

    /// Takes the log and the checkpoints of `opened` for the builds to come, and says what
    /// the opening found after the lines of a continued session it read; returns the history
    /// to continue.
    fn opened(&mut self, opened: Opened) -> Vec<Message> {
        for note in &opened.notes {
            match note {
                // Shown before the conversation, by `resume`.
                Note::History(_) => {}
                Note::NotSaved(NotSaved::File(e)) => {
                    self.error(&format!("this session is not saved: {e}"));
                }
                // Without a state directory nothing is saved, and nothing said.
                Note::NotSaved(NotSaved::NoStateDir(_)) => {}
                Note::CheckpointsOff(warning) => {
                    if !std::mem::replace(&mut self.checkpoints_warned, true) {
                        self.error(&format!("warning: {warning}"));
                    }
                }
            }
        }
        self.log = opened.log;
        self.saved = opened.saved;
        opened.history
    }

    /// Closes the current session's log (see [`sessions::SessionLog::keep_if_answered`]): a
    /// conversation begun in this run that got no answer is not saved. Returns whether a file
    /// stays.
    pub(super) fn close_log(&mut self) -> bool {
        let history = self.history();
        self.log = self
            .log
            .take()
            .and_then(|log| log.keep_if_answered(&history));
        if self.log.is_none() {
            // No file left to name the checkpoints after or tell the hooks of.
            self.saved = Default::default();
        }
        self.log.is_some()
    }

    /// Continues the saved session `claimed` (locked by this run) in place of the current one.
    pub(super) fn resume(&mut self, claimed: sessions::Claimed) {
        // The conversation on screen ends (none yet when the UI starts with `--resume`).
        self.end_session(hrns_core::hooks::EndReason::Other);
        self.close_log();
        let opened = match crate::host::opening::open_saved(&self.setup, claimed) {
            Ok(opened) => opened,
            Err(e) => {
                self.error(&e.to_string());
                self.new_log();
                self.rebuild(Vec::new(), Answers::Forgotten);
                return;
            }
        };
        for note in &opened.notes {
            if let Note::History(w) = note {
                self.error(w);
            }
        }
        let width = self.screen.wrap_width();
        for m in &opened.history {
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
            opened.saved.id().unwrap_or_default(),
            crate::exec::output::count(opened.history.len(), "message")
        ));
        // A continued session starts as `resume` for its `SessionStart` hooks.
        self.hook_start = opened.start;
        let history = self.opened(opened);
        self.rebuild(history, Answers::Forgotten);
    }
}
