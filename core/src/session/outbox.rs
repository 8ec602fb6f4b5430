//! What the session has decided and its driver has not taken yet: events and the other
//! actions, in the order they were decided.
//!
//! Events are kept apart from the other actions because a fast stream queues hundreds of them
//! per read (one per delta) and an [`Event`] is large: [`Outbox::take_into`] hands the whole
//! lot over at once, in the best case by swapping buffers, instead of moving each event
//! through [`Session::poll`](super::Session::poll) and into the driver's list one at a time.
//! Each action remembers how many events came before it, so that `poll` still gives
//! everything in the order it was decided.

use super::Action;
use super::event::Event;
use std::collections::VecDeque;

#[derive(Debug, Default)]
pub(super) struct Outbox {
    events: VecDeque<Event>,
    /// The other actions, each with the number of events queued before it (ever).
    actions: VecDeque<(u64, Action)>,
    /// Events ever queued, and ever taken.
    queued: u64,
    taken: u64,
    /// Final events queued and not taken: the session is not idle before its owner saw how
    /// the turn ended (a turn can end inside `submit`).
    finals: usize,
}

impl Outbox {
    pub(super) fn emit(&mut self, event: Event) {
        if event.is_final() {
            self.finals += 1;
        }
        self.queued += 1;
        self.events.push_back(event);
    }

    /// Queues an action other than an event.
    pub(super) fn push(&mut self, action: Action) {
        debug_assert!(!matches!(action, Action::Emit(_)), "events go through emit");
        self.actions.push_back((self.queued, action));
    }

    /// Whether nothing waits to be taken.
    pub(super) fn is_empty(&self) -> bool {
        self.events.is_empty() && self.actions.is_empty()
    }

    /// Whether a final event waits to be taken.
    pub(super) fn has_final(&self) -> bool {
        self.finals > 0
    }

    /// The next thing decided, in order.
    pub(super) fn pop(&mut self) -> Option<Action> {
        if self
            .actions
            .front()
            .is_some_and(|(at, _)| *at <= self.taken)
        {
            return self.actions.pop_front().map(|(_, action)| action);
        }
        // Every action left comes after the next event (an action is never queued after
        // more events than there were).
        let event = self.events.pop_front()?;
        self.taken += 1;
        if self.finals > 0 && event.is_final() {
            self.finals -= 1;
        }
        Some(Action::Emit(event))
    }

    /// Everything at once: the events appended to `events`, the other actions to `actions`.
    pub(super) fn take_into(&mut self, events: &mut Vec<Event>, actions: &mut Vec<Action>) {
        actions.extend(self.actions.drain(..).map(|(_, action)| action));
        self.taken = self.queued;
        self.finals = 0;
        if self.events.is_empty() {
            return;
        }
        // A deque whose items start at the front of its buffer becomes a vector without
        // moving them; swapping with an empty `events` then moves nothing at all, and the
        // caller's old buffer is kept for the next events.
        let mut taken = Vec::from(std::mem::take(&mut self.events));
        if events.is_empty() {
            std::mem::swap(events, &mut taken);
        } else {
            events.append(&mut taken);
        }
        self.events = VecDeque::from(taken);
    }
}
