//! A subagent's question pending when the owner cancels the parent's turn, on the async
//! driver: the session denies it, the waiting child is stopped, and nothing hangs or is left
//! pending; a late answer is a typed error.

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_core::session::{
    Approval, ApprovalPolicy, Event, Provider, Question, Session, SessionConfig, SessionError,
    ToolStatus,
};
use hrns_core::tool::{Effect, ToolOutput, ToolSpec};
use hrns_tokio::tools::TaskTool;
use hrns_tokio::{Client, ClientConfig, Runner, Tool, ToolContext, ToolFuture, Toolbox};

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
    fn run<'a>(&'a self, _arguments: &'a str, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async { ToolOutput::ok("touched") })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_turn_while_a_child_asks_stops_the_child_without_an_answer() {
    let args = serde_json::json!({"description": "d", "prompt": "Touch.", "agent": "Builder"});
    let mock = MockProvider::start([
        Reply::tool_calls(&[("t1", "task", &args.to_string())]),
        Reply::tool_calls(&[("c1", "touch", "{}")]),
        Reply::text_answer("child done"),
    ])
    .unwrap();
    let provider = Provider::new(mock.base_url(), None);
    let client = Client::new(provider.clone(), &ClientConfig::default());
    let mut child_tools = Toolbox::new();
    child_tools.add(Touch);
    let mut config = SessionConfig::new(provider, "m");
    config.approval = ApprovalPolicy::Ask;
    config.tools = child_tools.specs();
    let children =
        hrns_core::task::Children::new(config.clone(), hrns_core::agent::builtin_agents());
    let task = TaskTool::new(client.clone(), children, child_tools);
    config.subagents = Some(task.subagents());
    let mut tools = Toolbox::new();
    tools.add(task);
    config.tools = tools.specs();
    let mut session = Session::new(config);
    let ctx = ToolContext::new(std::env::temp_dir()).unwrap();
    let mut runner = Runner::new(client, tools, ctx);
    session.submit("Delegate.").unwrap();
    let mut events = Vec::new();
    let mut asked = None;
    while !session.is_idle() {
        for event in runner.complete_io(&mut session).await {
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
    // The touch never ran.
    events.extend(runner.take_late(&mut session));
    assert!(
        !events.iter().any(|e| matches!(e, Event::Child(c)
        if matches!(&c.event, Event::ToolResult { id, status: ToolStatus::Ok, .. } if id == "c1")))
    );
    // A late answer is a typed error, not a panic.
    let late = runner.handle_answer(&mut session, &question, Approval::Once);
    assert!(
        matches!(late, Err(SessionError::UnknownChildQuestion { .. })),
        "{late:?}"
    );
}
