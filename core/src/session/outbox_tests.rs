//! The outbox gives what was queued in the order it was queued, whether it is taken one at a
//! time (`poll`), all at once (`poll_into`) or both mixed; and a final event keeps the
//! session busy until it is taken either way.

use super::Action;
use super::event::{Event, TurnError};
use super::outbox::Outbox;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// Queue an event: a delta, or a final one.
    Emit { final_event: bool },
    /// Queue another action.
    Push,
    /// Take one thing.
    Pop,
    /// Take everything, into lists that may already hold something.
    TakeInto { prefilled: bool },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<bool>().prop_map(|f| Op::Emit { final_event: f }),
        2 => Just(Op::Push),
        3 => Just(Op::Pop),
        1 => any::<bool>().prop_map(|p| Op::TakeInto { prefilled: p }),
    ]
}

/// What an item is, for comparing orders: an event's or an action's sequence number.
fn label(action: &Action) -> String {
    match action {
        Action::Emit(Event::TextDelta { text }) => text.to_string(),
        Action::Emit(Event::TurnFailed {
            error: TurnError::CompactionFailed { reason },
        }) => reason.clone(),
        Action::AbortTool { call_id } => call_id.clone(),
        other => panic!("not queued by this test: {other:?}"),
    }
}

proptest! {
    #[test]
    fn every_way_of_taking_keeps_the_order(ops in proptest::collection::vec(op(), 0..60)) {
        let mut outbox = Outbox::default();
        // The queue as one list, and what was taken.
        let mut queued: Vec<String> = Vec::new();
        let mut taken: Vec<String> = Vec::new();
        let mut finals_out = 0usize;
        let mut finals_in = 0usize;
        for (n, op) in ops.into_iter().enumerate() {
            match op {
                Op::Emit { final_event } => {
                    let name = format!("e{n}");
                    queued.push(name.clone());
                    if final_event {
                        finals_in += 1;
                        outbox.emit(Event::TurnFailed {
                            error: TurnError::CompactionFailed { reason: name },
                        });
                    } else {
                        outbox.emit(Event::TextDelta { text: name.into() });
                    }
                }
                Op::Push => {
                    let name = format!("a{n}");
                    queued.push(name.clone());
                    outbox.push(Action::AbortTool { call_id: name });
                }
                Op::Pop => {
                    if let Some(action) = outbox.pop() {
                        if matches!(&action, Action::Emit(e) if e.is_final()) {
                            finals_out += 1;
                        }
                        taken.push(label(&action));
                    }
                }
                Op::TakeInto { prefilled } => {
                    let old = Event::TextDelta { text: "old".into() };
                    let mut events = if prefilled { vec![old.clone()] } else { Vec::new() };
                    let mut actions = Vec::new();
                    outbox.take_into(&mut events, &mut actions);
                    if prefilled {
                        prop_assert_eq!(&events[0], &old);
                        events.remove(0);
                    }
                    finals_out += events.iter().filter(|e| e.is_final()).count();
                    // Events and actions keep their own orders; the batch as a whole comes
                    // next in the queue.
                    let start = taken.len();
                    let batch: Vec<String> = queued[start..].to_vec();
                    let got_events: Vec<String> =
                        events.into_iter().map(|e| label(&Action::Emit(e))).collect();
                    let got_actions: Vec<String> = actions.iter().map(label).collect();
                    let want_events: Vec<String> =
                        batch.iter().filter(|l| l.starts_with('e')).cloned().collect();
                    let want_actions: Vec<String> =
                        batch.iter().filter(|l| l.starts_with('a')).cloned().collect();
                    prop_assert_eq!(got_events, want_events);
                    prop_assert_eq!(got_actions, want_actions);
                    taken.extend(batch);
                }
            }
            prop_assert_eq!(&taken[..], &queued[..taken.len()], "taken in order");
            prop_assert_eq!(outbox.has_final(), finals_in > finals_out);
        }
        while let Some(action) = outbox.pop() {
            taken.push(label(&action));
        }
        prop_assert_eq!(taken, queued);
        prop_assert!(!outbox.has_final());
    }
}
