//! The event stream's one serde encoding, redaction included: the JSON lines of
//! `hrns exec --json` (its schema is `cli/src/exec/event-schema.json`), and the redacted text
//! of the deltas that every other front end builds its own messages from.
//!
//! Two parts, because front ends differ in what they write but not in what they hide:
//! - [`Deltas`]: the text of streamed deltas redacted as one text. A secret spread over
//!   several deltas (of one batch or of several) is one `[redacted]`, in the delta where it
//!   starts; a delta whose end could start a secret waits for the next batch (or the end of
//!   the text) with the deltas after it. Each waiting delta comes out whole, as its clean part
//!   (none for a delta wholly inside a secret after its start, or an empty one), so a front
//!   end writes one line per delta (`exec --json`) or joins a batch's deltas into
//!   one message (`hrns acp`'s `agent_message_chunk`s), from the same pieces.
//! - [`JsonLines`]: the `--json` encoding on top of it. A delta is one
//!   `{"type":"text_delta","text":…}` line (likewise `reasoning_delta`, `refusal_delta`),
//!   whose text is what arrived together: the session merges the deltas of one body read, so
//!   a line holds one token of a slow stream or many of a fast one; any
//!   other event is the event's serde object as one line, redacted as a whole, with a write's
//!   `diff` or a turn's `cost` added when the front end has them; a subagent's event
//!   ([`Event::Child`]) is its own object with `parent_call_id` and `agent`, its deltas left
//!   out (the child's messages carry what they streamed).
//!
//! # A front end over it
//!
//! Own one [`JsonLines`] (or one [`Deltas`]) per session. For each batch of events the
//! runner hands out, call [`JsonLines::event`] for each, then [`JsonLines::end_batch`]; at the
//! end of the turn [`JsonLines::finish`]. Pass the secrets to hide each time (the session's
//! and the run's; they may grow). A front end with a protocol of its own (an editor server)
//! feeds the deltas to [`Deltas::push`] and [`Deltas::drain`] and writes what comes out as its
//! own messages: the redaction is this module's, once.

use crate::secrets::{Ending, Pieces, Secrets};
use crate::session::Event;
use crate::task::ChildEvent;

/// Which kind of text a delta adds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeltaKind {
    /// The answer ([`Event::TextDelta`]).
    Text,
    /// The model's reasoning ([`Event::ReasoningDelta`]).
    Reasoning,
    /// A refusal ([`Event::RefusalDelta`]).
    Refusal,
}

impl DeltaKind {
    /// The kind and text of `event` when it is a delta of the turn's own stream.
    pub fn of(event: &Event) -> Option<(DeltaKind, &str)> {
        match event {
            Event::TextDelta { text } => Some((DeltaKind::Text, text)),
            Event::ReasoningDelta { text } => Some((DeltaKind::Reasoning, text)),
            Event::RefusalDelta { text } => Some((DeltaKind::Refusal, text)),
            Event::TurnStarted { .. }
            | Event::RequestStarted { .. }
            | Event::ToolCallStreaming { .. }
            | Event::ToolCall { .. }
            | Event::ApprovalRequested { .. }
            | Event::ToolResult { .. }
            | Event::Usage { .. }
            | Event::Retry { .. }
            | Event::OptionDropped { .. }
            | Event::ToolsChanged { .. }
            | Event::ContextCompacted { .. }
            | Event::PlanUpdated { .. }
            | Event::Message { .. }
            | Event::Checkpoint { .. }
            | Event::CheckpointFailed { .. }
            | Event::Hook { .. }
            | Event::TurnFinished { .. }
            | Event::TurnFailed { .. }
            | Event::TurnCancelled
            | Event::Child(_) => None,
        }
    }

    /// The start of its `--json` line, up to the text.
    fn line_start(self) -> &'static [u8] {
        match self {
            DeltaKind::Text => b"{\"type\":\"text_delta\",\"text\":\"",
            DeltaKind::Reasoning => b"{\"type\":\"reasoning_delta\",\"text\":\"",
            DeltaKind::Refusal => b"{\"type\":\"refusal_delta\",\"text\":\"",
        }
    }
}

/// The deltas not yet written, all of one kind, and where their redaction stands.
#[derive(Debug, Clone)]
pub struct Deltas {
    kind: DeltaKind,
    /// The text of the deltas not yet written, one after the other.
    text: String,
    /// Where each of those deltas ends in `text`.
    ends: Vec<usize>,
    pieces: Pieces,
}

impl Default for Deltas {
    fn default() -> Self {
        Deltas::new()
    }
}

impl Deltas {
    /// No deltas yet.
    pub fn new() -> Self {
        Deltas {
            kind: DeltaKind::Text,
            text: String::new(),
            ends: Vec::new(),
            pieces: Pieces::new(),
        }
    }

    /// Whether no delta waits.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Adds a delta. A delta of another kind than those waiting ends their text first: they
    /// are drained into `each` ([`Ending::Last`]).
    pub fn push(
        &mut self,
        secrets: &Secrets,
        kind: DeltaKind,
        text: &str,
        each: &mut impl FnMut(DeltaKind, &str),
    ) {
        if kind != self.kind {
            self.drain(secrets, Ending::Last, each);
            self.kind = kind;
        }
        self.text.push_str(text);
        self.ends.push(self.text.len());
    }

    /// Hands each waiting delta's clean text to `each`, in order, one call per delta that has
    /// any left (a delta wholly inside a secret has none): all of
    /// them for [`Ending::Last`] (the text ends: an event that is not a delta, the turn's
    /// end); for [`Ending::More`] (the end of a batch) all but a last few whose text the next
    /// batch could complete into a secret, which wait whole.
    pub fn drain(
        &mut self,
        secrets: &Secrets,
        ending: Ending,
        each: &mut impl FnMut(DeltaKind, &str),
    ) {
        if self.ends.is_empty() {
            return;
        }
        let text = self.text.as_str();
        let hold = self.pieces.mark(secrets, text, ending);
        // Whole deltas only: the one the held tail starts in waits too.
        let written = self.ends.partition_point(|&end| end <= hold);
        let mut start = 0;
        for &end in &self.ends[..written] {
            let clean = self.pieces.render(text, start..end);
            // A delta wholly inside a secret renders empty (the mark went to the delta the
            // secret starts in): it has nothing to say, so it is no line.
            if !clean.is_empty() {
                each(self.kind, &clean);
            }
            start = end;
        }
        self.pieces.cut(start);
        self.text.drain(..start);
        self.ends.drain(..written);
        self.ends.iter_mut().for_each(|end| *end -= start);
    }
}

/// Fields a front end adds to an event's line, when it has them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extra<'a> {
    /// A write's unified diff, as its result's `diff` field.
    pub diff: Option<&'a str>,
    /// The turn's cost in the unit of the configured prices, as `turn_finished`'s `cost`.
    pub cost: Option<f64>,
}

/// The `--json` encoder of one session's event stream: one line per event, no secrets.
#[derive(Debug, Clone, Default)]
pub struct JsonLines {
    deltas: Deltas,
}

impl JsonLines {
    /// An encoder at the start of a stream.
    pub fn new() -> Self {
        JsonLines::default()
    }

    /// Encodes `event` into `out`: a delta waits with the others of the batch; any other event
    /// ends the text so far (it is written first) and is written as its line, with `extra`'s
    /// fields. A subagent's delta writes nothing.
    pub fn event(&mut self, secrets: &Secrets, event: &Event, extra: Extra<'_>, out: &mut Vec<u8>) {
        if let Some((kind, text)) = DeltaKind::of(event) {
            self.deltas.push(secrets, kind, text, &mut |kind, clean| {
                delta_line(kind, clean, out)
            });
            return;
        }
        if let Event::Child(child) = event {
            if child.event.is_delta() {
                return;
            }
            self.finish(secrets, out);
            child_line(secrets, child, out);
            return;
        }
        self.finish(secrets, out);
        let start = out.len();
        if extra.diff.is_none() && extra.cost.is_none() {
            if serde_json::to_writer(&mut *out, event).is_err() {
                out.truncate(start);
                return;
            }
        } else {
            let Ok(mut value) = serde_json::to_value(event) else {
                return;
            };
            if let Some(object) = value.as_object_mut() {
                if let Some(diff) = extra.diff {
                    object.insert("diff".into(), diff.into());
                }
                if let Some(cost) = extra.cost {
                    object.insert("cost".into(), cost.into());
                }
            }
            if serde_json::to_writer(&mut *out, &value).is_err() {
                out.truncate(start);
                return;
            }
        }
        out.push(b'\n');
        redact_tail(secrets, out, start);
    }

    /// The end of a batch: writes the deltas so far, but for a last few whose text the next
    /// batch could complete into a secret.
    pub fn end_batch(&mut self, secrets: &Secrets, out: &mut Vec<u8>) {
        self.deltas
            .drain(secrets, Ending::More, &mut |kind, clean| {
                delta_line(kind, clean, out)
            });
    }

    /// The end of the text: writes every delta left.
    pub fn finish(&mut self, secrets: &Secrets, out: &mut Vec<u8>) {
        self.deltas
            .drain(secrets, Ending::Last, &mut |kind, clean| {
                delta_line(kind, clean, out)
            });
    }
}

/// Appends the `--json` line of a delta of `kind` with `text` (clean already) to `out`: byte
/// for byte what serde writes for the event.
pub fn delta_line(kind: DeltaKind, text: &str, out: &mut Vec<u8>) {
    let start = kind.line_start();
    // Room for the line unless it needs escaping: no growth check per piece.
    out.reserve(start.len() + text.len() + 3);
    out.extend_from_slice(start);
    push_json_string_body(text, out);
    out.extend_from_slice(b"\"}\n");
}

/// A child's event as one line: the event's own object with `parent_call_id` and `agent`.
fn child_line(secrets: &Secrets, child: &ChildEvent, out: &mut Vec<u8>) {
    /// The line: the event's own object, flattened, after the two tags.
    #[derive(serde::Serialize)]
    struct Line<'a> {
        parent_call_id: &'a str,
        agent: &'a str,
        #[serde(flatten)]
        event: &'a Event,
    }
    let line = Line {
        parent_call_id: &child.parent_call_id,
        agent: &child.agent,
        event: &child.event,
    };
    let start = out.len();
    if serde_json::to_writer(&mut *out, &line).is_err() {
        out.truncate(start);
        return;
    }
    out.push(b'\n');
    redact_tail(secrets, out, start);
}

/// Takes secrets out of the line(s) written into `out` from `start` on.
fn redact_tail(secrets: &Secrets, out: &mut Vec<u8>, start: usize) {
    let Ok(line) = std::str::from_utf8(&out[start..]) else {
        return;
    };
    if let std::borrow::Cow::Owned(clean) = secrets.redact(line) {
        out.truncate(start);
        out.extend_from_slice(clean.as_bytes());
    }
}

/// Appends `text` as the inside of a JSON string (without its quotes), escaped as serde_json
/// escapes it: `"` and `\\`, and the control characters below U+0020 (the usual five by their
/// short forms, the others as `\u00xx`); nothing else.
pub fn push_json_string_body(text: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    // Most text has nothing to escape: one look at it, then one copy.
    let Some(first) = bytes
        .iter()
        .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
    else {
        out.extend_from_slice(bytes);
        return;
    };
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate().skip(first) {
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        if short.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.extend_from_slice(short);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

#[cfg(test)]
mod tests;
