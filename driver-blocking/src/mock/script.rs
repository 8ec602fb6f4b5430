//! [`Reply`]: what the mock provider answers to one chat request, and its builders.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::chunk;

/// The event that ends an OpenAI stream.
const DONE_EVENT: &[u8] = b"data: [DONE]\n\n";

/// The `prompt_tokens` the convenience replies report.
const PROMPT_TOKENS: u64 = 8;

/// One scripted answer: status, headers, body bytes, and how to put them on the wire.
///
/// Build one with a constructor ([`sse`](Self::sse), [`json`](Self::json),
/// [`error`](Self::error), [`text_answer`](Self::text_answer), ...) and adjust it with the
/// chainable modifiers ([`split_at`](Self::split_at), [`delay`](Self::delay),
/// [`drop_after`](Self::drop_after), ...):
///
/// ```text
/// Reply::sse([chunk::text_chunk("Hi")]).split_every(5).delay(Duration::from_millis(10))
/// ```
///
/// Cloning is cheap: the body is shared (`Arc<[u8]>`), so a benchmark can push the same
/// large reply many times.
///
/// On the wire, streamed replies (the SSE ones, or any after [`chunked(true)`](Self::chunked))
/// use `Transfer-Encoding: chunked` with each piece its own chunk, written in one `write`;
/// the others carry `Content-Length`. If the reply's own headers include `Content-Length` or
/// `Transfer-Encoding`, the server adds no framing at all: it writes the body bytes verbatim
/// and closes the connection afterwards (for tests of hostile framing).
#[derive(Clone)]
pub struct Reply {
    pub(super) status: u16,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Arc<[u8]>,
    pub(super) chunked: bool,
    pub(super) split: Split,
    pub(super) delay: Duration,
    pub(super) head_delay: Duration,
    pub(super) drop_after: Option<usize>,
    /// Written again and again after the body, until the client goes away or the provider
    /// stops: an endless answer.
    pub(super) endless: Option<Arc<[u8]>>,
}

/// Where the body is cut into separately written pieces.
#[derive(Clone, Debug)]
pub(super) enum Split {
    /// One piece.
    Whole,
    /// Cut at these offsets (sorted, deduplicated; out-of-range ones are ignored when serving).
    At(Arc<[usize]>),
    /// Cut every `n` bytes (`n >= 1`).
    Every(usize),
}

impl Reply {
    fn new(status: u16, headers: &[(&str, &str)], body: Vec<u8>, chunked: bool) -> Self {
        Self {
            status,
            headers: headers
                .iter()
                .map(|&(name, value)| (name.to_owned(), value.to_owned()))
                .collect(),
            body: body.into(),
            chunked,
            split: Split::Whole,
            delay: Duration::ZERO,
            head_delay: Duration::ZERO,
            drop_after: None,
            endless: None,
        }
    }

    /// A 200 `text/event-stream` reply: each item is the data of one event, written as
    /// `data: {item}\n\n`, and the stream ends with `data: [DONE]\n\n`.
    ///
    /// An item containing newlines becomes one `data:` line per line, as SSE requires. Build
    /// items with the [`chunk`](super::chunk) helpers; drop the final event with
    /// [`without_done`](Self::without_done).
    pub fn sse(events: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let mut body = Vec::new();
        for event in events {
            let event: String = event.into();
            for line in event.split('\n') {
                body.extend_from_slice(b"data: ");
                body.extend_from_slice(line.as_bytes());
                body.push(b'\n');
            }
            body.push(b'\n');
        }
        body.extend_from_slice(DONE_EVENT);
        Self::sse_raw(body)
    }

    /// A 200 `text/event-stream` reply that never ends: the `first` events, then the `repeated`
    /// event again and again (each written as its own piece, [`delay`](Self::delay) apart)
    /// until the client closes the connection or the provider is dropped. For tests of
    /// endless answers and of cancelling fast streams; the server holds nothing per piece.
    pub fn endless_sse(
        first: impl IntoIterator<Item = impl Into<String>>,
        repeated: impl Into<String>,
    ) -> Self {
        let mut reply = Self::sse(first).without_done();
        let mut piece = Vec::new();
        for line in repeated.into().split('\n') {
            piece.extend_from_slice(b"data: ");
            piece.extend_from_slice(line.as_bytes());
            piece.push(b'\n');
        }
        piece.push(b'\n');
        reply.endless = Some(piece.into());
        reply
    }

    /// A 200 `text/event-stream` reply that sends only keep-alives, forever (one piece per
    /// [`delay`](Self::delay)): an SSE comment, an event of whitespace data and a chunk with
    /// no choices, none of which is data. For tests of the stream idle timeout.
    pub fn keep_alives_forever() -> Self {
        let mut reply = Self::sse_raw(Vec::new());
        reply.endless = Some(
            b": keep-alive\n\ndata:  \n\ndata: {\"choices\":[]}\n\n"
                .to_vec()
                .into(),
        );
        reply
    }

    /// A 200 `text/event-stream` reply whose body is exactly `body`: no `[DONE]` is added and
    /// nothing is checked (for tests of hostile framing).
    pub fn sse_raw(body: impl Into<Vec<u8>>) -> Self {
        Self::new(
            200,
            &[
                ("content-type", "text/event-stream"),
                ("cache-control", "no-cache"),
            ],
            body.into(),
            true,
        )
    }

    /// A reply with `status` and `body` as `application/json`, sent with `Content-Length`.
    pub fn json(status: u16, body: Value) -> Self {
        Self::new(
            status,
            &[("content-type", "application/json")],
            body.to_string().into_bytes(),
            false,
        )
    }

    /// An OpenAI-shaped error: `{"error":{"message":..,"type":..,"param":null,"code":..}}`.
    ///
    /// `type` and `code` follow what OpenAI sends for the status: 401 `invalid_api_key`,
    /// 404 `model_not_found`, 429 type `requests` with code `rate_limit_exceeded`, other 4xx
    /// `invalid_request_error`, everything else `server_error`.
    pub fn error(status: u16, message: &str) -> Self {
        let (kind, code) = match status {
            401 => ("invalid_request_error", Some("invalid_api_key")),
            404 => ("invalid_request_error", Some("model_not_found")),
            429 => ("requests", Some("rate_limit_exceeded")),
            400..=499 => ("invalid_request_error", None),
            _ => ("server_error", None),
        };
        let error = json!({"message": message, "type": kind, "param": null, "code": code});
        Self::json(status, json!({ "error": error }))
    }

    /// A 429 error with `Retry-After: {retry_after}` (seconds or an HTTP date, sent as is).
    pub fn rate_limited(retry_after: &str) -> Self {
        Self::error(
            429,
            "Rate limit reached for requests. Please try again later.",
        )
        .header("retry-after", retry_after)
    }

    /// A reply with exactly these headers (no default `content-type`) and body, sent with
    /// `Content-Length` unless `headers` frame it themselves (see the type's docs).
    pub fn raw(status: u16, headers: &[(&str, &str)], body: impl Into<Vec<u8>>) -> Self {
        Self::new(status, headers, body.into(), false)
    }

    /// A reply that never starts: the server waits before the status line until the provider
    /// is dropped (for timeout tests). For a finite wait use [`delay_head`](Self::delay_head).
    pub fn hang() -> Self {
        Self::json(200, json!({})).delay_head(Duration::MAX)
    }

    /// A complete streamed answer: a role chunk, `text` in word-sized pieces (each starting
    /// with its leading whitespace), a `stop` finish chunk, a usage chunk (8 prompt tokens,
    /// one completion token per piece) and `[DONE]`.
    pub fn text_answer(text: &str) -> Self {
        let pieces = word_pieces(text);
        let mut events = vec![chunk::role_chunk()];
        events.extend(pieces.iter().map(|piece| chunk::text_chunk(piece)));
        events.push(chunk::finish_chunk("stop"));
        events.push(chunk::usage_chunk(PROMPT_TOKENS, count(pieces.len())));
        Self::sse(events)
    }

    /// A complete streamed tool-call answer for `calls` of `(id, name, arguments_json)`: a role
    /// chunk, then per call one chunk with its id and name and each third of its arguments in
    /// its own chunk, a `tool_calls` finish chunk, a usage chunk and `[DONE]`.
    pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Self {
        let mut events = vec![chunk::role_chunk()];
        let mut fragments = 0;
        for (index, &(id, name, arguments)) in calls.iter().enumerate() {
            events.push(chunk::tool_call_chunk(index, Some(id), Some(name), ""));
            for fragment in thirds(arguments) {
                events.push(chunk::tool_call_chunk(index, None, None, fragment));
                fragments += 1;
            }
        }
        events.push(chunk::finish_chunk("tool_calls"));
        events.push(chunk::usage_chunk(PROMPT_TOKENS, count(fragments)));
        Self::sse(events)
    }

    /// Sets the status code.
    #[must_use]
    pub fn status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// Sets a header, replacing any of the same name (compared case-insensitively).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let name = name.into();
        self.headers
            .retain(|(old, _)| !old.eq_ignore_ascii_case(&name));
        self.headers.push((name, value.into()));
        self
    }

    /// Writes the body in pieces cut at these byte offsets; offsets at 0, at or past the end,
    /// or repeated are ignored. Replaces an earlier [`split_every`](Self::split_every).
    #[must_use]
    pub fn split_at(mut self, offsets: &[usize]) -> Self {
        let mut offsets = offsets.to_vec();
        offsets.sort_unstable();
        offsets.dedup();
        self.split = Split::At(offsets.into());
        self
    }

    /// Writes the body in pieces of `n` bytes (the last may be shorter); `0` means one piece.
    /// Replaces an earlier [`split_at`](Self::split_at).
    #[must_use]
    pub fn split_every(mut self, n: usize) -> Self {
        self.split = if n == 0 {
            Split::Whole
        } else {
            Split::Every(n)
        };
        self
    }

    /// Sleeps this long between pieces (not before the first). Dropping the provider cuts
    /// the sleep short and closes the connection.
    #[must_use]
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Sleeps this long before sending the status line. Dropping the provider cuts the sleep
    /// short and closes the connection.
    #[must_use]
    pub fn delay_head(mut self, delay: Duration) -> Self {
        self.head_delay = delay;
        self
    }

    /// Removes the trailing `data: [DONE]\n\n` event; no effect if the body does not end
    /// with one.
    #[must_use]
    pub fn without_done(mut self) -> Self {
        if let Some(rest) = self.body.strip_suffix(DONE_EVENT) {
            self.body = rest.into();
        }
        self
    }

    /// Writes only the first `n_bytes` of the body (still cut as split), then closes the
    /// connection abruptly: no terminating zero-length chunk, so the client sees an
    /// incomplete body. With `n_bytes` at or past the end the whole body is written, but still
    /// without the terminating chunk (a `Content-Length` body is then complete).
    #[must_use]
    pub fn drop_after(mut self, n_bytes: usize) -> Self {
        self.drop_after = Some(n_bytes);
        self
    }

    /// Chooses `Transfer-Encoding: chunked` (`true`, the default of the SSE constructors) or
    /// `Content-Length` framing (`false`, the default of the others).
    #[must_use]
    pub fn chunked(mut self, chunked: bool) -> Self {
        self.chunked = chunked;
        self
    }

    /// The body bytes, before any cutting.
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// Where `needle` first starts in the body: a place to cut it ([`Self::drop_after`],
    /// [`Self::split_at`]) inside a chosen event.
    pub fn offset_of(&self, needle: &[u8]) -> Option<usize> {
        if needle.is_empty() {
            return Some(0);
        }
        self.body.windows(needle.len()).position(|w| w == needle)
    }

    /// Where the SSE event in which `needle` first occurs ends, its blank line included: a
    /// place to cut the body between two events.
    pub fn end_of_event_with(&self, needle: &[u8]) -> Option<usize> {
        let at = self.offset_of(needle)?;
        let blank = self.body[at..].windows(2).position(|w| w == b"\n\n")?;
        Some(at + blank + 2)
    }

    /// The byte ranges of the body to write, in order, each non-empty and written on its own;
    /// they cover the body up to [`drop_after`](Self::drop_after).
    pub(super) fn pieces(&self) -> Pieces<'_> {
        Pieces {
            split: &self.split,
            pos: 0,
            end: self.body.len().min(self.drop_after.unwrap_or(usize::MAX)),
            next_offset: 0,
        }
    }
}

impl fmt::Debug for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const PREVIEW: usize = 80;
        let preview = String::from_utf8_lossy(&self.body[..self.body.len().min(PREVIEW)]);
        f.debug_struct("Reply")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .field("body_len", &self.body.len())
            .field("body_start", &preview)
            .field("chunked", &self.chunked)
            .field("split", &self.split)
            .field("delay", &self.delay)
            .field("head_delay", &self.head_delay)
            .field("drop_after", &self.drop_after)
            .field("endless", &self.endless.as_ref().map(|p| p.len()))
            .finish()
    }
}

/// Iterator over the pieces of a reply's body; see [`Reply::pieces`].
pub(super) struct Pieces<'a> {
    split: &'a Split,
    pos: usize,
    end: usize,
    next_offset: usize,
}

impl Iterator for Pieces<'_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        if self.pos >= self.end {
            return None;
        }
        let cut = match self.split {
            Split::Whole => self.end,
            Split::Every(n) => self.pos.saturating_add(*n).min(self.end),
            Split::At(offsets) => {
                while offsets
                    .get(self.next_offset)
                    .is_some_and(|&offset| offset <= self.pos)
                {
                    self.next_offset += 1;
                }
                offsets
                    .get(self.next_offset)
                    .map_or(self.end, |&offset| offset.min(self.end))
            }
        };
        let piece = self.pos..cut;
        self.pos = cut;
        Some(piece)
    }
}

/// `text` cut before each run of whitespace that follows a non-space: `"Hello big world"`
/// gives `["Hello", " big", " world"]`. Empty text gives no pieces.
fn word_pieces(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut previous_was_space = true;
    for (i, c) in text.char_indices() {
        let space = c.is_whitespace();
        if space && !previous_was_space && i > start {
            pieces.push(&text[start..i]);
            start = i;
        }
        previous_was_space = space;
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// `s` cut into three parts of about equal length at char boundaries, empty parts left out.
fn thirds(s: &str) -> Vec<&str> {
    let boundary = |target: usize| (target..=s.len()).find(|&i| s.is_char_boundary(i));
    let first = boundary(s.len() / 3).unwrap_or(s.len());
    let second = boundary(s.len() * 2 / 3).unwrap_or(s.len()).max(first);
    [&s[..first], &s[first..second], &s[second..]]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect()
}

fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn pieces(reply: &Reply) -> Vec<(usize, usize)> {
        reply
            .pieces()
            .map(|range| (range.start, range.end))
            .collect()
    }

    /// The JSON data of each event of an SSE body, `[DONE]` excluded.
    fn events(reply: &Reply) -> Vec<Value> {
        let body = std::str::from_utf8(reply.body()).unwrap();
        assert!(body.ends_with("data: [DONE]\n\n"));
        body.split("\n\n")
            .filter(|event| !event.is_empty() && *event != "data: [DONE]")
            .map(|event| serde_json::from_str(event.strip_prefix("data: ").unwrap()).unwrap())
            .collect()
    }

    #[test]
    fn cutting_table() {
        let body = "0123456789";
        let table: [(Reply, Vec<(usize, usize)>); 9] = [
            (Reply::sse_raw(body), vec![(0, 10)]),
            (
                Reply::sse_raw(body).split_at(&[3, 7]),
                vec![(0, 3), (3, 7), (7, 10)],
            ),
            (
                Reply::sse_raw(body).split_at(&[7, 0, 3, 3, 10, 99]),
                vec![(0, 3), (3, 7), (7, 10)],
            ),
            (
                Reply::sse_raw(body).split_every(4),
                vec![(0, 4), (4, 8), (8, 10)],
            ),
            (Reply::sse_raw(body).split_every(0), vec![(0, 10)]),
            (
                Reply::sse_raw(body).split_every(4).split_at(&[5]),
                vec![(0, 5), (5, 10)],
            ),
            (
                Reply::sse_raw(body).split_at(&[3, 7]).drop_after(5),
                vec![(0, 3), (3, 5)],
            ),
            (Reply::sse_raw(body).drop_after(0), vec![]),
            (Reply::sse_raw(""), vec![]),
        ];
        for (reply, expected) in table {
            assert_eq!(pieces(&reply), expected, "{reply:?}");
        }
    }

    #[test]
    fn sse_frames_events_and_done() {
        let reply = Reply::sse(["{\"a\":1}", "x\ny"]);
        assert_eq!(
            reply.body(),
            b"data: {\"a\":1}\n\ndata: x\ndata: y\n\ndata: [DONE]\n\n"
        );
        assert!(reply.chunked);
        let reply = reply.without_done();
        assert_eq!(reply.body(), b"data: {\"a\":1}\n\ndata: x\ndata: y\n\n");
        assert_eq!(reply.clone().without_done().body(), reply.body());
    }

    #[test]
    fn header_replaces_case_insensitively() {
        let reply = Reply::json(200, Value::Null)
            .header("Content-Type", "text/plain")
            .header("x-a", "1");
        assert_eq!(
            reply.headers,
            [
                ("Content-Type".to_owned(), "text/plain".to_owned()),
                ("x-a".to_owned(), "1".to_owned())
            ]
        );
    }

    #[test]
    fn error_shapes() {
        let reply = Reply::rate_limited("7");
        assert_eq!(reply.status, 429);
        assert!(
            reply
                .headers
                .contains(&("retry-after".to_owned(), "7".to_owned()))
        );
        let body: Value = serde_json::from_slice(reply.body()).unwrap();
        assert_eq!(body["error"]["type"], "requests");
        assert_eq!(body["error"]["code"], "rate_limit_exceeded");
        let body: Value = serde_json::from_slice(Reply::error(503, "busy").body()).unwrap();
        assert_eq!(
            body,
            json!({"error": {"message": "busy", "type": "server_error", "param": null, "code": null}})
        );
    }

    #[test]
    fn text_answer_rebuilds_the_text() {
        let events = events(&Reply::text_answer("Hello big  \"world\"\n"));
        let text: String = events
            .iter()
            .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(text, "Hello big  \"world\"\n");
        assert_eq!(events[0]["choices"][0]["delta"]["role"], "assistant");
        assert_eq!(
            events[events.len() - 2]["choices"][0]["finish_reason"],
            "stop"
        );
        assert_eq!(events[events.len() - 1]["usage"]["completion_tokens"], 4);
        assert_eq!(word_pieces("  a b"), ["  a", " b"]);
        assert!(word_pieces("").is_empty());
    }

    #[test]
    fn tool_calls_rebuild_the_calls() {
        let calls = [
            ("call_1", "read_file", r#"{"path":"src/é.rs"}"#),
            ("call_2", "list_files", "{}"),
        ];
        let events = events(&Reply::tool_calls(&calls));
        let mut rebuilt = vec![(String::new(), String::new(), String::new()); 2];
        for event in &events {
            for call in event["choices"][0]["delta"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let slot = &mut rebuilt[usize::try_from(call["index"].as_u64().unwrap()).unwrap()];
                if let Some(id) = call["id"].as_str() {
                    slot.0.push_str(id);
                }
                if let Some(name) = call["function"]["name"].as_str() {
                    slot.1.push_str(name);
                }
                slot.2
                    .push_str(call["function"]["arguments"].as_str().unwrap());
            }
        }
        for ((id, name, args), (rid, rname, rargs)) in calls.iter().zip(&rebuilt) {
            assert_eq!(
                (*id, *name, *args),
                (rid.as_str(), rname.as_str(), rargs.as_str())
            );
        }
        assert_eq!(
            events[events.len() - 2]["choices"][0]["finish_reason"],
            "tool_calls"
        );
        assert_eq!(thirds("abcdefghi"), ["abc", "def", "ghi"]);
        assert_eq!(thirds("ab"), ["a", "b"]);
        assert!(thirds("").is_empty());
    }
}
