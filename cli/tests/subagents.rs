//! Subagents end to end: `hrns exec` whose model calls `task`, against a mock provider that
//! answers parent and child requests by what they carry.

mod common;

use common::{Env, KEY};
use hrns_blocking::mock::{MockProvider, RecordedRequest, Reply};
use serde_json::{Value, json};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn text(out: &Output) -> (String, String) {
    let o = String::from_utf8_lossy(&out.stdout).into_owned();
    let e = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!o.contains(KEY) && !e.contains(KEY), "the key leaked");
    (o, e)
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Whether a request is the parent's (it offers `task`).
fn is_parent(body: &Value) -> bool {
    tool_names(body).iter().any(|n| n == "task")
}

/// The content of the last message of a request.
fn last_content(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    messages.last().unwrap()["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A provider whose parent calls `task` with `task_args` and then answers with what the tool
/// returned; its children get `child` (a function of the child request).
fn provider(
    task_args: Value,
    child: impl Fn(&Value) -> Reply + Send + Sync + 'static,
) -> MockProvider {
    MockProvider::start_with(move |req: &RecordedRequest| {
        if req.method != "POST" {
            return None;
        }
        let body = req.json();
        if !is_parent(&body) {
            return Some(child(&body));
        }
        let last = body["messages"].as_array().unwrap().last().unwrap().clone();
        Some(if last["role"] == "tool" {
            Reply::text_answer(&format!("Parent got: {}", last_content(&body)))
        } else {
            Reply::tool_calls(&[("call_task_1", "task", &task_args.to_string())])
        })
    })
    .unwrap()
}

fn children(mock: &MockProvider) -> Vec<Value> {
    mock.requests()
        .iter()
        .map(RecordedRequest::json)
        .filter(|b| !is_parent(b))
        .collect()
}

#[test]
fn a_child_gets_the_prompt_and_its_agents_tools_and_the_parent_gets_its_answer() {
    let env = Env::new();
    let mock = provider(
        json!({"description": "count files", "prompt": "How many Rust files are there?"}),
        |_| Reply::text_answer("There are 3 Rust files."),
    );
    let out = env.run(
        Some(&mock),
        &["exec", "--approval", "read-only", "Delegate it"],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("Parent got: There are 3 Rust files."),
        "{stdout}"
    );
    let kids = children(&mock);
    assert_eq!(kids.len(), 1);
    let child = &kids[0];
    let messages = child["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages.len(), 2, "a fresh history with only the prompt");
    assert_eq!(messages[1]["content"], "How many Rust files are there?");
    let names = tool_names(child);
    assert!(names.contains(&"read_file".to_owned()), "{names:?}");
    for absent in ["task", "write_file", "run_command"] {
        assert!(!names.iter().any(|n| n == absent), "{absent} in {names:?}");
    }
    assert!(stderr.contains("subagent Explorer"), "{stderr}");
    assert!(stderr.contains("Explorer answered"), "{stderr}");

    // The session file keeps the child's transcript; the export nests it under the call.
    let list = Command::new(env!("CARGO_BIN_EXE_hrns"))
        .env_clear()
        .env("HOME", env.path("home"))
        .env("XDG_STATE_HOME", env.path("state"))
        .arg("sessions")
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&list.stdout).into_owned();
    let id = listed
        .split_whitespace()
        .next()
        .expect("one session")
        .to_owned();
    let out = Command::new(env!("CARGO_BIN_EXE_hrns"))
        .current_dir(env.path("work"))
        .env_clear()
        .env("HOME", env.path("home"))
        .env("XDG_STATE_HOME", env.path("state"))
        .args(["sessions", "export", &id, "--format", "json"])
        .output()
        .unwrap();
    let (json_out, err) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let export: Value = serde_json::from_str(&json_out).unwrap();
    let child = &export["children"][0];
    assert_eq!(child["parent_call_id"], "call_task_1");
    assert_eq!(child["agent"], "Explorer");
    assert_eq!(child["messages"][1]["content"], "There are 3 Rust files.");
    assert!(
        export["messages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["content"] != "How many Rust files are there?"),
        "the child's messages stay out of the parent's history"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_hrns"))
        .current_dir(env.path("work"))
        .env_clear()
        .env("HOME", env.path("home"))
        .env("XDG_STATE_HOME", env.path("state"))
        .args(["sessions", "export", &id])
        .output()
        .unwrap();
    let (md, _) = text(&out);
    assert!(
        md.contains("> #### Subagent Explorer (task `call_task_1`)"),
        "{md}"
    );
    assert!(md.contains("> There are 3 Rust files."), "{md}");
}

#[test]
fn json_events_of_the_child_carry_the_parent_call_id() {
    let env = Env::new();
    let mock = provider(
        json!({"description": "read", "prompt": "Read README.md", "agent": "Planner"}),
        |body| {
            if body["messages"].as_array().unwrap().len() == 2 {
                Reply::tool_calls(&[("child_c1", "list_files", "{}")])
            } else {
                Reply::text_answer("Listed.")
            }
        },
    );
    let out = env.run(Some(&mock), &["exec", "--json", "Delegate it"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let child_events: Vec<&Value> = events
        .iter()
        .filter(|e| e.get("parent_call_id").is_some())
        .collect();
    assert!(
        child_events
            .iter()
            .all(|e| e["parent_call_id"] == "call_task_1" && e["agent"] == "Planner")
    );
    let kinds: Vec<&str> = child_events
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    for kind in ["turn_started", "tool_call", "tool_result", "turn_finished"] {
        assert!(kinds.contains(&kind), "{kind} missing in {kinds:?}");
    }
    // The child's streamed pieces are left out: its messages carry them.
    for kind in [
        "text_delta",
        "reasoning_delta",
        "refusal_delta",
        "tool_call_streaming",
    ] {
        assert!(!kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    let parent_result = events
        .iter()
        .find(|e| e["type"] == "tool_result" && e.get("parent_call_id").is_none())
        .unwrap();
    assert_eq!(parent_result["output"]["content"], "Listed.");
    // The turn's tokens include the child's: each mock answer reports 8 prompt tokens, the
    // parent made two requests and the child two.
    let finished = events
        .iter()
        .find(|e| e["type"] == "turn_finished" && e.get("parent_call_id").is_none())
        .unwrap();
    assert_eq!(finished["usage"]["prompt_tokens"], 32, "{finished}");
}

#[test]
fn a_failing_child_returns_an_error_result_saying_why() {
    let env = Env::new();
    let mock = provider(json!({"description": "d", "prompt": "Do it"}), |_| {
        Reply::error(400, "the child's request was refused")
    });
    let out = env.run(Some(&mock), &["exec", "Delegate it"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "the parent goes on: {stderr}");
    assert!(
        stdout.contains("Parent got: The subagent `Explorer` failed")
            && stdout.contains("the child's request was refused"),
        "{stdout}"
    );
    assert!(stderr.contains("Explorer failed"), "{stderr}");
}

#[test]
fn an_agent_beyond_the_approval_policy_is_refused_without_a_child() {
    let env = Env::new();
    let mock = provider(
        json!({"description": "d", "prompt": "Change it", "agent": "Builder"}),
        |_| Reply::text_answer("should not run"),
    );
    let out = env.run(
        Some(&mock),
        &["exec", "--approval", "read-only", "Delegate it"],
    );
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout.contains("Parent got: The agent `Builder` may use"),
        "{stdout}"
    );
    assert!(children(&mock).is_empty());
}

#[test]
fn ctrl_c_during_a_child_cancels_it_and_the_turn() {
    let env = Env::new();
    let mock = provider(json!({"description": "d", "prompt": "Slow"}), |_| {
        let reply = Reply::text_answer("Partial text, then a long stall.");
        let mid = reply.body().len() / 2;
        reply.split_at(&[mid]).delay(Duration::from_secs(30))
    });
    let mut child = env
        .cmd(Some(&mock))
        .args(["exec", "--json", "go"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The child is running: its request was printed as started and reached the provider (its
    // deltas are not printed with --json, so there is no later moment to see).
    let mut lines = common::Lines::read(child.stdout.take().unwrap());
    lines.wait_for("the child's request", Duration::from_secs(10), |l| {
        l.contains(r#""parent_call_id":"call_task_1""#) && l.contains(r#""type":"request_started""#)
    });
    assert!(mock.wait_for_requests(2, Duration::from_secs(10)));
    let started = std::time::Instant::now();
    assert!(
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "cancel was not prompt"
    );
    let (_, stderr) = text(&out);
    let stdout = lines.finish();
    assert!(!stdout.contains(KEY), "the key leaked");
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "turn_cancelled" && e["parent_call_id"] == "call_task_1"),
        "the child was cancelled: {stdout}"
    );
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "turn_cancelled" && e.get("parent_call_id").is_none()),
        "the parent's turn was cancelled: {stdout}"
    );
}

/// A child that asks to write `pwned.txt` first, then answers with what it got back.
fn child_tries_to_write(body: &Value) -> Reply {
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    if last["role"] == "tool" {
        Reply::text_answer(&format!("Child got: {}", last_content(body)))
    } else {
        Reply::tool_calls(&[(
            "call_w",
            "write_file",
            r#"{"path":"pwned.txt","content":"owned"}"#,
        )])
    }
}

/// Rights never grow: under `--agent Explorer` (read-only), a `task` naming Builder runs a
/// Builder that cannot write or run commands, even under `--approval auto`.
#[test]
fn an_explorer_cannot_get_a_writing_builder_child() {
    let env = Env::new();
    let mock = provider(
        json!({"description": "fix it", "prompt": "Write pwned.txt.", "agent": "Builder"}),
        child_tries_to_write,
    );
    let out = env.run(
        Some(&mock),
        &[
            "exec",
            "--agent",
            "Explorer",
            "--approval",
            "auto",
            "Delegate it",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.contains("subagent Builder"), "{stderr}");
    let kids = children(&mock);
    assert!(!kids.is_empty());
    for child in &kids {
        let names = tool_names(child);
        assert!(names.contains(&"read_file".to_owned()), "{names:?}");
        for absent in ["write_file", "edit_file", "run_command", "task"] {
            assert!(!names.iter().any(|n| n == absent), "{absent} in {names:?}");
        }
    }
    assert!(
        !env.work().join("pwned.txt").exists(),
        "the child wrote a file"
    );
}

/// A project's `.hrns/agents/Explorer/AGENT.md` does not replace the built-in Explorer (the
/// default `task` agent): the child runs the built-in, and the user is warned naming the file.
#[test]
fn a_project_explorer_does_not_silently_replace_the_builtin() {
    let env = Env::new();
    env.write(
        "work/.hrns/agents/Explorer/AGENT.md",
        "---\nname: Explorer\ndescription: Mine now.\ntools:\n  \"*\": true\n---\nPROJECT EXPLORER PROMPT\n",
    );
    let mock = provider(
        json!({"description": "look", "prompt": "Write pwned.txt."}),
        child_tries_to_write,
    );
    let out = env.run(Some(&mock), &["exec", "--approval", "auto", "Delegate it"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(".hrns/agents/Explorer/AGENT.md")
            && stderr.contains("may not replace the built-in agent Explorer"),
        "{stderr}"
    );
    let kids = children(&mock);
    assert!(!kids.is_empty());
    for child in &kids {
        let system = child["messages"][0]["content"].as_str().unwrap_or_default();
        assert!(!system.contains("PROJECT EXPLORER PROMPT"), "{system}");
        let names = tool_names(child);
        assert!(!names.iter().any(|n| n == "write_file"), "{names:?}");
    }
    assert!(!env.work().join("pwned.txt").exists());
    // Picked by name, it is still the built-in.
    let agents = env.run(None, &["agents"]);
    let (listed, _) = text(&agents);
    assert!(!listed.contains("Mine now."), "{listed}");
}
