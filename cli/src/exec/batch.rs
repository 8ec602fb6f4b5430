//! The output of batches of events (what one read brought), written with as few system
//! calls as the order of stdout and stderr allows, without secrets, and flushed at the end of
//! a batch when no more input is waiting (or enough is held).
//!
//! A fast provider sends thousands of deltas a second; one `write` per delta costs more CPU
//! than everything else `exec` does with them, and on a stream read ahead one per read is
//! still hundreds. Holding output only while the next read is already there keeps the
//! latency a user sees unchanged: nothing waits for more input before it is written, but for
//! a tail of a batch that the next one could complete into a secret (at most seven bytes; see
//! [`Pieces`]), which is written with the next batch or when the text ends.

use hrns_core::secrets::{Ending, Pieces};
use std::io::Write;

/// Which stream the pending bytes go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Out,
    Err,
    /// Stdout, for bytes already without secrets (JSON lines, redacted as they were made).
    OutClean,
}

/// Bytes for stdout and stderr, kept in the order they were produced: switching streams
/// writes what is pending for the other one first, so a terminal showing both sees the same
/// interleaving as with unbuffered writes.
#[derive(Debug)]
pub(crate) struct Batch<O: Write, E: Write> {
    out: O,
    err: E,
    /// What is not written yet: a tail held back by the last flush first.
    pending: Vec<u8>,
    stream: Stream,
    /// The text of the current stream, redacted batch by batch as if whole.
    pieces: Pieces,
}

impl<O: Write, E: Write> Batch<O, E> {
    pub(crate) fn new(out: O, err: E) -> Self {
        Batch {
            out,
            err,
            pending: Vec::with_capacity(8 * 1024),
            stream: Stream::Out,
            pieces: Pieces::new(),
        }
    }

    /// The buffer for stdout.
    pub(crate) fn out(&mut self) -> &mut Vec<u8> {
        self.switch(Stream::Out);
        &mut self.pending
    }

    /// The buffer for stderr.
    pub(crate) fn err(&mut self) -> &mut Vec<u8> {
        self.switch(Stream::Err);
        &mut self.pending
    }

    /// The buffer for stdout, for bytes that hold no secret (already redacted): written as
    /// they are.
    pub(crate) fn out_clean(&mut self) -> &mut Vec<u8> {
        self.switch(Stream::OutClean);
        &mut self.pending
    }

    /// How many bytes wait to be written.
    pub(crate) fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// The end of a batch, with more of the text to come: writes what is pending without
    /// secrets, in one `write_all`, and flushes it; a tail that the next batch could complete
    /// into a secret stays pending.
    pub(crate) fn flush(&mut self) {
        self.write_pending(Ending::More);
    }

    /// The end of the text (an answer ended, a tool call starts, a question or a warning is
    /// about to be written elsewhere): writes everything pending, without secrets.
    pub(crate) fn finish(&mut self) {
        self.write_pending(Ending::Last);
    }

    fn write_pending(&mut self, ending: Ending) {
        if self.pending.is_empty() {
            return;
        }
        // The last stop before the terminal or pipe: one pass over the whole batch rather
        // than one per delta (a delta is a few bytes; the per-call cost was most of exec's
        // CPU time), and it also catches a secret spread over several deltas of the batch,
        // and, with the tail held back, over several batches.
        // Everything printed came from strings: the checked conversion (fast for ASCII) nearly
        // always succeeds, and the lossy one is only the fallback (it writes everything).
        let (clean, held) = match (self.stream, std::str::from_utf8(&self.pending)) {
            (Stream::OutClean, _) => (std::borrow::Cow::Borrowed(&self.pending[..]), 0),
            (_, Ok(text)) => {
                let (clean, held) = crate::host::redact::with_secrets(|secrets| {
                    match self.pieces.redact(secrets, text, ending) {
                        (std::borrow::Cow::Borrowed(clean), held) => {
                            (std::borrow::Cow::Borrowed(clean.as_bytes()), held)
                        }
                        (std::borrow::Cow::Owned(clean), held) => {
                            (std::borrow::Cow::Owned(clean.into_bytes()), held)
                        }
                    }
                });
                (clean, held)
            }
            (_, Err(_)) => {
                let text = String::from_utf8_lossy(&self.pending);
                let (clean, _) = crate::host::redact::with_secrets(|secrets| {
                    self.pieces.redact(secrets, &text, Ending::Last)
                });
                (std::borrow::Cow::Owned(clean.into_owned().into_bytes()), 0)
            }
        };
        // Output errors (a closed pipe) are ignored as `print!` would not: the turn goes on
        // and is saved; there is no one left to tell.
        let _ = match self.stream {
            Stream::Out | Stream::OutClean => {
                self.out.write_all(&clean).and_then(|()| self.out.flush())
            }
            Stream::Err => self.err.write_all(&clean).and_then(|()| self.err.flush()),
        };
        drop(clean);
        let written = self.pending.len() - held;
        self.pending.drain(..written);
    }

    /// A change of stream ends the text of the last one.
    fn switch(&mut self, to: Stream) {
        if self.stream != to {
            self.finish();
            self.stream = to;
        }
    }

    /// The two writers, after a final flush.
    #[cfg(test)]
    pub(crate) fn into_parts(mut self) -> (O, E) {
        self.finish();
        (self.out, self.err)
    }
}

/// Stdout and stderr without the standard library's line buffering (which would split one
/// batch into a write per line): duplicates of the descriptors, each `write_all` one system
/// call for anything a pipe accepts at once. Falls back to the standard handles.
pub(crate) fn std_streams() -> Batch<Box<dyn Write>, Box<dyn Write>> {
    use std::os::fd::AsFd;
    fn raw(fd: std::io::Result<std::os::fd::OwnedFd>, or: Box<dyn Write>) -> Box<dyn Write> {
        match fd {
            Ok(fd) => Box::new(std::fs::File::from(fd)),
            Err(_) => or,
        }
    }
    // Anything already buffered by `print!` goes first.
    let _ = std::io::stdout().flush();
    Batch::new(
        raw(
            std::io::stdout().as_fd().try_clone_to_owned(),
            Box::new(std::io::stdout()),
        ),
        raw(
            std::io::stderr().as_fd().try_clone_to_owned(),
            Box::new(std::io::stderr()),
        ),
    )
}
