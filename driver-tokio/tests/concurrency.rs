//! Concurrency of the async runner: tools run at once up to the limit, per-tool timeouts,
//! approvals answered from another task, and many sessions in one process.

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_core::session::{
    Approval, ApprovalPolicy, Event, Provider, Question, Session, SessionConfig, ToolStatus,
};
use hrns_core::tool::{Effect, ToolOutput, ToolSpec};
use hrns_tokio::{
    Client, ClientConfig, Runner, Tool, ToolContext, ToolFuture, Toolbox, TurnOutcome,
};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

/// Sleeps `ms` milliseconds; its effect is configurable, to exercise approvals.
struct Nap(Effect);

impl Tool for Nap {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "nap".into(),
            description: "Sleeps.".into(),
            parameters: json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
            effect: self.0,
        }
    }

    fn run<'a>(&'a self, arguments: &'a str, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let v: serde_json::Value = serde_json::from_str(arguments).unwrap();
            tokio::time::sleep(Duration::from_millis(v["ms"].as_u64().unwrap())).await;
            ToolOutput::ok("rested")
        })
    }
}

fn naps(ms: u64, n: usize) -> Reply {
    let args = json!({ "ms": ms }).to_string();
    let ids: Vec<String> = (0..n).map(|i| format!("nap_{i}")).collect();
    let calls: Vec<(&str, &str, &str)> = ids
        .iter()
        .map(|id| (id.as_str(), "nap", args.as_str()))
        .collect();
    Reply::tool_calls(&calls)
}

fn setup(mock: &MockProvider, effect: Effect, policy: ApprovalPolicy) -> (Session, Runner) {
    let provider = Provider::new(mock.base_url(), None);
    let mut tools = Toolbox::new();
    tools.add(Nap(effect));
    let mut config = SessionConfig::new(provider.clone(), "m");
    config.tools = tools.specs();
    config.approval = policy;
    let client = Client::new(provider, &ClientConfig::default());
    let runner = Runner::new(
        client,
        tools,
        ToolContext::new(std::env::temp_dir()).unwrap(),
    );
    (Session::new(config), runner)
}

async fn timed_turn(runner: &mut Runner, session: &mut Session) -> (Duration, Vec<Event>) {
    let start = Instant::now();
    let mut events = Vec::new();
    let outcome = runner
        .run(session, "go", |e| events.push(e.clone()))
        .await
        .unwrap();
    assert_eq!(outcome, TurnOutcome::Finished, "{events:?}");
    (start.elapsed(), events)
}

/// The status of each tool result, in call order.
fn statuses(events: &[Event]) -> Vec<ToolStatus> {
    let mut results: Vec<(&str, ToolStatus)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult { id, status, .. } => Some((id.as_str(), *status)),
            _ => None,
        })
        .collect();
    results.sort_by_key(|(id, _)| *id);
    results.into_iter().map(|(_, status)| status).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_slow_tools_take_about_as_long_as_one() {
    let mock = MockProvider::start([naps(400, 2), Reply::text_answer("done")]).unwrap();
    let (mut session, mut runner) = setup(&mock, Effect::ReadOnly, ApprovalPolicy::Auto);
    let (took, events) = timed_turn(&mut runner, &mut session).await;
    assert!(
        took < Duration::from_millis(700),
        "not concurrent: {took:?}"
    );
    assert_eq!(statuses(&events), [ToolStatus::Ok, ToolStatus::Ok]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_parallel_limit_holds() {
    let mock = MockProvider::start([naps(200, 3), Reply::text_answer("done")]).unwrap();
    let (mut session, runner) = setup(&mock, Effect::ReadOnly, ApprovalPolicy::Auto);
    let mut runner = runner.max_parallel_tools(1);
    let (took, _) = timed_turn(&mut runner, &mut session).await;
    assert!(took >= Duration::from_millis(600), "ran at once: {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_over_its_timeout_is_stopped_and_the_turn_goes_on() {
    let mock = MockProvider::start([naps(30_000, 1), Reply::text_answer("ok")]).unwrap();
    let (session, mut runner) = setup(&mock, Effect::ReadOnly, ApprovalPolicy::Auto);
    // The deadline is the session's: both drivers obey it.
    let mut config = session.config().clone();
    config.tool_timeout = Some(Duration::from_millis(200));
    let mut session = Session::new(config);
    let (took, events) = timed_turn(&mut runner, &mut session).await;
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert_eq!(statuses(&events), [ToolStatus::Error]);
    let sent = &mock.requests()[1].json()["messages"][2]["content"];
    assert!(
        sent.as_str()
            .unwrap()
            .contains("did not finish within 0.2 s"),
        "{sent}"
    );
}

/// Approvals answered by another task over a channel, as a UI would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_through_a_channel() {
    let mock = MockProvider::start([naps(10, 2), Reply::text_answer("ok")]).unwrap();
    let (mut session, runner) = setup(&mock, Effect::Exec, ApprovalPolicy::Ask);
    let (ask_tx, mut ask_rx) = mpsc::channel::<(Question, oneshot::Sender<Approval>)>(4);
    let mut runner = runner.approve_with(move |run| {
        let ask_tx = ask_tx.clone();
        async move {
            let (reply_tx, reply_rx) = oneshot::channel();
            if ask_tx.send((run, reply_tx)).await.is_err() {
                return Approval::Deny { reason: None };
            }
            reply_rx.await.unwrap_or(Approval::Deny { reason: None })
        }
    });
    let ui = tokio::spawn(async move {
        let mut asked = Vec::new();
        while let Some((run, reply)) = ask_rx.recv().await {
            let decision = if asked.is_empty() {
                Approval::Once
            } else {
                Approval::Deny {
                    reason: Some("not twice".into()),
                }
            };
            asked.push(run.call_id().to_owned());
            let _ = reply.send(decision);
        }
        asked
    });
    let (_, events) = timed_turn(&mut runner, &mut session).await;
    drop(runner); // closes the channel, so the UI task ends
    assert_eq!(ui.await.unwrap(), ["nap_0", "nap_1"]);
    assert_eq!(statuses(&events), [ToolStatus::Ok, ToolStatus::Denied]);
}

/// Calls that need approval are denied when nobody set an approver.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_approver_calls_are_denied() {
    let mock = MockProvider::start([naps(10, 1), Reply::text_answer("ok")]).unwrap();
    let (mut session, mut runner) = setup(&mock, Effect::Write, ApprovalPolicy::Ask);
    let (_, events) = timed_turn(&mut runner, &mut session).await;
    assert_eq!(statuses(&events), [ToolStatus::Denied]);
}

/// The runner and its turn future are `Send`: a turn runs in its own task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_runs_in_a_spawned_task() {
    let mock = MockProvider::start([Reply::text_answer("from a task")]).unwrap();
    let (mut session, mut runner) = setup(&mock, Effect::ReadOnly, ApprovalPolicy::Auto);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        let outcome = runner
            .run(&mut session, "go", move |e| {
                let _ = tx.send(e.clone());
            })
            .await
            .unwrap();
        (outcome, session)
    });
    let mut text = String::new();
    while let Some(event) = rx.recv().await {
        if let Event::TextDelta { text: t } = event {
            text.push_str(&t);
        }
    }
    let (outcome, session) = task.await.unwrap();
    assert_eq!(outcome, TurnOutcome::Finished);
    assert_eq!(text, "from a task");
    assert_eq!(session.messages().len(), 2);
}

/// Many streaming sessions at once against one provider, each on its own task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_sessions() {
    const SESSIONS: usize = 100;
    let mock = MockProvider::start_repeating(
        Reply::text_answer("a streamed answer in a few words").split_every(16),
    )
    .unwrap();
    mock.set_recording(false);
    let provider = Provider::new(mock.base_url(), None);
    let client = Client::new(provider.clone(), &ClientConfig::default());
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..SESSIONS {
        let mut session = Session::new(SessionConfig::new(provider.clone(), "m"));
        let mut runner = Runner::new(
            client.clone(),
            Toolbox::new(),
            ToolContext::new("/").unwrap(),
        );
        tasks.spawn(async move {
            let mut text = String::new();
            let outcome = runner
                .run(&mut session, "hi", |e| {
                    if let Event::TextDelta { text: t } = e {
                        text.push_str(t);
                    }
                })
                .await
                .unwrap();
            (outcome, text)
        });
    }
    let mut finished = 0;
    while let Some(done) = tasks.join_next().await {
        let (outcome, text) = done.unwrap();
        assert_eq!(outcome, TurnOutcome::Finished);
        assert_eq!(text, "a streamed answer in a few words");
        finished += 1;
    }
    assert_eq!(finished, SESSIONS);
    assert_eq!(mock.request_count(), SESSIONS);
}
