//! The session driven with scripted byte streams and tool outputs: no sockets, no clock.

use super::*;
use crate::history;
use crate::http::Secret;
use crate::tool::builtin::builtin_specs;
use crate::wire::{ChatRequest, Role};
use serde_json::{Value, json};
use std::time::Duration;

mod checkpoints;
mod child_questions;
mod deltas;
mod idle;
mod images;
mod kept_approvals;
mod limits;
mod ordering;
mod output;
mod tool_set;
mod web_fetch;

pub(super) const KEY: &str = "sk-test-SECRET-0123456789";

pub(super) fn config(policy: ApprovalPolicy) -> SessionConfig {
    let mut c = SessionConfig::new(
        Provider::new("http://127.0.0.1:1/v1/", Some(Secret::new(KEY))),
        "m1",
    );
    c.system_prompt = Some("You are hrns.".into());
    c.tools = builtin_specs();
    c.approval = policy;
    c
}

pub(super) struct H {
    pub(super) s: Session,
    pub(super) now: Instant,
    pub(super) events: Vec<Event>,
    pub(super) sent: Vec<HttpRequest>,
    pub(super) runs: Vec<ToolRun>,
    pub(super) asks: Vec<ToolRun>,
    pub(super) aborts: Vec<String>,
    /// The answers to children's questions: (parent call, child call, answer).
    pub(super) child_answers: Vec<(String, String, super::Approval)>,
    pub(super) checkpoints: Vec<crate::checkpoint::CheckpointDue>,
    pub(super) hooks: Vec<crate::hooks::HookDue>,
}

impl H {
    pub(super) fn new(c: SessionConfig) -> Self {
        H {
            s: Session::new(c),
            #[allow(clippy::disallowed_methods)] // a base instant for simulated time; nothing reads the clock after
            now: Instant::now(),
            events: Vec::new(),
            sent: Vec::new(),
            runs: Vec::new(),
            asks: Vec::new(),
            aborts: Vec::new(),
            child_answers: Vec::new(),
            checkpoints: Vec::new(),
            hooks: Vec::new(),
        }
    }

    pub(super) fn drain(&mut self) {
        while let Some(a) = self.s.poll() {
            match a {
                Action::SendRequest(r) => self.sent.push(r),
                Action::RunTool(r) => self.runs.push(r),
                Action::AskApproval(r) => self.asks.push(r),
                Action::AbortTool { call_id } => self.aborts.push(call_id),
                Action::AnswerChild {
                    parent_call_id,
                    call_id,
                    approval,
                } => self.child_answers.push((parent_call_id, call_id, approval)),
                Action::TakeCheckpoint(c) => self.checkpoints.push(c),
                Action::RunHooks(h) => self.hooks.push(h),
                Action::Emit(e) => self.events.push(e),
            }
        }
        // The invariant every test relies on: the history is always a valid request.
        history::validate(self.s.messages()).expect("history stays valid");
    }

    pub(super) fn submit(&mut self, text: &str) {
        self.s.submit(text).unwrap();
        self.drain();
    }

    fn req(&self) -> RequestId {
        self.sent.last().expect("a request was sent").id
    }

    fn body(&self, n: usize) -> ChatRequest {
        serde_json::from_slice(&self.sent[n].body).unwrap()
    }

    fn head(&mut self, status: u16, headers: &[(&str, &str)]) {
        let req = self.req();
        self.s
            .handle_response_head(
                self.now,
                req,
                status,
                headers.iter().map(|(n, v)| (*n, v.as_bytes())),
            )
            .unwrap();
        self.drain();
    }

    fn data(&mut self, bytes: &str) {
        let req = self.req();
        self.s
            .handle_response_data(self.now, req, bytes.as_bytes())
            .unwrap();
        self.drain();
    }

    fn end(&mut self) {
        let req = self.req();
        // The session may already have finished the request at [DONE].
        let _ = self.s.handle_response_end(self.now, req);
        self.drain();
    }

    /// One whole streamed answer to the latest request (its end too, even when the answer
    /// was complete at `[DONE]` and a next request already went out).
    pub(super) fn sse(&mut self, body: &str) {
        let req = self.req();
        self.head(200, &[("content-type", "text/event-stream")]);
        self.data(body);
        self.s.handle_response_end(self.now, req).unwrap();
        self.drain();
    }

    fn status(&mut self, status: u16, headers: &[(&str, &str)], body: &str) {
        self.head(status, headers);
        self.data(body);
        self.end();
    }

    pub(super) fn output(&mut self, id: &str, text: &str) {
        self.s
            .handle_tool_output(self.now, id, ToolOutput::ok(text))
            .unwrap();
        self.drain();
    }

    pub(super) fn finals(&self) -> Vec<&Event> {
        self.events.iter().filter(|e| e.is_final()).collect()
    }

    fn text(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    pub(super) fn results(&self) -> Vec<(String, ToolStatus, String)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::ToolResult {
                    id, status, output, ..
                } => Some((id.clone(), *status, output.content.clone())),
                _ => None,
            })
            .collect()
    }
}

fn sse_body(chunks: &[Value]) -> String {
    let mut s: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    s.push_str("data: [DONE]\n\n");
    s
}

fn delta(d: Value, finish: Option<&str>) -> Value {
    json!({"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": d, "finish_reason": finish}]})
}

pub(super) fn text_answer(text: &str) -> String {
    let (a, b) = text.split_at(text.len() / 2);
    sse_body(&[
        delta(json!({"role": "assistant", "content": ""}), None),
        delta(json!({"content": a}), None),
        delta(json!({"content": b}), None),
        delta(json!({}), Some("stop")),
        json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
    ])
}

pub(super) fn tool_answer(calls: &[(&str, &str, &str)]) -> String {
    let mut chunks = vec![delta(json!({"role": "assistant"}), None)];
    for (i, (id, name, args)) in calls.iter().enumerate() {
        let (a, b) = args.split_at(args.len() / 2);
        chunks.push(delta(
            json!({"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": a}}]}),
            None,
        ));
        chunks.push(delta(
            json!({"tool_calls": [{"index": i, "function": {"arguments": b}}]}),
            None,
        ));
    }
    chunks.push(delta(json!({}), Some("tool_calls")));
    sse_body(&chunks)
}

// ----- deltas -----

/// The deltas of one body read reach the owner as one event per run of a kind (a read of a
/// fast stream brings hundreds of one-token deltas); each read's are out when it is fed,
/// nothing is held back for the next read.
#[test]
fn one_reads_deltas_are_one_event_per_run_and_none_waits_for_the_next_read() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("hello");
    h.head(200, &[("content-type", "text/event-stream")]);
    let mut first = vec![delta(json!({"role": "assistant", "content": ""}), None)];
    first.extend(["Hel", "lo", ", ", "wor"].map(|t| delta(json!({"content": t}), None)));
    first.push(delta(json!({"reasoning_content": "hm"}), None));
    first.push(delta(json!({"reasoning_content": "m"}), None));
    first.push(delta(json!({"content": "ld"}), None));
    let first: String = first.iter().map(|c| format!("data: {c}\n\n")).collect();
    h.data(&first);
    let deltas =
        |h: &H| -> Vec<Event> { h.events.iter().filter(|e| e.is_delta()).cloned().collect() };
    assert_eq!(
        deltas(&h),
        vec![
            Event::TextDelta {
                text: "Hello, wor".into()
            },
            Event::ReasoningDelta { text: "hmm".into() },
            Event::TextDelta { text: "ld".into() },
        ]
    );
    h.data(&format!(
        "data: {}\n\n",
        delta(json!({"content": "!"}), None)
    ));
    assert_eq!(
        deltas(&h).len(),
        4,
        "the second read's delta is out at once"
    );
    h.data(&sse_body(&[delta(json!({}), Some("stop"))]));
    h.end();
    assert_eq!(h.text(), "Hello, world!");
    assert_eq!(h.s.messages().last().unwrap().text(), "Hello, world!");
}

// ----- requests -----

#[test]
fn text_turn_builds_the_request_and_finishes_once() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("hello");
    assert_eq!(h.sent.len(), 1);
    let req = &h.sent[0];
    assert_eq!(req.url, "http://127.0.0.1:1/v1/chat/completions");
    let headers: Vec<_> = req.wire_headers().collect();
    assert!(headers.contains(&("authorization", "Bearer sk-test-SECRET-0123456789")));
    assert!(!format!("{req:?}").contains("SECRET"));
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(body["model"], "m1");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        body["messages"],
        json!([{"role": "system", "content": "You are hrns."}, {"role": "user", "content": "hello"}])
    );
    assert_eq!(
        body["tools"].as_array().unwrap().len(),
        builtin_specs().len()
    );
    assert!(body.get("temperature").is_none());

    h.sse(&text_answer("Hi there"));
    assert_eq!(h.text(), "Hi there");
    assert!(h.s.is_idle());
    assert_eq!(h.finals().len(), 1);
    match h.events.last().unwrap() {
        Event::TurnFinished {
            finish_reason,
            usage,
            output,
        } => {
            assert_eq!(output, &None);
            assert_eq!(finish_reason, &Some(FinishReason::Stop));
            assert_eq!(usage.as_ref().unwrap().total_tokens, Some(15));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(h.s.messages().len(), 2);
    assert_eq!(h.s.messages()[1].text(), "Hi there");
    assert_eq!(
        h.s.usage(),
        TokenTotals {
            prompt: 10,
            cached: 0,
            completion: 5
        }
    );
}

#[test]
fn request_options_pass_through() {
    let mut c = config(ApprovalPolicy::Auto);
    c.options.temperature = Some(0.2);
    c.options.max_tokens = Some(100);
    c.options.reasoning_effort = Some("high".into());
    c.options.extra.insert("top_k".into(), json!(5));
    c.options.extra.insert("stream".into(), json!(true));
    c.provider.headers.push(("x-title".into(), "hrns".into()));
    c.provider
        .headers
        .push(("api-key".into(), "azure-SECRET".into()));
    c.provider.quirks.stream_options = crate::quirks::StreamOptions::Omit;
    c.system_prompt = None;
    let mut h = H::new(c);
    h.submit("x");
    let body: Value = serde_json::from_slice(&h.sent[0].body).unwrap();
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(body["max_tokens"], 100);
    assert_eq!(body["reasoning_effort"], "high");
    assert_eq!(body["top_k"], 5);
    assert!(body.get("stream_options").is_none());
    assert_eq!(body["messages"].as_array().unwrap().len(), 1);
    let dbg = format!("{:?}", h.sent[0]);
    assert!(
        dbg.contains("x-title") && !dbg.contains("azure-SECRET"),
        "{dbg}"
    );
}

#[test]
fn submit_while_busy_and_other_misuse_are_errors() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("a");
    assert_eq!(h.s.submit("b"), Err(SessionError::Busy));
    let req = h.req();
    assert_eq!(
        h.s.handle_response_data(h.now, req, b"x"),
        Err(SessionError::DataBeforeHead(req))
    );
    let bogus = RequestId(99);
    assert_eq!(
        h.s.handle_response_head(h.now, bogus, 200, std::iter::empty()),
        Err(SessionError::UnknownRequest(bogus))
    );
    assert_eq!(
        h.s.handle_tool_output(h.now, "nope", ToolOutput::ok("")),
        Err(SessionError::UnknownCall("nope".into()))
    );
    assert_eq!(
        h.s.handle_approval(h.now, "nope", Approval::Once),
        Err(SessionError::UnknownCall("nope".into()))
    );
    h.sse(&text_answer("ok"));
    // Input for a request that already finished is late, not misuse: accepted and ignored.
    assert_eq!(h.s.handle_response_end(h.now, req), Ok(()));
    assert_eq!(h.s.handle_response_data(h.now, req, b"more"), Ok(()));
    h.drain();
    assert_eq!(h.finals().len(), 1);
    assert!(h.s.is_idle());
}

// ----- tools -----

#[test]
fn tool_outputs_in_any_order_are_sent_back_in_call_order() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("do it");
    h.sse(&tool_answer(&[
        ("call_a", "read_file", r#"{"path":"a.txt"}"#),
        ("call_b", "list_files", r#"{"path":"."}"#),
    ]));
    assert_eq!(h.runs.len(), 2, "read-only calls run together");
    assert_eq!(h.runs[0].name, "read_file");
    assert_eq!(h.runs[1].arguments, r#"{"path":"."}"#);
    assert_eq!(h.sent.len(), 1, "waits for all outputs");
    h.output("call_b", "files");
    assert_eq!(h.sent.len(), 1);
    h.output("call_a", "contents");
    assert_eq!(h.sent.len(), 2);
    let body = h.body(1);
    let roles: Vec<Role> = body.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::System,
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Tool
        ]
    );
    assert_eq!(body.messages[3].tool_call_id.as_deref(), Some("call_a"));
    assert_eq!(body.messages[3].text(), "contents");
    assert_eq!(body.messages[4].tool_call_id.as_deref(), Some("call_b"));
    assert_eq!(body.messages[2].content, None);
    // A second output for an answered call is late: ignored, the history keeps the first.
    assert_eq!(
        h.s.handle_tool_output(h.now, "call_a", ToolOutput::ok("again")),
        Ok(())
    );
    assert_eq!(h.sent.len(), 2);
    h.sse(&text_answer("done"));
    assert_eq!(h.finals().len(), 1);
    assert!(matches!(h.events.last(), Some(Event::TurnFinished { .. })));
}

#[test]
fn bad_calls_become_error_results_the_model_can_act_on() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.sse(&tool_answer(&[
        ("c1", "delete_everything", "{}"),
        ("c2", "read_file", "[1,2]"),
        ("c3", "read_file", "{\"path\":"),
        ("c4", "list_files", ""),
    ]));
    let results = h.results();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0].1, ToolStatus::UnknownTool);
    assert!(
        results[0].2.contains("delete_everything") && results[0].2.contains("read_file, "),
        "{}",
        results[0].2
    );
    assert_eq!(results[1].1, ToolStatus::InvalidArguments);
    assert!(results[1].2.contains("an array"), "{}", results[1].2);
    assert_eq!(results[2].1, ToolStatus::InvalidArguments);
    assert!(results[2].2.contains("not valid JSON"));
    assert_eq!(h.runs.len(), 1);
    assert_eq!(
        h.runs[0].arguments, "{}",
        "empty arguments mean no arguments"
    );
    h.output("c4", "a\nb");
    let body = h.body(1);
    assert_eq!(body.messages.len(), 7);
    assert!(body.messages[3].text().contains("no tool named"));
}

#[test]
fn read_only_policy_denies_effects() {
    let mut h = H::new(config(ApprovalPolicy::ReadOnly));
    h.submit("x");
    h.sse(&tool_answer(&[
        ("c1", "write_file", r#"{"path":"a","content":"b"}"#),
        ("c2", "read_file", r#"{"path":"a"}"#),
    ]));
    assert_eq!(h.runs.len(), 1);
    assert_eq!(h.runs[0].name, "read_file");
    assert!(h.asks.is_empty());
    let r = h.results();
    assert_eq!(r[0].1, ToolStatus::DeniedByPolicy);
    assert!(r[0].2.contains("read-only"));
}

#[test]
fn ask_policy_asks_one_at_a_time_and_remembers_always() {
    let mut h = H::new(config(ApprovalPolicy::Ask));
    h.submit("x");
    h.sse(&tool_answer(&[
        ("c1", "run_command", r#"{"command":"a"}"#),
        ("c2", "read_file", r#"{"path":"f"}"#),
        ("c3", "run_command", r#"{"command":"b"}"#),
        ("c4", "write_file", r#"{"path":"p","content":""}"#),
    ]));
    assert_eq!(
        h.runs
            .iter()
            .map(|r| r.call_id.as_str())
            .collect::<Vec<_>>(),
        Vec::<&str>::new(),
        "c1 has effects: the read-only c2 after it waits for it"
    );
    assert_eq!(h.asks.len(), 1);
    assert_eq!(h.asks[0].call_id, "c1");
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { id, .. } if id == "c1"))
    );
    h.s.handle_approval(h.now, "c1", Approval::AlwaysThisTool)
        .unwrap();
    h.drain();
    // "always" covers c3 too; the next question is about c4. c1 runs alone first.
    let ran: Vec<_> = h.runs.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ran, ["c1"]);
    assert_eq!(h.asks.len(), 2);
    assert_eq!(h.asks[1].call_id, "c4");
    h.s.handle_approval(
        h.now,
        "c4",
        Approval::Deny {
            reason: Some("not that file".into()),
        },
    )
    .unwrap();
    h.drain();
    for id in ["c1", "c2", "c3"] {
        h.output(id, "ok");
    }
    let ran: Vec<_> = h.runs.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ran, ["c1", "c2", "c3"], "in the model's order");
    assert_eq!(h.sent.len(), 2);
    let body = h.body(1);
    let denied = body
        .messages
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("c4"))
        .unwrap();
    assert!(denied.text().contains("not that file"));
    // Later turns: run_command no longer asks.
    h.sse(&tool_answer(&[("c5", "run_command", r#"{"command":"c"}"#)]));
    assert_eq!(h.asks.len(), 2);
    assert_eq!(h.runs.last().unwrap().call_id, "c5");
}

#[test]
fn approve_once_runs_only_that_call() {
    let mut h = H::new(config(ApprovalPolicy::Ask));
    h.submit("x");
    h.sse(&tool_answer(&[
        ("c1", "run_command", r#"{"command":"a"}"#),
        ("c2", "run_command", r#"{"command":"b"}"#),
    ]));
    h.s.handle_approval(h.now, "c1", Approval::Once).unwrap();
    h.drain();
    assert_eq!(h.runs.len(), 1);
    assert_eq!(h.asks.len(), 2);
    assert_eq!(h.asks[1].call_id, "c2");
    h.s.handle_approval(h.now, "c2", Approval::Deny { reason: None })
        .unwrap();
    h.drain();
    h.output("c1", "ok");
    assert_eq!(h.sent.len(), 2);
}

/// "Unsandboxed, once" is an approval answer: the command it answers runs outside the sandbox
/// and its result says so; the next call of the same command is asked about again and runs
/// in the sandbox; a call without the command effect is only allowed.
#[test]
fn unsandboxed_once_marks_only_that_command() {
    use super::Confinement;
    let mut h = H::new(config(ApprovalPolicy::Ask));
    h.submit("x");
    h.sse(&tool_answer(&[
        ("c1", "run_command", r#"{"command":"a"}"#),
        ("c2", "write_file", r#"{"path":"f","content":"x"}"#),
    ]));
    h.s.handle_approval(h.now, "c1", Approval::OnceUnsandboxed)
        .unwrap();
    h.drain();
    assert_eq!(h.runs.len(), 1);
    assert_eq!(h.runs[0].confinement, Confinement::Unsandboxed);
    h.output("c1", "done\n");
    assert_eq!(h.asks[1].call_id, "c2");
    h.s.handle_approval(h.now, "c2", Approval::OnceUnsandboxed)
        .unwrap();
    h.drain();
    assert_eq!(h.runs[1].call_id, "c2");
    assert_eq!(
        h.runs[1].confinement,
        Confinement::Sandboxed,
        "not a command"
    );
    h.output("c2", "written");
    let results = h.results();
    assert_eq!(
        results[0].2,
        format!("done\n{}", crate::sandbox::UNSANDBOXED_NOTE)
    );
    assert_eq!(
        results[1].2, "written",
        "no note on a call that ran sandboxed"
    );
    // The same command in the next answer is asked about again, and runs sandboxed.
    h.sse(&tool_answer(&[("c3", "run_command", r#"{"command":"a"}"#)]));
    assert_eq!(h.asks.last().unwrap().call_id, "c3");
    h.s.handle_approval(h.now, "c3", Approval::Once).unwrap();
    h.drain();
    assert_eq!(h.runs.last().unwrap().confinement, Confinement::Sandboxed);
}

#[test]
fn repeated_identical_calls_are_stopped() {
    let mut c = config(ApprovalPolicy::Auto);
    c.max_repeated_calls = 2;
    let mut h = H::new(c);
    h.submit("x");
    for n in 0..3 {
        // Same arguments, different key order and spacing: still the same call.
        let args = if n % 2 == 0 {
            r#"{"path":"a","limit":5}"#
        } else {
            r#"{ "limit": 5, "path": "a" }"#
        };
        h.sse(&tool_answer(&[(&format!("c{n}"), "read_file", args)]));
        if n < 2 {
            h.output(&format!("c{n}"), "same");
        }
    }
    let r = h.results();
    assert_eq!(r.last().unwrap().1, ToolStatus::Repeated);
    assert!(r.last().unwrap().2.contains("2 times in a row"));
    assert_eq!(h.runs.len(), 2);
    assert_eq!(h.sent.len(), 4, "the refusal goes back to the model");
    // Once more after the refusal: the model is stuck, and the turn ends with a loop error
    // instead of running on to the step limit.
    h.sse(&tool_answer(&[(
        "c3",
        "read_file",
        r#"{"path":"a","limit":5}"#,
    )]));
    assert_eq!(h.sent.len(), 4);
    assert!(h.s.is_idle());
    assert!(
        matches!(h.events.last(), Some(Event::TurnFailed { error: TurnError::RepeatedCall { name, times: 4 } }) if name == "read_file"),
        "{:?}",
        h.events.last()
    );
    assert_eq!(h.finals().len(), 1);
}

#[test]
fn length_and_content_filter_are_reported() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.sse(&sse_body(&[delta(
        json!({"content": "cut"}),
        Some("length"),
    )]));
    assert!(matches!(
        h.events.last(),
        Some(Event::TurnFinished {
            finish_reason: Some(FinishReason::Length),
            ..
        })
    ));

    h.submit("y");
    h.sse(&sse_body(&[
        delta(json!({"tool_calls": [{"index": 0, "id": "t", "function": {"name": "read_file", "arguments": "{\"pa"}}]}), None),
        delta(json!({}), Some("length")),
    ]));
    assert!(h.runs.is_empty());
    assert_eq!(h.results().last().unwrap().1, ToolStatus::NotRun);
    assert!(matches!(
        h.events.last(),
        Some(Event::TurnFinished {
            finish_reason: Some(FinishReason::Length),
            ..
        })
    ));

    h.submit("z");
    h.sse(&sse_body(&[delta(
        json!({"content": ""}),
        Some("content_filter"),
    )]));
    assert!(matches!(
        h.events.last(),
        Some(Event::TurnFinished {
            finish_reason: Some(FinishReason::ContentFilter),
            ..
        })
    ));
    assert_eq!(h.finals().len(), 3);
}

#[test]
fn step_limit_ends_a_runaway_loop() {
    let mut c = config(ApprovalPolicy::Auto);
    c.max_steps = 3;
    let mut h = H::new(c);
    h.submit("loop");
    for n in 0..3 {
        h.sse(&tool_answer(&[(
            &format!("c{n}"),
            "read_file",
            &format!("{{\"path\":\"{n}\"}}"),
        )]));
        h.output(&format!("c{n}"), "x");
    }
    assert_eq!(h.sent.len(), 3);
    assert!(matches!(
        h.events.last(),
        Some(Event::TurnFailed {
            error: TurnError::StepLimit { limit: 3 }
        })
    ));
    assert!(h.s.is_idle());
    assert_eq!(h.s.messages().last().unwrap().role, Role::Tool);
}

#[test]
fn reasoning_is_kept_on_tool_call_messages() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.sse(&sse_body(&[
        delta(json!({"role": "assistant", "content": null, "reasoning_content": "Let me look."}), None),
        delta(json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}]}), None),
        delta(json!({}), Some("tool_calls")),
    ]));
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, Event::ReasoningDelta { text } if text == "Let me look."))
    );
    h.output("c1", "data");
    let body: Value = serde_json::from_slice(&h.sent[1].body).unwrap();
    assert_eq!(body["messages"][2]["reasoning_content"], "Let me look.");
}

#[test]
fn non_streaming_json_answer_is_accepted() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    let body = json!({"id": "r", "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1}});
    h.status(
        200,
        &[("content-type", "application/json")],
        &body.to_string(),
    );
    assert_eq!(h.text(), "whole");
    assert!(matches!(h.events.last(), Some(Event::TurnFinished { .. })));
}

// ----- failures and retries -----

fn retries(h: &H) -> Vec<(u32, u64)> {
    h.events
        .iter()
        .filter_map(|e| match e {
            Event::Retry {
                attempt, delay_ms, ..
            } => Some((*attempt, *delay_ms)),
            _ => None,
        })
        .collect()
}

#[test]
fn rate_limit_honours_retry_after_then_succeeds() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.status(
        429,
        &[("retry-after", "2")],
        r#"{"error":{"message":"slow down","type":"rate_limit"}}"#,
    );
    assert_eq!(retries(&h), [(2, 2000)]);
    assert_eq!(h.s.poll_timeout(), Some(h.now + Duration::from_secs(2)));
    assert!(!h.s.is_idle());
    h.s.handle_timeout(h.now + Duration::from_millis(1999));
    h.drain();
    assert_eq!(h.sent.len(), 1, "not before the deadline");
    h.s.handle_timeout(h.now + Duration::from_secs(2));
    h.drain();
    assert_eq!(h.sent.len(), 2);
    assert_eq!(h.sent[0].body, h.sent[1].body, "the same request again");
    assert!(h.events.iter().any(|e| matches!(
        e,
        Event::RequestStarted {
            step: 1,
            attempt: 2
        }
    )));
    h.sse(&text_answer("ok"));
    assert_eq!(h.finals().len(), 1);
    assert!(matches!(h.events.last(), Some(Event::TurnFinished { .. })));
}

#[test]
fn retry_after_ms_wins_and_backoff_applies_without_header() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.status(
        503,
        &[("Retry-After", "9"), ("retry-after-ms", "150")],
        "busy",
    );
    assert_eq!(retries(&h), [(2, 150)]);
    h.s.handle_timeout(h.now + Duration::from_millis(150));
    h.drain();
    h.status(500, &[], r#"{"error":{"message":"boom"}}"#);
    let (attempt, delay) = retries(&h)[1];
    assert_eq!(attempt, 3);
    // Second retry: base 1 s doubled, with equal jitter: 1 s..=2 s.
    assert!((1000..=2000).contains(&delay), "{delay}");
}

#[test]
fn retries_stop_after_max_attempts_with_the_provider_message() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    for n in 0..4 {
        h.status(
            529,
            &[("retry-after", "0")],
            r#"{"error":{"message":"overloaded","type":"overloaded_error"}}"#,
        );
        if n < 3 {
            h.s.handle_timeout(h.now);
            h.drain();
        }
    }
    assert_eq!(h.sent.len(), 4);
    match h.events.last().unwrap() {
        Event::TurnFailed {
            error: TurnError::Api { status: 529, error },
        } => assert_eq!(error.message, "overloaded"),
        other => panic!("{other:?}"),
    }
    assert_eq!(h.s.messages().len(), 1, "the user message stays");
    assert!(h.s.is_idle());
}

#[test]
fn client_errors_fail_at_once_and_long_retry_after_is_not_awaited() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.status(
        401,
        &[],
        r#"{"error":{"message":"Incorrect API key provided: sk-test-SECRET-0123456789"}}"#,
    );
    let failed = h.events.last().unwrap();
    assert!(matches!(
        failed,
        Event::TurnFailed {
            error: TurnError::Api { status: 401, .. }
        }
    ));
    let shown = format!("{failed:?} {}", serde_json::to_string(failed).unwrap());
    assert!(!shown.contains("SECRET"), "{shown}");
    if let Event::TurnFailed { error } = failed {
        assert!(!error.to_string().contains("SECRET"));
        assert!(error.to_string().contains("401"));
    }

    h.submit("y");
    h.status(429, &[("retry-after", "3600")], "{}");
    assert!(matches!(
        h.events.last(),
        Some(Event::TurnFailed {
            error: TurnError::RetryAfterTooLong {
                wait_secs: 3600,
                ..
            }
        })
    ));
}

#[test]
fn rejected_stream_options_are_dropped_once_and_reported() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.status(
        422,
        &[],
        r#"{"detail":[{"loc":["body","stream_options"],"msg":"extra fields not permitted"}]}"#,
    );
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, Event::OptionDropped { field, .. } if field == "stream_options"))
    );
    assert_eq!(h.sent.len(), 2);
    let body: Value = serde_json::from_slice(&h.sent[1].body).unwrap();
    assert!(body.get("stream_options").is_none());
    // A second 400 is a plain failure.
    h.status(400, &[], r#"{"error":{"message":"stream_options again?"}}"#);
    assert!(matches!(h.events.last(), Some(Event::TurnFailed { .. })));
}

#[test]
fn configured_quirks_shape_every_request() {
    use crate::quirks::{MaxTokensField, ToolChoice};
    let mut c = config(ApprovalPolicy::Auto);
    c.options.max_tokens = Some(64);
    c.provider.quirks.max_tokens_field = MaxTokensField::MaxCompletionTokens;
    c.provider.quirks.tool_choice = ToolChoice::Auto;
    let mut h = H::new(c);
    h.submit("x");
    let body: Value = serde_json::from_slice(&h.sent[0].body).unwrap();
    assert_eq!(body["max_completion_tokens"], 64);
    assert!(body.get("max_tokens").is_none());
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
}

#[test]
fn a_rejected_max_tokens_is_renamed_once_and_reported() {
    let mut c = config(ApprovalPolicy::Auto);
    c.options.max_tokens = Some(64);
    let mut h = H::new(c);
    h.submit("x");
    h.status(
        400,
        &[],
        r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","param":"max_tokens"}}"#,
    );
    assert!(
        h.events
            .iter()
            .any(|e| matches!(e, Event::OptionDropped { field, .. } if field == "max_tokens"))
    );
    let body: Value = serde_json::from_slice(&h.sent[1].body).unwrap();
    assert_eq!(body["max_completion_tokens"], 64);
    assert!(body.get("max_tokens").is_none());
    assert_eq!(
        h.s.quirks().max_tokens_field,
        crate::quirks::MaxTokensField::MaxCompletionTokens
    );
}

#[test]
fn transport_errors_before_output_are_retried() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    let req = h.req();
    h.s.handle_transport_error(
        h.now,
        req,
        TransportError::new(TransportErrorKind::Connect, "refused"),
    )
    .unwrap();
    h.drain();
    assert_eq!(retries(&h).len(), 1);
    let deadline = h.s.poll_timeout().unwrap();
    h.s.handle_timeout(deadline);
    h.drain();
    // A stream that breaks after only a role chunk showed nothing: retried.
    h.head(200, &[]);
    h.data(&format!(
        "data: {}\n\n",
        delta(json!({"role": "assistant"}), None)
    ));
    let req = h.req();
    h.s.handle_transport_error(
        h.now,
        req,
        TransportError::new(TransportErrorKind::Io, "reset"),
    )
    .unwrap();
    h.drain();
    assert_eq!(retries(&h).len(), 2);
    let deadline = h.s.poll_timeout().unwrap();
    h.s.handle_timeout(deadline);
    h.drain();
    // TLS failures are not retried.
    let req = h.req();
    h.s.handle_transport_error(
        h.now,
        req,
        TransportError::new(TransportErrorKind::Tls, "bad certificate"),
    )
    .unwrap();
    h.drain();
    assert!(matches!(
        h.events.last(),
        Some(Event::TurnFailed {
            error: TurnError::Transport {
                kind: TransportErrorKind::Tls,
                ..
            }
        })
    ));
}

#[test]
fn broken_stream_after_output_fails_and_keeps_the_shown_text_marked_cut_off() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.head(200, &[]);
    h.data(&format!(
        "data: {}\n\n",
        delta(json!({"content": "Half an ans"}), None)
    ));
    assert_eq!(h.text(), "Half an ans");
    let req = h.req();
    h.s.handle_transport_error(
        h.now,
        req,
        TransportError::new(TransportErrorKind::Io, "connection reset"),
    )
    .unwrap();
    h.drain();
    assert!(retries(&h).is_empty());
    assert!(matches!(
        h.events.last(),
        Some(Event::TurnFailed {
            error: TurnError::StreamBroken { .. }
        })
    ));
    // What the user saw is kept, as the model's message, said to be cut off: the next turn
    // and the saved session hold it. Its event comes before the turn's end.
    let texts: Vec<(Role, String)> = h.s.messages().iter().map(|m| (m.role, m.text())).collect();
    assert_eq!(
        texts,
        [
            (Role::User, "x".to_owned()),
            (
                Role::Assistant,
                "Half an ans\n\n[cut off: the stream broke]".to_owned()
            )
        ]
    );
    let n = h.events.len();
    assert!(
        matches!(&h.events[n - 2], Event::Message { message } if message.role == Role::Assistant)
    );

    // The same for a body that simply ends early, and for an error inside the stream.
    for (i, tail) in ["", "data: {\"error\":{\"message\":\"overloaded\"}}\n\n"]
        .into_iter()
        .enumerate()
    {
        h.submit("y");
        h.head(200, &[]);
        h.data(&format!(
            "data: {}\n\n{tail}",
            delta(json!({"content": "More"}), None)
        ));
        h.end();
        assert!(matches!(
            h.events.last(),
            Some(Event::TurnFailed {
                error: TurnError::Stream { .. }
            })
        ));
        assert!(retries(&h).is_empty(), "output was shown: no retry");
        assert_eq!(h.s.messages().len(), 4 + 2 * i);
        assert_eq!(
            h.s.messages().last().unwrap().text(),
            "More\n\n[cut off: the stream broke]"
        );
    }
    history::validate(h.s.messages()).unwrap();

    // A tool call being written when the stream broke is left out: its text alone is kept,
    // and the history stays valid (no call without a result).
    h.submit("z");
    h.head(200, &[]);
    h.data(&format!(
        "data: {}\n\ndata: {}\n\n",
        delta(json!({"content": "Let me look"}), None),
        delta(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "read_file", "arguments": "{\"pa"}}]}), None)
    ));
    let req = h.req();
    h.s.handle_transport_error(
        h.now,
        req,
        TransportError::new(TransportErrorKind::Io, "reset"),
    )
    .unwrap();
    h.drain();
    let last = h.s.messages().last().unwrap();
    assert_eq!(last.text(), "Let me look\n\n[cut off: the stream broke]");
    assert!(last.tool_calls.is_empty());
    history::validate(h.s.messages()).unwrap();
}

#[test]
fn a_connection_that_breaks_after_the_finish_reason_ends_a_whole_answer() {
    // Every choice finished: what could still come (usage, `[DONE]`) tells nothing of the
    // answer, so a break now ends it as the body's end would.
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.head(200, &[]);
    h.data(&format!(
        "data: {}\n\ndata: {}\n\n",
        delta(json!({"content": "Whole."}), None),
        delta(json!({}), Some("stop"))
    ));
    let req = h.req();
    h.s.handle_transport_error(
        h.now,
        req,
        TransportError::new(TransportErrorKind::Io, "reset"),
    )
    .unwrap();
    h.drain();
    assert!(
        matches!(
            h.finals()[..],
            [Event::TurnFinished {
                finish_reason: Some(FinishReason::Stop),
                ..
            }]
        ),
        "{:?}",
        h.events
    );
    assert_eq!(h.s.messages().last().unwrap().text(), "Whole.");

    // A whole tool-call answer whose connection breaks: its calls run, and the turn goes on.
    h.submit("y");
    h.head(200, &[]);
    let body = tool_answer(&[("c1", "read_file", r#"{"path":"a"}"#)]);
    h.data(body.trim_end_matches("data: [DONE]\n\n"));
    let req = h.req();
    h.s.handle_transport_error(
        h.now,
        req,
        TransportError::new(TransportErrorKind::Io, "reset"),
    )
    .unwrap();
    h.drain();
    assert_eq!(h.runs.len(), 1, "{:?}", h.events);
    assert_eq!(h.finals().len(), 1, "the second turn goes on");
}

#[test]
fn a_stream_that_breaks_before_any_text_keeps_nothing() {
    // Only a tool call started: nothing was shown as text, nothing enters the history.
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.head(200, &[]);
    h.data(&format!(
        "data: {}\n\n",
        delta(json!({"reasoning_content": "thinking", "tool_calls": [{"index": 0, "id": "c", "function": {"name": "read_file", "arguments": "{"}}]}), None)
    ));
    let req = h.req();
    h.s.handle_transport_error(
        h.now,
        req,
        TransportError::new(TransportErrorKind::Io, "reset"),
    )
    .unwrap();
    h.drain();
    assert!(matches!(h.events.last(), Some(Event::TurnFailed { .. })));
    assert_eq!(h.s.messages().len(), 1, "{:?}", h.s.messages());
}

#[test]
fn truncated_or_erroring_stream_without_output_is_retried() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.sse("");
    assert_eq!(retries(&h).len(), 1);
    h.s.handle_timeout(h.s.poll_timeout().unwrap());
    h.drain();
    h.sse("data: {\"error\":{\"message\":\"Provider returned error\",\"code\":502}}\n\n");
    assert_eq!(retries(&h).len(), 2);
    h.s.handle_timeout(h.s.poll_timeout().unwrap());
    h.drain();
    h.sse("data: {\"error\":{\"message\":\"context too long\",\"code\":400}}\n\n");
    assert!(matches!(
        h.events.last(),
        Some(Event::TurnFailed {
            error: TurnError::Stream { .. }
        })
    ));
    h.submit("y");
    h.sse("data: not json\n\n");
    match h.events.last().unwrap() {
        Event::TurnFailed {
            error:
                TurnError::Stream {
                    error: StreamError::Malformed { payload, .. },
                },
        } => {
            assert_eq!(payload, "not json")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn done_finishes_the_request_without_waiting_for_the_end() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    let req = h.req();
    h.head(200, &[]);
    h.data(&text_answer("quick"));
    assert!(!h.s.wants_response(req));
    assert!(matches!(h.events.last(), Some(Event::TurnFinished { .. })));
    // The rest of the body comes late: accepted and ignored.
    assert_eq!(h.s.handle_response_data(h.now, req, b"junk"), Ok(()));
    h.drain();
    assert_eq!(h.finals().len(), 1);
}

// ----- cancellation -----

#[test]
fn cancel_in_every_state_leaves_a_valid_history() {
    type Setup = fn(&mut H);
    let states: Vec<(&str, Setup)> = vec![
        ("awaiting head", |_h| {}),
        ("streaming, nothing shown", |h| {
            h.head(200, &[]);
            h.data(&format!(
                "data: {}\n\n",
                delta(json!({"role": "assistant"}), None)
            ));
        }),
        ("retry wait", |h| h.status(503, &[], "")),
        ("tools running", |h| {
            h.sse(&tool_answer(&[
                ("c1", "read_file", r#"{"path":"a"}"#),
                ("c2", "read_file", r#"{"path":"b"}"#),
            ]));
            h.output("c2", "b");
        }),
        ("awaiting approval", |h| {
            h.sse(&tool_answer(&[(
                "c1",
                "run_command",
                r#"{"command":"rm -rf /"}"#,
            )]));
        }),
    ];
    for (name, setup) in states {
        let mut h = H::new(config(ApprovalPolicy::Ask));
        h.submit("x");
        setup(&mut h);
        assert!(!h.s.is_idle(), "{name}");
        h.s.cancel();
        h.drain();
        assert!(h.s.is_idle(), "{name}");
        assert_eq!(h.finals().len(), 1, "{name}");
        assert_eq!(h.events.last(), Some(&Event::TurnCancelled), "{name}");
        assert_eq!(h.s.poll_timeout(), None, "{name}");
        assert!(
            !h.s.messages()
                .iter()
                .any(|m| m.text().contains("interrupted")),
            "{name}"
        );
        // Late inputs for the cancelled turn are ignored, the next turn works.
        let old = h.req();
        assert_eq!(h.s.handle_response_end(h.now, old), Ok(()), "{name}");
        let late = h.s.handle_tool_output(h.now, "c1", ToolOutput::ok("late"));
        if h.runs.iter().chain(&h.asks).any(|r| r.call_id == "c1") {
            assert_eq!(late, Ok(()), "{name}");
        } else {
            assert_eq!(late, Err(SessionError::UnknownCall("c1".into())), "{name}");
        }
        h.drain();
        assert_eq!(h.finals().len(), 1, "{name}");
        h.submit("again");
        h.sse(&text_answer("fine"));
        assert!(
            matches!(h.events.last(), Some(Event::TurnFinished { .. })),
            "{name}"
        );
        let body = h.body(h.sent.len() - 1);
        history::validate(&body.messages[1..]).unwrap();
    }
}

#[test]
fn cancel_mid_stream_keeps_shown_text_marked_interrupted() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.head(200, &[]);
    h.data(&format!(
        "data: {}\n\ndata: {}\n\n",
        delta(json!({"content": "Partial"}), None),
        delta(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "read_file", "arguments": "{"}}]}), None)
    ));
    h.s.cancel();
    h.drain();
    let last = h.s.messages().last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    assert_eq!(last.text(), "Partial\n\n[interrupted by the user]");
    assert!(last.tool_calls.is_empty());
}

#[test]
fn cancel_with_tools_running_answers_every_call() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.sse(&tool_answer(&[
        ("c1", "read_file", r#"{"path":"a"}"#),
        ("c2", "run_command", r#"{"command":"sleep 100"}"#),
    ]));
    h.output("c1", "a");
    h.s.cancel();
    h.drain();
    let statuses: Vec<_> = h.results().into_iter().map(|r| r.1).collect();
    assert_eq!(statuses, [ToolStatus::Ok, ToolStatus::Cancelled]);
    let msgs = h.s.messages();
    assert_eq!(msgs[msgs.len() - 2].text(), "a");
    assert!(msgs[msgs.len() - 1].text().contains("Cancelled"));
    h.s.cancel();
    h.drain();
    assert_eq!(h.finals().len(), 1, "cancel when idle does nothing");
}

#[test]
fn resumed_history_is_repaired() {
    let mut history = vec![Message::user("u")];
    let mut m = Message::assistant("");
    m.tool_calls = vec![crate::wire::ToolCall {
        id: "x".into(),
        kind: "function".into(),
        function: crate::wire::FunctionCall {
            name: "read_file".into(),
            arguments: "{}".into(),
            extra: Default::default(),
        },
        extra: Default::default(),
    }];
    history.push(m);
    let s = Session::with_history(config(ApprovalPolicy::Auto), history).unwrap();
    assert_eq!(s.messages().len(), 3);
    assert_eq!(s.messages()[2].tool_call_id.as_deref(), Some("x"));
}

#[test]
fn events_have_a_stable_json_shape() {
    let e = Event::TextDelta { text: "a".into() };
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"type": "text_delta", "text": "a"})
    );
    let e = Event::TurnFailed {
        error: TurnError::Api {
            status: 500,
            error: Box::new(ApiError {
                message: "m".into(),
                ..Default::default()
            }),
        },
    };
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(v["type"], "turn_failed");
    assert_eq!(v["error"]["code"], "api");
    assert_eq!(v["error"]["status"], 500);
    let back: Event = serde_json::from_value(v).unwrap();
    assert_eq!(back, e);
    let e = Event::ToolResult {
        id: "c".into(),
        name: "n".into(),
        status: ToolStatus::DeniedByPolicy,
        output: ToolOutput::error("no"),
    };
    assert_eq!(
        serde_json::to_value(&e).unwrap()["status"],
        "denied_by_policy"
    );
}

// ----- random input sequences -----

proptest::proptest! {
    #![proptest_config(crate::proptest_seeds::with_cases(256))]
    /// The `session` fuzz body on random inputs: no panic, a valid history after every step,
    /// one final event per turn, the key nowhere.
    #[test]
    fn random_inputs_never_break_the_history(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..200)) {
        crate::fuzzing::session(&data);
    }
}

use crate::accumulate::FinishReason;
use crate::stream::StreamError;
use crate::wire::ApiError;

#[test]
fn update_plan_is_answered_by_the_session_and_told_to_the_ui() {
    let mut c = config(ApprovalPolicy::ReadOnly);
    c.tools.push(crate::plan::update_plan_spec());
    let mut h = H::new(c);
    h.submit("a long task");
    let good = r#"{"explanation":"start","plan":[{"step":"a","status":"in_progress"},{"step":"b","status":"pending"}]}"#;
    let bad = r#"{"plan":[{"step":"a","status":"doing"}]}"#;
    h.sse(&tool_answer(&[
        ("p1", "update_plan", good),
        ("p2", "update_plan", bad),
    ]));
    assert!(h.runs.is_empty() && h.asks.is_empty(), "no driver runs it");
    let results = h.results();
    assert_eq!(results[0].1, ToolStatus::Ok);
    assert_eq!(results[0].2, crate::plan::PLAN_UPDATED);
    assert_eq!(results[1].1, ToolStatus::InvalidArguments);
    assert!(
        results[1].2.contains("unknown variant `doing`"),
        "{}",
        results[1].2
    );
    let updates: Vec<&Event> = h
        .events
        .iter()
        .filter(|e| matches!(e, Event::PlanUpdated { .. }))
        .collect();
    assert_eq!(updates.len(), 1, "a refused plan is not shown");
    let json = serde_json::to_value(updates[0]).unwrap();
    assert_eq!(
        json,
        json!({"type": "plan_updated", "explanation": "start", "plan": [
            {"step": "a", "status": "in_progress"}, {"step": "b", "status": "pending"}]})
    );
    // The kept plan is the good one, and the turn goes on to the next request.
    assert_eq!(h.s.plan().unwrap().plan[0].step, "a");
    assert_eq!(h.sent.len(), 2);
    // A driver's new set of tools (an MCP server changed) does not drop it.
    h.s.handle_tools_changed(builtin_specs(), "MCP server x changed its tools");
    assert!(h.s.config().tools.iter().any(|t| t.name == "update_plan"));
}
