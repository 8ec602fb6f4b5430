//! Checkpoints end to end through the real `hrns`: `exec` snapshots the workspace around every
//! step that may change files (commands included), `hrns undo` puts back exactly what the steps
//! changed (and `--redo` brings it back), a user's later edit is kept and named, `hrns rewind`
//! takes back the code, the conversation or both, and the user's own git state is never touched.

mod common;

use common::{Env, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};

fn events(out: &Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect()
}

fn session_id(out: &Output) -> String {
    events(out)
        .iter()
        .find(|e| e["type"] == "session_started")
        .and_then(|e| e["session_id"].as_str())
        .expect("a session id")
        .to_owned()
}

/// One turn that writes `a.txt`, runs a command that creates `made.txt`, deletes `gone.txt`
/// and makes `run.sh` executable, then answers.
fn agent_turn() -> Vec<Reply> {
    let write = json!({"path": "a.txt", "content": "agent's a\n"}).to_string();
    let command =
        json!({"command": "printf made > made.txt && rm gone.txt && chmod +x run.sh"}).to_string();
    vec![
        Reply::tool_calls(&[("w", "write_file", &write)]),
        Reply::tool_calls(&[("c", "run_command", &command)]),
        Reply::text_answer("done"),
    ]
}

fn seed(env: &Env, dir: &str) {
    env.write(&format!("{dir}/a.txt"), "user's a\n");
    env.write_bytes(&format!("{dir}/gone.txt"), b"\x00\x01binary\xff");
    env.write(&format!("{dir}/run.sh"), "#!/bin/sh\n");
    env.write(&format!("{dir}/untouched.txt"), "same\n");
}

fn read(env: &Env, p: &str) -> Option<Vec<u8>> {
    std::fs::read(env.path(p)).ok()
}

fn mode(env: &Env, p: &str) -> u32 {
    std::fs::metadata(env.path(p)).unwrap().permissions().mode() & 0o777
}

fn assert_seeded(env: &Env, dir: &str) {
    assert_eq!(read(env, &format!("{dir}/a.txt")).unwrap(), b"user's a\n");
    assert_eq!(
        read(env, &format!("{dir}/gone.txt")).unwrap(),
        b"\x00\x01binary\xff"
    );
    assert_eq!(read(env, &format!("{dir}/made.txt")), None);
    assert_eq!(mode(env, &format!("{dir}/run.sh")) & 0o111, 0);
    assert_eq!(
        read(env, &format!("{dir}/untouched.txt")).unwrap(),
        b"same\n"
    );
}

fn exec(env: &Env, dir: &str, mock: &MockProvider, extra: &[&str], prompt: &str) -> Output {
    let mut args = vec!["exec", "--json", "--approval", "auto"];
    args.extend_from_slice(extra);
    args.push(prompt);
    let out = env.run_in(dir, Some(mock), &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}

#[test]
fn undo_puts_back_exactly_what_a_turn_changed_and_redo_brings_it_again() {
    let env = Env::new();
    seed(&env, "work");
    let mock = MockProvider::start(agent_turn()).unwrap();
    let out = exec(&env, "work", &mock, &[], "change things");
    assert!(
        !stderr(&out).contains("checkpoint"),
        "no warning: {}",
        stderr(&out)
    );
    let checkpoints: Vec<Value> = events(&out)
        .into_iter()
        .filter(|e| e["type"] == "checkpoint")
        .collect();
    assert_eq!(
        checkpoints.len(),
        3,
        "before, after the write, after the command: {checkpoints:?}"
    );
    assert_eq!(checkpoints[0]["moment"], "before_turn");
    assert_eq!(checkpoints[1]["changed"], json!(["a.txt"]));
    assert_eq!(
        (
            checkpoints[1]["turn"].as_u64(),
            checkpoints[1]["step"].as_u64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(checkpoints[2]["step"], 2);
    assert_eq!(
        checkpoints[2]["changed"],
        json!(["gone.txt", "made.txt", "run.sh"])
    );
    assert_eq!(read(&env, "work/made.txt").unwrap(), b"made");

    let listed = env.run(None, &["checkpoints", "--json"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    let listed: Value = serde_json::from_str(stdout(&listed).trim()).unwrap();
    assert_eq!(listed["turns"][0]["message"], "change things");
    assert_eq!(
        listed["turns"][0]["changed"],
        json!(["a.txt", "gone.txt", "made.txt", "run.sh"])
    );

    let human = env.run(None, &["checkpoints"]);
    let text = stdout(&human);
    assert!(
        text.contains("turn 1  change things  4 files changed"),
        "{text}"
    );
    assert!(
        text.contains("step 2") && text.contains("gone.txt, made.txt, run.sh"),
        "{text}"
    );
    let undo = env.run(None, &["undo"]);
    assert_eq!(undo.status.code(), Some(0), "{}", stderr(&undo));
    assert!(
        stdout(&undo).contains("undid turn 1: restored 4 files"),
        "{}",
        stdout(&undo)
    );
    assert_seeded(&env, "work");
    assert!(stdout(&env.run(None, &["checkpoints"])).contains("(files undone)"));

    let again = env.run(None, &["undo"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("nothing to undo"),
        "{}",
        stderr(&again)
    );

    let redo = env.run(None, &["undo", "--redo", "--json"]);
    assert_eq!(redo.status.code(), Some(0), "{}", stderr(&redo));
    let redo: Value = serde_json::from_str(stdout(&redo).trim()).unwrap();
    assert_eq!(redo["type"], "redo");
    assert_eq!(read(&env, "work/a.txt").unwrap(), b"agent's a\n");
    assert_eq!(read(&env, "work/made.txt").unwrap(), b"made");
    assert_eq!(read(&env, "work/gone.txt"), None);
    assert_eq!(mode(&env, "work/run.sh") & 0o111, 0o111);
}

#[test]
fn a_file_the_user_changed_after_the_agent_is_kept_and_named_unless_forced() {
    let env = Env::new();
    seed(&env, "work");
    let mock = MockProvider::start(agent_turn()).unwrap();
    exec(&env, "work", &mock, &[], "change things");
    env.write("work/a.txt", "the user's own edit\n");
    let undo = env.run(None, &["undo", "--json"]);
    assert_eq!(undo.status.code(), Some(0), "{}", stderr(&undo));
    let done: Value = serde_json::from_str(stdout(&undo).trim()).unwrap();
    assert_eq!(done["kept"][0]["path"], "a.txt", "{done}");
    assert_eq!(read(&env, "work/a.txt").unwrap(), b"the user's own edit\n");
    assert_eq!(read(&env, "work/made.txt"), None, "the rest is undone");

    // Redo, then undo with --force: the edit is overwritten.
    let redo = env.run(None, &["undo", "--redo"]);
    assert_eq!(redo.status.code(), Some(0), "{}", stderr(&redo));
    let forced = env.run(None, &["undo", "--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", stderr(&forced));
    assert_seeded(&env, "work");

    // The human listing names a kept file too.
    let mock = MockProvider::start(agent_turn()).unwrap();
    exec(&env, "work", &mock, &["--continue"], "again");
    env.write("work/made.txt", "mine now");
    let undo = env.run(None, &["undo"]);
    assert!(
        stdout(&undo).contains("kept     made.txt (changed after the agent's last step)"),
        "{}",
        stdout(&undo)
    );
}

#[test]
fn rewind_takes_back_code_or_conversation_and_continue_goes_on_from_there() {
    let env = Env::new();
    seed(&env, "work");
    let mock = MockProvider::start(agent_turn()).unwrap();
    let out = exec(&env, "work", &mock, &[], "first turn");
    let id = session_id(&out);
    let write = json!({"path": "second.txt", "content": "2"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("w", "write_file", &write)]),
        Reply::text_answer("second done"),
    ])
    .unwrap();
    exec(&env, "work", &mock, &["--continue"], "second turn");
    assert!(read(&env, "work/second.txt").is_some());

    // Code only: the files of turn 2 go, the conversation stays.
    let code = env.run(None, &["rewind", "--session", &id, "--to", "2", "--code"]);
    assert_eq!(code.status.code(), Some(0), "{}", stderr(&code));
    assert_eq!(read(&env, "work/second.txt"), None);
    assert_eq!(
        read(&env, "work/made.txt").unwrap(),
        b"made",
        "turn 1 stays"
    );

    // Conversation only, to before turn 2: the files stay, the history loses turn 2.
    let conv = env.run(
        None,
        &["rewind", "--session", &id, "--to", "2", "--conversation"],
    );
    assert_eq!(conv.status.code(), Some(0), "{}", stderr(&conv));
    assert_eq!(read(&env, "work/made.txt").unwrap(), b"made");
    let mock = MockProvider::start([Reply::text_answer("third")]).unwrap();
    exec(&env, "work", &mock, &["--continue"], "third turn");
    let sent = mock.chat_requests()[0].json().to_string();
    assert!(sent.contains("first turn"), "{sent}");
    assert!(!sent.contains("second turn"), "turn 2 was rewound: {sent}");
    assert!(sent.contains("third turn"));

    // Both, to before turn 1: every file back, the conversation empty.
    let both = env.run(None, &["rewind", "--session", &id, "--to", "1"]);
    assert_eq!(both.status.code(), Some(0), "{}", stderr(&both));
    assert_seeded(&env, "work");
    let mock = MockProvider::start([Reply::text_answer("fresh")]).unwrap();
    exec(&env, "work", &mock, &["--continue"], "fourth turn");
    let sent = mock.chat_requests()[0].json().to_string();
    assert!(
        !sent.contains("first turn") && !sent.contains("third turn"),
        "{sent}"
    );

    let bad = env.run(None, &["rewind", "--session", &id, "--to", "99"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("there is no turn 99"),
        "{}",
        stderr(&bad)
    );
}

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    stdout(&out)
}

/// What the user's git shows: status, stash, refs, and what the index holds (its stat cache
/// is git's own: a rewritten file's new mtime is refreshed by `git status` itself).
fn git_state(dir: &std::path::Path) -> [String; 5] {
    [
        git(dir, &["status", "--porcelain=v1", "--untracked-files=all"]),
        git(dir, &["stash", "list"]),
        git(dir, &["for-each-ref"]),
        git(dir, &["ls-files", "--stage"]),
        git(dir, &["config", "--list", "--local"]),
    ]
}

#[test]
fn a_repository_with_a_dirty_index_and_a_stash_is_untouched_by_a_run_and_an_undo() {
    let env = Env::new();
    let work = env.work();
    seed(&env, "work");
    git(&work, &["init", "-q"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-qm", "init"]);
    env.write("work/untouched.txt", "stashed change\n");
    git(&work, &["stash", "-q"]);
    env.write("work/staged.txt", "staged\n");
    git(&work, &["add", "staged.txt"]);
    let before = git_state(&work);
    let mock = MockProvider::start(agent_turn()).unwrap();
    exec(&env, "work", &mock, &[], "change things");
    let undo = env.run(None, &["undo"]);
    assert_eq!(undo.status.code(), Some(0), "{}", stderr(&undo));
    assert_seeded(&env, "work");
    assert_eq!(git_state(&work), before);
}

#[test]
fn in_a_monorepo_subdirectory_nothing_outside_the_workspace_is_touched() {
    let env = Env::new();
    let mono = env.path("work");
    seed(&env, "work/pkg");
    env.write("work/other/outside.txt", "outside\n");
    git(&mono, &["init", "-q"]);
    git(&mono, &["add", "."]);
    git(&mono, &["commit", "-qm", "init"]);
    let before = git_state(&mono);
    let mock = MockProvider::start(agent_turn()).unwrap();
    exec(&env, "work/pkg", &mock, &[], "change things");
    // The user changes a file outside the workspace meanwhile: undo leaves it.
    env.write("work/other/outside.txt", "user's outside edit\n");
    let undo = env.run_in("work/pkg", None, &["undo"]);
    assert_eq!(undo.status.code(), Some(0), "{}", stderr(&undo));
    assert_seeded(&env, "work/pkg");
    assert_eq!(
        read(&env, "work/other/outside.txt").unwrap(),
        b"user's outside edit\n"
    );
    env.write("work/other/outside.txt", "outside\n");
    assert_eq!(git_state(&mono), before);
}

#[test]
fn without_git_on_path_checkpoints_are_off_with_one_warning_and_the_run_works() {
    let env = Env::new();
    let empty = env.path("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    let write = json!({"path": "a.txt", "content": "x"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("w", "write_file", &write)]),
        Reply::tool_calls(&[("v", "write_file", &write)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let out = env
        .cmd(Some(&mock))
        .env("PATH", &empty)
        .args(["exec", "--json", "--approval", "auto", "write"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    common::check_event_lines(&stdout(&out));
    assert_eq!(
        stderr(&out).matches("checkpoints are off").count(),
        1,
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("`git`"), "{}", stderr(&out));
    assert!(!stdout(&out).contains("checkpoint"), "no checkpoint events");
    assert_eq!(read(&env, "work/a.txt").unwrap(), b"x");
}

#[test]
fn checkpoints_false_in_the_config_turns_them_off() {
    let env = Env::new();
    let write = json!({"path": "a.txt", "content": "x"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("w", "write_file", &write)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    env.config_with(&mock, r#", "checkpoints": false"#);
    let out = exec(&env, "work", &mock, &[], "write");
    assert!(!stdout(&out).contains("\"checkpoint\""));
    assert!(
        !env.path("state/hrns/checkpoints").exists()
            || std::fs::read_dir(env.path("state/hrns/checkpoints"))
                .unwrap()
                .next()
                .is_none()
    );
    let undo = env.run(None, &["undo"]);
    assert_eq!(undo.status.code(), Some(1));
    assert!(
        stderr(&undo).contains("nothing to undo"),
        "{}",
        stderr(&undo)
    );
    let bad = env.config_with(&mock, r#", "checkpointsMaxBytes": "lots""#);
    let out = env.run(Some(&mock), &["exec", "hi"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("`checkpointsMaxBytes`"),
        "{} {}",
        stderr(&out),
        bad.display()
    );
}

#[test]
fn after_kill_9_mid_run_undo_still_works() {
    let env = Env::new();
    seed(&env, "work");
    let write = json!({"path": "a.txt", "content": "agent's a\n"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("w", "write_file", &write)]),
        Reply::keep_alives_forever().delay(std::time::Duration::from_millis(50)),
    ])
    .unwrap();
    let mut child = env
        .cmd(Some(&mock))
        .args(["exec", "--approval", "auto", "change a"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the write's "after" checkpoint is in the session file, while the next
    // model request hangs.
    let sessions = env.path("state/hrns/sessions");
    let recorded = || {
        std::fs::read_dir(&sessions)
            .into_iter()
            .flatten()
            .flatten()
            .any(|f| std::fs::read_to_string(f.path()).is_ok_and(|t| t.contains("\"after_call\"")))
    };
    let started = std::time::Instant::now();
    while !(recorded() && mock.chat_requests().len() >= 2) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the checkpoint was never recorded"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(read(&env, "work/a.txt").unwrap(), b"agent's a\n");
    let undo = env.run(None, &["undo"]);
    assert_eq!(undo.status.code(), Some(0), "{}", stderr(&undo));
    assert_eq!(read(&env, "work/a.txt").unwrap(), b"user's a\n");
    // The next run in the workspace takes checkpoints as before.
    let mock = MockProvider::start(agent_turn()).unwrap();
    let out = exec(&env, "work", &mock, &[], "again");
    assert!(stdout(&out).contains("\"checkpoint\""));
}

#[test]
fn help_explains_each_command() {
    let env = Env::new();
    for (command, words) in [
        ("checkpoints", "--prune"),
        ("undo", "--redo"),
        ("rewind", "--conversation"),
    ] {
        let out = env.run(None, &[command, "--help"]);
        assert_eq!(out.status.code(), Some(0));
        let text = stdout(&out);
        assert!(text.contains(words) && text.contains("Examples:"), "{text}");
    }
    let none = env.run(None, &["undo"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(
        stderr(&none).contains("no saved session"),
        "{}",
        stderr(&none)
    );
}

#[test]
fn undo_turns_n_takes_back_several_turns_at_once() {
    let env = Env::new();
    seed(&env, "work");
    let mock = MockProvider::start(agent_turn()).unwrap();
    exec(&env, "work", &mock, &[], "first");
    let write = json!({"path": "a.txt", "content": "second a\n"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("w", "write_file", &write)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    exec(&env, "work", &mock, &["--continue"], "second");
    let undo = env.run(None, &["undo", "--turns", "2", "--json"]);
    assert_eq!(undo.status.code(), Some(0), "{}", stderr(&undo));
    let done: Value = serde_json::from_str(stdout(&undo).trim()).unwrap();
    assert_eq!(done["turns"], json!([1, 2]));
    assert_eq!(done["kept"], json!([]));
    assert_seeded(&env, "work");
    let zero = env.run(None, &["undo", "--turns", "0"]);
    assert_eq!(zero.status.code(), Some(2), "{}", stderr(&zero));
}

/// When a snapshot fails mid-run (here `git write-tree` fails, through a `git` on `PATH` that
/// runs the real one otherwise), exec's text output warns once per checkpoint that the step
/// cannot be undone, says why, and the run goes on to its end.
#[test]
fn a_failed_snapshot_is_a_warning_in_execs_text_output_and_the_run_goes_on() {
    let env = Env::new();
    let real_git = std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("git"))
                .find(|git| git.is_file())
        })
        .expect("git on PATH");
    let wrapper = env.write(
        "fakebin/git",
        &format!(
            "#!/bin/sh\nfor a in \"$@\"; do\n  if [ \"$a\" = write-tree ]; then echo 'simulated write-tree failure' >&2; exit 1; fi\ndone\nexec '{}' \"$@\"\n",
            real_git.display()
        ),
    );
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(
        std::iter::once(env.path("fakebin"))
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let write = json!({"path": "a.txt", "content": "x"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("w", "write_file", &write)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let out = env
        .cmd(Some(&mock))
        .env("PATH", &path)
        .args(["exec", "--approval", "auto", "write"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("no checkpoint for this step"))
        .collect();
    assert_eq!(warnings.len(), 2, "before and after the write: {err}");
    for w in &warnings {
        assert!(
            w.starts_with("warning: no checkpoint for this step, so undo cannot take it back: "),
            "{w}"
        );
        assert!(w.contains("write-tree"), "the reason is told: {w}");
    }
    assert!(stdout(&out).contains("done"), "{}", stdout(&out));
    assert_eq!(read(&env, "work/a.txt").unwrap(), b"x");
}

#[test]
fn a_run_that_changes_nothing_makes_no_shadow_repository() {
    let env = Env::new();
    env.write("work/a.txt", "a\n");
    let read_call = json!({"path": "a.txt"}).to_string();
    let mock = MockProvider::start([
        Reply::text_answer("only words"),
        Reply::tool_calls(&[("r", "read_file", &read_call)]),
        Reply::text_answer("read it"),
    ])
    .unwrap();
    let stores = || {
        std::fs::read_dir(env.path("state/hrns/checkpoints"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    exec(&env, "work", &mock, &[], "say something");
    assert_eq!(stores(), 0, "a run without tool calls made a store");
    exec(&env, "work", &mock, &[], "read a.txt");
    assert_eq!(stores(), 0, "a run that only read made a store");

    let write = json!({"path": "a.txt", "content": "b\n"}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("w", "write_file", &write)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let id = session_id(&exec(&env, "work", &mock, &[], "write"));
    assert_eq!(stores(), 1, "a run that wrote made no store");
    let undo = env.run(None, &["undo", "--session", &id]);
    assert_eq!(undo.status.code(), Some(0), "{}", stderr(&undo));
    assert_eq!(read(&env, "work/a.txt").unwrap(), b"a\n");
}
