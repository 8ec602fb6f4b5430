//! `exec --json`'s printer: one JSON line per event, without secrets, a secret spread over
//! several deltas (of one batch or of several) included.
//!
//! The text of the deltas is redacted before it is encoded, as one text ([`Pieces`]): each
//! line holds one delta's part of it, and a run of secret text spread over several deltas is
//! one `[redacted]`, in the delta where it starts. A delta whose end could be the start of a
//! secret waits for the next batch (or the end of the text) with the deltas after it, so
//! each line stays one delta. Other events are redacted line by line as they are written.

use crate::exec::output::{print_json, push_json_string_body};
use hrns_core::secrets::{Ending, Pieces};
use hrns_core::session::Event;

/// Which kind of text a delta adds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeltaKind {
    Text,
    Reasoning,
    Refusal,
}

impl DeltaKind {
    /// The start of its line, up to the text.
    fn line_start(self) -> &'static [u8] {
        match self {
            DeltaKind::Text => b"{\"type\":\"text_delta\",\"text\":\"",
            DeltaKind::Reasoning => b"{\"type\":\"reasoning_delta\",\"text\":\"",
            DeltaKind::Refusal => b"{\"type\":\"refusal_delta\",\"text\":\"",
        }
    }
}

/// The deltas not yet written and where their text stands.
#[derive(Debug)]
pub(crate) struct JsonPrinter {
    kind: DeltaKind,
    /// The text of the deltas not yet written, all of `kind`, one after the other.
    text: String,
    /// Where each of those deltas ends in `text`.
    ends: Vec<usize>,
    pieces: Pieces,
}

impl JsonPrinter {
    pub(crate) fn new() -> Self {
        JsonPrinter {
            kind: DeltaKind::Text,
            text: String::new(),
            ends: Vec::new(),
            pieces: Pieces::new(),
        }
    }

    /// Prints `event` into `out` (stdout's buffer for text without secrets): a delta waits
    /// with the others of the batch; any other event ends the text so far (it is written
    /// first) and is written as its line, with `diff` as its `diff` field when there is one.
    pub(crate) fn print(
        &mut self,
        event: &Event,
        diff: Option<&[crate::host::diff::DiffLine]>,
        out: &mut Vec<u8>,
    ) {
        let (kind, text) = match event {
            Event::TextDelta { text } => (DeltaKind::Text, text),
            Event::ReasoningDelta { text } => (DeltaKind::Reasoning, text),
            Event::RefusalDelta { text } => (DeltaKind::Refusal, text),
            // A subagent's event: its own line, with `parent_call_id` and `agent`.
            Event::Child(child) => {
                if child.event.is_delta() {
                    return;
                }
                self.finish(out);
                crate::host::subagents::print_json(child, out);
                return;
            }
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
            | Event::TurnCancelled => {
                self.finish(out);
                match diff {
                    Some(lines) => crate::host::diff::print_json_with_diff(event, lines, out),
                    None => {
                        let start = out.len();
                        print_json(event, out);
                        redact_tail(out, start);
                    }
                }
                return;
            }
        };
        if kind != self.kind {
            self.finish(out);
            self.kind = kind;
        }
        self.text.push_str(text);
        self.ends.push(self.text.len());
    }

    /// `turn_finished` with the turn's `cost` (in the unit of the configured prices).
    pub(crate) fn print_with_cost(&mut self, event: &Event, cost: f64, out: &mut Vec<u8>) {
        self.finish(out);
        let Ok(mut value) = serde_json::to_value(event) else {
            return;
        };
        if let Some(object) = value.as_object_mut() {
            object.insert("cost".into(), cost.into());
        }
        let start = out.len();
        out.extend_from_slice(value.to_string().as_bytes());
        out.push(b'\n');
        redact_tail(out, start);
    }

    /// The end of a batch: writes the deltas so far, but for a last few whose text the next
    /// batch could complete into a secret.
    pub(crate) fn end_batch(&mut self, out: &mut Vec<u8>) {
        self.write_deltas(Ending::More, out);
    }

    /// The end of the text: writes every delta left.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        self.write_deltas(Ending::Last, out);
    }

    fn write_deltas(&mut self, ending: Ending, out: &mut Vec<u8>) {
        if self.ends.is_empty() {
            return;
        }
        let text = self.text.as_str();
        let hold =
            crate::host::redact::with_secrets(|secrets| self.pieces.mark(secrets, text, ending));
        // Whole deltas only: the one the held tail starts in waits too.
        let written = self.ends.partition_point(|&end| end <= hold);
        let line_start = self.kind.line_start();
        let mut start = 0;
        for &end in &self.ends[..written] {
            let clean = self.pieces.render(text, start..end);
            out.reserve(line_start.len() + clean.len() + 3);
            out.extend_from_slice(line_start);
            push_json_string_body(&clean, out);
            out.extend_from_slice(b"\"}\n");
            start = end;
        }
        self.pieces.cut(start);
        self.text.drain(..start);
        self.ends.drain(..written);
        self.ends.iter_mut().for_each(|end| *end -= start);
    }
}

/// Takes secrets out of the line(s) written into `out` from `start` on.
fn redact_tail(out: &mut Vec<u8>, start: usize) {
    let Ok(line) = std::str::from_utf8(&out[start..]) else {
        return;
    };
    if let std::borrow::Cow::Owned(clean) = crate::host::redact::redact(line) {
        out.truncate(start);
        out.extend_from_slice(clean.as_bytes());
    }
}
