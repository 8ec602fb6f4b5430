//! Head+tail truncation of long text, and bounded capture of streaming output.
//!
//! Long tool output is cut in the middle, not at the end: the start of a build log says what
//! ran and the end says how it failed, and both matter more than the middle. The cut prefers a
//! line boundary when one is near, and a marker line says how much was left out so the model
//! knows the text is incomplete.

use std::borrow::Cow;
use std::collections::VecDeque;

/// Bytes [`HeadTail`] keeps free for its marker, so that [`HeadTail::finish`] stays within
/// `max_bytes`; the longest marker (a 20-digit count) is 42 bytes.
const MARKER_RESERVE: usize = 48;

/// Cuts `text` to about `max_chars` characters, keeping its first and last parts.
///
/// Text of at most `max_chars` characters (Unicode scalar values) is returned borrowed and
/// unchanged. Longer text keeps about half the budget from the start and half from the end,
/// cut on character boundaries — on a line boundary when one lies in the last (first) quarter
/// of the kept part — with a line such as `[... 12345 characters omitted ...]` in between. The
/// kept parts together never exceed `max_chars`, so the result is at most `max_chars` plus the
/// marker line. Runs in time linear in `text`.
pub fn truncate_head_tail(text: &str, max_chars: usize) -> Cow<'_, str> {
    match head_tail_cut(text, max_chars) {
        None => Cow::Borrowed(text),
        Some(cut) => Cow::Owned(join_with_marker(
            &text[..cut.head_end],
            cut.omitted,
            "characters",
            &text[cut.tail_start..],
        )),
    }
}

/// Where [`truncate_head_tail`] cuts: `text[..head_end]` and `text[tail_start..]` are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cut {
    head_end: usize,
    tail_start: usize,
    omitted: usize,
}

/// Returns where to cut `text` down to `max_chars` characters, or `None` when it fits.
fn head_tail_cut(text: &str, max_chars: usize) -> Option<Cut> {
    // The byte offset after `max_chars` characters, or None when the text is that short.
    let (limit_byte, _) = text.char_indices().nth(max_chars)?;
    let total = max_chars + text[limit_byte..].chars().count();
    let head_chars = max_chars / 2;
    let tail_chars = max_chars - head_chars;

    let head_byte = text
        .char_indices()
        .nth(head_chars)
        .map_or(text.len(), |(i, _)| i);
    let tail_byte = match tail_chars.checked_sub(1) {
        None => text.len(),
        Some(n) => text.char_indices().rev().nth(n).map_or(0, |(i, _)| i),
    };
    let bytes = text.as_bytes();
    let head_end = prefer_line_end(bytes, 0, head_byte);
    let tail_start = prefer_line_start(bytes, tail_byte, text.len());
    let kept = text[..head_end].chars().count() + text[tail_start..].chars().count();
    Some(Cut {
        head_end,
        tail_start,
        omitted: total - kept,
    })
}

/// Decodes process output as UTF-8, replacing invalid bytes with U+FFFD.
///
/// Commands print whatever bytes they like; the model needs text, and a replacement character
/// is more useful to it than an error.
pub fn lossy_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Captures a stream of bytes in bounded memory, keeping its start and its end.
///
/// A command that prints 100 MB is captured in `O(max_bytes)` memory: the first half of the
/// budget keeps the first bytes, a ring buffer keeps the last ones, and [`HeadTail::finish`]
/// joins them with a marker saying how many bytes were dropped. For budgets of at least 64
/// bytes the finished text, marker included, is made of at most `max_bytes` bytes of input
/// and marker, and so has at most `max_bytes` characters (lossy decoding turns each invalid
/// byte into one U+FFFD, which is three bytes but one character).
#[derive(Debug, Clone)]
pub struct HeadTail {
    head: Vec<u8>,
    head_cap: usize,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total: u64,
}

impl HeadTail {
    /// Returns an empty capture whose finished text stays within `max_bytes`.
    pub fn new(max_bytes: usize) -> Self {
        let keep = max_bytes.saturating_sub(MARKER_RESERVE);
        let head_cap = keep / 2;
        HeadTail {
            head: Vec::new(),
            head_cap,
            tail: VecDeque::new(),
            tail_cap: keep - head_cap,
            total: 0,
        }
    }

    /// Appends bytes as they arrive; memory stays bounded however much is pushed.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total = self.total.saturating_add(bytes.len() as u64);
        let room = self.head_cap - self.head.len();
        let to_head = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..to_head]);
        bytes = &bytes[to_head..];
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_cap..]);
        } else {
            let excess = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..excess);
            self.tail.extend(bytes);
        }
    }

    /// Returns how many bytes were pushed in all, kept or not.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Returns whether bytes were dropped, that is whether [`HeadTail::finish`] has a marker.
    pub fn is_truncated(&self) -> bool {
        self.total > (self.head.len() + self.tail.len()) as u64
    }

    /// Returns the captured text, decoded lossily, with a marker where bytes were dropped.
    ///
    /// When something was dropped, a UTF-8 sequence split by the cut is dropped too (and
    /// counted), and the cut moves to a nearby line boundary when there is one, so the text
    /// does not start or end in half a character or half a line.
    pub fn finish(self) -> String {
        let truncated = self.is_truncated();
        let head = self.head;
        let tail = Vec::from(self.tail);
        if !truncated {
            let mut all = head;
            all.extend_from_slice(&tail);
            return lossy_text(&all);
        }
        let head_end = prefer_line_end(&head, 0, utf8_complete_prefix(&head));
        let tail_skip = tail
            .iter()
            .take(3)
            .take_while(|&&b| is_continuation(b))
            .count();
        let tail_start = prefer_line_start(&tail, tail_skip, tail.len());
        let kept = (head_end + tail.len() - tail_start) as u64;
        let omitted = self.total - kept;
        join_with_marker(
            &lossy_text(&head[..head_end]),
            omitted,
            "bytes",
            &lossy_text(&tail[tail_start..]),
        )
    }
}

/// Joins the kept parts with a marker line; the marker starts its own line and ends one.
fn join_with_marker(head: &str, omitted: impl std::fmt::Display, unit: &str, tail: &str) -> String {
    let lead = if head.is_empty() || head.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let trail = if tail.is_empty() { "" } else { "\n" };
    format!("{head}{lead}[... {omitted} {unit} omitted ...]{trail}{tail}")
}

/// Moves a head cut at `end` back to just after a newline, if one is in the last quarter of
/// `bytes[start..end]`; otherwise keeps `end`.
fn prefer_line_end(bytes: &[u8], start: usize, end: usize) -> usize {
    let window = (end - start) / 4;
    let from = end - window;
    match bytes[from..end].iter().rposition(|&b| b == b'\n') {
        Some(i) => from + i + 1,
        None => end,
    }
}

/// Moves a tail cut at `start` forward to just after a newline, if one is in the first
/// quarter of `bytes[start..end]`; otherwise keeps `start`.
fn prefer_line_start(bytes: &[u8], start: usize, end: usize) -> usize {
    let window = (end - start) / 4;
    // A newline that ends the kept text is not a line start worth moving to.
    let to = (start + window).min(end.saturating_sub(1)).max(start);
    match bytes[start..to].iter().position(|&b| b == b'\n') {
        Some(i) => start + i + 1,
        None => start,
    }
}

/// Returns the length of `bytes` without a UTF-8 sequence cut off at its end.
fn utf8_complete_prefix(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        // Invalid bytes inside: only look at the last three for a cut sequence.
        Err(_) => {
            let from = bytes.len().saturating_sub(3);
            match (from..bytes.len())
                .rev()
                .find(|&i| !is_continuation(bytes[i]))
            {
                Some(i) if sequence_len(bytes[i]) > bytes.len() - i => i,
                _ => bytes.len(),
            }
        }
    }
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// The length of the UTF-8 sequence a lead byte starts (1 for anything that is not a lead).
fn sequence_len(lead: u8) -> usize {
    match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn chars(s: &str) -> usize {
        s.chars().count()
    }

    #[test]
    fn short_text_is_borrowed_unchanged() {
        for (text, max) in [("", 0), ("", 10), ("abc", 3), ("héllo", 5), ("a\nb\n", 100)] {
            assert!(matches!(truncate_head_tail(text, max), Cow::Borrowed(t) if t == text));
        }
    }

    #[test]
    fn long_text_keeps_head_and_tail_with_a_marker() {
        let text = "a".repeat(50) + &"b".repeat(50);
        let out = truncate_head_tail(&text, 20);
        assert_eq!(
            out,
            format!(
                "{}\n[... 80 characters omitted ...]\n{}",
                "a".repeat(10),
                "b".repeat(10)
            )
        );
    }

    #[test]
    fn cuts_on_char_boundaries_for_multibyte_text() {
        let text = "é".repeat(30) + &"日".repeat(30);
        let out = truncate_head_tail(&text, 10);
        assert_eq!(
            out,
            format!(
                "{}\n[... 50 characters omitted ...]\n{}",
                "é".repeat(5),
                "日".repeat(5)
            )
        );
    }

    #[test]
    fn prefers_line_boundaries_when_near() {
        let lines: String = (0..100).map(|i| format!("line {i:03}\n")).collect();
        // 9 characters per line; 100 characters per side cuts mid-line.
        let out = truncate_head_tail(&lines, 200);
        let (head, rest) = out.split_once("[... ").unwrap();
        let (_, tail) = rest.split_once(" omitted ...]\n").unwrap();
        assert!(head.ends_with("line 010\n"), "{head:?}");
        assert!(tail.starts_with("line 089\n"), "{tail:?}");
        assert!(chars(head) + chars(tail) <= 200);
        let omitted: usize = rest.split(' ').next().unwrap().parse().unwrap();
        assert_eq!(omitted + chars(head) + chars(tail), chars(&lines));
    }

    #[test]
    fn zero_budget_leaves_only_the_marker() {
        assert_eq!(
            truncate_head_tail("abc", 0),
            "[... 3 characters omitted ...]"
        );
        assert_eq!(
            truncate_head_tail("abc", 1),
            "[... 2 characters omitted ...]\nc"
        );
    }

    #[test]
    fn very_long_single_line() {
        let text = "x".repeat(1_000_000);
        let out = truncate_head_tail(&text, 30_000);
        assert!(out.contains("[... 970000 characters omitted ...]"));
        assert_eq!(
            out.len(),
            30_000 + "\n[... 970000 characters omitted ...]\n".len()
        );
    }

    #[test]
    fn lossy_text_replaces_invalid_bytes() {
        assert_eq!(lossy_text(b"ok \xff end"), "ok \u{fffd} end");
        assert_eq!(lossy_text(b""), "");
    }

    #[test]
    fn head_tail_keeps_everything_when_it_fits() {
        let mut cap = HeadTail::new(1000);
        cap.push(b"hello ");
        cap.push(b"");
        cap.push(b"world");
        assert_eq!(cap.total(), 11);
        assert!(!cap.is_truncated());
        assert_eq!(cap.finish(), "hello world");
    }

    #[test]
    fn head_tail_drops_the_middle_of_a_large_stream() {
        let mut cap = HeadTail::new(4096);
        let line = b"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n";
        for _ in 0..100_000 {
            cap.push(line);
        }
        assert_eq!(cap.total(), 6_400_000);
        assert!(cap.is_truncated());
        // Memory stays bounded by the budget.
        assert!(cap.head.capacity() <= 4096 && cap.tail.len() <= 4096);
        let text = cap.finish();
        assert!(text.len() <= 4096, "{}", text.len());
        assert!(text.starts_with("0123"));
        assert!(text.ends_with("abcde\n"));
        let (head, rest) = text.split_once("[... ").unwrap();
        let omitted: u64 = rest.split(' ').next().unwrap().parse().unwrap();
        let tail = rest.split_once("omitted ...]\n").unwrap().1;
        assert!(head.ends_with('\n') && tail.starts_with('0'));
        assert_eq!(omitted + (head.len() + tail.len()) as u64, 6_400_000);
    }

    #[test]
    fn head_tail_does_not_split_characters() {
        let mut cap = HeadTail::new(MARKER_RESERVE + 9);
        cap.push("ééééééééééééééé".as_bytes());
        let text = cap.finish();
        assert!(!text.contains('\u{fffd}'), "{text:?}");
        assert!(text.starts_with("éé") && text.ends_with("éé"), "{text:?}");
    }

    #[test]
    fn head_tail_with_zero_budget() {
        let mut cap = HeadTail::new(0);
        assert_eq!(cap.clone().finish(), "");
        cap.push(b"abc");
        assert_eq!(cap.finish(), "[... 3 bytes omitted ...]");
    }

    #[test]
    fn head_tail_one_huge_push() {
        let mut cap = HeadTail::new(200);
        cap.push(&vec![b'z'; 10_000_000]);
        let text = cap.finish();
        assert!(text.len() <= 200);
        assert!(text.contains("[... 9999848 bytes omitted ...]"), "{text}");
    }

    proptest! {
        #![proptest_config(crate::proptest_seeds::config())]
        #[test]
        fn truncation_is_bounded_and_keeps_prefix_and_suffix(
            text in "(?s).{0,300}",
            max in 0usize..120,
        ) {
            let out = truncate_head_tail(&text, max);
            match head_tail_cut(&text, max) {
                None => {
                    prop_assert!(chars(&text) <= max);
                    prop_assert!(matches!(out, Cow::Borrowed(_)));
                }
                Some(cut) => {
                    prop_assert!(chars(&text) > max);
                    prop_assert!(cut.head_end <= cut.tail_start);
                    let head = &text[..cut.head_end];
                    let tail = &text[cut.tail_start..];
                    prop_assert!(chars(head) + chars(tail) <= max);
                    prop_assert_eq!(cut.omitted + chars(head) + chars(tail), chars(&text));
                    let marker = format!("\n[... {} characters omitted ...]\n", cut.omitted);
                    prop_assert!(chars(&out) <= max + chars(&marker));
                    prop_assert!(out.starts_with(head));
                    prop_assert!(out.ends_with(tail));
                    prop_assert!(out.contains(marker.trim()));
                }
            }
        }

        #[test]
        fn head_tail_matches_the_stream(
            chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..50), 0..20),
            max in 0usize..200,
        ) {
            let all: Vec<u8> = chunks.concat();
            let mut cap = HeadTail::new(max);
            for chunk in &chunks {
                cap.push(chunk);
            }
            prop_assert_eq!(cap.total(), all.len() as u64);
            let text = cap.finish();
            if all.len() <= max.saturating_sub(MARKER_RESERVE) {
                prop_assert_eq!(text, lossy_text(&all));
            } else if max >= 64 {
                prop_assert!(text.chars().count() <= max);
            }
        }
    }
}
