//! The checkpoints of a turn: when one is due, waiting for it, and what it becomes in the
//! record. The calls (`calls.rs`) ask here before a call that may change files starts and
//! after it finished; while a checkpoint is awaited, no call starts and no request goes out.

use super::event::Event;
use super::shared::Shared;
use super::{Action, ToolRun};
use crate::checkpoint::{CheckpointDue, CheckpointOutcome, Checkpoints, Moment, changes_files};

/// Where the running turn stands with its checkpoints.
#[derive(Debug, Default)]
pub(super) struct CheckpointState {
    /// The id the next request gets.
    next_id: u64,
    /// The checkpoint asked for and not handed back yet.
    pending: Option<CheckpointDue>,
    /// Whether the turn has its "before" checkpoint (or tried to take it).
    before_taken: bool,
    /// The model request whose calls run now.
    pub(super) step: u32,
}

impl CheckpointState {
    pub(super) fn turn_started(&mut self) {
        self.pending = None;
        self.before_taken = false;
        self.step = 1;
    }

    /// Whether the session waits for a checkpoint: nothing else may happen until it comes.
    pub(super) fn awaited(&self) -> bool {
        self.pending.is_some()
    }

    /// Forgets a checkpoint asked for (the turn was cancelled): a late outcome is ignored.
    pub(super) fn abandon(&mut self) {
        self.pending = None;
    }
}

/// Before `run` starts: asks for the turn's "before" checkpoint when `run` may change files
/// and the turn has none yet. Returns whether the call must wait for it.
pub(super) fn before_call(s: &mut Shared, run: &ToolRun) -> bool {
    if s.checkpoint.pending.is_some() {
        return true;
    }
    let due = s.config.checkpoints == Checkpoints::On
        && changes_files(run.effect)
        && !s.checkpoint.before_taken;
    if due {
        ask(s, Moment::BeforeTurn);
    }
    due
}

/// After a call with `effect` finished: asks for the checkpoint of what it changed.
pub(super) fn after_call(s: &mut Shared, effect: crate::tool::Effect) {
    if s.config.checkpoints == Checkpoints::On && changes_files(effect) {
        ask(s, Moment::AfterCall);
    }
}

fn ask(s: &mut Shared, moment: Moment) {
    let due = CheckpointDue {
        id: s.checkpoint.next_id,
        turn: s.turns,
        step: s.checkpoint.step,
        moment,
    };
    s.checkpoint.next_id += 1;
    s.checkpoint.pending = Some(due.clone());
    s.outbox.push(Action::TakeCheckpoint(due));
}

/// Takes the outcome of checkpoint `id`; returns whether it was the one awaited.
pub(super) fn handed_back(s: &mut Shared, id: u64, outcome: CheckpointOutcome) -> bool {
    let Some(due) = s.checkpoint.pending.take_if(|d| d.id == id) else {
        return false;
    };
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
    true
}
