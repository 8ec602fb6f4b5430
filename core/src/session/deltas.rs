//! The deltas of one body read, merged before they leave the session.
//!
//! A provider streams one token per event, so a fast stream's read of 64 KiB brings a few
//! hundred deltas. Each was an [`Event`] of its own, and every front end paid for each: the
//! outbox, the driver's batch, the printer, the session log's check, the redaction net (about
//! a third of `hrns exec`'s extra time over its library on a 50 MB stream, issue 36). Here the
//! consecutive deltas of one kind from one read become one event with their text joined:
//! text, reasoning and refusal each; anything else ends the run and keeps its place. Nothing
//! is held back across reads, so a slow stream still shows each token as it comes.

use super::event::Event;
use crate::accumulate::DeltaText;

/// The run of deltas being merged, if any.
#[derive(Debug, Default)]
pub(super) struct Deltas {
    run: Option<Run>,
}

/// Consecutive deltas of one kind.
#[derive(Debug)]
struct Run {
    kind: Kind,
    /// The first delta's text, kept as it came while it is alone.
    first: DeltaText,
    /// The run's text once a second delta joined it.
    joined: Option<String>,
}

/// The kinds of delta that merge (each only with its own kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Text,
    Reasoning,
    Refusal,
}

impl Deltas {
    /// Takes the next event of a read that is not a delta: it ends the run (handed to `emit`
    /// first), then goes to `emit` itself.
    pub(super) fn push(&mut self, event: Event, emit: &mut impl FnMut(Event)) {
        match event {
            Event::TextDelta { text } => self.push_delta(Kind::Text, text, emit),
            Event::ReasoningDelta { text } => self.push_delta(Kind::Reasoning, text, emit),
            Event::RefusalDelta { text } => self.push_delta(Kind::Refusal, text, emit),
            other => {
                self.flush(emit);
                emit(other);
            }
        }
    }

    /// Takes the next delta of a read: it joins the run of its kind, or ends the run of
    /// another kind (handed to `emit`) and starts its own. The stream's text is taken as it
    /// is, without making an event of it first (this is the path of every token).
    #[inline]
    pub(super) fn push_delta(&mut self, kind: Kind, text: DeltaText, emit: &mut impl FnMut(Event)) {
        match &mut self.run {
            Some(run) if run.kind == kind => run.join(&text),
            _ => {
                self.flush(emit);
                self.run = Some(Run {
                    kind,
                    first: text,
                    joined: None,
                });
            }
        }
    }

    /// Ends the run: its event goes to `emit`. Call at the end of each read.
    pub(super) fn flush(&mut self, emit: &mut impl FnMut(Event)) {
        if let Some(run) = self.run.take() {
            emit(run.into_event());
        }
    }
}

impl Run {
    #[inline]
    fn join(&mut self, text: &str) {
        match &mut self.joined {
            Some(joined) => joined.push_str(text),
            None => {
                let mut joined = String::with_capacity((self.first.len() + text.len()) * 4);
                joined.push_str(&self.first);
                joined.push_str(text);
                self.joined = Some(joined);
            }
        }
    }

    fn into_event(self) -> Event {
        let text = match self.joined {
            Some(joined) => DeltaText::from(joined),
            None => self.first,
        };
        match self.kind {
            Kind::Text => Event::TextDelta { text },
            Kind::Reasoning => Event::ReasoningDelta { text },
            Kind::Refusal => Event::RefusalDelta { text },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> Event {
        Event::TextDelta { text: t.into() }
    }

    fn reasoning(t: &str) -> Event {
        Event::ReasoningDelta { text: t.into() }
    }

    fn merged(events: Vec<Event>) -> Vec<Event> {
        let mut out = Vec::new();
        let mut deltas = Deltas::default();
        let mut emit = |e| out.push(e);
        for event in events {
            deltas.push(event, &mut emit);
        }
        deltas.flush(&mut emit);
        out
    }

    /// Runs of one kind merge; a change of kind or another event ends a run, and every
    /// event keeps its place.
    #[test]
    fn runs_of_one_kind_merge_and_everything_keeps_its_order() {
        let call = Event::ToolCallStreaming {
            index: 0,
            name: Some("read_file".into()),
        };
        let refusal = |t: &str| Event::RefusalDelta { text: t.into() };
        let out = merged(vec![
            reasoning("let me "),
            reasoning("think"),
            text("Hel"),
            text("lo, "),
            text("world"),
            reasoning("more"),
            text("!"),
            call.clone(),
            text("after"),
            refusal("no"),
            refusal(", sorry"),
        ]);
        assert_eq!(
            out,
            vec![
                reasoning("let me think"),
                text("Hello, world"),
                reasoning("more"),
                text("!"),
                call,
                text("after"),
                refusal("no, sorry"),
            ]
        );
    }

    /// Long runs: the joined text is every delta's, in order, however many there are.
    #[test]
    fn a_long_run_is_one_event_with_all_the_text() {
        let tokens: Vec<String> = (0..5_000).map(|i| format!("t{i} é ")).collect();
        let out = merged(tokens.iter().map(|t| text(t)).collect());
        assert_eq!(out, vec![text(&tokens.concat())]);
        assert!(merged(Vec::new()).is_empty());
    }
}
