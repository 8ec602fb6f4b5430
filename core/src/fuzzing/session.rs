//! The `session` fuzz body: random sequences of inputs to a [`Session`].
//!
//! Byte 0 sets the approval policy and step limit; every further byte is one input: its value
//! modulo 10 picks the kind (submit, response head, data, end, transport error, tool output,
//! approval, time passing, cancel or a new tool set) and the rest picks the details. After every input the actions
//! are drained and these must hold: no panic; the history is a valid request; every turn that
//! started has ended exactly once unless one is running; every request body is a valid chat
//! request; the API key appears in no request `Debug` and no event; the user's message survives
//! every compaction (half the inputs run with a tiny context window, and `compact` is an input).

use crate::history;
use crate::http::{HttpRequest, Secret};
use crate::session::{
    Action, Approval, ApprovalPolicy, Event, Provider, Session, SessionConfig, ToolRun,
    TransportError, TransportErrorKind,
};
use crate::tool::ToolOutput;
use crate::tool::builtin::builtin_specs;
use crate::wire::ChatRequest;
use std::time::{Duration, Instant};

const KEY: &str = "sk-fuzz-KEY-5150";

/// Response bodies, whole and in pieces, that the data inputs pick from.
const PIECES: &[&str] = &[
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi \"}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{}\"}}]}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"run_command\",\"arguments\":\"{\\\"command\\\":\\\"x\\\"}\"}}]}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":2,\"id\":\"a\",\"function\":{\"name\":\"nope\",\"arguments\":\"[\"}}]}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"name\":\"write_file\",\"arguments\":\"{\\\"path\\\":\\\"p\\\",\\\"content\\\":\\\"\\\"}\"}}]}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n",
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}\n\n",
    "data: [DONE]\n\n",
    "data: {\"error\":{\"message\":\"x\",\"code\":503}}\n\n",
    "data: {\"error\":{\"message\":\"sk-fuzz-KEY-5150 leaked?\"}}\n\n",
    "event: error\ndata: overloaded\n\n",
    "data: garbage\n\n",
    "data: {\"cho",
    "\n\n",
    ": keep-alive\n\n",
    "{\"error\":{\"message\":\"bad key sk-fuzz-KEY-5150\",\"type\":\"auth\"}}",
    "{\"error\":{\"message\":\"This model's maximum context length is 300 tokens\",\"code\":\"context_length_exceeded\"}}",
    "data: {\"error\":{\"message\":\"prompt is too long: 900 tokens > 300 maximum\"}}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Goal: x. Next: y.\"},\"finish_reason\":\"stop\"}]}\n\n",
];

const STATUSES: &[u16] = &[200, 200, 200, 200, 429, 500, 503, 400, 401, 422, 413];
const CONTENT_TYPES: &[&str] = &["text/event-stream", "application/json", ""];

/// Runs one input sequence; see the module docs for the layout and the invariants.
pub fn session(data: &[u8]) {
    let Some((&setup, ops)) = data.split_first() else {
        return;
    };
    let mut config = SessionConfig::new(
        Provider::new("http://127.0.0.1:9/v1", Some(Secret::new(KEY))),
        "m",
    );
    config.tools = builtin_specs();
    config.approval = [
        ApprovalPolicy::Auto,
        ApprovalPolicy::Ask,
        ApprovalPolicy::ReadOnly,
    ][usize::from(setup % 3)];
    config.max_steps = 1 + u32::from(setup / 3 % 5);
    config.max_repeated_calls = 2;
    // A small window on half the inputs (a little over what the tools' specs take), so
    // pruning, compaction and overflow recovery run.
    config.context.window = (setup / 15 % 2 == 1).then_some(3600);
    // Checkpoints on half the inputs, so calls wait for snapshots, in and out of order.
    if setup / 30 % 2 == 1 {
        config.checkpoints = crate::checkpoint::Checkpoints::On;
    }
    let mut session = Session::new(config);
    #[allow(clippy::disallowed_methods)]
    // a base instant for simulated time; nothing reads the clock after
    let start = Instant::now();
    let mut elapsed = Duration::ZERO;
    let mut sent: Vec<HttpRequest> = Vec::new();
    let mut runs: Vec<ToolRun> = Vec::new();
    let mut asks: Vec<ToolRun> = Vec::new();
    let mut checkpoints: Vec<crate::checkpoint::CheckpointDue> = Vec::new();
    let (mut started, mut ended) = (0usize, 0usize);
    for &byte in ops {
        let now = start + elapsed;
        let req = sent
            .last()
            .map(|r| r.id)
            .unwrap_or(crate::http::RequestId(0));
        let arg = usize::from(byte / 10);
        // Misuse errors are expected here; only panics and broken invariants are failures.
        let _ = match byte % 10 {
            0 if arg % 4 == 3 => session.compact(None),
            0 => session.submit("go"),
            1 => {
                let status = STATUSES[arg % STATUSES.len()];
                let ct = CONTENT_TYPES[arg % CONTENT_TYPES.len()].as_bytes();
                let retry_after: &[u8] = if arg % 4 == 0 { b"1" } else { b"" };
                session.handle_response_head(
                    now,
                    req,
                    status,
                    [("content-type", ct), ("retry-after", retry_after)],
                )
            }
            2 | 3 => session.handle_response_data(now, req, PIECES[arg % PIECES.len()].as_bytes()),
            4 => session.handle_response_end(now, req),
            5 => {
                let kind = [
                    TransportErrorKind::Io,
                    TransportErrorKind::Tls,
                    TransportErrorKind::Timeout,
                ][arg % 3];
                session.handle_transport_error(
                    now,
                    req,
                    TransportError::new(kind, format!("broke ({KEY})")),
                )
            }
            6 => {
                let id = runs
                    .get(arg % runs.len().max(1))
                    .map(|r| r.call_id.clone())
                    .unwrap_or_default();
                let out = if arg % 2 == 0 {
                    // Up to 4 KB, so a few fill the small window.
                    ToolOutput::ok("out ".repeat(1 + arg * 40))
                } else {
                    ToolOutput::error("failed")
                };
                session.handle_tool_output(now, &id, out)
            }
            7 => {
                let id = asks
                    .get(arg % asks.len().max(1))
                    .map(|r| r.call_id.clone())
                    .unwrap_or_default();
                let approval = match arg % 4 {
                    0 => Approval::Once,
                    1 => Approval::AlwaysThisTool,
                    2 => Approval::NeverThisTool,
                    _ => Approval::Deny {
                        reason: Some("no".into()),
                    },
                };
                session.handle_approval(now, &id, approval)
            }
            8 => {
                elapsed += Duration::from_millis(250 * arg as u64);
                session.handle_timeout(start + elapsed);
                Ok(())
            }
            // The tools change mid-session (an MCP server stopped or came back): every tool,
            // or all but the one in `arg`'s place.
            9 if arg % 2 == 1 => {
                let mut tools = builtin_specs();
                if arg % 4 == 1 {
                    tools.remove(arg / 4 % tools.len());
                }
                let why = format!("a server left ({KEY})");
                // Now and then news even when nothing changed (a server whose tools were
                // filtered out stopped).
                if arg % 8 == 3 {
                    session.handle_tools_changed(tools, crate::session::ToolsReason::news(why));
                } else {
                    session.handle_tools_changed(tools, why);
                }
                Ok(())
            }
            // A snapshot comes back, taken or failed (any of those asked for, so late and
            // repeated ones too).
            9 if arg % 4 == 2 => {
                let id = checkpoints
                    .get(arg / 4 % checkpoints.len().max(1))
                    .map_or(0, |c| c.id);
                let outcome = if arg % 8 == 2 {
                    crate::checkpoint::CheckpointOutcome::Taken {
                        id: "c0ffee".into(),
                        changed: vec!["a.rs".into()],
                        skipped: Vec::new(),
                    }
                } else {
                    crate::checkpoint::CheckpointOutcome::Failed {
                        reason: format!("git failed ({KEY})"),
                    }
                };
                session.handle_checkpoint(now, id, outcome);
                Ok(())
            }
            _ => {
                session.cancel();
                Ok(())
            }
        };
        while let Some(action) = session.poll() {
            match action {
                Action::SendRequest(r) => {
                    assert!(!format!("{r:?}").contains(KEY), "key in a request's Debug");
                    let body: ChatRequest =
                        serde_json::from_slice(&r.body).expect("request bodies are chat requests");
                    history::validate(&body.messages[1..])
                        .expect("every request has a valid history");
                    sent.push(r);
                }
                Action::RunTool(r) => runs.push(r),
                Action::AskApproval(r) => asks.push(r),
                Action::AbortTool { .. } => {}
                Action::AnswerChild { .. } => unreachable!("the fuzzed session has no subagents"),
                Action::TakeCheckpoint(c) => checkpoints.push(c),
                Action::RunHooks(_) => unreachable!("the fuzzed session has no hooks"),
                Action::Emit(e) => {
                    let shown = format!(
                        "{e:?}{}",
                        serde_json::to_string(&e).expect("events serialize")
                    );
                    assert!(!shown.contains(KEY), "key in an event: {shown}");
                    match e {
                        Event::TurnStarted { .. } => started += 1,
                        e if e.is_final() => ended += 1,
                        _ => {}
                    }
                }
            }
        }
        history::validate(session.messages()).expect("the history stays valid");
        assert_eq!(
            session.messages().iter().any(|m| m.text() == "go"),
            started > 0 && !session.messages().is_empty(),
            "the user's message survives every compaction"
        );
        assert_eq!(
            started - ended,
            usize::from(!session.is_idle()),
            "one final event per turn"
        );
    }
}
