//! Redacting a text that is written in pieces (one per read of a stream) exactly as if it had
//! been written whole.
//!
//! Redacting each piece on its own leaks a secret cut by the end of a piece: the end of one
//! piece and the start of the next each hold a fragment too short to recognise. [`Pieces`]
//! holds back the tail of a piece that the next one could complete into something hidden (a
//! proper prefix of a secret's [`FRAGMENT`](super::FRAGMENT)-byte window, at most
//! `FRAGMENT - 1` bytes, or of a secret found only whole, shorter than that secret), and only
//! that: text that cannot start a secret is written at once.
//! The held tail is looked at again, first in the next piece, or written when the text ends
//! ([`Ending::Last`]). Each byte is looked at a bounded number of times, so the work stays
//! linear in the text.

use super::{Secrets, render};
use std::borrow::Cow;
use std::ops::Range;

/// Whether more of the text may follow a piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// More may follow: a tail that could be the start of a secret is held back.
    More,
    /// The text ends here (the end of an answer, an error, an interrupt, a tool call, a
    /// question to the user): nothing is held back.
    Last,
}

/// One text written in pieces: what the last piece left for the next.
///
/// For each piece: [`mark`](Pieces::mark) the piece (the tail held back last time, then the
/// new text), [`render`](Pieces::render) consecutive ranges of it from its start up to a cut
/// at or before where `mark` said to stop, then [`cut`](Pieces::cut) there; the bytes after
/// the cut start the next piece.
#[derive(Debug, Clone, Default)]
pub struct Pieces {
    /// How many bytes at the start of the next piece are hidden already, by a secret that
    /// began before the cut.
    carried: usize,
    /// Whether the last byte written was hidden: a secret going on at the start of the next
    /// piece is the same `[redacted]`.
    open: bool,
    /// The hidden bytes of the current piece (empty: none).
    hidden: Vec<bool>,
    /// How the current piece ends.
    ending: Option<Ending>,
}

impl Pieces {
    /// A text not yet begun.
    pub fn new() -> Self {
        Pieces::default()
    }

    /// Finds the secrets of `text`, the next piece. Returns where the part to write now ends:
    /// `text.len()` for the [`Ending::Last`] piece; for [`Ending::More`], the start of a tail
    /// that the next piece could complete into something hidden (or `text.len()`).
    pub fn mark(&mut self, secrets: &Secrets, text: &str, ending: Ending) -> usize {
        self.hidden.clear();
        self.ending = Some(ending);
        let carried = self.carried.min(text.len());
        if carried > 0 {
            self.hidden.resize(text.len(), false);
            self.hidden[..carried].fill(true);
        }
        if secrets.is_empty() {
            return text.len();
        }
        secrets.mark(text.as_bytes(), &mut self.hidden);
        match ending {
            Ending::More => secrets.hold_from(text),
            Ending::Last => text.len(),
        }
    }

    /// `text[range]` with secrets replaced: the next range of the piece given to
    /// [`mark`](Pieces::mark), starting where the last one ended, on character boundaries.
    /// Borrowed when nothing in it is hidden.
    pub fn render<'a>(&mut self, text: &'a str, range: Range<usize>) -> Cow<'a, str> {
        let hidden = match self.hidden.get_mut(range.clone()) {
            Some(hidden) => hidden,
            None => &mut [],
        };
        render(&text[range], hidden, &mut self.open)
    }

    /// Ends the piece at `cut` (where rendering stopped): the bytes from there on start the
    /// next piece. After an [`Ending::Last`] piece the next one starts a new text.
    pub fn cut(&mut self, cut: usize) {
        self.carried = match self.ending {
            Some(Ending::More) => self
                .hidden
                .get(cut..)
                .map_or(0, |h| h.iter().take_while(|&&h| h).count()),
            Some(Ending::Last) | None => {
                self.open = false;
                0
            }
        };
        self.hidden.clear();
        self.ending = None;
    }

    /// [`mark`](Pieces::mark), [`render`](Pieces::render) and [`cut`](Pieces::cut) in one
    /// for a piece written all at once: the text to write now, and how many bytes at the end
    /// of `text` to give again at the start of the next piece.
    pub fn redact<'a>(
        &mut self,
        secrets: &Secrets,
        text: &'a str,
        ending: Ending,
    ) -> (Cow<'a, str>, usize) {
        let end = self.mark(secrets, text, ending);
        let clean = self.render(text, 0..end);
        self.cut(end);
        (clean, text.len() - end)
    }
}
