//! The shared built-in tool suite against the blocking driver's tools.

#[macro_use]
mod tool_suite;

use hrns_blocking::ToolContext;
use hrns_blocking::tools::builtin_toolbox;
use hrns_core::tool::ToolOutput;
use std::path::Path;

struct Blocking(hrns_blocking::Toolbox);

impl tool_suite::ToolHarness for Blocking {
    fn call_in(
        &self,
        root: &Path,
        sandbox: hrns_blocking::Sandbox,
        name: &str,
        arguments: &str,
    ) -> ToolOutput {
        let mut ctx = ToolContext::new(root).expect("the suite's workspace exists");
        ctx.sandbox = sandbox;
        let tool = self.0.get(name).expect("a built-in tool");
        tool.run(arguments, &ctx)
    }
}

tool_tests!(Blocking(builtin_toolbox(tool_suite::skills())));
