//! MCP over streamable HTTP against the reference server `@modelcontextprotocol/server-everything`
//! (`mcp-server-everything streamableHttp`, port from `PORT`), installed by
//! `.ci/install-mcp-servers` under `$HRNS_MCP_SERVERS` or `target/mcp-servers/`. When it is
//! missing the test fails if `CI` is set and otherwise prints a notice and passes.

mod scripted_http;

use hrns_blocking::mcp::{McpServers, ServerStatus, StartOptions};
use hrns_blocking::{Tool, ToolContext};
use hrns_core::mcp::config::parse_servers;
use scripted_http::read_request;
use serde_json::json;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// The server process, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the server on a free port and waits until it accepts connections.
fn start_server(command: &PathBuf) -> (Server, u16) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(command)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the server did not start listening"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (server, port)
}

#[test]
fn the_everything_server_over_streamable_http() {
    let Some(command) = reference_server("node/node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let (_server, port) = start_server(&command);
    let dir = tempfile::tempdir().unwrap();
    let (configs, errors) = parse_servers(&json!({
        "web": {"url": format!("http://127.0.0.1:{port}/mcp"),
                "headers": {"X-Test-Secret": "hdr-NEVERSHOWN-1"}}
    }));
    assert!(errors.is_empty());
    let servers = McpServers::start(
        &configs,
        &StartOptions::new(dir.path(), dir.path().join("logs")),
    );
    let server = &servers.servers()[0];
    assert_eq!(server.status(), ServerStatus::Ready);
    assert_eq!(server.protocol_version().as_deref(), Some("2025-06-18"));
    let tools = servers.tools([]);
    let find = |name: &str| tools.iter().find(|t| t.spec().name == name).unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();

    let out = find("mcp__web__echo").run(r#"{"message":"over http"}"#, &ctx);
    assert!(
        !out.is_error && out.content.contains("over http"),
        "{out:?}"
    );
    let out = find("mcp__web__get-structured-content").run(r#"{"location":"New York"}"#, &ctx);
    assert!(!out.is_error, "{out:?}");

    // A long operation (its answer comes as an event stream), cancelled; the server lives on.
    let cancel = ctx.cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        cancel.cancel();
    });
    let long = find("mcp__web__trigger-long-running-operation");
    let out = long.run(r#"{"duration":60,"steps":60}"#, &ctx);
    canceller.join().unwrap();
    assert!(out.is_error && out.content.contains("cancelled"), "{out:?}");
    ctx.cancel.reset();
    let out = find("mcp__web__echo").run(r#"{"message":"again"}"#, &ctx);
    assert!(out.content.contains("again"), "{out:?}");
}

/// A server that answers every request with `status` and `body`.
fn refusing_server(status: &str, body: &[u8]) -> u16 {
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut answer = format!(
        "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(body);
    std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(&answer);
        }
    });
    port
}

/// The status of the one server at `url` once its start ended.
fn status_of(url: &str) -> ServerStatus {
    let dir = tempfile::tempdir().unwrap();
    let (configs, _) = parse_servers(&json!({"old": {"url": url}}));
    let servers = McpServers::start(
        &configs,
        &StartOptions::new(dir.path(), dir.path().join("logs")),
    );
    servers.servers()[0].status()
}

#[test]
fn a_server_that_refuses_both_transports_is_reported_with_both_answers() {
    let port = refusing_server("405 Method Not Allowed", b"");
    let dir = tempfile::tempdir().unwrap();
    let (configs, _) =
        parse_servers(&json!({"old": {"url": format!("http://127.0.0.1:{port}/sse")}}));
    let servers = McpServers::start(
        &configs,
        &StartOptions::new(dir.path(), dir.path().join("logs")),
    );
    let status = servers.servers()[0].status();
    assert!(
        matches!(&status, ServerStatus::Failed(why) if why.contains("POST with HTTP 405")
            && why.contains("HTTP+SSE transport with HTTP 405") && why.contains("neither transport")),
        "{status:?}"
    );
}

#[test]
fn when_the_fallback_fails_too_the_first_refusals_words_are_kept() {
    let said = br#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#;
    let port = refusing_server("400 Bad Request", said);
    let status = status_of(&format!("http://127.0.0.1:{port}/mcp"));
    assert!(
        matches!(&status, ServerStatus::Failed(why) if why.contains("POST with HTTP 400")
            && why.contains("Bad Request: No valid session ID provided")
            && why.contains("neither transport")),
        "{status:?}"
    );
    // A hostile body: long, with control sequences and line breaks. It is quoted on one
    // short line, and the failure still says what happened.
    let mut hostile = b"\x1b[2J\x1b]0;pwned\x07line one\r\nline two ".to_vec();
    hostile.extend(std::iter::repeat_n(b'x', 100_000));
    let port = refusing_server("400 Bad Request", &hostile);
    let status = status_of(&format!("http://127.0.0.1:{port}/mcp"));
    let ServerStatus::Failed(why) = &status else {
        panic!("{status:?}")
    };
    assert!(why.contains("[2J ]0;pwned line one line two x"), "{why}");
    assert!(!why.chars().any(char::is_control), "{why:?}");
    assert!(why.len() < 800, "{} bytes: {why}", why.len());
    assert!(why.contains("neither transport"), "{why}");
    // Another 4xx without a fallback says its words too.
    let port = refusing_server("401 Unauthorized", b"missing X-API-Key");
    let status = status_of(&format!("http://127.0.0.1:{port}/mcp"));
    assert!(
        matches!(&status, ServerStatus::Failed(why) if why.contains("HTTP 401")
            && why.contains("missing X-API-Key")),
        "{status:?}"
    );
}

#[test]
fn a_refusals_session_id_does_not_replace_the_sessions() {
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&heads);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            while let Some((head, body)) = read_request(&mut stream) {
                seen.lock().unwrap().push((head.clone(), body.clone()));
                let id = body["id"].clone();
                let (status, session, answer) = match body["method"].as_str().unwrap_or("") {
                    "initialize" => {
                        let result =
                            json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}});
                        (
                            "200 OK",
                            "good",
                            json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
                        )
                    }
                    "tools/list" => (
                        "200 OK",
                        "",
                        json!({"jsonrpc": "2.0", "id": id,
                        "result": {"tools": [{"name": "work", "inputSchema": {"type": "object"}}]}})
                        .to_string(),
                    ),
                    // The notification is refused, naming another session.
                    _ => ("400 Bad Request", "bogus", String::new()),
                };
                let mut response =
                    format!("HTTP/1.1 {status}\r\ncontent-length: {}\r\n", answer.len());
                if !answer.is_empty() {
                    response.push_str("content-type: application/json\r\n");
                }
                if !session.is_empty() {
                    response.push_str(&format!("mcp-session-id: {session}\r\n"));
                }
                response.push_str("\r\n");
                response.push_str(&answer);
                if stream.write_all(response.as_bytes()).is_err() {
                    break;
                }
            }
        }
    });
    assert_eq!(
        status_of(&format!("http://127.0.0.1:{port}/mcp")),
        ServerStatus::Ready
    );
    let heads = heads.lock().unwrap();
    let list = heads
        .iter()
        .find(|(_, b)| b["method"] == "tools/list")
        .map(|(h, _)| h)
        .expect("tools/list was sent");
    assert!(list.contains("mcp-session-id: good"), "{list}");
}

#[test]
fn a_redirect_is_refused_and_the_other_host_gets_nothing() {
    use std::io::{ErrorKind, Read, Write};
    let elsewhere = TcpListener::bind("127.0.0.1:0").unwrap();
    let other_port = elsewhere.local_addr().unwrap().port();
    elsewhere.set_nonblocking(true).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let target = format!("http://127.0.0.1:{other_port}/mcp");
    let answer = format!(
        "HTTP/1.1 307 Temporary Redirect\r\nlocation: {target}\r\ncontent-length: 0\r\n\
         connection: close\r\n\r\n"
    );
    std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let (configs, _) = parse_servers(&json!({"moved": {
        "url": format!("http://127.0.0.1:{port}/mcp"),
        "headers": {"X-API-Key": "sekrit-value"}
    }}));
    let servers = McpServers::start(
        &configs,
        &StartOptions::new(dir.path(), dir.path().join("logs")),
    );
    let status = servers.servers()[0].status();
    assert!(
        matches!(&status, ServerStatus::Failed(why) if why.contains("HTTP 307")
            && why.contains(&target) && !why.contains("sekrit")),
        "{status:?}"
    );
    match elsewhere.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the redirect target was contacted: {other:?}"),
    }
}

#[test]
fn a_forgotten_session_is_started_again() {
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&heads);
    std::thread::spawn(move || {
        let mut sessions = 0;
        let mut calls = 0;
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            while let Some((head, body)) = read_request(&mut stream) {
                seen.lock().unwrap().push((head.clone(), body.clone()));
                let id = body["id"].clone();
                let (status, session, answer) = match body["method"].as_str().unwrap_or("") {
                    "initialize" => {
                        sessions += 1;
                        let result =
                            json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}});
                        (
                            "200 OK",
                            Some(format!("s{sessions}")),
                            Some(json!({"jsonrpc": "2.0", "id": id, "result": result})),
                        )
                    }
                    "tools/list" => (
                        "200 OK",
                        None,
                        Some(json!({"jsonrpc": "2.0", "id": id,
                        "result": {"tools": [{"name": "work", "inputSchema": {"type": "object"}}]}})),
                    ),
                    "tools/call" => {
                        calls += 1;
                        if calls == 1 {
                            ("404 Not Found", None, None)
                        } else {
                            (
                                "200 OK",
                                None,
                                Some(json!({"jsonrpc": "2.0", "id": id,
                                "result": {"content": [{"type": "text", "text": "worked"}]}})),
                            )
                        }
                    }
                    _ => ("202 Accepted", None, None),
                };
                let body = answer.map(|a| a.to_string()).unwrap_or_default();
                let mut response =
                    format!("HTTP/1.1 {status}\r\ncontent-length: {}\r\n", body.len());
                if !body.is_empty() {
                    response.push_str("content-type: application/json\r\n");
                }
                if let Some(session) = session {
                    response.push_str(&format!("mcp-session-id: {session}\r\n"));
                }
                response.push_str("\r\n");
                response.push_str(&body);
                if stream.write_all(response.as_bytes()).is_err() {
                    break;
                }
            }
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let (configs, _) =
        parse_servers(&json!({"s": {"url": format!("http://127.0.0.1:{port}/mcp")}}));
    let servers = McpServers::start(
        &configs,
        &StartOptions::new(dir.path(), dir.path().join("logs")),
    );
    assert_eq!(servers.servers()[0].status(), ServerStatus::Ready);
    let before = servers.generation();
    let tools = servers.tools([]);
    let ctx = ToolContext::new(dir.path()).unwrap();
    let out = tools[0].run("{}", &ctx);
    assert!(
        out.is_error && out.content.contains("lost its session"),
        "{out:?}"
    );
    // The new session comes up on its own; wait for it, then the call works.
    let deadline = Instant::now() + Duration::from_secs(10);
    let out = loop {
        let out = tools[0].run("{}", &ctx);
        if !out.content.contains("not ready") || Instant::now() > deadline {
            break out;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(out.content, "worked", "{out:?}");
    assert!(
        servers.generation() > before,
        "the new session's readiness counts as a change of the tools"
    );
    let heads = heads.lock().unwrap();
    let inits: Vec<&String> = heads
        .iter()
        .filter(|(_, b)| b["method"] == "initialize")
        .map(|(h, _)| h)
        .collect();
    assert_eq!(inits.len(), 2);
    assert!(
        !inits[1].contains("mcp-session-id"),
        "the new initialize carries no session id"
    );
    let last = &heads.last().unwrap().0;
    assert!(
        last.contains("mcp-session-id: s2") && last.contains("mcp-protocol-version: 2025-06-18"),
        "{last}"
    );
}

#[test]
fn a_refusal_that_echoes_the_configured_key_is_quoted_without_it() {
    let key = "sk-test-refused-0123456789abcdef";
    let said = format!("invalid API key {key}, try again");
    let port = refusing_server("401 Unauthorized", said.as_bytes());
    let dir = tempfile::tempdir().unwrap();
    let (configs, _) = parse_servers(&json!({"old": {
        "url": format!("http://127.0.0.1:{port}/mcp"),
        "headers": {"X-API-Key": key}
    }}));
    let servers = McpServers::start(
        &configs,
        &StartOptions::new(dir.path(), dir.path().join("logs")),
    );
    let status = servers.servers()[0].status();
    let ServerStatus::Failed(why) = &status else {
        panic!("{status:?}")
    };
    assert!(why.contains("invalid API key"), "{why}");
    assert!(!why.contains(key), "{why}");
    drop(servers);
    let mut logged = String::new();
    for entry in std::fs::read_dir(dir.path().join("logs")).unwrap() {
        logged.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default());
    }
    assert!(logged.contains("invalid API key"), "{logged}");
    assert!(!logged.contains(key), "{logged}");
}

#[test]
fn a_refusal_that_echoes_a_piece_of_the_key_is_quoted_without_any_of_it() {
    // Every 8-byte piece of the key after `sk-t` mixes letters and digits: each is hidden
    // on its own.
    let key = "sk-test-a7Kq9xZ2mB4nW8pL3vR6tY1u";
    // The key without its first bytes, starting 7 bytes before the quote's cut (200 bytes):
    // shortened first, the quote would end in a piece too short to be recognised.
    let piece = &key[5..];
    let said = format!("{} {piece} was refused", "a".repeat(192));
    let port = refusing_server("401 Unauthorized", said.as_bytes());
    let dir = tempfile::tempdir().unwrap();
    let (configs, _) = parse_servers(&json!({"old": {
        "url": format!("http://127.0.0.1:{port}/mcp"),
        "headers": {"Authorization": format!("Bearer {key}")}
    }}));
    let servers = McpServers::start(
        &configs,
        &StartOptions::new(dir.path(), dir.path().join("logs")),
    );
    let status = servers.servers()[0].status();
    let ServerStatus::Failed(why) = &status else {
        panic!("{status:?}")
    };
    assert!(why.contains("HTTP 401") && why.contains("aaaa"), "{why}");
    assert!(why.contains(" [redact"), "{why}");
    drop(servers);
    let logged = std::fs::read_to_string(hrns_blocking::mcp::log_path(
        &dir.path().join("logs"),
        "old",
    ))
    .unwrap_or_default();
    assert!(logged.contains("HTTP 401"), "{logged}");
    for text in [why.as_str(), logged.as_str()] {
        assert!(!text.contains(&piece[..4]), "{text}");
    }
}

#[test]
fn a_refusal_whose_body_is_held_does_not_keep_its_connection() {
    use std::io::{Read, Write};
    use std::sync::mpsc::channel;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (closed, closed_seen) = channel();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().take(2).enumerate() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            if n == 0 {
                // The POST: a head promising a body that never comes. The client closing
                // the connection ends this read.
                let closed = closed.clone();
                std::thread::spawn(move || {
                    let _ = stream.write_all(
                        b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 100\r\n\r\nnot al",
                    );
                    while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
                    let _ = closed.send(());
                });
            } else {
                // The GET of the older transport.
                let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
            }
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let (configs, _) =
        parse_servers(&json!({"old": {"url": format!("http://127.0.0.1:{port}/mcp")}}));
    let mut options = StartOptions::new(dir.path(), dir.path().join("logs"));
    options.deadline = Duration::from_secs(4);
    let servers = McpServers::start(&configs, &options);
    let status = servers.servers()[0].status();
    assert!(
        matches!(&status, ServerStatus::Failed(why) if why.contains("POST with HTTP 405")
            && why.contains("neither transport")),
        "{status:?}"
    );
    drop(servers);
    // Far past the start's deadline, which bounds the body's reading.
    assert!(
        closed_seen.recv_timeout(Duration::from_secs(30)).is_ok(),
        "the refused POST's connection is still held open"
    );
}

#[test]
fn a_server_log_message_is_written_to_its_log_without_the_configured_headers() {
    use std::io::Write;
    // Lower case: `read_request` lowers the head it hands back.
    let key = "hdr-logsecret-0123456789";
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            while let Some((head, body)) = read_request(&mut stream) {
                let id = body["id"].clone();
                // The server echoes the key it was sent in a log message.
                let sent = head
                    .lines()
                    .find_map(|l| l.strip_prefix("x-api-key:"))
                    .unwrap_or_default()
                    .trim()
                    .to_owned();
                let answer = match body["method"].as_str().unwrap_or("") {
                    "initialize" => Some(json!({"jsonrpc": "2.0", "id": id, "result":
                        {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}}})),
                    "tools/list" => Some(json!([
                        {"jsonrpc": "2.0", "method": "notifications/message",
                         "params": {"level": "warning", "data": format!("key {sent} is old")}},
                        {"jsonrpc": "2.0", "id": id, "result": {"tools": []}}
                    ])),
                    _ => None,
                };
                let response = match answer {
                    Some(answer) => {
                        let answer = answer.to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                             content-length: {}\r\n\r\n{answer}",
                            answer.len()
                        )
                    }
                    None => "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".to_owned(),
                };
                if stream.write_all(response.as_bytes()).is_err() {
                    break;
                }
            }
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let (configs, _) = parse_servers(&json!({"web": {
        "url": format!("http://127.0.0.1:{port}/mcp"),
        "headers": {"X-API-Key": key}
    }}));
    let servers = McpServers::start(
        &configs,
        &StartOptions::new(dir.path(), dir.path().join("logs")),
    );
    assert_eq!(servers.servers()[0].status(), ServerStatus::Ready);
    drop(servers);
    let logged = std::fs::read_to_string(hrns_blocking::mcp::log_path(
        &dir.path().join("logs"),
        "web",
    ))
    .unwrap_or_default();
    assert!(
        logged.contains("[hrns] server log (warning): key [redacted] is old"),
        "{logged}"
    );
    assert!(!logged.contains(key), "{logged}");
}
