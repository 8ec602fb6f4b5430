use super::*;
use serde_json::json;

const URL: &str = "http://127.0.0.1:8080/sse";

/// Everything the stream gives for `input`, fed whole and then one byte at a time (both
/// must agree), ending with its error.
fn run(url: &str, input: &str) -> (Vec<StreamEvent>, StreamError) {
    let whole = {
        let mut s = EventStream::new(url);
        s.feed(input.as_bytes());
        s.feed_eof();
        drain(&mut s)
    };
    let bytewise = {
        let mut s = EventStream::new(url);
        let mut events = Vec::new();
        for b in input.as_bytes() {
            s.feed(std::slice::from_ref(b));
            loop {
                match s.poll_event() {
                    Ok(Some(e)) => events.push(e),
                    Ok(None) => break,
                    Err(e) => panic!("error before the end: {e}"),
                }
            }
        }
        s.feed_eof();
        let (rest, error) = drain(&mut s);
        events.extend(rest);
        (events, error)
    };
    assert_eq!(whole, bytewise, "{input:?}");
    whole
}

fn drain(s: &mut EventStream) -> (Vec<StreamEvent>, StreamError) {
    let mut events = Vec::new();
    loop {
        match s.poll_event() {
            Ok(Some(e)) => events.push(e),
            Ok(None) => panic!("no end after feed_eof"),
            Err(e) => {
                assert_eq!(s.poll_event(), Err(e.clone()), "errors are terminal");
                return (events, e);
            }
        }
    }
}

fn messages(value: serde_json::Value) -> StreamEvent {
    StreamEvent::Messages(Message::parse(value.to_string().as_bytes()).unwrap())
}

#[test]
fn the_endpoint_then_messages_in_order() {
    let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {}});
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}});
    let input = format!(
        ": hello\r\nevent: endpoint\r\ndata: /messages?sessionId=a1\r\n\r\n\
         event: ping\ndata: x\n\n\
         event: endpoint\ndata: /elsewhere\n\n\
         event: message\ndata: {answer}\n\n\
         data: {note}\n\n\
         data:\n\n\
         event: message\ndata: not json\n\n"
    );
    let (events, error) = run(URL, &input);
    assert_eq!(events.len(), 4, "{events:?}");
    assert_eq!(
        events[0],
        StreamEvent::Endpoint("http://127.0.0.1:8080/messages?sessionId=a1".into())
    );
    assert_eq!(events[1], messages(answer));
    assert_eq!(events[2], messages(note));
    assert!(matches!(&events[3], StreamEvent::Malformed(_)));
    assert_eq!(error, StreamError::Closed);
}

#[test]
fn endpoints_resolve_against_the_server_url() {
    for (data, endpoint) in [
        ("/messages", "http://127.0.0.1:8080/messages"),
        ("messages?s=1", "http://127.0.0.1:8080/messages?s=1"),
        ("http://127.0.0.1:8080/m", "http://127.0.0.1:8080/m"),
        ("HTTP://127.0.0.1:8080/m", "HTTP://127.0.0.1:8080/m"),
        ("//127.0.0.1:8080/m", "http://127.0.0.1:8080/m"),
    ] {
        let (events, _) = run(URL, &format!("event: endpoint\ndata: {data}\n\n"));
        assert_eq!(events, [StreamEvent::Endpoint(endpoint.into())], "{data}");
    }
    let (events, _) = run(
        "https://mcp.example.com/v1/sse",
        "event: endpoint\ndata: msg\n\n",
    );
    assert_eq!(
        events,
        [StreamEvent::Endpoint(
            "https://mcp.example.com/v1/msg".into()
        )]
    );
}

#[test]
fn an_endpoint_on_another_origin_is_refused() {
    for data in [
        "http://evil.example.com/messages",
        "https://127.0.0.1:8080/messages",
        "http://127.0.0.1:9090/messages",
        "//evil.example.com/messages",
        "http://127.0.0.1:8080@evil.example.com/messages",
    ] {
        let mut s = EventStream::new(URL);
        s.feed(format!("event: endpoint\ndata: {data}\n\n").as_bytes());
        let error = s.poll_event().unwrap_err();
        assert!(
            matches!(error, StreamError::ForeignEndpoint { .. }),
            "{data}: {error:?}"
        );
        assert_eq!(s.endpoint(), None);
        assert_eq!(s.poll_event(), Err(error), "terminal");
    }
    let mut s = EventStream::new(URL);
    s.feed(b"event: endpoint\ndata: ftp://127.0.0.1:8080/m\n\n");
    assert!(matches!(s.poll_event(), Err(StreamError::BadEndpoint(_))));
}

#[test]
fn a_stream_that_ends_without_an_endpoint_says_so() {
    for input in [
        "",
        ": only comments\n\n",
        "event: endpoint\ndata: /m",
        "event: other\ndata: x\n\n",
    ] {
        let (events, error) = run(URL, input);
        assert!(events.is_empty(), "{input:?}");
        assert_eq!(error, StreamError::NoEndpoint, "{input:?}");
    }
}

#[test]
fn an_oversized_event_is_an_error() {
    let mut s = EventStream::new(URL);
    s.feed(b"event: endpoint\ndata: /m\n\n");
    assert!(matches!(s.poll_event(), Ok(Some(StreamEvent::Endpoint(_)))));
    let big = vec![b'x'; crate::sse::DEFAULT_MAX_EVENT_SIZE + 10];
    s.feed(b"data: ");
    s.feed(&big);
    assert!(matches!(s.poll_event(), Err(StreamError::Sse(_))));
}

#[test]
fn a_refusal_is_quoted_on_one_short_line() {
    assert_eq!(quote_refusal(b""), None);
    assert_eq!(quote_refusal(b" \r\n\t "), None);
    assert_eq!(
        quote_refusal(b"{\"error\": \"Bad Request:\n  No valid session ID\"}\n").as_deref(),
        Some("{\"error\": \"Bad Request: No valid session ID\"}")
    );
    // Control sequences and broken UTF-8 never come through as such.
    let hostile = b"\x1b[2J\x1b]0;owned\x07 gone\xff\x00away";
    let quoted = quote_refusal(hostile).unwrap();
    assert!(!quoted.chars().any(char::is_control), "{quoted:?}");
    assert_eq!(quoted, "[2J ]0;owned gone\u{fffd} away");
    // A long body is cut, saying how much was left out.
    let long = "é".repeat(10_000);
    let quoted = quote_refusal(long.as_bytes()).unwrap();
    assert!(quoted.len() < MAX_QUOTED_REFUSAL + 40, "{}", quoted.len());
    assert!(quoted.ends_with("more bytes)"), "{quoted}");
}
