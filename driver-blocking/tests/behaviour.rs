//! The shared behaviour suite against the blocking driver, over loopback.

mod suite;

use hrns_blocking::{Client, ClientConfig, Runner, Tool, ToolContext, Toolbox};
use hrns_core::session::{Event, Session};
use hrns_core::tool::{ToolOutput, ToolSpec};
use std::time::{Duration, Instant};

struct Echo;
impl Tool for Echo {
    fn spec(&self) -> ToolSpec {
        suite::echo_spec()
    }
    fn run(&self, arguments: &str, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::ok(suite::echo(arguments))
    }
}

struct Slow;
impl Tool for Slow {
    fn spec(&self) -> ToolSpec {
        suite::slow_spec()
    }
    fn run(&self, arguments: &str, _ctx: &ToolContext) -> ToolOutput {
        std::thread::sleep(Duration::from_millis(suite::slow_ms(arguments)));
        ToolOutput::ok("slept")
    }
}

struct Blocking;

impl suite::Harness for Blocking {
    fn run(&mut self, session: &mut Session, prompt: &str) -> Vec<(Instant, Event)> {
        let client = Client::new(session.config().provider.clone(), &ClientConfig::default());
        let mut tools = Toolbox::new();
        tools.add(Echo).add(Slow);
        let ctx = ToolContext {
            workspace: std::env::temp_dir(),
            cancel: Default::default(),
        };
        let mut runner = Runner::new(std::sync::Arc::new(client), &tools, ctx);
        let mut events = Vec::new();
        runner.run(session, prompt, |e| {
            events.push((Instant::now(), e.clone()))
        });
        events
    }
}

macro_rules! suite_tests {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { suite::$name(&mut Blocking); })*
    };
}

suite_tests!(
    full_tool_turn,
    parallel_tool_calls,
    rate_limit_then_success,
    server_error_with_body,
    client_error_is_not_retried,
    connection_dropped_mid_stream,
    dropped_before_output_is_retried,
    malformed_chunk,
    no_done_marker,
    events_arrive_while_streaming,
    unknown_tool_and_bad_arguments,
    refused_connection_fails_after_retries,
);
