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
    fn call_raw(&self, root: &Path, name: &str, arguments: &str) -> ToolOutput {
        let ctx = ToolContext::new(root).expect("the suite's workspace exists");
        let tool = self.tools.get(name).expect("a built-in tool");
        self.rt.block_on(tool.run(arguments, &ctx))
    }
}

tool_tests!(tokio());
