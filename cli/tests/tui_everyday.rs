//! The everyday features of the interactive UI in a real pseudo-terminal against the mock
//! provider: the instructions banner and `/init`, custom commands, `@` completion, diffs in
//! approvals and after writes that ran without asking, and queued messages.

mod pty;

use hrns_blocking::mock::{MockProvider, Reply};
use std::path::{Path, PathBuf};
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

struct Ui {
    _root: tempfile::TempDir,
    work: PathBuf,
    p: pty::Pty,
}

/// A root with `home`, `config`, `state` and `work` (a repository); `prepare` fills it first.
fn start(mock: &MockProvider, prepare: impl FnOnce(&Path)) -> Ui {
    start_with(mock, &[], prepare)
}

/// [`start`] with command-line arguments.
fn start_with(mock: &MockProvider, args: &[&str], prepare: impl FnOnce(&Path)) -> Ui {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    for d in ["home", "config", "state", "work/.git"] {
        std::fs::create_dir_all(base.join(d)).unwrap();
    }
    prepare(&base);
    let work = base.join("work");
    let env = vec![
        ("HOME", base.join("home").display().to_string()),
        ("XDG_CONFIG_HOME", base.join("config").display().to_string()),
        ("XDG_STATE_HOME", base.join("state").display().to_string()),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("OPENAI_BASE_URL", mock.base_url()),
        ("OPENAI_API_KEY", "sk-tui-SECRET".to_owned()),
        ("HRNS_MODEL", "mock-model".to_owned()),
    ];
    let p = pty::Pty::spawn(env!("CARGO_BIN_EXE_hrns"), args, &work, &env, 30, 110);
    p.expect("mock-model", T);
    Ui {
        _root: root,
        work,
        p,
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

impl Ui {
    fn quit(mut self) {
        self.p.send("/quit\r");
        assert_eq!(self.p.wait(T), 0);
        assert!(!self.p.output().contains("sk-tui-SECRET"));
    }
}

fn chat_bodies(mock: &MockProvider) -> Vec<serde_json::Value> {
    mock.requests()
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .map(|r| r.json())
        .collect()
}

#[test]
fn banner_names_the_instruction_files_and_init_asks_for_one() {
    let mock = MockProvider::start([Reply::text_answer("INIT-DONE")]).unwrap();
    let mut ui = start(&mock, |base| {
        write(&base.join("work/AGENTS.md"), "Use tabs.");
    });
    ui.p.expect("AGENTS.md", T);
    let shown = ui.work.join("AGENTS.md").display().to_string();
    assert!(ui.p.output().contains(&shown), "{}", ui.p.output());
    ui.p.send("/init\r");
    ui.p.expect("INIT-DONE", T);
    let body = &chat_bodies(&mock)[0];
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("Use tabs.")
    );
    let asked = body["messages"][1]["content"].as_str().unwrap();
    assert!(asked.contains("write an AGENTS.md"), "{asked}");
    ui.quit();
}

#[test]
fn tab_completes_a_mention_and_the_file_is_attached() {
    let mock = MockProvider::start([Reply::text_answer("READ-IT")]).unwrap();
    let mut ui = start(&mock, |base| {
        write(&base.join("work/docs/guide.md"), "GUIDE-CONTENT\n");
        write(&base.join("work/docs/other.txt"), "x");
    });
    ui.p.send("summarise @do\t");
    ui.p.expect("@docs/", T);
    ui.p.send("gu\t");
    ui.p.expect("@docs/guide.md", T);
    ui.p.send("please\r");
    ui.p.expect("READ-IT", T);
    ui.p.expect("attached docs/guide.md", T);
    let body = &chat_bodies(&mock)[0];
    let sent = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        sent.starts_with("summarise @docs/guide.md please"),
        "{sent}"
    );
    assert!(sent.contains("GUIDE-CONTENT"), "{sent}");
    ui.quit();
}

#[test]
fn a_custom_command_is_listed_completed_and_run() {
    let mock = MockProvider::start([Reply::text_answer("COMMAND-RAN")]).unwrap();
    let mut ui = start(&mock, |base| {
        write(
            &base.join("work/.hrns/commands/explain-it.md"),
            "---\ndescription: Explains a topic simply\n---\nExplain $ARGUMENTS to a child.",
        );
    });
    ui.p.send("/help\r");
    ui.p.expect("Explains a topic simply", T);
    ui.p.send("/expl\t");
    ui.p.expect("/explain-it", T);
    ui.p.send(" rainbows\r");
    ui.p.expect("COMMAND-RAN", T);
    let body = &chat_bodies(&mock)[0];
    assert_eq!(
        body["messages"][1]["content"],
        "Explain rainbows to a child."
    );
    ui.quit();
}

#[test]
fn a_message_typed_during_a_turn_is_queued_editable_and_sent_after_it() {
    let slow = Reply::text_answer("FIRST-ANSWER arrives slowly");
    let mid = slow.body().len() / 2;
    let mock = MockProvider::start([
        slow.split_at(&[mid]).delay(Duration::from_secs(3)),
        Reply::text_answer("SECOND-ANSWER"),
    ])
    .unwrap();
    let mut ui = start(&mock, |_| {});
    ui.p.send("first\r");
    ui.p.expect("FIRST-ANSWER", T);
    ui.p.send("second\r");
    ui.p.expect("queued: second", T);
    // ↑ takes it back; the edited text is queued again.
    ui.p.send("\x1b[A");
    ui.p.send(" edited\r");
    ui.p.expect("queued: second edited", T);
    ui.p.expect("SECOND-ANSWER", T);
    let bodies = chat_bodies(&mock);
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[1]["messages"][3]["content"], "second edited");
    ui.quit();
}

#[test]
fn escape_still_interrupts_and_the_queued_message_follows() {
    let stuck = Reply::text_answer("PARTIAL then a very long wait");
    let mid = stuck.body().len() / 2;
    let mock = MockProvider::start([
        stuck.split_at(&[mid]).delay(Duration::from_secs(30)),
        Reply::text_answer("AFTER-INTERRUPT"),
    ])
    .unwrap();
    let mut ui = start(&mock, |_| {});
    ui.p.send("first\r");
    ui.p.expect("PARTIAL", T);
    ui.p.send("do this instead\r");
    ui.p.expect("queued: do this instead", T);
    ui.p.send("\x1b");
    ui.p.expect("interrupted", T);
    ui.p.expect("AFTER-INTERRUPT", T);
    let bodies = chat_bodies(&mock);
    let last = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"], "do this instead");
    ui.quit();
}

#[test]
fn an_edit_approval_shows_the_diff() {
    let edit = r#"{"path":"notes.txt","old_string":"draft","new_string":"final"}"#;
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "edit_file", edit)]),
        Reply::text_answer("EDITED"),
    ])
    .unwrap();
    let mut ui = start(&mock, |base| {
        write(&base.join("work/notes.txt"), "title\ndraft\nend\n");
    });
    ui.p.send("finalise the notes\r");
    ui.p.expect("[y]es", T);
    let screen = ui.p.screen();
    assert!(screen.contains("-draft"), "{screen}");
    assert!(screen.contains("+final"), "{screen}");
    assert!(screen.contains("@@ -1,3 +1,3 @@"), "{screen}");
    ui.p.send("y");
    ui.p.expect("EDITED", T);
    assert_eq!(
        std::fs::read_to_string(ui.work.join("notes.txt")).unwrap(),
        "title\nfinal\nend\n"
    );
    // Shown in the approval, not again with the result.
    assert_eq!(ui.p.output().matches("+final").count(), 1);
    ui.quit();
}

#[test]
fn writes_that_ran_without_asking_show_their_diff_after_the_result() {
    let edit = r#"{"path":"notes.txt","old_string":"draft","new_string":"final"}"#;
    let create = r#"{"path":"new.txt","content":"fresh line\n"}"#;
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "edit_file", edit), ("c2", "write_file", create)]),
        Reply::text_answer("WRITTEN"),
    ])
    .unwrap();
    let mut ui = start_with(&mock, &["--approval", "auto"], |base| {
        write(&base.join("work/notes.txt"), "title\ndraft\nend\n");
    });
    ui.p.send("finalise the notes\r");
    ui.p.expect("WRITTEN", T);
    assert!(!ui.p.output().contains("[y]es"), "nobody was asked");
    let out = ui.p.output();
    let edit_diff = out.find("@@ -1,3 +1,3 @@").expect(&out);
    let new_diff = out.find("+++ b/new.txt").expect(&out);
    for line in ["-draft", "+final", "--- /dev/null", "+fresh line"] {
        assert!(out.contains(line), "{line}: {out}");
    }
    // Each after its call's result, in the order the calls ran.
    let first_result = out.find("⎿").expect(&out);
    assert!(first_result < edit_diff && edit_diff < new_diff, "{out}");
    // Coloured: additions green (their `+`; the text in the file's syntax colours, here the
    // plain text's), removals red.
    let raw = String::from_utf8_lossy(&ui.p.raw()).into_owned();
    assert!(raw.contains("\x1b[1;32m+\x1b[0m\x1b[38;5;"), "{raw:?}");
    assert!(raw.contains("\x1b[31m-draft"), "{raw:?}");
    assert_eq!(
        std::fs::read_to_string(ui.work.join("new.txt")).unwrap(),
        "fresh line\n"
    );
    ui.quit();
}
