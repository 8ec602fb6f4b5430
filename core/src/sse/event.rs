//! The events a [`Decoder`](super::Decoder) dispatches, owned and lent, and their wire form.

use memchr::memchr2;

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

/// One dispatched event lent by [`Decoder::poll_event_ref`](super::Decoder::poll_event_ref) until the decoder's next call: the
/// data of a one-line event (every chat chunk) is read in place, without a copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEventRef<'a> {
    /// The `event` field; `None` means the default type "message".
    pub event: Option<&'a str>,
    /// Data lines joined with "\n".
    pub data: &'a str,
    /// The last event ID buffer at dispatch time; None if never set.
    pub id: Option<&'a str>,
}

impl SseEventRef<'_> {
    /// The event type, `"message"` when the stream set none (the standard's default).
    pub fn event_type(&self) -> &str {
        self.event.unwrap_or("message")
    }

    /// The owned event.
    pub fn to_event(&self) -> SseEvent {
        SseEvent {
            event: self.event.map(str::to_owned),
            data: self.data.to_owned(),
            id: self.id.map(str::to_owned),
        }
    }
}

/// One dispatched event lent by [`Decoder::poll_event_bytes`](super::Decoder::poll_event_bytes) until the decoder's next call,
/// its data not yet decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEventBytes<'a> {
    /// The `event` field; `None` means the default type "message".
    pub event: Option<&'a str>,
    /// Data lines joined with "\n", as raw bytes: decoded lossily, they are
    /// [`SseEventRef::data`].
    pub data: &'a [u8],
    /// The last event ID buffer at dispatch time; None if never set.
    pub id: Option<&'a str>,
}

impl SseEventBytes<'_> {
    /// The event type, `"message"` when the stream set none (the standard's default).
    pub fn event_type(&self) -> &str {
        self.event.unwrap_or("message")
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
