//! `hrns` end to end: the built binary against the mock provider over loopback.

mod common;

use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::{Env, KEY, stderr, stdout};

fn assert_no_key(o: &Output) {
    assert!(
        !stdout(o).contains(KEY) && !stderr(o).contains(KEY),
        "key leaked:\n{}\n{}",
        stdout(o),
        stderr(o)
    );
}

/// The texts of the messages of chat request `i`, after the system prompt.
fn sent_texts(mock: &MockProvider, i: usize) -> Vec<String> {
    let body = mock.chat_requests()[i].json();
    body["messages"].as_array().unwrap()[1..]
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn exec_streams_text_to_stdout() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("Hello from the mock.")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "say hello"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Hello from the mock.\n");
    assert_no_key(&out);
    let req = &mock.chat_requests()[0];
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = req.json();
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "say hello"})
    );
}

#[test]
fn exec_json_prints_one_event_per_line() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("ok")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "--json", "hi"]);
    assert_eq!(out.status.code(), Some(0));
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events[0]["type"], "session_started");
    assert_eq!(events[1]["type"], "turn_started");
    assert_eq!(events.last().unwrap()["type"], "turn_finished");
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "text_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "ok");
    assert_no_key(&out);
}

#[test]
fn exec_reads_the_prompt_from_stdin() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("got it")]).unwrap();
    let out = env.run_stdin(Some(&mock), &["exec"], b"from a pipe\n");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        mock.chat_requests()[0].json()["messages"][1]["content"],
        "from a pipe\n"
    );
    let out = env.run_stdin(Some(&mock), &["exec", "-"], b"   \n");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("empty"));
}

#[test]
fn exec_runs_tools_and_reports_activity_on_stderr() {
    let env = Env::new();
    env.write("work/notes.txt", "the secret word is pineapple\n");
    let mock = MockProvider::start([
        Reply::tool_calls(&[("call_1", "read_file", r#"{"path":"notes.txt"}"#)]),
        Reply::text_answer("The word is pineapple."),
    ])
    .unwrap();
    let out = env.run(Some(&mock), &["exec", "what is the word?"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The word is pineapple.\n");
    assert!(stderr(&out).contains("read_file"), "{}", stderr(&out));
    let second = mock.chat_requests()[1].json();
    let tool_msg = &second["messages"][3];
    assert_eq!(tool_msg["role"], "tool");
    assert!(tool_msg["content"].as_str().unwrap().contains("pineapple"));
}

#[test]
fn exit_codes() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::error(401, "bad key")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("bad key"));
    assert_no_key(&out);
    // Nothing configured and no terminal: a usage error that says what to set.
    let out = env.run(None, &["exec", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("OPENAI_API_KEY"), "{}", stderr(&out));
    // `ask` needs a terminal.
    let out = env.run(Some(&mock), &["exec", "--approval", "ask", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("terminal"));
    // Unknown flags are usage errors too.
    let out = env.run(Some(&mock), &["exec", "--nope"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn go_shaped_config_file_is_read_and_flags_select() {
    let env = Env::new();
    let a = MockProvider::start([Reply::text_answer("from a")]).unwrap();
    let b =
        MockProvider::start([Reply::text_answer("from b"), Reply::text_answer("b again")]).unwrap();
    let config = json!({
        "providers": {
            "a": {"url": a.base_url(), "key": KEY, "model": "model-a", "skipVerify": false},
            "b": {"url": b.base_url(), "keyEnv": "B_KEY", "model": "model-b", "skipVerify": false, "custom": 1}
        },
        "currentProvider": "a",
        "currentAgent": "Builder",
        "theme": "dark"
    });
    env.write(
        "config/hrns/config.json",
        &serde_json::to_string_pretty(&config).unwrap(),
    );
    let out = env.run(None, &["exec", "x"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "from a\n");
    assert_eq!(a.chat_requests()[0].json()["model"], "model-a");
    let out = env
        .cmd(None)
        .env("B_KEY", "b-secret")
        .args(["exec", "--provider", "b", "--model", "other", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(b.chat_requests()[0].json()["model"], "other");
    assert_eq!(
        b.chat_requests()[0].header("authorization"),
        Some("Bearer b-secret")
    );
    // keyEnv unset: a clear error naming the variable.
    let out = env.run(None, &["exec", "--provider", "b", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("B_KEY"), "{}", stderr(&out));
    let out = env.run(None, &["providers"]);
    assert!(
        stdout(&out).contains("* a") && stdout(&out).contains("  b"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn corrupt_config_is_reported_and_left_alone() {
    let env = Env::new();
    let text = "{\n  \"providers\": {\n    \"a\": {\"url\": \"x\",}\n  }\n}\n";
    let path = env.write("config/hrns/config.json", text);
    let out = env.run(None, &["exec", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&format!("{}:3:", path.display())), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    let _ = env.config_file();
}

#[test]
fn agents_filter_the_tools_sent() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::text_answer("a"),
        Reply::text_answer("b"),
        Reply::text_answer("c"),
    ])
    .unwrap();
    assert_eq!(env.run(Some(&mock), &["exec", "x"]).status.code(), Some(0));
    let all = tool_names(&mock.chat_requests()[0].json());
    for t in [
        "read_file",
        "list_files",
        "write_file",
        "edit_file",
        "run_command",
    ] {
        assert!(all.contains(&t.to_owned()), "{all:?}");
    }
    assert_eq!(
        env.run(Some(&mock), &["exec", "--agent", "explorer", "x"])
            .status
            .code(),
        Some(0)
    );
    let explorer = tool_names(&mock.chat_requests()[1].json());
    assert!(explorer.contains(&"read_file".to_owned()));
    for t in ["write_file", "edit_file", "run_command"] {
        assert!(!explorer.contains(&t.to_owned()), "{explorer:?}");
    }
    env.write(
        "work/.hrns/agents/reviewer/AGENT.md",
        "---\nname: Reviewer\ndescription: reads code\ntools:\n  \"*\": false\n  read_file: true\n---\nYou review code carefully.\n",
    );
    assert_eq!(
        env.run(Some(&mock), &["exec", "--agent", "reviewer", "x"])
            .status
            .code(),
        Some(0)
    );
    let body = mock.chat_requests()[2].json();
    assert_eq!(tool_names(&body), ["read_file"]);
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("You review code carefully.")
    );
    let out = env.run(None, &["agents"]);
    assert!(
        stdout(&out).contains("Reviewer") && stdout(&out).contains("Planner"),
        "{}",
        stdout(&out)
    );
    let out = env.run(Some(&mock), &["exec", "--agent", "nobody", "x"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn skills_go_into_the_prompt_and_load_on_demand() {
    let env = Env::new();
    env.write(
        "work/.agents/skills/release/SKILL.md",
        "---\nname: release\ndescription: How to cut a release of this project\n---\nStep 1: bump the version.\n",
    );
    env.write(
        "work/.agents/skills/broken/SKILL.md",
        "---\nname: [unclosed\n",
    );
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c", "load_skill", r#"{"name":"release"}"#)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let out = env.run(Some(&mock), &["exec", "cut a release"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("broken"),
        "bad skill reported: {}",
        stderr(&out)
    );
    let first = mock.chat_requests()[0].json();
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("release") && system.contains("How to cut a release"),
        "{system}"
    );
    assert!(tool_names(&first).contains(&"load_skill".to_owned()));
    let second = mock.chat_requests()[1].json();
    assert!(
        second["messages"][3]["content"]
            .as_str()
            .unwrap()
            .contains("Step 1: bump the version.")
    );
    let out = env.run(None, &["skills"]);
    assert!(stdout(&out).contains("release"));
}

#[test]
fn record_then_replay_without_a_network() {
    let env = Env::new();
    env.write("work/a.txt", "alpha\n");
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "read_file", r#"{"path":"a.txt"}"#)]),
        Reply::text_answer("It says alpha."),
    ])
    .unwrap();
    let rec = env.path("run.record");
    let out = env.run(
        Some(&mock),
        &["exec", "--record", rec.to_str().unwrap(), "read a.txt"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&rec).unwrap();
    assert!(!text.contains(KEY), "the key entered the recording");
    assert!(text.contains("[redacted]"));
    drop(mock);
    let out = env.run(None, &["replay", rec.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "It says alpha.\n");
    assert!(stderr(&out).contains("all as recorded"), "{}", stderr(&out));
    // Change the file the tool reads: the replay reports where the requests differ.
    env.write("work/a.txt", "beta\n");
    let out = env.run(None, &["replay", "--strict", rec.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("differs: request 2: messages[3].content"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn shipped_demo_replays() {
    let env = Env::new();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/demo.record");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = env
        .cmd(None)
        .current_dir(repo)
        .args(["replay", demo.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stdout(&out).is_empty());
    assert!(stderr(&out).contains("list_files"), "{}", stderr(&out));
}

#[test]
fn sessions_are_saved_listed_exported_and_continued() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::text_answer("first answer"),
        Reply::text_answer("second answer"),
    ])
    .unwrap();
    assert_eq!(
        env.run(Some(&mock), &["exec", "first question"])
            .status
            .code(),
        Some(0)
    );
    let list = env.run(None, &["sessions"]);
    let line = stdout(&list);
    assert!(
        line.contains("first question") && line.contains("2 messages"),
        "{line}"
    );
    let id = line.split_whitespace().next().unwrap().to_owned();
    let out = env.run(None, &["sessions", "export", &id, "--format", "md"]);
    assert!(
        stdout(&out).contains("## User\n\nfirst question") && stdout(&out).contains("first answer"),
        "{}",
        stdout(&out)
    );
    let out = env.run(None, &["sessions", "export", &id, "--format", "json"]);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["messages"].as_array().unwrap().len(), 2);
    let out = env.run(Some(&mock), &["exec", "--continue", "and then?"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        sent_texts(&mock, 1),
        ["first question", "first answer", "and then?"]
    );
    let state = std::fs::read_dir(env.path("state/hrns/sessions"))
        .unwrap()
        .count();
    assert_eq!(state, 1, "continuing appends to the same file");
    let files: Vec<_> = std::fs::read_dir(env.path("state/hrns/sessions"))
        .unwrap()
        .collect();
    let text = std::fs::read_to_string(files[0].as_ref().unwrap().path()).unwrap();
    assert!(!text.contains(KEY));
    let out = env.run(Some(&mock), &["exec", "--resume", "zzzzzz", "x"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn debug_sse_reads_files_and_stdin() {
    let env = Env::new();
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let file = env.write("body.txt", body);
    let out = env.run(None, &["debug", "sse", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["choices"][0]["content"], "Hi");
    assert_eq!(v["done"], true);
    let out = env.run_stdin(
        None,
        &["debug", "sse"],
        b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["choices"][0]["content"], "x");
    assert!(v["error"].as_str().unwrap().contains("ended before"));
    let out = env.run(None, &["debug", "sse", "/nonexistent/file"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn help_and_completions() {
    let env = Env::new();
    let out = env.run(None, &["--help"]);
    assert!(stdout(&out).contains("Examples:") && stdout(&out).contains("exec"));
    for shell in ["bash", "zsh", "fish"] {
        let out = env.run(None, &["completions", shell]);
        assert_eq!(out.status.code(), Some(0));
        assert!(stdout(&out).contains("hrns"));
    }
}

#[test]
fn concurrent_processes_write_separate_session_files() {
    let env = Env::new();
    let mock = MockProvider::start_repeating(Reply::text_answer("same answer")).unwrap();
    let children: Vec<_> = (0..4)
        .map(|i| {
            env.cmd(Some(&mock))
                .args(["exec", &format!("question {i}")])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let files: Vec<_> = std::fs::read_dir(env.path("state/hrns/sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 4);
    let mut questions: Vec<String> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.lines()
                .find(|l| l.contains("\"role\":\"user\""))
                .unwrap()
                .to_owned()
        })
        .collect();
    questions.sort();
    questions.dedup();
    assert_eq!(questions.len(), 4, "each file holds its own conversation");
}

#[test]
fn ctrl_c_cancels_the_turn_and_exits_130() {
    let env = Env::new();
    let reply = Reply::text_answer("Some text, then the provider stalls for a long time.");
    let mid = reply.body().len() / 2;
    let mock =
        MockProvider::start([reply.split_at(&[mid]).delay(Duration::from_secs(30))]).unwrap();
    let mut child = env
        .cmd(Some(&mock))
        .args(["exec", "--json", "go"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first half of the answer arrived: the turn is streaming, stalled mid-answer.
    let mut lines = common::Lines::read(child.stdout.take().unwrap());
    lines.wait_for("first delta", Duration::from_secs(10), |l| {
        l.contains(r#""type":"text_delta""#)
    });
    let started = std::time::Instant::now();
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "cancel was not prompt"
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let printed = lines.finish();
    let last: Value = serde_json::from_str(printed.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "turn_cancelled");
}

#[test]
fn an_oversized_stdin_prompt_is_refused_not_cut() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("never")]).unwrap();
    let big = "x".repeat(16 * 1024 * 1024 + 10);
    let out = env.run_stdin(Some(&mock), &["exec"], big.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("larger than 16 MiB"),
        "{}",
        stderr(&out)
    );
    assert!(mock.requests().is_empty(), "nothing was sent");
}

#[test]
fn a_plan_is_printed_on_stderr_and_is_a_plan_updated_event() {
    let plan = r#"{"explanation":"two steps","plan":[{"step":"read notes","status":"completed"},{"step":"answer","status":"in_progress"}]}"#;
    let script = || {
        [
            Reply::tool_calls(&[("p1", "update_plan", plan)]),
            Reply::text_answer("Done."),
        ]
    };
    let env = Env::new();
    let mock = MockProvider::start(script()).unwrap();
    let out = env.run(Some(&mock), &["exec", "plan it"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Done.\n");
    let err = stderr(&out);
    assert!(
        err.contains("plan:\n  two steps\n  [x] read notes\n  [~] answer\n"),
        "{err}"
    );
    // The tool is offered, and its result went back to the model without a driver running it.
    assert!(tool_names(&mock.chat_requests()[0].json()).contains(&"update_plan".to_owned()));
    let second = mock.chat_requests()[1].json();
    assert_eq!(second["messages"][3]["content"], "Plan updated.");

    let mock = MockProvider::start(script()).unwrap();
    let out = env.run(Some(&mock), &["exec", "--json", "plan it"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let updates: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "plan_updated")
        .collect();
    assert_eq!(updates.len(), 1);
    assert_eq!(
        *updates[0],
        json!({"type": "plan_updated", "explanation": "two steps", "plan": [
            {"step": "read notes", "status": "completed"},
            {"step": "answer", "status": "in_progress"}]})
    );
}

/// An answer with the provider's token counts, 2 000 of the 10 000 prompt tokens cached.
fn answer_with_cached_usage() -> Reply {
    use hrns_blocking::mock::chunk;
    let usage = r#"{"id":"c","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[],"usage":{"prompt_tokens":10000,"completion_tokens":500,"total_tokens":10500,"prompt_tokens_details":{"cached_tokens":2000}}}"#;
    Reply::sse(vec![
        chunk::role_chunk(),
        chunk::text_chunk("ok"),
        chunk::finish_chunk("stop"),
        usage.to_owned(),
    ])
}

#[test]
fn turn_finished_carries_the_cost_when_the_config_prices_the_model() {
    let env = Env::new();
    env.write(
        "config/hrns/config.json",
        r#"{"pricing": {"mock-model": {"input": 2.5, "output": 10, "cachedInput": 1.25}}}"#,
    );
    let mock = MockProvider::start([answer_with_cached_usage()]).unwrap();
    let out = env.run(Some(&mock), &["exec", "--json", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let last: Value = serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "turn_finished");
    // 8 000 × 2.5 + 2 000 × 1.25 + 500 × 10, per million tokens.
    let cost = last["cost"].as_f64().unwrap();
    assert!((cost - 0.0275).abs() < 1e-9, "{last}");
    assert_eq!(
        last["usage"]["prompt_tokens_details"]["cached_tokens"],
        2000
    );

    // Without a price for the model the cost is unknown: no number at all.
    let env = Env::new();
    env.write(
        "config/hrns/config.json",
        r#"{"pricing": {"another-model": {"input": 1, "output": 1}}}"#,
    );
    let mock = MockProvider::start([answer_with_cached_usage()]).unwrap();
    let out = env.run(Some(&mock), &["exec", "--json", "hi"]);
    let last: Value = serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "turn_finished");
    assert!(last.get("cost").is_none(), "{last}");
}

#[test]
fn a_mistake_in_pricing_is_a_usage_error_that_names_it() {
    let env = Env::new();
    env.write(
        "config/hrns/config.json",
        r#"{"pricing": {"mock-model": {"input": 2.5, "outptu": 10}}}"#,
    );
    let mock = MockProvider::start([Reply::text_answer("ok")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "hi"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("config.json: pricing:"), "{err}");
    assert!(err.contains("outptu"), "{err}");
    assert!(mock.chat_requests().is_empty());
}

/// A model whose context window hrns does not know is looked up in `/models` first; the
/// lookup leaves its connection to the chat request (one connection, one handshake with a
/// real provider), and the turn still gets its answer.
#[test]
fn the_window_lookup_and_the_chat_request_share_one_connection() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("hi there")]).unwrap();
    let out = env
        .cmd(Some(&mock))
        .env("HRNS_MODEL", "a-model-hrns-does-not-know")
        .args(["exec", "go"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("hi there"));
    assert_eq!(mock.model_requests().len(), 1, "one window lookup");
    assert_eq!(mock.chat_requests().len(), 1);
    assert_eq!(
        mock.connections(),
        1,
        "the chat request opened a connection of its own"
    );
}

#[test]
fn a_broken_stream_fails_and_what_was_shown_is_continued_from() {
    let env = Env::new();
    let answer = Reply::text_answer("The first half of the answer, and then the rest of it");
    let cut = answer.body().len() * 2 / 3;
    let mock =
        MockProvider::start([answer.drop_after(cut), Reply::text_answer("Going on.")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "explain"]);
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    let shown = stdout(&out);
    assert!(shown.starts_with("The first half"), "{shown}");
    assert!(stderr(&out).contains("broke"), "{}", stderr(&out));
    assert_eq!(mock.chat_requests().len(), 1, "not retried after output");

    // The next run holds what the user saw, said to be cut off.
    let out = env.run(Some(&mock), &["exec", "--continue", "go on"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let texts = sent_texts(&mock, 1);
    assert_eq!(texts.len(), 3, "{texts:?}");
    assert_eq!(texts[0], "explain");
    assert_eq!(
        texts[1],
        format!("{}\n\n[cut off: the stream broke]", shown.trim_end())
    );
    assert_eq!(texts[2], "go on");
}

#[test]
fn a_stream_that_ends_without_its_last_blank_line_is_whole() {
    // Servers that write `data: [DONE]`, or their last chunk, with no blank line after it:
    // the answer is whole (and the usage in such a last chunk is read).
    let text = |t: &str| {
        format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{t}\"}}}}]}}\n\n")
    };
    let finish = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}";
    let usage = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2,\"total_tokens\":9}}";
    let bodies = [
        format!(
            "{}{}{finish}\n\ndata: [DONE]",
            text("Whole"),
            text(" answer")
        ),
        format!(
            "{}{}{finish}\n\ndata: [DONE]\n",
            text("Whole"),
            text(" answer")
        ),
        format!("{}{}{finish}", text("Whole"), text(" answer")),
        format!("{}{}{finish}\n\n{usage}", text("Whole"), text(" answer")),
    ];
    for body in bodies {
        let env = Env::new();
        let mock = MockProvider::start([Reply::sse_raw(body.clone())]).unwrap();
        let out = env.run(Some(&mock), &["exec", "--json", "go"]);
        assert_eq!(out.status.code(), Some(0), "{body:?}: {}", stderr(&out));
        let lines: Vec<Value> = stdout(&out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let shown: String = lines
            .iter()
            .filter(|e| e["type"] == "text_delta")
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        assert_eq!(shown, "Whole answer", "{body:?}");
        let end = lines.last().unwrap();
        assert_eq!(end["type"], "turn_finished", "{body:?}");
        if body.ends_with("9}}") {
            assert_eq!(end["usage"]["total_tokens"], 9, "{end}");
        }
    }
    // A body cut inside an unfinished answer's event is still a truncated stream.
    let env = Env::new();
    let cut = format!(
        "{}data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"and",
        text("Half")
    );
    let mock = MockProvider::start([Reply::sse_raw(cut)]).unwrap();
    let out = env.run(Some(&mock), &["exec", "go"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("middle of an event"),
        "{}",
        stderr(&out)
    );
}
