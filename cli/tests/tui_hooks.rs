//! Hooks in the interactive UI, in a real pseudo-terminal against the mock provider: the
//! question that approves a project's `.hrns/hooks.json` before the screen is taken, and a
//! hook's decision shown as one line.

mod common;
mod pty;

use common::{Env, KEY};
use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::json;
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

/// A project file whose PreToolUse hook (for Claude Code's `Bash`) leaves a marker and blocks
/// with exit code 2.
fn project_hooks(env: &Env) -> std::path::PathBuf {
    let marker = env.path("hook-ran");
    let command = format!(
        "cat >/dev/null; touch {}; echo 'the project says no' >&2; exit 2",
        marker.display()
    );
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": command}]}]}});
    env.write("work/.hrns/hooks.json", &hooks.to_string());
    marker
}

fn replies() -> [Reply; 2] {
    [
        Reply::tool_calls(&[("c1", "run_command", r#"{"command":"echo hi"}"#)]),
        Reply::text_answer("Stopped as asked."),
    ]
}

#[test]
fn approving_a_project_file_at_start_runs_its_hooks_and_their_decision_is_shown() {
    let env = Env::new();
    let marker = project_hooks(&env);
    let mock = MockProvider::start(replies()).unwrap();
    env.config_with(&mock, "");
    let vars = env.pty_vars();
    let mut p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &["--approval", "auto"],
        &env.work(),
        &vars,
        30,
        110,
    );
    p.expect("PreToolUse [Bash]", T);
    p.expect("run these hooks in this project? [y/N]", T);
    p.send("y\r");
    p.expect("mock-model", T);
    p.send("say hi\r");
    p.expect("hook PreToolUse", T);
    p.expect("the project says no", T);
    p.expect("Stopped as asked.", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    assert!(marker.exists());
    let bodies: Vec<String> = mock
        .chat_requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    assert!(bodies[1].contains("the project says no"));
    assert!(!p.output().contains(KEY));
}

#[test]
fn declining_leaves_the_project_hooks_skipped() {
    let env = Env::new();
    let marker = project_hooks(&env);
    let mock = MockProvider::start(replies()).unwrap();
    env.config_with(&mock, "");
    let vars = env.pty_vars();
    let mut p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &["--approval", "auto"],
        &env.work(),
        &vars,
        30,
        110,
    );
    p.expect("run these hooks in this project? [y/N]", T);
    p.send("\r");
    p.expect("its hooks are skipped", T);
    p.send("say hi\r");
    p.expect("Stopped as asked.", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    assert!(!marker.exists(), "a declined project hook never runs");
}

/// Hooks for `SessionEnd` and `Notification` that append their input, one JSON object a
/// line, to `hooks.jsonl` (and say so in a `systemMessage`); the idle notification comes at
/// once (`idleNotificationMs: 0`). Returns the file.
fn end_and_idle_hooks(env: &Env, mock: &MockProvider) -> std::path::PathBuf {
    let seen = env.path("hooks.jsonl");
    let command = format!(
        "cat >> {}; echo >> {}; echo '{{\"systemMessage\":\"noted\"}}'",
        seen.display(),
        seen.display()
    );
    let entry = json!([{"hooks": [{"type": "command", "command": command}]}]);
    let hooks = json!({"SessionEnd": entry, "Notification": entry});
    env.config_with(
        mock,
        &format!(", \"idleNotificationMs\": 0, \"hooks\": {hooks}"),
    );
    seen
}

/// The inputs the hooks got, in order.
fn inputs(seen: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(seen)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn spawn(env: &Env) -> pty::Pty {
    let vars = env.pty_vars();
    pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &["--approval", "auto"],
        &env.work(),
        &vars,
        30,
        110,
    )
}

#[test]
fn an_idle_prompt_after_a_turn_notifies_and_quit_ends_the_session() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("Hello there.")]).unwrap();
    let seen = end_and_idle_hooks(&env, &mock);
    let mut p = spawn(&env);
    p.expect("mock-model", T);
    p.send("say hi\r");
    p.expect("Hello there.", T);
    p.expect("hook Notification", T);
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    let inputs = inputs(&seen);
    let events: Vec<_> = inputs
        .iter()
        .map(|i| i["hook_event_name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(events, ["Notification", "SessionEnd"], "{inputs:?}");
    assert_eq!(inputs[0]["notification_type"], "idle_prompt");
    assert_eq!(inputs[0]["message"], "hrns is waiting for your input");
    assert_eq!(inputs[1]["reason"], "prompt_input_exit");
    assert_eq!(inputs[0]["session_id"], inputs[1]["session_id"]);
    assert!(p.output().contains("hook SessionEnd"), "its line is shown");
}

#[test]
fn new_ends_the_session_as_clear_and_every_way_out_ends_it() {
    // /new, then Ctrl-D; Ctrl-C twice; SIGTERM.
    for (way, reason) in [
        ("ctrl-d", "prompt_input_exit"),
        ("ctrl-c", "prompt_input_exit"),
        ("sigterm", "other"),
    ] {
        let env = Env::new();
        let mock = MockProvider::start([Reply::text_answer("one")]).unwrap();
        let seen = end_and_idle_hooks(&env, &mock);
        let mut p = spawn(&env);
        p.expect("mock-model", T);
        p.send("/new\r");
        p.expect("new conversation", T);
        let status = match way {
            "ctrl-d" => {
                p.send("\x04");
                p.wait(T)
            }
            "ctrl-c" => {
                p.send("\x03");
                p.expect("press Ctrl-C again", T);
                p.send("\x03");
                p.wait(T)
            }
            _ => {
                let killed = std::process::Command::new("kill")
                    .args(["-TERM", &p.pid().to_string()])
                    .status()
                    .unwrap();
                assert!(killed.success());
                p.wait(T)
            }
        };
        assert_eq!(status, if way == "sigterm" { 143 } else { 0 }, "{way}");
        let inputs = inputs(&seen);
        let reasons: Vec<_> = inputs
            .iter()
            .map(|i| i["reason"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(reasons, ["clear", reason], "{way}: {inputs:?}");
        // The conversation after /new is another session.
        assert_ne!(inputs[0]["session_id"], inputs[1]["session_id"], "{way}");
    }
}
