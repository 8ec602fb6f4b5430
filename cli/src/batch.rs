//! The output of one batch of events (what one read brought), written with as few system
//! calls as the order of stdout and stderr allows, without secrets, and flushed at the end of
//! the batch.
//!
//! A fast provider sends thousands of deltas a second; one `write` per delta costs more CPU
//! than everything else `exec` does with them. Batching per read keeps the latency a user
//! sees unchanged: nothing waits for more input before it is written.

use std::io::Write;

/// Which stream the pending bytes go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Out,
    Err,
}

/// Bytes for stdout and stderr, kept in the order they were produced: switching streams
/// writes what is pending for the other one first, so a terminal showing both sees the same
/// interleaving as with unbuffered writes.
#[derive(Debug)]
pub(crate) struct Batch<O: Write, E: Write> {
    out: O,
    err: E,
    pending: Vec<u8>,
    stream: Stream,
}

impl<O: Write, E: Write> Batch<O, E> {
    pub(crate) fn new(out: O, err: E) -> Self {
        Batch {
            out,
            err,
            pending: Vec::with_capacity(8 * 1024),
            stream: Stream::Out,
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

    /// Writes what is pending without secrets ([`crate::redact::redact`]), in one
    /// `write_all`, and flushes it (the end of a batch, or before asking the user something).
    pub(crate) fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        // The last stop before the terminal or pipe: one pass over the whole batch rather
        // than one per delta (a delta is a few bytes; the per-call cost was most of exec's
        // CPU time), and it also catches a secret spread over several deltas of the batch.
        // Everything printed came from strings: the checked conversion (fast for ASCII) nearly
        // always succeeds, and the lossy one is only the fallback.
        let text = match std::str::from_utf8(&self.pending) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(&self.pending),
        };
        let clean = crate::redact::redact(&text);
        // Output errors (a closed pipe) are ignored as `print!` would not: the turn goes on
        // and is saved; there is no one left to tell.
        let _ = match self.stream {
            Stream::Out => self
                .out
                .write_all(clean.as_bytes())
                .and_then(|()| self.out.flush()),
            Stream::Err => self
                .err
                .write_all(clean.as_bytes())
                .and_then(|()| self.err.flush()),
        };
        drop(clean);
        drop(text);
        self.pending.clear();
    }

    fn switch(&mut self, to: Stream) {
        if self.stream != to {
            self.flush();
            self.stream = to;
        }
    }

    /// The two writers, after a final flush.
    #[cfg(test)]
    pub(crate) fn into_parts(mut self) -> (O, E) {
        self.flush();
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
