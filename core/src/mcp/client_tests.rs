//! Transcripts: steps of a conversation with a scripted server, the server's bytes fed whole
//! and one byte at a time, with every output of the client recorded and compared.

use super::*;
use crate::mcp::jsonrpc::{DecodeError, LineDecoder};

/// One step of a transcript.
#[derive(Debug, Clone)]
enum Step {
    /// Bytes from the server.
    Server(String),
    /// The driver starts the client.
    Start,
    /// The caller calls a tool.
    Call(&'static str, Value),
    /// The caller cancels call n.
    Cancel(i64),
    /// Time passes.
    Advance(Duration),
    /// The server goes away.
    Close,
}

use Step::*;

/// A server line: a JSON value written as one line.
fn line(value: Value) -> Step {
    Server(format!("{value}\n"))
}

/// Everything the client did, in order.
#[derive(Debug, Clone, PartialEq)]
enum Out {
    Sent(Value),
    Event(Event),
    Refused(ClientError),
}

struct Harness {
    client: Client,
    decoder: LineDecoder,
    now: Instant,
    log: Vec<Out>,
}

impl Harness {
    fn new(config: ClientConfig) -> Self {
        Harness {
            client: Client::new(config),
            decoder: LineDecoder::with_max_message_size(4096),
            #[allow(clippy::disallowed_methods)] // a base instant for simulated time
            now: Instant::now(),
            log: Vec::new(),
        }
    }

    fn drain(&mut self) {
        while let Some(action) = self.client.poll() {
            self.log.push(match action {
                Action::Send(message) => Out::Sent(message.to_value()),
                Action::Emit(event) => Out::Event(event),
            });
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.decoder.feed(bytes);
        loop {
            match self.decoder.poll_message() {
                Ok(Some(message)) => self.client.handle_message(self.now, message),
                Ok(None) => break,
                Err(DecodeError::Malformed(e)) => self.client.handle_malformed(&e.to_string()),
                Err(e) => {
                    self.client.handle_closed(e.to_string());
                    break;
                }
            }
            self.drain();
        }
        self.drain();
    }

    fn step(&mut self, step: &Step, bytewise: bool) {
        match step {
            Server(text) if bytewise => {
                for byte in text.as_bytes() {
                    self.feed(std::slice::from_ref(byte));
                }
            }
            Server(text) => self.feed(text.as_bytes()),
            Start => {
                if let Err(e) = self.client.start(self.now) {
                    self.log.push(Out::Refused(e));
                }
            }
            Call(name, args) => {
                if let Err(e) = self.client.call_tool(self.now, name, args.clone()) {
                    self.log.push(Out::Refused(e));
                }
            }
            Cancel(n) => self.client.cancel_call(CallId(*n), "the user interrupted"),
            Advance(d) => {
                self.now += *d;
                if self.client.poll_timeout().is_some_and(|t| t <= self.now) {
                    self.client.handle_timeout(self.now);
                }
            }
            Close => self.client.handle_closed("the process exited"),
        }
        self.drain();
    }
}

fn config() -> ClientConfig {
    let mut config = ClientConfig::new("time");
    config.client_version = "test".into();
    config.roots = vec![Root {
        uri: file_uri("/work space"),
        name: Some("workspace".into()),
    }];
    config.request_timeout = Duration::from_secs(5);
    config.call_timeout = Duration::from_secs(60);
    config
}

/// Runs the steps whole and byte by byte; both must give the same log, which is returned.
fn run(steps: &[Step]) -> (Vec<Out>, Client) {
    run_with(config(), steps)
}

/// [`run`] with another configuration.
fn run_with(config: ClientConfig, steps: &[Step]) -> (Vec<Out>, Client) {
    let mut whole = Harness::new(config.clone());
    for step in steps {
        whole.step(step, false);
    }
    let mut bytewise = Harness::new(config);
    for step in steps {
        bytewise.step(step, true);
    }
    assert_eq!(whole.log, bytewise.log, "byte by byte differs");
    (whole.log, whole.client)
}

fn sent(log: &[Out]) -> Vec<&Value> {
    log.iter()
        .filter_map(|o| match o {
            Out::Sent(v) => Some(v),
            Out::Event(_) | Out::Refused(_) => None,
        })
        .collect()
}

fn events(log: &[Out]) -> Vec<&Event> {
    log.iter()
        .filter_map(|o| match o {
            Out::Event(e) => Some(e),
            Out::Sent(_) | Out::Refused(_) => None,
        })
        .collect()
}

fn init_answer(version: &str) -> Step {
    line(json!({"jsonrpc": "2.0", "id": 0, "result": {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": true}},
        "serverInfo": {"name": "time-server", "version": "1.0"},
        "instructions": "Ask for times."
    }}))
}

fn tools_page(id: i64, names: &[&str], cursor: Option<&str>) -> Step {
    let tools: Vec<Value> = names
        .iter()
        .map(|n| {
            json!({"name": n, "description": format!("tool {n}"),
                        "inputSchema": {"type": "object"},
                        "annotations": {"readOnlyHint": *n == "get_time"}})
        })
        .collect();
    let mut result = json!({"tools": tools});
    if let Some(cursor) = cursor {
        result["nextCursor"] = json!(cursor);
    }
    line(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// The handshake up to Ready with tools `get_time` and `convert`, listed over two pages.
fn handshake() -> Vec<Step> {
    vec![
        Start,
        init_answer("2025-06-18"),
        tools_page(1, &["get_time"], Some("page2")),
        tools_page(2, &["convert"], None),
    ]
}

#[test]
fn handshake_negotiates_and_lists_all_pages() {
    let (log, client) = run(&handshake());
    let sent = sent(&log);
    assert_eq!(sent[0]["method"], "initialize");
    assert_eq!(sent[0]["params"]["protocolVersion"], "2025-06-18");
    assert_eq!(
        sent[0]["params"]["capabilities"],
        json!({"roots": {"listChanged": false}})
    );
    assert_eq!(
        sent[0]["params"]["clientInfo"],
        json!({"name": "hrns", "version": "test"})
    );
    assert_eq!(
        sent[1],
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    );
    assert_eq!(
        sent[2],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    );
    assert_eq!(sent[3]["params"], json!({"cursor": "page2"}));
    assert_eq!(events(&log), [&Event::Ready]);
    assert_eq!(client.phase(), &Phase::Ready);
    assert_eq!(client.protocol_version(), Some("2025-06-18"));
    assert_eq!(client.instructions(), Some("Ask for times."));
    let names: Vec<&str> = client.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["get_time", "convert"]);
    assert_eq!(client.tools()[0].read_only_hint, Some(true));
    assert_eq!(client.poll_timeout(), None, "nothing in flight");
}

#[test]
fn older_versions_are_accepted_and_unknown_ones_fail() {
    for version in ["2025-03-26", "2024-11-05"] {
        let (_, client) = run(&[Start, init_answer(version), tools_page(1, &[], None)]);
        assert_eq!(client.protocol_version(), Some(version));
        assert_eq!(client.phase(), &Phase::Ready);
    }
    let (log, client) = run(&[
        Start,
        init_answer("1999-01-01"),
        Call("get_time", json!({})),
    ]);
    let failure = Failure::UnsupportedVersion {
        version: "1999-01-01".into(),
    };
    assert_eq!(events(&log), [&Event::Failed(failure.clone())]);
    assert_eq!(client.phase(), &Phase::Failed(failure.clone()));
    assert_eq!(
        log.last(),
        Some(&Out::Refused(ClientError::Failed(failure)))
    );
    assert_eq!(sent(&log).len(), 1, "nothing sent after the refusal");
}

#[test]
fn a_server_without_tools_is_ready_at_once() {
    let answer = line(json!({"jsonrpc": "2.0", "id": 0, "result": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "x"}}}));
    let (log, client) = run(&[Start, answer]);
    assert_eq!(events(&log), [&Event::Ready]);
    assert!(client.tools().is_empty());
    assert_eq!(sent(&log).len(), 2, "no tools/list");
}

#[test]
fn a_call_with_progress_and_a_result() {
    let mut steps = handshake();
    steps.extend([
        Call("get_time", json!({"timezone": "UTC"})),
        line(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": 3, "progress": 1, "total": 2, "message": "half"}})),
        line(json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "working"}})),
        line(json!({"jsonrpc": "2.0", "id": 3, "result": {
            "content": [{"type": "text", "text": "12:00"}], "structuredContent": {"t": "12:00"}}})),
    ]);
    let (log, _) = run(&steps);
    let call = sent(&log)[4];
    assert_eq!(call["method"], "tools/call");
    assert_eq!(
        call["params"],
        json!({"name": "get_time", "arguments": {"timezone": "UTC"},
                                      "_meta": {"progressToken": 3}})
    );
    assert_eq!(
        events(&log)[1..],
        [
            &Event::Progress {
                call: CallId(3),
                progress: 1.0,
                total: Some(2.0),
                message: Some("half".into())
            },
            &Event::Log {
                level: "info".into(),
                text: "working".into()
            },
            &Event::CallFinished {
                call: CallId(3),
                output: ToolOutput::ok("12:00")
            },
        ]
    );
}

#[test]
fn tool_errors_and_refusals_are_error_results() {
    let mut steps = handshake();
    steps.extend([
        Call("get_time", json!({})),
        Call("nope", json!({})),
        line(json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "Unknown tool: nope"}})),
        line(json!({"jsonrpc": "2.0", "id": 3, "result": {
            "content": [{"type": "text", "text": "bad zone"}], "isError": true}})),
    ]);
    let (log, _) = run(&steps);
    assert_eq!(
        events(&log)[1..],
        [
            &Event::CallFinished {
                call: CallId(4),
                output: ToolOutput::error(
                    "The MCP server time refused the call: Unknown tool: nope (code -32602)."
                )
            },
            &Event::CallFinished {
                call: CallId(3),
                output: ToolOutput::error("bad zone")
            },
        ]
    );
}

#[test]
fn server_requests_are_answered_even_before_the_handshake_ends() {
    let steps = [
        Start,
        line(json!({"jsonrpc": "2.0", "id": "p1", "method": "ping"})),
        init_answer("2025-06-18"),
        line(json!({"jsonrpc": "2.0", "id": 9, "method": "roots/list"})),
        line(json!({"jsonrpc": "2.0", "id": 10, "method": "sampling/createMessage", "params": {}})),
        tools_page(1, &["get_time"], None),
    ];
    let (log, client) = run(&steps);
    let sent = sent(&log);
    assert_eq!(
        sent[1],
        &json!({"jsonrpc": "2.0", "id": "p1", "result": {}})
    );
    assert_eq!(
        sent[4],
        &json!({"jsonrpc": "2.0", "id": 9, "result": {"roots": [
            {"uri": "file:///work%20space", "name": "workspace"}]}})
    );
    assert_eq!(sent[5]["error"]["code"], json!(-32601));
    assert_eq!(sent[5]["id"], json!(10));
    assert_eq!(client.phase(), &Phase::Ready);
}

#[test]
fn list_changed_lists_again_once_even_when_it_comes_during_a_listing() {
    let mut steps = vec![
        Start,
        init_answer("2025-06-18"),
        line(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})),
        tools_page(1, &["a"], None),
        // The notification during the first listing asks for a second one.
        line(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})),
        line(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})),
        tools_page(2, &["a", "b"], None),
    ];
    steps.push(tools_page(3, &["c"], None));
    let (log, client) = run(&steps);
    let lists = sent(&log)
        .iter()
        .filter(|m| m["method"] == "tools/list")
        .count();
    assert_eq!(lists, 3);
    assert_eq!(
        events(&log),
        [&Event::Ready, &Event::ToolsChanged, &Event::ToolsChanged]
    );
    assert_eq!(client.tools()[0].name, "c");
}

#[test]
fn a_failed_refresh_keeps_the_earlier_tools() {
    let mut steps = handshake();
    steps.extend([
        line(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})),
        line(json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -1, "message": "busy"}})),
    ]);
    let (log, client) = run(&steps);
    assert!(matches!(events(&log)[1], Event::Log { level, .. } if level == "warning"));
    assert_eq!(client.phase(), &Phase::Ready);
    assert_eq!(client.tools().len(), 2);
}

/// The handshake, then a call (id 3) whose tool changes the server's tools: the server says
/// so (list_changed, so the client lists again with id 4) just before it answers.
fn a_call_that_changes_the_tools() -> Vec<Step> {
    let mut steps = handshake();
    steps.extend([
        Call("convert", json!({})),
        line(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})),
        line(json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "grown"}]}})),
    ]);
    steps
}

fn grown() -> Event {
    Event::CallFinished {
        call: CallId(3),
        output: ToolOutput::ok("grown"),
    }
}

#[test]
fn a_call_answered_during_a_refresh_is_reported_after_the_new_tools() {
    let mut steps = a_call_that_changes_the_tools();
    let (log, _) = run(&steps);
    assert_eq!(events(&log), [&Event::Ready], "held until the listing ends");
    steps.push(tools_page(4, &["get_time", "convert", "extra"], None));
    let (log, client) = run(&steps);
    assert_eq!(
        events(&log),
        [&Event::Ready, &Event::ToolsChanged, &grown()]
    );
    assert_eq!(client.tools().len(), 3);
}

#[test]
fn a_held_answer_is_released_when_the_refresh_fails_or_the_server_dies_or_on_cancel() {
    for end in [
        line(json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -1, "message": "busy"}})),
        Advance(Duration::from_secs(6)),
        Close,
        Cancel(3),
    ] {
        let mut steps = a_call_that_changes_the_tools();
        steps.push(end.clone());
        let (log, client) = run(&steps);
        let finished: Vec<&Event> = events(&log)
            .into_iter()
            .filter(|e| matches!(e, Event::CallFinished { .. }))
            .collect();
        assert_eq!(finished, [&grown()], "the answer stands, once: {end:?}");
        assert_eq!(client.tools().len(), 2, "{end:?}");
    }
}

#[test]
fn cancelling_a_call_notifies_the_server_and_drops_the_late_answer() {
    let mut steps = handshake();
    steps.extend([
        Call("get_time", json!({})),
        Cancel(3),
        Cancel(3),
        line(json!({"jsonrpc": "2.0", "id": 3, "result": {"content": []}})),
    ]);
    let (log, client) = run(&steps);
    assert_eq!(
        sent(&log)[5],
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 3, "reason": "the user interrupted"}})
    );
    assert_eq!(
        events(&log)[1..],
        [&Event::CallFinished {
            call: CallId(3),
            output: ToolOutput::error("The call was cancelled: the user interrupted.")
        }],
        "one end for the call, no warning about the late answer"
    );
    assert_eq!(client.calls_in_flight().count(), 0);
}

#[test]
fn a_server_that_never_answers_times_out() {
    let (log, client) = run(&[
        Start,
        Advance(Duration::from_secs(4)),
        Advance(Duration::from_secs(1)),
    ]);
    let failure = Failure::Timeout {
        method: "initialize",
        timeout: Duration::from_secs(5),
    };
    assert_eq!(events(&log), [&Event::Failed(failure.clone())]);
    assert!(
        failure
            .to_string()
            .contains("initialize within 5 s (\"startTimeout\""),
        "{failure}"
    );
    assert_eq!(client.poll_timeout(), None);
    // A late answer changes nothing.
    let mut h = Harness::new(config());
    h.step(&Start, false);
    h.step(&Advance(Duration::from_secs(5)), false);
    h.step(&init_answer("2025-06-18"), false);
    assert_eq!(h.client.phase(), &Phase::Failed(failure));
}

#[test]
fn the_start_deadline_fails_a_server_still_listing_and_names_the_key() {
    let mut h = Harness::new(config());
    h.step(&Start, false);
    h.step(&init_answer("2025-06-18"), false);
    assert_eq!(h.client.phase(), &Phase::Listing);
    h.step(&Advance(Duration::from_secs(3)), false);
    h.client.handle_start_deadline(Duration::from_secs(3));
    h.drain();
    let failure = Failure::NotReady {
        timeout: Duration::from_secs(3),
    };
    assert_eq!(h.client.phase(), &Phase::Failed(failure.clone()));
    assert_eq!(
        events(&h.log).last(),
        Some(&&Event::Failed(failure.clone()))
    );
    assert!(
        failure.to_string().contains("\"startTimeout\""),
        "{failure}"
    );
    // A ready client, or one that failed already, is left as it is.
    let (_, mut ready) = run(&handshake());
    ready.handle_start_deadline(Duration::from_secs(3));
    assert_eq!(ready.phase(), &Phase::Ready);
    assert_eq!(ready.poll(), None);
}

#[test]
fn a_slow_call_times_out_but_progress_keeps_it_alive() {
    let mut steps = handshake();
    steps.extend([
        Call("get_time", json!({})),
        Advance(Duration::from_secs(50)),
        line(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": 3, "progress": 1}})),
        Advance(Duration::from_secs(50)),
        Advance(Duration::from_secs(10)),
    ]);
    let (log, client) = run(&steps);
    let evs = events(&log);
    assert!(matches!(evs[1], Event::Progress { .. }));
    match evs[2] {
        Event::CallFinished { call, output } => {
            assert_eq!(*call, CallId(3));
            assert!(
                output.is_error
                    && output.content.contains("MCP server time")
                    && output
                        .content
                        .contains("within 60 s (the limit its \"timeout\""),
                "{output:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        sent(&log).last().unwrap()["method"],
        "notifications/cancelled"
    );
    assert_eq!(
        client.phase(),
        &Phase::Ready,
        "a slow call does not fail the server"
    );
}

#[test]
fn a_server_that_dies_mid_call_ends_the_call_and_fails_once() {
    let mut steps = handshake();
    steps.extend([
        Call("get_time", json!({})),
        Close,
        Close,
        Call("get_time", json!({})),
    ]);
    let (log, _) = run(&steps);
    let evs = events(&log);
    assert_eq!(evs.len(), 3);
    match evs[1] {
        Event::CallFinished { output, .. } => {
            assert!(
                output.is_error && output.content.contains("process exited"),
                "{output:?}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(evs[2], Event::Failed(Failure::Closed { .. })));
    assert!(matches!(
        log.last(),
        Some(Out::Refused(ClientError::Failed(_)))
    ));
}

#[test]
fn hostile_input_is_dropped_with_a_note() {
    let mut steps = handshake();
    steps.extend([
        Server("this is not JSON\n".into()),
        line(json!({"jsonrpc": "2.0", "id": 77, "result": {}})),
        line(json!({"jsonrpc": "2.0", "id": "zz", "result": {}})),
        line(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse"}})),
        line(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 999}})),
        line(json!({"jsonrpc": "2.0", "method": "notifications/unknown"})),
        Server(format!("{{\"jsonrpc\":\"2.0\",\"method\":\"{}\"}}\n", "x".repeat(5000))),
    ]);
    let (log, client) = run(&steps);
    let evs = events(&log);
    let warnings = evs
        .iter()
        .filter(|e| matches!(e, Event::Log { level, .. } if level == "warning"))
        .count();
    assert_eq!(warnings, 4, "{evs:?}");
    assert!(
        matches!(evs.last(), Some(Event::Failed(Failure::Closed { reason })) if reason.contains("4096-byte"))
    );
    assert!(matches!(client.phase(), Phase::Failed(_)));
}

#[test]
fn misuse_is_refused() {
    let (log, _) = run(&[Call("x", json!({})), Start, Start, Call("x", json!({}))]);
    let refused: Vec<&Out> = log
        .iter()
        .filter(|o| matches!(o, Out::Refused(_)))
        .collect();
    assert_eq!(
        refused,
        [
            &Out::Refused(ClientError::NotReady),
            &Out::Refused(ClientError::AlreadyStarted),
            &Out::Refused(ClientError::NotReady)
        ]
    );
}

#[test]
fn endless_pagination_fails_the_server() {
    let mut steps = vec![Start, init_answer("2025-06-18")];
    steps.push(tools_page(1, &["a"], Some("same")));
    steps.push(tools_page(2, &["b"], Some("same")));
    let (log, _) = run(&steps);
    assert!(matches!(
        events(&log)[..],
        [Event::Failed(Failure::Malformed {
            method: "tools/list",
            ..
        })]
    ));
}

#[test]
fn an_expired_session_ends_calls_and_starts_again() {
    let mut h = Harness::new(config());
    for step in handshake() {
        h.step(&step, false);
    }
    h.step(&Call("get_time", json!({})), false);
    h.client.handle_session_expired(h.now);
    h.drain();
    assert_eq!(h.client.phase(), &Phase::Initializing);
    assert_eq!(h.client.calls_in_flight().count(), 0);
    let last = &h.log[h.log.len() - 2..];
    assert!(
        matches!(&last[0], Out::Event(Event::CallFinished { call: CallId(3), output }) if output.is_error),
        "{last:?}"
    );
    assert!(matches!(&last[1], Out::Sent(m) if m["method"] == "initialize" && m["id"] == 4));
    // The late answer to the old call is dropped quietly; the new handshake completes.
    h.step(
        &line(json!({"jsonrpc": "2.0", "id": 3, "result": {"content": []}})),
        false,
    );
    h.step(
        &line(json!({"jsonrpc": "2.0", "id": 4, "result": {
        "protocolVersion": "2025-03-26", "capabilities": {"tools": {}}}})),
        false,
    );
    h.step(&tools_page(5, &["only"], None), false);
    assert_eq!(h.client.phase(), &Phase::Ready);
    assert_eq!(h.client.protocol_version(), Some("2025-03-26"));
    assert_eq!(h.client.tools()[0].name, "only");
    assert_eq!(h.log.last(), Some(&Out::Event(Event::Ready)));
}

#[test]
fn file_uris_are_percent_encoded() {
    assert_eq!(file_uri("/a b/ü#"), "file:///a%20b/%C3%BC%23");
}

/// The MCP specification: "Implementations SHOULD always enforce a maximum timeout, regardless
/// of progress notifications". A server that reports progress every 30 s for ever has its call
/// ended at the total limit, with a text naming that limit's key.
#[test]
fn progress_for_ever_ends_at_the_total_limit() {
    let mut config = config();
    config.limits.total_timeout = Duration::from_secs(120);
    let mut steps = handshake();
    steps.push(Call("get_time", json!({})));
    for n in 0..10 {
        steps.push(Advance(Duration::from_secs(30)));
        steps.push(line(
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                               "params": {"progressToken": 3, "progress": n}}),
        ));
    }
    let (log, client) = run_with(config, &steps);
    let finished: Vec<(usize, &Event)> = events(&log)
        .into_iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Event::CallFinished { .. }))
        .collect();
    assert_eq!(finished.len(), 1, "{log:?}");
    let (at, Event::CallFinished { call, output }) = finished[0] else {
        unreachable!()
    };
    assert_eq!(*call, CallId(3));
    assert!(
        output.is_error
            && output.content.contains("within 120 s in all")
            && output.content.contains("\"totalTimeout\""),
        "{output:?}"
    );
    // Ready, then progress at 30, 60 and 90 s; at 120 s the call ends, before the progress
    // reported then (which belongs to no call any more).
    let progress_before = events(&log)[..at]
        .iter()
        .filter(|e| matches!(e, Event::Progress { .. }))
        .count();
    assert_eq!(progress_before, 3);
    assert_eq!(client.calls_in_flight().count(), 0);
    assert_eq!(client.poll_timeout(), None);
}

/// A server listing more tools than its `maxTools`, or more bytes of definitions than its
/// `maxToolBytes`, gets the first ones that fit; what was left out is counted for a warning
/// that names the server and the key.
#[test]
fn a_listing_is_cut_to_the_limits_with_a_warning() {
    let names: Vec<String> = (0..5000).map(|n| format!("t{n}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut config = config();
    config.limits.max_tools = 128;
    // One page of 5 000 tools: past this harness's usual message size, so fed whole only.
    let mut h = Harness::new(config.clone());
    h.decoder = LineDecoder::with_max_message_size(1 << 20);
    for step in [
        Start,
        init_answer("2025-06-18"),
        tools_page(1, &names, None),
    ] {
        h.step(&step, false);
    }
    let (log, client) = (h.log, h.client);
    assert_eq!(client.tools().len(), 128);
    let left = *client.tools_left_out();
    assert_eq!(
        (left.listed, left.over_count, left.over_bytes),
        (5000, 4872, 0)
    );
    let warning = left.warning("time", &config.limits).unwrap();
    assert!(
        warning.starts_with("MCP server time lists 5000 tools; 128 are used")
            && warning.contains("4872 past the limit of 128 tools (\"maxTools\")"),
        "{warning}"
    );
    assert!(
        events(&log)
            .iter()
            .any(|e| matches!(e, Event::Log { text, .. } if *text == warning))
    );
    // Bytes: each tool here is 26 or 28 bytes of definition (name, description, schema).
    config.limits.max_tools = 1000;
    config.limits.max_tool_bytes = 130;
    let (_, client) = run_with(
        config.clone(),
        &[
            Start,
            init_answer("2025-06-18"),
            tools_page(1, &names[..30], None),
        ],
    );
    let kept = client.tools().len();
    assert_eq!(kept, 5);
    let left = *client.tools_left_out();
    assert_eq!(left.over_bytes, 25);
    assert!(
        left.warning("time", &config.limits)
            .unwrap()
            .contains("\"maxToolBytes\"")
    );
    // Within the limits: nothing to say.
    let (_, client) = run(&handshake());
    assert!(!client.tools_left_out().any());
    assert_eq!(
        client.tools_left_out().warning("time", &config.limits),
        None
    );
}
