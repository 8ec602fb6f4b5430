//! A server that stops between two toolboxes (the TUI's rebuild on `/model`, `/connect` or a
//! resume) is told of by the new one; a change is told once whichever toolbox sees it.

use super::*;
use hrns_blocking::Toolbox;
use hrns_blocking::mcp::StartOptions;
use std::time::Duration;

/// One server, `quits`, that lists one tool and exits with status 5 once `stop` exists in
/// `dir`.
fn quitting_server(dir: &std::path::Path) -> Arc<McpServers> {
    let init = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}}"#;
    let list = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"work","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}"#;
    let script = dir.join("quits.sh");
    std::fs::write(
        &script,
        format!(
            "while read -r line; do\n\
             case \"$line\" in\n\
             *'\"initialize\"'*) echo '{init}' ;;\n\
             *'\"tools/list\"'*) echo '{list}'; while [ ! -f stop ]; do sleep 0.02; done; exit 5 ;;\n\
             esac\n\
             done\n"
        ),
    )
    .unwrap();
    let (configs, errors) = hrns_core::mcp::config::parse_servers(
        &serde_json::json!({"quits": {"command": "sh", "args": [script]}}),
    );
    assert!(errors.is_empty(), "{errors:?}");
    let servers = McpServers::start(&configs, &StartOptions::new(dir, dir.join("logs")));
    assert_eq!(servers.servers()[0].status(), ServerStatus::Ready);
    Arc::new(servers)
}

/// Makes the server exit and waits until the servers say so.
fn stop(dir: &std::path::Path, servers: &McpServers) {
    let before = servers.generation();
    std::fs::write(dir.join("stop"), "").unwrap();
    let watch = servers.watch();
    let mut now = before;
    for _ in 0..100 {
        now = watch.wait_past(before, Duration::from_millis(100));
        if matches!(servers.servers()[0].status(), ServerStatus::Failed(_)) {
            break;
        }
    }
    assert_ne!(now, before, "the server did not stop");
}

fn builder() -> Agent {
    hrns_core::agent::builtin_agents().remove(0)
}

#[test]
fn a_server_that_stops_before_a_rebuild_is_told_by_the_new_toolbox() {
    let dir = tempfile::tempdir().unwrap();
    let servers = quitting_server(dir.path());
    let told = Arc::default();
    let mut first = Toolbox::new();
    let mut live = LiveTools::add(
        &servers,
        &mut first,
        &builder(),
        ApprovalPolicy::Auto,
        &told,
    );
    assert!(first.names().any(|n| n == "mcp__quits__work"));
    assert_eq!(live.update(&mut first), None, "nothing changed yet");

    stop(dir.path(), &servers);
    // The rebuild comes before the first toolbox looked again.
    let mut second = Toolbox::new();
    let mut rebuilt = LiveTools::add(
        &servers,
        &mut second,
        &builder(),
        ApprovalPolicy::Auto,
        &told,
    );
    assert!(!second.names().any(|n| n.starts_with("mcp__")));
    let reason = rebuilt.update(&mut second).expect("the stop is told");
    assert!(
        reason.text.starts_with("MCP server quits stopped"),
        "{}",
        reason.text
    );
    assert_eq!(
        reason.when_unchanged,
        hrns_core::session::WhenUnchanged::Report
    );
    assert_eq!(rebuilt.update(&mut second), None, "told once");
    // The toolbox kept from before the rebuild is brought up to date too (the stopped
    // server's tool leaves it), quietly: the stop was told already.
    assert!(first.names().any(|n| n == "mcp__quits__work"));
    let caught_up = live.update(&mut first).expect("the old toolbox catches up");
    assert!(
        caught_up.text.starts_with("MCP server quits stopped"),
        "{}",
        caught_up.text
    );
    assert_eq!(
        caught_up.when_unchanged,
        hrns_core::session::WhenUnchanged::Quiet
    );
    assert!(!first.names().any(|n| n.starts_with("mcp__")));
    assert_eq!(live.update(&mut first), None);
    assert_eq!(rebuilt.update(&mut second), None);
}
