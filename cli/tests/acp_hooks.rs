//! Hooks under `hrns acp`: `SessionEnd` when the editor closes a session and when it goes
//! away with sessions open, and `Notification` when a permission request is sent. The real
//! binary over pipes against the scripted provider; each hook appends its input to a file.

mod common;

use common::{Env, KEY};
use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a test waits for a line before it calls the agent hung (a guard, not a timing
/// assertion).
const HANG: Duration = Duration::from_secs(60);

struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    next_id: u64,
}

impl Agent {
    /// `hrns acp` with `hooks` configured.
    fn start(env: &Env, mock: &MockProvider, hooks: &Value) -> Agent {
        env.config_with(mock, &format!(", \"hooks\": {hooks}"));
        let mut child = env
            .cmd(Some(mock))
            .arg("acp")
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
            next_id: 1,
        }
    }

    /// Sends a request and returns its answer; requests from the agent met meanwhile are
    /// answered by `on_request`.
    fn call_with(
        &mut self,
        method: &str,
        params: Value,
        mut on_request: impl FnMut(&Value) -> Value,
    ) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self.lines.recv_timeout(HANG).expect("hrns acp hung");
            assert!(!line.contains(KEY), "the key leaked: {line}");
            let m: Value = serde_json::from_str(&line).unwrap();
            if m.get("method").is_some() && m.get("id").is_some() {
                let result = on_request(&m);
                self.send(json!({"jsonrpc": "2.0", "id": m["id"], "result": result}));
            } else if m.get("method").is_none() && m["id"] == json!(id) {
                return m;
            }
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.call_with(method, params, |r| panic!("unexpected request {r}"))
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn new_session(&mut self, env: &Env) -> String {
        self.call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        );
        let r = self.call(
            "session/new",
            json!({"cwd": env.work().display().to_string(), "mcpServers": []}),
        );
        r["result"]["sessionId"].as_str().unwrap().to_owned()
    }

    /// Closes stdin and waits for the exit.
    fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        while self.lines.recv_timeout(HANG).is_ok() {}
        self.child.wait().unwrap()
    }
}

/// `events` each with one hook appending its input, a line each, to `hooks.jsonl`.
fn recording_hooks(env: &Env, events: &[&str]) -> (Value, std::path::PathBuf) {
    let seen = env.path("hooks.jsonl");
    let command = format!("cat >> {0}; echo >> {0}", seen.display());
    let entry = json!([{"hooks": [{"type": "command", "command": command}]}]);
    let hooks: serde_json::Map<String, Value> = events
        .iter()
        .map(|e| ((*e).to_owned(), entry.clone()))
        .collect();
    (Value::Object(hooks), seen)
}

fn inputs(seen: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(seen)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The inputs, once there are `n` of them (a guard against a hang, not a timing assertion).
fn wait_for_inputs(seen: &std::path::Path, n: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + HANG;
    loop {
        let all = inputs(seen);
        if all.len() >= n || std::time::Instant::now() > deadline {
            return all;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn session_end_runs_on_close_and_when_the_editor_goes_away() {
    let mock =
        MockProvider::start([Reply::text_answer("first"), Reply::text_answer("second")]).unwrap();
    let env = Env::new();
    let (hooks, seen) = recording_hooks(&env, &["SessionEnd"]);
    let mut agent = Agent::start(&env, &mock, &hooks);
    let closed_sid = agent.new_session(&env);
    let prompt = |sid: &str| json!({"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]});
    let answer = agent.call("session/prompt", prompt(&closed_sid));
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let open_sid = agent.new_session(&env);
    agent.call("session/prompt", prompt(&open_sid));
    assert!(inputs(&seen).is_empty(), "no session ended yet");
    let closed = agent.call("session/close", json!({"sessionId": closed_sid}));
    assert!(closed.get("result").is_some(), "{closed}");
    // The close is answered once its hooks ran.
    let after_close = inputs(&seen);
    assert_eq!(after_close.len(), 1, "{after_close:?}");
    assert_eq!(after_close[0]["hook_event_name"], "SessionEnd");
    assert_eq!(after_close[0]["session_id"], closed_sid.as_str());
    assert_eq!(after_close[0]["reason"], "other");
    // The editor goes away with a session open: it ends too.
    assert!(agent.finish().success());
    let all = inputs(&seen);
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[1]["session_id"], open_sid.as_str());
    assert_eq!(all[1]["reason"], "other");
}

#[test]
fn a_permission_request_is_a_notification() {
    let args = json!({"path": "a.txt", "content": "x"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("call_w", "write_file", &args)]),
        Reply::text_answer("written"),
    ])
    .unwrap();
    let env = Env::new();
    let (hooks, seen) = recording_hooks(&env, &["Notification"]);
    let mut agent = Agent::start(&env, &mock, &hooks);
    let sid = agent.new_session(&env);
    let mut asked = 0;
    let answer = agent.call_with(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "write it"}]}),
        |request| {
            assert_eq!(request["method"], "session/request_permission");
            asked += 1;
            json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})
        },
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(asked, 1);
    assert!(agent.finish().success());
    // The hook runs beside the question, in the background.
    let all = wait_for_inputs(&seen, 1);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0]["hook_event_name"], "Notification");
    assert_eq!(all[0]["notification_type"], "permission_prompt");
    assert_eq!(all[0]["session_id"], sid.as_str());
    assert!(
        all[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Write")),
        "{all:?}"
    );
}

/// After "reject always" for a tool, its later calls are denied without asking the editor and
/// without a `permission_prompt` notification; another tool is still asked (and notified).
#[test]
fn reject_always_asks_and_notifies_once_per_tool() {
    let write = |content: &str| json!({"path": "a.txt", "content": content}).to_string();
    let command = json!({"command": "true"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("call_w1", "write_file", &write("1"))]),
        Reply::tool_calls(&[("call_w2", "write_file", &write("2"))]),
        Reply::tool_calls(&[("call_r", "run_command", &command)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let env = Env::new();
    let (hooks, seen) = recording_hooks(&env, &["Notification"]);
    let mut agent = Agent::start(&env, &mock, &hooks);
    let sid = agent.new_session(&env);
    let mut asked = Vec::new();
    let answer = agent.call_with(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}),
        |request| {
            let id = request["params"]["toolCall"]["toolCallId"].clone();
            asked.push(id.as_str().unwrap_or_default().to_owned());
            let option = if asked.len() == 1 {
                "reject_always"
            } else {
                "reject_once"
            };
            json!({"outcome": {"outcome": "selected", "optionId": option}})
        },
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(asked, ["call_w1", "call_r"]);
    assert!(!env.work().join("a.txt").exists());
    // What the model was told about the second write.
    let sent = mock.chat_requests()[2].json().to_string();
    assert!(sent.contains("rest of this session"), "{sent}");
    assert!(agent.finish().success());
    // The run_command question's notification is launched a model request after any for
    // call_w2 would have been, so once it is here, one for call_w2 would be too.
    let all = wait_for_inputs(&seen, 2);
    let messages: Vec<&str> = all.iter().filter_map(|i| i["message"].as_str()).collect();
    assert_eq!(messages.len(), 2, "{all:?}");
    assert_eq!(
        messages.iter().filter(|m| m.contains("Write")).count(),
        1,
        "{messages:?}"
    );
    assert_eq!(
        messages.iter().filter(|m| m.contains("Bash")).count(),
        1,
        "{messages:?}"
    );
}

/// The session file named by a hook's input: its header, and its checkpoints as
/// `(moment, turn, step, changed)`.
fn saved_session(input: &Value) -> (Value, Vec<Value>) {
    let path = input["transcript_path"]
        .as_str()
        .expect("a transcript path");
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap());
    let header = lines.next().expect("a header");
    assert_eq!(header["id"], input["session_id"], "{header}");
    let checkpoints = lines
        .map(|line| line["event"].clone())
        .filter(|e| e["type"] == "checkpoint")
        .map(|e| json!([e["moment"], e["turn"], e["step"], e["changed"]]))
        .collect();
    (header, checkpoints)
}

#[test]
fn exec_and_acp_open_the_same_session_file_checkpoints_and_hooks_for_the_same_config() {
    // One host opens every front end's session: the same header, the same checkpoints around
    // the same turn, and `SessionStart` hooks told the same facts of the file.
    let args = json!({"path": "a.txt", "content": "written\n"}).to_string();
    let turn = || {
        [
            Reply::tool_calls(&[("call_w", "write_file", &args)]),
            Reply::text_answer("written"),
        ]
    };
    let mock = MockProvider::start(turn().into_iter().chain(turn())).unwrap();
    let env = Env::new();
    env.write("work/a.txt", "before\n");
    let (hooks, seen) = recording_hooks(&env, &["SessionStart"]);
    // Exec, then the editor, over the same workspace as it was.
    let mut agent = Agent::start(&env, &mock, &hooks);
    let out = env.run(Some(&mock), &["exec", "--json", "write it"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.path("work/a.txt")).unwrap(),
        "written\n"
    );
    env.write("work/a.txt", "before\n");
    let sid = agent.new_session(&env);
    let answer = agent.call_with(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "write it"}]}),
        |_| json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}),
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(agent.finish().success());
    let started = inputs(&seen);
    assert_eq!(started.len(), 2, "{started:?}");
    let (exec, acp) = (&started[0], &started[1]);
    assert_eq!(acp["session_id"], sid.as_str());
    assert_ne!(exec["session_id"], acp["session_id"]);
    for input in [exec, acp] {
        assert_eq!(input["hook_event_name"], "SessionStart", "{input}");
        assert_eq!(input["source"], "startup", "{input}");
        assert_eq!(input["cwd"], exec["cwd"], "{input}");
    }
    let (exec_header, exec_checkpoints) = saved_session(exec);
    let (acp_header, acp_checkpoints) = saved_session(acp);
    let without_id = |mut h: Value| {
        let o = h.as_object_mut().unwrap();
        assert!(o.remove("id").is_some() && o.remove("started").is_some());
        h
    };
    assert_eq!(without_id(exec_header.clone()), without_id(acp_header));
    assert_eq!(exec_header["agent"], "Builder", "{exec_header}");
    assert_eq!(
        exec_checkpoints, acp_checkpoints,
        "the same checkpoints for the same turn"
    );
    // Before the turn, and after the write that changed the file.
    assert_eq!(exec_checkpoints.len(), 2, "{exec_checkpoints:?}");
    assert_eq!(exec_checkpoints[1][3], json!(["a.txt"]));
}
