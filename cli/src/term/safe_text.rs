//! Terminal-safe text: untrusted text (from the model, tools, files and providers) with terminal
//! control sequences removed before it reaches a terminal.
//!
//! A file the model reads can hold `ESC ] 0 ; title BEL ESC [ 2 J`: printed as is, it renames
//! the window and clears the screen, and worse sequences exist (OSC 52 writes the clipboard).
//! Removed: C0 controls except newline and tab (so CR, BEL, BS and ESC go), DEL, C1 controls
//! (U+0080–U+009F), and whole escape sequences — CSI (`ESC [` or U+009B, up to a final byte),
//! string sequences (OSC, DCS, SOS, PM, APC, up to BEL or ST) and two-byte `ESC x`. The state
//! carries over between pieces, so a sequence split across streamed deltas is still removed.
//!
//! Used on stderr always, on stdout only when stdout is a terminal (piped output stays
//! byte-exact); the TUI cleans every span it draws (`tui::text::clean`).

use std::borrow::Cow;

/// Where the filter is inside a sequence.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    /// Ordinary text.
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// Inside a CSI: parameters and intermediates until a final byte (`@`..`~`).
    Csi,
    /// Inside a string sequence, until BEL or ST.
    Str,
    /// Inside a string sequence, after an ESC (ST is `ESC \`).
    StrEscape,
}

/// A streaming filter; one per output stream.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sanitizer {
    state: State,
}

impl Sanitizer {
    /// A filter in the ground state.
    pub(crate) fn new() -> Self {
        Sanitizer::default()
    }

    /// Filters the next piece of a stream.
    pub(crate) fn filter<'a>(&mut self, text: &'a str) -> Cow<'a, str> {
        if self.state == State::Ground && !text.chars().any(is_unsafe) {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            self.state = match self.state {
                State::Ground => match c {
                    '\x1b' => State::Escape,
                    '\u{9b}' => State::Csi,
                    '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => State::Str,
                    c if is_unsafe(c) => State::Ground,
                    c => {
                        out.push(c);
                        State::Ground
                    }
                },
                State::Escape => match c {
                    '[' => State::Csi,
                    ']' | 'P' | 'X' | '^' | '_' => State::Str,
                    '\x1b' => State::Escape,
                    // `ESC x`: one more byte (and intermediates `ESC ( B`), then done.
                    ' '..='/' => State::Escape,
                    _ => State::Ground,
                },
                State::Csi => match c {
                    '@'..='~' => State::Ground,
                    '\x1b' => State::Escape,
                    _ => State::Csi,
                },
                State::Str => match c {
                    '\x07' | '\u{9c}' => State::Ground,
                    '\x1b' => State::StrEscape,
                    _ => State::Str,
                },
                State::StrEscape => match c {
                    '\\' => State::Ground,
                    '\x1b' => State::StrEscape,
                    _ => State::Str,
                },
            };
        }
        Cow::Owned(out)
    }
}

/// Removes control sequences from one self-contained piece of text (a line, a message).
pub(crate) fn safe(text: &str) -> Cow<'_, str> {
    Sanitizer::new().filter(text)
}

/// Whether `c` must not reach a terminal on its own: C0 but newline and tab, DEL, C1.
fn is_unsafe(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVIL: &str =
        "\x1b]0;pwned\x07\x1b[2JHello\r\n\tworld\x1b[31m!\x1b[0m\u{9b}1m\u{85}\x08\x7f";

    #[test]
    fn sequences_and_controls_are_removed() {
        assert_eq!(safe(EVIL), "Hello\n\tworld!");
        assert_eq!(safe("plain ü text\n"), "plain ü text\n");
        assert!(matches!(safe("plain"), Cow::Borrowed(_)));
        assert_eq!(safe("a\x1b]52;c;ZXZpbA==\x1b\\b"), "ab", "OSC 52 with ST");
        assert_eq!(
            safe("a\x1bPq#0\x1b\\b\x1b(Bc\x1b7d"),
            "abcd",
            "DCS, charset, save"
        );
        assert_eq!(safe("\u{9d}0;t\u{9c}x"), "x", "8-bit OSC");
    }

    #[test]
    fn a_sequence_split_anywhere_is_still_removed() {
        let chars: Vec<char> = EVIL.chars().collect();
        for cut in 0..=chars.len() {
            let (a, b): (String, String) =
                (chars[..cut].iter().collect(), chars[cut..].iter().collect());
            let mut s = Sanitizer::new();
            let joined = format!("{}{}", s.filter(&a), s.filter(&b));
            assert_eq!(joined, safe(EVIL), "cut at {cut}");
        }
    }
}
