//! The `mcp_legacy_stream` fuzz body: the event stream of an MCP 2024-11-05 (HTTP+SSE) server
//! ([`EventStream`]), which names the endpoint the client then posts to.
//!
//! Input layout as for the other targets, except that byte 0 picks the server URL the stream
//! was opened from ([`URLS`]). The body is decoded fed whole and fed in pieces (polling after
//! each). These must hold: no panic; the same events and error whichever way the body was cut;
//! errors sticky, and bytes fed after one ignored; the stream always ends in an error once its
//! end was fed (`NoEndpoint` when no endpoint came, `Closed` or an earlier error otherwise);
//! at most one endpoint, the one [`EventStream::endpoint`] returns, with the server URL's
//! scheme, host and port; every message handed out is valid JSON-RPC that reads back the same.

use super::Input;
use crate::mcp::jsonrpc::Message;
use crate::mcp::legacy::{EventStream, StreamError, StreamEvent};
use crate::tool::fetch::host_and_port;

/// Server URLs: byte 0 modulo 8 picks one.
const URLS: [&str; 8] = [
    "http://127.0.0.1:8080/sse",
    "https://mcp.example.com/v1/sse",
    "http://[::1]:3000/sse?session=1",
    "HTTP://Example.COM/sse",
    "http://h/",
    "https://user@h.example:8443/a/b/sse#frag",
    "http://h:80/sse",
    "https://xn--bcher-kva.example/sse",
];

/// Indices into [`URLS`], as [`Input::parse`] wants a table of eight.
const URL_INDICES: [usize; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

/// What one run observed.
#[derive(Debug, PartialEq)]
struct Outcome {
    events: Vec<StreamEvent>,
    error: Option<StreamError>,
}

/// The scheme, host and port of `url`, compared without regard to case.
fn origin(url: &str) -> (String, String, u16) {
    let scheme = url.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
    let (host, port) = host_and_port(url).expect("the URL has a host");
    (
        scheme.expect("the URL has a scheme"),
        host.to_ascii_lowercase(),
        port,
    )
}

/// Polls until `Ok(None)` or an error, checking each event and that an error is sticky.
fn drain(stream: &mut EventStream, url: &str, out: &mut Outcome) {
    loop {
        match stream.poll_event() {
            Ok(Some(event)) => {
                assert!(out.error.is_none(), "an event after an error");
                match &event {
                    StreamEvent::Endpoint(endpoint) => {
                        assert!(
                            !out.events
                                .iter()
                                .any(|e| matches!(e, StreamEvent::Endpoint(_))),
                            "a second endpoint"
                        );
                        assert_eq!(stream.endpoint(), Some(endpoint.as_str()));
                        assert_eq!(origin(endpoint), origin(url), "a foreign endpoint");
                    }
                    StreamEvent::Messages(messages) => {
                        for message in messages {
                            let bytes = message.to_bytes();
                            assert_eq!(
                                Message::parse(&bytes).as_deref(),
                                Ok(std::slice::from_ref(message)),
                                "a message that does not read back"
                            );
                        }
                    }
                    StreamEvent::Malformed(_) => {}
                }
                out.events.push(event);
            }
            Ok(None) => {
                assert!(out.error.is_none(), "error not sticky");
                return;
            }
            Err(error) => {
                if let Some(earlier) = &out.error {
                    assert_eq!(&error, earlier, "error changed");
                }
                assert_eq!(stream.poll_event(), Err(error.clone()), "error not sticky");
                out.error = Some(error);
                return;
            }
        }
    }
}

fn run(url: &str, pieces: &[&[u8]]) -> Outcome {
    let mut stream = EventStream::new(url);
    let mut out = Outcome {
        events: Vec::new(),
        error: None,
    };
    for piece in pieces {
        stream.feed(piece);
        drain(&mut stream, url, &mut out);
    }
    stream.feed_eof();
    drain(&mut stream, url, &mut out);
    let named = out
        .events
        .iter()
        .any(|e| matches!(e, StreamEvent::Endpoint(_)));
    match &out.error {
        None => panic!("the stream's end was fed and no error came"),
        Some(StreamError::NoEndpoint) => assert!(!named, "NoEndpoint after an endpoint"),
        Some(StreamError::Closed) => assert!(named, "Closed before an endpoint"),
        Some(_) => {}
    }
    assert_eq!(stream.endpoint().is_some(), named);
    // Input after the end (or an error) is ignored.
    let error = out.error.clone();
    stream.feed(b"event: endpoint\ndata: /late\n\ndata: {}\n\n");
    drain(&mut stream, url, &mut out);
    assert_eq!(out.error, error, "input after the end changed the error");
    out
}

/// Fuzz body for the HTTP+SSE transport's event stream; see the module docs.
pub fn mcp_legacy_stream(data: &[u8]) {
    let Some(input) = Input::parse(data, &URL_INDICES) else {
        return;
    };
    let url = URLS[input.limit];
    let whole = run(url, &[input.body]);
    let split = run(url, &input.pieces());
    assert_eq!(split, whole, "feeding in pieces changed the outcome");
}
