//! MCP over the older HTTP+SSE transport (2024-11-05), the fallback when a server answers the
//! streamable-HTTP `initialize` POST with 4xx: against a small legacy server on a loopback
//! socket (good and hostile), and against `mcp-server-everything sse` when
//! `.ci/install-mcp-servers` installed it.

mod scripted_http;

use hrns_blocking::mcp::{McpServers, ServerStatus, StartOptions};
use hrns_blocking::{Tool, ToolContext};
use hrns_core::mcp::config::parse_servers;
use scripted_http::read_raw_request;
use serde_json::{Value, json};
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the legacy server behaves.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Names its endpoint and answers everything on the stream.
    Good,
    /// Names an endpoint on another origin.
    Foreign,
    /// Closes the stream without naming an endpoint.
    ClosesAtOnce,
    /// Keeps the stream open and never names an endpoint.
    Silent,
    /// Names its endpoint, then closes the stream when the first call arrives.
    ClosesOnCall,
}

/// What the server saw: each request's head (lower-cased) and JSON body.
type Seen = Arc<Mutex<Vec<(String, Value)>>>;

/// Writes `text` to the event stream as one chunk.
fn chunk(stream: &Mutex<Option<TcpStream>>, text: &str) {
    if let Some(s) = stream.lock().unwrap().as_mut() {
        let _ = s.write_all(format!("{:x}\r\n{text}\r\n", text.len()).as_bytes());
    }
}

/// The answer to one client message, if it is a request.
fn answer(body: &Value) -> Option<Value> {
    let id = body.get("id")?.clone();
    let result = match body["method"].as_str()? {
        "initialize" => json!({"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                               "serverInfo": {"name": "legacy", "version": "1"}}),
        "tools/list" => json!({"tools": [{"name": "echo", "description": "Echoes.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]}),
        "tools/call" => {
            let text = body["params"]["arguments"]["text"].as_str().unwrap_or("");
            json!({"content": [{"type": "text", "text": format!("echo: {text}")}]})
        }
        _ => {
            return Some(
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}),
            );
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// Starts a legacy server at `/sse` (messages at `/messages?sessionId=1`); returns its port.
fn legacy_server(mode: Mode, seen: Seen) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let events: Arc<Mutex<Option<TcpStream>>> = Arc::default();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let (events, seen) = (Arc::clone(&events), Arc::clone(&seen));
            std::thread::spawn(move || {
                while let Some((head, body)) = read_raw_request(&mut stream) {
                    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    seen.lock().unwrap().push((head.clone(), json.clone()));
                    if head.starts_with("get /sse ") {
                        let _ = stream.write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                              transfer-encoding: chunked\r\n\r\n",
                        );
                        *events.lock().unwrap() = stream.try_clone().ok();
                        match mode {
                            Mode::Good | Mode::ClosesOnCall => chunk(
                                &events,
                                ": legacy\n\nevent: endpoint\ndata: /messages?sessionId=1\n\n",
                            ),
                            Mode::Foreign => chunk(
                                &events,
                                "event: endpoint\ndata: http://evil.example.com/messages\n\n",
                            ),
                            Mode::ClosesAtOnce => {
                                chunk(&events, ": bye\n\n");
                                let _ = stream.write_all(b"0\r\n\r\n");
                                let _ = stream.shutdown(std::net::Shutdown::Both);
                            }
                            Mode::Silent => {}
                        }
                        return; // the stream stays with `events`
                    }
                    if head.starts_with("post /messages?sessionid=1 ") {
                        let _ = stream.write_all(
                            b"HTTP/1.1 202 Accepted\r\ncontent-length: 8\r\n\r\nAccepted",
                        );
                        if mode == Mode::ClosesOnCall && json["method"] == "tools/call" {
                            if let Some(s) = events.lock().unwrap().take() {
                                let _ = s.shutdown(std::net::Shutdown::Both);
                            }
                            continue;
                        }
                        if let Some(reply) = answer(&json) {
                            chunk(&events, &format!("event: message\ndata: {reply}\n\n"));
                        }
                        continue;
                    }
                    // The streamable-HTTP POST to the server URL, and anything else.
                    let _ = stream
                        .write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n");
                }
            });
        }
    });
    port
}

fn start(url: &str, deadline: Duration) -> (McpServers, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (configs, errors) = parse_servers(&json!({
        "old": {"url": url, "headers": {"X-Test-Secret": "hdr-NEVERSHOWN-2"}}
    }));
    assert!(errors.is_empty());
    let mut options = StartOptions::new(dir.path(), dir.path().join("logs"));
    options.deadline = deadline;
    (McpServers::start(&configs, &options), dir)
}

#[test]
fn a_server_of_2024_11_05_is_reached_over_http_and_sse() {
    let seen = Seen::default();
    let port = legacy_server(Mode::Good, Arc::clone(&seen));
    let (servers, dir) = start(
        &format!("http://127.0.0.1:{port}/sse"),
        Duration::from_secs(20),
    );
    let server = &servers.servers()[0];
    assert_eq!(server.status(), ServerStatus::Ready);
    assert_eq!(server.protocol_version().as_deref(), Some("2024-11-05"));
    let tools = servers.tools([]);
    assert_eq!(tools.len(), 1);
    let ctx = ToolContext::new(dir.path()).unwrap();
    let out = tools[0].run(r#"{"text":"over sse"}"#, &ctx);
    assert!(!out.is_error && out.content == "echo: over sse", "{out:?}");
    let out = tools[0].run(r#"{"text":"again"}"#, &ctx);
    assert_eq!(out.content, "echo: again");

    let seen = seen.lock().unwrap();
    let lines: Vec<&str> = seen
        .iter()
        .map(|(h, _)| h.lines().next().unwrap())
        .collect();
    assert!(lines[0].starts_with("post /sse "), "{lines:?}");
    assert!(lines[1].starts_with("get /sse "), "{lines:?}");
    assert!(seen[1].0.contains("accept: text/event-stream"));
    let posted: Vec<&Value> = seen[2..].iter().map(|(_, b)| &b["method"]).collect();
    assert_eq!(
        posted,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call",
            "tools/call"
        ]
    );
    for (head, _) in seen.iter() {
        assert!(head.contains("x-test-secret: hdr-nevershown-2"), "{head}");
    }
    for (head, _) in &seen[2..] {
        assert!(head.starts_with("post /messages?sessionid=1 "), "{head}");
    }
}

#[test]
fn an_endpoint_on_another_origin_is_refused() {
    let port = legacy_server(Mode::Foreign, Seen::default());
    let (servers, _dir) = start(
        &format!("http://127.0.0.1:{port}/sse"),
        Duration::from_secs(20),
    );
    let status = servers.servers()[0].status();
    assert!(
        matches!(&status, ServerStatus::Failed(why) if why.contains("another origin")
            && why.contains("evil.example.com")),
        "{status:?}"
    );
}

#[test]
fn a_stream_without_an_endpoint_fails_the_server() {
    let port = legacy_server(Mode::ClosesAtOnce, Seen::default());
    let (servers, _dir) = start(
        &format!("http://127.0.0.1:{port}/sse"),
        Duration::from_secs(20),
    );
    let status = servers.servers()[0].status();
    assert!(
        matches!(&status, ServerStatus::Failed(why) if why.contains("`endpoint` event")),
        "{status:?}"
    );

    // One that never names it and never closes: the start-up deadline ends the wait.
    let port = legacy_server(Mode::Silent, Seen::default());
    let (servers, _dir) = start(
        &format!("http://127.0.0.1:{port}/sse"),
        Duration::from_secs(1),
    );
    assert!(
        matches!(servers.servers()[0].status(), ServerStatus::Failed(_)),
        "{:?}",
        servers.servers()[0].status()
    );
}

#[test]
fn a_stream_that_closes_mid_call_fails_the_call_and_the_server() {
    let port = legacy_server(Mode::ClosesOnCall, Seen::default());
    let (servers, dir) = start(
        &format!("http://127.0.0.1:{port}/sse"),
        Duration::from_secs(20),
    );
    assert_eq!(servers.servers()[0].status(), ServerStatus::Ready);
    let tools = servers.tools([]);
    let ctx = ToolContext::new(dir.path()).unwrap();
    let out = tools[0].run(r#"{"text":"lost"}"#, &ctx);
    assert!(out.is_error, "{out:?}");
    assert!(out.content.contains("closed its event stream"), "{out:?}");
    assert!(
        matches!(servers.servers()[0].status(), ServerStatus::Failed(why) if why.contains("closed its event stream"))
    );
}

fn reference_server(relative: &str) -> Option<PathBuf> {
    let prefix = std::env::var_os("HRNS_MCP_SERVERS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/mcp-servers"),
        PathBuf::from,
    );
    let path = prefix.join(relative);
    if path.exists() {
        return Some(path);
    }
    let notice = format!(
        "MCP reference server {} is not installed; run .ci/install-mcp-servers to install it",
        path.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{notice}");
    eprintln!("skipping: {notice}");
    None
}

/// The reference server's process, killed when dropped.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_everything_server_over_http_and_sse() {
    let Some(command) = reference_server("node/node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new(command)
        .arg("sse")
        .env("PORT", port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _server = Server(child);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not start listening"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (servers, dir) = start(
        &format!("http://127.0.0.1:{port}/sse"),
        Duration::from_secs(30),
    );
    let server = &servers.servers()[0];
    assert_eq!(server.status(), ServerStatus::Ready);
    let tools = servers.tools([]);
    let echo = tools
        .iter()
        .find(|t| t.spec().name == "mcp__old__echo")
        .unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    let out = echo.run(r#"{"message":"over sse"}"#, &ctx);
    assert!(!out.is_error && out.content.contains("over sse"), "{out:?}");
}
