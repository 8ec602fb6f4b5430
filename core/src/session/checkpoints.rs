//! The checkpoints of a turn: when one is due and what it becomes in the record. The wait
//! itself belongs to the call it is about (`calls.rs`): a call that may change files waits in
//! [`CallState::Checkpoint`](super::calls::CallState) for the snapshot of the state before
//! it, and a finished one holds back the calls after it and the next request until the
//! snapshot of what it changed is handed back. There is no session-wide wait.

use super::Action;
use super::event::Event;
use super::shared::Shared;
use crate::checkpoint::{CheckpointDue, CheckpointOutcome, Checkpoints, Moment, changes_files};
use crate::tool::Effect;

/// The turn's checkpoint bookkeeping; the checkpoints awaited are kept by their calls.
#[derive(Debug, Default)]
pub(super) struct CheckpointState {
    /// The id the next request gets.
    next_id: u64,
    /// Whether the turn has its "before" checkpoint (or tried to take it).
    before_taken: bool,
    /// The model request whose calls run now.
    pub(super) step: u32,
}

impl CheckpointState {
    pub(super) fn turn_started(&mut self) {
        self.before_taken = false;
        self.step = 1;
    }
}

/// Before a call with `effect` starts: asks for the turn's "before" checkpoint when the call
/// may change files and the turn has none yet. The call waits for what this returns.
pub(super) fn before_call(s: &mut Shared, effect: Effect) -> Option<CheckpointDue> {
    let due = s.config.checkpoints == Checkpoints::On
        && changes_files(effect)
        && !s.checkpoint.before_taken;
    due.then(|| ask(s, Moment::BeforeTurn))
}

/// After a call with `effect` finished: asks for the checkpoint of what it changed. The
/// calls after it and the next request wait for what this returns.
pub(super) fn after_call(s: &mut Shared, effect: Effect) -> Option<CheckpointDue> {
    (s.config.checkpoints == Checkpoints::On && changes_files(effect))
        .then(|| ask(s, Moment::AfterCall))
}

fn ask(s: &mut Shared, moment: Moment) -> CheckpointDue {
    let due = CheckpointDue {
        id: s.checkpoint.next_id,
        turn: s.turns,
        step: s.checkpoint.step,
        moment,
    };
    s.checkpoint.next_id += 1;
    s.outbox.push(Action::TakeCheckpoint(due.clone()));
    due
}

/// Records the outcome of `due`, which a call waited for: an [`Event::Checkpoint`], or the
/// warning [`Event::CheckpointFailed`] (the call goes on without it).
pub(super) fn handed_back(s: &mut Shared, due: CheckpointDue, outcome: CheckpointOutcome) {
    if due.moment == Moment::BeforeTurn {
        s.checkpoint.before_taken = true;
    }
    let event = match outcome {
        CheckpointOutcome::Taken {
            id,
            changed,
            skipped,
        } => Event::Checkpoint {
            id,
            turn: due.turn,
            step: due.step,
            moment: due.moment,
            changed,
            skipped,
        },
        CheckpointOutcome::Failed { reason } => Event::CheckpointFailed {
            turn: due.turn,
            step: due.step,
            moment: due.moment,
            reason: s.redact(reason),
        },
    };
    s.emit(event);
}
