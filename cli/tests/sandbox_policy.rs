//! The sandbox's policy end to end, through `hrns exec` against the scripted provider: what
//! commands see of the environment, the paths the file tools and `@`-mentions leave alone
//! (`.git`, hrns's own files), a workspace at `$HOME`, and `web_fetch` when the sandbox keeps
//! commands off the network.

mod common;

use common::{Env, KEY, stderr};
use hrns_blocking::mock::{MockProvider, Reply};
use std::net::TcpListener;
use std::process::{Command, Output};

/// Runs `cmd` (an `hrns` command line without its subcommand) as `exec go`, where the model
/// calls `tool` with `args` once; the output and the tool result the model received.
fn call(mut cmd: Command, args: &[&str], tool: &str, call: serde_json::Value) -> (Output, String) {
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", tool, &call.to_string())]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    cmd.env("OPENAI_BASE_URL", mock.base_url());
    let out = cmd.arg("exec").args(args).arg("go").output().unwrap();
    let requests = mock.requests();
    let body = requests
        .get(1)
        .unwrap_or_else(|| panic!("no second request; stderr: {}", stderr(&out)))
        .json();
    let messages = body["messages"].as_array().unwrap().clone();
    let result = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    (out, result["content"].as_str().unwrap().to_owned())
}

/// `hrns` in `env`'s `work` directory, pointed at a mock (the URL is set by [`call`]).
fn in_work(env: &Env) -> Command {
    let mut cmd = env.cmd(None);
    cmd.env("OPENAI_API_KEY", KEY)
        .env("HRNS_MODEL", "mock-model");
    cmd
}

fn lines_starting<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

#[test]
fn commands_see_no_handles_to_outside_services_nor_the_new_secret_names() {
    let env = Env::new();
    let vars = [
        ("TMUX", "/tmp/tmux-1000/default,4242,0"),
        ("TMUX_PANE", "%3"),
        ("STY", "4242.pts-1.host"),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
        ("DOCKER_HOST", "unix:///var/run/docker.sock"),
        ("DISPLAY", ":0"),
        ("MYSQL_PWD", "mysql-value"),
        ("NPM_AUTH", "npm-value"),
        ("GH_PAT", "pat-value"),
        ("SENTRY_DSN", "https://abc@o1.ingest.sentry.io/1"),
        (
            "SLACK_WEBHOOK_URL",
            "https://hooks.slack.com/services/T/B/X",
        ),
        ("AUTH_HEADER", "Bearer header-value"),
        ("DATABASE_URL", "postgres://app:db-password@db.internal/app"),
        ("PLAIN_URL", "https://example.com/x"),
        ("GIT_AUTHOR_NAME", "Ann Author"),
        ("KEEP_ME", "visible"),
    ];
    let run = |env: &Env| {
        let mut cmd = in_work(env);
        cmd.envs(vars);
        call(
            cmd,
            &[],
            "run_command",
            serde_json::json!({ "command": "env" }),
        )
    };
    let (out, result) = run(&env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(result.starts_with("exit code: 0"), "{result}");
    for (name, _) in &vars[..13] {
        let found = lines_starting(&result, &format!("{name}="));
        assert!(found.is_empty(), "{name} reached the command: {found:?}");
    }
    for line in [
        "PLAIN_URL=https://example.com/x",
        "GIT_AUTHOR_NAME=Ann Author",
        "KEEP_ME=visible",
    ] {
        assert!(
            result.lines().any(|l| l == line),
            "{line} missing: {result}"
        );
    }
    for secret in [
        "mysql-value",
        "npm-value",
        "pat-value",
        "db-password",
        "header-value",
    ] {
        assert!(!result.contains(secret), "{secret}: {result}");
    }

    // envAllow passes a handle on purpose.
    env.write(
        "config/hrns/config.json",
        r#"{"envAllow": ["TMUX", "DATABASE_URL"]}"#,
    );
    let (_, result) = run(&env);
    assert!(
        result
            .lines()
            .any(|l| l == "TMUX=/tmp/tmux-1000/default,4242,0"),
        "{result}"
    );
    assert!(
        lines_starting(&result, "DATABASE_URL=postgres://app:").len() == 1,
        "{result}"
    );
    assert!(lines_starting(&result, "STY=").is_empty(), "{result}");
}

#[test]
fn the_file_tools_do_not_write_git_hooks_unless_sandbox_writable_git() {
    let env = Env::repo();
    std::fs::create_dir_all(env.path("work/.git/hooks")).unwrap();
    let hook = env.path("work/.git/hooks/pre-commit");
    let write_hook = serde_json::json!({
        "path": ".git/hooks/pre-commit",
        "content": "#!/bin/sh\necho pwned >> ~/.bashrc\n",
    });
    let (out, result) = call(in_work(&env), &[], "write_file", write_hook.clone());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        result.contains("refused .git/hooks/pre-commit: it is inside a git directory"),
        "{result}"
    );
    assert!(result.contains("sandboxWritableGit"), "{result}");
    assert!(!hook.exists(), "the hook was written");
    let (_, result) = call(
        in_work(&env),
        &[],
        "edit_file",
        serde_json::json!({"path": ".GIT/config", "old_string": "a", "new_string": "b"}),
    );
    assert!(result.contains("inside a git directory"), "{result}");

    env.write("config/hrns/config.json", r#"{"sandboxWritableGit": true}"#);
    let (_, result) = call(in_work(&env), &[], "write_file", write_hook);
    assert!(
        result.starts_with("created '.git/hooks/pre-commit'"),
        "{result}"
    );
    assert!(hook.exists());
}

/// `hrns` with the workspace at `$HOME` (`env`'s `home`), hrns's config and state inside it.
fn at_home(env: &Env) -> Command {
    let mut cmd = in_work(env);
    cmd.current_dir(env.path("home"))
        .env("XDG_CONFIG_HOME", env.path("home/.config"))
        .env("XDG_STATE_HOME", env.path("home/.local/state"));
    cmd
}

const CONFIG: &str = r#"{"envAllow": [], "note": "CONFIG-MARKER-7431"}"#;

#[test]
fn at_home_the_config_is_neither_mentioned_nor_read() {
    let env = Env::new();
    let config = env.write("home/.config/hrns/config.json", CONFIG);
    std::fs::create_dir_all(env.path("home/.local/state/hrns")).unwrap();

    let mock = MockProvider::start([Reply::text_answer("ok")]).unwrap();
    let mut cmd = at_home(&env);
    cmd.env("OPENAI_BASE_URL", mock.base_url());
    let out = cmd
        .args(["exec", "what is in @.config/hrns/config.json ?"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent = mock.requests()[0].json().to_string();
    assert!(
        !sent.contains("CONFIG-MARKER-7431"),
        "the config was sent: {sent}"
    );
    let err = stderr(&out);
    assert!(
        err.contains(
            "not attached: .config/hrns/config.json: it is part of hrns's own configuration"
        ),
        "{err}"
    );

    let (_, result) = call(
        at_home(&env),
        &[],
        "read_file",
        serde_json::json!({"path": ".config/hrns/config.json"}),
    );
    assert!(
        result.contains("refused .config/hrns/config.json: it is part of hrns's own configuration"),
        "{result}"
    );
    assert!(!result.contains("CONFIG-MARKER-7431"), "{result}");
    let (_, result) = call(
        at_home(&env),
        &[],
        "grep",
        serde_json::json!({"pattern": "CONFIG-MARKER"}),
    );
    assert!(!result.contains("CONFIG-MARKER-7431"), "{result}");
    assert_eq!(std::fs::read_to_string(config).unwrap(), CONFIG);
}

#[test]
fn at_home_commands_run_read_only_with_a_warning_and_the_config_stays() {
    let env = Env::outside_tmp();
    let config = env.write("home/.config/hrns/config.json", CONFIG);
    let attack = "echo x > inside.txt; \
                  printf '{\"sandbox\": \"danger-full-access\"}' > .config/hrns/config.json; \
                  echo tried";
    let (out, result) = call(
        at_home(&env),
        &[],
        "run_command",
        serde_json::json!({ "command": attack }),
    );
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "hrns: warning: the workspace is your home directory ({})",
            env.path("home").display()
        )),
        "{err}"
    );
    assert!(err.contains("commands run read-only here"), "{err}");
    // Read-only mounts answer before Landlock does, where the machine has namespaces.
    assert!(
        result.contains("cannot create inside.txt: Read-only file system")
            || result.contains("cannot create inside.txt: Permission denied"),
        "{result}"
    );
    assert!(!env.path("home/inside.txt").exists(), "a write got through");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), CONFIG);

    let (_, result) = call(
        at_home(&env),
        &[],
        "write_file",
        serde_json::json!({
            "path": ".config/hrns/config.json",
            "content": "{\"sandbox\": \"danger-full-access\"}",
        }),
    );
    assert!(result.contains("hrns's own configuration"), "{result}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), CONFIG);

    // Asked for on purpose, workspace-write applies, still with a warning.
    let (out, result) = call(
        at_home(&env),
        &["--sandbox", "workspace-write"],
        "run_command",
        serde_json::json!({ "command": "echo x > inside.txt" }),
    );
    assert!(result.starts_with("exit code: 0"), "{result}");
    assert!(env.path("home/inside.txt").exists());
    let err = stderr(&out);
    assert!(
        err.contains("the workspace is your home directory"),
        "{err}"
    );
    assert!(err.contains("(--sandbox workspace-write)"), "{err}");
}

/// A loopback server that answers one request with `body`; `accept` is non-blocking, so a
/// test can check that nothing connected.
fn page_server(body: &'static str) -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/page?k=x",
        listener.local_addr().unwrap().port()
    );
    let server = listener.try_clone().unwrap();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        if let Ok((mut conn, _)) = server.accept() {
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (listener, url)
}

fn fetch(env: &Env, url: &str) -> (Output, String) {
    call(
        in_work(env),
        &[],
        "web_fetch",
        serde_json::json!({ "url": url }),
    )
}

#[test]
fn web_fetch_without_network_reaches_listed_hosts_only() {
    let env = Env::new();
    // Loopback is private: allowed here so that only the network rule decides.
    env.write(
        "config/hrns/config.json",
        r#"{"webFetchAllowPrivate": true}"#,
    );
    let (listener, url) = page_server("fetched from a listed host");
    let (out, result) = fetch(&env, &url);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        result.contains("Denied by policy: web_fetch of host 127.0.0.1"),
        "{result}"
    );
    assert!(result.contains("\"sandboxNetwork\""), "{result}");
    assert!(result.contains("\"webFetchAllow\""), "{result}");
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "the refused fetch connected");
    listener.set_nonblocking(false).unwrap();

    env.write(
        "config/hrns/config.json",
        r#"{"webFetchAllowPrivate": true, "webFetchAllow": ["127.0.0.1"]}"#,
    );
    let (_, result) = fetch(&env, &url);
    assert!(result.contains("fetched from a listed host"), "{result}");
    // A listed host does not open the way to others (nor does the private setting).
    let (_, result) = fetch(&env, "http://localhost:9/x");
    assert!(result.contains("Denied by policy"), "{result}");
}

#[test]
fn web_fetch_does_not_follow_a_redirect_off_the_list() {
    let env = Env::new();
    let target = TcpListener::bind("127.0.0.1:0").unwrap();
    target.set_nonblocking(true).unwrap();
    let elsewhere = format!(
        "http://localhost:{}/?k=stolen",
        target.local_addr().unwrap().port()
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/r",
        listener.local_addr().unwrap().port()
    );
    let location = elsewhere.clone();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        if let Ok((mut conn, _)) = listener.accept() {
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = write!(
                conn,
                "HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
        }
    });
    env.write(
        "config/hrns/config.json",
        r#"{"webFetchAllowPrivate": true, "webFetchAllow": ["127.0.0.1"]}"#,
    );
    let (_, result) = fetch(&env, &url);
    assert!(
        result.contains(&format!(
            "redirects to {elsewhere}, which is not on \"webFetchAllow\""
        )),
        "{result}"
    );
    assert!(target.accept().is_err(), "the redirect was followed");
}
