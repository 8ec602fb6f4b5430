//! The session's history, each message kept beside its JSON.
//!
//! Every model request carries the whole history. Serialising it again for each request
//! made a tool round trip cost time in proportion to the history (about 1 ms per MB of
//! quoted, escaped text; see BENCHMARKS.md, round trips), so each message is serialised once,
//! when it enters the history, and a request copies those bytes.
//!
//! The cache cannot go stale: this type owns the messages and their bytes together and hands
//! out no `&mut Message`. Every change goes through [`History::push`], [`History::replace`] or
//! [`History::rewrite`], and each of them serialises what it changed.

use crate::wire::Message;
use std::ops::Deref;

/// The conversation so far (without the system prompt), with each message's JSON.
#[derive(Default)]
pub(super) struct History {
    messages: Vec<Message>,
    /// `json[i]` is `messages[i]` serialised exactly as `serde_json::to_writer` writes it.
    json: Vec<Box<[u8]>>,
    /// The sum of the lengths in `json`, so a request body is allocated once.
    json_bytes: usize,
}

impl History {
    /// A history of `messages`.
    pub(super) fn from_messages(messages: Vec<Message>) -> Self {
        let mut history = History::default();
        history.replace(messages);
        history
    }

    /// Appends a message.
    pub(super) fn push(&mut self, message: Message) {
        let json = serialise(&message);
        self.json_bytes += json.len();
        self.json.push(json);
        self.messages.push(message);
    }

    /// Replaces the whole history (a compaction rebuilt it).
    pub(super) fn replace(&mut self, messages: Vec<Message>) {
        self.json = messages.iter().map(serialise).collect();
        self.json_bytes = self.json.iter().map(|j| j.len()).sum();
        self.messages = messages;
    }

    /// Lets `edit` change messages in place (pruning), then serialises again every message
    /// it changed. Messages are compared with their state before, so an edit that changes
    /// nothing costs no serialising, and no change can be missed.
    pub(super) fn rewrite<R>(&mut self, edit: impl FnOnce(&mut [Message]) -> R) -> R {
        let before = self.messages.clone();
        let result = edit(&mut self.messages);
        for ((message, old), json) in self.messages.iter().zip(&before).zip(&mut self.json) {
            if message != old {
                self.json_bytes -= json.len();
                *json = serialise(message);
                self.json_bytes += json.len();
            }
        }
        result
    }

    /// Each message's JSON, in order.
    pub(super) fn json(&self) -> impl Iterator<Item = &[u8]> {
        self.json.iter().map(|j| &j[..])
    }

    /// The total length of [`History::json`].
    pub(super) fn json_bytes(&self) -> usize {
        self.json_bytes
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
