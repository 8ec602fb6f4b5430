//! The order of approval questions on screen: the session's own, and those of subagents
//! (children of `task` calls), which wait in a queue while another question is shown. Both
//! come out of the session's poll and are answered on one path
//! ([`hrns_tokio::Runner::handle_answer`]).
//!
//! One question is on screen at a time. The session asks one at a time too, and its next
//! question may be queued by the very answer just given, so a subagent's question waits
//! until the session has none pending; and a subagent's question on screen when the session
//! asks goes back to the front of the queue, to be asked again after it.

use super::Asking;
use hrns_core::session::{ChildQuestion, Question};
use std::collections::VecDeque;

/// The session asks `ask`: it is shown at once. A subagent's question shown meanwhile goes
/// back to the front of `waiting`, to be asked again after it.
pub(super) fn show_sessions(
    asking: &mut Option<Asking>,
    waiting: &mut VecDeque<ChildQuestion>,
    ask: Asking,
) {
    if let Some(Asking {
        question: Question::Child(q),
        ..
    }) = asking.replace(ask)
    {
        waiting.push_front(q);
    }
}

/// Shows the next subagent's question from `waiting` when no question is on screen and the
/// session has none pending (`session_asks`). Questions the session no longer waits for
/// (not in `pending`: their task stopped, or the turn ended, and the session denied them)
/// are dropped. Returns whether one is shown.
pub(super) fn show_next_child(
    asking: &mut Option<Asking>,
    waiting: &mut VecDeque<ChildQuestion>,
    session_asks: bool,
    pending: &[ChildQuestion],
) -> bool {
    if asking.is_some() || session_asks {
        return false;
    }
    while let Some(q) = waiting.pop_front() {
        if !pending.contains(&q) {
            continue;
        }
        *asking = Some(Asking {
            question: Question::Child(q),
            // Only the parent's commands may leave the sandbox.
            unsandboxed: crate::sandbox::escalate::Unsandboxed::NotOffered,
            reason: false,
        });
        return true;
    }
    false
}

#[cfg(test)]
#[path = "questions_tests.rs"]
mod tests;
