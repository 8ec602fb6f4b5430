//! What a stdio server writes to its stderr, made fit for its log file: split into lines,
//! each line without the server's secrets (a server may print its own key while it starts),
//! and each cut at [`MAX_LINE`] bytes. The driver reads the pipe and writes the lines this
//! hands back; nothing here buffers more than one cut line, however long the server's line.
//!
//! The log itself is bounded by [`LogBudget`]: past [`Limits::max_log_bytes`]
//! (`maxLogBytes`), the driver moves it to `NAME.log.1` (replacing the one before) and starts
//! a fresh one, so a server flooding its stderr costs at most twice the limit on disk.
//!
//! [`Limits::max_log_bytes`]: crate::mcp::config::Limits::max_log_bytes

use crate::secrets::Secrets;

/// The longest line kept, in bytes; the rest of a longer line is counted, not kept.
pub const MAX_LINE: usize = 4096;

/// Turns a server's stderr bytes into log lines. Feed it the bytes as they come
/// ([`StderrLines::feed`]), then [`StderrLines::finish`] at the end of the pipe.
#[derive(Debug)]
pub struct StderrLines {
    secrets: Secrets,
    /// The current line, at most [`MAX_LINE`] bytes of it.
    line: Vec<u8>,
    /// How many bytes of the current line were left out.
    dropped: usize,
}

impl StderrLines {
    /// Lines without any of `secrets`.
    pub fn new(secrets: Secrets) -> Self {
        StderrLines {
            secrets,
            line: Vec::new(),
            dropped: 0,
        }
    }

    /// Takes the next bytes; calls `line` with each line they complete (without its line
    /// end).
    pub fn feed(&mut self, mut bytes: &[u8], mut line: impl FnMut(String)) {
        while let Some(end) = memchr::memchr(b'\n', bytes) {
            self.keep(&bytes[..end]);
            line(self.take());
            bytes = &bytes[end + 1..];
        }
        self.keep(bytes);
    }

    /// The end of the pipe: the last line, when it had no line end.
    pub fn finish(&mut self) -> Option<String> {
        (!self.line.is_empty() || self.dropped > 0).then(|| self.take())
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = MAX_LINE - self.line.len();
        let kept = bytes.len().min(room);
        self.line.extend_from_slice(&bytes[..kept]);
        self.dropped += bytes.len() - kept;
    }

    /// The current line, redacted (before the note of what was cut is added), and a fresh
    /// start.
    fn take(&mut self) -> String {
        let mut bytes = std::mem::take(&mut self.line);
        if bytes.last() == Some(&b'\r') && self.dropped == 0 {
            bytes.pop();
        }
        let text = String::from_utf8_lossy(&bytes);
        let mut text = self.secrets.redact(&text).into_owned();
        let dropped = std::mem::take(&mut self.dropped);
        if dropped > 0 {
            text.push_str(&format!("… ({dropped} more bytes)"));
        }
        text
    }
}

/// What to do before writing a line to a server's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogWrite {
    /// Append it.
    Append,
    /// Move the log to `NAME.log.1` (replacing it), start a fresh `NAME.log`, then append.
    RotateFirst,
}

/// Counts the bytes of a server's log and says when to rotate it: a line that would take the
/// log past its limit goes to a fresh one, so a log holds at most the limit (or one line, when
/// a single line is larger).
#[derive(Debug, Clone)]
pub struct LogBudget {
    max: u64,
    written: u64,
}

impl LogBudget {
    /// A budget of `max` bytes for a log that holds `written` bytes already (appended to from
    /// an earlier run).
    pub fn new(max: u64, written: u64) -> Self {
        LogBudget { max, written }
    }

    /// Whether a line of `len` bytes is appended as is, or after a rotation; counts it.
    pub fn admit(&mut self, len: usize) -> LogWrite {
        let len = len as u64;
        let decision = if self.written > 0 && self.written.saturating_add(len) > self.max {
            self.written = 0;
            LogWrite::RotateFirst
        } else {
            LogWrite::Append
        };
        self.written = self.written.saturating_add(len);
        decision
    }
}

#[cfg(test)]
#[path = "stderr_tests.rs"]
mod tests;
