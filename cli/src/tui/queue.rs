//! Messages typed while a turn runs: kept in order, shown as queued, taken back for editing
//! with ↑, and sent one per turn end.

use super::text::{Line, SpanStyle};

/// The queued messages, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    messages: Vec<String>,
}

impl Queue {
    /// Queues `text` to be sent after the running turn (and any queued before it).
    pub(crate) fn push(&mut self, text: String) {
        self.messages.push(text);
    }

    /// The next message to send, if any.
    pub(crate) fn next(&mut self) -> Option<String> {
        (!self.messages.is_empty()).then(|| self.messages.remove(0))
    }

    /// Takes back the most recently queued message, for editing.
    pub(crate) fn take_last(&mut self) -> Option<String> {
        self.messages.pop()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The lines that show the queue above the editor: one per message, its first line cut to
    /// `width`, and how to edit.
    pub(crate) fn lines(&self, width: usize) -> Vec<Line> {
        let mut lines = Vec::new();
        for m in &self.messages {
            let first = m.lines().next().unwrap_or("");
            let more = if m.lines().count() > 1 { " …" } else { "" };
            let text = format!("queued: {first}{more}");
            let cut: String = text.chars().take(width.max(10)).collect();
            lines.push(Line::styled(cut, SpanStyle::PLAIN.dim()));
        }
        if !lines.is_empty() {
            lines.push(Line::styled(
                "  sent when the turn ends · ↑ on an empty line edits the last one",
                SpanStyle::PLAIN.dim(),
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_in_first_out_and_the_last_taken_back() {
        let mut q = Queue::default();
        assert!(q.is_empty() && q.next().is_none() && q.lines(80).is_empty());
        q.push("one".into());
        q.push("two\nlines".into());
        q.push("three".into());
        let shown: Vec<String> = q.lines(80).iter().map(Line::plain_text).collect();
        assert_eq!(shown[0], "queued: one");
        assert_eq!(shown[1], "queued: two …");
        assert_eq!(shown.len(), 4);
        assert_eq!(q.take_last().as_deref(), Some("three"));
        assert_eq!(q.next().as_deref(), Some("one"));
        assert_eq!(q.next().as_deref(), Some("two\nlines"));
        assert!(q.is_empty());
    }
}
