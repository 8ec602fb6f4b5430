//! The shared built-in tool suite (written once in the blocking crate) against the tokio
//! driver's tools.

#[path = "../../driver-blocking/tests/tool_suite/mod.rs"]
#[macro_use]
mod tool_suite;

use hrns_core::tool::ToolOutput;
use hrns_tokio::tools::builtin_toolbox;
use hrns_tokio::{ClientConfig, HttpClient, ToolContext, Toolbox};
use std::path::Path;

/// The built-in tools, each call on a two-worker runtime of the harness's own.
struct Tokio {
    rt: tokio::runtime::Runtime,
    tools: Toolbox,
}

fn tokio() -> Tokio {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let http = rt.block_on(async { HttpClient::new(&ClientConfig::default()) });
    Tokio {
        tools: builtin_toolbox(http, tool_suite::skills()),
        rt,
    }
}

impl tool_suite::ToolHarness for Tokio {
    fn call_in(
        &self,
        root: &Path,
        sandbox: hrns_tokio::Sandbox,
        name: &str,
        arguments: &str,
    ) -> ToolOutput {
        let mut ctx = ToolContext::new(root).expect("the suite's workspace exists");
        ctx.sandbox = sandbox;
        let tool = self.tools.get(name).expect("a built-in tool");
        self.rt.block_on(tool.run(arguments, &ctx))
    }
}

tool_tests!(tokio());

/// A std tool that panics: the async driver turns the lost thread into an error result.
#[derive(Clone)]
struct Panics;

impl hrns_blocking::Tool for Panics {
    fn spec(&self) -> hrns_core::tool::ToolSpec {
        hrns_core::tool::ToolSpec {
            name: "panics".into(),
            description: "always panics".into(),
            parameters: serde_json::json!({"type": "object"}),
            effect: hrns_core::tool::Effect::ReadOnly,
        }
    }

    fn run(&self, _: &str, _: &hrns_blocking::ToolContext) -> ToolOutput {
        panic!("a tool bug")
    }
}

#[test]
fn a_std_tool_that_panics_is_an_error_result() {
    let t = tokio();
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    let mut tools = Toolbox::new();
    tools.add(Panics);
    let out = t.rt.block_on(tools.get("panics").unwrap().run("{}", &ctx));
    assert!(out.is_error);
    assert!(
        out.content.starts_with("panics: the tool failed"),
        "{}",
        out.content
    );
}

/// A std tool whose call is cancelled by the token stops at once: the flag reached it.
#[derive(Clone)]
struct WaitsForCancel;

impl hrns_blocking::Tool for WaitsForCancel {
    fn spec(&self) -> hrns_core::tool::ToolSpec {
        hrns_core::tool::ToolSpec {
            name: "waits".into(),
            description: "waits for its cancellation".into(),
            parameters: serde_json::json!({"type": "object"}),
            effect: hrns_core::tool::Effect::ReadOnly,
        }
    }

    fn run(&self, _: &str, ctx: &hrns_blocking::ToolContext) -> ToolOutput {
        while !ctx.cancel.is_cancelled() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        ToolOutput::ok("saw the cancel")
    }
}

#[test]
fn cancelling_the_token_reaches_a_std_tool() {
    let t = tokio();
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path()).unwrap();
    let mut tools = Toolbox::new();
    tools.add(WaitsForCancel);
    let cancel = ctx.cancel.clone();
    let out = t.rt.block_on(async {
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            cancel.cancel();
        });
        tools.get("waits").unwrap().run("{}", &ctx).await
    });
    assert_eq!(out, ToolOutput::ok("saw the cancel"));
}

#[test]
fn web_fetch_refuses_loopback_unless_allowed() {
    let t = tokio();
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(dir.path()).unwrap();
    let fetch = t.tools.get("web_fetch").unwrap();
    for url in [
        "http://127.0.0.1:9/",
        "http://localhost:9/",
        "http://[::1]:9/",
        "http://169.254.169.254/",
    ] {
        let args = serde_json::json!({ "url": url }).to_string();
        let out = t.rt.block_on(fetch.run(&args, &ctx));
        assert!(out.is_error, "{url}: {}", out.content);
        assert!(
            out.content.contains("webFetchAllowPrivate"),
            "{url}: {}",
            out.content
        );
    }
    ctx.sandbox.web_fetch = hrns_core::tool::fetch::PrivateAddresses::Allowed;
    let args = serde_json::json!({ "url": "http://127.0.0.1:9/" }).to_string();
    let out = t.rt.block_on(fetch.run(&args, &ctx));
    assert!(
        !out.content.contains("webFetchAllowPrivate"),
        "{}",
        out.content
    );
}
