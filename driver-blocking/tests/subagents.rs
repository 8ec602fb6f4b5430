//! Subagents on the blocking driver: a child's tokens count in the parent session's usage,
//! in the turn's final event and in `Session::usage`, as on the async driver. Against the
//! scripted mock provider over loopback.

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_blocking::tools::TaskTool;
use hrns_blocking::{Client, ClientConfig, Runner, ToolContext, Toolbox};
use hrns_core::agent::builtin_agents;
use hrns_core::session::{ApprovalPolicy, Event, Provider, Session, SessionConfig, TurnOutcome};
use hrns_core::task::Children;
use serde_json::json;
use std::sync::Arc;

#[test]
fn a_childs_tokens_count_in_the_parents_usage() {
    // The parent asks for a task, the child answers, the parent answers: three requests of
    // 8 prompt tokens each (the mock's usage), one of them the child's.
    let task = json!({"description": "look", "prompt": "Study a."}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("t", "task", &task)]),
        Reply::text_answer("Found it."),
        Reply::text_answer("Done."),
    ])
    .unwrap();
    let provider = Provider::new(mock.base_url(), None);
    let client = Arc::new(Client::new(provider.clone(), &ClientConfig::default()));
    let mut config = SessionConfig::new(provider, "m");
    config.approval = ApprovalPolicy::Auto;
    let made_of = Children::new(config.clone(), builtin_agents());
    let task = TaskTool::new(client.clone(), made_of, Toolbox::new());
    config.subagents = Some(task.subagents());
    let mut tools = Toolbox::new();
    tools.add(task);
    config.tools = tools.specs();
    let mut session = Session::new(config);
    let mut runner = Runner::new(
        client,
        &tools,
        ToolContext::new(std::env::temp_dir()).unwrap(),
    );
    let mut events = Vec::new();
    let outcome = runner
        .run(&mut session, "Study a.", |e| events.push(e.clone()))
        .unwrap();
    assert_eq!(outcome, TurnOutcome::Finished, "{events:?}");
    assert_eq!(mock.chat_requests().len(), 3);
    let finished = events.iter().find_map(|e| match e {
        Event::TurnFinished { usage, .. } => usage.clone(),
        _ => None,
    });
    assert_eq!(finished.and_then(|u| u.prompt_tokens), Some(24));
    assert_eq!(session.usage().prompt, 24);
}
