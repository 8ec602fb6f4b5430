//! Context management driven end to end in the core: a simulated provider that counts the
//! tokens of every request, enforces a window and answers summary requests wherever they come.

use super::*;
use crate::context::{SUMMARY_HEADER, SUMMARY_PROMPT};
use crate::history;
use crate::tool::builtin::builtin_specs;
use crate::wire::ChatRequest;
use serde_json::{Value, json};

const TASK: &str = "Refactor the parser in src/parse.rs; keep the public API unchanged.";

/// Bytes of request body per token the simulated provider counts.
const SIM_BYTES_PER_TOKEN: u64 = 4;

fn config(window: Option<u64>) -> SessionConfig {
    let mut c = SessionConfig::new(Provider::new("http://127.0.0.1:1/v1", None), "m");
    c.system_prompt = Some("You are hrns.".into());
    c.tools = builtin_specs();
    c.approval = ApprovalPolicy::Auto;
    c.context.window = window;
    c
}

fn sse(chunks: &[Value]) -> String {
    let mut s: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    s.push_str("data: [DONE]\n\n");
    s
}

fn usage(tokens: u64) -> Value {
    json!({"choices": [], "usage": {"prompt_tokens": tokens, "completion_tokens": 20}})
}

fn text(t: &str, tokens: u64) -> String {
    sse(&[
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": t}, "finish_reason": "stop"}]}),
        usage(tokens),
    ])
}

fn call(id: &str, name: &str, args: &str, tokens: u64) -> String {
    sse(&[
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": args}}]}, "finish_reason": "tool_calls"}]}),
        usage(tokens),
    ])
}

fn is_summary_request(r: &ChatRequest) -> bool {
    r.tools.is_empty() && r.messages.iter().any(|m| m.text().contains(SUMMARY_PROMPT))
}

struct Sim {
    s: Session,
    now: Instant,
    events: Vec<Event>,
    /// Every request with the tokens the simulated provider counted for it.
    requests: Vec<(ChatRequest, u64)>,
    /// The session's own estimate of each request, taken when it went out.
    estimates: Vec<u64>,
}

impl Sim {
    fn new(c: SessionConfig) -> Self {
        Sim {
            s: Session::new(c),
            #[allow(clippy::disallowed_methods)] // a base instant; nothing reads the clock after
            now: Instant::now(),
            events: Vec::new(),
            requests: Vec::new(),
            estimates: Vec::new(),
        }
    }

    /// Drains the session until it waits, answering requests with `provider` (status, body)
    /// and tools with `tool`; checks the history after every action.
    fn drive(
        &mut self,
        provider: &mut dyn FnMut(&ChatRequest, u64) -> (u16, String),
        tool: &mut dyn FnMut(&ToolRun) -> String,
    ) {
        while let Some(action) = self.s.poll() {
            history::validate(self.s.messages()).expect("pairing valid after every step");
            match action {
                Action::SendRequest(r) => {
                    self.estimates.push(self.s.context_usage().tokens);
                    let body: ChatRequest = serde_json::from_slice(&r.body).unwrap();
                    let tokens = r.body.len() as u64 / SIM_BYTES_PER_TOKEN;
                    let (status, answer) = provider(&body, tokens);
                    self.requests.push((body, tokens));
                    let ct = if status == 200 {
                        "text/event-stream"
                    } else {
                        "application/json"
                    };
                    self.s
                        .handle_response_head(
                            self.now,
                            r.id,
                            status,
                            [("content-type", ct.as_bytes())],
                        )
                        .unwrap();
                    self.s
                        .handle_response_data(self.now, r.id, answer.as_bytes())
                        .unwrap();
                    // Complete at [DONE] already: a late end is accepted and ignored.
                    self.s.handle_response_end(self.now, r.id).unwrap();
                }
                Action::RunTool(run) => {
                    let out = tool(&run);
                    self.s
                        .handle_tool_output(
                            self.now,
                            &run.call_id,
                            crate::tool::ToolOutput::ok(out),
                        )
                        .unwrap();
                }
                Action::AskApproval(_) => panic!("auto policy never asks"),
                Action::AbortTool { .. } => panic!("no call outlives its deadline here"),
                Action::AnswerChild { .. } => panic!("no subagents here"),
                Action::TakeCheckpoint(_) => panic!("checkpoints are off here"),
                Action::RunHooks(_) => panic!("no hooks here"),
                Action::Emit(e) => self.events.push(e),
            }
        }
        history::validate(self.s.messages()).expect("history valid at rest");
    }

    fn compactions(&self) -> Vec<&Event> {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::ContextCompacted { .. }))
            .collect()
    }

    fn last_final(&self) -> &Event {
        self.events.iter().rev().find(|e| e.is_final()).unwrap()
    }
}

fn overflow_body(window: u64, tokens: u64) -> String {
    json!({"error": {"message": format!("This model's maximum context length is {window} tokens. However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."), "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}).to_string()
}

/// A provider with `window` tokens that makes `steps` tool calls reading large files, then
/// answers; it answers every summary request with a summary, wherever it comes.
fn tool_heavy_provider(
    window: u64,
    steps: usize,
) -> impl FnMut(&ChatRequest, u64) -> (u16, String) {
    let mut step = 0;
    move |req, tokens| {
        if tokens > window {
            return (400, overflow_body(window, tokens));
        }
        if is_summary_request(req) {
            assert!(req.tools.is_empty(), "the summary request offers no tools");
            return (
                200,
                text(
                    "Goal: refactor the parser. Files: src/f*.rs read. Next: finish.",
                    tokens,
                ),
            );
        }
        step += 1;
        if step > steps {
            (200, text("All done.", tokens))
        } else {
            let args = format!(r#"{{"path":"src/f{step}.rs"}}"#);
            (
                200,
                call(&format!("call_{step}"), "read_file", &args, tokens),
            )
        }
    }
}

fn big_file(run: &ToolRun) -> String {
    format!(
        "// {}\n{}",
        run.arguments,
        "fn item() { let x = parse(input)?; }\n".repeat(150)
    )
}

#[test]
fn fifty_tool_heavy_exchanges_finish_under_a_small_window() {
    let window = 8_000;
    let mut sim = Sim::new(config(Some(window)));
    sim.s.submit(TASK).unwrap();
    sim.drive(&mut tool_heavy_provider(window, 50), &mut big_file);
    assert!(
        matches!(sim.last_final(), Event::TurnFinished { .. }),
        "{:?}",
        sim.last_final()
    );
    for (req, tokens) in &sim.requests {
        assert!(
            *tokens <= window,
            "a request of {tokens} tokens passed the window"
        );
        if !is_summary_request(req) {
            let texts: Vec<String> = req.messages.iter().map(|m| m.text()).collect();
            assert!(
                texts.iter().any(|t| t == TASK),
                "the task survives every compaction"
            );
        }
    }
    let compactions = sim.compactions();
    assert!(compactions.iter().any(|e| matches!(
        e,
        Event::ContextCompacted {
            method: CompactMethod::Summarized,
            ..
        }
    )));
    assert!(compactions.iter().any(|e| matches!(
        e,
        Event::ContextCompacted {
            method: CompactMethod::Pruned,
            ..
        }
    ) || matches!(e, Event::ContextCompacted { pruned, .. } if !pruned.is_empty())));
    for e in &compactions {
        let Event::ContextCompacted {
            tokens_before,
            tokens_after,
            ..
        } = e
        else {
            unreachable!()
        };
        assert!(tokens_after < tokens_before, "{e:?}");
    }
    // no summary text ever reached the user as answer text
    let shown: String = sim
        .events
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(shown, "All done.");
    let first = sim.s.messages()[0].text();
    assert!(first.starts_with(SUMMARY_HEADER));
    assert!(sim.s.context_usage().percent().unwrap() < 85);
}

#[test]
fn estimates_follow_the_provider_counts() {
    let window = 1_000_000;
    let mut sim = Sim::new(config(Some(window)));
    sim.s.submit(TASK).unwrap();
    sim.drive(&mut tool_heavy_provider(window, 30), &mut big_file);
    assert_eq!(sim.estimates.len(), sim.requests.len());
    assert!(sim.requests.len() > 30);
    // The first estimate is conservative (over); every later one is within 15 %.
    let (first_estimate, first_count) = (sim.estimates[0], sim.requests[0].1);
    assert!(
        first_estimate >= first_count,
        "{first_estimate} < {first_count}"
    );
    for (estimate, (_, counted)) in sim.estimates.iter().zip(&sim.requests).skip(1) {
        let err = (*estimate as f64 - *counted as f64).abs() / *counted as f64;
        assert!(err < 0.15, "estimate {estimate} vs counted {counted}");
    }
}

#[test]
fn overflow_learns_the_window_compacts_and_retries_once() {
    let window = 6_000;
    let mut sim = Sim::new(config(None)); // window unknown
    sim.s.submit(TASK).unwrap();
    sim.drive(&mut tool_heavy_provider(window, 12), &mut big_file);
    assert!(
        matches!(sim.last_final(), Event::TurnFinished { .. }),
        "{:?}",
        sim.last_final()
    );
    assert_eq!(
        sim.s.context_usage().window,
        Some(window),
        "learnt from the message"
    );
    let overflowed = sim.requests.iter().filter(|(_, t)| *t > window).count();
    assert_eq!(
        overflowed, 1,
        "after learning the window, the threshold keeps requests under it"
    );
    assert!(sim.compactions().iter().any(|e| matches!(
        e,
        Event::ContextCompacted {
            reason: CompactReason::Overflow,
            ..
        }
    )));
}

#[test]
fn each_overflow_wording_triggers_recovery() {
    let bodies = [
        (400, overflow_body(4096, 5000)),
        (400, json!({"error": {"message": "prompt is too long: 5000 tokens > 4096 maximum"}}).to_string()),
        (400, json!({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error", "n_ctx": 4096}}).to_string()),
        (400, json!({"object": "error", "message": "The decoder prompt (length 5000) is longer than the maximum model length of 4096.", "code": 400}).to_string()),
        (500, json!({"error": "the input length exceeds the context length"}).to_string()),
        (400, json!({"error": {"message": "The input token count (5000) exceeds the maximum number of tokens allowed (4096).", "code": 400}}).to_string()),
        (413, "Request Entity Too Large".to_owned()),
    ];
    for (status, body) in bodies {
        let mut sim = Sim::new(config(None));
        sim.s.submit(TASK).unwrap();
        let mut n = 0;
        sim.drive(
            &mut |req, tokens| {
                n += 1;
                match n {
                    1 => (200, call("c1", "read_file", r#"{"path":"a"}"#, tokens)),
                    2 => (status, body.clone()),
                    _ if is_summary_request(req) => (200, text("the summary", tokens)),
                    _ => (200, text("ok", tokens)),
                }
            },
            &mut big_file,
        );
        assert!(
            matches!(sim.last_final(), Event::TurnFinished { .. }),
            "{status} {body}: {:?}",
            sim.last_final()
        );
        assert_eq!(sim.compactions().len(), 1, "{body}");
        assert_eq!(
            sim.requests
                .iter()
                .filter(|(r, _)| is_summary_request(r))
                .count(),
            1
        );
    }
}

#[test]
fn a_second_overflow_fails_saying_what_was_tried() {
    let mut sim = Sim::new(config(None));
    sim.s.submit(TASK).unwrap();
    sim.drive(
        &mut |req, tokens| {
            if is_summary_request(req) {
                (200, text("the summary", tokens))
            } else {
                (400, overflow_body(100_000, 200_000))
            }
        },
        &mut big_file,
    );
    let Event::TurnFailed { error } = sim.last_final() else {
        panic!("{:?}", sim.last_final())
    };
    assert!(matches!(error, TurnError::ContextOverflow { .. }));
    let msg = error.to_string();
    assert!(msg.contains("compacting the history once"), "{msg}");
    assert!(msg.contains("maximum context length is 100000"), "{msg}");
    assert_eq!(
        sim.requests.len(),
        3,
        "request, summary, one retry — no loop"
    );
    assert_eq!(
        sim.s.messages().last().map(|m| m.text()),
        Some(TASK.to_owned())
    );
}

#[test]
fn a_compaction_that_cannot_shrink_ends_the_turn_cleanly() {
    let mut sim = Sim::new(config(Some(2_000)));
    sim.s.submit("x".repeat(40_000)).unwrap(); // the message alone is over the window
    sim.drive(
        &mut |req, tokens| {
            assert!(
                is_summary_request(req),
                "no step request goes out over the threshold"
            );
            (200, text("the summary", tokens))
        },
        &mut big_file,
    );
    let Event::TurnFailed { error } = sim.last_final() else {
        panic!("{:?}", sim.last_final())
    };
    assert!(
        matches!(error, TurnError::CompactionFailed { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("shorten the message"), "{error}");
    assert!(
        sim.requests.is_empty(),
        "hopeless: not even the summary request goes out"
    );
    assert!(sim.s.is_idle());
    // The session can go on: a short message is still accepted.
    assert_eq!(sim.events.iter().filter(|e| e.is_final()).count(), 1);
}

#[test]
fn compact_on_demand_replaces_the_history_and_finishes() {
    let mut sim = Sim::new(config(Some(100_000)));
    assert_eq!(sim.s.compact(None), Err(SessionError::NothingToCompact));
    sim.s.submit(TASK).unwrap();
    sim.drive(&mut tool_heavy_provider(100_000, 3), &mut big_file);
    let before = sim.s.messages().len();
    sim.s.compact(Some("keep the file list".into())).unwrap();
    sim.drive(
        &mut |req, tokens| {
            assert!(is_summary_request(req));
            let prompt = req.messages.last().unwrap().text();
            assert!(prompt.ends_with("keep the file list"));
            (200, text("the summary", tokens))
        },
        &mut big_file,
    );
    assert!(matches!(sim.last_final(), Event::TurnFinished { .. }));
    let c = sim.compactions();
    assert!(matches!(
        c.last(),
        Some(Event::ContextCompacted {
            reason: CompactReason::Requested,
            method: CompactMethod::Summarized,
            ..
        })
    ));
    let after = sim.s.messages();
    assert!(after.len() < before);
    assert!(after[0].text().contains("the summary"));
    assert!(after.iter().any(|m| m.text() == TASK));
    // The events after the compaction carry the new history, message by message.
    let at = sim
        .events
        .iter()
        .rposition(|e| matches!(e, Event::ContextCompacted { .. }))
        .unwrap();
    let replayed: Vec<&crate::wire::Message> = sim.events[at..]
        .iter()
        .filter_map(|e| match e {
            Event::Message { message } => Some(&**message),
            _ => None,
        })
        .collect();
    assert_eq!(replayed.len(), after.len());
    assert_eq!(
        replayed.into_iter().cloned().collect::<Vec<_>>(),
        after.to_vec()
    );
}

#[test]
fn without_a_window_nothing_is_pruned_before_sending() {
    let mut sim = Sim::new(config(None));
    sim.s.submit(TASK).unwrap();
    sim.drive(&mut tool_heavy_provider(u64::MAX, 10), &mut big_file);
    assert!(sim.compactions().is_empty());
    assert_eq!(sim.s.context_usage().percent(), None);
}

/// Recorded traffic: a tool-heavy session over this repository's own files, each request
/// counted with a real tokenizer (see `core/src/context/traffic/make.mjs`).
const TRAFFIC: &str = include_str!("../context/traffic/session.json");

#[test]
fn estimates_stay_within_15_percent_of_recorded_counts() {
    let traffic: Value = serde_json::from_str(TRAFFIC).unwrap();
    let steps = traffic["steps"].as_array().unwrap().clone();
    let mut c = config(None);
    // The traffic was counted with the tools of its day, before `grep` existed.
    c.tools.retain(|t| t.name != crate::tool::builtin::GREP);
    c.system_prompt = Some(traffic["system"].as_str().unwrap().to_owned());
    let mut sim = Sim::new(c);
    sim.s.submit(traffic["task"].as_str().unwrap()).unwrap();
    let mut n = 0;
    let outputs = steps.clone();
    sim.drive(
        &mut |_req, _tokens| {
            let step = &steps[n];
            n += 1;
            let tokens = step["prompt_tokens"].as_u64().unwrap();
            let a = &step["assistant"];
            let answer = match a["tool_calls"].as_array() {
                Some(calls) => {
                    let f = &calls[0]["function"];
                    call(
                        calls[0]["id"].as_str().unwrap(),
                        f["name"].as_str().unwrap(),
                        f["arguments"].as_str().unwrap(),
                        tokens,
                    )
                }
                None => text(a["content"].as_str().unwrap(), tokens),
            };
            (200, answer)
        },
        &mut |run| {
            outputs
                .iter()
                .find_map(|s| s["outputs"][&run.call_id].as_str())
                .unwrap()
                .to_owned()
        },
    );
    assert!(
        matches!(sim.last_final(), Event::TurnFinished { .. }),
        "{:?}",
        sim.last_final()
    );
    let counted: Vec<u64> = traffic["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["prompt_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(sim.estimates.len(), counted.len());
    assert!(
        sim.estimates[0] >= counted[0],
        "the first estimate over-counts"
    );
    for (k, (estimate, counted)) in sim.estimates.iter().zip(&counted).enumerate().skip(1) {
        let err = (*estimate as f64 - *counted as f64).abs() / *counted as f64;
        assert!(
            err < 0.15,
            "request {k}: estimate {estimate} vs counted {counted}"
        );
    }
}

/// With a known window, tool definitions that fill it make the turn fail with a reason that
/// names the tools and each MCP server's share, not "N bytes over the 0 bytes that fit".
#[test]
fn tools_that_fill_the_window_are_named_with_each_servers_share() {
    let mut c = config(Some(8_000));
    let spec = |name: String| crate::tool::ToolSpec {
        name,
        description: "d".repeat(300),
        parameters: json!({"type": "object"}),
        effect: crate::tool::Effect::ReadOnly,
    };
    c.tools
        .extend((0..200).map(|n| spec(format!("mcp__big__t{n}"))));
    c.tools
        .extend((0..3).map(|n| spec(format!("mcp__small__t{n}"))));
    let mut sim = Sim::new(c);
    sim.s.submit(TASK).unwrap();
    sim.drive(&mut |_, tokens| (200, text("never", tokens)), &mut big_file);
    let Event::TurnFailed { error } = sim.last_final() else {
        panic!("{:?}", sim.last_final())
    };
    let text = error.to_string();
    assert!(
        text.contains("the tool definitions alone take about")
            && text.contains("(MCP server big: ")
            && text.contains(", small: ")
            && text.contains("maxToolBytes"),
        "{text}"
    );
    assert!(!text.contains("over the 0 bytes"), "{text}");
    assert!(sim.requests.is_empty(), "nothing that cannot fit is sent");
}

/// The failure that ends the last turn (a `/compact` that did not happen), as text.
fn failure(sim: &Sim) -> String {
    let Event::TurnFailed { error } = sim.last_final() else {
        panic!("{:?}", sim.last_final())
    };
    assert!(matches!(error, TurnError::NotCompacted { .. }), "{error}");
    error.to_string()
}

#[test]
fn a_summary_answered_with_a_tool_call_says_so() {
    let mut sim = Sim::new(config(Some(100_000)));
    sim.s.submit(TASK).unwrap();
    sim.drive(&mut tool_heavy_provider(100_000, 3), &mut big_file);
    let before = sim.s.messages().to_vec();
    sim.s.compact(None).unwrap();
    sim.drive(
        &mut |req, tokens| {
            assert!(is_summary_request(req));
            (200, call("c9", "read_file", r#"{"path":"x"}"#, tokens))
        },
        &mut |_| panic!("no tool runs for a summary request"),
    );
    let error = failure(&sim);
    assert!(
        error.contains("answered the summary request with a tool call (`read_file`)"),
        "{error}"
    );
    assert!(!error.contains("empty"), "{error}");
    assert_eq!(sim.s.messages(), before.as_slice(), "the history is kept");
}

#[test]
fn compacting_a_short_chat_says_there_is_nothing_worth_compacting() {
    let mut sim = Sim::new(config(Some(100_000)));
    sim.s.submit("hi").unwrap();
    sim.drive(
        &mut |_, tokens| (200, text("Hello! How can I help?", tokens)),
        &mut big_file,
    );
    let events = sim.events.len();
    let Err(e @ SessionError::NothingWorthCompacting { .. }) = sim.s.compact(None) else {
        panic!("a two-message chat is not worth compacting");
    };
    let text = e.to_string();
    assert!(text.contains("nothing worth compacting"), "{text}");
    assert!(!text.contains("window"), "{text}");
    // Nothing was sent or emitted, and the session goes on.
    assert!(sim.s.poll().is_none());
    assert_eq!(sim.events.len(), events);
    assert!(sim.s.is_idle());
    sim.s.submit("and now?").unwrap();
}

#[test]
fn a_summary_as_long_as_the_chat_keeps_it_and_says_why() {
    let mut sim = Sim::new(config(Some(100_000)));
    sim.s.submit(TASK).unwrap();
    sim.drive(&mut tool_heavy_provider(100_000, 3), &mut big_file);
    let before = sim.s.messages().to_vec();
    let long = "Summary. ".repeat(4_000);
    sim.s.compact(None).unwrap();
    sim.drive(&mut |_, tokens| (200, text(&long, tokens)), &mut big_file);
    let error = failure(&sim);
    assert!(error.contains("nothing worth compacting"), "{error}");
    assert!(!error.contains("window"), "{error}");
    assert_eq!(sim.s.messages(), before.as_slice(), "the history is kept");
}

#[test]
fn the_plan_survives_compaction_as_it_was_sent() {
    let mut c = config(Some(100_000));
    c.tools.push(crate::plan::update_plan_spec());
    let mut sim = Sim::new(c);
    sim.s.submit(TASK).unwrap();
    let plan = r#"{"plan":[{"step":"read the parser","status":"completed"},{"step":"split the lexer","status":"in_progress"}]}"#;
    let mut step = 0;
    sim.drive(
        &mut |_req, tokens| {
            step += 1;
            match step {
                1 => (200, call("p1", "update_plan", plan, tokens)),
                2..=4 => {
                    let args = format!(r#"{{"path":"src/f{step}.rs"}}"#);
                    (200, call(&format!("c{step}"), "read_file", &args, tokens))
                }
                _ => (200, text("Working on it.", tokens)),
            }
        },
        &mut |run| {
            assert_eq!(
                run.name, "read_file",
                "the session answers update_plan itself"
            );
            big_file(run)
        },
    );
    assert_eq!(sim.s.plan().unwrap().plan.len(), 2);
    sim.s.submit("go on").unwrap();
    sim.drive(
        &mut |_req, tokens| (200, text("Still working.", tokens)),
        &mut big_file,
    );
    sim.s.compact(None).unwrap();
    sim.drive(
        &mut |_req, tokens| (200, text("a summary that forgets the plan", tokens)),
        &mut big_file,
    );
    let summary = sim.s.messages()[0].text();
    assert!(
        summary.contains("[x] read the parser\n[~] split the lexer"),
        "{summary}"
    );
    assert_eq!(sim.s.plan().unwrap().plan.len(), 2);
}
