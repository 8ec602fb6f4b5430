//! Subagents on the async driver: the `task` calls of one answer run at the same time, their
//! events are tagged with the parent call id, cancel stops every child, and the turn's usage
//! includes the children's tokens. Against the scripted mock provider over loopback.

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_core::agent::builtin_agents;
use hrns_core::history;
use hrns_core::session::{ApprovalPolicy, Event, Provider, Session, SessionConfig, ToolStatus};
use hrns_core::task::{ChildEvent, Children};
use hrns_core::tool::{Effect, ToolOutput, ToolSpec};
use hrns_tokio::tools::TaskTool;
use hrns_tokio::{
    Client, ClientConfig, Runner, Tool, ToolContext, ToolFuture, Toolbox, TurnOutcome,
};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Barrier;

/// A read-only tool whose calls wait for each other: it answers "met" once `n` calls are
/// waiting at once, and "alone" if the others do not come within ten seconds (so children run
/// one after the other fail the test instead of hanging it).
struct Meet(Arc<Barrier>);

impl Tool for Meet {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "meet".into(),
            description: "Waits for the other subagents.".into(),
            parameters: json!({"type": "object", "properties": {}}),
            effect: Effect::ReadOnly,
        }
    }

    fn run<'a>(&'a self, _arguments: &'a str, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            match tokio::time::timeout(Duration::from_secs(10), self.0.wait()).await {
                Ok(_) => ToolOutput::ok("met"),
                Err(_) => ToolOutput::error("alone"),
            }
        })
    }
}

struct Parent {
    session: Session,
    runner: Runner,
}

/// The children's events among the parent's: they come out of the parent session's poll.
fn children_of(events: &[Event]) -> Vec<ChildEvent> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Child(child) => Some(ChildEvent::clone(child)),
            _ => None,
        })
        .collect()
}

/// A parent session offering `task` (children get `meet`) under the auto policy.
fn parent(mock: &MockProvider) -> Parent {
    let provider = Provider::new(mock.base_url(), None);
    let client = Client::new(provider.clone(), &ClientConfig::default());
    let mut child_tools = Toolbox::new();
    child_tools.add(Meet(Arc::new(Barrier::new(2))));
    let mut config = SessionConfig::new(provider, "m");
    config.approval = ApprovalPolicy::Auto;
    let mut child_parent = config.clone();
    child_parent.tools = child_tools.specs();
    let made_of = Children::new(child_parent, builtin_agents());
    let task = TaskTool::new(client.clone(), made_of, child_tools);
    config.subagents = Some(task.subagents());
    let mut tools = Toolbox::new();
    tools.add(task);
    config.tools = tools.specs();
    let workspace = std::env::temp_dir();
    let runner = Runner::new(client, tools, ToolContext::new(workspace).unwrap());
    Parent {
        session: Session::new(config),
        runner,
    }
}

fn two_tasks() -> Reply {
    let a = json!({"description": "look at a", "prompt": "Study a."}).to_string();
    let b =
        json!({"description": "look at b", "prompt": "Study b.", "agent": "Planner"}).to_string();
    Reply::tool_calls(&[("task_a", "task", &a), ("task_b", "task", &b)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_children_run_at_once_and_their_tokens_count() {
    // Requests in arrival order: the parent, both children's first requests (each calls
    // `meet`), both children's second (each answers), the parent's second.
    let mock = MockProvider::start([
        two_tasks(),
        Reply::tool_calls(&[("m", "meet", "{}")]),
        Reply::tool_calls(&[("m", "meet", "{}")]),
        Reply::text_answer("Found it."),
        Reply::text_answer("Found it."),
        Reply::text_answer("Both looked."),
    ])
    .unwrap();
    let mut p = parent(&mock);
    let mut events = Vec::new();
    let outcome = p
        .runner
        .run(&mut p.session, "Study a and b.", |e| events.push(e.clone()))
        .await
        .unwrap();
    assert_eq!(outcome, TurnOutcome::Finished, "{events:?}");

    // Each child's `meet` answered "met": both calls were waiting at the same time, so the
    // children overlapped (one after the other, each would have met nobody).
    let children = children_of(&events);
    let mut met: Vec<(&str, &str)> = children
        .iter()
        .filter_map(|c| match &c.event {
            Event::ToolResult { output, .. } => {
                Some((c.parent_call_id.as_str(), output.content.as_str()))
            }
            _ => None,
        })
        .collect();
    met.sort_unstable();
    assert_eq!(met, [("task_a", "met"), ("task_b", "met")], "{children:?}");
    // Each child's events carry its agent and its parent call id.
    let agent_of = |id: &str| {
        children
            .iter()
            .find(|c| c.parent_call_id == id)
            .map(|c| c.agent.clone())
    };
    assert_eq!(agent_of("task_a").as_deref(), Some("Explorer"));
    assert_eq!(agent_of("task_b").as_deref(), Some("Planner"));

    // The parent got each child's answer; each child's request held only its prompt.
    let mut results: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult { id, output, .. } => Some((id.clone(), output.content.clone())),
            _ => None,
        })
        .collect();
    results.sort(); // in the order the children finished
    assert_eq!(
        results,
        [
            ("task_a".into(), "Found it.".into()),
            ("task_b".into(), "Found it.".into())
        ]
    );
    let prompts: Vec<String> = mock.chat_requests()[1..3]
        .iter()
        .map(|r| {
            let body = r.json();
            let messages = body["messages"].as_array().unwrap();
            assert!(
                body["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|t| t["function"]["name"] == "meet"),
                "{body}"
            );
            messages.last().unwrap()["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(prompts.contains(&"Study a.".to_owned()), "{prompts:?}");
    assert!(prompts.contains(&"Study b.".to_owned()), "{prompts:?}");

    // Six requests of 8 prompt tokens each: two the parent's, four the children's.
    let finished = events.iter().find_map(|e| match e {
        Event::TurnFinished { usage, .. } => usage.clone(),
        _ => None,
    });
    assert_eq!(finished.and_then(|u| u.prompt_tokens), Some(48));
    assert_eq!(p.session.usage().prompt, 48);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_both_children() {
    // Both children's requests hang: they are in flight together until the cancel.
    let mock = MockProvider::start([two_tasks(), Reply::hang(), Reply::hang()]).unwrap();
    let mut p = parent(&mock);
    let token = p.runner.cancel_token();
    let mut events = Vec::new();
    let mut turn = Box::pin(
        p.runner
            .run(&mut p.session, "Study a and b.", |e| events.push(e.clone())),
    );
    // Drive the turn until the mock holds both children's requests, then cancel.
    let both_asked = async {
        while mock.request_count() < 3 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::select! {
        outcome = &mut turn => panic!("the turn ended early: {outcome:?}"),
        () = both_asked => {}
    }
    token.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(10), turn)
        .await
        .expect("the cancelled turn ends")
        .unwrap();
    assert_eq!(outcome, TurnOutcome::Cancelled);
    assert_eq!(events.iter().filter(|e| e.is_final()).count(), 1);
    history::validate(p.session.messages()).unwrap();

    // Each child ended with its own cancel, tagged with its call.
    let children = children_of(&events);
    let mut cancelled: Vec<&str> = children
        .iter()
        .filter(|c| c.event == Event::TurnCancelled)
        .map(|c| c.parent_call_id.as_str())
        .collect();
    cancelled.sort_unstable();
    assert_eq!(cancelled, ["task_a", "task_b"], "{children:?}");
    let statuses: Vec<ToolStatus> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult { status, .. } => Some(*status),
            _ => None,
        })
        .collect();
    assert!(
        statuses.iter().all(|s| *s == ToolStatus::Cancelled),
        "{statuses:?}"
    );
    assert_eq!(
        mock.request_count(),
        3,
        "no child asked again after the cancel"
    );
}
