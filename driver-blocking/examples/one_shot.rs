//! One turn with a custom tool against any OpenAI-compatible endpoint.
//!
//! ```sh
//! OPENAI_BASE_URL=http://127.0.0.1:11434/v1 HRNS_MODEL=qwen3 \
//!     cargo run -p hrns-blocking --example one_shot -- "What time is it?"
//! ```
//! The same variables as `hrns`, resolved by the same code: `OPENAI_BASE_URL` (default
//! OpenAI's), `OPENAI_API_KEY` (sent as a bearer token when set) and `HRNS_MODEL`.

use hrns_blocking::{Client, ClientConfig, Runner, Tool, ToolContext, Toolbox, TurnOutcome};
use hrns_core::config::{Config, Selection};
use hrns_core::session::{ApprovalPolicy, Event, Session, SessionConfig};
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
    let resolved =
        Config::default().resolve(&Selection::default(), &|name| std::env::var(name).ok())?;
    let model = resolved.model.clone();
    let prompt = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let prompt = if prompt.is_empty() {
        "What is the Unix time now?".to_owned()
    } else {
        prompt
    };

    let provider = resolved.to_provider();
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
        files: Default::default(),
        children: Default::default(),
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
