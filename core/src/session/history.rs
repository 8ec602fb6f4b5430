//! The session's history, each message kept beside its JSON.
//!
//! Every model request carries the whole history. Serialising it again for each request
//! made a tool round trip cost time in proportion to the history (about 1 ms per MB of
//! quoted, escaped text; see BENCHMARKS.md, round trips), so each message is serialised once,
//! for the first request that carries it, and later requests copy those bytes. Not earlier:
//! the last answer of a turn may never be sent again (`exec` ends there), and its copy would
//! only add to the peak memory.
//!
//! The kept JSON cannot go stale: this type owns the messages and their bytes together and
//! hands out no `&mut Message`. Every change goes through [`History::push`],
//! [`History::replace`], [`History::prune`] or [`History::rewrite`], and each of them drops or
//! serialises again the JSON of what it changed.
//!
//! Pruning runs before every request while the history is over the context threshold, so it
//! must cost what it changes: the history remembers how far it was pruned, and a prune looks
//! only at the steps that became old since (each message once in its life), not at the whole
//! history again.

use crate::context::{self, PrunedOutput};
use crate::wire::Message;
use std::ops::{Deref, Range};

/// The conversation so far (without the system prompt), with each message's JSON.
#[derive(Default)]
pub(super) struct History {
    messages: Vec<Message>,
    /// `json[i]` is `messages[i]` serialised exactly as `serde_json::to_writer` writes it,
    /// for the first `json.len()` messages (those a request carried already).
    json: Vec<Box<[u8]>>,
    /// The sum of the lengths in `json`, so a request body is allocated once.
    json_bytes: usize,
    /// The messages before this index are as a prune left them, and it is where a step begins
    /// (or 0): the next prune starts here.
    pruned_until: usize,
}

/// The JSON of every message of a [`History`], in order.
#[derive(Clone, Copy)]
pub(super) struct HistoryJson<'a> {
    /// One slice of JSON per message.
    pub(super) messages: &'a [Box<[u8]>],
    /// Their total length.
    pub(super) bytes: usize,
}

impl History {
    /// A history of `messages`.
    pub(super) fn from_messages(messages: Vec<Message>) -> Self {
        History {
            messages,
            ..History::default()
        }
    }

    /// Appends a message.
    pub(super) fn push(&mut self, message: Message) {
        self.messages.push(message);
    }

    /// Replaces the whole history (a compaction rebuilt it).
    pub(super) fn replace(&mut self, messages: Vec<Message>) {
        self.messages = messages;
        self.json.clear();
        self.json_bytes = 0;
        self.pruned_until = 0;
    }

    /// Prunes the tool outputs (and images) of the steps before the last `keep_steps`, as
    /// [`context::prune_tool_outputs`] does over the whole history, but looking only at the
    /// steps that became old since the last prune: those before were pruned then, and a
    /// pruned step stays pruned.
    pub(super) fn prune(&mut self, keep_steps: usize) -> Vec<PrunedOutput> {
        let start = self.pruned_until;
        let end = start + context::protected_from(&self.messages[start..], keep_steps);
        let pruned = self.rewrite(start..end, |messages| {
            context::prune_tool_outputs(messages, 0)
        });
        // The next prune starts where a step begins, so the calls of the outputs it prunes
        // are in what it reads. `end` is one, unless it is the end of the history
        // (`keep_steps` 0): then the next starts again at the last step.
        self.pruned_until = if end == self.messages.len() {
            self.messages
                .iter()
                .rposition(context::is_step)
                .unwrap_or(0)
        } else {
            end
        };
        pruned
    }

    /// Lets `edit` change the messages in `range` in place, then serialises again every
    /// message it changed whose JSON was kept. Those messages are compared with their state
    /// before, so an edit that changes nothing costs no serialising, and no change can be
    /// missed; the copy taken for it is of `range` only.
    pub(super) fn rewrite<R>(
        &mut self,
        range: Range<usize>,
        edit: impl FnOnce(&mut [Message]) -> R,
    ) -> R {
        let kept = range.start.min(self.json.len())..range.end.min(self.json.len());
        let before = self.messages[kept.clone()].to_vec();
        let result = edit(&mut self.messages[range.clone()]);
        for ((message, old), json) in self.messages[kept.clone()]
            .iter()
            .zip(&before)
            .zip(&mut self.json[kept])
        {
            if message != old {
                self.json_bytes -= json.len();
                *json = serialise(message);
                self.json_bytes += json.len();
            }
        }
        // A message before the mark may have changed in any way: the next prune reads all.
        if range.start < self.pruned_until {
            self.pruned_until = 0;
        }
        result
    }

    /// Each message's JSON, serialising the messages no request carried yet.
    pub(super) fn json(&mut self) -> HistoryJson<'_> {
        for message in &self.messages[self.json.len()..] {
            let json = serialise(message);
            self.json_bytes += json.len();
            self.json.push(json);
        }
        HistoryJson {
            messages: &self.json,
            bytes: self.json_bytes,
        }
    }
}

/// The messages, read-only.
impl Deref for History {
    type Target = [Message];

    fn deref(&self) -> &[Message] {
        &self.messages
    }
}

/// The messages only: their JSON says the same again.
impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.messages).finish()
    }
}

/// A message's JSON as a request carries it.
fn serialise(message: &Message) -> Box<[u8]> {
    serde_json::to_vec(message)
        .expect("a message always serializes")
        .into_boxed_slice()
}
