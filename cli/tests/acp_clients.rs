//! `hrns acp` driven by real third-party ACP clients that `.ci/install-acp-clients` installs:
//! the official Python SDK (`agent-client-protocol`, a small client in
//! `acp_clients/sdk_client.py`) against the scripted provider.
//!
//! The clients are looked up under `$HRNS_ACP_CLIENTS` or `target/acp-clients/`. When they are
//! missing, these tests fail if `CI` is set and otherwise print a notice and pass, so
//! `cargo test --workspace` works on a fresh machine.

mod common;

use common::Env;
use hrns_blocking::mock::{MockProvider, Reply};
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
fn the_python_sdk_sees_ordered_updates_a_diff_and_cancelled() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let args = serde_json::json!({"path": "a.txt", "content": "new\n"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("call_1", "write_file", &args)]),
        Reply::text_answer("written"),
        Reply::hang(),
    ])
    .unwrap();
    let env = Env::new();
    env.config_with(&mock, "");
    env.write("work/a.txt", "old\n");
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
    assert_eq!(
        std::fs::read_to_string(env.work().join("a.txt")).unwrap(),
        "new\n"
    );
}
