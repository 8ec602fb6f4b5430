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

use memchr::{memchr, memchr2};

/// Default limit on one event's buffered size (16 MiB).
pub const DEFAULT_MAX_EVENT_SIZE: usize = 16 * 1024 * 1024;

/// The UTF-8 byte order mark, stripped once at the very start of a stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event, as the standard's `MessageEvent` would carry it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event` field; `None` means the default type "message".
    pub event: Option<String>,
    /// Data lines joined with "\n".
    pub data: String,
    /// The last event ID buffer at dispatch time (persists across events, per spec); None if never set.
    pub id: Option<String>,
}

impl SseEvent {
    /// The event type, `"message"` when the stream set none (the standard's default).
    pub fn event_type(&self) -> &str {
        self.event.as_deref().unwrap_or("message")
    }
}

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
/// scanned for line ends once; the consumed prefix of the buffer is dropped in amortised O(1).
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

/// The buffers of "Interpreting an event stream", kept apart from the raw input so a line can be
/// borrowed from `Decoder::buf` while they change.
#[derive(Debug, Clone, Default)]
struct StreamState {
    /// The data buffer, without the trailing LF the standard appends (see `has_data`).
    data: String,
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
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
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
            let Some(offset) = memchr2(b'\n', b'\r', &self.buf[self.scan..]) else {
                return self.end_of_buffer();
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
            match self.state.process_line(&self.buf[start..end], self.limit) {
                Ok(Some(event)) => return Ok(Some(event)),
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
    fn end_of_buffer(&mut self) -> Result<Option<SseEvent>, DecodeError> {
        self.scan = self.buf.len();
        let partial = self.buf.len() - self.pos;
        if let Err(error) = self.state.check_line(partial, self.limit) {
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
        Ok(None)
    }

    /// Moves the unconsumed bytes to the front of the buffer.
    fn compact(&mut self) {
        if self.pos > 0 {
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
    /// Fails when a line of `line_len` bytes on top of the pending event crosses `limit`.
    ///
    /// The pending event is measured decoded, so invalid bytes that grew into U+FFFD count at
    /// their decoded size; this check runs again before any further input is buffered.
    fn check_line(&self, line_len: usize, limit: usize) -> Result<(), DecodeError> {
        let pending = self.data.len() + self.event_type.len();
        if pending.saturating_add(line_len) > limit {
            Err(DecodeError::EventTooLarge { limit })
        } else {
            Ok(())
        }
    }

    /// Processes one complete line (without its line end); returns an event on dispatch.
    fn process_line(&mut self, line: &[u8], limit: usize) -> Result<Option<SseEvent>, DecodeError> {
        self.check_line(line.len(), limit)?;
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
                    self.data.push('\n');
                }
                self.has_data = true;
                push_lossy(&mut self.data, value);
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

    /// "Dispatch the event": returns the event, or `None` when no data field was seen.
    fn dispatch(&mut self) -> Option<SseEvent> {
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
        let event = (!self.event_type.is_empty()).then(|| std::mem::take(&mut self.event_type));
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            // "Set the last event ID string of the event source to the value of the last event
            // ID buffer."
            id: self.last_event_id.clone(),
        })
    }

    /// Drops the pending event at the end of input or on error.
    fn discard_pending(&mut self) {
        self.data = String::new();
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

/// Encodes an event in SSE wire form: `event` and `id` lines if set, one `data:` line per line
/// of data, then a blank line.
///
/// Data is split at CRLF, LF and lone CR, so a CR in data decodes as LF. Hence
/// `decode(encode(e)) == e` for every event whose data has no CR, whose `event` is non-empty and
/// whose `event`/`id` have no CR or LF (and `id` no NUL). Used by tests and the mock server.
pub fn encode(event: &SseEvent) -> String {
    let mut out = String::with_capacity(event.data.len() + 32);
    if let Some(event_type) = &event.event {
        out.push_str("event: ");
        out.push_str(event_type);
        out.push('\n');
    }
    if let Some(id) = &event.id {
        out.push_str("id: ");
        out.push_str(id);
        out.push('\n');
    }
    let mut rest = event.data.as_str();
    loop {
        let line_end = memchr2(b'\n', b'\r', rest.as_bytes());
        out.push_str("data: ");
        out.push_str(&rest[..line_end.unwrap_or(rest.len())]);
        out.push('\n');
        let Some(end) = line_end else { break };
        let skip = if rest[end..].starts_with("\r\n") {
            2
        } else {
            1
        };
        rest = &rest[end + skip..];
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Everything a run observes, compared between feeding strategies.
    #[derive(Debug, Default, PartialEq)]
    struct Outcome {
        events: Vec<SseEvent>,
        error: Option<DecodeError>,
        truncated: bool,
        retry: Option<u64>,
    }

    /// Polls until `Ok(None)` or an error; returns false once an error was recorded.
    fn drain(decoder: &mut Decoder, out: &mut Outcome) -> bool {
        loop {
            match decoder.poll_event() {
                Ok(Some(event)) => out.events.push(event),
                Ok(None) => return true,
                Err(error) => {
                    assert_eq!(decoder.poll_event(), Err(error.clone()), "error not sticky");
                    out.error = Some(error);
                    return false;
                }
            }
        }
    }

    /// Feeds `chunks` in order, draining after each, then optionally EOF.
    fn run<'a>(limit: usize, chunks: impl IntoIterator<Item = &'a [u8]>, eof: bool) -> Outcome {
        let mut decoder = Decoder::with_max_event_size(limit);
        let mut out = Outcome::default();
        let mut ok = true;
        for chunk in chunks {
            decoder.feed(chunk);
            ok = drain(&mut decoder, &mut out);
            if !ok {
                break;
            }
        }
        // After an error the decoder returns it again (checked in `drain`); only a clean end
        // must stay `Ok(None)`. EOF can itself raise the error: a partial BOM held back at the
        // start is measured against the limit only once no more input can complete it.
        if ok && eof {
            decoder.feed_eof();
            if drain(&mut decoder, &mut out) {
                assert_eq!(decoder.poll_event(), Ok(None), "end not stable");
            }
        }
        out.truncated = decoder.is_truncated();
        out.retry = decoder.reconnection_time();
        out
    }

    fn whole(input: &[u8], eof: bool) -> Outcome {
        run(DEFAULT_MAX_EVENT_SIZE, [input], eof)
    }

    fn bytewise(input: &[u8]) -> Outcome {
        run(DEFAULT_MAX_EVENT_SIZE, input.chunks(1), true)
    }

    type Expected = (Option<&'static str>, &'static str, Option<&'static str>);

    fn ev((event, data, id): Expected) -> SseEvent {
        SseEvent {
            event: event.map(Into::into),
            data: data.into(),
            id: id.map(Into::into),
        }
    }

    /// A test vector: input bytes, expected events `(event, data, id)`, truncation, retry.
    struct Case {
        name: &'static str,
        input: &'static [u8],
        events: &'static [Expected],
        truncated: bool,
        retry: Option<u64>,
    }

    const fn case(name: &'static str, input: &'static [u8], events: &'static [Expected]) -> Case {
        Case {
            name,
            input,
            events,
            truncated: false,
            retry: None,
        }
    }

    const fn cut(mut c: Case) -> Case {
        c.truncated = true;
        c
    }

    const fn retry(mut c: Case, ms: u64) -> Case {
        c.retry = Some(ms);
        c
    }

    const M: Option<&str> = None;

    #[rustfmt::skip]
    const CASES: &[Case] = &[
        case("empty input", b"", &[]),
        case("lf", b"data: a\n\n", &[(M, "a", M)]),
        case("crlf", b"data: a\r\n\r\n", &[(M, "a", M)]),
        case("cr", b"data: a\r\r", &[(M, "a", M)]),
        case("mixed ends", b"data: a\r\ndata: b\rdata: c\n\r\n", &[(M, "a\nb\nc", M)]),
        case("lf then cr is two ends", b"data: a\n\r", &[(M, "a", M)]),
        case("cr cr lf", b"data: a\r\r\n", &[(M, "a", M)]),
        case("blank lines between", b"\n\n\r\ndata: a\n\n\n\r", &[(M, "a", M)]),
        case("bom", b"\xEF\xBB\xBFdata: a\n\n", &[(M, "a", M)]),
        case("second bom kept", b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n", &[]),
        case("bom not at start", b"data: a\n\n\xEF\xBB\xBFdata: b\n\n", &[(M, "a", M)]),
        case("bom in value", b"data: \xEF\xBB\xBFx\n\n", &[(M, "\u{FEFF}x", M)]),
        case("partial bom", b"\xEF\xBBdata: a\n\n", &[]),
        cut(case("partial bom then eof", b"\xEF\xBB", &[])),
        case("bom alone", b"\xEF\xBB\xBF", &[]),
        case("comments", b":hi\ndata: a\n: x\n\n:\n\n", &[(M, "a", M)]),
        case("comment only block", b":x\n\n", &[]),
        case("event", b"event: add\ndata: 1\n\n", &[(Some("add"), "1", M)]),
        case("empty event is message", b"event:\ndata: 1\n\n", &[(M, "1", M)]),
        case("event last wins", b"event: a\nevent: b\ndata: 1\n\n", &[(Some("b"), "1", M)]),
        case("event resets", b"event: a\ndata: 1\n\ndata: 2\n\n", &[(Some("a"), "1", M), (M, "2", M)]),
        case("event reset without data", b"event: a\n\ndata: 2\n\n", &[(M, "2", M)]),
        case("id persists", b"id: 1\ndata: a\n\ndata: b\n\n", &[(M, "a", Some("1")), (M, "b", Some("1"))]),
        case("empty id resets", b"id: 1\ndata: a\n\nid\ndata: b\n\n", &[(M, "a", Some("1")), (M, "b", Some(""))]),
        case("id from no-data block", b"id: 7\n\ndata: a\n\n", &[(M, "a", Some("7"))]),
        case("id with nul ignored", b"id: 1\n\nid: a\0b\ndata: x\n\n", &[(M, "x", Some("1"))]),
        retry(case("retry", b"retry: 1000\n\n", &[]), 1000),
        retry(cut(case("retry leading zeros", b"retry:007\n", &[])), 7),
        retry(case("retry non-digits ignored", b"retry: 5\nretry: 6a\nretry: -1\nretry:\nretry\nretry:  8\n\n", &[]), 5),
        retry(case("retry saturates", b"retry: 99999999999999999999999\n\n", &[]), u64::MAX),
        case("unknown field", b"foo: bar\ndata: a\n\n", &[(M, "a", M)]),
        case("case sensitive", b"Data: a\nDATA: b\nEvent: e\n\n", &[]),
        case("case sensitive event", b"Event: e\ndata: a\n\n", &[(M, "a", M)]),
        case("space before colon", b"data : a\n\n", &[]),
        case("leading space in name", b" data: a\n\n", &[]),
        case("no colon is empty value", b"data\n\n", &[(M, "", M)]),
        case("no colon twice", b"data\ndata\n\n", &[(M, "\n", M)]),
        case("no space", b"data:a\n\n", &[(M, "a", M)]),
        case("one space stripped", b"data:  a\n\n", &[(M, " a", M)]),
        case("tab kept", b"data:\ta\n\n", &[(M, "\ta", M)]),
        case("colon in value", b"data: a:b\n\n", &[(M, "a:b", M)]),
        case("multi-line data", b"data: a\ndata:\ndata: b\n\n", &[(M, "a\n\nb", M)]),
        case("empty data dispatches", b"data:\n\ndata: \n\n", &[(M, "", M), (M, "", M)]),
        case("no data no dispatch", b"event: x\nid\nretry: x\n\n", &[]),
        case("nul in data", b"data: a\0b\n\n", &[(M, "a\0b", M)]),
        cut(case("truncated event", b"data: a\n\ndata: b\n", &[(M, "a", M)])),
        cut(case("unterminated line", b"data: a", &[])),
        cut(case("unterminated comment", b"data: a\n\n:c", &[(M, "a", M)])),
        case("terminated comment tail", b"data: a\n\n:c\n", &[(M, "a", M)]),
        cut(case("pending id only", b"id: 1\n", &[])),
        cut(case("unterminated field", b"data: a\n\nid", &[(M, "a", M)])),
        case("invalid byte", b"data: a\xFFb\n\n", &[(M, "a\u{FFFD}b", M)]),
        case("truncated sequence", b"data: \xE2\x82\n\n", &[(M, "\u{FFFD}", M)]),
        case("invalid in event", b"event: \xC0\ndata: x\n\n", &[(Some("\u{FFFD}"), "x", M)]),
        case("invalid in name", b"dat\xE1: x\n\n", &[]),
        case("utf8 kept", b"data: \xC3\xBC\xE2\x82\xAC\xF0\x9F\x98\x80\n\n", &[(M, "ü€😀", M)]),
        case("spec stock", b"data: YHOO\ndata: +2\ndata: 10\n\n", &[(M, "YHOO\n+2\n10", M)]),
        cut(case(
            "spec four blocks",
            b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n",
            &[(M, "first event", Some("1")), (M, "second event", Some(""))],
        )),
        cut(case("spec empty data", b"data\n\ndata\ndata\n\ndata:", &[(M, "", M), (M, "\n", M)])),
        case("spec space", b"data:test\n\ndata: test\n\n", &[(M, "test", M), (M, "test", M)]),
    ];

    #[test]
    fn vectors_three_ways() {
        for case in CASES {
            let events: Vec<SseEvent> = case.events.iter().copied().map(ev).collect();
            let expected = Outcome {
                events,
                error: None,
                truncated: case.truncated,
                retry: case.retry,
            };
            let no_eof = whole(case.input, false);
            assert_eq!(
                no_eof.events, expected.events,
                "{}: whole, no EOF",
                case.name
            );
            assert_eq!(no_eof.error, None, "{}: whole, no EOF", case.name);
            assert_eq!(whole(case.input, true), expected, "{}: whole", case.name);
            assert_eq!(
                bytewise(case.input),
                expected,
                "{}: byte at a time",
                case.name
            );
        }
    }

    #[test]
    fn cr_split_across_feeds_is_one_line_end() {
        let chunks: [&[u8]; 4] = [b"data: a\r", b"\ndata: b\r", b"\n", b"\r\n"];
        let out = run(DEFAULT_MAX_EVENT_SIZE, chunks, true);
        assert_eq!(out.events, [ev((M, "a\nb", M))]);
        assert!(!out.truncated);
    }

    #[test]
    fn cr_at_end_of_feed_ends_the_line_at_once() {
        let mut decoder = Decoder::new();
        decoder.feed(b"data: a\r");
        assert_eq!(decoder.poll_event(), Ok(None));
        decoder.feed(b"\r");
        assert_eq!(decoder.poll_event(), Ok(Some(ev((M, "a", M)))));
        decoder.feed(b"\n");
        assert_eq!(
            decoder.poll_event(),
            Ok(None),
            "LF after CR CR is a blank line"
        );
    }

    #[test]
    fn utf8_split_across_feeds() {
        let input = "data: é€😀\n\n".as_bytes();
        for split in 0..=input.len() {
            let out = run(
                DEFAULT_MAX_EVENT_SIZE,
                [&input[..split], &input[split..]],
                true,
            );
            assert_eq!(out.events, [ev((M, "é€😀", M))], "split at {split}");
        }
    }

    #[test]
    fn bom_split_across_feeds() {
        let mut decoder = Decoder::new();
        for byte in BOM {
            decoder.feed(&[*byte]);
            assert_eq!(decoder.poll_event(), Ok(None));
        }
        decoder.feed(b"\xEF\xBB\xBFdata: a\n\n");
        assert_eq!(
            decoder.poll_event(),
            Ok(None),
            "second BOM is part of the field name"
        );
        decoder.feed(b"data: b\n\n");
        assert_eq!(decoder.poll_event(), Ok(Some(ev((M, "b", M)))));
    }

    #[test]
    fn event_type_defaults_to_message() {
        assert_eq!(SseEvent::default().event_type(), "message");
        let event = SseEvent {
            event: Some("add".into()),
            ..SseEvent::default()
        };
        assert_eq!(event.event_type(), "add");
    }

    #[test]
    fn constructors() {
        assert_eq!(Decoder::new().max_event_size(), DEFAULT_MAX_EVENT_SIZE);
        assert_eq!(Decoder::default().max_event_size(), DEFAULT_MAX_EVENT_SIZE);
        assert_eq!(Decoder::with_max_event_size(10).max_event_size(), 10);
    }

    #[test]
    fn limit_counts_data_type_and_line() {
        // "data: abc" is 9 bytes; with limit 9 it fits, with 8 it does not.
        let input = b"data: abc\n\n";
        assert_eq!(run(9, [&input[..]], true).events, [ev((M, "abc", M))]);
        let too_large = Some(DecodeError::EventTooLarge { limit: 8 });
        assert_eq!(run(8, [&input[..]], true).error, too_large);
        // Pending data (3) + type (1) + "data: xyz" (9) = 13.
        let input = b"event: t\ndata: abc\ndata: xyz\n\n";
        assert_eq!(
            run(13, [&input[..]], true).events,
            [ev((Some("t"), "abc\nxyz", M))]
        );
        assert!(run(12, [&input[..]], true).error.is_some());
    }

    #[test]
    fn event_too_large_is_sticky() {
        let mut decoder = Decoder::with_max_event_size(16);
        decoder.feed(b"data: ok\n\ndata: 0123456789\ndata: 0123456789\n\n");
        assert_eq!(decoder.poll_event(), Ok(Some(ev((M, "ok", M)))));
        let error = DecodeError::EventTooLarge { limit: 16 };
        assert_eq!(decoder.poll_event(), Err(error.clone()));
        assert_eq!(decoder.poll_event(), Err(error.clone()));
        decoder.feed(b"data: x\n\n");
        decoder.feed_eof();
        assert_eq!(decoder.poll_event(), Err(error.clone()));
        assert_eq!(decoder.buffered_len(), 0);
        assert!(!decoder.is_truncated());
        assert!(error.to_string().contains("16-byte limit"));
    }

    #[test]
    fn replacement_characters_count_towards_the_limit() {
        // 12 raw bytes fit in 20, but seven U+FFFD take 21.
        let out = run(20, [&b"data:\xFF\xFF\xFF\xFF\xFF\xFF\xFF\n\n"[..]], true);
        assert_eq!(out.error, Some(DecodeError::EventTooLarge { limit: 20 }));
    }

    #[test]
    fn long_line_errors_before_eof_with_bounded_memory() {
        let limit = 1000;
        let chunk = [b'x'; 100];
        let mut decoder = Decoder::with_max_event_size(limit);
        decoder.feed(b"data: ");
        let mut polls = 0;
        let error = loop {
            decoder.feed(&chunk);
            polls += 1;
            match decoder.poll_event() {
                Ok(None) => assert!(decoder.buffered_len() <= limit, "buffered too much"),
                Ok(Some(event)) => panic!("unexpected {event:?}"),
                Err(error) => break error,
            }
            assert!(polls < 100, "no error");
        };
        assert_eq!(error, DecodeError::EventTooLarge { limit });
        assert_eq!(polls, 10);
        for _ in 0..100 {
            decoder.feed(&chunk);
        }
        assert_eq!(
            decoder.buffered_len(),
            0,
            "input after an error is not kept"
        );
    }

    #[test]
    fn long_comment_counts_towards_the_limit() {
        let mut input = vec![b':'; 2000];
        input.push(b'\n');
        assert!(run(1000, [&input[..]], true).error.is_some());
    }

    #[test]
    fn buffer_is_compacted() {
        let event = b"data: 0123456789\n\n: ping\n";
        let mut decoder = Decoder::new();
        for _ in 0..10_000 {
            for piece in event.chunks(7) {
                decoder.feed(piece);
                while decoder.poll_event().unwrap().is_some() {}
                assert!(decoder.buffered_len() <= 2 * event.len());
            }
        }
    }

    #[test]
    fn many_comments_in_one_poll() {
        let mut input = b": ping\n".repeat(100_000);
        input.extend_from_slice(b"data: a\n\n");
        assert_eq!(whole(&input, true).events, [ev((M, "a", M))]);
    }

    #[test]
    fn feed_after_eof_is_ignored() {
        let mut decoder = Decoder::new();
        decoder.feed(b"data: a\n");
        decoder.feed_eof();
        decoder.feed(b"\n");
        assert_eq!(decoder.poll_event(), Ok(None));
        assert!(decoder.is_truncated());
        assert_eq!(decoder.buffered_len(), 0);
    }

    #[test]
    fn truncation_is_only_reported_at_the_end() {
        let mut decoder = Decoder::new();
        decoder.feed(b"data: a\n");
        assert_eq!(decoder.poll_event(), Ok(None));
        assert!(!decoder.is_truncated());
        decoder.feed_eof();
        assert!(!decoder.is_truncated());
        assert_eq!(decoder.poll_event(), Ok(None));
        assert!(decoder.is_truncated());
    }

    #[test]
    fn encode_wire_form() {
        let event = SseEvent {
            event: Some("add".into()),
            data: "a\n\nb".into(),
            id: Some("7".into()),
        };
        assert_eq!(
            encode(&event),
            "event: add\nid: 7\ndata: a\ndata: \ndata: b\n\n"
        );
        assert_eq!(encode(&SseEvent::default()), "data: \n\n");
    }

    #[test]
    fn encode_normalises_cr_to_lf() {
        let event = SseEvent {
            data: "a\rb\r\nc\n".into(),
            ..SseEvent::default()
        };
        let wire = encode(&event);
        assert_eq!(wire, "data: a\ndata: b\ndata: c\ndata: \n\n");
        assert_eq!(
            whole(wire.as_bytes(), true).events,
            [ev((M, "a\nb\nc\n", M))]
        );
    }

    /// A direct, slow transcription of the standard: decode all, split lines, process.
    fn reference(input: &[u8]) -> Outcome {
        let text = String::from_utf8_lossy(input.strip_prefix(BOM).unwrap_or(input));
        let mut rest: &str = &text;
        let (mut data, mut event_type) = (String::new(), String::new());
        let (mut id, mut in_event) = (None::<String>, false);
        let mut out = Outcome::default();
        while let Some(end) = rest.find(['\r', '\n']) {
            let line = &rest[..end];
            rest = &rest[end
                + if rest[end..].starts_with("\r\n") {
                    2
                } else {
                    1
                }..];
            if line.is_empty() {
                in_event = false;
                if !data.is_empty() {
                    if data.ends_with('\n') {
                        data.pop();
                    }
                    let event = (!event_type.is_empty()).then(|| event_type.clone());
                    let data = std::mem::take(&mut data);
                    out.events.push(SseEvent {
                        event,
                        data,
                        id: id.clone(),
                    });
                }
                data.clear();
                event_type.clear();
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            in_event = true;
            let (name, value) = match line.split_once(':') {
                Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
                None => (line, ""),
            };
            match name {
                "event" => event_type = value.to_owned(),
                "data" => data.extend([value, "\n"]),
                "id" if !value.contains('\0') => id = Some(value.to_owned()),
                "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                    out.retry = Some(value.parse().unwrap_or(u64::MAX));
                }
                _ => {}
            }
        }
        out.truncated = in_event || !rest.is_empty();
        out
    }

    /// SSE-ish fragments, some of them partial UTF-8 or BOM bytes.
    const TOKENS: &[&[u8]] = &[
        b"data",
        b"data:",
        b"data: ",
        b"event:",
        b"event: e",
        b"id",
        b"id: ",
        b"retry:",
        b"12",
        b":",
        b" ",
        b"\r",
        b"\n",
        b"\r\n",
        b"x",
        b"\0",
        "ü".as_bytes(),
        b"\xC3",
        b"\xBC",
        b"\xFF",
        BOM,
        b"\xEF",
    ];

    fn token_input() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(prop::sample::select(TOKENS), 0..48)
            .prop_map(|tokens| tokens.concat())
    }

    fn any_input() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![prop::collection::vec(any::<u8>(), 0..256), token_input()]
    }

    fn splits() -> impl Strategy<Value = Vec<prop::sample::Index>> {
        prop::collection::vec(any::<prop::sample::Index>(), 0..8)
    }

    fn limits() -> impl Strategy<Value = usize> {
        prop_oneof![
            Just(0),
            Just(5),
            Just(16),
            Just(64),
            Just(DEFAULT_MAX_EVENT_SIZE)
        ]
    }

    /// Cuts `input` at the given points.
    fn split_at(input: &[u8], cuts: &[prop::sample::Index]) -> Vec<Vec<u8>> {
        let mut points: Vec<usize> = cuts.iter().map(|cut| cut.index(input.len() + 1)).collect();
        points.sort_unstable();
        points.push(input.len());
        let mut start = 0;
        let mut chunks = Vec::new();
        for end in points {
            chunks.push(input[start..end].to_vec());
            start = end;
        }
        chunks
    }

    fn event_strategy() -> impl Strategy<Value = SseEvent> {
        (
            prop::option::of("[^\r\n]{1,12}"),
            "[^\r]{0,40}",
            prop::option::of("[^\r\n\0]{0,12}"),
        )
            .prop_map(|(event, data, id)| SseEvent { event, data, id })
    }

    proptest! {
        #![proptest_config(crate::proptest_seeds::config())]
        #[test]
        fn any_split_matches_whole(input in any_input(), cuts in splits(), limit in limits()) {
            let chunks = split_at(&input, &cuts);
            let whole = run(limit, [&input[..]], true);
            let split = run(limit, chunks.iter().map(Vec::as_slice), true);
            prop_assert_eq!(split, whole);
        }

        #[test]
        fn matches_reference(input in any_input()) {
            prop_assert_eq!(whole(&input, true), reference(&input));
            prop_assert_eq!(bytewise(&input), reference(&input));
        }

        #[test]
        fn encode_round_trips(event in event_strategy()) {
            let wire = encode(&event);
            prop_assert_eq!(whole(wire.as_bytes(), true).events, vec![event]);
        }

        #[test]
        fn encode_round_trips_a_stream(events in prop::collection::vec(event_strategy(), 0..6)) {
            // The ID persists, so an event without one decodes with the previous event's ID.
            let mut last_id = None;
            let expected: Vec<SseEvent> = events.iter().map(|event| {
                if event.id.is_some() {
                    last_id.clone_from(&event.id);
                }
                SseEvent { id: last_id.clone(), ..event.clone() }
            }).collect();
            let wire: String = events.iter().map(encode).collect();
            let out = whole(wire.as_bytes(), true);
            prop_assert!(!out.truncated);
            prop_assert_eq!(out.events, expected);
        }
    }
}
