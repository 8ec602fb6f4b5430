//! `hrns acp` driven by real third-party ACP clients that `.ci/install-acp-clients` installs:
//! the official Python SDK (`agent-client-protocol`, a small client in
//! `acp_clients/sdk_client.py`) against the scripted provider.
//!
//! The clients are looked up under `$HRNS_ACP_CLIENTS` or `target/acp-clients/`. When they are
//! missing, these tests fail if `CI` is set and otherwise print a notice and pass, so
//! `cargo test --workspace` works on a fresh machine.

mod common;

use common::Env;
use hrns_blocking::mock::{MockProvider, Reply, chunk};
use std::path::PathBuf;
use std::process::Command;

fn prefix() -> PathBuf {
    std::env::var_os("HRNS_ACP_CLIENTS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/acp-clients"),
        PathBuf::from,
    )
}

/// The installed client at `relative` under the prefix, or `None` (with a notice).
fn installed(relative: &str) -> Option<PathBuf> {
    let path = prefix().join(relative);
    if path.exists() {
        return Some(path);
    }
    let notice = format!(
        "ACP client {} is not installed; run .ci/install-acp-clients to install it",
        path.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{notice}");
    eprintln!("skipping: {notice}");
    None
}

#[test]
fn the_python_sdk_sees_ordered_updates_a_diff_fs_delegation_and_cancelled() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let args = serde_json::json!({"path": "a.txt", "content": "new\n"}).to_string();
    let read = serde_json::json!({"path": "b.txt"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("call_0", "read_file", &read)]),
        Reply::tool_calls(&[("call_1", "write_file", &args)]),
        Reply::text_answer("written"),
        // The prompt to cancel: one word, then nothing but empty chunks until it is cancelled,
        // so the client cancels once it has seen the word (not after a guessed wait).
        Reply::endless_sse(
            [chunk::role_chunk(), chunk::text_chunk("waiting")],
            r#"{"choices":[]}"#,
        )
        .delay(std::time::Duration::from_millis(50)),
    ])
    .unwrap();
    let env = Env::new();
    env.config_with(&mock, "");
    env.write("work/a.txt", "old\n");
    env.write("work/b.txt", "on disk\n");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/acp_clients/sdk_client.py");
    let mut cmd = env.cmd(Some(&mock));
    // The client spawns `hrns acp` with this environment (the sandbox's HOME and config).
    let out = Command::new(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_hrns"))
        .arg(env.work())
        .env_clear()
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(env.work())
        .output()
        .unwrap();
    let _ = &mut cmd;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("\"ok\": true"), "{stdout}");
    // The client advertised `fs`: the write went to its buffer, the disk is as it was, and
    // the model read the client's unsaved buffer.
    assert_eq!(
        std::fs::read_to_string(env.work().join("a.txt")).unwrap(),
        "old\n"
    );
    let sent = mock.chat_requests()[1].json();
    assert!(
        sent["messages"].to_string().contains("unsaved buffer"),
        "{sent}"
    );
}

/// Runs `acpx --agent 'HRNS acp' ARGS…` in the environment's workspace with Node 22 first on
/// the PATH; `None` when acpx is not installed.
fn acpx(env: &Env, mock: &MockProvider, args: &[&str]) -> Option<std::process::Output> {
    Some(acpx_command(env, mock, args)?.output().unwrap())
}

/// The `acpx` command of [`acpx`], to spawn.
fn acpx_command(env: &Env, mock: &MockProvider, args: &[&str]) -> Option<Command> {
    let bin = installed("node/node_modules/.bin/acpx")?;
    let node_dir = bin.parent().unwrap().to_owned();
    let mut cmd = env.cmd(Some(mock));
    let path = format!(
        "{}:{}",
        node_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let agent = format!("{} acp", env!("CARGO_BIN_EXE_hrns"));
    let mut acpx = cmd.env("PATH", path).arg0_replace(&bin);
    acpx.args(["--agent", &agent, "--cwd"])
        .arg(env.work())
        .args(args);
    Some(acpx)
}

/// `Command::new` keeps its program; this swaps it for acpx with the same environment.
trait Arg0 {
    fn arg0_replace(&mut self, program: &std::path::Path) -> Command;
}

impl Arg0 for Command {
    fn arg0_replace(&mut self, program: &std::path::Path) -> Command {
        let mut c = Command::new(program);
        c.env_clear();
        for (k, v) in self.get_envs() {
            if let Some(v) = v {
                c.env(k, v);
            }
        }
        if let Some(dir) = self.get_current_dir() {
            c.current_dir(dir);
        }
        c.stdin(std::process::Stdio::null());
        c
    }
}

/// The JSON-RPC messages acpx printed with `--format json`, after it exited with `code`.
fn messages(out: &std::process::Output, code: i32) -> Vec<serde_json::Value> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.code() == Some(code),
        "{}: stdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn answer_text(messages: &[serde_json::Value]) -> String {
    messages
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .map(|m| {
            m["params"]["update"]["content"]["text"]
                .as_str()
                .unwrap_or_default()
        })
        .collect()
}

fn stop_reason(messages: &[serde_json::Value]) -> String {
    messages
        .iter()
        .rev()
        .find_map(|m| m["result"]["stopReason"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn acpx_runs_a_text_turn() {
    let mock = MockProvider::start([Reply::text_answer("hello from hrns")]).unwrap();
    let env = Env::new();
    env.config_with(&mock, "");
    let Some(out) = acpx(
        &env,
        &mock,
        &["--approve-all", "--format", "json", "exec", "say hi"],
    ) else {
        return;
    };
    let messages = messages(&out, 0);
    assert_eq!(answer_text(&messages), "hello from hrns");
    assert_eq!(stop_reason(&messages), "end_turn");
    let sent = mock.chat_requests()[0].json().to_string();
    assert!(sent.contains("say hi"), "{sent}");
}

#[test]
fn acpx_approves_or_denies_a_tool_call() {
    // acpx exits 5 when a permission was denied.
    for (flag, written, code) in [("--approve-all", true, 0), ("--deny-all", false, 5)] {
        let args = serde_json::json!({"path": "out.txt", "content": "from acpx\n"}).to_string();
        let mock = MockProvider::start([
            Reply::tool_calls(&[("call_1", "write_file", &args)]),
            Reply::text_answer("finished"),
        ])
        .unwrap();
        let env = Env::new();
        env.config_with(&mock, "");
        let Some(out) = acpx(
            &env,
            &mock,
            &[flag, "--format", "json", "exec", "write out.txt"],
        ) else {
            return;
        };
        let messages = messages(&out, code);
        assert_eq!(stop_reason(&messages), "end_turn", "{flag}");
        assert!(
            messages
                .iter()
                .any(|m| m["method"] == "session/request_permission"),
            "{flag}: the permission was asked"
        );
        let last = messages
            .iter()
            .rfind(|m| m["params"]["update"]["toolCallId"] == "call_1")
            .expect("the call's updates");
        let status = &last["params"]["update"]["status"];
        assert_eq!(
            status,
            if written { "completed" } else { "failed" },
            "{flag}"
        );
        let file = env.work().join("out.txt");
        assert_eq!(file.exists(), written, "{flag}");
        if written {
            assert_eq!(std::fs::read_to_string(file).unwrap(), "from acpx\n");
            let diff = &last["params"]["update"]["content"][1];
            assert_eq!(diff["type"], "diff", "{last}");
            assert_eq!(diff["newText"], "from acpx\n");
        }
    }
}

/// acpx keeps a session per directory: each later prompt starts `hrns acp` again and loads
/// the saved session (`session/load`), which goes on with its history.
#[test]
fn acpx_keeps_a_session_across_prompts_and_loads_it_again() {
    let mock =
        MockProvider::start([Reply::text_answer("first"), Reply::text_answer("second")]).unwrap();
    let env = Env::new();
    env.config_with(&mock, "");
    // `--ttl 1`: acpx's queue owner ends a second after the last prompt.
    let Some(out) = acpx(&env, &mock, &["--ttl", "1", "sessions", "new"]) else {
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut loaded = Vec::new();
    for (prompt, answer) in [("one", "first"), ("two", "second")] {
        let out = acpx(
            &env,
            &mock,
            &[
                "--ttl",
                "1",
                "--approve-all",
                "--format",
                "json",
                "prompt",
                prompt,
            ],
        )
        .unwrap();
        let messages = messages(&out, 0);
        assert_eq!(answer_text(&messages), answer);
        assert_eq!(stop_reason(&messages), "end_turn");
        let load = messages
            .iter()
            .position(|m| m["method"] == "session/load")
            .map(|i| {
                messages[i + 1..]
                    .iter()
                    .find(|m| m["id"] == messages[i]["id"])
                    .cloned()
            });
        loaded.push(load.flatten());
    }
    // The second prompt's hrns loaded the session the first one saved.
    let load = loaded[1]
        .as_ref()
        .expect("the second prompt loads the session");
    assert!(load.get("result").is_some(), "{load}");
    let second = mock.chat_requests()[1].json().to_string();
    assert!(
        second.contains("one") && second.contains("first"),
        "{second}"
    );
}

/// `acpx cancel` while a prompt waits on the provider: acpx's queue owner sends
/// `session/cancel`, and the prompt ends with `cancelled` (acpx exits 130 for a cancelled
/// prompt), not an error.
#[test]
fn acpx_cancels_a_running_prompt() {
    let mock = MockProvider::start([Reply::hang()]).unwrap();
    let env = Env::new();
    env.config_with(&mock, "");
    let Some(out) = acpx(&env, &mock, &["--ttl", "1", "sessions", "new"]) else {
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let prompt = acpx_command(
        &env,
        &mock,
        &["--ttl", "1", "--format", "json", "prompt", "wait for it"],
    )
    .unwrap()
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    // The prompt's chat request (the `/models` lookup at the session's start is not one).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while mock.chat_requests().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the prompt never reached the provider"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let cancel = acpx(&env, &mock, &["--ttl", "1", "cancel"]).unwrap();
    assert!(
        cancel.status.success(),
        "{}",
        String::from_utf8_lossy(&cancel.stderr)
    );
    let out = prompt.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let messages: Vec<serde_json::Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let asked = messages
        .iter()
        .find(|m| m["method"] == "session/prompt")
        .unwrap_or_else(|| panic!("no prompt: {stdout}"));
    let answer = messages
        .iter()
        .find(|m| m["id"] == asked["id"] && m.get("method").is_none())
        .unwrap_or_else(|| {
            panic!(
                "{}: no answer to the prompt: {stdout}\nstderr: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )
        });
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    assert!(
        messages.iter().any(|m| m["method"] == "session/cancel"),
        "{stdout}"
    );
}
