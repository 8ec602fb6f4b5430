//! Keys, pastes and submitted lines: approval answers, Tab completion, the queue, and what
//! Enter starts (a turn, a slash command or a custom command).

use super::App;
use super::connect::Connect;
use crate::tui::commands::{self, Candidates, CommandId};
use crate::tui::editor::EditorAction;
use crate::tui::text::Line;
use crate::tui::view::{self, Answer};
use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use hrns_core::session::{Approval, Question, SessionError};
use std::time::{Duration, Instant};

impl App {
    pub(super) fn on_terminal(&mut self, ev: TermEvent) {
        match ev {
            TermEvent::Key(key) if key.kind != KeyEventKind::Release => self.on_key(key),
            TermEvent::Paste(text) => {
                let _ = self.editor.handle_paste(&text);
            }
            TermEvent::Resize(w, _) => {
                self.screen.width = w.max(10);
                self.md.set_width(self.screen.wrap_width());
            }
            _ => {}
        }
    }

    pub(super) fn on_key(&mut self, key: KeyEvent) {
        // Tab's candidate line lasts until the next key.
        self.candidates = None;
        // The user is at the prompt: it is not idle.
        self.idle_notify_at = None;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('t') {
            self.show_reasoning = !self.show_reasoning;
            self.info(if self.show_reasoning {
                "reasoning: shown in full"
            } else {
                "reasoning: one-line summaries"
            });
            return;
        }
        if ctrl && key.code == KeyCode::Char('o') {
            // The subagents' tool calls and answers under their lines, or not.
            self.tasks.toggle();
            return;
        }
        // A pending approval takes y / a / (u /) n before anything else.
        if let Some(ask) = &self.asking {
            if !ask.reason {
                if let KeyCode::Char(c) = key.code {
                    if !ctrl {
                        match view::approval_answer(c, ask.unsandboxed) {
                            Some(Answer::Approval(Approval::Deny { .. })) => {
                                if let Some(a) = self.asking.as_mut() {
                                    a.reason = true;
                                }
                                return;
                            }
                            Some(answer) => {
                                self.answer(answer);
                                return;
                            }
                            None => return,
                        }
                    }
                }
            }
        }
        // The editor ignores Enter on blank text; a prompt that takes an empty answer (the
        // reason after a denial, /connect's API key) gets it.
        if key.code == KeyCode::Enter
            && key.modifiers.is_empty()
            && self.editor.text().trim().is_empty()
            && self.takes_empty_answer()
        {
            self.editor.clear();
            self.on_submit(String::new());
            return;
        }
        // ↑ on an empty line takes the last queued message back for editing.
        if key.code == KeyCode::Up && self.editor.is_empty() && !self.queue.is_empty() {
            if let Some(text) = self.queue.take_last() {
                self.editor.set_text(&text);
            }
            return;
        }
        match self.editor.handle_key(key) {
            EditorAction::Submit(text) => self.on_submit(text),
            EditorAction::Cancel => self.on_cancel(),
            EditorAction::Exit => {
                if self.busy() {
                    self.interrupt();
                } else {
                    self.quit = true;
                }
            }
            EditorAction::Complete => self.complete(),
            EditorAction::None | EditorAction::Redraw => {}
        }
    }

    /// Whether the prompt shown now accepts an empty answer.
    pub(super) fn takes_empty_answer(&self) -> bool {
        self.asking.as_ref().is_some_and(|a| a.reason)
            || matches!(
                self.checkpoint_ask,
                Some(super::undo::CheckpointAsk::Overwrite(_))
            )
            || self
                .connect
                .as_ref()
                .is_some_and(Connect::takes_empty_answer)
    }

    pub(super) fn answer(&mut self, answer: Answer) {
        if let Some(ask) = self.asking.take() {
            let (approval, line) = match answer {
                Answer::OnceUnsandboxed => {
                    let line = "allowed once, without the sandbox (danger-full-access)";
                    (Approval::OnceUnsandboxed, Some(view::info_line(line)))
                }
                Answer::Approval(approval) => {
                    let line = match &approval {
                        Approval::Once => Some(view::info_line("allowed once")),
                        Approval::OnceUnsandboxed => Some(view::info_line(
                            "allowed once, without the sandbox (danger-full-access)",
                        )),
                        Approval::AlwaysThisTool => Some(view::info_line(&format!(
                            "allowed {} for this session",
                            ask.question.name()
                        ))),
                        Approval::NeverThisTool => Some(view::info_line(&format!(
                            "denied {} for this session",
                            ask.question.name()
                        ))),
                        // The result line that follows says "denied"; once is enough.
                        Approval::Deny { .. } | Approval::Unattended => None,
                    };
                    (approval, line)
                }
            };
            if let Some(line) = line {
                self.print(&[line]);
            }
            // One path for the session's questions and its subagents': the answer goes to
            // the session, which hands a child's on to it.
            if let (Some(runner), Some(session)) = (self.runner.as_mut(), self.session.as_mut()) {
                match runner.handle_answer(session, &ask.question, approval) {
                    // A child whose task stopped meanwhile was denied by the session.
                    Ok(()) | Err(SessionError::UnknownChildQuestion { .. }) => {}
                    Err(e) => panic!("the session asked about this call: {e}"),
                }
            }
            self.dispatch();
            if let Question::Child(_) = ask.question {
                self.waiting_since = Some(Instant::now());
            }
            self.ask_child();
        }
    }

    pub(super) fn on_cancel(&mut self) {
        if self.checkpoint_ask.take().is_some() {
            self.editor.clear();
            self.info("cancelled: nothing was restored");
            return;
        }
        if self.connect.take().is_some() {
            self.editor.clear();
            self.info("/connect cancelled");
            return;
        }
        if self.busy() {
            self.interrupt();
            return;
        }
        if !self.editor.is_empty() {
            self.editor.clear();
            self.ctrl_c_at = None;
            return;
        }
        match self.ctrl_c_at {
            Some(t) if t.elapsed() < Duration::from_secs(3) => self.quit = true,
            _ => {
                self.ctrl_c_at = Some(Instant::now());
                self.info("press Ctrl-C again (or Ctrl-D) to quit");
            }
        }
    }

    pub(super) fn complete(&mut self) {
        let cands = Candidates {
            providers: self.setup.file.config.provider_names(),
            models: self.models.clone(),
            agents: self
                .setup
                .discovered
                .agents
                .iter()
                .map(|a| a.name.clone())
                .collect(),
            custom: self
                .setup
                .discovered
                .commands
                .iter()
                .map(|c| c.name.clone())
                .collect(),
        };
        let (text, cursor) = (self.editor.text(), self.editor.cursor());
        let workspace = &self.setup.workspace;
        let completion = commands::complete(text, cursor, &cands).or_else(|| {
            crate::tui::mention_complete::complete(text, cursor, |dir| {
                crate::tui::mention_complete::list_dir(workspace, dir, 2000)
            })
        });
        if let Some(c) = completion {
            self.editor.replace_range(c.range.clone(), &c.insert);
            if c.options.len() > 1 {
                // In place under the input, not into the scrollback.
                self.candidates = Some(c.options.join("  "));
            }
        }
    }

    pub(super) fn on_submit(&mut self, text: String) {
        self.ctrl_c_at = None;
        if let Some(ask) = &self.asking {
            if ask.reason {
                let reason = text.trim();
                self.answer(Answer::Approval(Approval::Deny {
                    reason: (!reason.is_empty()).then(|| reason.to_owned()),
                }));
                return;
            }
        }
        if let Some(ask) = self.checkpoint_ask.take() {
            self.checkpoint_answer(ask, &text);
            return;
        }
        if self.connect.is_some() {
            self.connect_step(text);
            return;
        }
        if text.trim().is_empty() {
            return;
        }
        if self.busy() {
            self.queue.push(text);
            return;
        }
        if let Err(e) = self.editor.history_mut().add(&text) {
            self.error(&format!("the prompt history could not be saved: {e}"));
        }
        if let Some(prompt) = self.custom_command(&text) {
            self.start_turn(prompt);
            return;
        }
        if commands::is_command(&text) {
            // The command goes into the transcript, so its output is not orphaned.
            self.print(&[Line::styled(
                format!("› {}", text.trim()),
                crate::tui::text::SpanStyle::PLAIN.dim(),
            )]);
            match commands::parse(&text) {
                Ok(parsed) => self.command(parsed.command.id, parsed.arg),
                Err(hint) => self.print(&[hint.to_line()]),
            }
            return;
        }
        self.start_turn(text);
    }

    /// When `text` runs a custom command (and no built-in of its name): its prompt, after
    /// switching to the command's agent and model.
    pub(super) fn custom_command(&mut self, text: &str) -> Option<String> {
        let (name, args) = hrns_core::command::split_invocation(text)?;
        if commands::lookup(name).is_some() {
            return None;
        }
        let c = hrns_core::command::find_command(&self.setup.discovered.commands, name)?.clone();
        if let Some(agent) = c.agent {
            self.command(CommandId::Agent, Some(agent));
        }
        if let Some(model) = c.model {
            self.command(CommandId::Model, Some(model));
        }
        Some(hrns_core::command::expand(&c.body, args))
    }
}
