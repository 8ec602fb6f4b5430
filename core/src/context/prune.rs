//! Pruning: the outputs of old tool calls replaced by a short stub.
//!
//! Old tool outputs are the bulk of a tool-heavy history (whole files read, long test logs) and
//! the part the model needs least once it has acted on them. A pruned output keeps its tool
//! message (so every call still has its result) with a stub that names the tool, its arguments
//! and how much was cut, so the model can run the call again if it needs the output.
//!
//! The images of an old step, which travel in a `user` message after its tool messages (see
//! [`crate::session::tool_images`]), are the largest part of all: that message becomes a stub
//! too, whatever the size of the tool messages' text.

use crate::text::shorten;
use crate::wire::{Message, Role};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Tool outputs at most this long are left alone: a stub would not be much shorter.
pub const PRUNE_MIN_BYTES: usize = 1024;

/// The start of every stub, so a pruned output is not pruned again.
const STUB_PREFIX: &str = "[output pruned to save context: ";

/// Most of a call's arguments quoted in its stub.
const MAX_STUB_ARGUMENTS: usize = 200;

/// One call whose output (its text, its images or both) was replaced by a stub: each call
/// appears once in what [`prune_tool_outputs`] returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrunedOutput {
    /// The call id.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// The call's arguments, shortened.
    pub arguments: String,
    /// The size of what was cut, in bytes: the output's text and its images' `data:` URLs.
    pub bytes: usize,
}

/// Whether `text` is a stub left by [`prune_tool_outputs`].
pub fn is_pruned_stub(text: &str) -> bool {
    text.starts_with(STUB_PREFIX)
}

/// How the stub that replaces a step's image message ends.
const IMAGES_STUB_END: &str = ", cut from the history. Run the call again if you need them.]";

/// Whether `message` is the stub [`prune_tool_outputs`] left of a step's image message: still
/// a `user` message, but the tools' words, not the user's.
pub(crate) fn is_pruned_images(message: &Message) -> bool {
    matches!(
        (&message.role, &message.content),
        (Role::User, Some(crate::wire::Content::Text(text)))
            if text.starts_with(STUB_PREFIX) && text.ends_with(IMAGES_STUB_END)
    )
}

/// Replaces the outputs of tool calls made before the last `keep_steps` model steps (an
/// assistant message with tool calls is one step) by stubs, when longer than
/// [`PRUNE_MIN_BYTES`], and the messages carrying their images by one stub each. Returns what
/// was pruned, oldest first, one entry per call (a call whose text and images were both cut is
/// named once, with both sizes). Messages are never added,
/// removed or reordered, so a valid history stays valid.
pub fn prune_tool_outputs(history: &mut [Message], keep_steps: usize) -> Vec<PrunedOutput> {
    let protected_from = protected_from(history, keep_steps);
    let mut calls: HashMap<String, (String, String)> = HashMap::new();
    let mut pruned: Vec<PrunedOutput> = Vec::new();
    // Where in `pruned` the current step's calls whose text was cut are, so their images
    // join the same entry (a step's images follow its tool messages).
    let mut cut: HashMap<String, usize> = HashMap::new();
    for m in &mut history[..protected_from] {
        match m.role {
            Role::Assistant => {
                calls.clear();
                cut.clear();
                for c in &m.tool_calls {
                    calls.insert(
                        c.id.clone(),
                        (c.function.name.clone(), c.function.arguments.clone()),
                    );
                }
            }
            Role::Tool => {
                let text = m.text();
                if text.len() <= PRUNE_MIN_BYTES || is_pruned_stub(&text) {
                    continue;
                }
                let id = m.tool_call_id.clone().unwrap_or_default();
                let (tool, arguments) = calls.get(&id).cloned().unwrap_or_default();
                let arguments = shorten(arguments.trim(), MAX_STUB_ARGUMENTS).into_owned();
                m.content = Some(crate::wire::Content::Text(format!(
                    "{STUB_PREFIX}`{tool}` {arguments} returned {} bytes, cut from the history. Run the call again if you need its output.]",
                    text.len()
                )));
                cut.insert(id.clone(), pruned.len());
                pruned.push(PrunedOutput {
                    call_id: id,
                    tool,
                    arguments,
                    bytes: text.len(),
                });
            }
            Role::User => {
                let Some(images) = crate::session::tool_images(m) else {
                    continue;
                };
                let mut stub = String::from(STUB_PREFIX);
                for (n, call) in images.into_iter().enumerate() {
                    let (tool, arguments) = calls.get(&call.call_id).cloned().unwrap_or_default();
                    let arguments = shorten(arguments.trim(), MAX_STUB_ARGUMENTS).into_owned();
                    if n > 0 {
                        stub.push_str("; ");
                    }
                    let images = if call.count == 1 { "image" } else { "images" };
                    stub.push_str(&format!(
                        "{} {images} returned by `{tool}` {arguments}",
                        call.count
                    ));
                    match cut.get(&call.call_id) {
                        Some(&at) => pruned[at].bytes += call.bytes,
                        None => pruned.push(PrunedOutput {
                            call_id: call.call_id,
                            tool,
                            arguments,
                            bytes: call.bytes,
                        }),
                    }
                }
                stub.push_str(IMAGES_STUB_END);
                m.content = Some(crate::wire::Content::Text(stub));
            }
            Role::System | Role::Developer | Role::Function => {}
        }
    }
    pruned
}

/// Where the last `keep_steps` steps of `history` begin, which [`prune_tool_outputs`] leaves
/// alone: the index of their first assistant message, `history.len()` when `keep_steps` is 0,
/// and 0 when there are not that many steps.
pub(crate) fn protected_from(history: &[Message], keep_steps: usize) -> usize {
    if keep_steps == 0 {
        return history.len();
    }
    history
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, m)| is_step(m))
        .nth(keep_steps - 1)
        .map_or(0, |(i, _)| i)
}

/// Whether `m` begins a step: an assistant message with tool calls.
pub(crate) fn is_step(m: &Message) -> bool {
    m.role == Role::Assistant && !m.tool_calls.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history;
    use crate::wire::{FunctionCall, ToolCall};
    use proptest::prelude::*;

    pub(crate) fn step(id: &str, name: &str, args: &str) -> Message {
        let mut m = Message::assistant("");
        m.content = None;
        m.tool_calls = vec![ToolCall {
            id: id.into(),
            kind: "function".into(),
            function: FunctionCall {
                name: name.into(),
                arguments: args.into(),
                extra: Default::default(),
            },
            extra: Default::default(),
        }];
        m
    }

    fn big(n: usize) -> String {
        "x".repeat(n)
    }

    #[test]
    fn old_large_outputs_become_stubs_naming_the_call() {
        let mut h = vec![
            Message::user("task"),
            step("a", "read_file", r#"{"path":"big.rs"}"#),
            Message::tool("a", big(5000)),
            step("b", "read_file", r#"{"path":"small.rs"}"#),
            Message::tool("b", "short"),
            step("c", "run_command", r#"{"command":"cargo test"}"#),
            Message::tool("c", big(9000)),
            step("d", "grep", "{}"),
            Message::tool("d", big(3000)),
        ];
        let before = h.clone();
        let pruned = prune_tool_outputs(&mut h, 2);
        assert_eq!(
            pruned,
            vec![PrunedOutput {
                call_id: "a".into(),
                tool: "read_file".into(),
                arguments: r#"{"path":"big.rs"}"#.into(),
                bytes: 5000,
            }]
        );
        assert_eq!(
            h[2].text(),
            "[output pruned to save context: `read_file` {\"path\":\"big.rs\"} returned 5000 bytes, cut from the history. Run the call again if you need its output.]"
        );
        assert!(is_pruned_stub(&h[2].text()));
        assert_eq!(h[4..], before[4..], "small and recent outputs are kept");
        // pruning again changes nothing
        assert!(prune_tool_outputs(&mut h, 2).is_empty());
        // keep nothing: everything large goes
        let mut all = before.clone();
        assert_eq!(prune_tool_outputs(&mut all, 0).len(), 3);
        // more steps kept than exist: nothing goes
        let mut none = before.clone();
        assert!(prune_tool_outputs(&mut none, 10).is_empty());
    }

    /// The `user` message carrying the images of `calls` (id, tool, count), as a session
    /// writes it.
    fn images_message(calls: &[(&str, &str, usize)]) -> Message {
        let mut parts = Vec::new();
        for (id, tool, count) in calls {
            parts.push(serde_json::json!({"type": "text",
                "text": format!("The images returned by the call {id} (`{tool}`), in order:")}));
            for _ in 0..*count {
                parts.push(serde_json::json!({"type": "image_url",
                    "image_url": {"url": format!("data:image/png;base64,{}", big(100))}}));
            }
        }
        let mut m = Message::user("");
        m.content = Some(crate::wire::Content::Parts(parts));
        m
    }

    #[test]
    fn old_images_become_one_stub_and_recent_ones_stay() {
        let mut two = step("a", "shot", r#"{"page":1}"#);
        two.tool_calls
            .extend(step("b", "read_file", "{}").tool_calls);
        let mut h = vec![
            Message::user("task"),
            two,
            Message::tool("a", "[image 1]"),
            Message::tool("b", "[image 1]"),
            images_message(&[("a", "shot", 2), ("b", "read_file", 1)]),
            step("c", "shot", "{}"),
            Message::tool("c", "[image 1]"),
            images_message(&[("c", "shot", 1)]),
        ];
        let before = h.clone();
        let pruned = prune_tool_outputs(&mut h, 1);
        assert_eq!(
            h[4].text(),
            r#"[output pruned to save context: 2 images returned by `shot` {"page":1}; 1 image returned by `read_file` {}, cut from the history. Run the call again if you need them.]"#
        );
        let ids: Vec<(&str, &str, usize)> = pruned
            .iter()
            .map(|p| (p.call_id.as_str(), p.tool.as_str(), p.bytes))
            .collect();
        let url = "data:image/png;base64,".len() + 100;
        assert_eq!(ids, [("a", "shot", 2 * url), ("b", "read_file", url)]);
        assert_eq!(h[..4], before[..4], "the short tool texts stay");
        assert_eq!(h[5..], before[5..], "the last step's images stay");
        assert_eq!(history::validate(&h), Ok(()));
        assert!(
            prune_tool_outputs(&mut h, 1).is_empty(),
            "a stub is not pruned again"
        );
    }

    #[test]
    fn a_call_whose_text_and_images_are_both_cut_is_named_once() {
        let mut h = vec![
            Message::user("task"),
            step("a", "shot", r#"{"page":1}"#),
            Message::tool("a", big(5000)),
            images_message(&[("a", "shot", 2)]),
            step("c", "shot", "{}"),
            Message::tool("c", "[image 1]"),
        ];
        let pruned = prune_tool_outputs(&mut h, 1);
        assert!(is_pruned_stub(&h[2].text()) && is_pruned_images(&h[3]));
        let url = "data:image/png;base64,".len() + 100;
        assert_eq!(
            pruned,
            vec![PrunedOutput {
                call_id: "a".into(),
                tool: "shot".into(),
                arguments: r#"{"page":1}"#.into(),
                bytes: 5000 + 2 * url,
            }],
            "one entry, with the bytes of its text and its images"
        );
    }

    fn arb_history() -> impl Strategy<Value = Vec<Message>> {
        proptest::collection::vec((0usize..3, 0usize..4000), 0..30).prop_map(|steps| {
            let mut h = vec![Message::user("task")];
            for (n, (kind, size)) in steps.into_iter().enumerate() {
                match kind {
                    0 => h.push(Message::user(format!("more {n}"))),
                    1 => h.push(Message::assistant(big(size))),
                    _ => {
                        let id = format!("c{n}");
                        h.push(step(&id, "read_file", "{}"));
                        h.push(Message::tool(id, big(size)));
                    }
                }
            }
            h
        })
    }

    proptest! {
        /// Pruning keeps the history valid, never grows it, keeps the last `keep` steps and
        /// every non-tool message byte for byte.
        #[test]
        fn pruning_keeps_pairing_and_recent_steps(mut h in arb_history(), keep in 0usize..5) {
            let before = h.clone();
            prune_tool_outputs(&mut h, keep);
            prop_assert_eq!(history::validate(&h), Ok(()));
            prop_assert_eq!(h.len(), before.len());
            let steps_seen = |i: usize| before[i..].iter()
                .filter(|m| m.role == Role::Assistant && !m.tool_calls.is_empty()).count();
            for (i, (a, b)) in before.iter().zip(&h).enumerate() {
                prop_assert!(b.text().len() <= a.text().len().max(PRUNE_MIN_BYTES));
                if a.role != Role::Tool || steps_seen(i) < keep {
                    prop_assert_eq!(a, b);
                }
            }
        }
    }
}
