//! The interactive UI with the workspace at `$HOME`, in a real pseudo-terminal: the one-line
//! question at start, its warning on screen, and what commands may do after each answer.

mod pty;

use hrns_blocking::mock::{MockProvider, Reply};
use std::path::{Path, PathBuf};
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

/// A root outside the system temporary directory (which `workspace-write` lets commands
/// write), so that a write in the home directory shows which policy applied.
fn root() -> tempfile::TempDir {
    let root = tempfile::tempdir_in("/var/tmp")
        .or_else(|_| tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")))
        .unwrap();
    assert!(!root.path().starts_with("/tmp"));
    root
}

/// `hrns` started in its home directory, which holds its config and state.
fn start_at_home(root: &Path, mock: &MockProvider) -> (pty::Pty, PathBuf) {
    let home = root.canonicalize().unwrap().join("home");
    std::fs::create_dir_all(home.join(".config/hrns")).unwrap();
    let env = vec![
        ("HOME", home.display().to_string()),
        (
            "XDG_CONFIG_HOME",
            home.join(".config").display().to_string(),
        ),
        (
            "XDG_STATE_HOME",
            home.join(".local/state").display().to_string(),
        ),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("OPENAI_BASE_URL", mock.base_url()),
        ("OPENAI_API_KEY", "sk-tui-SECRET".to_owned()),
        ("HRNS_MODEL", "mock-model".to_owned()),
    ];
    let p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), &[], &home, &env, 30, 120);
    (p, home)
}

/// The model writes `inside.txt` in the workspace with a command; the user approves it.
fn script() -> MockProvider {
    MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", r#"{"command":"echo x > inside.txt"}"#)]),
        Reply::text_answer("Tried it."),
    ])
    .unwrap()
}

fn approve_the_write(p: &mut pty::Pty) {
    p.send("write a file\r");
    p.expect_screen("the approval prompt", T, |s| s.contains("[y]es"));
    p.send("y");
    p.expect("Tried it.", T);
}

fn quit(mut p: pty::Pty) {
    p.send("/quit\r");
    assert_eq!(p.wait(T), 0);
    assert!(!p.output().contains("sk-tui-SECRET"));
}

#[test]
fn at_home_a_no_keeps_commands_read_only_and_the_screen_says_so() {
    let root = root();
    let mock = script();
    let (mut p, home) = start_at_home(root.path(), &mock);
    p.expect("Let commands write anywhere in your home directory", T);
    p.expect("(workspace-write)? [y/N]", T);
    p.send("\r");
    p.expect("mock-model", T);
    p.expect_screen("the warning", T, |s| {
        s.contains("the workspace is your home directory") && s.contains("read-only here")
    });
    approve_the_write(&mut p);
    assert!(!home.join("inside.txt").exists(), "the write got through");
    let result = mock.chat_requests()[1].json()["messages"].to_string();
    assert!(
        result.contains("Read-only file system") || result.contains("Permission denied"),
        "{result}"
    );
    quit(p);
}

#[test]
fn at_home_a_yes_lets_commands_write_the_workspace() {
    let root = root();
    let mock = script();
    let (mut p, home) = start_at_home(root.path(), &mock);
    p.expect("(workspace-write)? [y/N]", T);
    p.send("y\r");
    p.expect("mock-model", T);
    p.expect_screen("the warning", T, |s| {
        s.contains("the workspace is your home directory") && s.contains("may change any file")
    });
    approve_the_write(&mut p);
    assert!(home.join("inside.txt").exists(), "the write was refused");
    quit(p);
}
