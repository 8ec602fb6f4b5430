//! The session's own cost per request on a long history (issue 36, item 5), without IO:
//!
//! - `round_trip/N`: one tool round trip of a session resumed with N bytes of history: the
//!   answer (a tool call, as SSE) fed in, the tool's output handed back (redacted with the
//!   session's secrets), and the next request built and serialised. Each round trip adds
//!   about 300 bytes to the history; a fresh session is resumed every 50 round trips (a
//!   turn stops at 100 steps), outside the timing.
//! - `resume/N`: `Session::with_history` on N bytes of history and its first request, the
//!   whole history serialised once (what `hrns exec --continue` does before it sends).
//!
//! Sizes 10 KB, 100 KB, 1 MB and 10 MB: the growth between them shows whether a path is
//! linear in the history (and the round trip should barely grow). Run with
//! `cargo bench -p hrns-core --bench session_requests`.

// A bench reads the clock to time itself, and hands the session its `now` as a driver does.
#![allow(clippy::disallowed_methods)]

use criterion::{BatchSize, Criterion, black_box, criterion_group, criterion_main};
use hrns_core::http::{HttpRequest, RequestId};
use hrns_core::session::{Action, ApprovalPolicy, Provider, Session, SessionConfig};
use hrns_core::tool::{Effect, ToolOutput, ToolSpec};
use hrns_core::wire::Message;
use std::time::{Duration, Instant};

/// Round trips timed on one resumed session before the next starts afresh (under the
/// session's step limit, and about 15 KB of growth at most).
const ROUND_TRIPS_PER_SESSION: u64 = 50;

/// History sizes in bytes.
const SIZES: [usize; 4] = [10_000, 100_000, 1_000_000, 10_000_000];

/// A saved conversation of about `bytes` bytes: user and assistant messages of 4 KB with
/// the quotes, backslashes and newlines that JSON must escape.
fn history(bytes: usize) -> Vec<Message> {
    let piece = "Some \"quoted\" text, a path C:\\dir\\file and a line end.\n";
    let text = piece.repeat(4096 / piece.len());
    (0..bytes.div_ceil(text.len()).max(2).next_multiple_of(2))
        .map(|i| {
            if i % 2 == 0 {
                Message::user(text.clone())
            } else {
                Message::assistant(text.clone())
            }
        })
        .collect()
}

fn config() -> SessionConfig {
    let mut c = SessionConfig::new(Provider::new("http://127.0.0.1:1/v1", None), "m");
    c.approval = ApprovalPolicy::Auto;
    c.tools = vec![ToolSpec {
        name: "instant".into(),
        description: "Answers at once.".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        effect: Effect::ReadOnly,
    }];
    // A key of a real key's length: tool outputs are redacted with it.
    c.secrets.add("sk-bench-4f9a8c2e7b1d6053a9e8f7c6b5d4e3f2a1");
    c
}

/// An answer calling `instant` with arguments that differ each time (so the repeated-call
/// guard stays quiet).
fn tool_call_answer(n: u64) -> Vec<u8> {
    format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"call_{n}\",\"type\":\"function\",\"function\":{{\"name\":\"instant\",\"arguments\":\"{{\\\"n\\\":{n}}}\"}}}}]}}}}]}}\n\n\
         data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\n\
         data: [DONE]\n\n"
    )
    .into_bytes()
}

/// The session's pending actions: the request it sends, or the call it runs.
fn take(session: &mut Session) -> (Option<HttpRequest>, Option<String>) {
    let (mut events, mut actions) = (Vec::new(), Vec::new());
    session.poll_into(&mut events, &mut actions);
    black_box(&events);
    let (mut req, mut call) = (None, None);
    for action in actions {
        match action {
            Action::SendRequest(r) => req = Some(r),
            Action::RunTool(run) => call = Some(run.call_id),
            other => panic!("unexpected {other:?}"),
        }
    }
    (req, call)
}

/// A session resumed with `history`, its first request sent; returns the request's id.
fn resumed(history: Vec<Message>) -> (Session, RequestId) {
    let mut session = Session::with_history(config(), history).unwrap();
    session.submit("go on").unwrap();
    let (req, _) = take(&mut session);
    let req = req.expect("the first request");
    (session, req.id)
}

/// Answers request `id` with a tool call, runs it, and returns the next request's id.
fn round_trip(session: &mut Session, id: RequestId, n: u64) -> RequestId {
    let now = Instant::now();
    let headers = [("content-type", &b"text/event-stream"[..])];
    session.handle_response_head(now, id, 200, headers).unwrap();
    session
        .handle_response_data(now, id, &tool_call_answer(n))
        .unwrap();
    session.handle_response_end(now, id).unwrap();
    let (_, call) = take(session);
    let call = call.expect("the call runs");
    session
        .handle_tool_output(now, &call, ToolOutput::ok(format!("result {n}")))
        .unwrap();
    let (req, _) = take(session);
    let req = req.expect("the next request");
    black_box(req.body.len());
    req.id
}

fn benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("round_trip");
    group.measurement_time(Duration::from_secs(3));
    for size in SIZES {
        let history = history(size);
        group.bench_function(format!("{size}"), |b| {
            b.iter_custom(|iters| {
                // A fresh session every few round trips: a turn stops at the step limit
                // (100 by default), and the history must stay at its size rather than grow
                // by a sample's thousands of round trips. Only the round trips are timed.
                let mut elapsed = Duration::ZERO;
                let mut n = 0;
                while n < iters {
                    let (mut session, mut id) = resumed(history.clone());
                    let start = Instant::now();
                    for _ in 0..(iters - n).min(ROUND_TRIPS_PER_SESSION) {
                        id = round_trip(&mut session, id, n);
                        n += 1;
                    }
                    elapsed += start.elapsed();
                }
                elapsed
            })
        });
    }
    group.finish();
    let mut group = c.benchmark_group("resume");
    group.sample_size(10);
    for size in SIZES {
        let history = history(size);
        group.bench_function(format!("{size}"), |b| {
            b.iter_batched(|| history.clone(), resumed, BatchSize::LargeInput)
        });
    }
    group.finish();
}

criterion_group!(session_requests, benches);
criterion_main!(session_requests);
