//! ACP's framing: "messages are delimited by newlines (`\n`), and MUST NOT contain embedded
//! newlines" (the stdio transport of the Agent Client Protocol, as of JSON-RPC over stdio).
//!
//! [`LineDecoder`] only buffers on [`feed`](LineDecoder::feed); [`poll_line`](LineDecoder::poll_line)
//! hands out one complete line at a time, `Ok(None)` meaning "feed me more". A line longer than
//! the documented limit is an error of its own, reported once; its bytes are dropped up to the
//! next newline, so one hostile message neither grows memory nor stops the ones after it.
//!
//! Not MCP's [`crate::mcp::jsonrpc::LineDecoder`]: there hrns is the client of a server it
//! started, and a line past the limit ends the connection; here hrns is the agent an editor
//! talks to, which answers a bad line and keeps serving.

/// The longest message [`LineDecoder::new`] accepts: 64 MiB, room for a prompt with a few
/// embedded images in base64 and far below what would hurt.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024 * 1024;

/// What went wrong with one line. Not sticky: the next line is read as usual.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The peer sent a line longer than the limit (its fault); the line was dropped.
    #[error("a message longer than {limit} bytes was dropped")]
    TooLong {
        /// The limit in bytes.
        limit: usize,
    },
    /// The input ended in the middle of a line (the peer closed its end mid-message); the
    /// partial line was dropped.
    #[error("the input ended in the middle of a message ({bytes} bytes were dropped)")]
    Truncated {
        /// How many bytes the partial line had.
        bytes: usize,
    },
}

/// Splits a byte stream into lines, each at most `max` bytes (without its line end).
#[derive(Debug)]
pub struct LineDecoder {
    buf: Vec<u8>,
    /// Where the scan for `\n` resumes in `buf` (each byte is scanned once).
    scanned: usize,
    max: usize,
    /// Dropping the rest of a line that was too long.
    skipping: bool,
    eof: bool,
}

impl Default for LineDecoder {
    fn default() -> Self {
        LineDecoder::new(DEFAULT_MAX_LINE)
    }
}

impl LineDecoder {
    /// A decoder for lines of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        LineDecoder {
            buf: Vec::new(),
            scanned: 0,
            max,
            skipping: false,
            eof: false,
        }
    }

    /// Buffers `bytes`; nothing is parsed until [`poll_line`](LineDecoder::poll_line).
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.skipping {
            // Only the end of the dropped line matters.
            if let Some(i) = memchr::memchr(b'\n', bytes) {
                self.skipping = false;
                self.buf.extend_from_slice(&bytes[i + 1..]);
            }
        } else {
            self.buf.extend_from_slice(bytes);
        }
    }

    /// Bytes held for lines not yet complete.
    pub fn buffered_len(&self) -> usize {
        self.buf.len()
    }

    /// Marks the end of the input.
    pub fn feed_eof(&mut self) {
        self.eof = true;
    }

    /// The next complete line (without `\n` or a `\r` before it), `Ok(None)` when more input
    /// is needed or the input has ended, or the error of a line that could not be kept.
    /// Blank lines are skipped.
    pub fn poll_line(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        loop {
            match memchr::memchr(b'\n', &self.buf[self.scanned..]) {
                Some(i) => {
                    let end = self.scanned + i;
                    let mut line: Vec<u8> = self.buf.drain(..=end).collect();
                    self.scanned = 0;
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    if line.len() > self.max {
                        return Err(FrameError::TooLong { limit: self.max });
                    }
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    return Ok(Some(line));
                }
                None => {
                    self.scanned = self.buf.len();
                    // A `\r` at the end may be the start of the line end.
                    let held = self.buf.len() - usize::from(self.buf.last() == Some(&b'\r'));
                    if held > self.max {
                        // Dropped now, not when its end comes: memory stays bounded.
                        self.buf.clear();
                        self.scanned = 0;
                        self.skipping = !self.eof;
                        return Err(FrameError::TooLong { limit: self.max });
                    }
                    if self.eof && !self.buf.is_empty() {
                        let blank = self.buf.iter().all(u8::is_ascii_whitespace);
                        let bytes = self.buf.len();
                        self.buf.clear();
                        self.scanned = 0;
                        if !blank {
                            return Err(FrameError::Truncated { bytes });
                        }
                    }
                    return Ok(None);
                }
            }
        }
    }
}
