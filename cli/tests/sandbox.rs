//! The command sandbox end to end: `hrns exec` against the scripted provider, the model's
//! `run_command` under each policy. These run on the CI machine (Linux with Landlock) and are
//! never skipped: a machine without Landlock fails them, as it should.

mod common;

use common::{Env, KEY, stderr};
use hrns_blocking::mock::{MockProvider, Reply};
use std::net::TcpListener;
use std::process::Output;

/// Runs `hrns exec ARGS` where the model calls `run_command` with `command` once; returns the
/// output and the tool result the model received.
fn run(env: &Env, args: &[&str], command: &str, vars: &[(&str, &str)]) -> (Output, String) {
    let call = serde_json::json!({ "command": command }).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", &call)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let mut cmd = env.cmd(Some(&mock));
    cmd.arg("exec").args(args).arg("go");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let requests = mock.requests();
    let result = requests
        .get(1)
        .map(|r| {
            let body = r.json();
            let messages = body["messages"].as_array().unwrap().clone();
            let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
            tool["content"].as_str().unwrap().to_owned()
        })
        .unwrap_or_else(|| panic!("no second request; stderr: {}", stderr(&out)));
    (out, result)
}

/// A loopback server and a command that connects to it.
fn server() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!(
        "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=5); print(\"connected\")'"
    );
    (listener, command)
}

fn accepted(listener: &TcpListener) -> bool {
    listener.accept().is_ok()
}

#[test]
fn workspace_write_is_the_default_writes_inside_and_to_tmpdir_only() {
    let env = Env::outside_tmp();
    std::fs::create_dir_all(env.path("tmp")).unwrap();
    let tmp = env.path("tmp");
    let tmp = tmp.to_str().unwrap();
    let vars = [("TMPDIR", tmp)];

    let (out, result) = run(
        &env,
        &[],
        "echo in > inside.txt && echo t > \"$TMPDIR/t.txt\"",
        &vars,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(result.starts_with("exit code: 0"), "{result}");
    assert!(env.path("work/inside.txt").exists());
    assert!(env.path("tmp/t.txt").exists());

    let (_, result) = run(&env, &[], "echo out > ../outside.txt", &vars);
    assert!(!env.path("outside.txt").exists(), "the write escaped");
    // Read-only mounts answer before Landlock does, where the machine has namespaces.
    assert!(
        result.contains("Read-only file system") || result.contains("Permission denied"),
        "{result}"
    );
    assert!(
        result.contains("hrns: this command ran in the sandbox workspace-write"),
        "{result}"
    );

    let (_, result) = run(&env, &[], "echo out > \"$HOME/dotfile\"", &vars);
    assert!(!env.path("home/dotfile").exists(), "{result}");
}

#[test]
fn workspace_write_denies_network_but_not_unix_sockets() {
    let env = Env::outside_tmp();
    let (listener, command) = server();
    let (_, result) = run(&env, &[], &command, &[]);
    assert!(
        !accepted(&listener),
        "the connection went through: {result}"
    );
    assert!(result.contains("Operation not permitted"), "{result}");
    assert!(result.contains("no network"), "{result}");
    let unix =
        "python3 -c 'import socket; a, b = socket.socketpair(); a.send(b\"u\"); print(b.recv(1))'";
    let (_, result) = run(&env, &[], unix, &[]);
    assert!(result.starts_with("exit code: 0"), "{result}");
}

#[test]
fn children_inherit_the_restrictions() {
    let env = Env::outside_tmp();
    let (listener, connect) = server();
    let command = format!(
        "sh -c 'echo child > ../child.txt'; (sleep 0.1; echo bg > ../bg.txt) & wait; sh -c '{}'",
        connect.replace('\'', "'\\''")
    );
    let (_, result) = run(&env, &[], &command, &[]);
    assert!(!env.path("child.txt").exists(), "{result}");
    assert!(!env.path("bg.txt").exists(), "{result}");
    assert!(!accepted(&listener), "{result}");
}

#[test]
fn read_only_writes_nowhere() {
    let env = Env::outside_tmp();
    let (out, result) = run(
        &env,
        &["--sandbox", "read-only"],
        "echo x > inside.txt",
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!env.path("work/inside.txt").exists(), "{result}");
    assert!(result.contains("sandbox read-only"), "{result}");
    let (_, result) = run(
        &env,
        &["--sandbox", "read-only"],
        "cat /etc/hostname >/dev/null && echo read",
        &[],
    );
    assert!(result.contains("read"), "reads work: {result}");
}

#[test]
fn danger_full_access_is_todays_behaviour_and_says_so() {
    let env = Env::outside_tmp();
    let (listener, connect) = server();
    let args = ["--sandbox", "danger-full-access"];
    let (out, result) = run(&env, &args, "echo out > ../outside.txt", &[]);
    assert!(env.path("outside.txt").exists(), "{result}");
    assert!(
        stderr(&out).contains("danger-full-access"),
        "{}",
        stderr(&out)
    );
    let (_, result) = run(&env, &args, &connect, &[]);
    assert!(result.contains("connected"), "{result}");
    assert!(accepted(&listener));
}

#[test]
fn the_config_sets_the_policy_globally_and_per_project_and_the_flag_wins() {
    let env = Env::outside_tmp();
    let work = env.work().canonicalize().unwrap();
    let config = format!(
        r#"{{"sandbox": "danger-full-access", "projects": {{"{}": {{"sandbox": "read-only"}}}}}}"#,
        work.display()
    );
    let config: serde_json::Value = serde_json::from_str(&config).unwrap();
    env.write("config/hrns/config.json", &config.to_string());
    let (_, result) = run(&env, &[], "echo x > inside.txt", &[]);
    assert!(!env.path("work/inside.txt").exists(), "{result}");
    assert!(result.contains("sandbox read-only"), "{result}");
    let (_, result) = run(
        &env,
        &["--sandbox", "workspace-write"],
        "echo x > inside.txt",
        &[],
    );
    assert!(env.path("work/inside.txt").exists(), "{result}");

    env.write("config/hrns/config.json", r#"{"sandbox": "nonsense"}"#);
    let mock = MockProvider::start([Reply::text_answer("x")]).unwrap();
    let out = env.run(Some(&mock), &["exec", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("danger-full-access"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn without_landlock_confined_runs_are_refused_naming_the_way_out() {
    let env = Env::outside_tmp();
    let vars = [("HRNS_SANDBOX_UNAVAILABLE", "1")];
    let (out, result) = run(&env, &[], "echo x > inside.txt", &vars);
    assert!(
        !env.path("work/inside.txt").exists(),
        "ran unconfined: {result}"
    );
    assert!(result.contains("refused"), "{result}");
    assert!(result.contains("--sandbox danger-full-access"), "{result}");
    let err = stderr(&out);
    assert_eq!(
        err.matches("hrns: warning: the sandbox").count(),
        1,
        "{err}"
    );
    assert!(err.contains("--sandbox danger-full-access"), "{err}");

    // The launcher itself refuses too.
    let out = env
        .cmd(None)
        .args([
            "__sandbox",
            "--mode",
            "read-only",
            "--network",
            "denied",
            "--",
            "true",
        ])
        .env("HRNS_SANDBOX_UNAVAILABLE", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(126));
    assert!(
        stderr(&out).contains("--sandbox danger-full-access"),
        "{}",
        stderr(&out)
    );

    // danger-full-access still runs.
    let (_, result) = run(
        &env,
        &["--sandbox", "danger-full-access"],
        "echo x > inside.txt",
        &vars,
    );
    assert!(env.path("work/inside.txt").exists(), "{result}");
}

#[test]
fn sandbox_check_reports_support() {
    let env = Env::outside_tmp();
    let out = env.run(None, &["sandbox", "--check"]);
    let text = common::stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.contains("sandbox: supported"), "{text}");
    assert!(text.contains("outside are blocked"), "{text}");
    assert!(text.contains("sockets are blocked"), "{text}");
    let out = env
        .cmd(None)
        .args(["sandbox", "--check"])
        .env("HRNS_SANDBOX_UNAVAILABLE", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(common::stdout(&out).contains("not available"));
}

#[test]
fn commands_do_not_see_secret_variables() {
    let env = Env::outside_tmp();
    let vars = [
        ("GITHUB_TOKEN", "ghp-secret-1"),
        ("AWS_SECRET_ACCESS_KEY", "aws-secret-2"),
        ("MY_PASSWD", "pw-3"),
        ("PLAIN_SETTING", "visible-4"),
        ("ALLOWED_TOKEN", "allowed-5"),
    ];
    env.write(
        "config/hrns/config.json",
        r#"{"envAllow": ["ALLOWED_TOKEN"]}"#,
    );
    let (_, result) = run(&env, &[], "env", &vars);
    for hidden in ["ghp-secret-1", "aws-secret-2", "pw-3", KEY] {
        assert!(!result.contains(hidden), "{hidden} leaked: {result}");
    }
    assert!(result.contains("visible-4"), "{result}");
    assert!(result.contains("allowed-5"), "{result}");
}

#[test]
fn sigterm_during_a_command_leaves_no_survivors_and_saves_the_session() {
    use std::time::{Duration, Instant};
    let env = Env::outside_tmp();
    let command = "python3 -c 'import os, time; os.setsid(); \
        open(\"escaped.pid\", \"w\").write(str(os.getpid())); time.sleep(1000)' & \
        sleep 1000 & echo $! > bg.pid; wait";
    let call = serde_json::json!({ "command": command }).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", &call)]),
        Reply::text_answer("never"),
    ])
    .unwrap();
    let child = env
        .cmd(Some(&mock))
        .args(["exec", "go"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid_of = |name: &str| -> Option<i32> {
        std::fs::read_to_string(env.path("work").join(name))
            .ok()
            .and_then(|t| t.trim().parse().ok())
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let (escaped, bg) = loop {
        if let (Some(a), Some(b)) = (pid_of("escaped.pid"), pid_of("bg.pid")) {
            break (a, b);
        }
        assert!(Instant::now() < deadline, "the command did not start");
        std::thread::sleep(Duration::from_millis(20));
    };
    let hrns = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(hrns, rustix::process::Signal::TERM).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    for pid in [escaped, bg] {
        let gone = Instant::now() + Duration::from_secs(5);
        while alive(pid) && Instant::now() < gone {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(pid), "process {pid} survived SIGTERM");
    }
    let sessions: Vec<_> = std::fs::read_dir(env.path("state/hrns/sessions"))
        .map(|d| d.flatten().collect())
        .unwrap_or_default();
    assert_eq!(sessions.len(), 1, "the session was saved");
}

/// Whether a process exists and is not a zombie.
fn alive(pid: i32) -> bool {
    let Some(p) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    let exists = rustix::process::test_kill_process(p).is_ok();
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'))
    });
    exists && !zombie
}

/// `hrns exec ARGS` where the model calls `web_fetch` on `url`; the tool result.
fn fetch(env: &Env, url: &str) -> String {
    let call = serde_json::json!({ "url": url }).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "web_fetch", &call)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let out = env.run(Some(&mock), &["exec", "go"]);
    let requests = mock.requests();
    let body = requests
        .get(1)
        .unwrap_or_else(|| panic!("no second request: {}", stderr(&out)))
        .json();
    let messages = body["messages"].as_array().unwrap().clone();
    let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    tool["content"].as_str().unwrap().to_owned()
}

#[test]
fn web_fetch_refuses_loopback_unless_the_config_allows_it() {
    use std::io::{Read, Write};
    let env = Env::new();
    // With the network on, web_fetch is not held by the sandbox's rule (sandbox_policy.rs).
    env.write("config/hrns/config.json", r#"{"sandboxNetwork": true}"#);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/page", listener.local_addr().unwrap());
    let result = fetch(&env, &url);
    assert!(result.contains("loopback"), "{result}");
    assert!(result.contains("webFetchAllowPrivate"), "{result}");

    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut buf = [0u8; 4096];
        let _ = conn.read(&mut buf);
        let body = "hello from loopback";
        let _ = write!(
            conn,
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
    });
    env.write(
        "config/hrns/config.json",
        r#"{"sandboxNetwork": true, "webFetchAllowPrivate": true}"#,
    );
    let result = fetch(&env, &url);
    assert!(result.contains("hello from loopback"), "{result}");
    server.join().unwrap();
}

/// `hrns exec` where the model calls `tool` with `args`; the tool result.
fn call_tool(env: &Env, tool: &str, args: serde_json::Value) -> String {
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", tool, &args.to_string())]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let out = env.run(Some(&mock), &["exec", "go"]);
    let body = mock
        .requests()
        .get(1)
        .unwrap_or_else(|| panic!("no second request: {}", stderr(&out)))
        .json();
    let messages = body["messages"].as_array().unwrap().clone();
    let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    tool["content"].as_str().unwrap().to_owned()
}

#[test]
fn the_file_tools_do_not_touch_hrns_config_and_state() {
    let env = Env::new();
    let config = env.write("config/hrns/config.json", r#"{"envAllow": []}"#);
    env.write("state/hrns/sessions/old.jsonl", "{}\n");
    let config = config.to_str().unwrap();
    let result = call_tool(&env, "read_file", serde_json::json!({ "path": config }));
    assert!(result.contains("refused"), "{result}");
    assert!(
        result.contains("hrns's own configuration or state"),
        "{result}"
    );
    // Through a link in the workspace, too.
    std::os::unix::fs::symlink(config, env.path("work/link.json")).unwrap();
    let result = call_tool(
        &env,
        "read_file",
        serde_json::json!({ "path": "link.json" }),
    );
    assert!(result.contains("refused"), "{result}");
    let state = env.path("state/hrns");
    let result = call_tool(
        &env,
        "list_files",
        serde_json::json!({ "dir": state.to_str().unwrap() }),
    );
    assert!(result.contains("refused"), "{result}");
    // Listing a directory above them leaves them out.
    let root = env.path("");
    let result = call_tool(
        &env,
        "list_files",
        serde_json::json!({ "dir": root.to_str().unwrap() }),
    );
    assert!(!result.contains("config.json"), "{result}");
    assert!(!result.contains("old.jsonl"), "{result}");
    assert!(result.contains("link.json"), "{result}");
}
