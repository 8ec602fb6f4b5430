//! MCP over stdio against real servers: the reference servers `.ci/install-mcp-servers`
//! installs (`mcp-server-time` from PyPI, `@modelcontextprotocol/server-everything` from
//! npm), and small shell scripts that misbehave on purpose.
//!
//! The reference servers are looked up under `$HRNS_MCP_SERVERS` or `target/mcp-servers/`.
//! When they are missing, these tests fail if `CI` is set and otherwise print a notice and
//! pass, so `cargo test --workspace` works on a fresh machine.

use hrns_blocking::mcp::{McpServers, ServerStatus, StartOptions};
use hrns_blocking::{Tool, ToolContext};
use hrns_core::mcp::config::parse_servers;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

/// The install prefix of the reference servers.
fn prefix() -> PathBuf {
    std::env::var_os("HRNS_MCP_SERVERS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/mcp-servers"),
        PathBuf::from,
    )
}

/// The path of an installed reference server, or `None` (with a notice) when it is missing.
fn reference_server(relative: &str) -> Option<String> {
    let path = prefix().join(relative);
    if path.exists() {
        return Some(path.to_string_lossy().into_owned());
    }
    let notice = format!(
        "MCP reference server {} is not installed; run .ci/install-mcp-servers to install it",
        path.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{notice}");
    eprintln!("skipping: {notice}");
    None
}

fn start(servers: Value, dir: &tempfile::TempDir) -> McpServers {
    let (configs, errors) = parse_servers(&servers);
    assert!(errors.is_empty(), "{errors:?}");
    let mut options = StartOptions::new(dir.path(), dir.path().join("logs"));
    options.deadline = Duration::from_secs(60);
    McpServers::start(&configs, &options)
}

fn call(
    servers: &McpServers,
    name: &str,
    arguments: Value,
    ctx: &ToolContext,
) -> hrns_core::tool::ToolOutput {
    let tools = servers.tools(["read_file"]);
    let tool = tools
        .iter()
        .find(|t| t.spec().name == name)
        .unwrap_or_else(|| panic!("no tool {name}"));
    tool.run(&arguments.to_string(), ctx)
}

#[test]
fn the_time_server_lists_and_answers() {
    let Some(command) = reference_server("venv/bin/mcp-server-time") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let servers = start(
        json!({"time": {"command": command, "args": ["--local-timezone", "UTC"]}}),
        &dir,
    );
    let server = &servers.servers()[0];
    assert_eq!(
        server.status(),
        ServerStatus::Ready,
        "log: {}",
        log(&dir, "time")
    );
    let names: Vec<String> = servers.tools([]).iter().map(|t| t.spec().name).collect();
    assert!(
        names.contains(&"mcp__time__get_current_time".to_owned()),
        "{names:?}"
    );
    assert!(
        names.contains(&"mcp__time__convert_time".to_owned()),
        "{names:?}"
    );
    let ctx = ToolContext::new(dir.path()).unwrap();
    let out = call(
        &servers,
        "mcp__time__get_current_time",
        json!({"timezone": "Europe/Paris"}),
        &ctx,
    );
    assert!(!out.is_error, "{out:?}");
    assert!(out.content.contains("Europe/Paris"), "{out:?}");
    let out = call(
        &servers,
        "mcp__time__get_current_time",
        json!({"timezone": "Not/AZone"}),
        &ctx,
    );
    assert!(out.is_error, "an unknown zone is an error result: {out:?}");
}

#[test]
fn the_everything_server_over_stdio() {
    let Some(command) = reference_server("node/node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let servers = start(
        json!({"everything": {"command": command, "args": ["stdio"], "timeout": 60000,
                              "env": {"HRNS_MCP_TEST_TOKEN": "tok-5150-secret"}}}),
        &dir,
    );
    assert_eq!(
        servers.servers()[0].status(),
        ServerStatus::Ready,
        "log: {}",
        log(&dir, "everything")
    );
    let tools = servers.tools([]);
    let echo = tools
        .iter()
        .find(|t| t.spec().name == "mcp__everything__echo")
        .unwrap();
    assert_eq!(echo.spec().effect, hrns_core::tool::Effect::ReadOnly);
    assert_eq!(echo.server(), "everything");
    let ctx = ToolContext::new(dir.path()).unwrap();

    let out = call(
        &servers,
        "mcp__everything__echo",
        json!({"message": "hello there"}),
        &ctx,
    );
    assert!(
        !out.is_error && out.content.contains("hello there"),
        "{out:?}"
    );
    let out = call(
        &servers,
        "mcp__everything__get-sum",
        json!({"a": 2, "b": 40}),
        &ctx,
    );
    assert!(out.content.contains("42"), "{out:?}");
    // The server's own env reaches it, and is redacted in what it says back.
    let out = call(&servers, "mcp__everything__get-env", json!({}), &ctx);
    assert!(out.content.contains("HRNS_MCP_TEST_TOKEN"), "{out:?}");
    assert!(!out.content.contains("tok-5150-secret"), "{out:?}");
    let out = call(&servers, "mcp__everything__get-tiny-image", json!({}), &ctx);
    // The image is named in the text and kept aside for a model that takes images.
    assert!(out.content.contains("[image 1: image/png"), "{out:?}");
    assert_eq!(out.images.len(), 1, "{out:?}");
    assert_eq!(out.images[0].mime_type, "image/png");
    let out = call(
        &servers,
        "mcp__everything__echo",
        json!({"message": 5}),
        &ctx,
    );
    assert!(out.is_error, "bad arguments are an error result: {out:?}");

    // A long operation, cancelled a moment after it started.
    let cancel = ctx.cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        cancel.cancel();
    });
    let out = call(
        &servers,
        "mcp__everything__trigger-long-running-operation",
        json!({"duration": 60, "steps": 60}),
        &ctx,
    );
    canceller.join().unwrap();
    assert!(out.is_error && out.content.contains("cancelled"), "{out:?}");
    // The server lives on.
    ctx.cancel.reset();
    let out = call(
        &servers,
        "mcp__everything__echo",
        json!({"message": "still here"}),
        &ctx,
    );
    assert!(out.content.contains("still here"), "{out:?}");
}

/// A stdio server written in sh: answers the handshake with canned lines (the client's ids
/// are 0, 1, 2, …), then does what `on_call` says when a tool is called.
fn script_server(dir: &tempfile::TempDir, on_call: &str) -> String {
    let init = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}"#;
    let list = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"work","inputSchema":{"type":"object"}}]}}"#;
    let script = format!(
        "while read -r line; do\n\
         case \"$line\" in\n\
         *'\"initialize\"'*) echo '{init}' ;;\n\
         *'\"tools/list\"'*) echo '{list}' ;;\n\
         *'\"tools/call\"'*) {on_call} ;;\n\
         esac\n\
         done\n"
    );
    let path = dir.path().join("server.sh");
    std::fs::write(&path, script).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn a_server_that_crashes_mid_call_ends_the_call_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let script = script_server(&dir, "echo 'dying' >&2; exit 3");
    let servers = start(json!({"crash": {"command": "sh", "args": [script]}}), &dir);
    assert_eq!(servers.servers()[0].status(), ServerStatus::Ready);
    let kept = servers.tools([]).remove(0);
    let ctx = ToolContext::new(dir.path()).unwrap();
    let out = call(&servers, "mcp__crash__work", json!({}), &ctx);
    assert!(out.is_error, "{out:?}");
    assert!(out.content.contains("exited with status 3"), "{out:?}");
    let status = servers.servers()[0].status();
    assert!(
        matches!(&status, ServerStatus::Failed(why) if why.contains("status 3")),
        "{status:?}"
    );
    // Its tools are no longer listed; a handle taken before fails at once with the reason.
    assert!(servers.tools([]).is_empty());
    let out = kept.run("{}", &ctx);
    assert!(out.is_error && out.content.contains("failed"), "{out:?}");
    assert!(
        log(&dir, "crash").contains("dying"),
        "stderr goes to the log"
    );
}

#[test]
fn servers_that_cannot_start_are_reported_and_never_hang() {
    let dir = tempfile::tempdir().unwrap();
    let (configs, _) = parse_servers(&json!({
        "missing": {"command": "/nonexistent/mcp-server"},
        "silent": {"command": "sh", "args": ["-c", "cat > /dev/null"]},
        "garbage": {"command": "sh", "args": ["-c", "yes not-json-rpc"]},
        "off": {"command": "/nonexistent", "disabled": true},
        "web": {"url": "http://127.0.0.1:9/mcp"}
    }));
    let mut options = StartOptions::new(dir.path(), dir.path().join("logs"));
    options.deadline = Duration::from_secs(2);
    let servers = McpServers::start(&configs, &options);
    let status: Vec<(String, ServerStatus)> = servers
        .servers()
        .iter()
        .map(|s| (s.name().to_owned(), s.status()))
        .collect();
    for (name, status) in &status {
        match name.as_str() {
            "off" => assert_eq!(status, &ServerStatus::Disabled),
            "missing" => assert!(
                matches!(status, ServerStatus::Failed(w) if w.contains("cannot run")),
                "{status:?}"
            ),
            "silent" => assert!(
                matches!(status, ServerStatus::Failed(w) if w.contains("not ready within 2 s")
                    && w.contains("\"startTimeout\"")),
                "{status:?}"
            ),
            "garbage" => assert!(matches!(status, ServerStatus::Failed(_)), "{status:?}"),
            "web" => assert!(
                matches!(status, ServerStatus::Failed(w) if w.contains("POST")),
                "{status:?}"
            ),
            other => panic!("unexpected server {other}"),
        }
    }
    assert!(servers.tools([]).is_empty());
    drop(servers);
}

#[test]
fn a_call_past_its_timeout_is_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    // The call is never answered.
    let script = script_server(&dir, ":");
    let servers = start(
        json!({"slow": {"command": "sh", "args": [script], "timeout": 300}}),
        &dir,
    );
    let ctx = ToolContext::new(dir.path()).unwrap();
    let out = call(&servers, "mcp__slow__work", json!({}), &ctx);
    assert!(
        out.is_error && out.content.contains("within 0.3 s"),
        "{out:?}"
    );
}

fn log(dir: &tempfile::TempDir, server: &str) -> String {
    std::fs::read_to_string(hrns_blocking::mcp::log_path(
        &dir.path().join("logs"),
        server,
    ))
    .unwrap_or_default()
}

/// A server that exits on its own, with no call in flight (here: once the test creates the
/// file `stop`): the servers' generation moves, its tools are gone, and a runner whose tool
/// update watches the generation offers none of them in the next turn.
#[test]
fn a_server_that_exits_between_calls_leaves_the_next_request() {
    use hrns_blocking::mock::{MockProvider, Reply};
    use hrns_blocking::{Client, ClientConfig, Runner, Toolbox};
    use hrns_core::session::{Event, Provider, Session, SessionConfig};

    let dir = tempfile::tempdir().unwrap();
    let init = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}}"#;
    let list = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"work","inputSchema":{"type":"object"}}]}}"#;
    let script = format!(
        "while read -r line; do\n\
         case \"$line\" in\n\
         *'\"initialize\"'*) echo '{init}' ;;\n\
         *'\"tools/list\"'*) echo '{list}'; while [ ! -f stop ]; do sleep 0.02; done; exit 5 ;;\n\
         esac\n\
         done\n"
    );
    let path = dir.path().join("server.sh");
    std::fs::write(&path, script).unwrap();
    let servers = std::sync::Arc::new(start(
        json!({"quits": {"command": "sh", "args": [path], "cwd": dir.path()}}),
        &dir,
    ));
    assert_eq!(servers.servers()[0].status(), ServerStatus::Ready);
    let mut toolbox = Toolbox::new();
    for tool in servers.tools([]) {
        toolbox.add(tool);
    }
    let mock = MockProvider::start([Reply::text_answer("one"), Reply::text_answer("two")]).unwrap();
    let provider = Provider::new(mock.base_url(), None);
    let mut config = SessionConfig::new(provider.clone(), "m");
    config.tools = toolbox.specs();
    let mut session = Session::new(config);
    let client = Client::new(provider, &ClientConfig::default());
    let mut seen = servers.generation();
    let watched = std::sync::Arc::clone(&servers);
    let ctx = ToolContext::new(dir.path()).unwrap();
    let mut runner = Runner::new(std::sync::Arc::new(client), &toolbox, ctx).update_tools_with(
        move |toolbox: &mut Toolbox| {
            let now = watched.generation();
            if now == seen {
                return None;
            }
            seen = now;
            toolbox.retain(|name| !name.starts_with("mcp__"));
            for tool in watched.tools([]) {
                toolbox.add(tool);
            }
            Some(format!("{:?}", watched.servers()[0].status()))
        },
    );
    let mut events = Vec::new();
    runner
        .run(&mut session, "first", |e| events.push(e.clone()))
        .unwrap();

    let before = servers.generation();
    std::fs::write(dir.path().join("stop"), "").unwrap();
    let start = std::time::Instant::now();
    while servers.generation() == before {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the exit was not seen"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = servers.servers()[0].status();
    assert!(
        matches!(&status, ServerStatus::Failed(why) if why.contains("exited with status 5")),
        "{status:?}"
    );
    assert!(servers.tools([]).is_empty());
    assert!(servers.servers()[0].tools().is_empty());

    runner
        .run(&mut session, "second", |e| events.push(e.clone()))
        .unwrap();
    let requests = mock.chat_requests();
    let tools = |n: usize| requests[n].json()["tools"].as_array().map_or(0, Vec::len);
    assert_eq!(tools(0), 1);
    assert_eq!(tools(1), 0, "{}", requests[1].json());
    let changed: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::ToolsChanged { .. }))
        .collect();
    assert!(
        matches!(changed[..], [Event::ToolsChanged { reason, removed, .. }]
            if reason.contains("status 5") && removed == &["mcp__quits__work"]),
        "{changed:?}"
    );
}

#[test]
fn a_server_log_message_is_written_to_its_log_without_its_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let key = "sk-mcp-LOGSECRET-0123456789";
    // On a call: a log message that echoes the key, then the result.
    let script = script_server(
        &dir,
        r#"printf '%s\n' "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"error\",\"data\":\"rejected key $API_KEY upstream\"}}"; echo '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}'"#,
    );
    let servers = start(
        json!({"chatty": {"command": "sh", "args": [script], "env": {"API_KEY": key}}}),
        &dir,
    );
    assert_eq!(servers.servers()[0].status(), ServerStatus::Ready);
    let ctx = ToolContext::new(dir.path()).unwrap();
    let out = call(&servers, "mcp__chatty__work", json!({}), &ctx);
    assert!(!out.is_error && out.content.contains("done"), "{out:?}");
    drop(servers);
    let logged = log(&dir, "chatty");
    assert!(
        logged.contains("[hrns] server log (error): rejected key [redacted] upstream"),
        "{logged}"
    );
    assert!(!logged.contains(key), "{logged}");
}
