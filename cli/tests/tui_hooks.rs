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
