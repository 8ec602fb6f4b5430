//! Checks and repairs of a conversation history, so that what is sent is always a valid chat
//! request: every assistant tool call answered by exactly one tool message, no tool message
//! without its call.

use crate::wire::{Message, Role, ToolCall};
use std::collections::HashSet;

/// The text of the tool result put in for a call that never got one.
pub const MISSING_RESULT: &str = "[no result: the turn ended before this tool call finished]";

/// Why a history is not a valid request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// A tool message answers no call of the assistant message before it.
    #[error("message {index}: tool result for unknown call `{call_id}`")]
    OrphanToolResult {
        /// Position of the tool message.
        index: usize,
        /// The call id it quotes.
        call_id: String,
    },
    /// An assistant tool call has no result before the next non-tool message.
    #[error("message {index}: tool call `{call_id}` has no result")]
    UnansweredCall {
        /// Position of the assistant message.
        index: usize,
        /// The call id.
        call_id: String,
    },
    /// Two calls of one assistant message share an id, or a call is answered twice.
    #[error("message {index}: call id `{call_id}` appears twice")]
    DuplicateCallId {
        /// Position of the offending message.
        index: usize,
        /// The call id.
        call_id: String,
    },
    /// A system message after the start of the conversation.
    #[error("message {index}: system message after the conversation started")]
    MisplacedSystem {
        /// Position of the system message.
        index: usize,
    },
}

/// Checks that `messages` is a valid conversation for a chat request.
pub fn validate(messages: &[Message]) -> Result<(), HistoryError> {
    let mut open: Vec<String> = Vec::new();
    let mut open_at = 0;
    let mut answered: HashSet<String> = HashSet::new();
    let mut seen_other = false;
    for (index, msg) in messages.iter().enumerate() {
        if msg.role != Role::Tool {
            if let Some(call_id) = open.iter().find(|id| !answered.contains(*id)) {
                return Err(HistoryError::UnansweredCall {
                    index: open_at,
                    call_id: call_id.clone(),
                });
            }
            open.clear();
            answered.clear();
        }
        match msg.role {
            Role::System | Role::Developer => {
                if seen_other && msg.role == Role::System {
                    return Err(HistoryError::MisplacedSystem { index });
                }
            }
            Role::Assistant => {
                seen_other = true;
                let mut ids = HashSet::new();
                for call in &msg.tool_calls {
                    if !ids.insert(call.id.as_str()) {
                        return Err(HistoryError::DuplicateCallId {
                            index,
                            call_id: call.id.clone(),
                        });
                    }
                }
                open = msg.tool_calls.iter().map(|c| c.id.clone()).collect();
                open_at = index;
            }
            Role::Tool => {
                let call_id = msg.tool_call_id.clone().unwrap_or_default();
                if !open.contains(&call_id) {
                    return Err(HistoryError::OrphanToolResult { index, call_id });
                }
                if !answered.insert(call_id.clone()) {
                    return Err(HistoryError::DuplicateCallId { index, call_id });
                }
            }
            Role::User | Role::Function => seen_other = true,
        }
    }
    if let Some(call_id) = open.iter().find(|id| !answered.contains(*id)) {
        return Err(HistoryError::UnansweredCall {
            index: open_at,
            call_id: call_id.clone(),
        });
    }
    Ok(())
}

/// The one renaming rule for tool call ids within one answer (used by the accumulator, the
/// session and [`repair`]): the call at position `n` (from 0) whose id is empty or was already
/// taken by an earlier call becomes `{id}_{n}` (`call_{n}` when empty), with more `_n` suffixes
/// while that is taken too. The first call with an id keeps it. Returns how many were renamed.
///
/// Without this, two results would answer the same id and the provider would reject the
/// history.
pub fn unique_call_ids(calls: &mut [ToolCall]) -> usize {
    let mut taken: HashSet<String> = HashSet::with_capacity(calls.len());
    let mut renamed = 0;
    for (n, call) in calls.iter_mut().enumerate() {
        if !call.id.is_empty() && taken.insert(call.id.clone()) {
            continue;
        }
        let mut id = if call.id.is_empty() {
            format!("call_{n}")
        } else {
            format!("{}_{n}", call.id)
        };
        while taken.contains(&id) {
            id = format!("{id}_{n}");
        }
        taken.insert(id.clone());
        call.id = id;
        renamed += 1;
    }
    renamed
}

/// Makes `messages` valid the way cancellation does: a call without a result gets
/// [`MISSING_RESULT`], a tool message that answers nothing (or answers a call twice) is
/// dropped, and duplicate call ids within one assistant message are renamed. Returns how many
/// changes were made.
pub fn repair(messages: &mut Vec<Message>) -> usize {
    let mut changes = 0;
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut open: Vec<String> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    let close = |out: &mut Vec<Message>,
                 open: &mut Vec<String>,
                 answered: &mut HashSet<String>,
                 changes: &mut usize| {
        for id in open.drain(..) {
            if !answered.contains(&id) {
                out.push(Message::tool(id, MISSING_RESULT));
                *changes += 1;
            }
        }
        answered.clear();
    };
    for mut msg in messages.drain(..) {
        if msg.role == Role::Tool {
            let id = msg.tool_call_id.clone().unwrap_or_default();
            if open.contains(&id) && answered.insert(id) {
                out.push(msg);
            } else {
                changes += 1;
            }
            continue;
        }
        close(&mut out, &mut open, &mut answered, &mut changes);
        if msg.role == Role::Assistant {
            changes += unique_call_ids(&mut msg.tool_calls);
            open = msg.tool_calls.iter().map(|c| c.id.clone()).collect();
        }
        out.push(msg);
    }
    close(&mut out, &mut open, &mut answered, &mut changes);
    *messages = out;
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{FunctionCall, ToolCall};

    fn calls(ids: &[&str]) -> Message {
        let mut m = Message::assistant("");
        m.content = None;
        m.tool_calls = ids
            .iter()
            .map(|id| ToolCall {
                id: (*id).into(),
                kind: "function".into(),
                function: FunctionCall {
                    name: "f".into(),
                    arguments: "{}".into(),
                    extra: Default::default(),
                },
                extra: Default::default(),
            })
            .collect();
        m
    }

    #[test]
    fn call_ids_are_made_unique_by_one_rule() {
        let mut m = calls(&["a", "a", "", "a_1", "b"]);
        assert_eq!(unique_call_ids(&mut m.tool_calls), 3);
        let ids: Vec<&str> = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a", "a_1", "call_2", "a_1_3", "b"]);
        assert_eq!(unique_call_ids(&mut m.tool_calls), 0, "idempotent");
        let mut h = vec![Message::user("u"), calls(&["a", "a"])];
        repair(&mut h);
        let ids: Vec<&str> = h[1].tool_calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a", "a_1"], "repair uses the same rule");
    }

    #[test]
    fn valid_histories() {
        let h = vec![
            Message::system("s"),
            Message::user("u"),
            calls(&["a", "b"]),
            Message::tool("b", "1"),
            Message::tool("a", "2"),
            Message::assistant("done"),
            Message::user("again"),
        ];
        assert_eq!(validate(&h), Ok(()));
        assert_eq!(validate(&[]), Ok(()));
    }

    #[test]
    fn invalid_histories_are_named_and_repaired() {
        let cases: Vec<(Vec<Message>, HistoryError)> = vec![
            (
                vec![Message::user("u"), calls(&["a"]), Message::user("x")],
                HistoryError::UnansweredCall {
                    index: 1,
                    call_id: "a".into(),
                },
            ),
            (
                vec![Message::user("u"), calls(&["a"])],
                HistoryError::UnansweredCall {
                    index: 1,
                    call_id: "a".into(),
                },
            ),
            (
                vec![Message::user("u"), Message::tool("z", "r")],
                HistoryError::OrphanToolResult {
                    index: 1,
                    call_id: "z".into(),
                },
            ),
            (
                vec![
                    Message::user("u"),
                    calls(&["a"]),
                    Message::tool("a", "1"),
                    Message::tool("a", "2"),
                ],
                HistoryError::DuplicateCallId {
                    index: 3,
                    call_id: "a".into(),
                },
            ),
            (
                vec![
                    Message::user("u"),
                    calls(&["a", "a"]),
                    Message::tool("a", "1"),
                ],
                HistoryError::DuplicateCallId {
                    index: 1,
                    call_id: "a".into(),
                },
            ),
            (
                vec![Message::user("u"), Message::system("late")],
                HistoryError::MisplacedSystem { index: 1 },
            ),
        ];
        for (mut history, expected) in cases {
            assert_eq!(validate(&history), Err(expected.clone()));
            if matches!(expected, HistoryError::MisplacedSystem { .. }) {
                continue;
            }
            assert!(repair(&mut history) > 0);
            assert_eq!(validate(&history), Ok(()), "{history:?}");
        }
    }

    #[test]
    fn repair_keeps_valid_history_unchanged() {
        let mut h = vec![
            Message::user("u"),
            calls(&["a"]),
            Message::tool("a", "1"),
            Message::assistant("ok"),
        ];
        let before = h.clone();
        assert_eq!(repair(&mut h), 0);
        assert_eq!(h, before);
    }

    #[test]
    fn repair_inserts_missing_results_after_existing_ones() {
        let mut h = vec![
            Message::user("u"),
            calls(&["a", "b"]),
            Message::tool("a", "1"),
            Message::user("next"),
        ];
        repair(&mut h);
        assert_eq!(h[3].tool_call_id.as_deref(), Some("b"));
        assert_eq!(h[3].text(), MISSING_RESULT);
        assert_eq!(h[4].role, Role::User);
    }
}
