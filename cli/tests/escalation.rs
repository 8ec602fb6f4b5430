//! "Run without the sandbox" under `--approval ask`: `hrns exec` in a pseudo-terminal, the
//! model's command blocked by the sandbox, then let out once when the user answers `u`.

mod common;
mod pty;

use hrns_blocking::mock::{MockProvider, Reply};
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
    let vars: Vec<(&str, String)> = vec![
        ("HOME", env.path("home").display().to_string()),
        ("XDG_CONFIG_HOME", env.path("config").display().to_string()),
        ("XDG_STATE_HOME", env.path("state").display().to_string()),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("OPENAI_BASE_URL", mock.base_url()),
        ("OPENAI_API_KEY", common::KEY.to_owned()),
        ("HRNS_MODEL", "mock-model".to_owned()),
    ];
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
    assert!(first.contains("Permission denied"), "{first}");
    let second = tool_result(&mock, 2);
    assert!(second.starts_with("exit code: 0"), "{second}");
    assert!(second.contains("ran without the sandbox"), "{second}");
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
