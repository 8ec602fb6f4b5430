//! A page of a text file for `read_file`, rendered from the file's bytes as they are read.
//!
//! A driver must not load a 50 MB file into memory to show 2000 lines of it. [`TextPager`] is
//! fed the file's bytes in chunks of any size and keeps only what the page needs: the lines it
//! shows (each cut to [`READ_FILE_MAX_LINE_CHARS`] characters), a sample of the first
//! [`BINARY_SNIFF_BYTES`] to tell binary from text, and counters. Lines before and after the
//! page are only counted (with `memchr`), so the driver can stream the whole file through it
//! in bounded memory and the note at the end can say how many lines the file has.
//!
//! The driver's loop, for any `Read`:
//!
//! ```
//! use hrns_core::tool::page::TextPager;
//! # fn main() -> std::io::Result<()> {
//! # let mut file: &[u8] = b"one\ntwo\nthree\n";
//! use std::io::Read;
//! let mut pager = TextPager::new(Some(2), Some(1));
//! let mut buf = [0u8; 4096];
//! loop {
//!     let n = file.read(&mut buf)?;
//!     if n == 0 || pager.is_binary() {
//!         break;
//!     }
//!     pager.feed(&buf[..n]);
//! }
//! let output = pager.finish();
//! assert_eq!(output.content, "     2\ttwo\n[lines 2-2 of 3; call read_file with offset=3 to continue]\n");
//! # Ok(())
//! # }
//! ```

use super::ToolOutput;
use super::builtin::{READ_FILE_DEFAULT_LINES, READ_FILE_MAX_CHARS, READ_FILE_MAX_LINE_CHARS};
use std::fmt::Write as _;

/// How many leading bytes [`looks_binary`] inspects.
pub const BINARY_SNIFF_BYTES: usize = 8192;

/// Bytes of one line kept before the rest is only counted: enough for
/// [`READ_FILE_MAX_LINE_CHARS`] characters of four bytes each.
const LINE_KEEP_BYTES: usize = READ_FILE_MAX_LINE_CHARS * 4;

/// The message for a file that is not text.
const BINARY_MESSAGE: &str = "the file looks binary (it has NUL bytes or is not UTF-8 text); \
                              read_file only reads text files";

/// Renders one page of a text file from its bytes, fed in chunks; see the module docs.
///
/// The output is the same whatever the chunk sizes, and is described at
/// [`render_read`], which is this pager fed a whole text: numbered lines, a note with the offset to continue from,
/// notes about cut lines and CRLF line endings, and an error for an offset past the end. A
/// file whose first [`BINARY_SNIFF_BYTES`] look binary ([`looks_binary`]) gives an error
/// instead; invalid UTF-8 later in the file is shown as U+FFFD.
#[derive(Debug, Clone)]
pub struct TextPager {
    /// The first line to show (1-based) and one past the last.
    first: u64,
    end: u64,
    /// The number of the line being fed (1-based); it has `partial` bytes so far or not.
    line: u64,
    partial: bool,
    /// The kept start of the current line, when it is on the page.
    kept: Vec<u8>,
    /// Characters (lead bytes) of the current line beyond `kept`.
    dropped_chars: usize,
    /// The last byte of the current line, to strip a `\r` that was not kept.
    last_byte: Option<u8>,
    out: String,
    out_chars: usize,
    last_shown: u64,
    cut_lines: u64,
    crlf: bool,
    /// Whether the character budget is used up, so that no more lines are shown.
    full: bool,
    sniff: Vec<u8>,
    binary: Option<bool>,
}

impl TextPager {
    /// Returns a pager for `limit` lines (default [`READ_FILE_DEFAULT_LINES`]) from line
    /// `offset` (1-based, default 1); zeros count as 1.
    pub fn new(offset: Option<u64>, limit: Option<u64>) -> Self {
        let first = offset.unwrap_or(1).max(1);
        let limit = limit.unwrap_or(READ_FILE_DEFAULT_LINES).max(1);
        TextPager {
            first,
            end: first.saturating_add(limit),
            line: 1,
            partial: false,
            kept: Vec::new(),
            dropped_chars: 0,
            last_byte: None,
            out: String::new(),
            out_chars: 0,
            last_shown: 0,
            cut_lines: 0,
            crlf: false,
            full: false,
            sniff: Vec::new(),
            binary: None,
        }
    }

    /// Returns a pager that takes any bytes as text (invalid UTF-8 shown as U+FFFD), for text
    /// that is known to be text already.
    pub(crate) fn new_without_binary_check(offset: Option<u64>, limit: Option<u64>) -> Self {
        TextPager {
            binary: Some(false),
            ..TextPager::new(offset, limit)
        }
    }

    /// Returns whether the bytes fed so far show that the file is binary; the driver can stop
    /// reading then, as [`TextPager::finish`] will refuse the file anyway.
    pub fn is_binary(&self) -> bool {
        self.binary == Some(true)
    }

    /// Feeds the next bytes of the file. Memory stays bounded by the page, not the file.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        if self.is_binary() {
            return;
        }
        if self.binary.is_none() {
            let take = (BINARY_SNIFF_BYTES - self.sniff.len()).min(bytes.len());
            self.sniff.extend_from_slice(&bytes[..take]);
            if self.sniff.len() == BINARY_SNIFF_BYTES {
                self.decide_binary();
                if self.is_binary() {
                    return;
                }
            }
        }
        while !bytes.is_empty() {
            if self.line < self.first {
                // Skip to the first line of the page, counting lines.
                let wanted = usize::try_from(self.first - self.line).unwrap_or(usize::MAX);
                match memchr::memchr_iter(b'\n', bytes)
                    .take(wanted)
                    .enumerate()
                    .last()
                {
                    Some((i, at)) if i + 1 == wanted => {
                        self.line = self.first;
                        self.partial = false;
                        bytes = &bytes[at + 1..];
                    }
                    found => {
                        let count = found.map_or(0, |(i, _)| i + 1);
                        let after = found.map_or(0, |(_, at)| at + 1);
                        self.line += count as u64;
                        self.partial = count == 0 && self.partial || after < bytes.len();
                        return;
                    }
                }
            } else if self.line >= self.end || self.full {
                // Past the page: only count lines.
                let count = memchr::memchr_iter(b'\n', bytes).count();
                self.line += count as u64;
                self.partial = bytes.last() != Some(&b'\n') || count == 0 && self.partial;
                return;
            } else {
                match memchr::memchr(b'\n', bytes) {
                    Some(at) => {
                        self.add_to_line(&bytes[..at]);
                        self.end_line();
                        bytes = &bytes[at + 1..];
                    }
                    None => {
                        self.add_to_line(bytes);
                        return;
                    }
                }
            }
        }
    }

    /// Returns the page, or an error for a binary file or an offset past the end.
    pub fn finish(mut self) -> ToolOutput {
        if self.binary.is_none() {
            self.decide_binary();
        }
        if self.is_binary() {
            return ToolOutput::error(BINARY_MESSAGE);
        }
        if self.partial {
            if self.line >= self.first && self.line < self.end && !self.full {
                self.end_line();
            } else {
                self.line += 1;
            }
        }
        let total = self.line - 1;
        let first = self.first;
        if total == 0 {
            return if first == 1 {
                ToolOutput::ok("(the file is empty)")
            } else {
                ToolOutput::error(format!(
                    "offset {first} is past the end of the file, which is empty"
                ))
            };
        }
        if first > total {
            let s = if total == 1 { "" } else { "s" };
            return ToolOutput::error(format!(
                "offset {first} is past the end of the file, which has {total} line{s}"
            ));
        }
        let mut out = self.out;
        if self.last_shown < total {
            let _ = writeln!(
                out,
                "[lines {first}-{} of {total}; call read_file with offset={} to continue]",
                self.last_shown,
                self.last_shown + 1
            );
        }
        if self.cut_lines > 0 {
            let n = self.cut_lines;
            let s = if n == 1 { " was" } else { "s were" };
            let _ = writeln!(
                out,
                "[{n} line{s} longer than {READ_FILE_MAX_LINE_CHARS} characters and cut]"
            );
        }
        if self.crlf {
            out.push_str("[the file has \\r\\n line endings, not shown above]\n");
        }
        ToolOutput::ok(out)
    }

    fn decide_binary(&mut self) {
        self.binary = Some(looks_binary(&self.sniff));
        self.sniff = Vec::new();
    }

    /// Adds bytes of a line on the page: kept up to [`LINE_KEEP_BYTES`], counted after.
    fn add_to_line(&mut self, bytes: &[u8]) {
        let Some(&last) = bytes.last() else {
            return;
        };
        self.partial = true;
        self.last_byte = Some(last);
        let take = (LINE_KEEP_BYTES - self.kept.len()).min(bytes.len());
        self.kept.extend_from_slice(&bytes[..take]);
        self.dropped_chars += count_chars(&bytes[take..]);
    }

    /// Shows the current line (it is on the page) and moves to the next one.
    fn end_line(&mut self) {
        let number = self.line;
        self.line += 1;
        self.partial = false;
        let mut kept = std::mem::take(&mut self.kept);
        let mut dropped = std::mem::take(&mut self.dropped_chars);
        if self.last_byte.take() == Some(b'\r') {
            self.crlf = true;
            if dropped > 0 {
                dropped -= 1;
            } else {
                kept.pop();
            }
        }
        let text = String::from_utf8_lossy(&kept);
        let (shown, omitted) = match text.char_indices().nth(READ_FILE_MAX_LINE_CHARS) {
            None => (&text[..], dropped),
            Some((cut, _)) => (&text[..cut], text[cut..].chars().count() + dropped),
        };
        let shown_chars = if omitted > 0 {
            READ_FILE_MAX_LINE_CHARS
        } else {
            shown.chars().count()
        };
        if self.last_shown > 0 && self.out_chars + shown_chars + 8 > READ_FILE_MAX_CHARS {
            self.full = true;
            return;
        }
        let start = self.out.len();
        let _ = write!(self.out, "{number:>6}\t{shown}");
        if omitted > 0 {
            self.cut_lines += 1;
            let _ = write!(self.out, " [... line cut, {omitted} more characters]");
        }
        self.out.push('\n');
        self.out_chars += shown_chars + (self.out.len() - start - shown.len());
        self.last_shown = number;
        // Keep the allocation of a short line for the next one.
        if kept.capacity() <= LINE_KEEP_BYTES {
            kept.clear();
            self.kept = kept;
        }
    }
}

/// Returns whether bytes look like a binary file rather than text.
///
/// Looks at the first [`BINARY_SNIFF_BYTES`] only: a NUL byte there, or bytes that are not
/// UTF-8, mean binary. A UTF-8 sequence cut off by the end of that sample does not count, so a
/// driver may pass just the first block of a file.
pub fn looks_binary(bytes: &[u8]) -> bool {
    let sample = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    if sample.contains(&0) {
        return true;
    }
    match std::str::from_utf8(sample) {
        Ok(_) => false,
        Err(e) => e.error_len().is_some(),
    }
}

/// Renders a page of a text file for `read_file`, lines numbered from 1.
///
/// Each line is shown as `    12\tline` (the number right-aligned in six columns), with a
/// trailing `\r` removed (and the CRLF line endings mentioned once). The page starts at line
/// `offset` (default 1) and has at most `limit` lines (default
/// [`READ_FILE_DEFAULT_LINES`]) and about
/// [`READ_FILE_MAX_CHARS`] characters; lines longer than
/// [`READ_FILE_MAX_LINE_CHARS`] are cut. When lines
/// remain, a closing note gives the range shown and the offset to continue from. An offset
/// past the end is an error that says how many lines the file has. Linear in `text`.
///
/// This is a [`TextPager`] fed the whole text at once, without its binary check; drivers
/// reading a file use the pager directly, so they need not hold the whole file.
pub fn render_read(text: &str, offset: Option<u64>, limit: Option<u64>) -> ToolOutput {
    let mut pager = TextPager::new_without_binary_check(offset, limit);
    pager.feed(text.as_bytes());
    pager.finish()
}

/// Counts the characters of UTF-8 bytes by their lead bytes (exact for valid UTF-8).
fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn page(bytes: &[u8], offset: Option<u64>, limit: Option<u64>, chunk: usize) -> ToolOutput {
        let mut pager = TextPager::new(offset, limit);
        for piece in bytes.chunks(chunk.max(1)) {
            pager.feed(piece);
        }
        pager.finish()
    }

    #[test]
    fn every_chunk_size_gives_the_same_page() {
        let texts = [
            "",
            "\n",
            "\n\n",
            "a",
            "a\n",
            "one\ntwo\nthree",
            "one\r\ntwo\r\n",
            "x\r",
            "é\nü\n日本\n",
        ];
        let pages = [
            (None, None),
            (Some(1), Some(1)),
            (Some(2), Some(1)),
            (Some(2), Some(5)),
            (Some(3), None),
            (Some(4), None),
            (Some(0), Some(0)),
            (Some(u64::MAX), Some(u64::MAX)),
        ];
        for text in texts {
            for (offset, limit) in pages {
                let whole = render_read(text, offset, limit);
                for chunk in [1, 2, 3, 7, 1 << 20] {
                    assert_eq!(
                        page(text.as_bytes(), offset, limit, chunk),
                        whole,
                        "{text:?} {offset:?} {limit:?} chunk {chunk}"
                    );
                }
            }
        }
    }

    #[test]
    fn long_lines_are_cut_and_counted_without_keeping_them() {
        let long = "é".repeat(LINE_KEEP_BYTES * 3);
        let text = format!("short\n{long}\r\nend\n");
        let whole = render_read(&text, None, None);
        assert!(whole.content.contains("more characters]"));
        assert!(whole.content.contains("\\r\\n"));
        for chunk in [1, 1000, 1 << 20] {
            assert_eq!(page(text.as_bytes(), None, None, chunk), whole);
        }
        let huge = "z".repeat(3_000_000);
        let out = page(huge.as_bytes(), None, None, 65536);
        assert_eq!(out, render_read(&huge, None, None));
        assert!(out.content.len() < 3000);
    }

    #[test]
    fn budget_and_default_limit_survive_chunking() {
        let text = format!("{}\n", "y".repeat(1500)).repeat(500);
        assert_eq!(
            page(text.as_bytes(), None, None, 4096),
            render_read(&text, None, None)
        );
        let many = "line\n".repeat(5000);
        assert_eq!(
            page(many.as_bytes(), Some(1999), None, 777),
            render_read(&many, Some(1999), None)
        );
    }

    #[test]
    fn a_late_page_of_a_big_input() {
        let text: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
        let out = page(text.as_bytes(), Some(99_999), Some(5), 65536);
        assert_eq!(out.content, " 99999\t99999\n100000\t100000\n");
        let out = page(text.as_bytes(), Some(50_000), Some(1), 65536);
        assert_eq!(
            out.content,
            " 50000\t50000\n[lines 50000-50000 of 100000; call read_file with offset=50001 to \
             continue]\n"
        );
    }

    #[test]
    fn binary_input_is_refused_early() {
        let mut pager = TextPager::new(None, None);
        pager.feed(b"text\0more");
        assert!(
            !pager.is_binary(),
            "decided only with a full sample or at the end"
        );
        let out = pager.finish();
        assert_eq!(out, ToolOutput::error(BINARY_MESSAGE));

        let mut pager = TextPager::new(None, None);
        pager.feed(&[0u8; BINARY_SNIFF_BYTES]);
        assert!(pager.is_binary());
        pager.feed(b"ignored");
        assert!(pager.finish().is_error);

        // Bad bytes after the sample are shown lossily.
        let mut late = b"a\n".repeat(BINARY_SNIFF_BYTES);
        late.extend_from_slice(b"caf\xe9\n");
        let out = page(&late, Some(BINARY_SNIFF_BYTES as u64 + 1), None, 1000);
        assert_eq!(
            out.content,
            format!("{:>6}\tcaf\u{fffd}\n", BINARY_SNIFF_BYTES + 1)
        );
    }

    proptest! {
        #![proptest_config(crate::proptest_seeds::config())]
        #[test]
        fn any_split_gives_the_same_page(
            text in "[ab\r\n]{0,60}",
            offset in 0u64..8,
            limit in 0u64..8,
            chunk in 1usize..9,
        ) {
            let whole = render_read(&text, Some(offset), Some(limit));
            prop_assert_eq!(page(text.as_bytes(), Some(offset), Some(limit), chunk), whole);
        }
    }
}
