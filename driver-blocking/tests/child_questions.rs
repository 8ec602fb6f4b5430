//! A subagent's question pending when the owner cancels the parent's turn: the session denies
//! it, the waiting child is stopped, and nothing hangs or is left pending.

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_blocking::tools::TaskTool;
use hrns_blocking::{Client, ClientConfig, Runner, Tool, ToolContext, Toolbox};
use hrns_core::session::{
    ApprovalPolicy, Event, Provider, Question, Session, SessionConfig, ToolStatus,
};
use hrns_core::tool::{Effect, ToolOutput, ToolSpec};
use std::sync::Arc;
use std::time::Duration;

/// A tool with effects, so that a child's call of it asks.
struct Touch;

impl Tool for Touch {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "touch".into(),
            description: "Touches.".into(),
            parameters: serde_json::json!({"type": "object"}),
            effect: Effect::Write,
        }
    }
    fn run(&self, _arguments: &str, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::ok("touched")
    }
}

#[test]
fn cancelling_the_turn_while_a_child_asks_stops_the_child_without_an_answer() {
    let args = serde_json::json!({"description": "d", "prompt": "Touch.", "agent": "Builder"});
    let mock = MockProvider::start([
        Reply::tool_calls(&[("t1", "task", &args.to_string())]),
        Reply::tool_calls(&[("c1", "touch", "{}")]),
        Reply::text_answer("child done"),
    ])
    .unwrap();
    let provider = Provider::new(mock.base_url(), None);
    let mut child_tools = Toolbox::new();
    child_tools.add(Touch);
    let mut parent = SessionConfig::new(provider.clone(), "m");
    parent.approval = ApprovalPolicy::Ask;
    parent.tools = child_tools.specs();
    let agents = hrns_core::agent::builtin_agents();
    let children = hrns_core::task::Children::new(parent.clone(), agents.clone());
    let transport: Arc<dyn hrns_blocking::Transport> =
        Arc::new(Client::new(provider, &ClientConfig::default()));
    let task = TaskTool::new(Arc::clone(&transport), children, child_tools);
    let running = task.running();
    let mut config = parent;
    config.subagents = Some(task.subagents());
    let mut tools = Toolbox::new();
    tools.add(task);
    config.tools = tools.specs();
    let mut session = Session::new(config);
    let ctx = ToolContext::new(std::env::temp_dir()).unwrap();
    let mut runner = Runner::new(transport, &tools, ctx);
    session.submit("Delegate.").unwrap();
    let mut events = Vec::new();
    let mut asked = None;
    while !session.is_idle() {
        for event in runner.complete_io(&mut session) {
            if let Some(question @ Question::Child(_)) = Question::pending_in(&session, &event) {
                // The owner does not answer: it cancels the turn.
                asked = Some(question);
                session.cancel();
            }
            events.push(event);
        }
    }
    let question = asked.expect("the child asked through the parent");
    assert!(session.child_questions().is_empty(), "nothing left pending");
    assert!(
        matches!(events.last(), Some(Event::TurnCancelled)),
        "{events:?}"
    );
    // The child, denied and cancelled, ends; its last events still come out.
    assert!(
        running.wait_idle(Duration::from_secs(30)),
        "the child ended"
    );
    events.extend(runner.take_late(&mut session));
    let child_ended = events.iter().any(|e| {
        matches!(e, Event::Child(c) if c.parent_call_id == "t1"
            && matches!(c.event, Event::TurnCancelled | Event::TurnFinished { .. }))
    });
    assert!(child_ended, "{events:?}");
    // The touch never ran.
    assert!(
        !events.iter().any(|e| matches!(e, Event::Child(c)
        if matches!(&c.event, Event::ToolResult { id, status: ToolStatus::Ok, .. } if id == "c1")))
    );
    // A late answer is a typed error, not a panic.
    let late = runner.handle_answer(&mut session, &question, hrns_core::session::Approval::Once);
    assert!(
        matches!(
            late,
            Err(hrns_core::session::SessionError::UnknownChildQuestion { .. })
        ),
        "{late:?}"
    );
}
