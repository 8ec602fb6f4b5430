//! SIGTERM and SIGHUP in the interactive UI: the turn is cancelled as Ctrl-C would (running
//! commands end with their process groups), the session is saved, the terminal restored, and
//! hrns exits with 143 or 129.

mod pty;

use hrns_blocking::mock::{MockProvider, Reply};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

/// A command that records the shell's pid and a background child's pid, then waits.
const STUBBORN: &str = "echo $$ > shell.pid; sleep 60 & echo $! > child.pid; wait";

struct Ui {
    root: tempfile::TempDir,
    p: pty::Pty,
}

fn start(mock: &MockProvider) -> Ui {
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
    let p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &["--approval", "auto"],
        &work,
        &env,
        30,
        100,
    );
    p.expect("mock-model", T);
    Ui { root, p }
}

impl Ui {
    fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.p.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// The saved session files' text.
    fn sessions(&self) -> String {
        let dir = self.root.path().join("state/hrns/sessions");
        std::fs::read_dir(dir)
            .map(|d| {
                d.map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Waits until the command wrote both pid files; returns the pids.
fn pids(dir: &Path) -> Vec<i32> {
    let read = |name: &str| -> Option<i32> {
        std::fs::read_to_string(dir.join(name))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    for _ in 0..1000 {
        if let (Some(shell), Some(child)) = (read("shell.pid"), read("child.pid")) {
            return vec![shell, child];
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the command never started");
}

/// Whether `pid` is a live process (a zombie counts as gone).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

fn assert_gone(pids: &[i32]) {
    for _ in 0..250 {
        if !pids.iter().any(|&p| alive(p)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("still running: {pids:?}");
}

#[test]
fn sigterm_during_a_command_kills_it_saves_the_session_and_exits_143() {
    let args = serde_json::json!({ "command": STUBBORN }).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("call_1", "run_command", &args)]),
        Reply::text_answer("never asked"),
    ])
    .unwrap();
    let mut ui = start(&mock);
    ui.p.send("start the long job\r");
    let running = pids(&ui.work());
    ui.signal("-TERM");
    assert_eq!(ui.p.wait(T), 143, "{}", ui.p.output());
    assert_gone(&running);
    assert!(ui.p.cursor_visible(), "the terminal is restored");
    let saved = ui.sessions();
    assert!(saved.contains("start the long job"), "saved: {saved}");
    assert!(
        saved.contains("cancelled"),
        "the cancelled call is answered: {saved}"
    );
    assert!(!saved.contains("sk-tui-SECRET"));
    assert_eq!(mock.chat_requests().len(), 1, "no further request");
}

#[test]
fn sighup_during_a_stream_cancels_and_exits_129() {
    let reply = Reply::text_answer("Words before the hangup, then a long pause.");
    let mid = reply.body().len() / 2;
    let mock =
        MockProvider::start([reply.split_at(&[mid]).delay(Duration::from_secs(30))]).unwrap();
    let mut ui = start(&mock);
    ui.p.send("say something\r");
    ui.p.expect("Words before", T);
    ui.signal("-HUP");
    assert_eq!(ui.p.wait(T), 129, "{}", ui.p.output());
    assert!(ui.p.cursor_visible(), "the terminal is restored");
    let saved = ui.sessions();
    assert!(saved.contains("say something"), "saved: {saved}");
    assert!(
        saved.contains("interrupted"),
        "what was shown is kept: {saved}"
    );
}

/// A second signal during a command: its hard exit kills the command and leaves the terminal
/// restored. Whether the hard exit or the UI's own exit (begun by the first signal) restores
/// the terminal first is a race here, so a hard exit that forgot to restore it could pass;
/// [`a_second_signal_restores_the_terminal_while_the_ui_is_held`] checks that without a race.
#[test]
fn a_second_signal_exits_at_once_with_the_terminal_restored() {
    let args = serde_json::json!({ "command": STUBBORN }).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("call_1", "run_command", &args)]),
        Reply::text_answer("never asked"),
    ])
    .unwrap();
    let mut ui = start(&mock);
    ui.p.send("start the long job\r");
    let running = pids(&ui.work());
    // Both arrive while hrns is stopped, so they are pending together: whichever of them its
    // threads take first starts the graceful exit, and the other, right after, exits at once.
    let pid = ui.p.pid();
    let status = Command::new("sh")
        .args([
            "-c",
            &format!("kill -STOP {pid}; kill -HUP {pid}; kill -TERM {pid}; kill -CONT {pid}"),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let status = ui.p.wait(T);
    assert!(matches!(status, 129 | 143), "{status}: {}", ui.p.output());
    assert_gone(&running);
    assert!(ui.p.cursor_visible(), "the cursor is shown again");
    let raw = String::from_utf8_lossy(&ui.p.raw()).into_owned();
    assert!(
        raw.rfind("\x1b[?2004l") > raw.rfind("\x1b[?2004h"),
        "bracketed paste is turned off"
    );
}

/// The same bug without a race: the UI's own thread is held before its loop (its input
/// history is a FIFO no one writes, so reading it waits), after the terminal was taken.
/// Only the signal thread can act, so a second signal must restore the terminal itself
/// before its hard exit: nothing else will.
#[test]
fn a_second_signal_restores_the_terminal_while_the_ui_is_held() {
    let mock = MockProvider::start([]).unwrap();
    let root = tempfile::tempdir().unwrap();
    for d in ["home", "config", "state/hrns", "work"] {
        std::fs::create_dir_all(root.path().join(d)).unwrap();
    }
    let fifo = root.path().join("state/hrns/history");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
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
    let mut p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &[],
        &root.path().join("work"),
        &env,
        30,
        100,
    );
    // The terminal is taken (bracketed paste on); the banner never comes.
    let deadline = std::time::Instant::now() + T;
    while !String::from_utf8_lossy(&p.raw()).contains("\x1b[?2004h") {
        assert!(std::time::Instant::now() < deadline, "{}", p.output());
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = p.pid();
    for signal in ["-HUP", "-TERM"] {
        let sent = Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }
    let status = p.wait(T);
    assert!(matches!(status, 129 | 143), "{status}: {}", p.output());
    assert!(!p.output().contains("mock-model"), "the UI was not held");
    assert!(p.cursor_visible(), "the cursor is shown again");
    let raw = String::from_utf8_lossy(&p.raw()).into_owned();
    assert!(
        raw.rfind("\x1b[?2004l") > raw.rfind("\x1b[?2004h"),
        "bracketed paste is turned off"
    );
}
