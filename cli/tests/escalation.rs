//! Approvals under `--approval ask`, `hrns exec` and the TUI in a pseudo-terminal: "run without
//! the sandbox" (the model's command blocked by the sandbox, then let out once when the user
//! answers `u`), the diff of an asked write shown once, and a subagent's call asked about by
//! its agent's name.

mod common;
mod pty;

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_core::sandbox::UNSANDBOXED_NOTE;
use std::time::Duration;

const T: Duration = Duration::from_secs(30);

fn tool_result(mock: &MockProvider, request: usize) -> String {
    let body = mock.requests()[request].json();
    let messages = body["messages"].as_array().unwrap().clone();
    let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    tool["content"].as_str().unwrap().to_owned()
}

#[test]
fn ask_offers_one_unsandboxed_run_and_auto_offers_none() {
    let env = common::Env::outside_tmp();
    let call = serde_json::json!({ "command": "echo out > ../outside.txt" }).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", &call)]),
        Reply::tool_calls(&[("c2", "run_command", &call)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let vars = vars_of(&env, &mock);
    let args = ["exec", "--approval", "ask", "go"];
    let mut p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &args,
        &env.work(),
        &vars,
        30,
        200,
    );
    // First call: allowed in the sandbox, so it is blocked.
    p.expect("[u]nsandboxed, once", T);
    p.send("y\r");
    // Second call: the user lets it out once.
    let deadline = std::time::Instant::now() + T;
    while pty::strip_ansi(&p.output())
        .matches("[u]nsandboxed, once")
        .count()
        < 2
    {
        assert!(std::time::Instant::now() < deadline, "{}", p.output());
        std::thread::sleep(Duration::from_millis(20));
    }
    p.send("u\r");
    assert_eq!(p.wait(T), 0, "{}", p.output());
    let first = tool_result(&mock, 1);
    assert!(
        first.contains("Read-only file system") || first.contains("Permission denied"),
        "{first}"
    );
    let second = tool_result(&mock, 2);
    assert!(second.starts_with("exit code: 0"), "{second}");
    assert!(second.contains(UNSANDBOXED_NOTE.trim_end()), "{second}");
    assert!(env.path("outside.txt").exists());

    // Under auto nobody is asked: the command stays in the sandbox.
    std::fs::remove_file(env.path("outside.txt")).unwrap();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", &call)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let out = env.run(Some(&mock), &["exec", "--approval", "auto", "go"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!env.path("outside.txt").exists());
}

/// The variables of a run in `env` against `mock`.
fn vars_of(env: &common::Env, mock: &MockProvider) -> Vec<(&'static str, String)> {
    let mut vars = env.pty_vars();
    vars.extend([
        ("OPENAI_BASE_URL", mock.base_url()),
        ("OPENAI_API_KEY", common::KEY.to_owned()),
        ("HRNS_MODEL", "mock-model".to_owned()),
    ]);
    vars
}

#[test]
fn the_tui_offers_one_unsandboxed_run_under_ask_and_none_otherwise() {
    let env = common::Env::outside_tmp();
    let call = serde_json::json!({ "command": "echo out > ../outside.txt" }).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", &call)]),
        Reply::tool_calls(&[("c2", "run_command", &call)]),
        Reply::text_answer("ALL DONE"),
    ])
    .unwrap();
    let vars = vars_of(&env, &mock);
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &env.work(), &vars, 30, 200);
    p.expect("mock-model", T);
    p.send("go\r");
    // First call: allowed in the sandbox, so it is blocked.
    let offered = |s: &str| s.contains("[u]nsandboxed, once");
    p.expect_screen("the offer to run unsandboxed", T, offered);
    p.send("y");
    // Second call: the user lets it out once (the first question left the screen when the
    // answer was printed).
    p.expect("allowed once", T);
    p.expect_screen("the second question", T, offered);
    p.send("u");
    p.expect("ALL DONE", T);
    assert!(
        p.output().contains("allowed once, without the sandbox"),
        "{}",
        p.output()
    );
    let first = tool_result(&mock, 1);
    assert!(
        first.contains("Read-only file system") || first.contains("Permission denied"),
        "{first}"
    );
    let second = tool_result(&mock, 2);
    assert!(second.starts_with("exit code: 0"), "{second}");
    assert!(second.contains(UNSANDBOXED_NOTE.trim_end()), "{second}");
    assert!(env.path("outside.txt").exists());
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);

    // Under auto and read-only nobody is asked, so `u` is never offered: the command stays in
    // the sandbox (auto) or is refused (read-only).
    std::fs::remove_file(env.path("outside.txt")).unwrap();
    for policy in ["auto", "read-only"] {
        let mock = MockProvider::start([
            Reply::tool_calls(&[("c1", "run_command", &call)]),
            Reply::text_answer("ALL DONE"),
        ])
        .unwrap();
        let vars = vars_of(&env, &mock);
        let args = ["--approval", policy];
        let mut p = pty::Pty::spawn(
            env!("CARGO_BIN_EXE_hrns"),
            &args,
            &env.work(),
            &vars,
            30,
            200,
        );
        p.expect("mock-model", T);
        p.send("go\r");
        p.expect("ALL DONE", T);
        assert!(
            !p.output().contains("[u]nsandboxed"),
            "{policy}: {}",
            p.output()
        );
        assert!(!p.output().contains("[y]es"), "{policy}: {}", p.output());
        assert!(!env.path("outside.txt").exists(), "{policy}");
        p.send("/quit\r");
        assert_eq!(p.wait(T), 0);
    }
}

#[test]
fn exec_shows_an_asked_writes_diff_once() {
    let env = common::Env::new();
    env.write("work/a.txt", "one\ntwo\nthree\n");
    let edit = r#"{"path":"a.txt","old_string":"two","new_string":"TWO"}"#;
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "edit_file", edit)]),
        Reply::text_answer("ALL DONE"),
    ])
    .unwrap();
    let vars = vars_of(&env, &mock);
    let args = ["exec", "--approval", "ask", "shout two"];
    let mut p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &args,
        &env.work(),
        &vars,
        30,
        200,
    );
    p.expect("[y]es", T);
    p.send("y\r");
    assert_eq!(p.wait(T), 0, "{}", p.output());
    let out = pty::strip_ansi(&p.output());
    assert!(out.contains("ALL DONE"), "{out}");
    assert_eq!(
        std::fs::read_to_string(env.work().join("a.txt")).unwrap(),
        "one\nTWO\nthree\n"
    );
    // Shown in the question, not again after the result.
    assert_eq!(out.matches("@@ -1,3 +1,3 @@").count(), 1, "{out}");
    assert_eq!(out.matches("+TWO").count(), 1, "{out}");
}

#[test]
fn exec_asks_about_a_subagents_call_naming_its_agent() {
    let env = common::Env::new();
    let task = serde_json::json!({"description": "write", "prompt": "Write a.txt.",
                                  "agent": "Builder"})
    .to_string();
    let write = r#"{"path":"a.txt","content":"hi\n"}"#;
    // The parent offers `task`; its child does not. Each answers by its last message.
    let mock = MockProvider::start_with(move |req: &hrns_blocking::mock::RecordedRequest| {
        if req.method != "POST" {
            return None;
        }
        let body = req.json();
        let parent = body["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["function"]["name"] == "task"));
        let after_tool = body["messages"].as_array()?.last()?["role"] == "tool";
        Some(match (parent, after_tool) {
            (true, false) => Reply::tool_calls(&[("t1", "task", &task)]),
            (false, false) => Reply::tool_calls(&[("c1", "write_file", write)]),
            (false, true) => Reply::text_answer("child wrote it"),
            (true, true) => Reply::text_answer("PARENT DONE"),
        })
    })
    .unwrap();
    let vars = vars_of(&env, &mock);
    let args = ["exec", "--approval", "ask", "go"];
    let mut p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &args,
        &env.work(),
        &vars,
        30,
        200,
    );
    p.expect("[n]o", T);
    let output = p.output();
    let asked = output
        .lines()
        .find(|l| l.starts_with("allow write_file"))
        .unwrap_or_else(|| panic!("no question: {output}"));
    assert!(asked.ends_with("(agent Builder)"), "{asked}");
    p.send("y\r");
    assert_eq!(p.wait(T), 0, "{}", p.output());
    assert!(p.output().contains("PARENT DONE"), "{}", p.output());
    assert_eq!(
        std::fs::read_to_string(env.work().join("a.txt")).unwrap(),
        "hi\n"
    );
}

/// A subagent's questions take exec's one approval path: a denial's reason reaches the child's
/// model, and "always" is for the child's later calls of that tool (not asked again), as
/// before the questions came through the parent's session.
#[test]
fn exec_answers_a_subagents_questions_on_its_one_path_denial_and_always() {
    let env = common::Env::new();
    let task = serde_json::json!({"description": "write", "prompt": "Write files.",
                                  "agent": "Builder"})
    .to_string();
    let write = |path: &str| format!(r#"{{"path":"{path}","content":"hi\n"}}"#);
    let mock = MockProvider::start_with(move |req: &hrns_blocking::mock::RecordedRequest| {
        if req.method != "POST" {
            return None;
        }
        let body = req.json();
        let parent = body["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["function"]["name"] == "task"));
        let results = body["messages"]
            .as_array()?
            .iter()
            .filter(|m| m["role"] == "tool")
            .count();
        Some(match (parent, results) {
            (true, 0) => Reply::tool_calls(&[("t1", "task", &task)]),
            (true, _) => Reply::text_answer("PARENT DONE"),
            (false, 0) => Reply::tool_calls(&[("c1", "write_file", &write("a.txt"))]),
            (false, 1) => Reply::tool_calls(&[("c2", "write_file", &write("b.txt"))]),
            (false, 2) => Reply::tool_calls(&[("c3", "write_file", &write("c.txt"))]),
            (false, _) => Reply::text_answer("child done"),
        })
    })
    .unwrap();
    let vars = vars_of(&env, &mock);
    let args = ["exec", "--approval", "ask", "go"];
    let mut p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &args,
        &env.work(),
        &vars,
        30,
        200,
    );
    p.expect("[n]o", T);
    p.send("n not that one\r");
    p.expect("b.txt", T);
    p.send("a\r");
    assert_eq!(p.wait(T), 0, "{}", p.output());
    let out = pty::strip_ansi(&p.output());
    assert!(out.contains("PARENT DONE"), "{out}");
    // Asked twice (a.txt, b.txt); c.txt was let through by "always".
    assert_eq!(out.matches("allow write_file").count(), 2, "{out}");
    assert!(!env.work().join("a.txt").exists());
    assert!(env.work().join("b.txt").exists() && env.work().join("c.txt").exists());
    // The child's model read the user's reason.
    let told = mock
        .chat_requests()
        .iter()
        .any(|r| r.body_str().contains("not that one"));
    assert!(told, "the denial's reason reached the child");
}
