//! A saved session's checkpoints as a timeline of turns, and what `hrns undo`, `--redo`,
//! `hrns rewind`, `/undo` and `/rewind` go back to.
//!
//! The front end reads its session file in order and tells the [`Timeline`] what it finds:
//! each turn's start with the user's message, each [`Event::Checkpoint`], and each restore or
//! rewind an earlier undo recorded. The timeline then decides which checkpoint a restore goes
//! back to and which snapshot is the agent's latest (so that a file changed after it is a
//! user's edit). Turns are numbered by their place in the session file, from 1, and never
//! renumbered: a rewound turn keeps its number, and the next turn gets a new one.
//!
//! [`Event::Checkpoint`]: crate::session::Event::Checkpoint

use super::Moment;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Whether a restore took turns back or brought them back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestoreKind {
    /// `hrns undo`, `/undo`, or the code half of a rewind: the turns' file changes taken back.
    Undo,
    /// `hrns undo --redo`, `/redo`: the last undo taken back.
    Redo,
}

/// What a restore did, as the session file records it (so a later undo, redo or listing knows,
/// also after a crash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restore {
    /// Undo or redo.
    pub kind: RestoreKind,
    /// The checkpoint the workspace was put back to.
    pub to: String,
    /// The agent's latest snapshot the restore started from.
    pub latest: String,
    /// The workspace just before the restore (what a redo goes back to).
    pub before: String,
    /// The turns it took back (undo) or brought back (redo).
    pub turns: Vec<u64>,
    /// The paths it wrote back or removed.
    #[serde(default)]
    pub restored: Vec<String>,
    /// The paths it left because they changed after the agent.
    #[serde(default)]
    pub kept: Vec<String>,
}

/// A checkpoint taken in a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    /// Its id in the store.
    pub id: String,
    /// The model request whose calls it is about.
    pub step: u32,
    /// Before the turn's changes, or after a call.
    pub moment: Moment,
    /// The paths that changed since the checkpoint before it.
    pub changed: Vec<String>,
}

/// Whether a turn's file changes are in the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// As the turn left them.
    Kept,
    /// Taken back by an undo or a rewind.
    Undone,
}

/// Whether a turn is in the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conversation {
    /// It is.
    Kept,
    /// A rewind took it out.
    Rewound,
}

/// One turn of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnRecord {
    /// Its number, from 1, by its place in the session file.
    pub number: u64,
    /// The user's message.
    pub message: String,
    /// Its checkpoints, in order.
    pub checkpoints: Vec<Taken>,
    /// Why checkpoints of it failed, if any did.
    pub failed: Vec<String>,
    /// Whether its file changes are in the workspace.
    pub code: Code,
    /// Whether it is in the conversation.
    pub conversation: Conversation,
}

impl TurnRecord {
    /// The paths its calls changed, sorted, each once.
    pub fn changed(&self) -> Vec<String> {
        let set: BTreeSet<&String> = self
            .checkpoints
            .iter()
            .filter(|c| c.moment == Moment::AfterCall)
            .flat_map(|c| &c.changed)
            .collect();
        set.into_iter().cloned().collect()
    }

    /// The checkpoint taken before its first change, when it has one.
    pub fn before(&self) -> Option<&str> {
        self.checkpoints
            .first()
            .filter(|c| c.moment == Moment::BeforeTurn)
            .map(|c| c.id.as_str())
    }
}

/// A restore to carry out: put back what changed between `to` and `latest` as `to` has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestorePoint {
    /// Undo or redo.
    pub kind: RestoreKind,
    /// The checkpoint to go back to.
    pub to: String,
    /// The agent's latest snapshot: a path that differs from it now was changed by someone
    /// else, and is kept unless forced.
    pub latest: String,
    /// The turns it takes back or brings back.
    pub turns: Vec<u64>,
}

/// Why there is nothing to restore.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimelineError {
    /// No turn of the session changed files (or all of them are undone already).
    #[error("nothing to undo: no turn of this session changed files that are not undone yet")]
    NothingToUndo,
    /// No undo to take back (none was made, or a later turn changed files since).
    #[error("nothing to redo: no undo since the last change the agent made")]
    NothingToRedo,
    /// The turn has no checkpoint from before its changes (it failed), so it cannot be undone.
    #[error(
        "turn {turn} has no checkpoint from before its changes (it could not be taken), so it cannot be undone"
    )]
    NoBefore {
        /// The turn.
        turn: u64,
    },
    /// No turn has this number.
    #[error("there is no turn {turn}; this session has turns 1 to {last} (see `hrns checkpoints`)")]
    NoSuchTurn {
        /// The number asked for.
        turn: u64,
        /// The last turn's number.
        last: u64,
    },
}

/// The turns of a session with their checkpoints, restores and rewinds (see the module).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Timeline {
    turns: Vec<TurnRecord>,
    /// The snapshot the workspace is expected to match: the last checkpoint, or where the last
    /// restore put it.
    expected: Option<String>,
    /// The undos that a redo can take back, last on top.
    undos: Vec<Restore>,
}

impl Timeline {
    /// An empty timeline.
    pub fn new() -> Timeline {
        Timeline::default()
    }

    /// A turn started with the user's `message`.
    pub fn turn_started(&mut self, message: String) {
        self.turns.push(TurnRecord {
            number: self.turns.len() as u64 + 1,
            message,
            checkpoints: Vec::new(),
            failed: Vec::new(),
            code: Code::Kept,
            conversation: Conversation::Kept,
        });
    }

    /// A checkpoint was taken in the current turn. The agent went on after the undos before
    /// it, which are then final: a redo no longer applies.
    pub fn checkpoint(&mut self, taken: Taken) {
        self.undos.clear();
        self.expected = Some(taken.id.clone());
        if let Some(turn) = self.turns.last_mut() {
            turn.checkpoints.push(taken);
        }
    }

    /// A checkpoint of the current turn failed.
    pub fn checkpoint_failed(&mut self, reason: String) {
        if let Some(turn) = self.turns.last_mut() {
            turn.failed.push(reason);
        }
    }

    /// An undo or redo was carried out.
    pub fn restored(&mut self, restore: &Restore) {
        let code = match restore.kind {
            RestoreKind::Undo => Code::Undone,
            RestoreKind::Redo => Code::Kept,
        };
        for turn in &mut self.turns {
            if restore.turns.contains(&turn.number) {
                turn.code = code;
            }
        }
        match restore.kind {
            RestoreKind::Undo => self.undos.push(restore.clone()),
            RestoreKind::Redo => {
                self.undos.pop();
            }
        }
        self.expected = Some(restore.to.clone());
    }

    /// The conversation was rewound to just before `turn`.
    pub fn rewound(&mut self, turn: u64) {
        for t in &mut self.turns {
            if t.number >= turn {
                t.conversation = Conversation::Rewound;
            }
        }
    }

    /// The turns, in order.
    pub fn turns(&self) -> &[TurnRecord] {
        &self.turns
    }

    /// The restore that takes back the file changes of the last `count` turns that changed
    /// files and are not undone yet (at least one).
    pub fn undo(&self, count: usize) -> Result<RestorePoint, TimelineError> {
        let latest = self.expected.clone().ok_or(TimelineError::NothingToUndo)?;
        let chosen: Vec<&TurnRecord> = self
            .turns
            .iter()
            .rev()
            .filter(|t| t.code == Code::Kept && !t.changed().is_empty())
            .take(count.max(1))
            .collect();
        let earliest = chosen.last().ok_or(TimelineError::NothingToUndo)?;
        self.point(RestoreKind::Undo, earliest, &chosen, latest)
    }

    /// The restore that takes back the last undo, when no change came after it.
    pub fn redo(&self) -> Result<RestorePoint, TimelineError> {
        let undo = self.undos.last().ok_or(TimelineError::NothingToRedo)?;
        let latest = self.expected.clone().ok_or(TimelineError::NothingToRedo)?;
        Ok(RestorePoint {
            kind: RestoreKind::Redo,
            to: undo.before.clone(),
            latest,
            turns: undo.turns.clone(),
        })
    }

    /// The restore that takes back the file changes of `turn` and every later turn; `None`
    /// when none of them changed files that are not undone yet.
    pub fn rewind_code(&self, turn: u64) -> Result<Option<RestorePoint>, TimelineError> {
        self.check_turn(turn)?;
        let chosen: Vec<&TurnRecord> = self
            .turns
            .iter()
            .rev()
            .filter(|t| t.number >= turn && t.code == Code::Kept && !t.changed().is_empty())
            .collect();
        let (Some(earliest), Some(latest)) = (chosen.last(), self.expected.clone()) else {
            return Ok(None);
        };
        self.point(RestoreKind::Undo, earliest, &chosen, latest)
            .map(Some)
    }

    /// Fails unless `turn` is one of the session's turns.
    pub fn check_turn(&self, turn: u64) -> Result<(), TimelineError> {
        let last = self.turns.len() as u64;
        if turn == 0 || turn > last {
            return Err(TimelineError::NoSuchTurn { turn, last });
        }
        Ok(())
    }

    fn point(
        &self,
        kind: RestoreKind,
        earliest: &TurnRecord,
        chosen: &[&TurnRecord],
        latest: String,
    ) -> Result<RestorePoint, TimelineError> {
        let to = earliest.before().ok_or(TimelineError::NoBefore {
            turn: earliest.number,
        })?;
        let mut turns: Vec<u64> = chosen.iter().map(|t| t.number).collect();
        turns.sort_unstable();
        Ok(RestorePoint {
            kind,
            to: to.to_owned(),
            latest,
            turns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(id: &str, moment: Moment, changed: &[&str]) -> Taken {
        Taken {
            id: id.into(),
            step: 1,
            moment,
            changed: changed.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    /// Three turns: 1 changes a, 2 reads only, 3 changes b and c.
    fn three_turns() -> Timeline {
        let mut t = Timeline::new();
        t.turn_started("one".into());
        t.checkpoint(taken("c1", Moment::BeforeTurn, &[]));
        t.checkpoint(taken("c2", Moment::AfterCall, &["a"]));
        t.turn_started("two".into());
        t.turn_started("three".into());
        t.checkpoint(taken("c3", Moment::BeforeTurn, &["user.txt"]));
        t.checkpoint(taken("c4", Moment::AfterCall, &["b"]));
        t.checkpoint(taken("c5", Moment::AfterCall, &["c", "b"]));
        t
    }

    fn undo(point: &RestorePoint, before: &str) -> Restore {
        Restore {
            kind: point.kind,
            to: point.to.clone(),
            latest: point.latest.clone(),
            before: before.into(),
            turns: point.turns.clone(),
            restored: Vec::new(),
            kept: Vec::new(),
        }
    }

    #[test]
    fn undo_goes_back_to_the_last_changing_turns_before_from_the_latest_snapshot() {
        let t = three_turns();
        assert_eq!(
            t.turns()[2].changed(),
            ["b", "c"],
            "a user's edit is not the turn's"
        );
        let point = t.undo(1).unwrap();
        assert_eq!(
            point,
            RestorePoint {
                kind: RestoreKind::Undo,
                to: "c3".into(),
                latest: "c5".into(),
                turns: vec![3]
            }
        );
        // Turn 2 changed nothing: two turns back is turn 1's before.
        let two = t.undo(2).unwrap();
        assert_eq!((two.to.as_str(), two.turns), ("c1", vec![1, 3]));
        assert_eq!(t.undo(9).unwrap().to, "c1");
    }

    #[test]
    fn a_second_undo_goes_further_back_and_redo_takes_undos_back_in_turn() {
        let mut t = three_turns();
        let first = t.undo(1).unwrap();
        t.restored(&undo(&first, "r1"));
        assert_eq!(t.turns()[2].code, Code::Undone);
        let second = t.undo(1).unwrap();
        assert_eq!((second.to.as_str(), second.latest.as_str()), ("c1", "c3"));
        t.restored(&undo(&second, "r2"));
        assert_eq!(t.undo(1), Err(TimelineError::NothingToUndo));
        let redo = t.redo().unwrap();
        assert_eq!((redo.to.as_str(), redo.latest.as_str()), ("r2", "c1"));
        assert_eq!(redo.turns, vec![1]);
        t.restored(&Restore {
            kind: RestoreKind::Redo,
            ..undo(&redo, "r3")
        });
        assert_eq!(t.turns()[0].code, Code::Kept);
        assert_eq!(t.redo().unwrap().to, "r1", "then the first undo");
    }

    #[test]
    fn new_changes_after_an_undo_leave_nothing_to_redo() {
        let mut t = three_turns();
        let first = t.undo(1).unwrap();
        t.restored(&undo(&first, "r1"));
        t.turn_started("four".into());
        t.checkpoint(taken("c6", Moment::BeforeTurn, &["b", "c"]));
        t.checkpoint(taken("c7", Moment::AfterCall, &["d"]));
        assert_eq!(t.redo(), Err(TimelineError::NothingToRedo));
        let point = t.undo(1).unwrap();
        assert_eq!((point.to.as_str(), point.turns), ("c6", vec![4]));
    }

    #[test]
    fn a_turn_without_its_before_checkpoint_cannot_be_undone() {
        let mut t = Timeline::new();
        t.turn_started("one".into());
        t.checkpoint_failed("timed out".into());
        t.checkpoint(taken("c1", Moment::AfterCall, &["a"]));
        assert_eq!(t.undo(1), Err(TimelineError::NoBefore { turn: 1 }));
        assert_eq!(Timeline::new().undo(1), Err(TimelineError::NothingToUndo));
        assert_eq!(Timeline::new().redo(), Err(TimelineError::NothingToRedo));
    }

    #[test]
    fn rewind_takes_back_the_turn_and_every_later_one() {
        let mut t = three_turns();
        let point = t.rewind_code(1).unwrap().unwrap();
        assert_eq!((point.to.as_str(), point.turns), ("c1", vec![1, 3]));
        assert_eq!(t.rewind_code(2).unwrap().unwrap().to, "c3");
        assert_eq!(
            t.rewind_code(4),
            Err(TimelineError::NoSuchTurn { turn: 4, last: 3 })
        );
        assert_eq!(
            t.rewind_code(0),
            Err(TimelineError::NoSuchTurn { turn: 0, last: 3 })
        );
        t.rewound(2);
        assert_eq!(t.turns()[0].conversation, Conversation::Kept);
        assert_eq!(t.turns()[1].conversation, Conversation::Rewound);
        let first = t.rewind_code(2).unwrap().unwrap();
        t.restored(&undo(&first, "r1"));
        assert_eq!(t.rewind_code(2), Ok(None), "nothing left to take back");
    }
}
