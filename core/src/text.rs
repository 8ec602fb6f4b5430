//! Small text helpers shared by the core's error messages.

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

#[cfg(test)]
mod tests {
    use super::shorten;

    #[test]
    fn shortens_on_char_boundaries() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcdef", 3), "abc… (3 more bytes)");
        assert_eq!(shorten("ééé", 3), "é… (4 more bytes)");
        assert_eq!(shorten("", 0), "");
    }
}
