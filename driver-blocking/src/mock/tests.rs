//! The provider over real loopback sockets, driven by a raw HTTP client written here.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{MockProvider, Reply, chunk};

const WAIT: Duration = Duration::from_secs(10);

/// A raw client connection.
struct Client {
    reader: BufReader<TcpStream>,
}

/// A response as read off the wire.
#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    /// The chunks of a chunked body, in order (empty for a `Content-Length` body).
    chunks: Vec<Vec<u8>>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

impl Client {
    fn connect(mock: &MockProvider) -> Self {
        let stream = TcpStream::connect(mock.addr()).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        Self {
            reader: BufReader::new(stream),
        }
    }

    fn send(&mut self, raw: &[u8]) {
        self.reader.get_mut().write_all(raw).unwrap();
    }

    fn post_chat(&mut self, body: &str) {
        let request = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.send(request.as_bytes());
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        assert!(line.ends_with("\r\n"), "incomplete line {line:?}");
        line.truncate(line.len() - 2);
        line
    }

    /// Reads a status line and headers.
    fn head(&mut self) -> (u16, Vec<(String, String)>) {
        let status_line = self.line();
        let status = status_line
            .strip_prefix("HTTP/1.1 ")
            .and_then(|rest| rest.get(..3))
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
        let mut headers = Vec::new();
        loop {
            let line = self.line();
            if line.is_empty() {
                return (status, headers);
            }
            let (name, value) = line.split_once(':').unwrap();
            headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
        }
    }

    /// Reads one chunk; `None` for the last (zero-length) chunk.
    fn chunk(&mut self) -> Option<Vec<u8>> {
        let size = usize::from_str_radix(&self.line(), 16).unwrap();
        let mut data = vec![0; size];
        self.reader.read_exact(&mut data).unwrap();
        assert_eq!(self.line(), "");
        (size > 0).then_some(data)
    }

    fn response(&mut self) -> Response {
        let (status, headers) = self.head();
        let mut response = Response {
            status,
            headers,
            chunks: Vec::new(),
            body: Vec::new(),
        };
        if response.header("transfer-encoding") == Some("chunked") {
            while let Some(chunk) = self.chunk() {
                response.body.extend_from_slice(&chunk);
                response.chunks.push(chunk);
            }
        } else {
            let len: usize = response.header("content-length").unwrap().parse().unwrap();
            response.body.resize(len, 0);
            self.reader.read_exact(&mut response.body).unwrap();
        }
        response
    }

    /// Reads until the server closes; returns what came.
    fn rest(&mut self) -> Vec<u8> {
        let mut rest = Vec::new();
        self.reader.read_to_end(&mut rest).unwrap();
        rest
    }
}

fn start(script: impl IntoIterator<Item = Reply>) -> MockProvider {
    MockProvider::start(script).unwrap()
}

#[test]
fn sse_reply_is_chunked_with_the_exact_bytes() {
    let mock = start([Reply::sse([
        chunk::text_chunk("Hi"),
        chunk::finish_chunk("stop"),
    ])]);
    assert!(mock.base_url().starts_with("http://127.0.0.1:"));
    assert!(mock.base_url().ends_with("/v1"));
    let mut client = Client::connect(&mock);
    client.post_chat("{}");
    let response = client.response();
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("text/event-stream"));
    assert_eq!(response.header("content-length"), None);
    let expected = format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        chunk::text_chunk("Hi"),
        chunk::finish_chunk("stop")
    );
    assert_eq!(response.body, expected.as_bytes());
    assert_eq!(response.chunks.len(), 1);
}

#[test]
fn split_pieces_arrive_separately_and_streamed() {
    let delay = Duration::from_millis(300);
    let reply = Reply::sse_raw("data: 1\n\ndata: 2\n\n")
        .split_at(&[9])
        .delay(delay);
    let mock = start([reply]);
    let mut client = Client::connect(&mock);
    client.post_chat("{}");
    let (status, _) = client.head();
    assert_eq!(status, 200);
    assert_eq!(client.chunk().unwrap(), b"data: 1\n\n");
    // The first piece was readable while the server still slept before the second.
    let first_at = Instant::now();
    assert_eq!(client.chunk().unwrap(), b"data: 2\n\n");
    assert!(first_at.elapsed() >= delay - Duration::from_millis(50));
    assert_eq!(client.chunk(), None);
}

#[test]
fn split_every_gives_one_chunk_per_piece() {
    let mock = start([Reply::sse_raw("abcdefghij").split_every(4)]);
    let mut client = Client::connect(&mock);
    client.post_chat("{}");
    let response = client.response();
    assert_eq!(response.chunks, [&b"abcd"[..], b"efgh", b"ij"]);
}

#[test]
fn json_reply_has_content_length() {
    let mock = start([Reply::json(200, json!({"id": "x", "choices": []}))]);
    let mut client = Client::connect(&mock);
    client.post_chat("{}");
    let response = client.response();
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("application/json"));
    assert_eq!(response.json(), json!({"id": "x", "choices": []}));
}

#[test]
fn rate_limited_has_retry_after() {
    let mock = start([Reply::rate_limited("3")]);
    let mut client = Client::connect(&mock);
    client.post_chat("{}");
    let response = client.response();
    assert_eq!(response.status, 429);
    assert_eq!(response.header("retry-after"), Some("3"));
    assert_eq!(response.json()["error"]["code"], "rate_limit_exceeded");
}

#[test]
fn drop_after_closes_mid_body() {
    let mock = start([Reply::sse_raw(vec![b'x'; 100]).drop_after(10)]);
    let mut client = Client::connect(&mock);
    client.post_chat("{}");
    let (status, headers) = client.head();
    assert_eq!(status, 200);
    assert!(headers.contains(&("transfer-encoding".to_owned(), "chunked".to_owned())));
    // Ten bytes as one chunk, then the end of the stream: no zero-length chunk.
    assert_eq!(client.rest(), b"a\r\nxxxxxxxxxx\r\n");
}

#[test]
fn exhausted_script_answers_500() {
    let mock = start([]);
    let mut client = Client::connect(&mock);
    client.post_chat("{}");
    let response = client.response();
    assert_eq!(response.status, 500);
    assert_eq!(
        response.body,
        br#"{"error":{"message":"mock provider: script exhausted","type":"mock"}}"#
    );
}

#[test]
fn keep_alive_serves_several_requests_on_one_connection() {
    let mock = start([Reply::text_answer("one")]);
    mock.push(Reply::json(200, json!({"n": 2})));
    assert_eq!(mock.remaining(), 2);
    let mut client = Client::connect(&mock);
    client.post_chat(r#"{"n":1}"#);
    let first = client.response();
    assert_eq!(first.status, 200);
    assert_eq!(first.header("connection"), None);
    client.post_chat(r#"{"n":2}"#);
    assert_eq!(client.response().json(), json!({"n": 2}));
    // A third, pipelined with a fourth that closes.
    client.send(b"GET /v1/models HTTP/1.1\r\nHost: a\r\n\r\nGET /models HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    assert_eq!(client.response().status, 200);
    let last = client.response();
    assert_eq!(last.header("connection"), Some("close"));
    assert!(client.rest().is_empty());
    let bodies: Vec<_> = mock
        .requests()
        .iter()
        .map(|r| r.body_str().into_owned())
        .collect();
    assert_eq!(bodies, [r#"{"n":1}"#, r#"{"n":2}"#]);
    assert_eq!(mock.model_requests().len(), 2);
}

#[test]
fn chunked_request_body_is_decoded_and_recorded() {
    let mock = start([Reply::json(200, json!({}))]);
    let mut client = Client::connect(&mock);
    client.send(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n\
          4;ext=1\r\n{\"a\"\r\n",
    );
    thread::sleep(Duration::from_millis(20));
    client.send(b"3\r\n:1}\r\n0\r\nX-Trailer: t\r\n\r\n");
    assert_eq!(client.response().status, 200);
    let requests = mock.requests();
    assert_eq!(requests[0].json(), json!({"a": 1}));
    assert_eq!(requests[0].header("transfer-encoding"), Some("chunked"));
}

#[test]
fn expect_100_continue_is_answered() {
    let mock = start([Reply::json(200, json!({"ok": true}))]);
    let mut client = Client::connect(&mock);
    client.send(
        b"POST /chat/completions HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\
          Expect: 100-continue\r\n\r\n",
    );
    assert_eq!(client.line(), "HTTP/1.1 100 Continue");
    assert_eq!(client.line(), "");
    client.send(b"{}");
    assert_eq!(client.response().json(), json!({"ok": true}));
}

#[test]
fn models_lists_the_configured_ids() {
    let mock = start([]);
    let mut client = Client::connect(&mock);
    client.send(b"GET /v1/models HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(
        client.response().json(),
        json!({"object": "list", "data": [{"id": "mock-model", "object": "model", "owned_by": "mock"}]})
    );
    let mock = mock.with_models(["a", "b"]);
    client.send(b"GET /models HTTP/1.1\r\nHost: a\r\n\r\n");
    let ids: Vec<Value> = client.response().json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(ids, [json!("a"), json!("b")]);
    assert_eq!(mock.request_count(), 2);
}

#[test]
fn unknown_path_is_404_and_wrong_method_405() {
    let mock = start([]);
    let mut client = Client::connect(&mock);
    client.send(b"GET /v2/nothing?x=1 HTTP/1.1\r\nHost: a\r\n\r\n");
    let response = client.response();
    assert_eq!(response.status, 404);
    assert_eq!(response.json()["error"]["type"], "mock");
    client.send(b"GET /v1/chat/completions HTTP/1.1\r\nHost: a\r\n\r\n");
    let response = client.response();
    assert_eq!(response.status, 405);
    assert_eq!(response.header("allow"), Some("POST"));
    assert_eq!(mock.requests()[0].path, "/v2/nothing?x=1");
}

#[test]
fn malformed_request_gets_400_and_close() {
    let mock = start([]);
    let mut client = Client::connect(&mock);
    client.send(b"HELLO THERE\r\n\r\n");
    let response = client.response();
    assert_eq!(response.status, 400);
    assert_eq!(response.header("connection"), Some("close"));
    assert!(client.rest().is_empty());
    assert!(mock.requests().is_empty());
}

#[test]
fn oversized_requests_are_refused() {
    let mock = start([]);
    let mut client = Client::connect(&mock);
    client.send(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 100000000\r\n\r\n");
    assert_eq!(client.response().status, 413);
    let mut client = Client::connect(&mock);
    let mut huge_head = b"GET /v1/models HTTP/1.1\r\n".to_vec();
    huge_head.extend_from_slice(b"x-filler: ");
    huge_head.resize(huge_head.len() + 70 * 1024, b'y');
    // The server may answer and close before all of this is written.
    let _ = client.reader.get_mut().write_all(&huge_head);
    assert_eq!(client.response().status, 431);
}

#[test]
fn requests_are_recorded_with_lowercased_headers_and_exact_body() {
    let mock = start([Reply::json(200, json!({}))]);
    let mut client = Client::connect(&mock);
    let body = b"\x00\xffnot json\r\n";
    let mut request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer sk-test\r\n\
         X-Custom-Thing:   spaced value  \r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    client.send(&request);
    assert_eq!(client.response().status, 200);
    assert!(mock.wait_for_requests(1, WAIT));
    let recorded = &mock.requests()[0];
    assert_eq!(recorded.method, "POST");
    assert_eq!(recorded.path, "/v1/chat/completions");
    assert_eq!(recorded.body, body);
    assert_eq!(
        recorded.headers,
        [
            ("host".to_owned(), "127.0.0.1".to_owned()),
            ("authorization".to_owned(), "Bearer sk-test".to_owned()),
            ("x-custom-thing".to_owned(), "spaced value".to_owned()),
            ("content-length".to_owned(), body.len().to_string()),
        ]
    );
    assert_eq!(recorded.header("AUTHORIZATION"), Some("Bearer sk-test"));
    assert_eq!(recorded.header("missing"), None);
}

#[test]
fn wait_for_requests_times_out_and_push_works_while_running() {
    let mock = start([]);
    assert!(!mock.wait_for_requests(1, Duration::from_millis(20)));
    mock.push(Reply::text_answer("late"));
    let mut client = Client::connect(&mock);
    client.post_chat("{}");
    assert_eq!(client.response().status, 200);
    assert!(mock.wait_for_requests(1, Duration::ZERO));
}

#[test]
fn repeating_serves_every_request_and_recording_can_be_off() {
    let mock = MockProvider::start_repeating(Reply::text_answer("again")).unwrap();
    mock.set_recording(false);
    let mut client = Client::connect(&mock);
    for _ in 0..3 {
        client.post_chat("{}");
        let body = client.response().body;
        assert!(body.ends_with(b"data: [DONE]\n\n"));
    }
    assert_eq!(mock.request_count(), 3);
    assert!(mock.requests().is_empty());
}

#[test]
fn head_delay_holds_the_status_line() {
    let delay = Duration::from_millis(150);
    let mock = start([Reply::json(200, json!({})).delay_head(delay)]);
    let mut client = Client::connect(&mock);
    let sent = Instant::now();
    client.post_chat("{}");
    assert_eq!(client.response().status, 200);
    assert!(sent.elapsed() >= delay);
}

#[test]
fn client_gone_mid_reply_does_not_hurt_the_server() {
    let big = Reply::sse_raw(vec![b'z'; 8 << 20]);
    let mock = start([big.clone().split_every(1024), big]);
    let mut client = Client::connect(&mock);
    client.post_chat("{}");
    client.head();
    drop(client);
    let mut client = Client::connect(&mock);
    client.post_chat("{}");
    assert_eq!(client.response().body.len(), 8 << 20);
}

#[test]
fn drop_returns_promptly_with_connections_stuck_in_delays() {
    // Connections stuck in ten-minute waits: a drop that waited for any of them would take
    // minutes. The bound below is far under that, and far over a loaded machine's scheduling
    // (3 s was outlasted once while the whole suite ran at load 10).
    let slow = Reply::sse_raw("abcdef")
        .split_every(1)
        .delay(Duration::from_secs(600));
    let mock = start([slow, Reply::hang()]);
    let addr = mock.addr();
    let mut streaming = Client::connect(&mock);
    streaming.post_chat("{}");
    streaming.head();
    assert_eq!(streaming.chunk().unwrap(), b"a");
    let mut hanging = Client::connect(&mock);
    hanging.post_chat("{}");
    assert!(mock.wait_for_requests(2, WAIT));
    let idle = Client::connect(&mock);

    let dropped_at = Instant::now();
    drop(mock);
    assert!(
        dropped_at.elapsed() < Duration::from_secs(60),
        "{:?}",
        dropped_at.elapsed()
    );
    assert!(streaming.rest().is_empty());
    assert!(hanging.rest().is_empty());
    drop(idle);
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn a_responder_answers_by_request_and_falls_back_to_the_routes() {
    let mock = MockProvider::start_with(|req| {
        let body = req.body_str();
        if body.contains("stream_options") {
            return Some(Reply::error(400, "unknown field stream_options"));
        }
        (req.method == "GET" && req.path.ends_with("/models"))
            .then(|| Reply::json(200, json!({"data": [{"id": "m", "context_length": 4096}]})))
    })
    .unwrap();
    let mut client = Client::connect(&mock);
    client.post_chat(r#"{"stream_options":{"include_usage":true}}"#);
    let refused = client.response();
    assert_eq!(refused.status, 400);
    assert_eq!(
        refused.json()["error"]["message"],
        "unknown field stream_options"
    );
    client.send(b"GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n");
    assert_eq!(client.response().json()["data"][0]["context_length"], 4096);
    client.post_chat("{}");
    assert_eq!(
        client.response().status,
        500,
        "no script left: the default answer"
    );
    assert_eq!(mock.requests().len(), 2, "the chat requests");
    assert_eq!(mock.model_requests().len(), 1, "the /models lookup, apart");
    assert!(format!("{mock:?}").contains("MockProvider"));
}

#[test]
fn summary_requests_get_the_summary_reply_wherever_they_come() {
    let mock = start([Reply::text_answer("scripted")])
        .with_summary_reply(Reply::text_answer("the summary"));
    let summary = json!({
        "model": "m",
        "messages": [{"role": "user", "content": format!("<conversation>…</conversation>\n\n{}", hrns_core::context::SUMMARY_PROMPT)}]
    })
    .to_string();
    let with_tools = json!({
        "model": "m",
        "tools": [{"type": "function", "function": {"name": "f"}}],
        "messages": [{"role": "user", "content": hrns_core::context::SUMMARY_PROMPT}]
    })
    .to_string();
    let mut client = Client::connect(&mock);
    client.post_chat(&summary);
    assert!(String::from_utf8_lossy(&client.response().body).contains("summary"));
    client.post_chat(&summary);
    assert!(String::from_utf8_lossy(&client.response().body).contains("summary"));
    assert_eq!(mock.remaining(), 1, "the script is untouched");
    client.post_chat(&with_tools);
    assert!(
        String::from_utf8_lossy(&client.response().body).contains("scripted"),
        "a request with tools is not a summary request"
    );
    assert_eq!(mock.chat_requests().len(), 3);
}

#[test]
fn a_context_window_is_listed_and_enforced() {
    let mock = start([Reply::text_answer("fits")]).with_context_window(300);
    let mut client = Client::connect(&mock);
    client.send(b"GET /v1/models HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(client.response().json()["data"][0]["context_length"], 300);
    let long = json!({"messages": [{"role": "user", "content": "x".repeat(1300)}]}).to_string();
    client.post_chat(&long);
    let r = client.response();
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], "context_length_exceeded");
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("maximum context length is 300 tokens")
    );
    client.post_chat(r#"{"messages":[]}"#);
    assert_eq!(client.response().status, 200);
    assert_eq!(mock.remaining(), 0);
    assert_eq!(mock.chat_requests().len(), 2);
    assert_eq!(
        mock.requests().len(),
        2,
        "the /models lookup is listed apart"
    );
    assert_eq!(mock.model_requests().len(), 1);
}

#[test]
fn places_to_cut_are_found_in_the_body() {
    let reply = Reply::sse_raw("data: a\n\ndata: bc\n\ndata: [DONE]\n\n");
    assert_eq!(reply.offset_of(b"bc"), Some(15));
    assert_eq!(reply.offset_of(b""), Some(0));
    assert_eq!(reply.offset_of(b"zz"), None);
    // The event's end, its blank line included: the next event starts there.
    let end = reply.end_of_event_with(b"bc").unwrap();
    assert!(reply.body()[end..].starts_with(b"data: [DONE]"));
    assert_eq!(reply.end_of_event_with(b"zz"), None);
    // A needle in the last event, with no blank line after it: no end.
    assert_eq!(Reply::sse_raw("data: x").end_of_event_with(b"x"), None);
}
