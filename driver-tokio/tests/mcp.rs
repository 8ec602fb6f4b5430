//! MCP tools in the async driver: a tool of hrns-blocking's MCP client runs on a blocking
//! thread, and cancelling the turn's token cancels the call at the server. The server is a
//! small sh script speaking newline-delimited JSON-RPC (request ids 0, 1, 2, …).

use hrns_blocking::mcp::{McpServers, ServerStatus, StartOptions};
use hrns_core::mcp::config::parse_servers;
use hrns_tokio::{ToolContext, Toolbox};
use std::time::Duration;

/// A server with one tool, `work`; a call is answered once, the next one never.
fn script(dir: &tempfile::TempDir) -> String {
    let init = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}}"#;
    let list = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"work","inputSchema":{"type":"object"}}]}}"#;
    let done = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}"#;
    let text = format!(
        "while read -r line; do\n\
         case \"$line\" in\n\
         *'\"initialize\"'*) echo '{init}' ;;\n\
         *'\"tools/list\"'*) echo '{list}' ;;\n\
         *'\"id\":2,\"jsonrpc\":\"2.0\",\"method\":\"tools/call\"'*) echo '{done}' ;;\n\
         *'notifications/cancelled'*) echo \"$line\" >> cancelled.log ;;\n\
         esac\n\
         done\n"
    );
    let path = dir.path().join("server.sh");
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tools_run_and_cancel_in_the_async_driver() {
    let dir = tempfile::tempdir().unwrap();
    let (configs, _) = parse_servers(&serde_json::json!({
        "sh": {"command": "sh", "args": [script(&dir)], "cwd": dir.path(), "timeout": 20000}
    }));
    let options = StartOptions::new(dir.path(), dir.path().join("logs"));
    let servers = tokio::task::spawn_blocking(move || McpServers::start(&configs, &options))
        .await
        .unwrap();
    assert_eq!(servers.servers()[0].status(), ServerStatus::Ready);
    let mut toolbox = Toolbox::new();
    for tool in servers.tools([]) {
        toolbox.add(tool);
    }
    let tool = toolbox.get("mcp__sh__work").unwrap().clone();
    let ctx = ToolContext::new(dir.path()).unwrap();
    let out = tool.run("{}", &ctx).await;
    assert_eq!(out.content, "done", "{out:?}");

    let token = ctx.cancel.clone();
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        token.cancel();
    });
    let out = tool.run("{}", &ctx).await;
    cancel.await.unwrap();
    assert!(out.is_error && out.content.contains("cancelled"), "{out:?}");
    // The server was told.
    let log = dir.path().join("cancelled.log");
    let mut told = String::new();
    for _ in 0..100 {
        told = std::fs::read_to_string(&log).unwrap_or_default();
        if !told.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(told.contains("\"requestId\":3"), "{told:?}");
}
