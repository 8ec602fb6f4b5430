//! Layer 1: a sans-IO decoder for the WHATWG EventSource wire format (Server-Sent Events).
//!
//! [`Decoder`] follows "Interpreting an event stream" of the WHATWG HTML standard exactly. It
//! never reads a socket: the caller hands it bytes with [`Decoder::feed`], marks the end with
//! [`Decoder::feed_eof`], and after any input drains [`Decoder::poll_event`] until it returns
//! `Ok(None)` ("feed me more", or after the end "that was all"). Input may be split anywhere,
//! including inside a UTF-8 sequence, a CRLF pair or the leading BOM.
//!
//! ```
//! use hrns_core::sse::{Decoder, SseEvent};
//!
//! let mut decoder = Decoder::new();
//! let mut events = Vec::new();
//! for chunk in [&b"event: add\ndata: 1"[..], b"\r", b"\n\r\n: keep-alive\n"] {
//!     decoder.feed(chunk);
//!     while let Some(event) = decoder.poll_event()? {
//!         events.push(event);
//!     }
//! }
//! decoder.feed_eof();
//! while let Some(event) = decoder.poll_event()? {
//!     events.push(event);
//! }
//! assert_eq!(events, [SseEvent { event: Some("add".into()), data: "1".into(), id: None }]);
//! assert!(!decoder.is_truncated());
//! # Ok::<(), hrns_core::sse::DecodeError>(())
//! ```
//!
//! Choices the standard leaves to us, documented here once:
//! - Memory is bounded by the event size limit ([`Decoder::with_max_event_size`]): the pending
//!   event's data and type plus the line being read may not exceed it, checked at every poll,
//!   so a caller that polls after each feed holds at most the limit plus one fed chunk. Comment
//!   lines count too: they are buffered until their line end like any other line.
//! - `id:` with an empty value gives `Some("")` (the server reset the ID); `None` means no `id`
//!   field was ever accepted.
//! - A `retry` value too large for `u64` saturates to `u64::MAX`.
//! - Bytes fed after [`Decoder::feed_eof`] or after an error are ignored.

mod event;

pub use event::{SseEvent, SseEventBytes, SseEventRef, encode};

use memchr::{memchr, memchr2};
use std::ops::ControlFlow;

/// Default limit on one event's buffered size (16 MiB).
pub const DEFAULT_MAX_EVENT_SIZE: usize = 16 * 1024 * 1024;

/// The UTF-8 byte order mark, stripped once at the very start of a stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Why decoding stopped. Errors are terminal: once returned, every later call returns it again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The server sent an event (or a line) larger than the configured limit. Server's fault.
    #[error(
        "server-sent event exceeds the {limit}-byte limit: the server sent an oversized event or \
         line, which no chat answer needs; check the base URL and the server (embedders can set \
         SessionConfig::max_event_size)"
    )]
    EventTooLarge {
        /// The limit that was crossed, in bytes.
        limit: usize,
    },
}

/// Incremental EventSource decoder: bytes in, [`SseEvent`]s out.
///
/// Call order: after every [`feed`](Self::feed) or [`feed_eof`](Self::feed_eof), call
/// [`poll_event`](Self::poll_event) until it returns `Ok(None)` or an error. Each input byte is
/// scanned for line ends once (a sink that takes events itself may look at a line first,
/// a constant number of times); the consumed prefix of the buffer is dropped in amortised O(1).
#[derive(Debug, Clone)]
pub struct Decoder {
    /// Raw input. Bytes before `pos` are consumed and wait for compaction.
    buf: Vec<u8>,
    /// Start of the first line not processed yet.
    pos: usize,
    /// `buf[pos..scan]` is known to hold no CR or LF, so the next search starts at `scan`.
    scan: usize,
    /// The last line ended with a CR that was the last buffered byte: an LF right after it is
    /// the second half of that line end and is skipped.
    skip_lf: bool,
    /// Still at the start of the stream, where one BOM may appear.
    at_start: bool,
    /// `feed_eof` was called.
    eof: bool,
    /// The end of input has been reported by `poll_event`.
    finished: bool,
    /// Input ended inside an event (valid once `finished`).
    truncated: bool,
    /// The sticky error, if any.
    error: Option<DecodeError>,
    /// Limit on the pending event plus the line being read, in bytes.
    limit: usize,
    /// The standard's buffers.
    state: StreamState,
}

/// The largest buffer capacity a decoder keeps between events (reused, so ordinary events
/// allocate nothing; a larger one is dropped).
const KEPT_CAPACITY: usize = 64 * 1024;

/// The buffers of "Interpreting an event stream", kept apart from the raw input so a line can be
/// borrowed from `Decoder::buf` while they change.
#[derive(Debug, Clone, Default)]
struct StreamState {
    /// The data buffer, without the trailing LF the standard appends (see `has_data`). While
    /// the event has one data line, that line stays in the decoder's input instead (`line`).
    data: String,
    /// The value of the event's only data line so far, as a range of the decoder's input, not
    /// yet decoded; copied into `data` before the input moves, a second data line comes or
    /// the limit needs its decoded size.
    line: Option<(usize, usize)>,
    /// The dispatched event's data and type, lent by `poll_event_ref` until the next call
    /// (swapped with `data` and `event_type`, so no buffer is allocated per event).
    lent_data: String,
    lent_type: String,
    /// At least one `data` field since the last dispatch. The standard's "data buffer is an
    /// empty string" test is `!has_data`, since each `data` field appends at least an LF.
    has_data: bool,
    /// The event type buffer.
    event_type: String,
    /// The last event ID buffer; `None` until an `id` field is accepted.
    last_event_id: Option<String>,
    /// The reconnection time in milliseconds, set by `retry`.
    reconnection_time: Option<u64>,
    /// A field line was processed since the last blank line.
    in_event: bool,
}

/// Where a dispatched event's data is.
#[derive(Debug, Clone, Copy)]
enum Lent {
    /// In the decoder's input, at this range (one data line; decoded when lent).
    Input(usize, usize),
    /// In `StreamState::lent_data`.
    Buffer,
}

/// Where [`Decoder::decode_into`] hands its events.
pub(crate) trait Sink {
    /// Takes one dispatched event; `Break` stops decoding, and the rest of the input is kept as
    /// [`Decoder::feed`] keeps it.
    fn event(&mut self, event: SseEventBytes<'_>) -> ControlFlow<()>;

    /// Offered the rest of the input at each event boundary where nothing is pending (no field
    /// line since the last dispatch); returns how many bytes the sink took itself.
    ///
    /// What it takes must be whole events that each are one `data` line and a blank line
    /// ([`data_value_start`], then a value without CR or LF, then [`event_end`]), each line at
    /// most `limit` bytes and its value valid UTF-8: exactly the events the decoder would
    /// dispatch with that data and no type, and after which it is in the same state. A sink
    /// that recognises its common events this way skips the decoder's line-by-line work.
    #[inline]
    fn at_boundary(&mut self, rest: &[u8], limit: usize) -> usize {
        let _ = (rest, limit);
        0
    }
}

/// Where the value starts when `line` starts with a `data` field: after `data:` and one
/// optional space.
#[inline]
pub(crate) fn data_value_start(line: &[u8]) -> Option<usize> {
    match line {
        [b'd', b'a', b't', b'a', b':', b' ', ..] => Some(6),
        [b'd', b'a', b't', b'a', b':', ..] => Some(5),
        _ => None,
    }
}

/// How long the line end and the blank line that end a one-line event are, when `rest`
/// starts with them: LF LF or CR LF CR LF.
#[inline]
pub(crate) fn event_end(rest: &[u8]) -> Option<usize> {
    match rest {
        [b'\n', b'\n', ..] => Some(2),
        [b'\r', b'\n', b'\r', b'\n', ..] => Some(4),
        _ => None,
    }
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// A decoder with the [`DEFAULT_MAX_EVENT_SIZE`] limit.
    pub fn new() -> Self {
        Self::with_max_event_size(DEFAULT_MAX_EVENT_SIZE)
    }

    /// A decoder whose pending event (data and type) plus the line being read may hold at most
    /// `limit` bytes; more gives [`DecodeError::EventTooLarge`].
    pub fn with_max_event_size(limit: usize) -> Self {
        Self {
            buf: Vec::new(),
            pos: 0,
            scan: 0,
            skip_lf: false,
            at_start: true,
            eof: false,
            finished: false,
            truncated: false,
            error: None,
            limit,
            state: StreamState::default(),
        }
    }

    /// The limit given at construction, in bytes.
    pub fn max_event_size(&self) -> usize {
        self.limit
    }

    /// Only buffers. Never fails, never scans.
    ///
    /// Bytes fed after [`feed_eof`](Self::feed_eof) or after an error are ignored. Memory stays
    /// near the limit only if the caller polls after each feed.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.eof || self.error.is_some() || bytes.is_empty() {
            return;
        }
        // Drop the consumed prefix once it is at least as long as what remains, so each byte
        // is moved at most once on average.
        if self.pos > 0 && self.pos >= self.buf.len() - self.pos {
            self.compact();
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Marks the end of input.
    pub fn feed_eof(&mut self) {
        self.eof = true;
    }

    /// Whether [`feed_eof`](Self::feed_eof) was called.
    pub fn is_eof(&self) -> bool {
        self.eof
    }

    /// Returns the next event: `Ok(Some(event))`, or `Ok(None)` when more input is needed (or,
    /// after [`feed_eof`](Self::feed_eof), when the stream is over).
    ///
    /// Errors are sticky: once returned, every later call returns the same error.
    pub fn poll_event(&mut self) -> Result<Option<SseEvent>, DecodeError> {
        Ok(self.poll_event_ref()?.map(|event| event.to_event()))
    }

    /// [`poll_event`](Self::poll_event) without copies: the event is lent until the next call.
    pub fn poll_event_ref(&mut self) -> Result<Option<SseEventRef<'_>>, DecodeError> {
        let Some(lent) = self.next_dispatch()? else {
            return Ok(None);
        };
        let data = match lent {
            Lent::Input(from, to) => match std::str::from_utf8(&self.buf[from..to]) {
                Ok(text) => text,
                Err(_) => {
                    push_lossy(&mut self.state.lent_data, &self.buf[from..to]);
                    self.state.lent_data.as_str()
                }
            },
            Lent::Buffer => self.state.lent_data.as_str(),
        };
        Ok(Some(self.state.lend(data)))
    }

    /// [`poll_event_ref`](Self::poll_event_ref) with the data not yet decoded: its bytes as they
    /// arrived, which may hold invalid UTF-8. Decoded lossily (each maximal invalid sequence
    /// replaced by U+FFFD) they are `poll_event_ref`'s data. A reader that uses only part of
    /// the data (the chat chunk's fast path) checks only that part, instead of every byte of
    /// every event.
    pub fn poll_event_bytes(&mut self) -> Result<Option<SseEventBytes<'_>>, DecodeError> {
        let Some(lent) = self.next_dispatch()? else {
            return Ok(None);
        };
        Ok(Some(self.lend_bytes(lent)))
    }

    /// [`feed`](Self::feed) and drain [`poll_event_bytes`](Self::poll_event_bytes) in one,
    /// without copying `input` into the decoder: complete lines are read where they lie and
    /// only the incomplete last line is kept. Each event goes to `sink`; when it returns
    /// `Break`, decoding stops and the rest of `input` is kept as [`feed`](Self::feed) would
    /// keep it (a later poll or call reads it). Errors are those of `poll_event_bytes`, and
    /// sticky alike; bytes after [`feed_eof`](Self::feed_eof) are ignored.
    pub fn decode_bytes(
        &mut self,
        input: &[u8],
        sink: impl FnMut(SseEventBytes<'_>) -> ControlFlow<()>,
    ) -> Result<(), DecodeError> {
        /// A closure as a [`Sink`] that takes no events itself.
        struct Events<F>(F);
        impl<F: FnMut(SseEventBytes<'_>) -> ControlFlow<()>> Sink for Events<F> {
            #[inline]
            fn event(&mut self, event: SseEventBytes<'_>) -> ControlFlow<()> {
                (self.0)(event)
            }
        }
        self.decode_into(input, &mut Events(sink))
    }

    /// [`decode_bytes`](Self::decode_bytes) into a [`Sink`], which may also take whole simple
    /// events itself at event boundaries.
    pub(crate) fn decode_into(
        &mut self,
        input: &[u8],
        sink: &mut impl Sink,
    ) -> Result<(), DecodeError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        if self.eof || input.is_empty() {
            return Ok(());
        }
        // A line begun in an earlier input, or the start of the stream (where a BOM may be
        // split), is completed in the buffer: up to the first line end of `input`.
        let mut input = input;
        if self.pos < self.buf.len() || self.at_start {
            let cut = match memchr2(b'\n', b'\r', input) {
                Some(end) if input[end] == b'\r' && input.get(end + 1) == Some(&b'\n') => end + 2,
                Some(end) => end + 1,
                None => input.len(),
            };
            self.feed(&input[..cut]);
            while let Some(lent) = self.next_dispatch()? {
                if sink.event(self.lend_bytes(lent)).is_break() {
                    self.feed(&input[cut..]);
                    return Ok(());
                }
            }
            input = &input[cut..];
            if input.is_empty() {
                return Ok(());
            }
            if self.pos < self.buf.len() {
                // Not reached (the buffer ended at a line end and was read to its end); the
                // buffered way stays correct if it were.
                self.feed(input);
                while let Some(lent) = self.next_dispatch()? {
                    if sink.event(self.lend_bytes(lent)).is_break() {
                        break;
                    }
                }
                return Ok(());
            }
        }
        // Everything buffered is read: read lines straight from `input`.
        self.compact();
        let mut pos = 0;
        let mut stopped = false;
        if self.skip_lf {
            if input[0] == b'\n' {
                pos = 1;
            }
            self.skip_lf = false;
        }
        loop {
            if !self.state.in_event {
                // An event boundary with nothing pending: the sink may take whole events.
                let taken = sink.at_boundary(&input[pos..], self.limit);
                debug_assert!(taken == 0 || input[..pos + taken].ends_with(b"\n"));
                pos += taken;
            }
            let rest = &input[pos..];
            let found = match rest.first() {
                Some(b'\n' | b'\r') => Some(0),
                Some(_) => memchr2(b'\n', b'\r', rest),
                // All taken (the common end of a piece the sink took whole).
                None => None,
            };
            let Some(offset) = found else { break };
            let start = pos;
            let end = pos + offset;
            pos = match (input[end], input.get(end + 1)) {
                (b'\r', Some(b'\n')) => end + 2,
                (b'\r', None) => {
                    self.skip_lf = true;
                    end + 1
                }
                _ => end + 1,
            };
            match self.state.process_line(input, start, end, self.limit) {
                Ok(Some(lent)) => {
                    let data = match lent {
                        Lent::Input(from, to) => &input[from..to],
                        Lent::Buffer => self.state.lent_data.as_bytes(),
                    };
                    let stop = sink.event(self.state.lend_bytes(data)).is_break();
                    // The lend is over once the sink returns: a large event of several lines
                    // lets its buffers go before the next one fills its own.
                    if matches!(lent, Lent::Buffer) {
                        self.state.release_lent();
                    }
                    if stop {
                        stopped = true;
                        break;
                    }
                }
                Ok(None) => {}
                Err(error) => return Err(self.fail(error)),
            }
        }
        // What is left (the incomplete last line, or the rest after a `Break`) is kept, and a
        // data line still pending is copied out of `input` before it goes.
        self.state.keep_line(input);
        self.buf.extend_from_slice(&input[pos..]);
        if !stopped {
            // The incomplete line's size, as `end_of_buffer` checks it.
            self.scan = self.buf.len();
            if let Err(error) = self.state.check_line(&self.buf, self.buf.len(), self.limit) {
                return Err(self.fail(error));
            }
        }
        Ok(())
    }

    /// The event whose data `lent` says where, with the data as raw bytes.
    fn lend_bytes(&self, lent: Lent) -> SseEventBytes<'_> {
        let data = match lent {
            Lent::Input(from, to) => &self.buf[from..to],
            Lent::Buffer => self.state.lent_data.as_bytes(),
        };
        self.state.lend_bytes(data)
    }

    /// Reads lines up to the next dispatched event and says where its data is; `None` when
    /// more input is needed (or the stream is over).
    fn next_dispatch(&mut self) -> Result<Option<Lent>, DecodeError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        // The last lend is over: a large event's buffers go before the next event fills its own.
        self.state.release_lent();
        if self.finished {
            return Ok(None);
        }
        if self.at_start {
            // "The UTF-8 decode algorithm strips one leading UTF-8 Byte Order Mark (BOM), if any."
            let head = &self.buf[self.pos..];
            if head.len() < BOM.len() && BOM.starts_with(head) && !self.eof {
                return Ok(None);
            }
            if head.starts_with(BOM) {
                self.pos += BOM.len();
                self.scan = self.pos;
            }
            self.at_start = false;
        }
        loop {
            if self.skip_lf && self.pos < self.buf.len() {
                if self.buf[self.pos] == b'\n' {
                    self.pos += 1;
                    self.scan = self.scan.max(self.pos);
                }
                self.skip_lf = false;
            }
            // "a U+000D CARRIAGE RETURN U+000A LINE FEED (CRLF) character pair, a single U+000A
            // LINE FEED (LF) character not preceded by a U+000D CARRIAGE RETURN (CR) character,
            // and a single U+000D CARRIAGE RETURN (CR) character not followed by a U+000A LINE
            // FEED (LF) character being the ways in which a line can end."
            let rest = &self.buf[self.scan..];
            // A blank line (the end of every event) ends at once: no search for it.
            let found = match rest.first() {
                Some(b'\n' | b'\r') => Some(0),
                Some(_) => memchr2(b'\n', b'\r', rest),
                // All taken (the common end of a piece the sink took whole).
                None => None,
            };
            let Some(offset) = found else {
                self.end_of_buffer()?;
                return Ok(None);
            };
            let start = self.pos;
            let end = self.scan + offset;
            let next = match (self.buf[end], self.buf.get(end + 1)) {
                (b'\r', Some(b'\n')) => end + 2,
                (b'\r', None) => {
                    // The LF may still come in the next feed; the line ends here either way.
                    self.skip_lf = true;
                    end + 1
                }
                _ => end + 1,
            };
            self.pos = next;
            self.scan = next;
            match self.state.process_line(&self.buf, start, end, self.limit) {
                Ok(Some(data)) => return Ok(Some(data)),
                Ok(None) => {}
                Err(error) => return Err(self.fail(error)),
            }
        }
    }

    /// After [`feed_eof`](Self::feed_eof) and once [`poll_event`](Self::poll_event) returned
    /// `Ok(None)`: true when input ended inside an event (a field line was processed since the
    /// last blank line, or an unterminated non-empty last line was discarded). The chat layer
    /// reports this as a truncated stream.
    pub fn is_truncated(&self) -> bool {
        self.finished && self.truncated
    }

    /// The `retry` reconnection time last set by the stream, in ms.
    pub fn reconnection_time(&self) -> Option<u64> {
        self.state.reconnection_time
    }

    /// Bytes currently buffered (for memory assertions): raw input not yet compacted plus the
    /// pending event's data and type.
    pub fn buffered_len(&self) -> usize {
        self.buf.len() + self.state.data.len() + self.state.event_type.len()
    }

    /// No line end is buffered: check the size of the partial line, and at EOF finish.
    fn end_of_buffer(&mut self) -> Result<(), DecodeError> {
        self.scan = self.buf.len();
        let partial = self.buf.len() - self.pos;
        if let Err(error) = self.state.check_line(&self.buf, partial, self.limit) {
            return Err(self.fail(error));
        }
        if self.eof {
            // "Once the end of the file is reached, any pending data must be discarded. (If the
            // file ends in the middle of an event, before the final empty line, the incomplete
            // event is not dispatched.)"
            self.truncated = self.state.in_event || partial > 0;
            self.finished = true;
            self.buf = Vec::new();
            self.pos = 0;
            self.scan = 0;
            self.state.discard_pending();
        } else {
            self.compact();
        }
        Ok(())
    }

    /// Moves the unconsumed bytes to the front of the buffer (a data line kept in place is
    /// copied out first).
    fn compact(&mut self) {
        if self.pos > 0 {
            self.state.keep_line(&self.buf);
            self.buf.drain(..self.pos);
            self.scan -= self.pos;
            self.pos = 0;
        }
    }

    /// Records a terminal error and frees the buffers it makes useless.
    fn fail(&mut self, error: DecodeError) -> DecodeError {
        self.error = Some(error.clone());
        self.buf = Vec::new();
        self.pos = 0;
        self.scan = 0;
        self.state.discard_pending();
        error
    }
}

impl StreamState {
    /// The dispatched event with raw `data`, lent until the decoder's next call.
    fn lend_bytes<'a>(&'a self, data: &'a [u8]) -> SseEventBytes<'a> {
        SseEventBytes {
            event: (!self.lent_type.is_empty()).then_some(self.lent_type.as_str()),
            data,
            id: self.last_event_id.as_deref(),
        }
    }

    /// The dispatched event with `data`, lent until the decoder's next call.
    fn lend<'a>(&'a self, data: &'a str) -> SseEventRef<'a> {
        SseEventRef {
            event: (!self.lent_type.is_empty()).then_some(self.lent_type.as_str()),
            data,
            // "Set the last event ID string of the event source to the value of the last event
            // ID buffer."
            id: self.last_event_id.as_deref(),
        }
    }

    /// Fails when a line of `line_len` bytes on top of the pending event crosses `limit`.
    ///
    /// The pending event is measured decoded, so invalid bytes that grew into U+FFFD count at
    /// their decoded size; this check runs again before any further input is buffered.
    ///
    /// A data line kept in `input` is not validated yet: decoded, it is at most three times
    /// its length (each invalid byte becomes a 3-byte U+FFFD), so only when that bound could
    /// cross the limit is it decoded (copied out) to measure it exactly.
    fn check_line(
        &mut self,
        input: &[u8],
        line_len: usize,
        limit: usize,
    ) -> Result<(), DecodeError> {
        let fixed =
            |state: &Self| (state.data.len() + state.event_type.len()).saturating_add(line_len);
        if let Some((from, to)) = self.line {
            if fixed(self).saturating_add((to - from).saturating_mul(3)) > limit {
                self.keep_line(input);
            }
        }
        let kept = self.line.map_or(0, |(from, to)| to - from);
        if fixed(self).saturating_add(kept) > limit {
            Err(DecodeError::EventTooLarge { limit })
        } else {
            Ok(())
        }
    }

    /// Processes one complete line, `input[start..end]` (without its line end); on dispatch,
    /// says where the event's data is.
    fn process_line(
        &mut self,
        input: &[u8],
        start: usize,
        end: usize,
        limit: usize,
    ) -> Result<Option<Lent>, DecodeError> {
        self.check_line(input, end - start, limit)?;
        let line = &input[start..end];
        // "If the line is empty (a blank line): Dispatch the event".
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        // "If the line starts with a U+003A COLON character (:): Ignore the line."
        if line[0] == b':' {
            return Ok(None);
        }
        self.in_event = true;
        // "Collect the characters on the line before the first U+003A COLON character (:), and
        // let field be that string. [...] If value starts with a U+0020 SPACE character, remove
        // it from value." Without a colon: "using the whole line as the field name, and the
        // empty string as the field value."
        let (name, value) = match memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        // Names are compared as bytes: invalid UTF-8 (U+FFFD after decoding) never matches.
        match name {
            // "Set the event type buffer to field value."
            b"event" => {
                self.event_type.clear();
                push_lossy(&mut self.event_type, value);
            }
            // "Append the field value to the data buffer, then append a single U+000A LINE FEED
            // (LF) character to the data buffer." The LF goes in before the next value instead,
            // which saves removing it at dispatch.
            b"data" => {
                if self.has_data {
                    self.keep_line(input);
                    self.data.push('\n');
                    push_lossy(&mut self.data, value);
                } else {
                    // The common case, one data line: it stays where it is (decoded when
                    // the event is lent).
                    self.line = Some((end - value.len(), end));
                }
                self.has_data = true;
            }
            // "If the field value does not contain U+0000 NULL, then set the last event ID
            // buffer to the field value. Otherwise, ignore the field."
            b"id" if memchr(0, value).is_none() => {
                let id = self.last_event_id.get_or_insert_with(String::new);
                id.clear();
                push_lossy(id, value);
            }
            // "If the field value consists of only ASCII digits, then interpret the field value
            // as an integer in base ten, and set the event stream's reconnection time to that
            // integer. Otherwise, ignore the field." (An empty value is not a number.)
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                let ms = value.iter().fold(0u64, |acc, digit| {
                    acc.saturating_mul(10)
                        .saturating_add(u64::from(digit - b'0'))
                });
                self.reconnection_time = Some(ms);
            }
            // "Otherwise: The field is ignored."
            _ => {}
        }
        Ok(None)
    }

    /// "Dispatch the event": says where its data is, or `None` when no data field was seen.
    /// The event's type and data buffers become the lent ones, and the lent ones (cleared)
    /// the buffers of the next event.
    fn dispatch(&mut self) -> Option<Lent> {
        self.in_event = false;
        // "If the data buffer is an empty string, set the data buffer and the event type buffer
        // to the empty string and return."
        if !self.has_data {
            self.event_type.clear();
            return None;
        }
        self.has_data = false;
        // "If the event type buffer has a value other than the empty string, change the type of
        // the newly created event to equal the value of the event type buffer."
        std::mem::swap(&mut self.lent_type, &mut self.event_type);
        self.event_type.clear();
        std::mem::swap(&mut self.lent_data, &mut self.data);
        self.data.clear();
        // A large event's buffer is not kept for the next one, so the decoder holds the limit
        // once (in the lent event), not twice.
        if self.data.capacity() > KEPT_CAPACITY {
            self.data = String::new();
        }
        if self.event_type.capacity() > KEPT_CAPACITY {
            self.event_type = String::new();
        }
        Some(match self.line.take() {
            Some((from, to)) => Lent::Input(from, to),
            None => Lent::Buffer,
        })
    }

    /// Copies a data line kept in the input into the data buffer, before the input moves.
    fn keep_line(&mut self, input: &[u8]) {
        if let Some((from, to)) = self.line.take() {
            push_lossy(&mut self.data, &input[from..to]);
        }
    }

    /// Ends the last lend: its buffers are cleared for reuse, or dropped when large, so the
    /// decoder never holds a lent event of up to the limit beside a pending one.
    fn release_lent(&mut self) {
        self.lent_data.clear();
        self.lent_type.clear();
        if self.lent_data.capacity() > KEPT_CAPACITY {
            self.lent_data = String::new();
        }
        if self.lent_type.capacity() > KEPT_CAPACITY {
            self.lent_type = String::new();
        }
    }

    /// Drops the pending event at the end of input or on error.
    fn discard_pending(&mut self) {
        self.lent_data = String::new();
        self.lent_type = String::new();
        self.data = String::new();
        self.line = None;
        self.event_type = String::new();
        self.has_data = false;
    }
}

/// Appends `bytes` decoded as UTF-8, each maximal invalid subsequence replaced by U+FFFD (the
/// Encoding standard's replacement behaviour), without an intermediate allocation.
fn push_lossy(out: &mut String, bytes: &[u8]) {
    // `from_utf8` validates in bulk; `utf8_chunks` walks byte by byte, so keep it off the
    // common path.
    if let Ok(text) = std::str::from_utf8(bytes) {
        out.push_str(text);
        return;
    }
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }
}

#[cfg(test)]
mod tests;
