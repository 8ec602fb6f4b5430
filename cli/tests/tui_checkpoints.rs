//! `/undo`, `/redo` and `/rewind` in the interactive UI, in a real pseudo-terminal against the
//! mock provider: the files a turn changed (a command's included) come back and are named, a
//! file the user changed afterwards is asked about, and a rewind takes back the code and the
//! conversation so the next message goes on from before the turn.

mod pty;

use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

const T: Duration = Duration::from_secs(30);

struct Ui {
    _root: tempfile::TempDir,
    work: PathBuf,
    p: pty::Pty,
}

fn start(mock: &MockProvider) -> Ui {
    start_with_path(mock, None)
}

/// [`start`] with `PATH` set to `path` (the caller's by default).
fn start_with_path(mock: &MockProvider, path: Option<&str>) -> Ui {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    for d in ["home", "config", "state", "work"] {
        std::fs::create_dir_all(base.join(d)).unwrap();
    }
    let work = base.join("work");
    std::fs::write(work.join("a.txt"), "user's a\n").unwrap();
    let env = vec![
        ("HOME", base.join("home").display().to_string()),
        ("XDG_CONFIG_HOME", base.join("config").display().to_string()),
        ("XDG_STATE_HOME", base.join("state").display().to_string()),
        (
            "PATH",
            path.map(str::to_owned)
                .unwrap_or_else(|| std::env::var("PATH").unwrap_or_default()),
        ),
        ("OPENAI_BASE_URL", mock.base_url()),
        ("OPENAI_API_KEY", "sk-tui-SECRET".to_owned()),
        ("HRNS_MODEL", "mock-model".to_owned()),
    ];
    let p = pty::Pty::spawn(
        env!("CARGO_BIN_EXE_hrns"),
        &["--approval", "auto"],
        &work,
        &env,
        40,
        120,
    );
    p.expect("mock-model", T);
    Ui {
        _root: root,
        work,
        p,
    }
}

fn read(dir: &Path, p: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(p)).ok()
}

impl Ui {
    fn quit(mut self) {
        self.p.send("/quit\r");
        assert_eq!(self.p.wait(T), 0);
    }
}

#[test]
fn undo_names_the_files_it_restored_redo_brings_them_back_and_a_user_edit_is_asked_about() {
    let write = json!({"path": "a.txt", "content": "agent's a\n"}).to_string();
    let command = json!({"command": "printf made > made.txt"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("w", "write_file", &write)]),
        Reply::tool_calls(&[("c", "run_command", &command)]),
        Reply::text_answer("all changed"),
    ])
    .unwrap();
    let mut ui = start(&mock);
    ui.p.send("change things\r");
    ui.p.expect("all changed", T);
    assert_eq!(read(&ui.work, "made.txt").as_deref(), Some("made"));

    ui.p.send("/undo\r");
    ui.p.expect("undid turn 1: restored 2 files", T);
    ui.p.expect("restored a.txt", T);
    ui.p.expect("removed  made.txt", T);
    assert_eq!(read(&ui.work, "a.txt").as_deref(), Some("user's a\n"));
    assert_eq!(read(&ui.work, "made.txt"), None);

    ui.p.send("/redo\r");
    ui.p.expect("redid turn 1", T);
    assert_eq!(read(&ui.work, "a.txt").as_deref(), Some("agent's a\n"));
    assert_eq!(read(&ui.work, "made.txt").as_deref(), Some("made"));

    // The user edits a file the agent changed: /undo asks, and Enter keeps it.
    std::fs::write(ui.work.join("a.txt"), "my own edit\n").unwrap();
    ui.p.send("/undo\r");
    ui.p.expect("1 file changed after the agent's last step:", T);
    ui.p.expect("overwrite them too?", T);
    ui.p.send("\r");
    ui.p.expect("kept     a.txt (changed after the agent's last step)", T);
    assert_eq!(read(&ui.work, "a.txt").as_deref(), Some("my own edit\n"));
    assert_eq!(read(&ui.work, "made.txt"), None);
    ui.quit();
}

#[test]
fn rewind_lists_turns_and_takes_back_code_and_conversation() {
    let one = json!({"path": "one.txt", "content": "1"}).to_string();
    let two = json!({"path": "two.txt", "content": "2"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("w1", "write_file", &one)]),
        Reply::text_answer("first answer"),
        Reply::tool_calls(&[("w2", "write_file", &two)]),
        Reply::text_answer("second answer"),
        Reply::text_answer("answer after the rewind"),
    ])
    .unwrap();
    let mut ui = start(&mock);
    ui.p.send("first turn\r");
    ui.p.expect("first answer", T);
    ui.p.send("second turn\r");
    ui.p.expect("second answer", T);

    ui.p.send("/rewind\r");
    ui.p.expect("1. first turn  · one.txt", T);
    ui.p.expect("2. second turn  · two.txt", T);
    ui.p.send("/rewind 2\r");
    ui.p.expect(
        "1 code and conversation, 2 conversation only, 3 code only",
        T,
    );
    ui.p.send("1\r");
    ui.p.expect("the conversation is back to just before turn 2", T);
    assert_eq!(read(&ui.work, "two.txt"), None);
    assert_eq!(read(&ui.work, "one.txt").as_deref(), Some("1"));

    // The turn's message is back in the input: Enter sends it again, after turn 1 only.
    ui.p.expect_screen("the message in the input", T, |s| {
        s.lines()
            .any(|l| l.contains("second turn") && l.contains('›'))
            || s.contains("› second turn")
    });
    ui.p.send("\r");
    ui.p.expect("answer after the rewind", T);
    let last = mock.chat_requests().last().unwrap().json();
    let users: Vec<String> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect();
    assert_eq!(users.len(), 2, "{users:?}");
    assert!(users[0].contains("first turn") && users[1].contains("second turn"));
    assert!(
        !last.to_string().contains("second answer"),
        "the rewound turn's answer is gone"
    );
    ui.quit();
}

#[test]
fn without_git_the_ui_warns_once_and_undo_says_there_is_nothing() {
    let write = json!({"path": "a.txt", "content": "agent's a\n"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("w", "write_file", &write)]),
        Reply::text_answer("written"),
    ])
    .unwrap();
    let empty = tempfile::tempdir().unwrap();
    let mut ui = start_with_path(&mock, Some(&empty.path().display().to_string()));
    ui.p.expect("checkpoints are off", T);
    ui.p.send("change a\r");
    ui.p.expect("written", T);
    assert_eq!(read(&ui.work, "a.txt").as_deref(), Some("agent's a\n"));
    ui.p.send("/new\r");
    ui.p.expect("new conversation", T);
    ui.p.send("/undo\r");
    ui.p.expect("nothing to undo", T);
    assert_eq!(
        ui.p.output().matches("checkpoints are off").count(),
        1,
        "warned once, also after /new"
    );
    ui.quit();
}
