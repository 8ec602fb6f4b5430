//! `exec --json`'s printer: a thin adapter over the event stream's one encoding,
//! [`hrns_core::event_json::JsonLines`] (one JSON line per event, without secrets, a secret
//! spread over several deltas included), with the run's secrets and the diffs of writes.

use hrns_core::event_json::{Extra, JsonLines};
use hrns_core::session::Event;

/// The encoder of this run's event stream.
#[derive(Debug)]
pub(crate) struct JsonPrinter {
    lines: JsonLines,
}

impl JsonPrinter {
    pub(crate) fn new() -> Self {
        JsonPrinter {
            lines: JsonLines::new(),
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
        let diff = diff.map(crate::host::diff::to_text);
        let extra = Extra {
            diff: diff.as_deref(),
            cost: None,
        };
        crate::host::redact::with_secrets(|secrets| self.lines.event(secrets, event, extra, out));
    }

    /// `turn_finished` with the turn's `cost` (in the unit of the configured prices).
    pub(crate) fn print_with_cost(&mut self, event: &Event, cost: f64, out: &mut Vec<u8>) {
        let extra = Extra {
            diff: None,
            cost: Some(cost),
        };
        crate::host::redact::with_secrets(|secrets| self.lines.event(secrets, event, extra, out));
    }

    /// The end of a batch: writes the deltas so far, but for a last few whose text the next
    /// batch could complete into a secret.
    pub(crate) fn end_batch(&mut self, out: &mut Vec<u8>) {
        crate::host::redact::with_secrets(|secrets| self.lines.end_batch(secrets, out));
    }

    /// The end of the text: writes every delta left.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        crate::host::redact::with_secrets(|secrets| self.lines.finish(secrets, out));
    }
}
