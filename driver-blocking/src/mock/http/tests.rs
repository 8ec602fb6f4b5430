//! Request parsing and reply writing without sockets. Every request vector is read three
//! ways: whole, one byte per read, and followed by a second request.

use std::io::{self, Read, Write};
use std::time::Duration;

use serde_json::json;

use super::*;

/// An in-memory stream that hands out at most `step` bytes per read.
struct Fake {
    input: Vec<u8>,
    pos: usize,
    step: usize,
    output: Vec<u8>,
}

impl Fake {
    fn new(input: &[u8], step: usize) -> Self {
        Self {
            input: input.to_vec(),
            pos: 0,
            step,
            output: Vec::new(),
        }
    }
}

impl Read for Fake {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.step).min(self.input.len() - self.pos);
        buf[..n].copy_from_slice(&self.input[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl Write for Fake {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.output.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What a vector should parse to: method, target, body, keep-alive.
type Parsed = (&'static str, &'static str, &'static [u8], bool);

const GOOD: &[(&[u8], Parsed)] = &[
    (b"GET /v1/models HTTP/1.1\r\nHost: a\r\n\r\n", ("GET", "/v1/models", b"", true)),
    (b"GET /m HTTP/1.1\nHost: a\n\n", ("GET", "/m", b"", true)),
    (b"\r\nGET /m HTTP/1.1\r\n\r\n", ("GET", "/m", b"", true)),
    (b"GET /m HTTP/1.0\r\n\r\n", ("GET", "/m", b"", false)),
    (b"GET /m HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", ("GET", "/m", b"", true)),
    (b"GET /m HTTP/1.1\r\nConnection: foo, close\r\n\r\n", ("GET", "/m", b"", false)),
    (b"GET http://h:1/v1/models?a HTTP/1.1\r\n\r\n", ("GET", "/v1/models?a", b"", true)),
    (b"GET http://h:1?a HTTP/1.1\r\n\r\n", ("GET", "/?a", b"", true)),
    (b"POST /c HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", ("POST", "/c", b"hello", true)),
    (b"POST /c HTTP/1.1\r\nContent-Length: 2, 2\r\n\r\nhi", ("POST", "/c", b"hi", true)),
    (b"POST /c HTTP/1.1\r\nContent-Length: 0\r\n\r\n", ("POST", "/c", b"", true)),
    (
        b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\
          5;ext=\"x\"\r\nhello\r\nA \r\n world\r\n\r\n\r\n0\r\nT: 1\r\n\r\n",
        ("POST", "/c", b"hello world\r\n\r\n", true),
    ),
    (
        b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 9\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
        ("POST", "/c", b"hi", false),
    ),
    (b"POST /c HTTP/1.1\r\nHost: a\r\nX-A:\r\n\r\n", ("POST", "/c", b"", true)),
];

const BAD: &[(&[u8], u16)] = &[
    (b"HELLO\r\n\r\n", 400),
    (b"GET  /m HTTP/1.1\r\n\r\n", 400),
    (b"GET /m HTTP/1.1 extra\r\n\r\n", 400),
    (b"G(T /m HTTP/1.1\r\n\r\n", 400),
    (b"GET m HTTP/1.1\r\n\r\n", 400),
    (b"GET /m HTTP/2.0\r\n\r\n", 505),
    (b"GET /m FTP/1.1\r\n\r\n", 400),
    (b"GET /m HTTP/1.1\r\nNo colon\r\n\r\n", 400),
    (b"GET /m HTTP/1.1\r\nHost : a\r\n\r\n", 400),
    (b"GET /m HTTP/1.1\r\nA: b\r\n c\r\n\r\n", 400),
    (b"GET /m HTTP/1.1\r\nA: b\x00c\r\n\r\n", 400),
    (b"GET /m HTTP/1.1\r\nA: b\rc\r\n\r\n", 400),
    (b"POST /c HTTP/1.1\r\nContent-Length: abc\r\n\r\n", 400),
    (b"POST /c HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
    (b"POST /c HTTP/1.1\r\nContent-Length:\r\n\r\n", 400),
    (
        b"POST /c HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
        400,
    ),
    (b"POST /c HTTP/1.1\r\nContent-Length: 67108865\r\n\r\n", 413),
    (
        b"POST /c HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        413,
    ),
    (b"POST /c HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
    (
        b"POST /c HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        501,
    ),
    (
        b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        400,
    ),
    (
        b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\r\n",
        400,
    ),
    (
        b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhiX\r\n",
        400,
    ),
    (
        b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5000000\r\n",
        413,
    ),
    (
        b"POST /c HTTP/1.1\r\nExpect: coffee\r\nContent-Length: 1\r\n\r\nx",
        417,
    ),
];

fn read_all(input: &[u8], step: usize) -> (Vec<Result<Option<Request>, RequestError>>, Vec<u8>) {
    let mut reader = Reader::new(Fake::new(input, step));
    let mut results = Vec::new();
    loop {
        let result = reader.read_request();
        let done = !matches!(result, Ok(Some(_)));
        results.push(result);
        if done {
            return (results, reader.stream.output);
        }
    }
}

fn check_parsed(request: &Request, expected: Parsed, vector: &[u8]) {
    let (method, target, body, keep_alive) = expected;
    let shown = String::from_utf8_lossy(vector);
    assert_eq!(request.method, method, "{shown}");
    assert_eq!(request.target, target, "{shown}");
    assert_eq!(request.body, body, "{shown}");
    assert_eq!(request.keep_alive, keep_alive, "{shown}");
}

#[test]
fn good_requests_whole_bytewise_and_followed() {
    for &(vector, expected) in GOOD {
        for step in [usize::MAX, 1] {
            let (results, _) = read_all(vector, step);
            assert_eq!(results.len(), 2, "{}", String::from_utf8_lossy(vector));
            check_parsed(
                results[0].as_ref().unwrap().as_ref().unwrap(),
                expected,
                vector,
            );
            assert_eq!(results[1], Ok(None));

            let mut twice = vector.to_vec();
            twice.extend_from_slice(b"GET /next HTTP/1.1\r\n\r\n");
            let (results, _) = read_all(&twice, step);
            check_parsed(
                results[0].as_ref().unwrap().as_ref().unwrap(),
                expected,
                vector,
            );
            let next = results[1].as_ref().unwrap().as_ref().unwrap();
            assert_eq!(next.target, "/next");
        }
    }
}

#[test]
fn bad_requests_are_rejected_with_their_status() {
    for &(vector, status) in BAD {
        for step in [usize::MAX, 1] {
            let (results, _) = read_all(vector, step);
            let shown = String::from_utf8_lossy(vector);
            match results.last().unwrap() {
                Err(RequestError::Reject(got, _)) => assert_eq!(*got, status, "{shown}"),
                other => panic!("{shown}: expected {status}, got {other:?}"),
            }
        }
    }
}

#[test]
fn truncated_requests_are_gone() {
    for vector in [
        &b"GET /m HTTP/1.1\r\nHost"[..],
        b"POST /c HTTP/1.1\r\nContent-Length: 5\r\n\r\nhel",
        b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
        b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n",
    ] {
        let (results, _) = read_all(vector, 1);
        assert_eq!(
            results,
            [Err(RequestError::Gone)],
            "{}",
            String::from_utf8_lossy(vector)
        );
    }
}

#[test]
fn limits() {
    let mut head = b"GET /m HTTP/1.1\r\n".to_vec();
    head.extend(std::iter::repeat_n(b'a', MAX_HEAD));
    assert_eq!(
        read_all(&head, usize::MAX).0,
        [Err(RequestError::Reject(431, "request head too large"))]
    );

    let mut many = b"GET /m HTTP/1.1\r\n".to_vec();
    for i in 0..=MAX_HEADERS {
        many.extend(format!("x-{i}: v\r\n").bytes());
    }
    many.extend(b"\r\n");
    assert!(matches!(
        read_all(&many, usize::MAX).0[..],
        [Err(RequestError::Reject(431, _))]
    ));

    let mut line = b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;".to_vec();
    line.extend(std::iter::repeat_n(b'e', MAX_LINE + 10));
    assert!(matches!(
        read_all(&line, usize::MAX).0[..],
        [Err(RequestError::Reject(400, _))]
    ));
}

#[test]
fn expect_continue_is_written_before_the_body_is_read() {
    let vector = b"POST /c HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 2\r\n\r\nhi";
    let (results, output) = read_all(vector, 1);
    assert_eq!(output, b"HTTP/1.1 100 Continue\r\n\r\n");
    assert_eq!(results[0].as_ref().unwrap().as_ref().unwrap().body, b"hi");
    let (_, output) = read_all(b"POST /c HTTP/1.1\r\nExpect: 100-continue\r\n\r\n", 1);
    assert!(output.is_empty());
}

#[test]
fn headers_are_lowercased_and_trimmed() {
    let (results, _) = read_all(b"GET /m HTTP/1.1\r\nX-Mixed-Case:\t v a l \t\r\n\r\n", 1);
    let request = results[0].as_ref().unwrap().as_ref().unwrap();
    assert_eq!(
        request.headers,
        [("x-mixed-case".to_owned(), "v a l".to_owned())]
    );
}

const KEEP: Exchange = Exchange {
    head_only: false,
    http10: false,
    keep_alive: true,
};

fn written(reply: &Reply, exchange: Exchange) -> (String, After) {
    let mut out = Vec::new();
    let after = write_reply(&mut out, reply, exchange, |_| true).unwrap();
    (String::from_utf8(out).unwrap(), after)
}

#[test]
fn reply_bytes() {
    let table: [(Reply, Exchange, &str, After); 9] = [
        (
            Reply::json(200, json!({"a": 1})),
            KEEP,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 7\r\n\r\n{\"a\":1}",
            After::KeepAlive,
        ),
        (
            Reply::sse_raw("abcdef").split_at(&[2]),
            KEEP,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
             transfer-encoding: chunked\r\n\r\n2\r\nab\r\n4\r\ncdef\r\n0\r\n\r\n",
            After::KeepAlive,
        ),
        (
            Reply::sse_raw("abcdef").split_every(4).drop_after(5),
            Exchange {
                keep_alive: false,
                ..KEEP
            },
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
             transfer-encoding: chunked\r\nconnection: close\r\n\r\n4\r\nabcd\r\n1\r\ne\r\n",
            After::Abort,
        ),
        (
            Reply::sse_raw("").header("x-a", "1"),
            KEEP,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
             x-a: 1\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
            After::KeepAlive,
        ),
        (
            Reply::sse_raw("abc"),
            Exchange {
                http10: true,
                ..KEEP
            },
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
             connection: close\r\n\r\nabc",
            After::Close,
        ),
        (
            Reply::raw(201, &[("x-b", "2")], "hey"),
            Exchange {
                http10: true,
                ..KEEP
            },
            "HTTP/1.1 201 Created\r\nx-b: 2\r\ncontent-length: 3\r\nconnection: keep-alive\r\n\r\nhey",
            After::KeepAlive,
        ),
        (
            Reply::raw(
                200,
                &[("Transfer-Encoding", "chunked")],
                "zz\r\nnot hex\r\n",
            ),
            KEEP,
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nconnection: close\r\n\r\nzz\r\nnot hex\r\n",
            After::Close,
        ),
        (
            Reply::json(404, json!(null)),
            Exchange {
                head_only: true,
                ..KEEP
            },
            "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 4\r\n\r\n",
            After::KeepAlive,
        ),
        (
            Reply::raw(204, &[], "ignored"),
            KEEP,
            "HTTP/1.1 204 No Content\r\n\r\n",
            After::KeepAlive,
        ),
    ];
    for (reply, exchange, expected, after) in table {
        assert_eq!(
            written(&reply, exchange),
            (expected.to_owned(), after),
            "{reply:?}"
        );
    }
}

#[test]
fn large_pieces_keep_their_framing() {
    let body = vec![b'q'; INLINE_PIECE * 2 + 3];
    let reply = Reply::sse_raw(body.clone()).split_at(&[1]);
    let mut out = Vec::new();
    write_reply(&mut out, &reply, KEEP, |_| true).unwrap();
    let start = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let mut expected = b"1\r\nq\r\n".to_vec();
    expected.extend(format!("{:x}\r\n", body.len() - 1).bytes());
    expected.extend_from_slice(&body[1..]);
    expected.extend_from_slice(b"\r\n0\r\n\r\n");
    assert_eq!(out[start..], expected[..]);
}

#[test]
fn delays_go_through_sleep_and_stopping_aborts() {
    let reply = Reply::sse_raw("abc")
        .split_every(1)
        .delay(Duration::from_secs(5))
        .delay_head(Duration::from_secs(7));
    let slept = std::cell::RefCell::new(Vec::new());
    let mut out = Vec::new();
    let after = write_reply(&mut out, &reply, KEEP, |d| {
        slept.borrow_mut().push(d.as_secs());
        true
    })
    .unwrap();
    assert_eq!(after, After::KeepAlive);
    assert_eq!(*slept.borrow(), [7, 5, 5]);

    let mut out = Vec::new();
    let after = write_reply(&mut out, &reply, KEEP, |d| d.as_secs() == 7).unwrap();
    assert_eq!(after, After::Abort);
    assert!(out.ends_with(b"1\r\na\r\n"));
}
