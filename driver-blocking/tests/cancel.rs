//! Cancelling a blocking turn from another thread, mid-stream and during a retry wait.

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_blocking::{Client, ClientConfig, Runner, ToolContext, Toolbox, TurnOutcome};
use hrns_core::history;
use hrns_core::session::{Event, Provider, Session, SessionConfig};
use std::time::{Duration, Instant};

fn run_and_cancel_after(reply: Reply, after: Duration) -> (TurnOutcome, Duration, Session) {
    let mock = MockProvider::start([reply, Reply::text_answer("next")]).unwrap();
    let provider = Provider::new(mock.base_url(), None);
    let client = Client::new(provider.clone(), &ClientConfig::default());
    let tools = Toolbox::new();
    let ctx = ToolContext {
        workspace: std::env::temp_dir(),
        cancel: Default::default(),
        sandbox: Default::default(),
        files: Default::default(),
        children: Default::default(),
    };
    let mut runner = Runner::new(std::sync::Arc::new(client), &tools, ctx);
    let flag = runner.cancel_flag();
    let mut session = Session::new(SessionConfig::new(provider, "m"));
    std::thread::spawn(move || {
        std::thread::sleep(after);
        flag.cancel();
    });
    let start = Instant::now();
    let mut finals = 0;
    let outcome = runner
        .run(&mut session, "x", |e| finals += usize::from(e.is_final()))
        .expect("the session was idle");
    assert_eq!(finals, 1);
    (outcome, start.elapsed(), session)
}

#[test]
fn cancel_mid_stream_returns_at_once_with_a_valid_history() {
    let reply = Reply::text_answer("some words then a long pause");
    let mid = reply.body().len() / 2;
    let (outcome, took, session) = run_and_cancel_after(
        reply.split_at(&[mid]).delay(Duration::from_secs(5)),
        Duration::from_millis(200),
    );
    assert_eq!(outcome, TurnOutcome::Cancelled);
    assert!(
        took < Duration::from_secs(2),
        "cancel was not immediate: {took:?}"
    );
    history::validate(session.messages()).unwrap();
    assert!(
        session
            .messages()
            .last()
            .unwrap()
            .text()
            .contains("interrupted")
    );
}

#[test]
fn cancel_during_a_fast_stream_returns_promptly() {
    use hrns_blocking::mock::chunk;
    // Tokens as fast as the loopback carries them, forever: the reader always has a piece
    // ready, so only a cancel checked between feeds can end the turn.
    let endless = Reply::endless_sse([chunk::role_chunk()], chunk::text_chunk("tok "));
    let (outcome, took, session) = run_and_cancel_after(endless, Duration::from_millis(300));
    assert_eq!(outcome, TurnOutcome::Cancelled);
    assert!(
        took < Duration::from_millis(300) + Duration::from_secs(1),
        "cancel was not prompt: {took:?}"
    );
    history::validate(session.messages()).unwrap();
    let last = session.messages().last().unwrap().text();
    assert!(last.starts_with("tok tok"), "what was shown is kept");
    assert!(last.ends_with("[interrupted by the user]"));
}

#[test]
fn cancel_during_retry_wait() {
    let (outcome, took, session) =
        run_and_cancel_after(Reply::rate_limited("30"), Duration::from_millis(200));
    assert_eq!(outcome, TurnOutcome::Cancelled);
    assert!(took < Duration::from_secs(2));
    assert_eq!(session.messages().len(), 1);
    let _ = Event::TurnCancelled;
}
