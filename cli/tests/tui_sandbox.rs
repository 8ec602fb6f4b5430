//! The terminal under the sandbox, in a real pseudo-terminal: a command the model runs has no
//! controlling terminal, so what it writes to `/dev/tty` never reaches the user's screen.

mod pty;

use hrns_blocking::mock::{MockProvider, Reply};
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

#[test]
fn a_command_writing_to_dev_tty_never_reaches_the_screen() {
    // The marker is split in the command so that only the write itself could join it; the
    // title sequence is what an attacker would send raw.
    let command = r#"printf '\033]0;TTY%sLEAK\007TTY%sLEAK\n' X X > /dev/tty; echo tty-tried"#;
    let call = serde_json::json!({ "command": command }).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", &call)]),
        Reply::text_answer("All finished."),
    ])
    .unwrap();
    let root = tempfile::tempdir().unwrap();
    for d in ["home", "config", "state", "work"] {
        std::fs::create_dir_all(root.path().join(d)).unwrap();
    }
    let env = vec![
        ("HOME", root.path().join("home").display().to_string()),
        (
            "XDG_CONFIG_HOME",
            root.path().join("config").display().to_string(),
        ),
        (
            "XDG_STATE_HOME",
            root.path().join("state").display().to_string(),
        ),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("OPENAI_BASE_URL", mock.base_url()),
        ("OPENAI_API_KEY", "sk-tui-SECRET".to_owned()),
        ("HRNS_MODEL", "mock-model".to_owned()),
    ];
    let work = root.path().join("work");
    let mut p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &work, &env, 30, 100);
    p.expect("mock-model", T);
    p.send("run it\r");
    p.expect("[y]es", T);
    p.send("y");
    p.expect("All finished.", T);
    let result = mock.chat_requests()[1].json()["messages"].to_string();
    assert!(result.contains("tty-tried"), "{result}");
    let raw = String::from_utf8_lossy(&p.raw()).into_owned();
    assert!(!raw.contains("TTYXLEAK"), "the write reached the terminal");
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
}
