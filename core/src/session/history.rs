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
//! [`History::replace`] or [`History::rewrite`], and each of them drops or serialises again
//! the JSON of what it changed.

use crate::wire::Message;
use std::ops::Deref;

/// The conversation so far (without the system prompt), with each message's JSON.
#[derive(Default)]
pub(super) struct History {
    messages: Vec<Message>,
    /// `json[i]` is `messages[i]` serialised exactly as `serde_json::to_writer` writes it,
    /// for the first `json.len()` messages (those a request carried already).
    json: Vec<Box<[u8]>>,
    /// The sum of the lengths in `json`, so a request body is allocated once.
    json_bytes: usize,
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
    }

    /// Lets `edit` change messages in place (pruning), then serialises again every message
    /// it changed whose JSON was kept. Messages are compared with their state before, so an
    /// edit that changes nothing costs no serialising, and no change can be missed.
    pub(super) fn rewrite<R>(&mut self, edit: impl FnOnce(&mut [Message]) -> R) -> R {
        let before = self.messages[..self.json.len()].to_vec();
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
