//! One turn with a custom tool against any OpenAI-compatible endpoint.
//!
//! ```sh
//! HRNS_BASE_URL=http://127.0.0.1:11434/v1 HRNS_MODEL=qwen3 \
//!     cargo run -p hrns-blocking --example one_shot -- "What time is it?"
//! ```
//! `HRNS_API_KEY` is sent as a bearer token when set.

use hrns_blocking::{Client, ClientConfig, Runner, Tool, ToolContext, Toolbox, TurnOutcome};
use hrns_core::http::Secret;
use hrns_core::session::{ApprovalPolicy, Event, Provider, Session, SessionConfig};
use hrns_core::tool::{Effect, ToolOutput, ToolSpec};
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

/// A custom tool: the current Unix time.
struct Clock;

impl Tool for Clock {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "unix_time".into(),
            description: "Returns the current Unix time in seconds.".into(),
            parameters: serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}),
            effect: Effect::ReadOnly,
        }
    }

    fn run(&self, _arguments: &str, _ctx: &ToolContext) -> ToolOutput {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => ToolOutput::ok(d.as_secs().to_string()),
            Err(e) => ToolOutput::error(e.to_string()),
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base_url =
        std::env::var("HRNS_BASE_URL").unwrap_or_else(|_| "http://127.0.0.1:11434/v1".into());
    let model = std::env::var("HRNS_MODEL").unwrap_or_else(|_| "llama3.2".into());
    let key = std::env::var("HRNS_API_KEY").ok().map(Secret::new);
    let prompt = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let prompt = if prompt.is_empty() {
        "What is the Unix time now?".to_owned()
    } else {
        prompt
    };

    let provider = Provider::new(base_url, key);
    let client = Client::new(provider.clone(), &ClientConfig::default());
    let mut tools = Toolbox::new();
    tools.add(Clock);
    let mut config = SessionConfig::new(provider, model);
    config.tools = tools.specs();
    config.approval = ApprovalPolicy::Auto;
    let mut session = Session::new(config);
    let ctx = ToolContext {
        workspace: std::env::current_dir()?,
        cancel: Default::default(),
        sandbox: Default::default(),
    };
    let mut runner = Runner::new(std::sync::Arc::new(client), &tools, ctx);
    let outcome = runner.run(&mut session, &prompt, |event| match event {
        Event::TextDelta { text } => {
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
        Event::ToolCall {
            name, arguments, ..
        } => eprintln!("[tool] {name} {arguments}"),
        Event::Retry {
            delay_ms, reason, ..
        } => eprintln!("[retry in {delay_ms} ms] {reason}"),
        _ => {}
    })?;
    println!();
    match outcome {
        TurnOutcome::Finished => Ok(()),
        TurnOutcome::Failed(e) => Err(e.into()),
        TurnOutcome::Cancelled => Err("cancelled".into()),
    }
}
