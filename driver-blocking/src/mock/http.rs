//! HTTP/1.1 on the wire for the mock provider: reading requests, writing replies.
//!
//! Limits: a request head may be [`MAX_HEAD`] bytes with [`MAX_HEADERS`] header lines (431
//! beyond), a body [`MAX_BODY`] bytes (413 beyond), a chunk-size or trailer line [`MAX_LINE`]
//! bytes (400 beyond).

use std::fmt::Write as _;
use std::io::{self, ErrorKind, Read, Write};
use std::time::Duration;

use super::script::Reply;

/// Largest request head (request line and headers) accepted.
pub(super) const MAX_HEAD: usize = 64 * 1024;
/// Most header lines accepted in one request.
pub(super) const MAX_HEADERS: usize = 128;
/// Largest request body accepted.
pub(super) const MAX_BODY: usize = 64 * 1024 * 1024;
/// Longest chunk-size or trailer line accepted in a chunked request body.
const MAX_LINE: usize = 8 * 1024;
/// How much one read asks the socket for.
const READ_SIZE: usize = 16 * 1024;
/// Pieces up to this size are copied next to their framing and written in one `write`;
/// larger ones are written from the shared body directly.
const INLINE_PIECE: usize = 64 * 1024;
/// The end of a chunked body.
const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// A parsed request.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Request {
    pub(super) method: String,
    /// The target in origin form (`/path?query`); an absolute-form target is reduced to it.
    pub(super) target: String,
    pub(super) http10: bool,
    /// Names lowercased, values with surrounding whitespace trimmed, in order received.
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
    /// Whether the client lets the connection serve another request after this one.
    pub(super) keep_alive: bool,
}

/// Why no request could be read.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum RequestError {
    /// The peer closed the connection mid-request or the socket failed: nothing to answer.
    Gone,
    /// The peer sent something the server answers with this status and message, then closes.
    Reject(u16, &'static str),
}

fn bad(message: &'static str) -> RequestError {
    RequestError::Reject(400, message)
}

/// How a request body is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BodyKind {
    Empty,
    Length(usize),
    Chunked,
}

/// Reads requests from a connection, keeping bytes that arrived early for the next one.
pub(super) struct Reader<S> {
    stream: S,
    buf: Vec<u8>,
}

impl<S: Read + Write> Reader<S> {
    pub(super) fn new(stream: S) -> Self {
        Self {
            stream,
            buf: Vec::new(),
        }
    }

    pub(super) fn get_ref(&self) -> &S {
        &self.stream
    }

    /// Reads the next request; `Ok(None)` when the peer closed cleanly between requests.
    ///
    /// Answers `Expect: 100-continue` on the stream before reading the body.
    pub(super) fn read_request(&mut self) -> Result<Option<Request>, RequestError> {
        let Some(head_len) = self.read_head()? else {
            return Ok(None);
        };
        let mut request = parse_head(&self.buf[..head_len])?;
        self.buf.drain(..head_len);
        let (kind, ambiguous) = body_kind(&request.headers)?;
        if ambiguous {
            // RFC 9112 6.1: Transfer-Encoding wins, and the connection is closed afterwards.
            request.keep_alive = false;
        }
        if let Some(expect) = header(&request.headers, "expect") {
            if !expect.eq_ignore_ascii_case("100-continue") {
                return Err(RequestError::Reject(417, "unsupported expectation"));
            }
            if !request.http10 && kind != BodyKind::Empty {
                self.stream
                    .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                    .map_err(|_| RequestError::Gone)?;
            }
        }
        request.body = match kind {
            BodyKind::Empty => Vec::new(),
            BodyKind::Length(len) => {
                let mut body = Vec::with_capacity(len);
                self.read_into(&mut body, len)?;
                body
            }
            BodyKind::Chunked => self.read_chunked()?,
        };
        Ok(Some(request))
    }

    /// Buffers a whole head and returns its length (blank line included); skips empty lines
    /// before the request line (RFC 9112 2.2).
    fn read_head(&mut self) -> Result<Option<usize>, RequestError> {
        loop {
            let blank = self
                .buf
                .iter()
                .take_while(|&&b| b == b'\r' || b == b'\n')
                .count();
            self.buf.drain(..blank);
            if let Some(end) = head_end(&self.buf) {
                if end > MAX_HEAD {
                    return Err(RequestError::Reject(431, "request head too large"));
                }
                return Ok(Some(end));
            }
            if self.buf.len() > MAX_HEAD {
                return Err(RequestError::Reject(431, "request head too large"));
            }
            let was_empty = self.buf.is_empty();
            if self.fill()? == 0 {
                return if was_empty {
                    Ok(None)
                } else {
                    Err(RequestError::Gone)
                };
            }
        }
    }

    /// Decodes a chunked body, trailers read and discarded.
    fn read_chunked(&mut self) -> Result<Vec<u8>, RequestError> {
        let mut body = Vec::new();
        loop {
            let line = self.read_line()?;
            let size = line.split(|&b| b == b';').next().unwrap_or_default();
            let size = trim_ows(size);
            if size.is_empty() || size.len() > 15 || !size.iter().all(u8::is_ascii_hexdigit) {
                return Err(bad("bad chunk size"));
            }
            let size = size
                .iter()
                .fold(0usize, |n, &b| n * 16 + usize::from(hex_value(b)));
            if size == 0 {
                let mut trailer_lines = 0;
                while !self.read_line()?.is_empty() {
                    trailer_lines += 1;
                    if trailer_lines > MAX_HEADERS {
                        return Err(RequestError::Reject(431, "too many trailer lines"));
                    }
                }
                return Ok(body);
            }
            if body.len() + size > MAX_BODY {
                return Err(RequestError::Reject(413, "request body too large"));
            }
            self.read_into(&mut body, size)?;
            if !self.read_line()?.is_empty() {
                return Err(bad("chunk data not followed by CRLF"));
            }
        }
    }

    /// Reads one line, returning it without its line ending.
    fn read_line(&mut self) -> Result<Vec<u8>, RequestError> {
        let mut searched = 0;
        loop {
            if let Some(i) = self.buf[searched..].iter().position(|&b| b == b'\n') {
                let end = searched + i;
                let mut line: Vec<u8> = self.buf.drain(..=end).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(line);
            }
            searched = self.buf.len();
            if searched > MAX_LINE {
                return Err(bad("line too long in chunked body"));
            }
            if self.fill()? == 0 {
                return Err(RequestError::Gone);
            }
        }
    }

    /// Appends exactly `len` body bytes to `body`, from the buffer first, then the stream.
    fn read_into(&mut self, body: &mut Vec<u8>, len: usize) -> Result<(), RequestError> {
        let buffered = len.min(self.buf.len());
        body.extend(self.buf.drain(..buffered));
        let start = body.len();
        let rest = len - buffered;
        if rest > 0 {
            body.resize(start + rest, 0);
            self.stream
                .read_exact(&mut body[start..])
                .map_err(|_| RequestError::Gone)?;
        }
        Ok(())
    }

    /// Reads what the stream has into the buffer; `Ok(0)` at end of stream.
    fn fill(&mut self) -> Result<usize, RequestError> {
        let old = self.buf.len();
        self.buf.resize(old + READ_SIZE, 0);
        loop {
            match self.stream.read(&mut self.buf[old..]) {
                Ok(n) => {
                    self.buf.truncate(old + n);
                    return Ok(n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.buf.truncate(old);
                    return Err(RequestError::Gone);
                }
            }
        }
    }
}

/// The length of the head at the start of `buf` (through the blank line), if complete.
/// Lines may end in CRLF or a bare LF.
fn head_end(buf: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = buf[from..].iter().position(|&b| b == b'\n') {
        let nl = from + i;
        match buf.get(nl + 1..) {
            Some([b'\n', ..]) => return Some(nl + 2),
            Some([b'\r', b'\n', ..]) => return Some(nl + 3),
            _ => from = nl + 1,
        }
    }
    None
}

/// Parses a complete head into a request without a body.
fn parse_head(head: &[u8]) -> Result<Request, RequestError> {
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line));
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad("malformed request line"));
    };
    if method.is_empty() || !method.iter().all(|&b| is_tchar(b)) {
        return Err(bad("malformed method"));
    }
    let http10 = match version {
        b"HTTP/1.1" => false,
        b"HTTP/1.0" => true,
        _ if version.starts_with(b"HTTP/") => {
            return Err(RequestError::Reject(505, "HTTP version not supported"));
        }
        _ => return Err(bad("malformed HTTP version")),
    };
    let target = origin_form(target)?;

    let mut headers = Vec::new();
    for line in lines.filter(|line| !line.is_empty()) {
        if line[0] == b' ' || line[0] == b'\t' {
            return Err(bad("obsolete header line folding"));
        }
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or_else(|| bad("header line without a colon"))?;
        let name = &line[..colon];
        if name.is_empty() || !name.iter().all(|&b| is_tchar(b)) {
            return Err(bad("malformed header name"));
        }
        let value = trim_ows(&line[colon + 1..]);
        if value.iter().any(|&b| (b < b' ' && b != b'\t') || b == 0x7f) {
            return Err(bad("control character in header value"));
        }
        if headers.len() == MAX_HEADERS {
            return Err(RequestError::Reject(431, "too many header lines"));
        }
        headers.push((
            String::from_utf8_lossy(name).to_ascii_lowercase(),
            String::from_utf8_lossy(value).into_owned(),
        ));
    }

    let has_token = |token: &str| {
        headers
            .iter()
            .filter(|(name, _)| name == "connection")
            .flat_map(|(_, value)| value.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    };
    let keep_alive = if http10 {
        has_token("keep-alive")
    } else {
        !has_token("close")
    };
    Ok(Request {
        method: String::from_utf8_lossy(method).into_owned(),
        target,
        http10,
        headers,
        body: Vec::new(),
        keep_alive,
    })
}

/// The origin form (`/path?query`) of a request target; absolute-form targets
/// (`http://host/path`) are reduced to it, `*` is kept.
fn origin_form(target: &[u8]) -> Result<String, RequestError> {
    if target.is_empty() || target.iter().any(|&b| b <= b' ' || b == 0x7f) {
        return Err(bad("malformed request target"));
    }
    let target = std::str::from_utf8(target).map_err(|_| bad("request target is not UTF-8"))?;
    if target.starts_with('/') || target == "*" {
        return Ok(target.to_owned());
    }
    let rest = ["http://", "https://"]
        .iter()
        .find_map(|scheme| target.strip_prefix(scheme))
        .ok_or_else(|| bad("unsupported request target form"))?;
    let path = &rest[rest.find(['/', '?']).unwrap_or(rest.len())..];
    Ok(if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    })
}

/// How the body is delimited, and whether the framing was ambiguous (both
/// `Transfer-Encoding` and `Content-Length`).
fn body_kind(headers: &[(String, String)]) -> Result<(BodyKind, bool), RequestError> {
    let values = |wanted: &'static str| {
        headers
            .iter()
            .filter(move |(name, _)| name == wanted)
            .flat_map(|(_, value)| value.split(','))
            .map(str::trim)
            .filter(|item| !item.is_empty())
    };
    let has_length = headers.iter().any(|(name, _)| name == "content-length");
    let codings: Vec<&str> = values("transfer-encoding").collect();
    if let Some(last) = codings.last() {
        if !last.eq_ignore_ascii_case("chunked") {
            return Err(bad("transfer-encoding does not end with chunked"));
        }
        if codings.len() > 1 {
            return Err(RequestError::Reject(
                501,
                "transfer codings besides chunked",
            ));
        }
        return Ok((BodyKind::Chunked, has_length));
    }
    let mut length = None;
    for item in values("content-length") {
        if !item.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("malformed content-length"));
        }
        // All digits: a parse failure is an overflow, i.e. far too large.
        let n = item.parse::<usize>().unwrap_or(usize::MAX);
        if length.is_some_and(|old| old != n) {
            return Err(bad("conflicting content-length values"));
        }
        length = Some(n);
    }
    if has_length && length.is_none() {
        return Err(bad("empty content-length"));
    }
    match length {
        Some(n) if n > MAX_BODY => Err(RequestError::Reject(413, "request body too large")),
        Some(n) if n > 0 => Ok((BodyKind::Length(n), false)),
        _ => Ok((BodyKind::Empty, false)),
    }
}

/// The first value of the header `name` (lowercase).
fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, value)| value.as_str())
}

/// RFC 9110 `tchar`: the characters of methods and header names.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

fn hex_value(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => b - b'A' + 10,
    }
}

/// What the request asked for, as far as writing the reply is concerned.
#[derive(Clone, Copy, Debug)]
pub(super) struct Exchange {
    /// A `HEAD` request: send the head only.
    pub(super) head_only: bool,
    /// An HTTP/1.0 request: no chunked encoding, keep-alive only when asked.
    pub(super) http10: bool,
    /// The client allows another request on this connection.
    pub(super) keep_alive: bool,
}

/// What to do with the connection after a reply was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum After {
    /// Read the next request.
    KeepAlive,
    /// Close gracefully (the reply said `connection: close`, or its end is the close).
    Close,
    /// Close abruptly: the reply was cut short on purpose, or the provider is stopping.
    Abort,
}

/// How the reply body is delimited on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    Length(usize),
    Chunked,
    /// Chunked reply to an HTTP/1.0 client: the body ends where the connection does.
    CloseDelimited,
    /// The reply's headers frame the body themselves: it goes out as is.
    Verbatim,
}

/// Writes `reply` for a request described by `exchange`.
///
/// `sleep` waits out the reply's delays and returns `false` when the provider is stopping,
/// which ends the reply with [`After::Abort`]. Each piece of the body goes out in its own
/// `write` (with its chunk framing, when chunked), so a client sees it as soon as it is sent.
pub(super) fn write_reply<W: Write>(
    out: &mut W,
    reply: &Reply,
    exchange: Exchange,
    sleep: impl Fn(Duration) -> bool,
) -> io::Result<After> {
    if !reply.head_delay.is_zero() && !sleep(reply.head_delay) {
        return Ok(After::Abort);
    }
    let user_framed = reply.headers.iter().any(|(name, _)| {
        name.eq_ignore_ascii_case("content-length")
            || name.eq_ignore_ascii_case("transfer-encoding")
    });
    let framing = if user_framed {
        Framing::Verbatim
    } else if !reply.chunked {
        Framing::Length(reply.body.len())
    } else if exchange.http10 {
        Framing::CloseDelimited
    } else {
        Framing::Chunked
    };
    let cut_short = reply.drop_after.is_some();
    let close = cut_short
        || !exchange.keep_alive
        || matches!(framing, Framing::CloseDelimited | Framing::Verbatim);
    let after = if cut_short {
        After::Abort
    } else if close {
        After::Close
    } else {
        After::KeepAlive
    };

    let mut pending = head(reply, framing, close, exchange.http10);
    if exchange.head_only || !status_has_body(reply.status) {
        out.write_all(&pending)?;
        return Ok(after);
    }
    let chunked = framing == Framing::Chunked;
    let mut first = true;
    for range in reply.pieces() {
        if !first && !sleep(reply.delay) {
            return Ok(After::Abort);
        }
        first = false;
        let last = range.end == reply.body.len();
        let piece = &reply.body[range];
        if chunked {
            pending.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        }
        if piece.len() > INLINE_PIECE {
            if !pending.is_empty() {
                out.write_all(&pending)?;
                pending.clear();
            }
            out.write_all(piece)?;
        } else {
            pending.extend_from_slice(piece);
        }
        if chunked {
            pending.extend_from_slice(b"\r\n");
            if last && !cut_short && reply.endless.is_none() {
                pending.extend_from_slice(LAST_CHUNK);
            }
        }
        if !pending.is_empty() {
            out.write_all(&pending)?;
            pending.clear();
        }
    }
    if let Some(piece) = reply.endless.as_ref().filter(|_| !cut_short) {
        if !first {
            out.write_all(&pending)?;
            pending.clear();
        }
        // Until the client goes away (a write fails) or the provider stops (the sleep says so).
        loop {
            if !first && !sleep(reply.delay) {
                return Ok(After::Abort);
            }
            first = false;
            if chunked {
                pending.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            }
            pending.extend_from_slice(piece);
            if chunked {
                pending.extend_from_slice(b"\r\n");
            }
            out.write_all(&pending)?;
            pending.clear();
        }
    }
    if first {
        // Empty body (or cut at 0): the head, and for a chunked body its end.
        if chunked && !cut_short {
            pending.extend_from_slice(LAST_CHUNK);
        }
        out.write_all(&pending)?;
    }
    Ok(after)
}

/// The status line and headers, framing headers added as `framing` needs.
fn head(reply: &Reply, framing: Framing, close: bool, http10: bool) -> Vec<u8> {
    let mut head = String::with_capacity(192);
    let _ = write!(
        head,
        "HTTP/1.1 {} {}\r\n",
        reply.status,
        reason(reply.status)
    );
    for (name, value) in &reply.headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    if status_has_body(reply.status) {
        match framing {
            Framing::Length(len) => {
                let _ = write!(head, "content-length: {len}\r\n");
            }
            Framing::Chunked => head.push_str("transfer-encoding: chunked\r\n"),
            Framing::CloseDelimited | Framing::Verbatim => {}
        }
    }
    if close {
        head.push_str("connection: close\r\n");
    } else if http10 {
        head.push_str("connection: keep-alive\r\n");
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// Whether a response with `status` has a body (RFC 9112 6.3: not 1xx, 204 or 304).
fn status_has_body(status: u16) -> bool {
    !(100..200).contains(&status) && status != 204 && status != 304
}

/// The reason phrase for `status`.
fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Content Too Large",
        417 => "Expectation Failed",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests;
