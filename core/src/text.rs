//! Small text helpers shared by the core's error messages, and the cleaning of text a server
//! wrote for the model.

use std::borrow::Cow;

/// Shortens `s` to at most about `max` bytes for an error message, cutting on a character
/// boundary and saying how much was left out.
pub(crate) fn shorten(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    Cow::Owned(format!("{}… ({} more bytes)", &s[..cut], s.len() - cut))
}

/// `text` without control characters: C0 controls but newline and tab, DEL, C1 controls, and
/// whole terminal escape sequences (CSI `ESC [ … final`, string sequences `ESC ] P X ^ _ …`
/// up to BEL or ST, two-byte `ESC x`), so that `\x1b[31mred` becomes `red` rather than
/// `[31mred`. For what an MCP server says of its tools: the model has no use for escapes, and
/// a transcript or terminal that shows them later should not run them.
pub(crate) fn strip_controls(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    #[derive(Clone, Copy, PartialEq)]
    enum At {
        Text,
        Escape,
        Csi,
        Str,
        StrEscape,
    }
    let mut out = String::with_capacity(text.len());
    let mut at = At::Text;
    for c in text.chars() {
        at = match (at, c) {
            (At::Text, '\x1b') => At::Escape,
            (At::Text, '\u{9b}') => At::Csi,
            (At::Text, '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}') => At::Str,
            (At::Text, c) => {
                if !unsafe_char(c) {
                    out.push(c);
                }
                At::Text
            }
            (At::Escape, '[') => At::Csi,
            (At::Escape, ']' | 'P' | 'X' | '^' | '_') => At::Str,
            (At::Escape, '\x1b' | ' '..='/') => At::Escape,
            (At::Escape, _) => At::Text,
            (At::Csi, '@'..='~') => At::Text,
            (At::Csi, '\x1b') => At::Escape,
            (At::Csi, _) => At::Csi,
            (At::Str, '\x07' | '\u{9c}') => At::Text,
            (At::Str | At::StrEscape, '\x1b') => At::StrEscape,
            (At::Str, _) => At::Str,
            (At::StrEscape, '\\') => At::Text,
            (At::StrEscape, _) => At::Str,
        };
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::{shorten, strip_controls};
    use std::borrow::Cow;

    #[test]
    fn controls_and_escape_sequences_are_stripped() {
        let evil = "\x1b]0;pwned\x07\x1b[2JHello\r\n\tworld\x1b[31m!\x1b[0m\u{9b}1m\u{85}\x08\x7f";
        assert_eq!(strip_controls(evil), "Hello\n\tworld!");
        assert_eq!(strip_controls("a\x1b]52;c;ZXZpbA==\x1b\\b"), "ab");
        assert_eq!(strip_controls("a\x1b(Bb\x1b7c\0d"), "abcd");
        assert!(matches!(strip_controls("plain ü\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn shortens_on_char_boundaries() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcdef", 3), "abc… (3 more bytes)");
        assert_eq!(shorten("ééé", 3), "é… (4 more bytes)");
        assert_eq!(shorten("", 0), "");
    }
}
