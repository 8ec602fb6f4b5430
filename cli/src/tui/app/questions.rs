//! The order of approval questions on screen: the session's own, and those of subagents
//! (children of `task` calls), which wait in a queue while another question is shown.
//!
//! One question is on screen at a time. The session asks one at a time too, and its next
//! question may be queued by the very answer just given, so a subagent's question waits
//! until the session has none pending; and a subagent's question on screen when the session
//! asks goes back to the front of the queue with its reply channel, since a dropped reply
//! denies the child's call without the user being asked.

use super::{Asker, Asking, ChildAsk};
use std::collections::VecDeque;

/// The session asks `ask`: it is shown at once. A subagent's question shown meanwhile goes
/// back to the front of `waiting`, to be asked again after it.
pub(super) fn show_sessions(
    asking: &mut Option<Asking>,
    waiting: &mut VecDeque<ChildAsk>,
    ask: Asking,
) {
    if let Some(Asking {
        run,
        from: Asker::Child { agent, reply },
        ..
    }) = asking.replace(ask)
    {
        waiting.push_front(ChildAsk { agent, run, reply });
    }
}

/// Shows the next subagent's question from `waiting` when no question is on screen and the
/// session has none pending (`session_asks`). Questions whose child no longer listens are
/// dropped, and all of them when no turn runs (`busy` false). Returns whether one is shown.
pub(super) fn show_next_child(
    asking: &mut Option<Asking>,
    waiting: &mut VecDeque<ChildAsk>,
    session_asks: bool,
    busy: bool,
) -> bool {
    if asking.is_some() || session_asks {
        return false;
    }
    while let Some(ask) = waiting.pop_front() {
        if !busy || ask.reply.is_closed() {
            continue;
        }
        *asking = Some(Asking {
            run: ask.run,
            // Only the parent's commands may leave the sandbox.
            unsandboxed: crate::sandbox::escalate::Unsandboxed::NotOffered,
            reason: false,
            from: Asker::Child {
                agent: ask.agent,
                reply: ask.reply,
            },
        });
        return true;
    }
    false
}

#[cfg(test)]
#[path = "questions_tests.rs"]
mod tests;
