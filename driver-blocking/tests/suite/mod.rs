//! The driver behaviour suite: written once, run against both drivers. Each driver's test file
//! implements [`Harness`] (how to run one turn, with an `echo` and a `slow` tool of its own) and
//! expands `behaviour_tests!` for it, which defines a test for every case.
#![allow(dead_code, unreachable_pub)]

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_core::http::Secret;
use hrns_core::session::{
    ApprovalPolicy, Event, Provider, RetryPolicy, Session, SessionConfig, ToolStatus, TurnError,
};
use hrns_core::stream::StreamError;
use hrns_core::tool::{Effect, ToolSpec};
use hrns_core::wire::Role;
use serde_json::json;
use std::time::{Duration, Instant};

/// A key that must never appear in any output.
pub const KEY: &str = "sk-suite-TOPSECRET-4242";

/// Runs turns with one driver.
pub trait Harness {
    /// Runs the session's turn for `prompt` to its end, returning every event with the time it
    /// reached the caller.
    ///
    /// The runner's tool update (`Runner::update_tools_with` in both drivers) removes the
    /// `slow` tool, with the reason [`SLOW_LEFT`], once `echo` was called with the text
    /// [`DROP_SLOW`] (see [`drops_slow`]): a tool set that changes mid-turn.
    fn run(&mut self, session: &mut Session, prompt: &str) -> Vec<(Instant, Event)>;

    /// Submits `prompt` and steps the session (`complete_io`) until it asked for an approval,
    /// without answering; then hands the turn to the runner's own turn loop (`drive`), whose
    /// approval callback answers [`owner_approval`]. Returns every event of both parts.
    fn drive_after_question(
        &mut self,
        session: &mut Session,
        prompt: &str,
    ) -> Vec<(Instant, Event)>;
}

/// The `crash` tool, which both harnesses offer: it panics, always.
pub fn crash_spec() -> ToolSpec {
    ToolSpec {
        name: "crash".into(),
        description: "Panics.".into(),
        parameters: json!({"type": "object"}),
        effect: Effect::ReadOnly,
    }
}

/// The `echo` text after which the harness's tool update removes `slow`.
pub const DROP_SLOW: &str = "drop slow";

/// The reason the harness's tool update gives.
pub const SLOW_LEFT: &str = "the slow tool left";

/// Whether an `echo` call with these arguments asks the tool update to remove `slow`.
pub fn drops_slow(arguments: &str) -> bool {
    let v: serde_json::Value = serde_json::from_str(arguments).unwrap_or_default();
    v["text"] == DROP_SLOW
}

/// The `echo` tool: returns its `text` argument. Read-only.
pub fn echo_spec() -> ToolSpec {
    ToolSpec {
        name: "echo".into(),
        description: "Returns its text.".into(),
        parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        effect: Effect::ReadOnly,
    }
}

/// The `slow` tool: sleeps `ms` milliseconds, then returns "slept". Read-only.
pub fn slow_spec() -> ToolSpec {
    ToolSpec {
        name: "slow".into(),
        description: "Sleeps.".into(),
        parameters: json!({"type": "object", "properties": {"ms": {"type": "integer"}}, "required": ["ms"]}),
        effect: Effect::ReadOnly,
    }
}

/// The echo tool's behaviour, shared by both drivers' implementations.
pub fn echo(arguments: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(arguments).unwrap_or_default();
    format!("echo: {}", v["text"].as_str().unwrap_or(""))
}

/// How long the slow tool sleeps for these arguments.
pub fn slow_ms(arguments: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(arguments).unwrap_or_default();
    v["ms"].as_u64().unwrap_or(0)
}

pub fn session(mock: &MockProvider) -> Session {
    let mut c = SessionConfig::new(
        Provider::new(mock.base_url(), Some(Secret::new(KEY))),
        "mock-model",
    );
    c.tools = vec![echo_spec(), slow_spec()];
    c.approval = ApprovalPolicy::Auto;
    c.retry = RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(20),
        max_delay: Duration::from_millis(50),
        max_retry_after: Duration::from_secs(5),
    };
    Session::new(c)
}

fn events(timed: &[(Instant, Event)]) -> Vec<&Event> {
    timed.iter().map(|(_, e)| e).collect()
}

fn text(timed: &[(Instant, Event)]) -> String {
    timed
        .iter()
        .filter_map(|(_, e)| match e {
            Event::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn last(timed: &[(Instant, Event)]) -> &Event {
    let finals: Vec<_> = timed.iter().filter(|(_, e)| e.is_final()).collect();
    assert_eq!(finals.len(), 1, "exactly one final event: {timed:?}");
    &timed.last().unwrap().1
}

/// Checks that the key appears nowhere in the events (Debug and JSON).
pub fn assert_no_key(timed: &[(Instant, Event)]) {
    for (_, e) in timed {
        let shown = format!("{e:?} {}", serde_json::to_string(e).unwrap());
        assert!(!shown.contains(KEY), "key leaked in {shown}");
    }
}

pub fn full_tool_turn(h: &mut impl Harness) {
    let mock = MockProvider::start([
        Reply::tool_calls(&[("call_1", "echo", r#"{"text":"hi"}"#)]),
        Reply::text_answer("All done."),
    ])
    .unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "please echo");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }), "{ev:?}");
    assert_eq!(text(&ev), "All done.");
    assert!(events(&ev).iter().any(|e| matches!(e,
        Event::ToolResult { id, status: ToolStatus::Ok, output, .. } if id == "call_1" && output.content == "echo: hi")));
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        reqs[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let second = reqs[1].json();
    let msgs = second["messages"].as_array().unwrap();
    assert_eq!(msgs[1]["tool_calls"][0]["id"], "call_1");
    assert_eq!(
        msgs[2],
        json!({"role": "tool", "content": "echo: hi", "tool_call_id": "call_1"})
    );
    let roles: Vec<Role> = s.messages().iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert_no_key(&ev);
}

pub fn parallel_tool_calls(h: &mut impl Harness) {
    let mock = MockProvider::start([
        Reply::tool_calls(&[
            ("a", "slow", r#"{"ms":300}"#),
            ("b", "slow", r#"{"ms":300}"#),
            ("c", "echo", r#"{"text":"c"}"#),
        ]),
        Reply::text_answer("ok"),
    ])
    .unwrap();
    let mut s = session(&mock);
    let start = Instant::now();
    let ev = h.run(&mut s, "go");
    let took = start.elapsed();
    assert!(matches!(last(&ev), Event::TurnFinished { .. }));
    // Two 300 ms tools run at once: well under the 600 ms they would take in turn.
    assert!(
        took < Duration::from_millis(550),
        "tools did not run concurrently: {took:?}"
    );
    let msgs = &mock.requests()[1].json()["messages"];
    let ids: Vec<&str> = (2..5)
        .map(|i| msgs[i]["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["a", "b", "c"], "results in call order");
}

pub fn rate_limit_then_success(h: &mut impl Harness) {
    let mock =
        MockProvider::start([Reply::rate_limited("1"), Reply::text_answer("finally")]).unwrap();
    let mut s = session(&mock);
    let start = Instant::now();
    let ev = h.run(&mut s, "x");
    assert!(
        start.elapsed() >= Duration::from_millis(950),
        "Retry-After honoured"
    );
    assert!(events(&ev).iter().any(|e| matches!(
        e,
        Event::Retry {
            delay_ms: 1000,
            attempt: 2,
            ..
        }
    )));
    assert_eq!(text(&ev), "finally");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }));
    assert_eq!(mock.requests().len(), 2);
}

pub fn server_error_with_body(h: &mut impl Harness) {
    let mock = MockProvider::start([
        Reply::error(500, "upstream exploded"),
        Reply::error(500, "upstream exploded"),
        Reply::error(500, "upstream exploded"),
    ])
    .unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "x");
    match last(&ev) {
        Event::TurnFailed {
            error: TurnError::Api { status: 500, error },
        } => {
            assert_eq!(error.message, "upstream exploded")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(mock.requests().len(), 3, "max_attempts requests");
    assert_eq!(s.messages().len(), 1);
    assert_no_key(&ev);
}

pub fn client_error_is_not_retried(h: &mut impl Harness) {
    let mock = MockProvider::start([Reply::error(
        401,
        &format!("Incorrect API key provided: {KEY}"),
    )])
    .unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "x");
    assert!(matches!(
        last(&ev),
        Event::TurnFailed {
            error: TurnError::Api { status: 401, .. }
        }
    ));
    assert_eq!(mock.requests().len(), 1);
    assert_no_key(&ev);
}

pub fn connection_dropped_mid_stream(h: &mut impl Harness) {
    let body = Reply::text_answer("This answer will be cut off somewhere in the middle");
    let cut = body.body().len() / 2;
    let mock = MockProvider::start([body.drop_after(cut)]).unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "x");
    assert!(!text(&ev).is_empty(), "part of the answer was shown");
    assert!(
        matches!(
            last(&ev),
            Event::TurnFailed {
                error: TurnError::StreamBroken { .. } | TurnError::Stream { .. }
            }
        ),
        "{:?}",
        last(&ev)
    );
    assert_eq!(
        mock.requests().len(),
        1,
        "not retried silently after output"
    );
    // What was shown is kept, said to be cut off.
    assert_eq!(s.messages().len(), 2, "{:?}", s.messages());
    assert_eq!(
        s.messages()[1].text(),
        format!("{}\n\n[cut off: the stream broke]", text(&ev))
    );
}

/// A connection that drops after the finish reason (inside the usage chunk that follows)
/// loses nothing of the answer: the turn finishes with it, not retried, not failed.
pub fn dropped_after_the_finish_reason_is_a_whole_answer(h: &mut impl Harness) {
    let reply = Reply::text_answer("All of the answer arrived");
    let usage = reply.offset_of(b"\"usage\":").expect("a usage chunk");
    let mock = MockProvider::start([reply.drop_after(usage)]).unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "x");
    assert_eq!(text(&ev), "All of the answer arrived");
    assert!(
        matches!(last(&ev), Event::TurnFinished { .. }),
        "{:?}",
        last(&ev)
    );
    assert_eq!(mock.requests().len(), 1);
    assert_eq!(s.messages()[1].text(), "All of the answer arrived");
}

pub fn dropped_before_output_is_retried(h: &mut impl Harness) {
    let mock = MockProvider::start([
        Reply::text_answer("lost").drop_after(0),
        Reply::text_answer("second try"),
    ])
    .unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "x");
    assert_eq!(text(&ev), "second try");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }));
}

pub fn malformed_chunk(h: &mut impl Harness) {
    let mock = MockProvider::start([Reply::sse_raw(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\ndata: {not json\n\n",
    )])
    .unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "x");
    match last(&ev) {
        Event::TurnFailed {
            error:
                TurnError::Stream {
                    error: StreamError::Malformed { payload, .. },
                },
        } => {
            assert_eq!(payload, "{not json")
        }
        other => panic!("{other:?}"),
    }
}

pub fn no_done_marker(h: &mut impl Harness) {
    let mock = MockProvider::start([Reply::text_answer("no done here").without_done()]).unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "x");
    assert_eq!(text(&ev), "no done here");
    assert!(
        matches!(last(&ev), Event::TurnFinished { .. }),
        "a finished choice without [DONE] is complete"
    );
}

pub fn events_arrive_while_streaming(h: &mut impl Harness) {
    let reply = Reply::text_answer("first part and the rest");
    let mid = reply.body().len() / 2;
    let mock =
        MockProvider::start([reply.split_at(&[mid]).delay(Duration::from_millis(400))]).unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "x");
    let first_delta = ev
        .iter()
        .find(|(_, e)| matches!(e, Event::TextDelta { .. }))
        .unwrap()
        .0;
    let end = ev.last().unwrap().0;
    assert!(
        end - first_delta >= Duration::from_millis(300),
        "the first delta arrived before the delayed rest"
    );
}

/// A fast stream's tokens reach the owner as few deltas, each with the text of many tokens
/// (the deltas of one read are one event), while a pause in the stream still gives a
/// delta before it (nothing waits for a later read). The text is all there, in order.
pub fn a_fast_streams_tokens_arrive_as_few_deltas(h: &mut impl Harness) {
    use hrns_blocking::mock::chunk;
    let tokens: Vec<String> = (0..400).map(|i| format!("t{i} ")).collect();
    let reply = Reply::sse(
        std::iter::once(chunk::role_chunk())
            .chain(tokens.iter().map(|t| chunk::text_chunk(t)))
            .chain([chunk::finish_chunk("stop")]),
    );
    let mid = reply.body().len() / 2;
    let mock =
        MockProvider::start([reply.split_at(&[mid]).delay(Duration::from_millis(200))]).unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "x");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }));
    let deltas: Vec<&str> = ev
        .iter()
        .filter_map(|(_, e)| match e {
            Event::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas.concat(), tokens.concat());
    // At least one delta per side of the pause; one per token would be 400.
    assert!(
        (2..=100).contains(&deltas.len()),
        "{} text deltas for 400 tokens in two pieces",
        deltas.len()
    );
}

pub fn unknown_tool_and_bad_arguments(h: &mut impl Harness) {
    let mock = MockProvider::start([
        Reply::tool_calls(&[("a", "nonexistent", "{}"), ("b", "echo", "not json")]),
        Reply::text_answer("sorry"),
    ])
    .unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "x");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }));
    let msgs = &mock.requests()[1].json()["messages"];
    assert!(
        msgs[2]["content"]
            .as_str()
            .unwrap()
            .contains("no tool named `nonexistent`")
    );
    assert!(
        msgs[3]["content"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
}

pub fn refused_connection_fails_after_retries(h: &mut impl Harness) {
    // A port nobody listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let mut c = SessionConfig::new(Provider::new(url, Some(Secret::new(KEY))), "m");
    c.retry = RetryPolicy {
        max_attempts: 2,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(10),
        max_retry_after: Duration::from_secs(1),
    };
    let mut s = Session::new(c);
    let ev = h.run(&mut s, "x");
    assert!(
        matches!(
            last(&ev),
            Event::TurnFailed {
                error: TurnError::Transport { .. }
            }
        ),
        "{ev:?}"
    );
    assert_no_key(&ev);
}

/// How the harnesses' owner loop answers approval requests (between two steps of the
/// driver, with the session in the owner's hands).
pub fn owner_approval() -> hrns_core::session::Approval {
    hrns_core::session::Approval::Once
}

/// The reason the owner gives when it denies a subagent's call.
pub const CHILD_DENIED: &str = "not for a subagent";

/// What the harnesses' owner loops answer: the session's own calls [`owner_approval`], a
/// subagent's a denial with [`CHILD_DENIED`] (so a case sees the answer reach the child).
pub fn owner_answer(question: &hrns_core::session::Question) -> hrns_core::session::Approval {
    match question {
        hrns_core::session::Question::Call(_) => owner_approval(),
        hrns_core::session::Question::Child(_) => hrns_core::session::Approval::Deny {
            reason: Some(CHILD_DENIED.into()),
        },
    }
}

/// `echo` with effects (so that it asks, and runs alone); the driver's tool is the same.
fn effectful(mut spec: ToolSpec) -> ToolSpec {
    spec.effect = Effect::Write;
    spec
}

fn with_config(s: &Session, f: impl FnOnce(&mut SessionConfig)) -> Session {
    let mut c = s.config().clone();
    f(&mut c);
    Session::new(c)
}

fn result_order(timed: &[(Instant, Event)]) -> Vec<&str> {
    timed
        .iter()
        .filter_map(|(_, e)| match e {
            Event::ToolResult { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect()
}

pub fn approvals_are_answered_by_the_owner(h: &mut impl Harness) {
    let mock = MockProvider::start([
        Reply::tool_calls(&[("w", "echo", r#"{"text":"asked"}"#)]),
        Reply::text_answer("ok"),
    ])
    .unwrap();
    let s = session(&mock);
    let mut s = with_config(&s, |c| {
        c.approval = ApprovalPolicy::Ask;
        c.tools = vec![effectful(echo_spec()), slow_spec()];
    });
    let ev = h.run(&mut s, "go");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }), "{ev:?}");
    assert!(
        events(&ev)
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { id, .. } if id == "w"))
    );
    assert!(events(&ev).iter().any(|e| matches!(e,
        Event::ToolResult { id, status: ToolStatus::Ok, output, .. } if id == "w" && output.content == "echo: asked")));
    // Usage is the session's, readable at any time.
    let _ = s.usage();
}

pub fn effects_run_in_the_models_order(h: &mut impl Harness) {
    // `first` sleeps; `second` would finish long before it if they overlapped.
    let mock = MockProvider::start([
        Reply::tool_calls(&[
            ("first", "slow", r#"{"ms":200}"#),
            ("second", "echo", r#"{"text":"after"}"#),
            ("third", "slow", r#"{"ms":0}"#),
        ]),
        Reply::text_answer("ok"),
    ])
    .unwrap();
    let s = session(&mock);
    let mut s = with_config(&s, |c| {
        c.tools = vec![effectful(echo_spec()), slow_spec()];
    });
    let ev = h.run(&mut s, "go");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }), "{ev:?}");
    assert_eq!(result_order(&ev), ["first", "second", "third"]);
}

/// A session that asks for checkpoints of a runner with no store is told each failed, and the
/// calls and the turn go on.
pub fn checkpoints_without_a_store_fail_and_the_turn_goes_on(h: &mut impl Harness) {
    let mock = MockProvider::start([
        Reply::tool_calls(&[
            ("w1", "echo", r#"{"text":"one"}"#),
            ("w2", "echo", r#"{"text":"two"}"#),
        ]),
        Reply::text_answer("ok"),
    ])
    .unwrap();
    let s = session(&mock);
    let mut s = with_config(&s, |c| {
        c.tools = vec![effectful(echo_spec()), slow_spec()];
        c.checkpoints = hrns_core::checkpoint::Checkpoints::On;
    });
    let ev = h.run(&mut s, "go");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }), "{ev:?}");
    assert_eq!(result_order(&ev), ["w1", "w2"]);
    let failed: Vec<_> = events(&ev)
        .into_iter()
        .filter_map(|e| match e {
            Event::CheckpointFailed { moment, reason, .. } => Some((*moment, reason.as_str())),
            _ => None,
        })
        .collect();
    use hrns_core::checkpoint::Moment;
    assert_eq!(
        failed.iter().map(|(m, _)| *m).collect::<Vec<_>>(),
        [Moment::BeforeTurn, Moment::AfterCall, Moment::AfterCall]
    );
    assert!(failed[0].1.contains("no checkpoint store"), "{failed:?}");
}

/// The checkpoints a call waits for are waits the driver carries out like hooks: a call
/// that may change files starts only once the snapshot before it came back (here: failed, as
/// the runner has no store), and the next call and the next request wait for the snapshot
/// after it and for its `PostToolUse` hooks, which run at the same time.
pub fn a_call_waits_for_its_checkpoints_and_its_hooks(h: &mut impl Harness) {
    use hrns_core::checkpoint::Moment;
    let mock = MockProvider::start([
        Reply::tool_calls(&[
            ("w1", "echo", r#"{"text":"one"}"#),
            ("w2", "echo", r#"{"text":"two"}"#),
        ]),
        Reply::text_answer("ok"),
    ])
    .unwrap();
    let hooks = json!({
        "PostToolUse": [{"matcher": "echo", "hooks": [{"type": "command",
            "command": r#"printf '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"seen"}}'"#}]}],
    });
    let (parsed, errors) = hrns_core::hooks::Hooks::parse(
        &hooks,
        &hrns_core::hooks::HookSource::User("config.json".into()),
    );
    assert!(errors.is_empty(), "{errors:?}");
    let s = session(&mock);
    let mut s = with_config(&s, |c| {
        c.tools = vec![effectful(echo_spec()), slow_spec()];
        c.checkpoints = hrns_core::checkpoint::Checkpoints::On;
        c.hooks.hooks = std::sync::Arc::new(parsed);
    });
    let ev = h.run(&mut s, "go");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }), "{ev:?}");
    // Where each step of the calls happened, in the order the events came.
    #[derive(Debug, PartialEq)]
    enum Step<'a> {
        Checkpoint(Moment),
        Hook(&'a str),
        Result(&'a str),
    }
    let steps: Vec<Step> = events(&ev)
        .into_iter()
        .filter_map(|e| match e {
            Event::CheckpointFailed { moment, .. } => Some(Step::Checkpoint(*moment)),
            Event::Hook {
                call_id: Some(id), ..
            } => Some(Step::Hook(id)),
            Event::ToolResult { id, .. } => Some(Step::Result(id)),
            _ => None,
        })
        .collect();
    let at = |step: Step| {
        steps
            .iter()
            .position(|s| *s == step)
            .unwrap_or_else(|| panic!("{step:?} missing from {steps:?}"))
    };
    assert_eq!(at(Step::Checkpoint(Moment::BeforeTurn)), 0, "{steps:?}");
    let afters: Vec<usize> = (0..steps.len())
        .filter(|i| steps[*i] == Step::Checkpoint(Moment::AfterCall))
        .collect();
    assert_eq!(afters.len(), 2, "{steps:?}");
    // w1's snapshot and hooks both come back before w2 runs (its hooks are after it ran).
    assert!(afters[0] < at(Step::Hook("w2")), "{steps:?}");
    assert!(at(Step::Result("w1")) < at(Step::Hook("w2")), "{steps:?}");
    assert_eq!(steps.len(), 7, "{steps:?}");
    let bodies = mock.chat_requests();
    assert_eq!(bodies.len(), 2);
    let second = String::from_utf8_lossy(&bodies[1].body);
    assert_eq!(second.matches("seen").count(), 2, "{second}");
}

pub fn a_tool_past_the_sessions_deadline_is_stopped(h: &mut impl Harness) {
    let mock = MockProvider::start([
        Reply::tool_calls(&[("z", "slow", r#"{"ms":5000}"#)]),
        Reply::text_answer("went on"),
    ])
    .unwrap();
    let s = session(&mock);
    let mut s = with_config(&s, |c| c.tool_timeout = Some(Duration::from_millis(200)));
    let start = Instant::now();
    let ev = h.run(&mut s, "go");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }), "{ev:?}");
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "the deadline did not fire"
    );
    assert_eq!(text(&ev), "went on");
    let sent = &mock.requests()[1].json()["messages"][2]["content"];
    assert!(
        sent.as_str()
            .unwrap()
            .contains("did not finish within 0.2 s"),
        "{sent}"
    );
}

pub fn an_html_page_with_status_200_fails_at_once(h: &mut impl Harness) {
    let page = "<!DOCTYPE html><html><head><title>Sign in to the network</title></head><body>login</body></html>";
    let mock = MockProvider::start([
        Reply::raw(200, &[("content-type", "text/html; charset=utf-8")], page),
        Reply::text_answer("never asked"),
    ])
    .unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "go");
    match last(&ev) {
        Event::TurnFailed { error } => {
            let shown = error.to_string();
            assert!(shown.contains("text/html"), "{shown}");
            assert!(shown.contains("Sign in to the network"), "{shown}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(mock.request_count(), 1, "not retried");
    assert_no_key(&ev);
}

pub fn an_endless_answer_fails_at_the_cap(h: &mut impl Harness) {
    use hrns_blocking::mock::chunk;
    let endless = Reply::endless_sse(
        [
            chunk::role_chunk(),
            chunk::tool_call_chunk(0, Some("c1"), Some("echo"), r#"{"text":""#),
        ],
        chunk::tool_call_chunk(0, None, None, &"x".repeat(1000)),
    );
    let mock = MockProvider::start([endless, Reply::text_answer("never asked")]).unwrap();
    let mut s = with_config(&session(&mock), |c| c.max_answer_bytes = 64 * 1024);
    let ev = h.run(&mut s, "go");
    match last(&ev) {
        Event::TurnFailed {
            error:
                TurnError::Stream {
                    error: StreamError::AnswerTooLarge { limit },
                },
        } => assert_eq!(*limit, 64 * 1024),
        other => panic!("{other:?}"),
    }
    assert_eq!(mock.request_count(), 1, "not retried");
    assert_eq!(s.messages().len(), 1, "the partial answer stays out");
    assert!(
        !ev.iter()
            .any(|(_, e)| matches!(e, Event::ToolResult { .. }))
    );
    assert_no_key(&ev);
}

pub fn a_retry_after_past_the_budget_fails_at_once(h: &mut impl Harness) {
    let mock =
        MockProvider::start([Reply::rate_limited("3600"), Reply::text_answer("never")]).unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "go");
    match last(&ev) {
        Event::TurnFailed {
            error:
                error @ TurnError::RetryAfterTooLong {
                    wait_secs: 3600,
                    budget_secs: 5,
                    ..
                },
        } => {
            let shown = error.to_string();
            assert!(shown.contains("asked to wait 3600 s"), "{shown}");
            assert!(shown.contains("retry budget of 5 s"), "{shown}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(mock.request_count(), 1, "not retried");
    assert!(!events(&ev).iter().any(|e| matches!(e, Event::Retry { .. })));
}

pub fn an_http_date_retry_after_is_honoured(h: &mut impl Harness) {
    // Three seconds ahead, to the second: a wait of two to three seconds, where the suite's
    // own backoff would be at most 50 ms.
    let date = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(3));
    let mock =
        MockProvider::start([Reply::rate_limited(&date), Reply::text_answer("fine")]).unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "go");
    assert!(
        matches!(last(&ev), Event::TurnFinished { .. }),
        "{:?}",
        last(&ev)
    );
    let delay = events(&ev)
        .iter()
        .find_map(|e| match e {
            Event::Retry { delay_ms, .. } => Some(*delay_ms),
            _ => None,
        })
        .expect("a retry");
    assert!((1000..=3000).contains(&delay), "{date}: waited {delay} ms");
    assert_eq!(mock.request_count(), 2);
}

/// A tool set that changes during a turn (an MCP server stopped): the runner's update runs
/// before the last tool output is fed, so the next request already offers the new set, and
/// one `tools_changed` event says so.
pub fn tools_changed_mid_turn_reach_the_next_request(h: &mut impl Harness) {
    let mock = MockProvider::start([
        Reply::tool_calls(&[("call_1", "echo", &json!({"text": DROP_SLOW}).to_string())]),
        Reply::tool_calls(&[("call_2", "slow", r#"{"ms":1}"#)]),
        Reply::text_answer("ok"),
    ])
    .unwrap();
    let mut s = session(&mock);
    let ev = h.run(&mut s, "go");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }), "{ev:?}");
    let offered = |n: usize| -> Vec<String> {
        mock.requests()[n].json()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(offered(0), ["echo", "slow"]);
    assert_eq!(offered(1), ["echo"]);
    let changed: Vec<&Event> = events(&ev)
        .into_iter()
        .filter(|e| matches!(e, Event::ToolsChanged { .. }))
        .collect();
    assert_eq!(
        changed,
        [&Event::ToolsChanged {
            reason: SLOW_LEFT.into(),
            added: vec![],
            removed: vec!["slow".into()],
            updated: vec![],
        }]
    );
    // The gone tool is not run: the model is told it is unknown.
    assert!(events(&ev).iter().any(|e| matches!(e,
        Event::ToolResult { id, status: ToolStatus::UnknownTool, .. } if id == "call_2")));
}

/// A provider that sends only keep-alives after the head: each attempt fails after
/// `stream_idle_timeout` as a transport timeout, retried like one, and the turn fails when
/// the attempts are spent.
pub fn keep_alives_alone_fail_as_a_transport_timeout_after_retries(h: &mut impl Harness) {
    let keep_alives = || Reply::keep_alives_forever().delay(Duration::from_millis(20));
    let mock = MockProvider::start([keep_alives(), keep_alives(), keep_alives()]).unwrap();
    let mut s = with_config(&session(&mock), |c| {
        c.stream_idle_timeout = Some(Duration::from_millis(300));
    });
    let ev = h.run(&mut s, "x");
    assert!(
        matches!(
            last(&ev),
            Event::TurnFailed {
                error: TurnError::Transport {
                    kind: hrns_core::session::TransportErrorKind::Timeout,
                    message,
                }
            } if message.contains("streamIdleTimeout")
        ),
        "{ev:?}"
    );
    let retries = events(&ev)
        .iter()
        .filter(|e| matches!(e, Event::Retry { .. }))
        .count();
    assert_eq!(retries, 2, "{ev:?}");
    assert_eq!(mock.chat_requests().len(), 3, "every attempt was made");
    assert_no_key(&ev);
}

/// A stream slower in total than `stream_idle_timeout` but sending data well within it
/// finishes: data moves the deadline.
pub fn data_keeps_a_slow_stream_alive(h: &mut impl Harness) {
    let words: Vec<String> = (0..12).map(|i| format!("w{i} ")).collect();
    let mut chunks = vec![hrns_blocking::mock::chunk::role_chunk()];
    chunks.extend(
        words
            .iter()
            .map(|w| hrns_blocking::mock::chunk::text_chunk(w)),
    );
    chunks.push(hrns_blocking::mock::chunk::finish_chunk("stop"));
    // One event per piece, 100 ms apart: 1.4 s in all, against an idle limit of 1 s.
    // `data: ` + chunk + `\n\n`; the last piece is the finish chunk and `[DONE]`.
    let mut offsets = Vec::new();
    let mut at = 0;
    for c in &chunks[..chunks.len() - 1] {
        at += c.len() + 8;
        offsets.push(at);
    }
    let reply = Reply::sse(chunks)
        .split_at(&offsets)
        .delay(Duration::from_millis(100));
    let mock = MockProvider::start([reply]).unwrap();
    let mut s = with_config(&session(&mock), |c| {
        c.stream_idle_timeout = Some(Duration::from_secs(1));
    });
    let ev = h.run(&mut s, "x");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }), "{ev:?}");
    assert_eq!(text(&ev), words.concat());
    assert_eq!(mock.chat_requests().len(), 1, "not retried");
}

/// Hooks run by the driver and decided by the session: a `PreToolUse` hook blocks one call
/// with exit code 2 (the other runs), a `PostToolUse` hook's context (naming
/// `HRNS_PROJECT_DIR`) reaches the next request, and a `Stop` hook keeps the turn going once.
pub fn hooks_block_add_context_and_keep_the_turn_going(h: &mut impl Harness) {
    let mock = MockProvider::start([
        Reply::tool_calls(&[
            ("call_1", "echo", r#"{"text":"rm"}"#),
            ("call_2", "echo", r#"{"text":"hi"}"#),
        ]),
        Reply::text_answer("done"),
        Reply::text_answer("really done"),
    ])
    .unwrap();
    let hooks = json!({
        "PreToolUse": [{"matcher": "echo", "hooks": [{"type": "command",
            "command": r#"grep -q '"text":"rm"' && { echo 'no rm here' >&2; exit 2; }; exit 0"#}]}],
        "PostToolUse": [{"matcher": "echo", "hooks": [{"type": "command",
            "command": r#"printf '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"ctx from %s"}}' "$HRNS_PROJECT_DIR""#}]}],
        "Stop": [{"hooks": [{"type": "command",
            "command": r#"grep -q '"stop_hook_active":false' && { echo 'not yet' >&2; exit 2; }; exit 0"#}]}]
    });
    let (parsed, errors) = hrns_core::hooks::Hooks::parse(
        &hooks,
        &hrns_core::hooks::HookSource::User("config.json".into()),
    );
    assert!(errors.is_empty(), "{errors:?}");
    let mut s = with_config(&session(&mock), |c| {
        c.hooks.hooks = std::sync::Arc::new(parsed);
    });
    let ev = h.run(&mut s, "go");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }), "{ev:?}");
    assert_no_key(&ev);
    let results: Vec<(&str, ToolStatus, &str)> = events(&ev)
        .into_iter()
        .filter_map(|e| match e {
            Event::ToolResult {
                id, status, output, ..
            } => Some((id.as_str(), *status, output.content.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    let blocked = results.iter().find(|r| r.0 == "call_1").unwrap();
    assert_eq!(blocked.1, ToolStatus::BlockedByHook);
    assert!(blocked.2.contains("no rm here"), "{blocked:?}");
    let ran = results.iter().find(|r| r.0 == "call_2").unwrap();
    assert_eq!(ran.1, ToolStatus::Ok);
    assert!(
        ran.2.starts_with("echo: hi") && ran.2.contains("ctx from /"),
        "{ran:?}"
    );
    let bodies: Vec<String> = mock
        .chat_requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    assert_eq!(bodies.len(), 3);
    assert!(bodies[1].contains("no rm here") && bodies[1].contains("ctx from /"));
    assert!(bodies[2].contains("not yet"));
    let hooks_run = events(&ev)
        .iter()
        .filter(|e| matches!(e, Event::Hook { .. }))
        .count();
    assert_eq!(hooks_run, 5, "2 PreToolUse, 1 PostToolUse, 2 Stop");
}

/// A tool that crashes is answered with the core's text, the same on both drivers, and the
/// turn goes on: the other call of the answer runs, and the model gets both results.
pub fn a_crashed_tool_is_told_to_the_model_and_the_turn_goes_on(h: &mut impl Harness) {
    let mock = MockProvider::start([
        Reply::tool_calls(&[
            ("boom", "crash", "{}"),
            ("e", "echo", r#"{"text":"still"}"#),
        ]),
        Reply::text_answer("ok"),
    ])
    .unwrap();
    let s = session(&mock);
    let mut s = with_config(&s, |c| c.tools.push(crash_spec()));
    let ev = h.run(&mut s, "go");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }), "{ev:?}");
    let crashed = events(&ev)
        .into_iter()
        .find_map(|e| match e {
            Event::ToolResult {
                id, status, output, ..
            } if id == "boom" => Some((*status, output)),
            _ => None,
        })
        .expect("the crashed call has a result");
    assert_eq!(crashed.0, ToolStatus::Error);
    assert!(
        crashed
            .1
            .content
            .starts_with("The tool `crash` crashed (it panicked)"),
        "{crashed:?}"
    );
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 2);
    let sent = String::from_utf8_lossy(&requests[1].body).into_owned();
    assert!(sent.contains("The tool `crash` crashed"), "{sent}");
    assert!(sent.contains("echo: still"), "{sent}");
}

/// A question asked before the runner's turn loop started is asked again by it: the turn is
/// neither cancelled nor left hanging, and the call runs once approved.
pub fn a_question_asked_before_the_turn_loop_is_asked_again(h: &mut impl Harness) {
    let mock = MockProvider::start([
        Reply::tool_calls(&[("w", "echo", r#"{"text":"asked"}"#)]),
        Reply::text_answer("ok"),
    ])
    .unwrap();
    let s = session(&mock);
    let mut s = with_config(&s, |c| {
        c.approval = ApprovalPolicy::Ask;
        c.tools = vec![effectful(echo_spec()), slow_spec()];
    });
    let ev = h.drive_after_question(&mut s, "go");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }), "{ev:?}");
    let asked = events(&ev)
        .iter()
        .filter(|e| matches!(e, Event::ApprovalRequested { id, .. } if id == "w"))
        .count();
    assert_eq!(asked, 1, "the question went out once: {ev:?}");
    assert!(events(&ev).iter().any(|e| matches!(e,
        Event::ToolResult { id, status: ToolStatus::Ok, output, .. } if id == "w" && output.content == "echo: asked")));
    assert_eq!(mock.chat_requests().len(), 2);
}

/// The `task` spec both harnesses offer when a session lists it: its children run the
/// harness's `echo` under the parent's configuration, with the built-in agents.
pub fn task_spec() -> ToolSpec {
    hrns_core::task::task_spec(&hrns_core::agent::builtin_agents())
}

/// The `echo` a harness's children get: the session's (with effects when the case made it
/// so), else the suite's read-only one.
pub fn child_echo(session: &Session) -> ToolSpec {
    session
        .config()
        .tools
        .iter()
        .find(|t| t.name == "echo")
        .cloned()
        .unwrap_or_else(echo_spec)
}

/// What a harness's `task` tool's children are made of, for `session`.
pub fn children_of(session: &Session) -> hrns_core::task::Children {
    let mut parent = session.config().clone();
    parent.tools = vec![child_echo(session)];
    hrns_core::task::Children::new(parent, hrns_core::agent::builtin_agents())
}

/// A subagent's events come out of the parent session's own poll as `Event::Child`, tagged
/// with the `task` call and the child's agent, in order and all before the call's result; its
/// tokens count in the parent's usage (the session's and the turn's).
pub fn a_childs_events_and_tokens_come_out_of_the_parents_poll(h: &mut impl Harness) {
    let args = json!({"description": "d", "prompt": "Echo hi."}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("t1", "task", &args)]),
        Reply::tool_calls(&[("c1", "echo", r#"{"text":"hi"}"#)]),
        Reply::text_answer("child done"),
        Reply::text_answer("parent done"),
    ])
    .unwrap();
    let mut s = with_config(&session(&mock), |c| c.tools.push(task_spec()));
    let ev = h.run(&mut s, "Delegate.");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }), "{ev:?}");
    let all = events(&ev);
    let result_at = all
        .iter()
        .position(|e| matches!(e, Event::ToolResult { id, .. } if id == "t1"))
        .expect("the task call has its result");
    let Event::ToolResult { output, .. } = all[result_at] else {
        unreachable!()
    };
    assert_eq!(output.content, "child done");
    let children: Vec<(usize, &hrns_core::task::ChildEvent)> = all
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e {
            Event::Child(child) => Some((i, &**child)),
            _ => None,
        })
        .collect();
    assert!(
        children
            .iter()
            .all(|(i, c)| *i < result_at && c.parent_call_id == "t1" && c.agent == "Explorer"),
        "{ev:?}"
    );
    let kinds: Vec<&str> = children
        .iter()
        .filter(|(_, c)| !c.event.is_delta())
        .filter_map(|(_, c)| match &c.event {
            Event::TurnStarted { .. } => Some("started"),
            Event::ToolCall { id, .. } if id == "c1" => Some("call"),
            Event::ToolResult { id, output, .. } if id == "c1" && output.content == "echo: hi" => {
                Some("result")
            }
            Event::TurnFinished { .. } => Some("finished"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["started", "call", "result", "finished"], "{ev:?}");
    // Every request's prompt tokens, the child's included, are the parent's.
    let reported = |e: &Event| match e {
        Event::Usage { usage } => usage.prompt_tokens.unwrap_or(0),
        _ => 0,
    };
    let parents: u64 = all.iter().map(|e| reported(e)).sum();
    let childs: u64 = children.iter().map(|(_, c)| reported(&c.event)).sum();
    assert!(childs > 0, "the child reported its tokens: {ev:?}");
    assert_eq!(s.usage().prompt, parents + childs);
    let Event::TurnFinished { usage, .. } = last(&ev) else {
        unreachable!()
    };
    assert_eq!(
        usage.as_ref().and_then(|u| u.prompt_tokens),
        Some(parents + childs)
    );
    assert_eq!(mock.chat_requests().len(), 4);
}

/// A subagent's approval question comes out of the parent session's own poll, tagged with the
/// `task` call and the agent; the owner answers it on the path of the parent's own questions,
/// and the answer reaches the waiting child (here a denial with a reason, which the child's
/// model reads). The child goes on, ends, and the parent's turn with it.
pub fn a_childs_question_is_asked_and_answered_through_the_parent(h: &mut impl Harness) {
    let args = json!({"description": "d", "prompt": "Echo hi.", "agent": "Builder"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("t1", "task", &args)]),
        Reply::tool_calls(&[("c1", "echo", r#"{"text":"hi"}"#)]),
        Reply::text_answer("child done"),
        Reply::text_answer("parent done"),
    ])
    .unwrap();
    let mut s = with_config(&session(&mock), |c| {
        c.approval = ApprovalPolicy::Ask;
        c.tools = vec![effectful(echo_spec()), task_spec()];
    });
    let ev = h.run(&mut s, "Delegate.");
    assert!(matches!(last(&ev), Event::TurnFinished { .. }), "{ev:?}");
    let all = events(&ev);
    let child_at = |f: &dyn Fn(&Event) -> bool| {
        all.iter()
            .position(|e| matches!(e, Event::Child(c) if c.parent_call_id == "t1" && f(&c.event)))
    };
    let asked = child_at(&|e| matches!(e, Event::ApprovalRequested { id, .. } if id == "c1"))
        .unwrap_or_else(|| panic!("the child's question came out of the parent's poll: {ev:?}"));
    let Event::Child(question) = all[asked] else {
        unreachable!()
    };
    assert_eq!(question.agent, "Builder");
    let denied = child_at(&|e| {
        matches!(e, Event::ToolResult { id, status: ToolStatus::Denied, output, .. }
            if id == "c1" && output.content.contains(CHILD_DENIED))
    })
    .unwrap_or_else(|| panic!("the owner's answer reached the child: {ev:?}"));
    assert!(asked < denied, "{ev:?}");
    // The parent asked nothing of its own.
    assert!(
        !all.iter()
            .any(|e| matches!(e, Event::ApprovalRequested { .. }))
    );
    let result = all
        .iter()
        .position(|e| matches!(e, Event::ToolResult { id, output, .. } if id == "t1" && output.content == "child done"))
        .expect("the task call has the child's answer");
    assert!(denied < result, "{ev:?}");
    assert!(s.child_questions().is_empty());
    // The child's model was told why.
    let child_second = &mock.chat_requests()[2];
    assert!(
        child_second.body_str().contains(CHILD_DENIED),
        "{}",
        child_second.body_str()
    );
}

/// Defines one `#[test]` per case of the suite, each running the case with a fresh harness
/// from `$harness` (an expression). Use it as `behaviour_tests!(MyHarness);` in a test file
/// that declares `#[macro_use] mod suite;`, so that no driver can skip a case.
macro_rules! behaviour_tests {
    ($harness:expr) => {
        behaviour_tests!(@each $harness;
            full_tool_turn,
            parallel_tool_calls,
            rate_limit_then_success,
            server_error_with_body,
            client_error_is_not_retried,
            connection_dropped_mid_stream,
            dropped_before_output_is_retried,
            malformed_chunk,
            no_done_marker,
            events_arrive_while_streaming,
            dropped_after_the_finish_reason_is_a_whole_answer,
            a_fast_streams_tokens_arrive_as_few_deltas,
            unknown_tool_and_bad_arguments,
            refused_connection_fails_after_retries,
            approvals_are_answered_by_the_owner,
            effects_run_in_the_models_order,
            a_tool_past_the_sessions_deadline_is_stopped,
            an_html_page_with_status_200_fails_at_once,
            an_endless_answer_fails_at_the_cap,
            a_retry_after_past_the_budget_fails_at_once,
            an_http_date_retry_after_is_honoured,
            tools_changed_mid_turn_reach_the_next_request,
            checkpoints_without_a_store_fail_and_the_turn_goes_on,
            a_call_waits_for_its_checkpoints_and_its_hooks,
            keep_alives_alone_fail_as_a_transport_timeout_after_retries,
            data_keeps_a_slow_stream_alive,
            hooks_block_add_context_and_keep_the_turn_going,
            a_crashed_tool_is_told_to_the_model_and_the_turn_goes_on,
            a_question_asked_before_the_turn_loop_is_asked_again,
            a_childs_events_and_tokens_come_out_of_the_parents_poll,
            a_childs_question_is_asked_and_answered_through_the_parent,
        );
    };
    (@each $harness:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                $crate::suite::$case(&mut $harness);
            }
        )*
    };
}
