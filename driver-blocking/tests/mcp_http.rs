//! MCP over streamable HTTP against the reference server `@modelcontextprotocol/server-everything`
//! (`mcp-server-everything streamableHttp`, port from `PORT`), installed by
//! `.ci/install-mcp-servers` under `$HRNS_MCP_SERVERS` or `target/mcp-servers/`. When it is
//! missing the test fails if `CI` is set and otherwise prints a notice and passes.

use hrns_blocking::mcp::{McpServers, ServerStatus, StartOptions};
use hrns_blocking::{Tool, ToolContext};
use hrns_core::mcp::config::parse_servers;
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

/// A server that answers every request with `status` and an empty body.
fn refusing_server(status: &str) -> u16 {
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    port
}

#[test]
fn a_4xx_to_initialize_is_reported_as_the_older_transport() {
    let port = refusing_server("405 Method Not Allowed");
    let dir = tempfile::tempdir().unwrap();
    let (configs, _) =
        parse_servers(&json!({"old": {"url": format!("http://127.0.0.1:{port}/sse")}}));
    let servers = McpServers::start(
        &configs,
        &StartOptions::new(dir.path(), dir.path().join("logs")),
    );
    let status = servers.servers()[0].status();
    assert!(
        matches!(&status, ServerStatus::Failed(why) if why.contains("405") && why.contains("older HTTP+SSE")),
        "{status:?}"
    );
}
