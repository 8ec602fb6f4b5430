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
    let vars = vec![
        ("HOME", env.path("home").display().to_string()),
        ("XDG_CONFIG_HOME", env.path("config").display().to_string()),
        ("XDG_STATE_HOME", env.path("state").display().to_string()),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
    ];
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
