//! Cancelling a turn mid-stream, mid-tool and mid-retry-sleep, by the token or by dropping the
//! future: each leaves a valid history, exactly one final event, and no child process behind.

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_core::history;
use hrns_core::session::{ApprovalPolicy, Event, Provider, Session, SessionConfig, ToolStatus};
use hrns_tokio::tools::RunCommand;
use hrns_tokio::{Client, ClientConfig, Runner, ToolContext, Toolbox, TurnOutcome};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A command that records the shell's pid and a background child's pid, then waits forever.
const STUBBORN: &str = "echo $$ > shell.pid; sleep 30 & echo $! > child.pid; wait";

fn setup(replies: Vec<Reply>) -> (MockProvider, Session, Runner, tempfile::TempDir) {
    let mock = MockProvider::start(replies).unwrap();
    let provider = Provider::new(mock.base_url(), None);
    let client = Client::new(provider.clone(), &ClientConfig::default());
    let mut tools = Toolbox::new();
    tools.add(RunCommand);
    let mut config = SessionConfig::new(provider, "m");
    config.tools = tools.specs();
    config.approval = ApprovalPolicy::Auto;
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().canonicalize().unwrap();
    let runner = Runner::new(client, tools, ToolContext::new(workspace).unwrap());
    (mock, Session::new(config), runner, dir)
}

fn stubborn_command() -> Reply {
    let args = serde_json::json!({ "command": STUBBORN }).to_string();
    Reply::tool_calls(&[("call_1", "run_command", &args)])
}

/// Waits until the command wrote both pid files; returns the pids.
async fn pids(dir: &Path) -> Vec<i32> {
    let read = |name: &str| -> Option<i32> {
        std::fs::read_to_string(dir.join(name))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    for _ in 0..500 {
        if let (Some(shell), Some(child)) = (read("shell.pid"), read("child.pid")) {
            return vec![shell, child];
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the command never started");
}

/// Whether `pid` is a live process (a zombie waiting for its parent counts as gone).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

async fn assert_gone(pids: &[i32]) {
    for _ in 0..200 {
        if !pids.iter().any(|&p| alive(p)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("still running: {pids:?}");
}

fn check_ending(session: &Session, events: &[Event]) {
    history::validate(session.messages()).unwrap();
    assert!(session.is_idle());
    let finals: Vec<&Event> = events.iter().filter(|e| e.is_final()).collect();
    assert_eq!(finals, [&Event::TurnCancelled], "exactly one final event");
    assert_eq!(events.last(), Some(&Event::TurnCancelled));
}

/// Runs a turn and cancels its token once `trigger` completes; returns the outcome, the
/// events and how long the turn took after the cancel.
async fn run_and_cancel(
    runner: &mut Runner,
    session: &mut Session,
    trigger: impl std::future::Future<Output = ()>,
) -> (TurnOutcome, Vec<Event>, Duration) {
    let token = runner.cancel_token();
    let mut events = Vec::new();
    let mut cancelled_at = None;
    let outcome = {
        let turn = runner.run(session, "go", |e| events.push(e.clone()));
        let cancel = async {
            trigger.await;
            cancelled_at = Some(Instant::now());
            token.cancel();
            std::future::pending::<()>().await
        };
        tokio::select! {
            outcome = turn => outcome.expect("the session was idle"),
            () = cancel => unreachable!(),
        }
    };
    let took = cancelled_at
        .expect("the turn ended before the cancel")
        .elapsed();
    (outcome, events, took)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_stream() {
    let reply = Reply::text_answer("some words then a long pause");
    let mid = reply.body().len() / 2;
    let (_mock, mut session, mut runner, _dir) = setup(vec![
        reply.split_at(&[mid]).delay(Duration::from_secs(10)),
        Reply::text_answer("the next turn"),
    ]);
    let (outcome, events, took) = run_and_cancel(&mut runner, &mut session, async {
        tokio::time::sleep(Duration::from_millis(300)).await;
    })
    .await;
    assert_eq!(outcome, TurnOutcome::Cancelled);
    assert!(
        took < Duration::from_secs(1),
        "cancel was not immediate: {took:?}"
    );
    check_ending(&session, &events);
    assert!(events.iter().any(|e| matches!(e, Event::TextDelta { .. })));
    let last = session.messages().last().unwrap().text();
    assert!(last.contains("interrupted"), "{last}");

    // The runner took a fresh token and the history is a valid request: the next turn works.
    assert!(!runner.cancel_token().is_cancelled());
    let outcome = runner.run(&mut session, "again", |_| {}).await.unwrap();
    assert_eq!(outcome, TurnOutcome::Finished);
}

/// Tokens as fast as the loopback carries them, forever: the body never waits, so only a
/// cancel checked between feeds can end the turn.
fn endless_fast_stream() -> Reply {
    use hrns_blocking::mock::chunk;
    Reply::endless_sse([chunk::role_chunk()], chunk::text_chunk("tok "))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_a_fast_stream_returns_promptly() {
    let (_mock, mut session, mut runner, _dir) =
        setup(vec![endless_fast_stream(), Reply::text_answer("next")]);
    let (outcome, events, took) = run_and_cancel(&mut runner, &mut session, async {
        tokio::time::sleep(Duration::from_millis(300)).await;
    })
    .await;
    assert_eq!(outcome, TurnOutcome::Cancelled);
    assert!(took < Duration::from_secs(1), "{took:?}");
    check_ending(&session, &events);
    let last = session.messages().last().unwrap().text();
    assert!(last.starts_with("tok tok"), "what was shown is kept");
    assert!(last.ends_with("[interrupted by the user]"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_tool_kills_the_command_and_its_children() {
    let (_mock, mut session, mut runner, dir) = setup(vec![stubborn_command()]);
    let path: PathBuf = dir.path().to_owned();
    let (outcome, events, took) = run_and_cancel(&mut runner, &mut session, async {
        pids(&path).await;
    })
    .await;
    assert_eq!(outcome, TurnOutcome::Cancelled);
    assert!(took < Duration::from_secs(1), "{took:?}");
    check_ending(&session, &events);
    assert!(events.iter().any(|e| matches!(e,
        Event::ToolResult { id, status: ToolStatus::Cancelled, .. } if id == "call_1")));
    assert_gone(&pids(dir.path()).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_retry_sleep() {
    let (mock, mut session, mut runner, _dir) = setup(vec![Reply::rate_limited("30")]);
    let (outcome, events, took) = run_and_cancel(&mut runner, &mut session, async {
        tokio::time::sleep(Duration::from_millis(300)).await;
    })
    .await;
    assert_eq!(outcome, TurnOutcome::Cancelled);
    assert!(took < Duration::from_secs(1), "{took:?}");
    check_ending(&session, &events);
    assert!(events.iter().any(|e| matches!(e, Event::Retry { .. })));
    assert_eq!(session.messages().len(), 1);
    assert_eq!(mock.request_count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_future_mid_tool_cancels_the_turn() {
    let (_mock, mut session, mut runner, dir) = setup(vec![stubborn_command()]);
    let mut events = Vec::new();
    tokio::select! {
        _ = runner.run(&mut session, "go", |e| events.push(e.clone())) => panic!("the turn ended"),
        _ = pids(dir.path()) => {} // the turn's future is dropped here
    }
    check_ending(&session, &events);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ToolResult {
            status: ToolStatus::Cancelled,
            ..
        }
    )));
    assert_gone(&pids(dir.path()).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_future_mid_stream_keeps_what_was_shown() {
    let reply = Reply::text_answer("shown before the drop");
    let mid = reply.body().len() / 2;
    let (_mock, mut session, mut runner, _dir) =
        setup(vec![reply.split_at(&[mid]).delay(Duration::from_secs(10))]);
    let mut events = Vec::new();
    let turn = runner.run(&mut session, "go", |e| events.push(e.clone()));
    assert!(
        tokio::time::timeout(Duration::from_millis(300), turn)
            .await
            .is_err()
    );
    check_ending(&session, &events);
    assert!(
        session
            .messages()
            .last()
            .unwrap()
            .text()
            .contains("interrupted")
    );
}
