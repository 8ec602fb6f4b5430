//! `hrns acp` end to end: the real binary over pipes against the scripted provider, every
//! method, hostile JSON-RPC input, permissions and cancellation.

mod common;

use common::{Env, KEY};
use hrns_blocking::mock::{MockProvider, Reply, chunk};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a test waits for a line before it calls the agent hung (a guard, not a timing
/// assertion).
const HANG: Duration = Duration::from_secs(60);

/// A running `hrns acp` and what it wrote.
struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Every line seen, in order.
    seen: Vec<Value>,
    next_id: u64,
}

impl Agent {
    fn start(env: &Env, mock: &MockProvider, args: &[&str]) -> Agent {
        Agent::start_with(env, mock, "", args)
    }

    /// [`Agent::start`] with `extra` top-level fields in the config.
    fn start_with(env: &Env, mock: &MockProvider, extra: &str, args: &[&str]) -> Agent {
        env.config_with(mock, extra);
        let mut child = env
            .cmd(Some(mock))
            .arg("acp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Agent {
            child,
            stdin,
            lines,
            seen: Vec::new(),
            next_id: 1,
        }
    }

    fn write_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write_raw(line.as_bytes());
    }

    /// The next line: every line on stdout must be one JSON-RPC message.
    fn next(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(HANG)
            .expect("hrns acp wrote nothing (hung or exited)");
        assert!(!line.contains(KEY), "the key leaked: {line}");
        let value: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(value["jsonrpc"], "2.0", "{line}");
        self.seen.push(value.clone());
        value
    }

    /// Sends a request and returns its answer; notifications and requests from the agent
    /// met meanwhile are kept in `seen` (and requests answered by `on_request`).
    fn call_with(
        &mut self,
        method: &str,
        params: Value,
        mut on_request: impl FnMut(&Value) -> Value,
    ) -> Value {
        self.call_answering(method, params, |r| Ok(on_request(r)))
    }

    /// [`Agent::call_with`] whose answers may be JSON-RPC errors (`Err(error object)`).
    fn call_answering(
        &mut self,
        method: &str,
        params: Value,
        mut on_request: impl FnMut(&Value) -> Result<Value, Value>,
    ) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.next();
            if m.get("method").is_some() && m.get("id").is_some() {
                let answer = match on_request(&m) {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": m["id"], "result": result}),
                    Err(error) => json!({"jsonrpc": "2.0", "id": m["id"], "error": error}),
                };
                self.send(answer);
                continue;
            }
            if m.get("method").is_none() && m["id"] == json!(id) {
                return m;
            }
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.call_with(method, params, |r| panic!("unexpected request {r}"))
    }

    fn until_answer(&mut self, id: Value, on_request: &mut dyn FnMut(&Value) -> Value) -> Value {
        loop {
            let m = self.next();
            if m.get("method").is_some() && m.get("id").is_some() {
                let result = on_request(&m);
                self.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": result}));
                continue;
            }
            if m.get("method").is_none() && m["id"] == id {
                return m;
            }
        }
    }

    fn initialize(&mut self) -> Value {
        self.initialize_with(
            json!({"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false}),
        )
    }

    fn initialize_with(&mut self, capabilities: Value) -> Value {
        let r = self.call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
        );
        r["result"].clone()
    }

    fn new_session(&mut self, env: &Env) -> String {
        let r = self.call(
            "session/new",
            json!({"cwd": env.work().display().to_string(), "mcpServers": []}),
        );
        r["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {r}"))
            .to_owned()
    }

    fn prompt(&mut self, sid: &str, text: &str) -> Value {
        self.call(
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "text", "text": text}]}),
        )
    }

    /// The `session/update`s seen so far, taken.
    fn updates(&mut self) -> Vec<Value> {
        let seen = std::mem::take(&mut self.seen);
        seen.into_iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| m["params"]["update"].clone())
            .collect()
    }

    /// Closes stdin and waits for the exit.
    fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        while self.lines.recv_timeout(HANG).is_ok() {}
        self.child.wait().unwrap()
    }
}

/// Waits until the provider got `n` chat requests (a `/models` lookup is not one).
fn wait_for_chat(mock: &MockProvider, n: usize) {
    let deadline = std::time::Instant::now() + HANG;
    while mock.chat_requests().len() < n {
        assert!(
            std::time::Instant::now() < deadline,
            "the request never went out"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn text_of(updates: &[Value], kind: &str) -> String {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .map(|u| u["content"]["text"].as_str().unwrap_or_default())
        .collect()
}

#[test]
fn a_text_turn_streams_chunks_and_ends_the_turn_without_the_key() {
    // The key split over three deltas, as a provider echoing it might send it.
    let (a, b) = KEY.split_at(8);
    let (b, c) = b.split_at(6);
    let mock = MockProvider::start([Reply::sse([
        chunk::role_chunk(),
        chunk::reasoning_chunk("thinking"),
        chunk::text_chunk("the key is "),
        chunk::text_chunk(a),
        chunk::text_chunk(b),
        chunk::text_chunk(c),
        chunk::text_chunk(", done"),
        chunk::finish_chunk("stop"),
        chunk::usage_chunk(10, 5),
    ])])
    .unwrap();
    let env = Env::new();
    let mut agent = Agent::start(&env, &mock, &["--context-window", "100000"]);
    let init = agent.initialize();
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    assert_eq!(
        init["agentCapabilities"]["promptCapabilities"]["embeddedContext"],
        true
    );
    assert_eq!(init["agentCapabilities"]["mcpCapabilities"]["http"], true);
    assert_eq!(init["authMethods"], json!([]));
    let sid = agent.new_session(&env);
    let answer = agent.prompt(&sid, "hello");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let updates = agent.updates();
    assert_eq!(text_of(&updates, "agent_thought_chunk"), "thinking");
    let text = text_of(&updates, "agent_message_chunk");
    assert!(
        text.starts_with("the key is ") && text.ends_with(", done"),
        "{text}"
    );
    assert!(!text.contains("NEVERSHOWN"), "{text}");
    let usage = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "usage_update")
        .expect("a usage_update");
    assert_eq!(usage["size"], 100000);
    assert!(usage["used"].as_u64().unwrap() > 0);
    // The model got the prompt.
    let sent = mock.chat_requests()[0].json();
    assert!(sent["messages"].to_string().contains("hello"));
    assert!(agent.finish().success());
}

/// A long answer of tiny deltas (thought, then text with the key split over three deltas,
/// hostile characters, then thought and text again), read by a client that reads every
/// update: the chunks (coalesced as they wait) carry every byte once, in order, each run in
/// its own stream, and never the key.
#[test]
fn coalesced_chunks_keep_every_byte_in_order_and_hide_a_split_key() {
    let (a, b) = KEY.split_at(8);
    let (b, c) = b.split_at(6);
    let words: Vec<String> = (0..1500).map(|i| format!("w{i}\"é\\\n ")).collect();
    let mut chunks = vec![chunk::role_chunk()];
    chunks.extend((0..300).map(|i| chunk::reasoning_chunk(&format!("t{i} "))));
    chunks.extend(words[..700].iter().map(|w| chunk::text_chunk(w)));
    chunks.extend([a, b, c].map(chunk::text_chunk));
    chunks.extend(words[700..].iter().map(|w| chunk::text_chunk(w)));
    chunks.push(chunk::reasoning_chunk("second thought"));
    chunks.push(chunk::text_chunk("end"));
    chunks.push(chunk::finish_chunk("stop"));
    let deltas = chunks.len() - 2;
    let mock = MockProvider::start([Reply::sse(chunks)]).unwrap();
    let env = Env::new();
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize();
    let sid = agent.new_session(&env);
    let answer = agent.prompt(&sid, "hello");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let updates = agent.updates();
    let streamed: Vec<&Value> = updates
        .iter()
        .filter(|u| {
            u["sessionUpdate"] == "agent_message_chunk"
                || u["sessionUpdate"] == "agent_thought_chunk"
        })
        .collect();
    assert!(streamed.len() <= deltas, "{} updates", streamed.len());
    // The runs of each stream, in order.
    let mut runs: Vec<(String, String)> = Vec::new();
    for u in streamed {
        let kind = u["sessionUpdate"].as_str().unwrap().to_owned();
        let text = u["content"]["text"].as_str().unwrap();
        match runs.last_mut() {
            Some((last, all)) if *last == kind => all.push_str(text),
            _ => runs.push((kind, text.to_owned())),
        }
    }
    let thoughts: String = (0..300).map(|i| format!("t{i} ")).collect();
    let text = format!(
        "{}[redacted]{}",
        words[..700].concat(),
        words[700..].concat()
    );
    let want = [
        ("agent_thought_chunk", thoughts.as_str()),
        ("agent_message_chunk", text.as_str()),
        ("agent_thought_chunk", "second thought"),
        ("agent_message_chunk", "end"),
    ];
    let runs: Vec<(&str, &str)> = runs.iter().map(|(k, t)| (k.as_str(), t.as_str())).collect();
    assert_eq!(runs, want);
    assert!(agent.finish().success());
}

fn write_call(path: &str, content: &str) -> Reply {
    let args = json!({"path": path, "content": content}).to_string();
    Reply::tool_calls(&[("call_w", "write_file", &args)])
}

#[test]
fn a_write_asks_permission_and_shows_its_diff_once_allowed() {
    let mock =
        MockProvider::start([write_call("a.txt", "new\n"), Reply::text_answer("written")]).unwrap();
    let env = Env::new();
    env.write("work/a.txt", "old\n");
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize();
    let sid = agent.new_session(&env);
    let mut asked = Vec::new();
    let answer = agent.call_with(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "write it"}]}),
        |request| {
            asked.push(request.clone());
            json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})
        },
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(asked.len(), 1);
    let request = &asked[0];
    assert_eq!(request["method"], "session/request_permission");
    assert_eq!(request["params"]["sessionId"], sid);
    assert_eq!(request["params"]["toolCall"]["toolCallId"], "call_w");
    let options: Vec<&str> = request["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        options,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    assert_eq!(
        std::fs::read_to_string(env.work().join("a.txt")).unwrap(),
        "new\n"
    );
    let updates = agent.updates();
    let calls: Vec<&Value> = updates
        .iter()
        .filter(|u| u["toolCallId"] == "call_w")
        .collect();
    let statuses: Vec<&str> = calls
        .iter()
        .map(|u| u["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["pending", "in_progress", "completed"],
        "{calls:?}"
    );
    assert_eq!(calls[0]["kind"], "edit");
    let diff = &calls[2]["content"][1];
    assert_eq!(diff["type"], "diff");
    assert_eq!(diff["oldText"], "old\n");
    assert_eq!(diff["newText"], "new\n");
    assert!(diff["path"].as_str().unwrap().ends_with("/work/a.txt"));
    assert!(agent.finish().success());
}

#[test]
fn a_rejected_or_cancelled_permission_denies_the_call() {
    for outcome in [
        json!({"outcome": "selected", "optionId": "reject_once"}),
        json!({"outcome": "cancelled"}),
    ] {
        let mock =
            MockProvider::start([write_call("b.txt", "x"), Reply::text_answer("ok")]).unwrap();
        let env = Env::new();
        let mut agent = Agent::start(&env, &mock, &[]);
        agent.initialize();
        let sid = agent.new_session(&env);
        let answer = agent.call_with(
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "text", "text": "write"}]}),
            |_| json!({"outcome": outcome}),
        );
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        assert!(!env.work().join("b.txt").exists(), "{outcome}");
        let updates = agent.updates();
        let last = updates
            .iter()
            .rfind(|u| u["toolCallId"] == "call_w")
            .unwrap();
        assert_eq!(last["status"], "failed", "{outcome}");
        assert!(agent.finish().success());
    }
}

#[test]
fn reject_always_answers_later_calls_of_the_tool_without_asking() {
    let mock = MockProvider::start([
        write_call("c.txt", "1"),
        write_call("c.txt", "2"),
        Reply::text_answer("gave up"),
    ])
    .unwrap();
    let env = Env::new();
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize();
    let sid = agent.new_session(&env);
    let mut asked = 0;
    let answer = agent.call_with(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "write"}]}),
        |_| {
            asked += 1;
            json!({"outcome": {"outcome": "selected", "optionId": "reject_always"}})
        },
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(asked, 1);
    assert!(!env.work().join("c.txt").exists());
    assert!(agent.finish().success());
}

#[test]
fn cancel_answers_the_prompt_with_cancelled() {
    let mock = MockProvider::start([Reply::hang(), Reply::text_answer("second")]).unwrap();
    let env = Env::new();
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize();
    let sid = agent.new_session(&env);
    agent.send(
        json!({"jsonrpc": "2.0", "id": 99, "method": "session/prompt",
        "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "wait"}]}}),
    );
    wait_for_chat(&mock, 1);
    agent.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}));
    let answer = agent.until_answer(json!(99), &mut |r| panic!("unexpected {r}"));
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    // The session goes on: a second prompt in it is answered.
    let second = agent.prompt(&sid, "again");
    assert_eq!(second["result"]["stopReason"], "end_turn", "{second}");
    assert!(text_of(&agent.updates(), "agent_message_chunk").contains("second"));
    assert!(agent.finish().success());
}

#[test]
fn a_cancel_while_the_editor_asks_denies_the_call_and_ends_cancelled() {
    let mock = MockProvider::start([write_call("d.txt", "x")]).unwrap();
    let env = Env::new();
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize();
    let sid = agent.new_session(&env);
    agent.send(
        json!({"jsonrpc": "2.0", "id": 50, "method": "session/prompt",
        "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "write"}]}}),
    );
    let asked = loop {
        let m = agent.next();
        if m["method"] == "session/request_permission" {
            break m;
        }
    };
    agent.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}));
    let answer = agent.until_answer(json!(50), &mut |r| panic!("unexpected {r}"));
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    // The editor answers the question late, as clients do after a cancel: nothing runs.
    agent.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"outcome": {"outcome": "cancelled"}}}));
    let list = agent.call("session/list", json!({}));
    assert!(list["result"]["sessions"].is_array(), "{list}");
    assert!(!env.work().join("d.txt").exists());
    assert!(agent.finish().success());
}

#[test]
fn hostile_input_gets_clear_errors_and_the_agent_goes_on() {
    let mock = MockProvider::start([Reply::text_answer("still here")]).unwrap();
    let env = Env::new();
    let mut agent = Agent::start(&env, &mock, &[]);
    let cases: Vec<(Vec<u8>, i64, Value)> = vec![
        (b"{not json\n".to_vec(), -32700, Value::Null),
        (b"[1,2,3]\n".to_vec(), -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","id":{"x":1},"method":"initialize"}"#.to_vec(), -32600, Value::Null),
        (br#"{"jsonrpc":"1.0","id":5,"method":"initialize"}"#.to_vec(), -32600, json!(5)),
        (br#"{"jsonrpc":"2.0","id":6,"method":"session/fly","params":{}}"#.to_vec(), -32601, json!(6)),
        (br#"{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":3}}"#.to_vec(), -32602, json!(7)),
        (br#"{"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{"sessionId":"nope","prompt":[]}}"#.to_vec(), -32002, json!(8)),
        (br#"{"jsonrpc":"2.0","id":9,"method":"session/new","params":{"cwd":"relative/dir"}}"#.to_vec(), -32602, json!(9)),
        ("\u{feff}\u{0}\n".as_bytes().to_vec(), -32700, Value::Null),
    ];
    for (mut line, code, id) in cases {
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        agent.write_raw(&line);
        let answer = agent.next();
        assert_eq!(
            answer["error"]["code"],
            code,
            "{}: {answer}",
            String::from_utf8_lossy(&line)
        );
        assert_eq!(answer["id"], id, "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().len() > 10);
    }
    // An answer to a request hrns never sent, and a notification of an unknown method: no
    // reply (a notification is never answered), and nothing breaks.
    agent.send(json!({"jsonrpc": "2.0", "id": 12345, "result": {}}));
    agent.send(json!({"jsonrpc": "2.0", "method": "nothing/here"}));
    // A message over the size limit is dropped with its own error, and the next one is read.
    let mut huge = br#"{"jsonrpc":"2.0","id":77,"method":"initialize","params":{"x":""#.to_vec();
    huge.resize(huge.len() + 65 * 1024 * 1024, b'a');
    huge.extend_from_slice(b"\"}}\n");
    agent.write_raw(&huge);
    drop(huge);
    let answer = agent.next();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than")
    );
    agent.initialize();
    let sid = agent.new_session(&env);
    let answer = agent.prompt(&sid, "hi");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(agent.finish().success());
}

#[test]
fn sessions_are_listed_loaded_resumed_and_closed() {
    let mock = MockProvider::start([
        Reply::text_answer("first answer"),
        Reply::text_answer("after resume"),
    ])
    .unwrap();
    let env = Env::new();
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize();
    let sid = agent.new_session(&env);
    assert_eq!(
        agent.prompt(&sid, "remember me")["result"]["stopReason"],
        "end_turn"
    );
    let closed = agent.call("session/close", json!({"sessionId": sid}));
    assert!(closed.get("result").is_some(), "{closed}");
    let gone = agent.prompt(&sid, "hello?");
    assert_eq!(gone["error"]["code"], -32002, "{gone}");
    let cwd = env.work().display().to_string();
    let list = agent.call("session/list", json!({"cwd": cwd}));
    let sessions = list["result"]["sessions"].as_array().unwrap().clone();
    assert_eq!(sessions.len(), 1, "{list}");
    assert_eq!(sessions[0]["sessionId"], sid);
    assert_eq!(sessions[0]["title"], "remember me");
    agent.updates();
    let loaded = agent.call(
        "session/load",
        json!({"sessionId": sid, "cwd": cwd, "mcpServers": []}),
    );
    assert_eq!(
        loaded["result"]["modes"]["currentModeId"], "Builder",
        "{loaded}"
    );
    let replay = agent.updates();
    assert_eq!(text_of(&replay, "user_message_chunk"), "remember me");
    assert_eq!(text_of(&replay, "agent_message_chunk"), "first answer");
    agent.call("session/close", json!({"sessionId": sid}));
    let resumed = agent.call(
        "session/resume",
        json!({"sessionId": sid, "cwd": cwd, "mcpServers": []}),
    );
    assert!(resumed.get("result").is_some(), "{resumed}");
    assert!(
        text_of(&agent.updates(), "user_message_chunk").is_empty(),
        "resume does not replay"
    );
    assert_eq!(
        agent.prompt(&sid, "and now")["result"]["stopReason"],
        "end_turn"
    );
    // The resumed session sent the whole history.
    let sent = mock.chat_requests()[1].json().to_string();
    assert!(
        sent.contains("remember me") && sent.contains("first answer"),
        "{sent}"
    );
    let unknown = agent.call(
        "session/load",
        json!({"sessionId": "ffffff", "cwd": cwd, "mcpServers": []}),
    );
    assert_eq!(unknown["error"]["code"], -32002, "{unknown}");
    assert!(agent.finish().success());
    // The same session file `hrns --resume` and `hrns sessions` read.
    let listed = env.run(None, &["sessions"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains(&sid));
}

#[test]
fn modes_are_agents_and_config_options_switch_model_and_approval() {
    let mock =
        MockProvider::start([write_call("e.txt", "auto"), Reply::text_answer("done")]).unwrap();
    let env = Env::new();
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize();
    let r = agent.call(
        "session/new",
        json!({"cwd": env.work().display().to_string(), "mcpServers": []}),
    );
    let sid = r["result"]["sessionId"].as_str().unwrap().to_owned();
    let modes: Vec<&str> = r["result"]["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert!(
        modes.contains(&"Planner") && modes.contains(&"Builder"),
        "{modes:?}"
    );
    let ids: Vec<&str> = r["result"]["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["mode", "model", "approval"]);
    let set = agent.call(
        "session/set_mode",
        json!({"sessionId": sid, "modeId": "Planner"}),
    );
    assert!(set.get("result").is_some(), "{set}");
    let update = agent
        .updates()
        .into_iter()
        .find(|u| u["sessionUpdate"] == "current_mode_update")
        .expect("current_mode_update");
    assert_eq!(update["currentModeId"], "Planner");
    let bad = agent.call(
        "session/set_mode",
        json!({"sessionId": sid, "modeId": "Nobody"}),
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    agent.call(
        "session/set_mode",
        json!({"sessionId": sid, "modeId": "Builder"}),
    );
    let set = agent.call(
        "session/set_config_option",
        json!({"sessionId": sid, "configId": "approval", "value": "auto"}),
    );
    let approval = set["result"]["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "approval")
        .unwrap()
        .clone();
    assert_eq!(approval["currentValue"], "auto", "{set}");
    let set = agent.call(
        "session/set_config_option",
        json!({"sessionId": sid, "configId": "model", "value": "other-model"}),
    );
    assert!(set.get("result").is_some(), "{set}");
    let bad = agent.call(
        "session/set_config_option",
        json!({"sessionId": sid, "configId": "colour", "value": "red"}),
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    // Under `auto` the write runs without a question, on the model now set.
    let answer = agent.prompt(&sid, "write");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        std::fs::read_to_string(env.work().join("e.txt")).unwrap(),
        "auto"
    );
    assert_eq!(mock.chat_requests()[0].json()["model"], "other-model");
    assert!(agent.finish().success());
}

#[test]
fn a_failed_turn_is_a_json_rpc_error_with_the_providers_message() {
    let mock = MockProvider::start([Reply::error(401, "bad key for this model")]).unwrap();
    let env = Env::new();
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize();
    let sid = agent.new_session(&env);
    let answer = agent.prompt(&sid, "hi");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bad key for this model"),
        "{answer}"
    );
    assert!(agent.finish().success());
}

/// The first request body's tools and system prompt, the date in the prompt left out (the two
/// runs could straddle midnight).
fn offered(body: &Value) -> (Value, String, Value) {
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    assert_eq!(body["messages"][0]["role"], "system", "{body}");
    let date = regex_free_date(system);
    (
        body["tools"].clone(),
        system.replace(&date, "<date>"),
        body["model"].clone(),
    )
}

/// The first `YYYY-MM-DD` in `text` (empty when there is none).
fn regex_free_date(text: &str) -> String {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(9))
        .map(|i| &bytes[i..i + 10])
        .find(|w| {
            w.iter().enumerate().all(|(j, b)| match j {
                4 | 7 => *b == b'-',
                _ => b.is_ascii_digit(),
            })
        })
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .unwrap_or_default()
}

#[test]
fn exec_and_acp_offer_the_same_tools_and_instructions_for_the_same_config() {
    // One host puts both conversations together: the same agent filter, MCP tools, skills,
    // instructions and plan tool reach the model whichever front end runs the turn.
    let mock = MockProvider::start([Reply::text_answer("a"), Reply::text_answer("b")]).unwrap();
    let env = Env::new();
    env.write("work/AGENTS.md", "Always answer in haiku.\n");
    env.write(
        "work/.agents/skills/greet/SKILL.md",
        "---\nname: greet\ndescription: Greets politely.\n---\nSay hello.\n",
    );
    let servers = json!({"box": {"command": "python3", "args": [common::mcp_test_server()]}});
    let extra = format!(", \"mcpServers\": {servers}");
    env.config_with(&mock, &extra);
    let out = env.run(None, &["exec", "hello"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let mut agent = Agent::start_with(&env, &mock, &extra, &[]);
    agent.initialize();
    let sid = agent.new_session(&env);
    let answer = agent.prompt(&sid, "hello");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(agent.finish().success());
    let requests = mock.chat_requests();
    let (exec, acp) = (offered(&requests[0].json()), offered(&requests[1].json()));
    let names: Vec<&str> = exec
        .0
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    // The setup took effect: the MCP server's tools, the skill and the instructions.
    assert!(
        names.iter().any(|n| n.starts_with("mcp__box__")),
        "{names:?}"
    );
    assert!(
        names.contains(&"task") && names.contains(&"update_plan"),
        "{names:?}"
    );
    assert!(exec.1.contains("Always answer in haiku."), "{}", exec.1);
    assert!(exec.1.contains("greet"), "{}", exec.1);
    assert_eq!(exec.0, acp.0, "the same tools, in the same order");
    assert_eq!(exec.1, acp.1, "the same system prompt");
    assert_eq!(exec.2, acp.2, "the same model");
}

/// An editor's buffers, answering `fs/*` requests (and allowing every call it is asked about).
#[derive(Default)]
struct Buffers {
    files: std::collections::HashMap<String, String>,
    /// Every `fs/*` request, as `(method, path)`.
    asked: Vec<(String, String)>,
}

impl Buffers {
    fn answer(&mut self, request: &Value) -> Result<Value, Value> {
        let method = request["method"].as_str().unwrap().to_owned();
        let path = request["params"]["path"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        match method.as_str() {
            "session/request_permission" => {
                return Ok(json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}));
            }
            "fs/read_text_file" | "fs/write_text_file" => {}
            other => panic!("unexpected request {other}"),
        }
        assert!(path.starts_with('/'), "ACP paths are absolute: {path}");
        self.asked.push((method.clone(), path.clone()));
        if method == "fs/read_text_file" {
            return match self.files.get(&path) {
                Some(text) => Ok(json!({"content": text})),
                None => Err(json!({"code": -32002, "message": format!("no buffer for {path}")})),
            };
        }
        let content = request["params"]["content"].as_str().unwrap().to_owned();
        self.files.insert(path, content);
        Ok(Value::Null)
    }
}

fn call(id: &str, tool: &str, args: Value) -> Reply {
    Reply::tool_calls(&[(id, tool, &args.to_string())])
}

/// The tool results the model was sent, in order.
fn tool_results(mock: &MockProvider) -> Vec<String> {
    let last = mock.chat_requests().last().unwrap().json();
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn with_fs_capabilities_the_file_tools_read_and_write_the_editors_buffers() {
    let mock = MockProvider::start([
        call("r", "read_file", json!({"path": "a.txt"})),
        call(
            "e",
            "edit_file",
            json!({"path": "a.txt", "old_string": "unsaved", "new_string": "edited"}),
        ),
        call(
            "w",
            "write_file",
            json!({"path": "sub/new.txt", "content": "fresh\n"}),
        ),
        // Confinement is still the tool's: no request goes to the editor for these.
        call(
            "o",
            "write_file",
            json!({"path": "../outside.txt", "content": "x"}),
        ),
        call("m", "read_file", json!({"path": "missing.txt"})),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let env = Env::new();
    env.write("work/a.txt", "on disk\n");
    let a = std::fs::canonicalize(env.work()).unwrap().join("a.txt");
    let a = a.display().to_string();
    let mut buffers = Buffers::default();
    buffers.files.insert(a.clone(), "unsaved buffer\n".into());
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize_with(
        json!({"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": false}),
    );
    let sid = agent.new_session(&env);
    let answer = agent.call_answering(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}),
        |r| buffers.answer(r),
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let results = tool_results(&mock);
    assert_eq!(results.len(), 5, "{results:?}");
    // The model read the editor's unsaved buffer, not the disk.
    assert!(results[0].contains("unsaved buffer"), "{}", results[0]);
    assert!(
        results[1].contains("replaced 1 occurrence"),
        "{}",
        results[1]
    );
    assert!(
        results[2].contains("created 'sub/new.txt'"),
        "{}",
        results[2]
    );
    assert!(
        results[3].contains("outside the workspace"),
        "{}",
        results[3]
    );
    // The editor's own error, said as the tool's.
    assert!(
        results[4].contains("cannot read 'missing.txt' through the editor")
            && results[4].contains("no buffer for"),
        "{}",
        results[4]
    );
    // The writes went to the editor, not to the disk.
    assert_eq!(buffers.files[&a], "edited buffer\n");
    let new = a.replace("a.txt", "sub/new.txt");
    assert_eq!(buffers.files[&new], "fresh\n");
    assert_eq!(
        std::fs::read_to_string(env.work().join("a.txt")).unwrap(),
        "on disk\n"
    );
    assert!(!env.work().join("sub").exists());
    assert!(!env.work().join("../outside.txt").exists());
    // Each write is diffed against the editor's text first (the read before the write).
    let methods: Vec<&str> = buffers.asked.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(
        methods,
        [
            "fs/read_text_file",
            "fs/read_text_file",
            "fs/read_text_file",
            "fs/write_text_file",
            "fs/read_text_file",
            "fs/write_text_file",
            "fs/read_text_file",
        ]
    );
    // The edit's diff is of the buffer the editor holds.
    let updates = agent.updates();
    let edit = updates.iter().rfind(|u| u["toolCallId"] == "e").unwrap();
    assert_eq!(edit["status"], "completed", "{edit}");
    let diff = &edit["content"][1];
    assert_eq!(diff["oldText"], "unsaved buffer\n", "{edit}");
    assert_eq!(diff["newText"], "edited buffer\n", "{edit}");
    assert!(agent.finish().success());
}

#[test]
fn an_editor_answer_of_the_wrong_shape_or_a_closed_editor_is_a_tool_error() {
    let mock = MockProvider::start([
        call("r", "read_file", json!({"path": "a.txt"})),
        call("r2", "read_file", json!({"path": "a.txt"})),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let env = Env::new();
    env.write("work/a.txt", "on disk\n");
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize_with(json!({"fs": {"readTextFile": true, "writeTextFile": true}}));
    let sid = agent.new_session(&env);
    let mut reads = 0;
    let answer = agent.call_answering(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}),
        |r| {
            assert_eq!(r["method"], "fs/read_text_file");
            reads += 1;
            match reads {
                1 => Ok(json!({"text": "not content"})),
                _ => Ok(json!({"content": 42})),
            }
        },
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let results = tool_results(&mock);
    assert!(results[0].contains("it has no `content`"), "{}", results[0]);
    assert!(
        results[1].contains("`content` is not a string"),
        "{}",
        results[1]
    );
    assert!(
        !results.concat().contains("on disk"),
        "no fallback to the disk"
    );

    // An editor that closes the connection while a read waits: the process ends at once
    // (the read fails, the session closes), not after the request's timeout.
    let mock = MockProvider::start([call("r", "read_file", json!({"path": "a.txt"}))]).unwrap();
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize_with(json!({"fs": {"readTextFile": true, "writeTextFile": true}}));
    let sid = agent.new_session(&env);
    agent.send(
        json!({"jsonrpc": "2.0", "id": 70, "method": "session/prompt",
        "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}}),
    );
    loop {
        if agent.next()["method"] == "fs/read_text_file" {
            break;
        }
    }
    assert!(agent.finish().success());
}

#[test]
fn loading_a_session_open_in_this_process_replays_it_instead_of_failing() {
    let mock = MockProvider::start([
        Reply::text_answer("first answer"),
        Reply::text_answer("second answer"),
    ])
    .unwrap();
    let env = Env::new();
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize();
    let sid = agent.new_session(&env);
    assert_eq!(
        agent.prompt(&sid, "remember me")["result"]["stopReason"],
        "end_turn"
    );
    agent.updates();
    let cwd = env.work().display().to_string();
    // Not closed: still open in this very process.
    let loaded = agent.call(
        "session/load",
        json!({"sessionId": sid, "cwd": cwd, "mcpServers": []}),
    );
    assert_eq!(
        loaded["result"]["modes"]["currentModeId"], "Builder",
        "{loaded}"
    );
    let replay = agent.updates();
    assert_eq!(text_of(&replay, "user_message_chunk"), "remember me");
    assert_eq!(text_of(&replay, "agent_message_chunk"), "first answer");
    let resumed = agent.call(
        "session/resume",
        json!({"sessionId": sid, "cwd": cwd, "mcpServers": []}),
    );
    assert!(resumed.get("result").is_some(), "{resumed}");
    assert!(text_of(&agent.updates(), "user_message_chunk").is_empty());
    // It is the same session: the next prompt continues it.
    assert_eq!(
        agent.prompt(&sid, "and now")["result"]["stopReason"],
        "end_turn"
    );
    let sent = mock.chat_requests()[1].json().to_string();
    assert!(
        sent.contains("remember me") && sent.contains("first answer"),
        "{sent}"
    );
    assert!(agent.finish().success());
}

#[test]
fn the_model_option_lists_what_the_provider_offers() {
    let mock = MockProvider::start([Reply::text_answer("from the other")])
        .unwrap()
        .with_models(["mock-model", "other-model", "third-model"]);
    let env = Env::new();
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize();
    let sid = agent.new_session(&env);
    // The answer comes at once; the provider's list follows as an update.
    let update = loop {
        let m = agent.next();
        if m["params"]["update"]["sessionUpdate"] == "config_option_update" {
            break m["params"]["update"].clone();
        }
    };
    let model = update["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "model")
        .unwrap();
    let values: Vec<&str> = model["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap())
        .collect();
    assert_eq!(
        values,
        ["mock-model", "other-model", "third-model"],
        "{update}"
    );
    assert_eq!(model["currentValue"], "mock-model");
    let set = agent.call(
        "session/set_config_option",
        json!({"sessionId": sid, "configId": "model", "value": "other-model"}),
    );
    assert!(set.get("result").is_some(), "{set}");
    assert_eq!(agent.prompt(&sid, "hi")["result"]["stopReason"], "end_turn");
    assert_eq!(mock.chat_requests()[0].json()["model"], "other-model");
    assert!(agent.finish().success());
}

/// A subagent's calls reach the editor while its `task` call runs: `tool_call`s of their own
/// under the parent's call (the child's events come out of the parent session's poll), then
/// the task call completes with the child's answer.
#[test]
fn a_subagents_calls_are_shown_under_its_task_call() {
    let task = json!({"description": "look", "prompt": "Read notes.txt.", "agent": "Explorer"})
        .to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("t1", "task", &task)]),
        Reply::tool_calls(&[("c1", "read_file", r#"{"path":"notes.txt"}"#)]),
        Reply::text_answer("The notes say hi."),
        Reply::text_answer("Done."),
    ])
    .unwrap();
    let env = Env::new();
    std::fs::write(env.work().join("notes.txt"), "hi\n").unwrap();
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize();
    let sid = agent.new_session(&env);
    let answer = agent.prompt(&sid, "Look at the notes.");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let updates = agent.updates();
    let at = |pred: &dyn Fn(&Value) -> bool| {
        updates
            .iter()
            .position(pred)
            .unwrap_or_else(|| panic!("{updates:#?}"))
    };
    let task_call = at(&|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "t1");
    let child_call = at(&|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "t1/c1");
    let child_done = at(&|u| {
        u["sessionUpdate"] == "tool_call_update"
            && u["toolCallId"] == "t1/c1"
            && u["status"] == "completed"
    });
    let task_done = at(&|u| {
        u["sessionUpdate"] == "tool_call_update"
            && u["toolCallId"] == "t1"
            && u["status"] == "completed"
    });
    assert!(task_call < child_call && child_call < child_done && child_done < task_done);
    let call = &updates[child_call];
    assert_eq!(call["title"], "Explorer: Read notes.txt");
    assert_eq!(call["_meta"]["hrns"]["parentToolCallId"], "t1");
    assert_eq!(call["_meta"]["hrns"]["agent"], "Explorer");
    let done = updates[task_done].to_string();
    assert!(done.contains("The notes say hi."), "{done}");
    assert!(!updates.iter().any(|u| u.to_string().contains(KEY)));
    assert!(agent.finish().success());
}

/// A model change builds a new session from the history: the user's "always allow" goes with
/// it, so the same tool is not asked about again (issue 28's follow-up).
#[test]
fn allow_always_outlasts_a_model_change() {
    let mock = MockProvider::start([
        write_call("k.txt", "1"),
        Reply::text_answer("first"),
        write_call("k.txt", "2"),
        Reply::text_answer("second"),
    ])
    .unwrap();
    let env = Env::new();
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize();
    let sid = agent.new_session(&env);
    let mut asked = 0;
    let answer = agent.call_with(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "write 1"}]}),
        |_| {
            asked += 1;
            json!({"outcome": {"outcome": "selected", "optionId": "allow_always"}})
        },
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(asked, 1);
    let set = agent.call(
        "session/set_config_option",
        json!({"sessionId": sid, "configId": "model", "value": "other-model"}),
    );
    assert!(set.get("result").is_some(), "{set}");
    let set = agent.call(
        "session/set_mode",
        json!({"sessionId": sid, "modeId": "Builder"}),
    );
    assert!(set.get("result").is_some(), "{set}");
    let answer = agent.call_with(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "write 2"}]}),
        |r| panic!("asked again after the rebuild: {r}"),
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        std::fs::read_to_string(env.work().join("k.txt")).unwrap(),
        "2"
    );
    assert_eq!(mock.chat_requests()[2].json()["model"], "other-model");
    assert!(agent.finish().success());
}

/// The lines of the session files under `env`'s state directory, parsed.
fn session_lines(env: &Env) -> Vec<Value> {
    std::fs::read_dir(env.path("state/hrns/sessions"))
        .into_iter()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A subagent still running when its parent's prompt is cancelled ends a moment later, after
/// the prompt was answered: how it ended is saved to the session file, as under `hrns exec`.
#[test]
fn a_stopped_subagents_late_end_is_saved_to_the_session_file() {
    let task = json!({"description": "look", "prompt": "Read notes.txt.", "agent": "Explorer"})
        .to_string();
    let mock =
        MockProvider::start([Reply::tool_calls(&[("t1", "task", &task)]), Reply::hang()]).unwrap();
    let env = Env::new();
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize();
    let sid = agent.new_session(&env);
    agent.send(
        json!({"jsonrpc": "2.0", "id": 70, "method": "session/prompt",
        "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "delegate"}]}}),
    );
    // The child's request is out (and hangs): the child runs.
    wait_for_chat(&mock, 2);
    agent.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}));
    let answer = agent.until_answer(json!(70), &mut |r| panic!("unexpected {r}"));
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    let child_ended = |lines: &[Value]| {
        lines.iter().any(|l| {
            l["child"]["parent_call_id"] == "t1" && l["child"]["event"]["type"] == "turn_cancelled"
        })
    };
    // The child ends on its own after the answer: wait for its line (a guard, not a timing).
    let deadline = std::time::Instant::now() + HANG;
    while !child_ended(&session_lines(&env)) {
        assert!(
            std::time::Instant::now() < deadline,
            "the stopped child's end was never saved: {:#?}",
            session_lines(&env)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Once, not again when the session closes.
    assert!(agent.finish().success());
    let lines = session_lines(&env);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l["child"]["event"]["type"] == "turn_cancelled")
            .count(),
        1,
        "{lines:#?}"
    );
    assert!(lines.iter().all(|l| !l.to_string().contains(KEY)));
}

/// A provider for a parent that hands a write to a Builder child: the child's `write_file`
/// needs approval under the default `ask` policy.
fn delegated_write() -> MockProvider {
    MockProvider::start_with(|req| {
        if req.method != "POST" {
            return None;
        }
        let body = req.json();
        let parent = body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["function"]["name"] == "task");
        let last = body["messages"].as_array().unwrap().last().unwrap().clone();
        let task = json!({"description": "write", "prompt": "Write out.txt.", "agent": "Builder"});
        Some(match (parent, last["role"].as_str()) {
            (true, Some("user")) => Reply::tool_calls(&[("t1", "task", &task.to_string())]),
            (true, _) => Reply::text_answer("The builder is done."),
            (false, Some("user")) => Reply::tool_calls(&[(
                "w1",
                "write_file",
                r#"{"path":"out.txt","content":"from the child\n"}"#,
            )]),
            (false, _) => Reply::text_answer("The child is done."),
        })
    })
    .unwrap()
}

/// What the child's second request told it about its write (the tool result).
fn child_write_result(mock: &MockProvider) -> String {
    mock.chat_requests()
        .iter()
        .map(|r| r.json())
        .flat_map(|body| body["messages"].as_array().cloned().unwrap_or_default())
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "w1")
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

/// A subagent's approval question comes out of the parent's session and reaches the editor as
/// a `session/request_permission` about the child's call; the editor's answer is the child's.
#[test]
fn a_subagents_question_is_asked_and_its_answer_obeyed() {
    for (option, written) in [("allow_once", true), ("reject_once", false)] {
        let mock = delegated_write();
        let env = Env::new();
        let mut agent = Agent::start(&env, &mock, &[]);
        agent.initialize();
        let sid = agent.new_session(&env);
        let mut asked = Vec::new();
        let answer = agent.call_with(
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "text", "text": "delegate a write"}]}),
            |request| {
                asked.push(request.clone());
                assert!(
                    !env.work().join("out.txt").exists(),
                    "nothing written before the answer"
                );
                json!({"outcome": {"outcome": "selected", "optionId": option}})
            },
        );
        assert_eq!(
            answer["result"]["stopReason"], "end_turn",
            "{option}: {answer}"
        );
        assert_eq!(asked.len(), 1, "{option}: {asked:#?}");
        let request = &asked[0];
        assert_eq!(request["method"], "session/request_permission");
        assert_eq!(request["params"]["sessionId"], sid);
        let call = &request["params"]["toolCall"];
        assert_eq!(call["toolCallId"], "t1/w1", "{option}: {request}");
        assert_eq!(call["rawInput"]["path"], "out.txt", "{option}: {request}");
        assert_eq!(
            call["title"], "Builder: Write out.txt",
            "{option}: {request}"
        );
        assert_eq!(
            env.work().join("out.txt").exists(),
            written,
            "{option}: {}",
            child_write_result(&mock)
        );
        let result = child_write_result(&mock);
        if written {
            assert_eq!(
                std::fs::read_to_string(env.work().join("out.txt")).unwrap(),
                "from the child\n"
            );
        } else {
            assert!(result.contains("denied"), "{option}: {result}");
        }
        let updates = agent.updates();
        let last = updates
            .iter()
            .rfind(|u| u["toolCallId"] == "t1/w1")
            .unwrap_or_else(|| panic!("{option}: {updates:#?}"));
        let want = if written { "completed" } else { "failed" };
        assert_eq!(last["status"], want, "{option}: {last}");
        assert!(
            text_of(&updates, "agent_message_chunk").contains("The builder is done."),
            "{option}"
        );
        assert!(agent.finish().success());
    }
}

/// A cancel while the editor is asked about a subagent's call ends the prompt as cancelled;
/// the editor's late "allow" does not run the call.
#[test]
fn a_cancel_while_a_subagents_question_is_open_runs_nothing() {
    let mock = delegated_write();
    let env = Env::new();
    let mut agent = Agent::start(&env, &mock, &[]);
    agent.initialize();
    let sid = agent.new_session(&env);
    agent.send(
        json!({"jsonrpc": "2.0", "id": 80, "method": "session/prompt",
        "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "delegate a write"}]}}),
    );
    let asked = loop {
        let m = agent.next();
        if m["method"] == "session/request_permission" {
            break m;
        }
    };
    assert_eq!(
        asked["params"]["toolCall"]["toolCallId"], "t1/w1",
        "{asked}"
    );
    agent.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}));
    let answer = agent.until_answer(json!(80), &mut |r| panic!("unexpected {r}"));
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    // The editor answers late, and with an "allow": the question is no longer open.
    agent.send(json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}}));
    // A request after the late answer: the agent read and dropped it, and goes on.
    let list = agent.call("session/list", json!({}));
    assert!(list["result"]["sessions"].is_array(), "{list}");
    assert!(agent.finish().success());
    assert!(
        !env.work().join("out.txt").exists(),
        "a cancelled subagent's call ran"
    );
}
