//! JSON-RPC 2.0 messages and the newline-delimited framing of MCP's stdio transport.
//!
//! [`Message`] is one JSON-RPC message, checked against the specification when it is read
//! ([`Message::from_value`]) and written with [`Message::to_bytes`]. [`LineDecoder`] reads the
//! stdio transport — "messages are delimited by newlines, and MUST NOT contain embedded
//! newlines" — in the same shape as [`crate::sse::Decoder`]: [`LineDecoder::feed`] only
//! buffers, [`LineDecoder::feed_eof`] marks the end, and after any input the caller drains
//! [`LineDecoder::poll_message`] until it returns `Ok(None)` ("feed me more"). Input may be
//! split anywhere, inside a UTF-8 sequence or a CRLF included.
//!
//! ```
//! use hrns_core::mcp::jsonrpc::{LineDecoder, Message, RequestId};
//!
//! let mut decoder = LineDecoder::new();
//! let mut messages = Vec::new();
//! for chunk in [&br#"{"jsonrpc":"2.0","id":1,"res"#[..], br#"ult":{}}"#, b"\r\n"] {
//!     decoder.feed(chunk);
//!     while let Some(message) = decoder.poll_message()? {
//!         messages.push(message);
//!     }
//! }
//! assert_eq!(
//!     messages,
//!     [Message::Response { id: RequestId::Number(1), result: serde_json::json!({}) }]
//! );
//! # Ok::<(), hrns_core::mcp::jsonrpc::DecodeError>(())
//! ```
//!
//! Choices the specifications leave to us, documented here once:
//! - A line may end in LF or CRLF; blank lines (whitespace only) are skipped.
//! - A JSON array on one line is a batch (allowed by 2025-03-26, dropped by 2025-06-18): its
//!   elements are read one by one, in order. An empty batch is malformed.
//! - A malformed line (not JSON, not JSON-RPC 2.0) is reported as
//!   [`DecodeError::Malformed`] and skipped: decoding goes on with the next line, since one bad
//!   line from a server is no reason to lose the messages after it.
//! - Memory is bounded by the message size limit ([`LineDecoder::with_max_message_size`]): a
//!   line longer than the limit, complete or not, gives [`DecodeError::TooLarge`], which is
//!   terminal (the CR of a CRLF is not counted). A caller that polls after each feed holds at
//!   most the limit plus one fed chunk.
//! - An unterminated last line at EOF is read as a message when it is one (a server that
//!   exits right after writing loses nothing).

use memchr::memchr;
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::fmt;

/// Default limit on one message (one line), 16 MiB.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 16 * 1024 * 1024;

/// How much of a malformed message is quoted in its error.
const EXCERPT_CHARS: usize = 120;

/// JSON-RPC error code: invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC error code: the JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC error code: the method does not exist or is not available.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC error code: invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;

/// A request id. MCP: "the ID MUST NOT be null" and is a string or an integer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id (hrns sends these).
    Number(i64),
    /// A string id (servers may send these).
    String(String),
}

impl RequestId {
    fn to_value(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::from(s.as_str()),
        }
    }

    fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::Number(n) => n.as_i64().map(RequestId::Number),
            Value::String(s) => Some(RequestId::String(s.clone())),
            _ => None,
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// The error object of an error response.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorObject {
    /// The error code (see the constants of this module for the standard ones).
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Anything else the peer attached.
    pub data: Option<Value>,
}

/// One JSON-RPC 2.0 message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A call that expects a response with the same id.
    Request {
        /// Chosen by the sender, unique among its requests in flight.
        id: RequestId,
        /// The method name.
        method: String,
        /// An object or array, or `None` when absent.
        params: Option<Value>,
    },
    /// A one-way message: no response.
    Notification {
        /// The method name.
        method: String,
        /// An object or array, or `None` when absent.
        params: Option<Value>,
    },
    /// The successful answer to a request.
    Response {
        /// The id of the request answered.
        id: RequestId,
        /// Any JSON value.
        result: Value,
    },
    /// The failed answer to a request.
    Error {
        /// The id of the request answered; `None` when the peer could not read it (a parse
        /// error answers with `"id": null`).
        id: Option<RequestId>,
        /// What went wrong.
        error: ErrorObject,
    },
}

/// Why a message was not valid JSON-RPC 2.0. The peer's fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid JSON-RPC message ({reason}): {excerpt}")]
pub struct MessageError {
    /// What is wrong with it.
    pub reason: &'static str,
    /// The start of the offending text, for the log.
    pub excerpt: String,
}

impl MessageError {
    fn new(reason: &'static str, text: &[u8]) -> Self {
        MessageError {
            reason,
            excerpt: crate::text::shorten(&String::from_utf8_lossy(text), EXCERPT_CHARS)
                .into_owned(),
        }
    }
}

impl Message {
    /// Reads one message from a JSON value, checking the JSON-RPC 2.0 rules.
    ///
    /// `"jsonrpc": "2.0"` is required; a message with `method` is a request when it has a
    /// non-null `id` and a notification otherwise; one without is a response and must have
    /// exactly one of `result` and `error`.
    pub fn from_value(value: Value) -> Result<Message, &'static str> {
        let Value::Object(mut object) = value else {
            return Err("not a JSON object");
        };
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err("\"jsonrpc\" is not \"2.0\"");
        }
        let id = object.remove("id");
        if let Some(method) = object.remove("method") {
            let Value::String(method) = method else {
                return Err("\"method\" is not a string");
            };
            let params = object.remove("params");
            if params
                .as_ref()
                .is_some_and(|p| !p.is_object() && !p.is_array())
            {
                return Err("\"params\" is neither an object nor an array");
            }
            return match id {
                None | Some(Value::Null) => Ok(Message::Notification { method, params }),
                Some(id) => match RequestId::from_value(&id) {
                    Some(id) => Ok(Message::Request { id, method, params }),
                    None => Err("\"id\" is neither a string nor an integer"),
                },
            };
        }
        let Some(id) = id else {
            return Err("neither \"method\" nor \"id\"");
        };
        let id = match &id {
            Value::Null => None,
            other => Some(
                RequestId::from_value(other).ok_or("\"id\" is neither a string nor an integer")?,
            ),
        };
        match (object.remove("result"), object.remove("error")) {
            (Some(result), None) => match id {
                Some(id) => Ok(Message::Response { id, result }),
                None => Err("a result with a null \"id\""),
            },
            (None, Some(error)) => {
                let Value::Object(mut error) = error else {
                    return Err("\"error\" is not an object");
                };
                let code = error
                    .get("code")
                    .and_then(Value::as_i64)
                    .ok_or("\"error.code\" is not an integer")?;
                let Some(Value::String(message)) = error.remove("message") else {
                    return Err("\"error.message\" is not a string");
                };
                let data = error.remove("data");
                Ok(Message::Error {
                    id,
                    error: ErrorObject {
                        code,
                        message,
                        data,
                    },
                })
            }
            (Some(_), Some(_)) => Err("both \"result\" and \"error\""),
            (None, None) => Err("neither \"result\" nor \"error\""),
        }
    }

    /// Reads the messages of one JSON text: a single message, or a batch (an array).
    pub fn parse(text: &[u8]) -> Result<Vec<Message>, MessageError> {
        let value: Value =
            serde_json::from_slice(text).map_err(|_| MessageError::new("not valid JSON", text))?;
        match value {
            Value::Array(items) => {
                if items.is_empty() {
                    return Err(MessageError::new("an empty batch", text));
                }
                items
                    .into_iter()
                    .map(|item| Message::from_value(item).map_err(|r| MessageError::new(r, text)))
                    .collect()
            }
            value => Message::from_value(value)
                .map(|m| vec![m])
                .map_err(|reason| MessageError::new(reason, text)),
        }
    }

    /// The message as a JSON value.
    pub fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("jsonrpc".into(), Value::from("2.0"));
        match self {
            Message::Request { id, method, params } => {
                object.insert("id".into(), id.to_value());
                object.insert("method".into(), Value::from(method.as_str()));
                if let Some(params) = params {
                    object.insert("params".into(), params.clone());
                }
            }
            Message::Notification { method, params } => {
                object.insert("method".into(), Value::from(method.as_str()));
                if let Some(params) = params {
                    object.insert("params".into(), params.clone());
                }
            }
            Message::Response { id, result } => {
                object.insert("id".into(), id.to_value());
                object.insert("result".into(), result.clone());
            }
            Message::Error { id, error } => {
                object.insert(
                    "id".into(),
                    id.as_ref().map_or(Value::Null, RequestId::to_value),
                );
                let mut e = Map::new();
                e.insert("code".into(), Value::from(error.code));
                e.insert("message".into(), Value::from(error.message.as_str()));
                if let Some(data) = &error.data {
                    e.insert("data".into(), data.clone());
                }
                object.insert("error".into(), Value::Object(e));
            }
        }
        Value::Object(object)
    }

    /// The message as compact JSON, without a line end. Never contains a raw newline (JSON
    /// escapes newlines in strings), so it can be written as one line of the stdio transport.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.to_value()).expect("a JSON value always serialises")
    }
}

/// Why [`LineDecoder::poll_message`] gave no message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// One line was not a valid JSON-RPC message; it was skipped and decoding goes on. The
    /// server's fault.
    #[error(transparent)]
    Malformed(#[from] MessageError),
    /// A line grew past the limit. Terminal: every later poll returns it again. The server's
    /// fault, or a limit too small for the server's largest message.
    #[error(
        "an MCP message exceeds the {limit}-byte limit; the server sent an oversized message \
         (or never ended its line)"
    )]
    TooLarge {
        /// The limit that was crossed, in bytes.
        limit: usize,
    },
}

/// Incremental reader of newline-delimited JSON-RPC: bytes in, [`Message`]s out.
///
/// Each input byte is scanned for a line end once; the consumed prefix of the buffer is dropped
/// in amortised O(1).
#[derive(Debug, Clone)]
pub struct LineDecoder {
    /// Raw input. Bytes before `pos` are consumed and wait for compaction.
    buf: Vec<u8>,
    /// Start of the first line not read yet.
    pos: usize,
    /// `buf[pos..scan]` holds no LF, so the next search starts at `scan`.
    scan: usize,
    /// Messages of a batch line not returned yet.
    queued: VecDeque<Message>,
    /// `feed_eof` was called.
    eof: bool,
    /// The terminal error, if any.
    error: Option<DecodeError>,
    /// Limit on one line, in bytes, without its line end.
    limit: usize,
}

impl Default for LineDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl LineDecoder {
    /// A decoder with the [`DEFAULT_MAX_MESSAGE_SIZE`] limit.
    pub fn new() -> Self {
        Self::with_max_message_size(DEFAULT_MAX_MESSAGE_SIZE)
    }

    /// A decoder that accepts lines of at most `limit` bytes (line end not counted).
    pub fn with_max_message_size(limit: usize) -> Self {
        LineDecoder {
            buf: Vec::new(),
            pos: 0,
            scan: 0,
            queued: VecDeque::new(),
            eof: false,
            error: None,
            limit,
        }
    }

    /// The limit given at construction, in bytes.
    pub fn max_message_size(&self) -> usize {
        self.limit
    }

    /// Bytes held: the unread input. For tests of the memory bound.
    pub fn buffered_len(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Only buffers. Bytes fed after [`feed_eof`](Self::feed_eof) or a terminal error are
    /// ignored.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.eof || self.error.is_some() || bytes.is_empty() {
            return;
        }
        // Drop the consumed prefix once it is at least as long as what remains, so each byte
        // is moved at most once on average.
        if self.pos > 0 && self.pos >= self.buf.len() - self.pos {
            self.buf.drain(..self.pos);
            self.scan -= self.pos;
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Marks the end of input.
    pub fn feed_eof(&mut self) {
        self.eof = true;
    }

    /// Returns the next message: `Ok(Some(message))`, or `Ok(None)` when more input is needed
    /// (or, after [`feed_eof`](Self::feed_eof), when the input is over).
    ///
    /// [`DecodeError::Malformed`] is about one line and the next poll goes on after it;
    /// [`DecodeError::TooLarge`] is terminal.
    pub fn poll_message(&mut self) -> Result<Option<Message>, DecodeError> {
        loop {
            if let Some(message) = self.queued.pop_front() {
                return Ok(Some(message));
            }
            if let Some(error) = &self.error {
                return Err(error.clone());
            }
            let (line_end, next) = match memchr(b'\n', &self.buf[self.scan..]) {
                Some(i) => (self.scan + i, self.scan + i + 1),
                None => {
                    self.scan = self.buf.len();
                    // A CR at the end may be the first half of a CRLF, which is not counted.
                    let partial = &self.buf[self.pos..];
                    let counted = partial.len() - usize::from(partial.ends_with(b"\r"));
                    if counted > self.limit {
                        return Err(self.fail());
                    }
                    if !self.eof || self.pos == self.buf.len() {
                        return Ok(None);
                    }
                    // The unterminated last line.
                    (self.buf.len(), self.buf.len())
                }
            };
            let start = self.pos;
            self.pos = next;
            self.scan = next;
            let mut line = &self.buf[start..line_end];
            if let [rest @ .., b'\r'] = line {
                line = rest;
            }
            if line.len() > self.limit {
                return Err(self.fail());
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let messages = Message::parse(line)?;
            self.queued.extend(messages);
            if self.pos == self.buf.len() {
                self.buf.clear();
                self.pos = 0;
                self.scan = 0;
            }
        }
    }

    fn fail(&mut self) -> DecodeError {
        let error = DecodeError::TooLarge { limit: self.limit };
        self.error = Some(error.clone());
        self.buf = Vec::new();
        self.pos = 0;
        self.scan = 0;
        error
    }
}

#[cfg(test)]
#[path = "jsonrpc_tests.rs"]
mod tests;
