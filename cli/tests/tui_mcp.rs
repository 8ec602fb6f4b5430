//! MCP in the interactive UI, in a real pseudo-terminal against the mock provider: `/mcp`
//! lists the servers with their state and tool counts, and an MCP call names its server.

mod common;
mod pty;

use common::{Env, KEY};
use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::json;
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

#[test]
fn slash_mcp_lists_servers_and_calls_show_their_server() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "mcp__box__look", "{}")]),
        Reply::text_answer("Looked around."),
    ])
    .unwrap();
    let servers = json!({"mcpServers": {
        "box": {"command": "python3", "args": [common::mcp_test_server()]},
        "broken": {"command": "/nonexistent/server"},
        "off": {"command": "/nonexistent/server", "disabled": true}
    }})
    .to_string();
    env.config_with(&mock, &format!(", {}", &servers[1..servers.len() - 1]));
    let vars = env.pty_vars();
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &env.work(), &vars, 30, 110);
    p.expect("mock-model", T);
    p.send("/mcp\r");
    p.expect("box  ready  stdio python3  5 tools", T);
    p.expect("broken  failed", T);
    p.expect("off  disabled", T);
    // The server's tools, indented under it.
    p.expect("    picture", T);

    p.send("look around\r");
    p.expect("box › look", T);
    p.expect("Looked around.", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    assert!(!p.output().contains(KEY));
}

/// The UI under `--approval auto` with the test server `box` configured.
fn box_auto(env: &Env, mock: &MockProvider) -> pty::Pty {
    let servers = json!({"mcpServers": {
        "box": {"command": "python3", "args": [common::mcp_test_server()]},
    }})
    .to_string();
    env.config_with(mock, &format!(", {}", &servers[1..servers.len() - 1]));
    let vars = env.pty_vars();
    pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &["--approval", "auto"],
        &env.work(),
        &vars,
        30,
        110,
    )
}

fn names(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The async driver's path: a tool the server adds (`grow`, then `list_changed`) is offered
/// in the next request, and a server that dies mid-call (`die`) leaves the requests after
/// it; each change is one notice, and the UI goes on.
#[test]
fn tools_a_server_adds_are_offered_and_a_dead_servers_tools_dropped() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("g1", "mcp__box__grow", "{}")]),
        Reply::tool_calls(&[("e1", "mcp__box__extra", "{}")]),
        Reply::text_answer("Grown."),
        Reply::tool_calls(&[("d1", "mcp__box__die", "{}")]),
        Reply::text_answer("Gone."),
    ])
    .unwrap();
    let mut p = box_auto(&env, &mock);
    p.expect("mock-model", T);
    p.send("grow the box\r");
    p.expect("Grown.", T);
    p.expect(
        "MCP server box changed its tools; now offered: mcp__box__extra",
        T,
    );
    p.send("break the box\r");
    p.expect("Gone.", T);
    p.expect("MCP server box stopped", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);

    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 5);
    let offered: Vec<Vec<String>> = requests.iter().map(|r| names(&r.json())).collect();
    let extra = "mcp__box__extra".to_owned();
    assert!(!offered[0].contains(&extra), "{:?}", offered[0]);
    assert!(offered[1].contains(&extra), "{:?}", offered[1]);
    assert!(offered[3].contains(&extra), "{:?}", offered[3]);
    assert!(
        !offered[4].iter().any(|n| n.starts_with("mcp__box__")),
        "{:?}",
        offered[4]
    );
    let output = p.output();
    assert_eq!(
        output.matches("MCP server box stopped").count(),
        1,
        "{output}"
    );
}

/// The async driver's `task`: a child started after the server added a tool (`grow`) is
/// offered it and runs it.
#[test]
fn a_child_started_after_a_server_added_a_tool_is_offered_it() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("g1", "mcp__box__grow", "{}")]),
        Reply::tool_calls(&[(
            "t1",
            "task",
            r#"{"description":"use the box","prompt":"Use the box.","agent":"Builder"}"#,
        )]),
        Reply::tool_calls(&[("k1", "mcp__box__extra", "{}")]),
        Reply::text_answer("Child done."),
        Reply::text_answer("Parent done."),
    ])
    .unwrap();
    let mut p = box_auto(&env, &mock);
    p.expect("mock-model", T);
    p.send("grow and delegate\r");
    p.expect("Parent done.", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 5);
    let child = names(&requests[2].json());
    assert!(
        !child.contains(&"task".to_owned()),
        "the child's: {child:?}"
    );
    assert!(child.contains(&"mcp__box__extra".to_owned()), "{child:?}");
    let body = requests[3].json();
    let result = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "k1")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    assert_eq!(result, "extra ran", "{body}");
}

/// Configures the server `quits`: one tool, `work`, and it exits with status 5 once the test
/// creates `stop` in the workspace. Returns the pty's environment variables.
fn quitting_server(env: &Env, mock: &MockProvider) -> Vec<(&'static str, String)> {
    let init = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}}"#;
    let list = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"work","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}"#;
    let script = env.write(
        "scripts/quits.sh",
        &format!(
            "while read -r line; do\n\
             case \"$line\" in\n\
             *'\"initialize\"'*) echo '{init}' ;;\n\
             *'\"tools/list\"'*) echo '{list}'; while [ ! -f stop ]; do sleep 0.02; done; exit 5 ;;\n\
             esac\n\
             done\n"
        ),
    );
    let servers = json!({"mcpServers": {"quits": {"command": "sh", "args": [script]}}}).to_string();
    env.config_with(mock, &format!(", {}", &servers[1..servers.len() - 1]));
    env.pty_vars()
}

/// A server that exits on its own while no turn runs (once the test creates `stop` in the
/// workspace) is told of at once, and the next turn's request no longer offers its tools.
#[test]
fn a_server_that_exits_while_idle_is_told_at_once_and_left_out() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("Still here.")]).unwrap();
    let vars = quitting_server(&env, &mock);
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &env.work(), &vars, 30, 110);
    p.expect("mock-model", T);
    std::fs::write(env.work().join("stop"), "").unwrap();
    p.expect("MCP server quits stopped", T);
    p.expect("exited with status 5", T);
    p.send("anyone there?\r");
    p.expect("Still here.", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    let requests = mock.chat_requests();
    assert!(
        !names(&requests[0].json())
            .iter()
            .any(|n| n.starts_with("mcp__")),
        "{:?}",
        names(&requests[0].json())
    );
    assert_eq!(p.output().matches("MCP server quits stopped").count(), 1);
}

/// A server none of whose tools the agent is offered (its tool map filters them out) is
/// still told of once when it stops; the model's tools stay as they were.
#[test]
fn a_server_whose_tools_were_filtered_out_is_told_of_once_when_it_stops() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("Still here.")]).unwrap();
    let vars = quitting_server(&env, &mock);
    env.write(
        "work/.hrns/agents/noquits/AGENT.md",
        "---\nname: Noquits\ndescription: without quits\ntools:\n  \"mcp__quits__*\": false\n---\nYou work alone.\n",
    );
    let mut p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &["--agent", "noquits"],
        &env.work(),
        &vars,
        30,
        110,
    );
    p.expect("mock-model", T);
    std::fs::write(env.work().join("stop"), "").unwrap();
    p.expect("MCP server quits stopped", T);
    p.expect("exited with status 5", T);
    p.send("anyone there?\r");
    p.expect("Still here.", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    let body = mock.chat_requests()[0].json();
    assert!(names(&body).contains(&"read_file".to_owned()), "{body}");
    assert!(
        !names(&body).iter().any(|n| n.starts_with("mcp__")),
        "{body}"
    );
    assert!(!body["messages"].to_string().contains("quits"), "{body}");
    let output = p.output();
    assert_eq!(output.matches("MCP server quits stopped").count(), 1);
    assert!(!output.contains("no longer offered"), "{output}");
}

/// The async driver's path for images: the `picture` tool's PNG reaches a model set up for
/// images as an image part, and the screen shows its placeholder, never the base64.
#[test]
fn an_mcp_image_is_sent_as_a_part_and_shown_as_a_placeholder() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("p1", "mcp__box__picture", "{}")]),
        Reply::text_answer("A dot."),
    ])
    .unwrap();
    let config = json!({
        "providers": {"mock": {"url": mock.base_url(), "key": KEY, "model": "mock-model",
                               "images": true}},
        "mcpServers": {"box": {"command": "python3", "args": [common::mcp_test_server()]}},
    });
    env.write("config/hrns/config.json", &config.to_string());
    let vars = env.pty_vars();
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &env.work(), &vars, 30, 110);
    p.expect("mock-model", T);
    p.send("show me\r");
    p.expect("[image 1: image/png, 70 bytes]", T);
    p.expect("A dot.", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    let png_head = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB";
    assert!(!p.output().contains(png_head), "the screen shows base64");
    let body = mock.requests()[1].json();
    let parts = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user" && m["content"].is_array())
        .unwrap_or_else(|| panic!("no image message in {body}"));
    let url = parts["content"][1]["image_url"]["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("data:image/png;base64,{png_head}")),
        "{url}"
    );
}

/// A session in which `box`'s `picture` went to the model as an image part, resumed in the
/// UI: the image message (saved as a `user` message) is shown as the tool's images, not as
/// something the user typed, and `/retry` asks the user's own question again.
#[test]
fn a_resumed_image_message_is_shown_as_the_tools_images_and_retry_skips_it() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("p1", "mcp__box__picture", "{}")]),
        Reply::text_answer("A dot."),
        Reply::text_answer("Again a dot."),
    ])
    .unwrap();
    let config = json!({
        "providers": {"mock": {"url": mock.base_url(), "key": KEY, "model": "mock-model",
            "images": true}},
        "mcpServers": {"box": {"command": "python3", "args": [common::mcp_test_server()]}},
    });
    env.write("config/hrns/config.json", &config.to_string());
    let out = env.run(None, &["exec", "show me"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));

    let vars = env.pty_vars();
    let mut p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &["--continue"],
        &env.work(),
        &vars,
        30,
        110,
    );
    p.expect("resumed session", T);
    p.expect("[1 image from box › picture]", T);
    let shown = p.output();
    assert!(!shown.contains("The images returned"), "{shown}");
    p.send("/retry\r");
    p.expect("Again a dot.", T);
    let retried = mock.chat_requests()[2].json();
    let messages = retried["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["content"], "show me", "{retried}");
    assert_eq!(messages.len(), 2, "{retried}");
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
}
