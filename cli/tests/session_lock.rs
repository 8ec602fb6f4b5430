//! One writer per session: two `hrns exec --continue` runs at once never interleave their turns
//! in one session file. The first holds the session while it runs (here: while its
//! `run_command` waits for a gate file the test creates); the second waits for it, or starts a
//! new session, and says which on stderr.

mod common;

use common::{Env, Lines, stderr};
use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::Value;
use std::process::{Child, Stdio};
use std::time::Duration;

/// Waits this long at most for an observable moment; never reached when things work.
const PATIENCE: Duration = Duration::from_secs(60);

/// The tool call that keeps the first run busy until the test creates `work/gate`.
const HOLD: &str = r#"{"command": "until [ -e gate ]; do sleep 0.05; done; echo through"}"#;

/// The one session file there is at the start, after a first exchange.
fn first_session(env: &Env, mock: &MockProvider) -> std::path::PathBuf {
    let out = env.run(Some(mock), &["exec", "first question"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let files = session_files(env);
    assert_eq!(files.len(), 1);
    files.into_iter().next().unwrap()
}

fn session_files(env: &Env) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(env.path("state/hrns/sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

/// The texts of the messages saved in a session file, in order, with the tool calls' names.
fn saved_messages(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["event"]["type"] == "message")
        .map(|v| {
            let m = &v["event"]["message"];
            match m["tool_calls"].as_array() {
                Some(calls) if !calls.is_empty() => {
                    format!("call {}", calls[0]["function"]["name"].as_str().unwrap())
                }
                _ => format!(
                    "{}: {}",
                    m["role"].as_str().unwrap(),
                    m["content"].as_str().unwrap_or("").trim()
                ),
            }
        })
        .collect()
}

/// Starts `hrns exec --continue "slow one"`, which holds the session until `work/gate` exists;
/// returns once its request reached the provider, so it holds the session by then.
fn start_holder(env: &Env, mock: &MockProvider) -> Child {
    let holder = env
        .cmd(Some(mock))
        .args(["exec", "--continue", "slow one"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + PATIENCE;
    while mock.chat_requests().len() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the first run never asked the provider"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    holder
}

#[test]
fn a_second_continue_that_does_not_wait_starts_a_new_session() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::text_answer("first answer"),
        Reply::tool_calls(&[("c1", "run_command", HOLD)]),
        Reply::text_answer("impatient answer"),
        Reply::text_answer("slow answer"),
    ])
    .unwrap();
    let session = first_session(&env, &mock);
    let mut holder = start_holder(&env, &mock);

    let out = env
        .cmd(Some(&mock))
        .env("HRNS_SESSION_WAIT", "0")
        .args(["exec", "--continue", "impatient"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("is being written by another hrns")
            && err.contains("starting a new session instead"),
        "{err}"
    );
    // Its request carried none of the busy session's history.
    let asked = mock.chat_requests()[2].json();
    let texts: Vec<&str> = asked["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["impatient"]);

    env.write("work/gate", "");
    assert!(holder.wait().unwrap().success());
    let saved = saved_messages(&session);
    let roles: Vec<&str> = saved.iter().map(|m| m.split(':').next().unwrap()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "call run_command",
            "tool",
            "assistant"
        ],
        "{saved:?}"
    );
    assert_eq!(saved[2], "user: slow one");
    assert_eq!(saved[5], "assistant: slow answer");
    let files = session_files(&env);
    assert_eq!(files.len(), 2, "the second run saved its own session");
    let other = files.into_iter().find(|f| *f != session).unwrap();
    assert_eq!(
        saved_messages(&other),
        ["user: impatient", "assistant: impatient answer"]
    );
}

#[test]
fn a_second_continue_waits_for_the_first_and_continues_after_it() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::text_answer("first answer"),
        Reply::tool_calls(&[("c1", "run_command", HOLD)]),
        Reply::text_answer("slow answer"),
        Reply::text_answer("patient answer"),
    ])
    .unwrap();
    let session = first_session(&env, &mock);
    let mut holder = start_holder(&env, &mock);

    let mut patient = env
        .cmd(Some(&mock))
        .env("HRNS_SESSION_WAIT", "600")
        .args(["exec", "--continue", "patient"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = Lines::read(patient.stderr.take().unwrap());
    err.wait_for("a waiting notice", PATIENCE, |l| {
        l.contains("is being written by another hrns; waiting up to 600 s")
    });
    // Only now may the first run finish.
    env.write("work/gate", "");
    assert!(holder.wait().unwrap().success());
    assert!(patient.wait().unwrap().success());
    let err = err.finish();
    assert!(
        err.contains("the other hrns finished; continuing session"),
        "{err}"
    );

    let saved = saved_messages(&session);
    let roles: Vec<&str> = saved.iter().map(|m| m.split(':').next().unwrap()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "call run_command",
            "tool",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(saved[5], "assistant: slow answer");
    assert_eq!(saved[6], "user: patient");
    assert_eq!(saved[7], "assistant: patient answer");
    assert_eq!(session_files(&env).len(), 1);
}

#[test]
fn a_writer_killed_with_sigkill_leaves_no_lock_behind() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::text_answer("first answer"),
        Reply::tool_calls(&[("c1", "run_command", HOLD)]),
        Reply::text_answer("after the crash"),
    ])
    .unwrap();
    let session = first_session(&env, &mock);
    let mut holder = start_holder(&env, &mock);
    holder.kill().unwrap();
    holder.wait().unwrap();
    // Ends the killed run's command too, whoever still runs it.
    env.write("work/gate", "");

    let out = env
        .cmd(Some(&mock))
        .env("HRNS_SESSION_WAIT", "0")
        .args(["exec", "--continue", "again"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("another hrns"), "{err}");
    let saved = saved_messages(&session);
    assert_eq!(saved.last().unwrap(), "assistant: after the crash");
    assert!(saved.contains(&"user: again".to_owned()), "{saved:?}");
    assert_eq!(session_files(&env).len(), 1);
}
