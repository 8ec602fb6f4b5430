//! Secrets on their way out: a key the model echoes into a tool call's arguments is not shown
//! by the approval question (`exec` and the TUI, the session's own calls and a subagent's).

mod common;
mod pty;

use hrns_blocking::mock::{MockProvider, Reply};
use std::time::Duration;

const T: Duration = Duration::from_secs(30);

/// A command the model wants to run, with the key in it, long enough that the question
/// shortens it (after the key).
fn command_with_key() -> String {
    let padding = "x".repeat(300);
    serde_json::json!({ "command": format!("curl -H 'Authorization: Bearer {}' https://example.invalid/{padding}", common::KEY) })
        .to_string()
}

/// A write whose content holds the key: the question shows the diff it would make.
fn write_with_key() -> String {
    serde_json::json!({ "path": "leak.txt", "content": format!("token={}\n", common::KEY) })
        .to_string()
}

fn assert_hidden(output: &str) {
    assert!(
        common::secret_piece(output, common::KEY).is_none(),
        "the key (or a piece of it) was shown:\n{output}"
    );
}

#[test]
fn exec_asks_about_a_call_without_showing_the_key() {
    let env = common::Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", &command_with_key())]),
        Reply::tool_calls(&[("c2", "write_file", &write_with_key())]),
        Reply::text_answer("ALL DONE"),
    ])
    .unwrap();
    let vars = common::pty_vars_for(&env, &mock);
    let args = ["exec", "--approval", "ask", "go"];
    let mut p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &args,
        &env.work(),
        &vars,
        30,
        200,
    );
    p.expect("allow run_command", T);
    p.expect("[n]o", T);
    p.send("n\r");
    p.expect("allow write_file", T);
    p.send("n\r");
    assert_eq!(p.wait(T), 0, "{}", p.output());
    let out = p.output();
    assert!(out.contains("ALL DONE"), "{out}");
    assert!(out.contains("[redacted]"), "{out}");
    assert_hidden(&String::from_utf8_lossy(&p.raw()));
    assert!(!env.work().join("leak.txt").exists());
}

#[test]
fn exec_asks_about_a_subagents_call_without_showing_the_key() {
    let env = common::Env::new();
    let task = serde_json::json!({"description": "write", "prompt": "Write it.",
                                  "agent": "Builder"})
    .to_string();
    let write = write_with_key();
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
            (false, false) => Reply::tool_calls(&[("c1", "write_file", &write)]),
            (false, true) => Reply::text_answer("child gave up"),
            (true, true) => Reply::text_answer("PARENT DONE"),
        })
    })
    .unwrap();
    let vars = common::pty_vars_for(&env, &mock);
    let args = ["exec", "--approval", "ask", "go"];
    let mut p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &args,
        &env.work(),
        &vars,
        30,
        200,
    );
    p.expect("(agent Builder)", T);
    p.send("n\r");
    assert_eq!(p.wait(T), 0, "{}", p.output());
    assert!(p.output().contains("PARENT DONE"), "{}", p.output());
    assert_hidden(&String::from_utf8_lossy(&p.raw()));
}

#[test]
fn the_tui_asks_about_a_call_without_showing_the_key() {
    let env = common::Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", &command_with_key())]),
        Reply::tool_calls(&[("c2", "write_file", &write_with_key())]),
        Reply::text_answer("ALL DONE"),
    ])
    .unwrap();
    let vars = common::pty_vars_for(&env, &mock);
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &env.work(), &vars, 30, 100);
    p.expect("mock-model", T);
    p.send("go\r");
    let asks = |tool: &'static str| move |s: &str| s.contains(&format!("Allow {tool}?"));
    p.expect_screen("the question about run_command", T, asks("run_command"));
    assert_hidden(&p.screen());
    p.send("n");
    p.expect("Enter to skip", T);
    p.send("\r");
    p.expect_screen("the question about write_file", T, asks("write_file"));
    assert_hidden(&p.screen());
    p.send("n");
    p.expect("Enter to skip", T);
    p.send("\r");
    p.expect("ALL DONE", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    assert_hidden(&String::from_utf8_lossy(&p.raw()));
}
