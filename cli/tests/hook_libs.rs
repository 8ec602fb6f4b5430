//! A hook written with a third-party library for Claude Code's hook contract, used unchanged:
//! `cchooks` (PyPI), which parses the hook's stdin JSON into typed contexts and writes its
//! decisions. `.ci/install-hook-libs` installs it into a venv under `$HRNS_HOOK_LIBS` or
//! `target/hook-libs/`. When it is missing, this test fails if `CI` is set and otherwise
//! prints a notice and passes, so `cargo test --workspace` works on a fresh machine.

mod common;

use common::{Env, stderr};
use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::json;
use std::path::PathBuf;

/// The venv's python with cchooks, or `None` (with a notice) when it is not installed.
fn python_with_cchooks() -> Option<PathBuf> {
    let prefix = std::env::var_os("HRNS_HOOK_LIBS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/hook-libs"),
        PathBuf::from,
    );
    let python = prefix.join("venv/bin/python");
    let installed = std::process::Command::new(&python)
        .args(["-c", "import cchooks"])
        .output()
        .is_ok_and(|o| o.status.success());
    if installed {
        return Some(python);
    }
    let notice = format!(
        "cchooks is not installed in {}; run .ci/install-hook-libs to install it",
        python.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{notice}");
    eprintln!("skipping: {notice}");
    None
}

/// A hook as one would write it for Claude Code with cchooks: refuse `rm -rf` in Bash,
/// rewrite other Bash commands, and keep the turn going once at Stop.
const HOOK: &str = r#"
from cchooks import create_context, PreToolUseContext, StopContext

c = create_context()
if isinstance(c, PreToolUseContext):
    command = c.tool_input.get("command", "")
    if c.tool_name == "Bash" and "rm -rf" in command:
        c.output.deny(reason="cchooks refuses rm -rf")
    elif c.tool_name == "Bash":
        c.output.allow(reason="rewritten", updated_input={"command": command.replace("original", "rewritten")})
    else:
        c.output.exit_success()
elif isinstance(c, StopContext):
    if c.stop_hook_active:
        c.output.allow()
    else:
        c.output.prevent(reason="cchooks says: run the tests first")
"#;

#[test]
fn a_cchooks_hook_works_unchanged() {
    let Some(python) = python_with_cchooks() else {
        return;
    };
    let env = Env::new();
    env.write("work/victim.txt", "keep me");
    let script = env.write("scripts/policy.py", HOOK);
    let command = format!("{} {}", python.display(), script.display());
    let mock = MockProvider::start([
        Reply::tool_calls(&[
            ("c1", "run_command", r#"{"command":"rm -rf victim.txt"}"#),
            (
                "c2",
                "run_command",
                r#"{"command":"echo original > out.txt"}"#,
            ),
        ]),
        Reply::text_answer("done"),
        Reply::text_answer("tests pass, done"),
    ])
    .unwrap();
    let entry = |matcher: &str| json!([{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]);
    let hooks = json!({"PreToolUse": entry("Bash"), "Stop": entry("")});
    env.config_with(&mock, &format!(", \"hooks\": {hooks}"));
    let out = env.run(None, &["exec", "tidy up"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.path("work/victim.txt")).unwrap(),
        "keep me"
    );
    assert_eq!(
        std::fs::read_to_string(env.path("work/out.txt")).unwrap(),
        "rewritten\n"
    );
    let bodies: Vec<String> = mock
        .chat_requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    assert_eq!(bodies.len(), 3, "{}", stderr(&out));
    assert!(
        bodies[1].contains("cchooks refuses rm -rf"),
        "{}",
        bodies[1]
    );
    assert!(
        bodies[2].contains("cchooks says: run the tests first"),
        "{}",
        bodies[2]
    );
}
