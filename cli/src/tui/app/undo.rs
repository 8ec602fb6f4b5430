//! `/undo`, `/redo` and `/rewind`: the current session's checkpoints taken back or brought
//! back, with a question before files changed after the agent are overwritten, and the
//! conversation rewound to before a turn. The same timeline and restore as `hrns undo` and
//! `hrns rewind` ([`crate::host::checkpoints`]).

use super::App;
use super::conversation::Answers;
use crate::host::checkpoints as host;
use crate::host::sessions;
use crate::tui::text::Line;
use hrns_core::checkpoint::Overwrite;
use hrns_core::checkpoint::timeline::{Code, Conversation, RestorePoint, Timeline};

/// A checkpoint question waiting for its answer on the input line.
#[derive(Debug)]
pub(super) enum CheckpointAsk {
    /// `/rewind N`: code and conversation, conversation only, or code only.
    Mode { turn: u64 },
    /// The restore would overwrite files changed after the agent: yes or no.
    Overwrite(Pending),
}

/// What a checkpoint command is about to do.
#[derive(Debug, Clone)]
pub(super) struct Pending {
    /// The files to restore, if any.
    point: Option<RestorePoint>,
    /// The turn to rewind the conversation to just before, if it is rewound.
    rewind_to: Option<u64>,
}

impl App {
    /// The current session's timeline, read back from its file.
    fn timeline(&mut self) -> Option<Timeline> {
        if self.busy() {
            self.error("wait for the turn to end (or Esc it) first");
            return None;
        }
        let Some(log) = self.log.as_ref() else {
            self.error("this session is not saved, so it has no checkpoints");
            return None;
        };
        match sessions::load(log.path()) {
            Ok(loaded) => Some(host::timeline(&loaded)),
            Err(e) => {
                self.error(&e.to_string());
                None
            }
        }
    }

    /// `/undo`: the file changes of the last turn that changed files.
    pub(super) fn undo(&mut self) {
        let Some(timeline) = self.timeline() else {
            return;
        };
        match timeline.undo(1) {
            Ok(point) => self.checkpoint_step(
                Pending {
                    point: Some(point),
                    rewind_to: None,
                },
                None,
            ),
            Err(e) => self.info(&e.to_string()),
        }
    }

    /// `/redo`: the last undo taken back.
    pub(super) fn redo(&mut self) {
        let Some(timeline) = self.timeline() else {
            return;
        };
        match timeline.redo() {
            Ok(point) => self.checkpoint_step(
                Pending {
                    point: Some(point),
                    rewind_to: None,
                },
                None,
            ),
            Err(e) => self.info(&e.to_string()),
        }
    }

    /// `/rewind`: the turns to pick from; `/rewind N`: the question what to take back.
    pub(super) fn rewind(&mut self, arg: Option<String>) {
        let Some(timeline) = self.timeline() else {
            return;
        };
        let Some(arg) = arg else {
            let lines = turn_lines(&timeline);
            if lines.is_empty() {
                self.info("no turns yet");
                return;
            }
            self.print(&lines);
            self.info("pick one with /rewind N: the session goes back to just before turn N");
            return;
        };
        let turn = match arg.trim().parse::<u64>() {
            Ok(n) => n,
            Err(_) => {
                self.error(&format!("/rewind takes a turn's number, not `{arg}`"));
                return;
            }
        };
        if let Err(e) = timeline.check_turn(turn) {
            self.error(&e.to_string());
            return;
        }
        self.checkpoint_ask = Some(CheckpointAsk::Mode { turn });
        self.info(&format!(
            "back to just before turn {turn}: 1 code and conversation, 2 conversation only, 3 code only (Esc cancels)"
        ));
    }

    /// The answer typed to a checkpoint question.
    pub(super) fn checkpoint_answer(&mut self, ask: CheckpointAsk, text: &str) {
        let text = text.trim().to_lowercase();
        match ask {
            CheckpointAsk::Mode { turn } => {
                let (code, conversation) = match text.as_str() {
                    "1" => (true, true),
                    "2" => (false, true),
                    "3" => (true, false),
                    _ => {
                        self.info("answer 1, 2 or 3 (Esc cancels)");
                        self.checkpoint_ask = Some(CheckpointAsk::Mode { turn });
                        return;
                    }
                };
                let point = match code {
                    false => None,
                    true => match self.timeline().map(|t| t.rewind_code(turn)) {
                        Some(Ok(point)) => point,
                        Some(Err(e)) => return self.error(&e.to_string()),
                        None => return,
                    },
                };
                if code && point.is_none() {
                    self.info(&format!(
                        "no file to restore: turn {turn} and later changed none that is not undone already"
                    ));
                }
                let pending = Pending {
                    point,
                    rewind_to: conversation.then_some(turn),
                };
                self.checkpoint_step(pending, None);
            }
            CheckpointAsk::Overwrite(pending) => {
                let overwrite = match hrns_core::sandbox::is_yes(&text) {
                    true => Overwrite::Force,
                    false => Overwrite::Never,
                };
                self.checkpoint_step(pending, Some(overwrite));
            }
        }
    }

    /// Carries `pending` out; first asks when it would overwrite files changed after the agent
    /// and `overwrite` is not decided yet.
    fn checkpoint_step(&mut self, pending: Pending, overwrite: Option<Overwrite>) {
        let workspace = self.setup.workspace.clone();
        if let (Some(point), None) = (&pending.point, overwrite) {
            match host::would_keep(&self.setup.file.config, &workspace, point) {
                Ok(kept) if !kept.is_empty() => {
                    let mut lines = vec![Line::plain(format!(
                        "{} changed after the agent's last step:",
                        crate::exec::output::count(kept.len(), "file")
                    ))];
                    for k in &kept {
                        lines.push(Line::plain(format!(
                            "  {}",
                            crate::term::safe_text::safe(&k.path)
                        )));
                    }
                    self.print(&lines);
                    self.info("overwrite them too? y overwrites, n (or Enter) keeps them");
                    self.checkpoint_ask = Some(CheckpointAsk::Overwrite(pending));
                    return;
                }
                Ok(_) => {}
                Err(e) => return self.error(&e),
            }
        }
        if let Some(point) = &pending.point {
            let Some(log) = self.log.as_mut() else {
                return;
            };
            let id = log.id().to_owned();
            match host::restore(
                &self.setup.file.config,
                &workspace,
                &id,
                point,
                overwrite.unwrap_or_default(),
                log,
            ) {
                Ok(done) => {
                    let lines: Vec<Line> = host::done_lines(&done)
                        .iter()
                        .map(|l| Line::plain(crate::term::safe_text::safe(l)))
                        .collect();
                    self.print(&lines);
                }
                Err(e) => return self.error(&e.to_string()),
            }
        }
        if let Some(turn) = pending.rewind_to {
            self.rewind_conversation(turn);
        }
    }

    /// Rewinds the conversation to just before `turn`: recorded in the session file, and the
    /// session rebuilt from it (as `--continue` would load it). The turn's message goes back
    /// into the input, to edit and send again.
    fn rewind_conversation(&mut self, turn: u64) {
        let Some(log) = self.log.as_mut() else {
            return;
        };
        if let Err(e) = log.record_rewind(turn) {
            return self.error(&format!("the rewind could not be saved: {e}"));
        }
        let loaded = match sessions::load(log.path()) {
            Ok(loaded) => loaded,
            Err(e) => return self.error(&e.to_string()),
        };
        let message = host::timeline(&loaded)
            .turns()
            .iter()
            .find(|t| t.number == turn)
            .map(|t| t.message.clone());
        self.rebuild(loaded.messages, Answers::Kept);
        self.info(&format!(
            "the conversation is back to just before turn {turn}"
        ));
        if let Some(message) = message {
            self.editor.set_text(&message);
        }
    }
}

/// `/rewind`'s list: each turn with the user's message and the files it changed.
fn turn_lines(timeline: &Timeline) -> Vec<Line> {
    use crate::term::safe_text::safe;
    timeline
        .turns()
        .iter()
        .map(|t| {
            let changed = t.changed();
            let files = match changed.len() {
                0 => "no files".to_owned(),
                _ => crate::exec::output::one_line(&safe(&changed.join(", ")), 60),
            };
            let mut marks = String::new();
            if t.code == Code::Undone {
                marks.push_str(" (files undone)");
            }
            if t.conversation == Conversation::Rewound {
                marks.push_str(" (rewound)");
            }
            Line::plain(format!(
                "{:>3}. {}  · {files}{marks}",
                t.number,
                crate::exec::output::one_line(&safe(&t.message), 50)
            ))
        })
        .collect()
}
