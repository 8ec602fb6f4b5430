//! The frame pacing of the UI: input is drawn at once, streamed output at a steady rate.

use std::time::Duration;
use tokio::time::Instant;

/// When the screen is drawn. What the user does (a key, a message, the spinner's tick) is drawn
/// at once; a streamed answer at most once per [`Frames::INTERVAL`], so a fast provider's many
/// small reads cost one frame each interval instead of one each read, whatever the timing.
#[derive(Debug, Default)]
pub(super) struct Frames {
    /// When the last frame was drawn.
    last: Option<Instant>,
    /// What is waiting to be drawn.
    pending: Pending,
}

/// What [`Frames`] has waiting.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Pending {
    /// Nothing changed since the last frame.
    Nothing,
    /// Something for right away (the first frame too).
    #[default]
    Now,
    /// Streamed output, drawn with the next frame.
    Soon,
}

impl Frames {
    /// About 60 frames a second.
    const INTERVAL: Duration = Duration::from_millis(16);

    /// Whether to draw at `now`; if so, the frame counts as drawn.
    pub(super) fn due(&mut self, now: Instant) -> bool {
        let due = match self.pending {
            Pending::Nothing => false,
            Pending::Now => true,
            Pending::Soon => self.last.is_none_or(|last| now >= last + Self::INTERVAL),
        };
        if due {
            self.last = Some(now);
            self.pending = Pending::Nothing;
        }
        due
    }

    /// When a frame still waits, the time to draw it.
    pub(super) fn next(&self) -> Option<Instant> {
        match self.pending {
            Pending::Nothing => None,
            Pending::Now => Some(Instant::now()),
            Pending::Soon => Some(self.last.map_or_else(Instant::now, |t| t + Self::INTERVAL)),
        }
    }

    /// Something the user did or must see: draw it at once.
    pub(super) fn now(&mut self) {
        self.pending = Pending::Now;
    }

    /// Streamed output: draw it with the next frame.
    pub(super) fn soon(&mut self) {
        if self.pending == Pending::Nothing {
            self.pending = Pending::Soon;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_output_waits_for_the_interval_and_input_does_not() {
        let t0 = Instant::now();
        let mut frames = Frames::default();
        assert!(frames.due(t0), "the first frame is drawn at once");
        assert_eq!(frames.next(), None, "nothing waits after a frame");
        assert!(!frames.due(t0));

        frames.soon();
        assert!(!frames.due(t0 + Duration::from_millis(5)));
        assert_eq!(frames.next(), Some(t0 + Frames::INTERVAL));
        // More output before the frame does not push it back.
        frames.soon();
        assert_eq!(frames.next(), Some(t0 + Frames::INTERVAL));
        assert!(frames.due(t0 + Frames::INTERVAL));

        let t1 = t0 + Frames::INTERVAL + Duration::from_millis(1);
        frames.soon();
        frames.now();
        assert!(
            frames.due(t1),
            "a key is drawn at once, with the output before it"
        );
    }

    #[test]
    fn output_after_a_quiet_spell_is_drawn_at_once() {
        let t0 = Instant::now();
        let mut frames = Frames::default();
        assert!(frames.due(t0));
        frames.soon();
        assert!(frames.due(t0 + Duration::from_secs(1)));
    }
}
