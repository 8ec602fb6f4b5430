//! Vectors for the ACP framing, message sorting, event mapping and permissions, each framing
//! vector fed whole and one byte at a time.

use super::frame::{FrameError, LineDecoder};
use super::methods::{ClientCall, ContentBlock, McpServer, file_uri_path};
use super::permission::Permissions;
use super::rpc::{self, Incoming};
use super::update::{FileChange, StopReason, Updates, replay, tool_kind, usage_update};
use crate::secrets::Secrets;
use crate::session::{Approval, Event, ToolStatus, TurnError};
use crate::tool::ToolOutput;
use serde_json::{Value, json};

/// What the decoder handed out, line by line.
type Lines = Vec<Result<Vec<u8>, FrameError>>;

/// Every line or error of `input`, fed in pieces of `step` bytes.
fn lines(input: &[u8], step: usize, max: usize) -> Lines {
    let mut d = LineDecoder::new(max);
    let mut out = Vec::new();
    let drain = |d: &mut LineDecoder, out: &mut Vec<_>| {
        loop {
            match d.poll_line() {
                Ok(Some(line)) => out.push(Ok(line)),
                Ok(None) => break,
                Err(e) => out.push(Err(e)),
            }
        }
    };
    for piece in input.chunks(step.max(1)) {
        d.feed(piece);
        drain(&mut d, &mut out);
    }
    d.feed_eof();
    drain(&mut d, &mut out);
    out
}

#[test]
fn framing_vectors_whole_and_byte_by_byte() {
    let ok = |s: &str| Ok(s.as_bytes().to_vec());
    let cases: Vec<(&[u8], usize, Lines)> = vec![
        (b"{\"a\":1}\n", 100, vec![ok("{\"a\":1}")]),
        (b"{}\r\n\n  \n{}\n", 100, vec![ok("{}"), ok("{}")]),
        (b"{}", 100, vec![Err(FrameError::Truncated { bytes: 2 })]),
        (
            b"0123456789\n{}\n",
            5,
            vec![Err(FrameError::TooLong { limit: 5 }), ok("{}")],
        ),
        (
            b"{}\n0123456789abcdef\n{}\n",
            5,
            vec![ok("{}"), Err(FrameError::TooLong { limit: 5 }), ok("{}")],
        ),
        (b"\xff\xfe\n", 100, vec![Ok(vec![0xff, 0xfe])]),
        // Two lines past the limit in one read (found by the acp_decoder fuzz target).
        (
            b"0123456789\nabcdefghij\n{}\n",
            5,
            vec![
                Err(FrameError::TooLong { limit: 5 }),
                Err(FrameError::TooLong { limit: 5 }),
                ok("{}"),
            ],
        ),
        (b"12345\r\n", 5, vec![ok("12345")]),
    ];
    for (input, max, want) in cases {
        for step in [input.len(), 1, 3] {
            assert_eq!(
                lines(input, step, max),
                want,
                "{:?} in pieces of {step}",
                String::from_utf8_lossy(input)
            );
        }
    }
}

#[test]
fn a_huge_line_does_not_grow_the_buffer() {
    let mut d = LineDecoder::new(1024);
    for _ in 0..1000 {
        d.feed(&[b'x'; 4096]);
        while let Ok(Some(_)) = d.poll_line() {}
    }
    d.feed(b"\n{}\n");
    let mut got = Vec::new();
    loop {
        match d.poll_line() {
            Ok(Some(l)) => got.push(l),
            Ok(None) => break,
            Err(_) => {}
        }
    }
    assert_eq!(got, vec![b"{}".to_vec()]);
}

#[test]
fn messages_are_sorted_and_bad_ones_answered() {
    let parse = |s: &str| rpc::parse(s.as_bytes());
    assert_eq!(
        parse(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
        Ok(Incoming::Request {
            id: json!(1),
            method: "initialize".into(),
            params: json!({})
        })
    );
    assert!(matches!(
        parse(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#),
        Ok(Incoming::Notification { .. })
    ));
    assert!(matches!(
        parse(r#"{"jsonrpc":"2.0","id":"x","result":{"outcome":{"outcome":"cancelled"}}}"#),
        Ok(Incoming::Response { outcome: Ok(_), .. })
    ));
    assert!(matches!(
        parse(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}"#),
        Ok(Incoming::Response {
            outcome: Err(_),
            ..
        })
    ));
    let bad = [
        ("{not json", rpc::PARSE_ERROR, Value::Null),
        ("[1,2]", rpc::INVALID_REQUEST, Value::Null),
        ("42", rpc::INVALID_REQUEST, Value::Null),
        (r#"{"id":7,"method":"x"}"#, rpc::INVALID_REQUEST, json!(7)),
        (
            r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#,
            rpc::INVALID_REQUEST,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
            rpc::INVALID_REQUEST,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":5}"#,
            rpc::INVALID_REQUEST,
            json!(2),
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"x","params":3}"#,
            rpc::INVALID_REQUEST,
            json!(2),
        ),
        (r#"{"jsonrpc":"2.0"}"#, rpc::INVALID_REQUEST, Value::Null),
        (
            r#"{"jsonrpc":"2.0","id":4}"#,
            rpc::INVALID_REQUEST,
            json!(4),
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"result":1,"error":{}}"#,
            rpc::INVALID_REQUEST,
            json!(4),
        ),
    ];
    for (line, code, id) in bad {
        let m = parse(line).unwrap_err();
        assert_eq!((m.error.code, &m.id), (code, &id), "{line}");
        // The answer is itself a valid JSON-RPC error line.
        let answer: Value = serde_json::from_str(&rpc::encode_error(&m.id, &m.error)).unwrap();
        assert_eq!(answer["error"]["code"], code);
    }
}

#[test]
fn calls_decode_or_say_what_is_wrong() {
    let call = ClientCall::decode(
        "session/prompt",
        json!({"sessionId": "s1", "prompt": [
            {"type": "text", "text": "hi"},
            {"type": "resource_link", "uri": "file:///w/a%20b.rs", "name": "a b.rs"},
            {"type": "resource", "resource": {"uri": "file:///w/c.rs", "text": "fn c() {}"}},
            {"type": "image", "data": "aGk=", "mimeType": "image/png"}
        ]}),
    )
    .unwrap();
    let ClientCall::Prompt(p) = call else {
        panic!("not a prompt");
    };
    assert_eq!(p.session_id, "s1");
    assert_eq!(p.prompt.len(), 4);
    assert!(
        matches!(&p.prompt[1], ContentBlock::ResourceLink { uri, .. } if uri.ends_with("a%20b.rs"))
    );
    let new = ClientCall::decode(
        "session/new",
        json!({"cwd": "/w", "mcpServers": [
            {"name": "a", "command": "srv", "args": ["-x"], "env": [{"name": "K", "value": "v"}]},
            {"type": "http", "name": "b", "url": "http://h/mcp", "headers": []}
        ]}),
    )
    .unwrap();
    let ClientCall::NewSession(n) = new else {
        panic!("not new");
    };
    assert!(matches!(n.mcp_servers[0], McpServer::Stdio { .. }));
    assert!(matches!(n.mcp_servers[1], McpServer::Http { .. }));
    let unknown = ClientCall::decode("session/fly", json!({})).unwrap_err();
    assert_eq!(unknown.code, rpc::METHOD_NOT_FOUND);
    assert!(
        unknown.message.contains("session/fly"),
        "{}",
        unknown.message
    );
    let missing = ClientCall::decode("session/prompt", json!({"sessionId": "s"})).unwrap_err();
    assert_eq!(missing.code, rpc::INVALID_PARAMS);
    assert!(missing.message.contains("prompt"), "{}", missing.message);
    let wrong = ClientCall::decode("session/new", Value::Null).unwrap_err();
    assert_eq!(wrong.code, rpc::INVALID_PARAMS);
    assert_eq!(
        file_uri_path("file:///w/a%20b.rs").as_deref(),
        Some("/w/a b.rs")
    );
    assert_eq!(file_uri_path("file://localhost/x").as_deref(), Some("/x"));
    assert_eq!(file_uri_path("https://x/y"), None);
    assert_eq!(file_uri_path("file:///bad%zz"), None);
}

fn delta(text: &str) -> Event {
    Event::TextDelta { text: text.into() }
}

fn texts(updates: &[Value]) -> String {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_secret_split_over_deltas_is_hidden() {
    let mut secrets = Secrets::new();
    secrets.add("sk-SECRET-split-4242");
    let answer = "the key is sk-SECRET-split-4242, done";
    for step in [1, 2, 5, answer.len()] {
        let mut u = Updates::new("/w");
        let mut out = Vec::new();
        let bytes = answer.as_bytes();
        for piece in bytes.chunks(step) {
            u.on_event(
                &secrets,
                &delta(std::str::from_utf8(piece).unwrap()),
                None,
                &mut out,
            );
        }
        let finished = Event::TurnFinished {
            finish_reason: None,
            usage: None,
            output: None,
        };
        u.on_event(&secrets, &finished, None, &mut out);
        let shown = texts(&out);
        assert!(!shown.contains("SECRET"), "step {step}: {shown}");
        assert!(
            shown.starts_with("the key is ") && shown.ends_with(", done"),
            "{shown}"
        );
        assert_eq!(u.stop(&finished), Some(Ok(StopReason::EndTurn)));
    }
}

/// Every update that is not a streamed chunk (a call's announcement and title, its result and
/// diff, the plan, the permission question) hides the session's secrets and keeps the words
/// of values that are not secrets.
#[test]
fn every_other_update_hides_secrets_and_keeps_ordinary_words() {
    let key = "sk-acp-a7Kq9xZ2mB4nW8pL";
    let mut secrets = Secrets::new();
    secrets.add(key);
    secrets.add_named("NODE_ENV", "production");
    let mut u = Updates::new("/w");
    let mut out = Vec::new();
    let args = json!({"command": format!("deploy production --key {key}")}).to_string();
    let call = Event::ToolCall {
        id: "c1".into(),
        name: "run_command".into(),
        arguments: args.clone(),
    };
    u.on_event(&secrets, &call, None, &mut out);
    u.end_batch(&secrets, &mut out);
    let change = FileChange {
        path: "/w/.env".into(),
        old_text: Some("MODE=production\n".into()),
        new_text: format!("MODE=production\nKEY={key}\n"),
    };
    let result = Event::ToolResult {
        id: "c1".into(),
        name: "run_command".into(),
        status: ToolStatus::Ok,
        output: ToolOutput::ok(format!("production deployed with {key}")),
    };
    u.on_event(&secrets, &result, None, &mut out);
    let write = json!({"path": ".env", "content": change.new_text}).to_string();
    let call = Event::ToolCall {
        id: "c2".into(),
        name: "write_file".into(),
        arguments: write,
    };
    u.on_event(&secrets, &call, None, &mut out);
    u.end_batch(&secrets, &mut out);
    let result = Event::ToolResult {
        id: "c2".into(),
        name: "write_file".into(),
        status: ToolStatus::Ok,
        output: ToolOutput::ok("wrote .env (production)"),
    };
    u.on_event(&secrets, &result, Some(&change), &mut out);
    let plan = Event::PlanUpdated {
        explanation: None,
        plan: vec![crate::plan::PlanStep {
            step: format!("rotate {key} in production"),
            status: crate::plan::StepStatus::Pending,
        }],
    };
    u.on_event(&secrets, &plan, None, &mut out);
    out.push(super::update::permission_request(
        &secrets,
        "/w",
        "s1",
        "c1",
        "run_command",
        &args,
    ));
    let kinds: Vec<&str> = out
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap_or("permission"))
        .collect();
    assert_eq!(
        kinds,
        [
            "tool_call",
            "tool_call_update",
            "tool_call_update",
            "tool_call",
            "tool_call_update",
            "tool_call_update",
            "plan",
            "permission"
        ]
    );
    for update in &out {
        let text = update.to_string();
        assert!(!text.contains("a7Kq9xZ2"), "{text}");
        // All but the bare `in_progress` updates carry the words and the key.
        if update["status"] != "in_progress" {
            assert!(text.contains("production"), "{text}");
            assert!(text.contains("[redacted]"), "{text}");
        }
    }
    assert_eq!(out[0]["title"], "Run deploy production --key [redacted]");
    assert_eq!(
        out[5]["content"][1]["newText"],
        "MODE=production\nKEY=[redacted]\n"
    );
}

#[test]
fn a_tool_call_goes_pending_in_progress_completed_with_its_diff() {
    let secrets = Secrets::new();
    let mut u = Updates::new("/w");
    let mut out = Vec::new();
    u.on_event(&secrets, &delta("editing"), None, &mut out);
    u.on_event(
        &secrets,
        &Event::ToolCall {
            id: "c1".into(),
            name: "edit_file".into(),
            arguments: r#"{"path":"a.txt","old_string":"a","new_string":"b"}"#.into(),
        },
        None,
        &mut out,
    );
    u.end_batch(&secrets, &mut out);
    let change = FileChange {
        path: "/w/a.txt".into(),
        old_text: Some("a\n".into()),
        new_text: "b\n".into(),
    };
    u.on_event(
        &secrets,
        &Event::ToolResult {
            id: "c1".into(),
            name: "edit_file".into(),
            status: ToolStatus::Ok,
            output: ToolOutput::ok("edited a.txt"),
        },
        Some(&change),
        &mut out,
    );
    let kinds: Vec<&str> = out
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "agent_message_chunk",
            "tool_call",
            "tool_call_update",
            "tool_call_update"
        ]
    );
    assert_eq!(out[1]["status"], "pending");
    assert_eq!(out[1]["kind"], "edit");
    assert_eq!(out[1]["locations"][0]["path"], "/w/a.txt");
    assert_eq!(out[2]["status"], "in_progress");
    assert_eq!(out[3]["status"], "completed");
    assert_eq!(out[3]["content"][1]["type"], "diff");
    assert_eq!(out[3]["content"][1]["oldText"], "a\n");
    assert_eq!(out[3]["content"][1]["newText"], "b\n");
}

#[test]
fn an_asked_call_runs_only_when_allowed_and_a_denied_one_fails() {
    let secrets = Secrets::new();
    let mut u = Updates::new("/w");
    let mut out = Vec::new();
    let args = r#"{"command":"ls"}"#;
    u.on_event(
        &secrets,
        &Event::ToolCall {
            id: "c".into(),
            name: "run_command".into(),
            arguments: args.into(),
        },
        None,
        &mut out,
    );
    u.on_event(
        &secrets,
        &Event::ApprovalRequested {
            id: "c".into(),
            name: "run_command".into(),
            arguments: args.into(),
        },
        None,
        &mut out,
    );
    u.end_batch(&secrets, &mut out);
    assert_eq!(out.len(), 1, "no in_progress while asked: {out:?}");
    assert_eq!(out[0]["kind"], "execute");
    assert_eq!(out[0]["title"], "Run ls");
    u.on_event(
        &secrets,
        &Event::ToolResult {
            id: "c".into(),
            name: "run_command".into(),
            status: ToolStatus::Denied,
            output: ToolOutput::error("denied"),
        },
        None,
        &mut out,
    );
    assert_eq!(out[1]["status"], "failed");
}

#[test]
fn final_events_give_stop_reasons() {
    let mut u = Updates::new("/w");
    let cases = [
        (Event::TurnCancelled, Ok(StopReason::Cancelled)),
        (
            Event::TurnFailed {
                error: TurnError::StepLimit { limit: 3 },
            },
            Ok(StopReason::MaxTurnRequests),
        ),
        (
            Event::TurnFailed {
                error: TurnError::NoChoices,
            },
            Err(TurnError::NoChoices),
        ),
    ];
    for (event, want) in cases {
        assert_eq!(u.stop(&event), Some(want));
    }
    u.on_event(
        &Secrets::new(),
        &Event::RefusalDelta { text: "no".into() },
        None,
        &mut Vec::new(),
    );
    let finished = Event::TurnFinished {
        finish_reason: None,
        usage: None,
        output: None,
    };
    assert_eq!(u.stop(&finished), Some(Ok(StopReason::Refusal)));
    assert_eq!(u.stop(&finished), Some(Ok(StopReason::EndTurn)));
    assert_eq!(u.stop(&delta("x")), None);
}

#[test]
fn permission_answers_map_to_approvals() {
    let mut p = Permissions::new();
    let selected = |id: &str| json!({"outcome": {"outcome": "selected", "optionId": id}});
    assert_eq!(p.answer("t", Ok(&selected("allow_once"))), Approval::Once);
    assert_eq!(
        p.answer("t", Ok(&selected("allow_always"))),
        Approval::AlwaysThisTool
    );
    assert_eq!(
        p.answer("t", Ok(&selected("reject_once"))),
        Approval::Deny { reason: None }
    );
    assert_eq!(p.standing("t"), None);
    assert!(matches!(
        p.answer("t", Ok(&json!({"outcome": {"outcome": "cancelled"}}))),
        Approval::Deny { reason: Some(_) }
    ));
    assert!(matches!(
        p.answer("t", Ok(&selected("something_else"))),
        Approval::Deny { reason: Some(_) }
    ));
    assert!(matches!(
        p.answer("t", Err(&rpc::RpcError::new(-1, "gone"))),
        Approval::Deny { reason: Some(_) }
    ));
    assert_eq!(
        p.answer("t", Ok(&selected("reject_always"))),
        Approval::NeverThisTool
    );
    assert_eq!(p.standing("t"), Some(Approval::NeverThisTool));
    assert_eq!(p.standing("other"), None);
}

#[test]
fn kinds_usage_and_replay() {
    assert_eq!(tool_kind("read_file"), "read");
    assert_eq!(tool_kind("grep"), "search");
    assert_eq!(tool_kind("web_fetch"), "fetch");
    assert_eq!(tool_kind("mcp__x__y"), "other");
    assert_eq!(usage_update(10, None), None);
    assert_eq!(usage_update(10, Some(100)).unwrap()["size"], 100);
    let mut secrets = Secrets::new();
    secrets.add("sk-replayed-SECRET-99");
    let history: Vec<crate::wire::Message> = serde_json::from_value(json!([
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hello sk-replayed-SECRET-99"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "text of a"},
        {"role": "assistant", "content": "done"}
    ]))
    .unwrap();
    let updates = replay(&secrets, "/w", &history);
    let kinds: Vec<&str> = updates
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk"
        ]
    );
    assert!(!updates[0].to_string().contains("SECRET"));
}

mod client_requests {
    use super::super::client_fs::{self, ClientFailure, FS_TIMEOUT, delegates_files, read_result};
    use super::super::methods::{ClientCapabilities, FsCapabilities};
    use super::super::rpc::{self, Incoming, Outstanding, RpcError, StrayAnswer};
    use serde_json::{Value, json};

    /// Parses a response line and hands it to its waiter, as the server does.
    fn answer(
        pending: &mut Outstanding<&'static str>,
        line: &str,
    ) -> Result<(&'static str, Result<Value, RpcError>), StrayAnswer> {
        match rpc::parse(line.as_bytes()) {
            Ok(Incoming::Response { id, outcome }) => Ok((pending.finish(&id)?, outcome)),
            other => panic!("not a response: {other:?}"),
        }
    }

    #[test]
    fn answers_find_their_request_once_and_strays_are_refused() {
        let mut pending = Outstanding::default();
        let read = pending.start("read");
        let write = pending.start("write");
        assert_eq!((read, write), (0, 1));
        // Out of order, as a client may answer.
        let (who, outcome) =
            answer(&mut pending, r#"{"jsonrpc":"2.0","id":1,"result":null}"#).unwrap();
        assert_eq!((who, outcome), ("write", Ok(Value::Null)));
        // The same id again, ids never sent, and ids of the wrong type.
        for id in ["1", "7", "\"0\"", "-1", "18446744073709551615"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
            let stray = answer(&mut pending, &line).unwrap_err();
            assert!(stray.to_string().contains("was ignored"), "{stray}");
        }
        // A fractional id is not an answer at all.
        assert!(rpc::parse(br#"{"jsonrpc":"2.0","id":0.0,"result":{}}"#).is_err());
        assert_eq!(pending.len(), 1, "the read still waits");
        let (who, outcome) = answer(
            &mut pending,
            r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32002,"message":"no such buffer"}}"#,
        )
        .unwrap();
        assert_eq!(who, "read");
        assert_eq!(outcome.unwrap_err().message, "no such buffer");
        assert!(pending.is_empty());
    }

    #[test]
    fn a_forgotten_request_answers_late_as_a_stray_and_ids_are_not_reused() {
        let mut pending = Outstanding::default();
        let id = pending.start("slow");
        assert_eq!(pending.forget(id), Some("slow"));
        assert!(pending.finish(&json!(id)).is_err());
        assert_eq!(pending.start("next"), id + 1);
        pending.start("other");
        let mut left = pending.drain();
        left.sort_unstable();
        assert_eq!(left, ["next", "other"]);
        assert!(pending.is_empty());
    }

    #[test]
    fn read_results_of_the_wrong_shape_are_failures_that_say_so() {
        assert_eq!(
            read_result(json!({"content": "text\n"})),
            Ok("text\n".into())
        );
        for (result, why) in [
            (json!({"content": 3}), "`content` is not a string"),
            (json!({"text": "x"}), "it has no `content`"),
            (json!("x"), "it is not an object"),
            (Value::Null, "it is not an object"),
        ] {
            let failure = read_result(result).unwrap_err();
            let said = failure.to_string();
            assert!(said.contains(why), "{said}");
            assert!(said.contains(client_fs::READ_TEXT_FILE), "{said}");
        }
        let refused = ClientFailure::Refused(RpcError::new(-32603, "permission denied"));
        assert_eq!(
            refused.to_string(),
            "the editor answered: permission denied"
        );
        let timed_out = ClientFailure::TimedOut(FS_TIMEOUT).to_string();
        assert!(timed_out.contains("did not answer within 30 seconds"));
        assert!(
            ClientFailure::Gone
                .to_string()
                .contains("closed the connection")
        );
    }

    #[test]
    fn a_huge_read_result_is_taken_whole() {
        let big = "x".repeat(10 << 20);
        let line = json!({"jsonrpc": "2.0", "id": 0, "result": {"content": big}}).to_string();
        let mut pending = Outstanding::default();
        pending.start("read");
        let (_, outcome) = answer(&mut pending, &line).unwrap();
        assert_eq!(read_result(outcome.unwrap()).unwrap().len(), 10 << 20);
    }

    #[test]
    fn files_go_through_the_client_only_when_it_offers_both_methods() {
        let caps = |read, write| ClientCapabilities {
            fs: FsCapabilities {
                read_text_file: read,
                write_text_file: write,
            },
            terminal: true,
        };
        assert!(delegates_files(&caps(true, true)));
        assert!(!delegates_files(&caps(true, false)));
        assert!(!delegates_files(&caps(false, true)));
        assert!(!delegates_files(&ClientCapabilities::default()));
        assert_eq!(
            client_fs::write_params("s", "/w/a.txt", "x"),
            json!({"sessionId": "s", "path": "/w/a.txt", "content": "x"})
        );
    }
}

/// A subagent's calls are shown as calls of their own under the parent's `task` call: an id
/// that cannot collide with the parent's, the agent in the title and `_meta`, `in_progress`
/// then completed or failed; its other events and deltas show nothing.
#[test]
fn a_childs_calls_are_tool_calls_under_the_parents_task_call() {
    use crate::task::ChildEvent;
    let secrets = Secrets::new();
    let mut u = Updates::new("/w");
    let mut out = Vec::new();
    let child = |event| {
        Event::Child(Box::new(ChildEvent {
            parent_call_id: "t1".into(),
            agent: "Explorer".into(),
            event,
        }))
    };
    u.on_event(
        &secrets,
        &child(Event::TurnStarted { turn: 1 }),
        None,
        &mut out,
    );
    u.on_event(&secrets, &child(delta("thinking")), None, &mut out);
    assert!(out.is_empty(), "{out:?}");
    let call = Event::ToolCall {
        id: "c1".into(),
        name: "read_file".into(),
        arguments: r#"{"path":"src/a.rs"}"#.into(),
    };
    u.on_event(&secrets, &child(call), None, &mut out);
    let result = Event::ToolResult {
        id: "c1".into(),
        name: "read_file".into(),
        status: ToolStatus::Error,
        output: ToolOutput::error("no such file"),
    };
    u.on_event(&secrets, &child(result), None, &mut out);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0]["sessionUpdate"], "tool_call");
    assert_eq!(out[0]["toolCallId"], "t1/c1");
    assert_eq!(out[0]["title"], "Explorer: Read src/a.rs");
    assert_eq!(out[0]["status"], "in_progress");
    assert_eq!(out[0]["locations"][0]["path"], "/w/src/a.rs");
    assert_eq!(
        out[0]["_meta"],
        json!({"hrns": {"parentToolCallId": "t1", "agent": "Explorer"}})
    );
    assert_eq!(out[1]["sessionUpdate"], "tool_call_update");
    assert_eq!(out[1]["toolCallId"], "t1/c1");
    assert_eq!(out[1]["status"], "failed");
    // A child's end is not the prompt's.
    let ended = child(Event::TurnCancelled);
    assert_eq!(u.stop(&ended), None);
}

/// The chunks of one batch are coalesced: one `agent_message_chunk` per run of answer text
/// and one `agent_thought_chunk` per run of reasoning, in the order the text came, every byte
/// once, whatever the batching.
#[test]
fn a_batchs_deltas_are_coalesced_in_order_with_no_byte_lost() {
    let secrets = Secrets::new();
    let thought = |t: &str| Event::ReasoningDelta { text: t.into() };
    let mut u = Updates::new("/w");
    let mut out = Vec::new();
    for event in [
        thought("think"),
        thought("ing "),
        delta("ans"),
        delta("wer "),
        delta("é😀\"\n"),
        thought("more"),
        delta("end"),
    ] {
        u.on_event(&secrets, &event, None, &mut out);
    }
    // A run of text goes out when the other stream starts, in order; the last run waits for
    // the batch's end.
    assert_eq!(out.len(), 2, "{out:?}");
    u.end_batch(&secrets, &mut out);
    let shown: Vec<(String, String)> = out
        .iter()
        .map(|u| {
            (
                u["sessionUpdate"].as_str().unwrap().to_owned(),
                u["content"]["text"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    assert_eq!(
        shown,
        [
            pair("agent_thought_chunk", "thinking "),
            pair("agent_message_chunk", "answer é😀\"\n"),
            pair("agent_thought_chunk", "more"),
            pair("agent_message_chunk", "end"),
        ]
    );
    // The next batch starts new chunks.
    u.on_event(&secrets, &delta("next"), None, &mut out);
    u.end_batch(&secrets, &mut out);
    assert_eq!(out.len(), 5);
    assert_eq!(out[4]["content"]["text"], "next");
}

/// A secret split over the deltas of one batch, and over two batches, is hidden in the
/// coalesced chunks; nothing else is lost, and a tail that may start a secret waits for the
/// next batch instead of going out.
#[test]
fn a_secret_split_across_coalesced_chunks_is_hidden() {
    let key = "sk-coalesce-9Xq2Lm7Pz4Wa";
    let mut secrets = Secrets::new();
    secrets.add(key);
    let answer = format!("start {key} middle {key} end");
    for size in [1, 2, 5, 9] {
        for per_batch in [1, 3, 1000] {
            let mut u = Updates::new("/w");
            let mut out = Vec::new();
            let pieces: Vec<&str> = answer
                .as_bytes()
                .chunks(size)
                .map(|p| std::str::from_utf8(p).unwrap())
                .collect();
            for batch in pieces.chunks(per_batch) {
                for piece in batch {
                    u.on_event(&secrets, &delta(piece), None, &mut out);
                }
                u.end_batch(&secrets, &mut out);
                // What went out never ends in the start of the key.
                let so_far = texts(&out);
                assert!(!so_far.contains("sk-coal"), "{size}/{per_batch}: {so_far}");
            }
            let finished = Event::TurnFinished {
                finish_reason: None,
                usage: None,
                output: None,
            };
            u.on_event(&secrets, &finished, None, &mut out);
            assert_eq!(
                texts(&out),
                "start [redacted] middle [redacted] end",
                "size {size}, {per_batch} per batch"
            );
            let batches = pieces.len().div_ceil(per_batch);
            assert!(out.len() <= batches + 1, "{} updates", out.len());
        }
    }
}

/// A subagent's question names the call the editor was shown (`parent/child`, under the
/// child's agent), not the child's own id, which may be one of the parent's.
#[test]
fn a_subagents_question_names_the_call_the_editor_was_shown() {
    use crate::session::{ChildQuestion, Question};
    let secrets = Secrets::default();
    let child = Question::Child(ChildQuestion {
        parent_call_id: "t1".into(),
        agent: "Builder".into(),
        call_id: "c1".into(),
        name: "write_file".into(),
        arguments: r#"{"path":"out.txt","content":"x"}"#.into(),
    });
    let asked = super::update::question_request(&secrets, "/w", "s1", &child);
    let call = &asked["toolCall"];
    assert_eq!(call["toolCallId"], "t1/c1");
    assert_eq!(call["title"], "Builder: Write out.txt");
    assert_eq!(call["_meta"]["hrns"]["parentToolCallId"], "t1");
    assert_eq!(call["_meta"]["hrns"]["agent"], "Builder");
    assert_eq!(call["locations"][0]["path"], "/w/out.txt");
    assert_eq!(asked["sessionId"], "s1");
    // The session's own call keeps its id and title.
    let own = Question::Call(crate::session::ToolRun {
        call_id: "c1".into(),
        name: "write_file".into(),
        arguments: r#"{"path":"out.txt","content":"x"}"#.into(),
        effect: crate::tool::Effect::Write,
        confinement: crate::session::Confinement::Sandboxed,
    });
    let asked = super::update::question_request(&secrets, "/w", "s1", &own);
    assert_eq!(asked["toolCall"]["toolCallId"], "c1");
    assert_eq!(asked["toolCall"]["title"], "Write out.txt");
    assert!(asked["toolCall"].get("_meta").is_none());
}
