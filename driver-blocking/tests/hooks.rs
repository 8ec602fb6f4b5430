//! Running hook processes: input on stdin, a timeout that kills the whole process group,
//! capped output, and an environment without secrets. What the results mean is the core's
//! (`hrns_core::hooks`); here only the process side is checked.

use hrns_blocking::hooks::{HookEnv, run_hook, run_hooks};
use hrns_core::hooks::{
    FailMode, HookCommand, HookDue, HookEvent, HookExit, HookWait, MAX_HOOK_OUTPUT,
};
use hrns_core::sandbox::EnvPolicy;
use hrns_core::secrets::Secrets;
use std::path::Path;
use std::time::Duration;

fn command(text: &str, timeout: Duration) -> HookCommand {
    HookCommand {
        command: text.into(),
        timeout,
        fail: FailMode::Open,
    }
}

fn env(dir: &Path) -> HookEnv {
    HookEnv::new(dir, &EnvPolicy::default(), &Secrets::new())
}

#[test]
fn input_on_stdin_output_and_exit_code_come_back() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_hook(
        &command(
            "cat; echo ' in' \"$PWD\" >&2; exit 3",
            Duration::from_secs(30),
        ),
        r#"{"a":1}"#,
        &env(dir.path()),
    );
    assert_eq!(run.exit, HookExit::Code(3));
    assert_eq!(run.stdout, br#"{"a":1}"#);
    let stderr = String::from_utf8(run.stderr).unwrap();
    let real = dir.path().canonicalize().unwrap();
    assert!(
        stderr.contains(real.to_str().unwrap()) || stderr.contains(dir.path().to_str().unwrap()),
        "{stderr}"
    );
    assert!(!run.truncated);
}

#[test]
fn a_hook_that_hangs_is_killed_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let text = format!(
        "sleep 300 & echo $! > {p}; echo $$ >> {p}; sleep 300",
        p = pids.display()
    );
    let run = run_hook(
        &command(&text, Duration::from_millis(300)),
        "{}",
        &env(dir.path()),
    );
    assert_eq!(run.exit, HookExit::TimedOut);
    for pid in std::fs::read_to_string(&pids).unwrap().split_whitespace() {
        // SIGKILL is delivered, not awaited: the process is gone (or a zombie) once the
        // kernel got to it. A survivor would sleep for five minutes.
        let mut status = String::new();
        for _ in 0..1000 {
            status = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = status
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next();
            if matches!(state, None | Some("Z") | Some("X")) {
                status.clear();
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(status.is_empty(), "process {pid} still runs: {status}");
    }
}

#[test]
fn a_child_left_behind_holding_the_pipes_does_not_hold_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_hook(
        &command("sleep 300 & echo ok", Duration::from_millis(400)),
        "{}",
        &env(dir.path()),
    );
    assert_eq!(run.stdout, b"ok\n");
}

#[test]
fn huge_output_is_cut_and_marked() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_hook(
        &command("head -c 3000000 /dev/zero", Duration::from_secs(30)),
        "{}",
        &env(dir.path()),
    );
    assert_eq!(run.exit, HookExit::Code(0));
    assert_eq!(run.stdout.len(), MAX_HOOK_OUTPUT);
    assert!(run.truncated);
}

#[test]
fn a_hook_that_never_reads_its_input_is_not_stuck() {
    let dir = tempfile::tempdir().unwrap();
    let big = "x".repeat(4 * 1024 * 1024);
    let run = run_hook(
        &command("exit 0", Duration::from_secs(30)),
        &big,
        &env(dir.path()),
    );
    assert_eq!(run.exit, HookExit::Code(0));
}

#[test]
fn the_environment_names_the_project_and_holds_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    // The test's own environment may hold anything: the check is on what the hook saw. (A
    // variable holding the provider's key under an innocent name is checked end to end, in
    // cli/tests/hooks.rs, where the key can be set for the hrns process.)
    let path = std::env::var("PATH").unwrap_or_default();
    let env = HookEnv::new(dir.path(), &EnvPolicy::default(), &Secrets::new());
    let run = run_hook(&command("env", Duration::from_secs(30)), "{}", &env);
    let seen = String::from_utf8(run.stdout).unwrap();
    let project = format!("HRNS_PROJECT_DIR={}", dir.path().display());
    assert!(seen.lines().any(|l| l == project), "{seen}");
    let alias = format!("CLAUDE_PROJECT_DIR={}", dir.path().display());
    assert!(seen.lines().any(|l| l == alias), "{seen}");
    assert!(
        seen.lines().any(|l| l == format!("PATH={path}")),
        "PATH is kept"
    );
    for line in seen.lines() {
        let name = line.split('=').next().unwrap_or("");
        let upper = name.to_ascii_uppercase();
        assert!(
            !["KEY", "SECRET", "TOKEN", "PASSWORD"]
                .iter()
                .any(|w| upper.contains(w)),
            "{name} reached the hook"
        );
    }
}

#[test]
fn hooks_of_one_event_run_at_once_and_come_back_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    // The first waits for the second: only parallel runs finish both.
    let due = HookDue {
        id: 7,
        event: HookEvent::PreToolUse,
        commands: vec![
            command(
                &format!(
                    "while [ ! -e {} ]; do sleep 0.01; done; echo first",
                    gate.display()
                ),
                Duration::from_secs(30),
            ),
            command(
                &format!("touch {}; echo second", gate.display()),
                Duration::from_secs(30),
            ),
            command("/nonexistent/hook", Duration::from_secs(30)),
        ],
        input: "{}".into(),
        wait: HookWait::Awaited,
    };
    let runs = run_hooks(&due, &env(dir.path()));
    assert_eq!(runs[0].stdout, b"first\n");
    assert_eq!(runs[1].stdout, b"second\n");
    assert_eq!(
        runs[2].exit,
        HookExit::Code(127),
        "sh reports a missing program"
    );
}
