//! Parity with the original Go hrns and the rough edges of issue 19, end to end: the built binary
//! against the mock provider over loopback.

mod common;

use common::{Env, KEY, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply};
use std::io::Read;
use std::process::Stdio;

#[test]
fn a_stale_current_agent_is_repaired_and_saved() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("a"), Reply::text_answer("b")]).unwrap();
    env.config_with(&mock, r#", "currentAgent": "Reviewer", "theme": "dark""#);
    let out = env.run(None, &["exec", "x"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("`Reviewer`") && err.contains("Builder, Explorer, Planner, Pirate"),
        "{err}"
    );
    let saved = env.config_json();
    assert_eq!(saved["currentAgent"], "Builder");
    assert_eq!(saved["theme"], "dark", "other keys kept");
    // Repaired once: the next run is quiet.
    let out = env.run(None, &["exec", "x"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!stderr(&out).contains("Reviewer"), "{}", stderr(&out));
    // An explicit --agent that does not exist is still an error.
    let out = env.run(None, &["exec", "--agent", "nobody", "x"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_stale_current_provider_falls_back_to_a_configured_one() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("fine")]).unwrap();
    env.config_with(&mock, r#", "currentProvider": "renamed""#);
    let out = env.run(None, &["exec", "x"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("`renamed`"), "{}", stderr(&out));
    assert_eq!(stdout(&out), "fine\n");
    assert_eq!(env.config_json()["currentProvider"], "mock");
}

#[test]
fn the_originals_exec_flags_work_and_value_swallowing_clusters_are_refused() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("a"), Reply::text_answer("b")]).unwrap();
    env.config_with(&mock, "");
    let out = env.run(
        None,
        &[
            "exec",
            "-message=hello pirate",
            "-model=other-model",
            "-agent",
            "Pirate",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = mock.chat_requests()[0].json();
    assert_eq!(body["model"], "other-model");
    let messages = body["messages"].to_string();
    assert!(messages.contains("hello pirate"), "{messages}");
    assert!(
        messages.contains("pirate's voice"),
        "the Pirate agent's prompt"
    );
    let out = env.run(None, &["exec", "-provider", "mock", "-message", "two"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        mock.chat_requests()[1].json()["messages"]
            .to_string()
            .contains("two")
    );
    for bad in ["-mfoo", "-messages=x"] {
        let out = env.run(None, &["exec", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(stderr(&out).contains(bad), "{}", stderr(&out));
    }
    assert_eq!(
        mock.chat_requests().len(),
        2,
        "nothing sent for refused flags"
    );
}

/// Runs `args` with stdout read for a few bytes and then closed.
fn closed_pipe(env: &Env, args: &[&str]) -> (Option<i32>, String) {
    let mut child = env
        .cmd(None)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 8];
    out.read_exact(&mut first).unwrap();
    drop(out);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap().code(), err)
}

#[test]
fn commands_exit_quietly_on_a_closed_pipe() {
    let env = Env::new();
    let line =
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"xxxxxxxxxxxxxxxx\"}}]}\n\n";
    let body = env.write("work/body.sse", &line.repeat(40_000));
    let (code, err) = closed_pipe(&env, &["debug", "sse", body.to_str().unwrap()]);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err, "");
    assert_eq!(code, Some(141));
    let (code, err) = closed_pipe(&env, &["completions", "zsh"]);
    assert!(!err.contains("panicked"), "{err}");
    assert!(matches!(code, Some(0 | 141)), "{code:?}");
}

#[test]
fn an_invalid_base_url_is_a_config_error_naming_it() {
    let env = Env::new();
    let out = env
        .cmd(None)
        .args(["exec", "x"])
        .env("OPENAI_BASE_URL", "not-a-url")
        .env("HRNS_MODEL", "m")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`not-a-url`") && stderr(&out).contains("OPENAI_BASE_URL"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_connection_error_names_the_url() {
    let env = Env::new();
    // A port nothing listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let out = env
        .cmd(None)
        .args(["exec", "--json", "x"])
        .env("OPENAI_BASE_URL", &url)
        .env("HRNS_MODEL", "m")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let failed = stdout(&out);
    assert!(
        failed.contains(&format!("{url}/chat/completions")),
        "{failed}\n{}",
        stderr(&out)
    );
}

#[test]
fn a_missing_config_file_is_an_error_and_corrupt_ones_are_reported_once() {
    let env = Env::new();
    let out = env.run(None, &["--config", "nope.json", "providers"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("nope.json"), "{}", stderr(&out));
    env.write("config/hrns/config.json", "{\n  \"providers\": [\n");
    let out = env.run(None, &["providers"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("config.json:2:"), "{err}");
    assert!(!err.contains("line 2"), "the position is said once: {err}");
    assert_eq!(err.matches("overwrite").count(), 1, "{err}");
}

#[test]
fn providers_shows_the_one_from_the_environment() {
    let env = Env::new();
    let mock = MockProvider::start([]).unwrap();
    let out = env.run(Some(&mock), &["providers"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("env") && text.contains(&mock.base_url()) && text.contains("mock-model"),
        "{text}"
    );
    assert!(!text.contains(KEY));
    let out = env.run(None, &["exec", "x"]);
    assert!(!stderr(&out).contains(" ,"), "{}", stderr(&out));
}

fn json_lines(out: &std::process::Output) -> Vec<serde_json::Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn json_starts_with_session_started_and_a_turn_without_usage_reports_null() {
    let env = Env::new();
    // No usage chunk in this answer.
    let no_usage = Reply::sse([
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"hi"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ]);
    let mock = MockProvider::start([no_usage, Reply::text_answer("again")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "--json", "--agent", "pirate", "x"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = json_lines(&out);
    let first = &events[0];
    assert_eq!(first["type"], "session_started");
    assert_eq!(first["schema_version"], 2);
    assert_eq!(first["provider"], "env");
    assert_eq!(first["model"], "mock-model");
    assert_eq!(first["agent"], "Pirate");
    let cwd = env.work().canonicalize().unwrap();
    assert_eq!(first["cwd"], cwd.display().to_string());
    let last = events.last().unwrap();
    assert_eq!(last["type"], "turn_finished");
    assert!(last["usage"].is_null(), "{last}");
    // The session id resumes the session.
    let id = first["session_id"].as_str().unwrap();
    let out = env.run(Some(&mock), &["exec", "--json", "--resume", id, "more"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = json_lines(&out);
    assert_eq!(events[0]["session_id"], id);
    assert_eq!(events.last().unwrap()["usage"]["total_tokens"], 9);
    assert!(
        mock.requests()[1].json()["messages"]
            .to_string()
            .contains("\"hi\"")
    );
}

#[test]
fn config_and_usage_errors_under_json_are_one_json_error_event() {
    let env = Env::new();
    let out = env
        .cmd(None)
        .args(["exec", "--json", "x"])
        .env("OPENAI_BASE_URL", "not-a-url")
        .env("HRNS_MODEL", "m")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let events = json_lines(&out);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "error");
    assert_eq!(events[0]["exit_code"], 2);
    assert!(events[0]["message"].as_str().unwrap().contains("not-a-url"));
    for args in [
        &["exec", "--json", "--frobnicate", "x"][..],
        &["exec", "--json", "-mx", "y"],
    ] {
        let out = env.run(None, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let events = json_lines(&out);
        assert_eq!(events.len(), 1, "{args:?}: {events:?}");
        assert_eq!(events[0]["type"], "error");
    }
    // Without --json, stdout stays empty.
    let out = env.run(None, &["exec", "--frobnicate", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "");
}

#[test]
fn replay_defaults_to_read_only() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "write_file", r#"{"path":"made.txt","content":"x"}"#)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let record = env.path("run.record");
    let out = env.run(
        Some(&mock),
        &["exec", "--record", record.to_str().unwrap(), "write it"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(env.work().join("made.txt").exists());
    std::fs::remove_file(env.work().join("made.txt")).unwrap();
    let out = env.run(None, &["replay", "--json", record.to_str().unwrap()]);
    let events = json_lines(&out);
    let result = events
        .iter()
        .find(|e| e["type"] == "tool_result")
        .expect("a tool result");
    assert_eq!(result["status"], "denied_by_policy", "{result}");
    assert!(
        !env.work().join("made.txt").exists(),
        "the write did not run"
    );
    let out = env.run(
        None,
        &["replay", "--approval", "auto", record.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        env.work().join("made.txt").exists(),
        "--approval auto runs it"
    );
}

#[test]
fn replay_strips_control_sequences_from_the_recorded_prompt_and_counts_in_words() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("done")]).unwrap();
    let record = env.path("run.record");
    let prompt = format!("say {EVIL}done");
    let out = env.run(
        Some(&mock),
        &["exec", "--record", record.to_str().unwrap(), &prompt],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = env.run(None, &["replay", record.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("> say done"), "{err:?}");
    assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err:?}");
    assert!(err.contains("(1 recorded request)"), "{err}");
    assert!(err.contains("replay: 1 request, all as recorded"), "{err}");
}

#[test]
fn the_shipped_demo_replays() {
    let env = Env::new();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    let out = env
        .cmd(None)
        .current_dir(repo)
        .args(["replay", "--json", "examples/demo.record"])
        .output()
        .unwrap();
    // The README's first command: its read-only tools still run under the read-only default.
    // (That its requests match the recorded ones is tests/demo.rs's.)
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = json_lines(&out);
    let statuses: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["ok", "ok"], "{}", stderr(&out));
}

fn mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn state_files_and_records_are_private() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::text_answer("a"),
        Reply::text_answer("b"),
        Reply::text_answer("c"),
    ])
    .unwrap();
    // A record over an existing world-readable file, and a session into a fresh state dir.
    let record = env.write("work/run.record", "old");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let out = env.run(Some(&mock), &["exec", "--record", "run.record", "x"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(mode(&record), 0o600);
    let state = env.path("state/hrns");
    let sessions = state.join("sessions");
    assert_eq!(mode(&state), 0o700);
    assert_eq!(mode(&sessions), 0o700);
    let files: Vec<_> = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1);
    assert_eq!(mode(&files[0]), 0o600);
    // A state directory left 0755 by an older hrns is tightened; a resumed file too.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&sessions, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&files[0], std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let out = env.run(Some(&mock), &["exec", "--continue", "y"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(mode(&files[0]), 0o600);
    let out = env.run(Some(&mock), &["exec", "z"]);
    assert_eq!(mode(&sessions), 0o700, "{}", stderr(&out));
}

/// Window title, then clear screen: what a hostile file or answer would send.
const EVIL: &str = "\x1b]0;pwned-title\x07\x1b[2J";

#[test]
fn control_sequences_never_reach_stderr_and_piped_stdout_stays_exact() {
    let env = Env::new();
    env.write("work/evil.txt", &format!("{EVIL}first line of the file\n"));
    let answer = format!("The file says {EVIL}hello.");
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "read_file", r#"{"path":"evil.txt"}"#)]),
        Reply::text_answer(&answer),
        Reply::error(400, &format!("bad {EVIL}request")),
    ])
    .unwrap();
    let out = env.run(Some(&mock), &["exec", "read evil.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("first line of the file"), "{err}");
    assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err:?}");
    // Piped stdout is byte-exact: what the model wrote.
    assert_eq!(stdout(&out), format!("{answer}\n"));
    // A provider's error message on stderr.
    let out = env.run(Some(&mock), &["exec", "again"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("bad") && err.contains("request"), "{err}");
    assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err:?}");
}

#[test]
fn sessions_lists_a_hostile_cwd_and_first_message_without_control_sequences() {
    let env = Env::new();
    let dir = env.path(&format!("work/dir{EVIL}x"));
    std::fs::create_dir_all(&dir).unwrap();
    let mock = MockProvider::start([Reply::text_answer("ok")]).unwrap();
    let out = env
        .cmd(Some(&mock))
        .current_dir(&dir)
        .args(["exec", &format!("question {EVIL}\u{9b}31m\u{85}here")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = env
        .cmd(None)
        .current_dir(&dir)
        .arg("sessions")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let list = stdout(&out);
    assert!(list.contains("question here"), "{list:?}");
    assert!(list.contains("dirx"), "{list:?}");
    assert!(
        !list.chars().any(|c| c.is_control() && c != '\n'),
        "{list:?}"
    );
}

const HDR: &str = "azure-header-SECRET-98765";

/// Every file under `dir`, as text.
fn all_files(dir: &std::path::Path) -> String {
    let mut text = String::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                text.push_str(&all_files(&p));
            } else {
                text.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
            }
        }
    }
    text
}

fn assert_clean(what: &str, text: &str) {
    for secret in [KEY, HDR, &KEY[..12], &HDR[..12], &KEY[KEY.len() - 12..]] {
        assert!(!text.contains(secret), "{what} holds `{secret}`:\n{text}");
    }
}

#[test]
fn secrets_are_redacted_everywhere_hrns_writes() {
    let env = Env::new();
    let error_fields = serde_json::json!({"error": {
        "message": format!("Incorrect API key provided: {KEY}"),
        "type": format!("type-{HDR}"),
        "code": format!("code-{KEY}"),
        "param": format!("param-{HDR}"),
        "extra_field": KEY,
    }});
    // A plain-text error whose 400-character cut falls inside the key.
    let cut_body = format!("{}{KEY}", "x".repeat(390));
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "read_file", r#"{"path":".env"}"#)]),
        Reply::text_answer(&format!("The key is {KEY} and the header {HDR}.")),
        Reply::json(400, error_fields),
        Reply::raw(
            401,
            &[("content-type", "text/plain")],
            cut_body.into_bytes(),
        ),
    ])
    .unwrap();
    let config = format!(
        r#"{{"providers": {{"mock": {{"url": "{}", "key": "{KEY}", "model": "mock-model", "skipVerify": false,
            "headers": {{"api-key": "{HDR}"}}}}}}}}"#,
        mock.base_url()
    );
    env.write("config/hrns/config.json", &config);
    env.write("work/.env", &format!("OPENAI_API_KEY={KEY}\nAZURE={HDR}\n"));

    let record = env.path("work/run.record");
    let run1 = env.run(None, &["exec", "--record", "run.record", "read .env"]);
    assert_eq!(run1.status.code(), Some(0), "{}", stderr(&run1));
    assert!(
        stdout(&run1).contains("The key is [redacted]"),
        "{}",
        stdout(&run1)
    );
    // The tool output reached the model without them.
    let sent = mock.requests()[1].body_str().into_owned();
    assert!(sent.contains("OPENAI_API_KEY=[redacted]"), "{sent}");
    assert_clean("the request to the model", &sent);

    let run2 = env.run(None, &["exec", "--json", "x"]);
    assert_eq!(run2.status.code(), Some(1));
    let failed = json_lines(&run2).pop().unwrap();
    assert_eq!(failed["type"], "turn_failed");
    assert_eq!(
        failed["error"]["error"]["type"], "type-[redacted]",
        "{failed}"
    );

    let run3 = env.run(None, &["exec", "y"]);
    assert_eq!(run3.status.code(), Some(1));
    assert!(stderr(&run3).contains("xxxx"), "{}", stderr(&run3));
    assert!(stderr(&run3).contains("[redacted]"), "{}", stderr(&run3));

    for (name, out) in [("run1", &run1), ("run2", &run2), ("run3", &run3)] {
        assert_clean(&format!("{name} stdout"), &stdout(out));
        assert_clean(&format!("{name} stderr"), &stderr(out));
    }
    assert_clean("the record", &std::fs::read_to_string(&record).unwrap());
    assert_clean("the sessions", &all_files(&env.path("state")));
    let listed = env.run(None, &["sessions"]);
    let mut exports = String::new();
    for line in stdout(&listed).lines() {
        let id = line.split_whitespace().next().unwrap_or_default();
        for format in ["json", "md"] {
            let export = env.run(None, &["sessions", "export", id, "--format", format]);
            exports.push_str(&stdout(&export));
        }
    }
    assert!(
        exports.contains("read .env") && exports.contains("[redacted]"),
        "{exports}"
    );
    assert_clean("the exports", &exports);
}

#[test]
fn library_polish_no_placeholder_url_and_examples_read_the_clis_variables() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    for manifest in [
        "Cargo.toml",
        "core/Cargo.toml",
        "driver-blocking/Cargo.toml",
        "driver-tokio/Cargo.toml",
        "cli/Cargo.toml",
    ] {
        let text = std::fs::read_to_string(root.join(manifest)).unwrap();
        assert!(!text.contains("example.invalid"), "{manifest}");
    }
    let example =
        std::fs::read_to_string(root.join("driver-blocking/examples/one_shot.rs")).unwrap();
    let lib = std::fs::read_to_string(root.join("driver-blocking/src/lib.rs")).unwrap();
    for text in [&example, &lib] {
        assert!(!text.contains("HRNS_BASE_URL") && !text.contains("HRNS_API_KEY"));
        assert!(text.contains("OPENAI_BASE_URL") && text.contains("HRNS_MODEL"));
    }
    assert!(
        lib.contains("```no_run"),
        "the crate root has a compiling example"
    );
}

#[test]
fn the_oversized_event_error_suggests_no_missing_option() {
    let env = Env::new();
    let huge = format!("data: {}\n\n", "x".repeat(17 * 1024 * 1024));
    let mock = MockProvider::start([Reply::sse_raw(huge.into_bytes())]).unwrap();
    let out = env.run(Some(&mock), &["exec", "x"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("byte limit"), "{err}");
    assert!(
        !err.contains("raise") && !err.contains("can be raised"),
        "{err}"
    );
}

#[test]
fn unreadable_skill_and_agent_files_are_reported_with_their_path() {
    let env = Env::new();
    let skills = env.work().join(".agents/skills");
    let agents = env.work().join(".hrns/agents");
    for d in ["fifo", "dir", "loop", "good"] {
        std::fs::create_dir_all(skills.join(d)).unwrap();
    }
    std::fs::create_dir_all(agents.join("dev")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(skills.join("fifo/SKILL.md"))
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::create_dir_all(skills.join("dir/SKILL.md")).unwrap();
    std::os::unix::fs::symlink("SKILL.md", skills.join("loop/SKILL.md")).unwrap();
    std::fs::write(
        skills.join("good/SKILL.md"),
        "---\nname: good\ndescription: works\n---\nbody\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("/dev/zero", agents.join("dev/AGENT.md")).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let mut cmd = env.cmd(None);
    std::thread::spawn(move || {
        let out = cmd.arg("skills").output().unwrap();
        let _ = tx.send(out);
    });
    let out = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("hrns skills did not block on the FIFO");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("good"), "{}", stdout(&out));
    let err = stderr(&out);
    for bad in ["fifo/SKILL.md", "dir/SKILL.md", "loop/SKILL.md"] {
        assert!(err.contains(bad), "{bad} not reported:\n{err}");
    }
    let out = env.run(None, &["agents"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("dev/AGENT.md"), "{}", stderr(&out));
}

#[test]
fn a_run_that_failed_before_any_answer_is_not_saved() {
    let env = Env::new();
    let mock =
        MockProvider::start([Reply::error(401, "bad key"), Reply::text_answer("ok")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "x"]);
    assert_eq!(out.status.code(), Some(1));
    let sessions = env.path("state/hrns/sessions");
    let count = || std::fs::read_dir(&sessions).map(|d| d.count()).unwrap_or(0);
    assert_eq!(count(), 0, "nothing saved");
    let out = env.run(Some(&mock), &["exec", "y"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(count(), 1, "an answered run is saved");
}

#[test]
fn sessions_lists_local_times_and_marks_the_one_continue_opens() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("a"), Reply::text_answer("b")]).unwrap();
    for (i, prompt) in ["older question", "newer question"].into_iter().enumerate() {
        if i > 0 {
            // Session files are named by the second they started: keep the order certain.
            std::thread::sleep(std::time::Duration::from_millis(1100));
        }
        let out = env.run(Some(&mock), &["exec", prompt]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let out = env
        .cmd(None)
        .env("TZ", "XYZ-3")
        .arg("sessions")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let list = stdout(&out);
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    assert!(lines[0].contains("newer question") && lines[0].ends_with("← hrns --continue"));
    assert!(lines[1].contains("older question") && !lines[1].contains("--continue"));
    for line in lines {
        let id = line.split_whitespace().next().unwrap();
        let file = std::fs::read_dir(env.path("state/hrns/sessions"))
            .unwrap()
            .flatten()
            .find(|e| e.file_name().to_string_lossy().contains(id))
            .unwrap();
        let text = std::fs::read_to_string(file.path()).unwrap();
        let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let started: jiff::Timestamp = header["started"].as_str().unwrap().parse().unwrap();
        let local = started
            .to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(3)))
            .strftime("%Y-%m-%d %H:%M")
            .to_string();
        assert!(line.starts_with(&format!("{id}  {local}  ")), "{line}");
    }
    // From another directory, none of them is the one to continue.
    std::fs::create_dir_all(env.path("elsewhere")).unwrap();
    let out = env
        .cmd(None)
        .current_dir(env.path("elsewhere"))
        .arg("sessions")
        .output()
        .unwrap();
    assert!(!stdout(&out).contains("--continue"), "{}", stdout(&out));
}
