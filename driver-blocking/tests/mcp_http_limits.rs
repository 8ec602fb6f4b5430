//! How long an HTTP MCP server may keep hrns waiting for the head of an answer: a server
//! that takes the POST and says nothing fails at its start-up limit (`startTimeout`), or ends
//! the call at its call limit (`timeout`), and in both cases hrns lets go of the connection
//! and goes on with the next message.

mod scripted_http;

use hrns_blocking::mcp::{McpServers, ServerStatus, StartOptions};
use hrns_blocking::{Tool, ToolContext};
use hrns_core::mcp::config::parse_servers;
use scripted_http::{Answer, initialized, one_tool, serve, text_result};
use serde_json::json;
use std::time::{Duration, Instant};

/// Waits (at most 20 s) until `done`; whether it happened.
fn eventually(done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

#[test]
fn a_silent_initialize_fails_at_the_start_timeout_and_its_connection_is_let_go() {
    let server = serve(|_, _, _| Answer::Silence);
    let dir = tempfile::tempdir().unwrap();
    let (configs, errors) =
        parse_servers(&json!({"mute": {"url": server.url(), "startTimeout": 300}}));
    assert!(errors.is_empty(), "{errors:?}");
    let servers = McpServers::start(
        &configs,
        &StartOptions::new(dir.path(), dir.path().join("logs")),
    );
    let status = servers.servers()[0].status();
    let ServerStatus::Failed(why) = &status else {
        panic!("{status:?}")
    };
    assert!(
        why.contains("did not answer initialize within 0.3 s")
            && why.contains("\"startTimeout\" in its mcpServers entry"),
        "{why}"
    );
    assert_eq!(server.methods(), ["initialize"]);
    // The thread that sent it stops waiting too: the connection is closed.
    assert!(
        eventually(|| *server.closed.lock().unwrap() == 1),
        "the unanswered initialize's connection is still held open"
    );
}

#[test]
fn a_call_whose_answer_never_starts_ends_at_its_timeout_and_later_messages_still_go() {
    let server = serve(|_, body, _| {
        let id = &body["id"];
        match body["method"].as_str().unwrap_or_default() {
            "initialize" => initialized(id),
            "tools/list" => one_tool(id),
            "tools/call" if body["params"]["arguments"]["n"] == 1 => Answer::Silence,
            "tools/call" => text_result(id, "worked"),
            _ => Answer::Accepted,
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let (configs, _) = parse_servers(&json!({"slow": {"url": server.url(), "timeout": 300}}));
    let servers = McpServers::start(
        &configs,
        &StartOptions::new(dir.path(), dir.path().join("logs")),
    );
    assert_eq!(servers.servers()[0].status(), ServerStatus::Ready);
    let tools = servers.tools([]);
    let ctx = ToolContext::new(dir.path()).unwrap();
    let out = tools[0].run(r#"{"n": 1}"#, &ctx);
    assert!(out.is_error, "{out:?}");
    assert!(
        out.content
            .contains("MCP server slow did not finish the call within 0.3 s")
            && out.content.contains("\"timeout\" in mcpServers"),
        "{out:?}"
    );
    // The sender moves on: the cancellation reaches the server, and a later call is answered.
    assert!(
        eventually(|| server
            .methods()
            .contains(&"notifications/cancelled".to_owned())),
        "the cancellation never left: {:?}",
        server.methods()
    );
    let out = tools[0].run(r#"{"n": 2}"#, &ctx);
    assert_eq!(out.content, "worked", "{out:?}");
    assert!(!out.is_error);
    assert_eq!(servers.servers()[0].status(), ServerStatus::Ready);
}
