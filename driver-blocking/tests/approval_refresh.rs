//! `Runner::drive_batches` asks the front end about an approval, then brings the tools up to
//! date before it hands the answer to the session: a denial ends the answer's calls and builds
//! the next request at once, and that request offers the tools as they are after the
//! question, not before it. (hrns-tokio's `Runner::run` has the same test.)

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_blocking::{Client, ClientConfig, Runner, Tool, ToolContext, Toolbox, TurnFront};
use hrns_core::session::{
    Approval, ApprovalPolicy, Event, Provider, Question, Session, SessionConfig, TurnOutcome,
};
use hrns_core::tool::{Effect, ToolOutput, ToolSpec};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A tool that does nothing, with the given name and effect.
struct Idle(&'static str, Effect);

impl Tool for Idle {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.0.into(),
            description: "Does nothing.".into(),
            parameters: json!({"type": "object", "properties": {}}),
            effect: self.1,
        }
    }
    fn run(&self, _arguments: &str, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::ok("done")
    }
}

/// Denies every call; while it is asked, `extra` goes away (a server's tools changed).
struct Front {
    extra_left: Arc<AtomicBool>,
    events: Vec<Event>,
}

impl TurnFront for Front {
    fn events(&mut self, events: &[Event]) {
        self.events.extend_from_slice(events);
    }

    fn approve(&mut self, _question: &Question) -> Approval {
        self.extra_left.store(true, Ordering::SeqCst);
        Approval::Deny {
            reason: Some("not now".into()),
        }
    }
}

/// The tool names a recorded chat request offered.
fn offered(request: &serde_json::Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_request_an_approval_answer_starts_offers_the_tools_as_they_are_then() {
    let workspace = tempfile::tempdir().unwrap();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "poke", "{}")]),
        Reply::text_answer("fine, not poked"),
    ])
    .unwrap();
    let provider = Provider::new(mock.base_url(), None);
    let client = Client::new(provider.clone(), &ClientConfig::default());
    let mut tools = Toolbox::new();
    tools
        .add(Idle("poke", Effect::Write))
        .add(Idle("extra", Effect::ReadOnly));
    let mut config = SessionConfig::new(provider, "mock-model");
    config.tools = tools.specs();
    config.approval = ApprovalPolicy::Ask;
    let extra_left = Arc::new(AtomicBool::new(false));
    let update = Arc::clone(&extra_left);
    let ctx = ToolContext::new(workspace.path()).unwrap();
    let mut runner = Runner::new(Arc::new(client), &tools, ctx).update_tools_with(move |tools| {
        update.swap(false, Ordering::SeqCst).then(|| {
            tools.retain(|name| name != "extra");
            "extra left".to_owned()
        })
    });
    let mut session = Session::new(config);
    session.submit("poke it").unwrap();
    let mut front = Front {
        extra_left,
        events: Vec::new(),
    };
    assert_eq!(
        runner.drive_batches(&mut session, &mut front),
        TurnOutcome::Finished
    );
    assert!(
        front
            .events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { id, .. } if id == "c1")),
        "{:?}",
        front.events
    );

    let requests = mock.requests();
    assert_eq!(
        requests.len(),
        2,
        "the question's answer started one request"
    );
    assert_eq!(offered(&requests[0].json()), ["poke", "extra"]);
    // Built by the denial itself: it offers the tools as they were when the answer came.
    assert_eq!(offered(&requests[1].json()), ["poke"]);
}
