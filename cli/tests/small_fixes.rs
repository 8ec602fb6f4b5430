//! Smaller behaviours of `hrns`, end to end against the mock provider: each test here failed
//! before its fix (issue 31, "the smaller ones").

mod common;

use common::{Env, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply};

#[test]
fn a_base_url_with_a_query_string_keeps_it_after_the_path() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("hi from azure")]).unwrap();
    let base = format!("{}?api-version=2024-06-01", mock.base_url());
    let out = env
        .cmd(Some(&mock))
        .env("OPENAI_BASE_URL", &base)
        .args(["exec", "hello"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("hi from azure"));
    let chat: Vec<String> = mock
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.path)
        .collect();
    assert_eq!(chat, ["/v1/chat/completions?api-version=2024-06-01"]);
    let out = env
        .cmd(Some(&mock))
        .env("OPENAI_BASE_URL", &base)
        .arg("models")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let models: Vec<String> = mock.model_requests().into_iter().map(|r| r.path).collect();
    assert!(!models.is_empty());
    for path in models {
        assert_eq!(path, "/v1/models?api-version=2024-06-01");
    }
}

#[test]
fn mcp_approve_shows_what_it_approves_without_secrets() {
    let env = Env::new();
    let project = serde_json::json!({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@acme/files server", "--root=."],
                  "env": {"ACME_TOKEN": "tok-NEVERSHOWN-123"}},
        "search": {"url": "https://user:pa55-NEVERSHOWN@search.example/mcp?key=k-NEVERSHOWN",
                   "headers": {"Authorization": "Bearer NEVERSHOWN-bearer"}},
        "broken": {"args": ["x"]}
    }});
    env.write("work/.mcp.json", &project.to_string());
    let out = env.run(None, &["mcp", "approve"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(text.contains(".mcp.json starts 2 MCP servers:"), "{text}");
    assert!(
        text.contains("  files: runs npx -y '@acme/files server' '--root=.' (sets ACME_TOKEN)"),
        "{text}"
    );
    assert!(
        text.contains("  search: connects to https://")
            && text.contains("search.example/mcp")
            && text.contains("(headers Authorization)"),
        "{text}"
    );
    assert!(
        text.contains("not valid, so never started") && text.contains("broken"),
        "{text}"
    );
    assert!(text.contains("approved "), "{text}");
    assert!(
        !text.contains("NEVERSHOWN") && !stderr(&out).contains("NEVERSHOWN"),
        "{text}"
    );
}

/// Writes `config` as the config file and runs `hrns exec hi` with no provider behind it.
fn exec_with_config(env: &Env, config: &str) -> std::process::Output {
    env.write("config/hrns/config.json", config);
    env.run(None, &["exec", "hi"])
}

#[test]
fn config_errors_and_warnings_name_the_file() {
    let env = Env::new();
    let file = env.config_file().display().to_string();
    let url = r#""url": "http://127.0.0.1:9/v1", "model": "m""#;
    let cases = [
        (
            format!(r#"{{"providers": {{"p": {{{url}}}}}, "sandbox": 5}}"#),
            "sandbox in the config must be a string",
        ),
        (
            r#"{"providers": {"p": {"model": "m"}}}"#.to_owned(),
            "provider `p` has no url",
        ),
        (
            r#"{"providers": {"p": {"url": "ftp://x", "model": "m"}}}"#.to_owned(),
            "the base URL `ftp://x` of provider `p` is not an http:// or https:// URL",
        ),
        (
            format!(r#"{{"providers": {{"p": {{{url}, "keyEnv": "HRNS_TEST_UNSET"}}}}}}"#),
            "provider `p` takes its API key from the environment variable HRNS_TEST_UNSET",
        ),
        (
            format!(
                r#"{{"providers": {{"p": {{{url}}}}}, "retryAttempts": 1, "instructions": 5}}"#
            ),
            "the config's `instructions` is not valid",
        ),
        (
            format!(
                r#"{{"providers": {{"p": {{{url}}}}}, "retryAttempts": 1, "currentProvider": "gone"}}"#
            ),
            "the config's currentProvider `gone` is not a known provider",
        ),
    ];
    for (config, said) in cases {
        let out = exec_with_config(&env, &config);
        let err = stderr(&out);
        assert!(err.contains(&format!("{file}: {said}")), "{config}\n{err}");
    }
}

#[test]
fn a_relative_projects_key_warns_naming_the_key_and_the_file() {
    let env = Env::new();
    let file = env.config_file().display().to_string();
    let work = env.work().display().to_string();
    let config = serde_json::json!({
        "providers": {"p": {"url": "http://127.0.0.1:9/v1", "model": "m"}},
        "retryAttempts": 1,
        "projects": {"work": {"sandbox": "read-only"}, "~/src": {}, work.as_str(): {}}
    });
    let out = exec_with_config(&env, &config.to_string());
    let err = stderr(&out);
    for key in ["work", "~/src"] {
        assert!(
            err.contains(&format!(
                "hrns: warning: {file}: the projects key `{key}` is not an absolute path, so it never applies"
            )),
            "{err}"
        );
    }
    assert!(
        !err.contains(&format!("`{work}`")),
        "an absolute key is fine: {err}"
    );
}

mod pty;

#[test]
fn exec_reading_a_silent_stdin_says_so_on_a_terminal() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("prompt received")]).unwrap();
    let mut vars = common::pty_vars_for(&env, &mock);
    vars.push(("HRNS_BIN", env!("CARGO_BIN_EXE_hrns").to_owned()));
    // stdin is a pipe whose writer waits for a line from the terminal; stderr is the terminal.
    let script = r#"(read go; printf 'the prompt') | "$HRNS_BIN" exec"#;
    let t = std::time::Duration::from_secs(30);
    let mut p = pty::Pty::spawn("sh", &["-c", script], &env.work(), &vars, 24, 120);
    p.expect("reading the prompt from stdin…", t);
    p.send("go\r");
    p.expect("prompt received", t);
    assert_eq!(p.wait(t), 0);
    let sent = mock.chat_requests()[0].json();
    assert!(sent["messages"].to_string().contains("the prompt"));

    // Stdin that has its prompt ready gets no hint (a file here: ready for sure, as a pipe
    // that was written at once is).
    env.write("work/prompt.txt", "piped");
    let mock = MockProvider::start([Reply::text_answer("piped answer")]).unwrap();
    let mut vars = common::pty_vars_for(&env, &mock);
    vars.push(("HRNS_BIN", env!("CARGO_BIN_EXE_hrns").to_owned()));
    let script = r#""$HRNS_BIN" exec < prompt.txt"#;
    let mut p = pty::Pty::spawn("sh", &["-c", script], &env.work(), &vars, 24, 120);
    p.expect("piped answer", t);
    assert_eq!(p.wait(t), 0);
    assert!(!p.output().contains("reading the prompt"), "{}", p.output());
}

#[test]
fn exec_names_the_call_of_each_parallel_result() {
    let env = Env::new();
    env.write("work/a.txt", "alpha\n");
    env.write("work/b.txt", "beta\n");
    let calls = [
        ("call_a", "read_file", r#"{"path": "a.txt"}"#),
        ("call_b", "read_file", r#"{"path": "b.txt"}"#),
    ];
    let mock = MockProvider::start([
        Reply::tool_calls(&calls),
        Reply::text_answer("both read"),
        Reply::tool_calls(&calls),
        Reply::text_answer("both read"),
    ])
    .unwrap();
    let out = env.run(Some(&mock), &["exec", "read both"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // Both calls are shown before either result: a's result never comes right under its
    // call, so it is always labelled; b's is labelled unless it comes right under b's call
    // (the calls run in parallel, so either order happens).
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains('⎿') || l.contains('●'))
        .collect();
    let results: Vec<(usize, &str)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains('⎿'))
        .map(|(i, l)| (i, *l))
        .collect();
    assert_eq!(results.len(), 2, "{err}");
    let labelled = |file: &str| format!(r#"read_file {{"path": "{file}"}} · ok"#);
    assert!(
        results.iter().any(|(_, l)| l.contains(&labelled("a.txt"))),
        "{err}"
    );
    assert!(
        results.iter().any(|(i, l)| l.contains(&labelled("b.txt"))
            || (l.contains("ok: 1 beta")
                && i.checked_sub(1)
                    .is_some_and(|p| lines[p].contains(r#"{"path": "b.txt"}"#)))),
        "{err}"
    );
    // --json carries the call id on each result.
    let out = env.run(Some(&mock), &["exec", "--json", "read both"]);
    let ids: Vec<String> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "tool_result")
        .map(|v| v["id"].as_str().unwrap().to_owned())
        .collect();
    let mut ids = ids;
    ids.sort();
    assert_eq!(ids, ["call_a", "call_b"]);
}

/// The mode bits of `path`.
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// A config with a working MCP server that writes to its stderr and one that cannot start.
fn config_with_logging_servers(env: &Env, mock: &MockProvider) {
    let servers = serde_json::json!({"mcpServers": {
        "box": {"command": "python3",
                "args": [common::mcp_test_server(), "--stderr-env", "BOX_NOTE"],
                "env": {"BOX_NOTE": "box-started"}},
        "broken": {"command": "/nonexistent/server"}}});
    let servers = servers.to_string();
    env.config_with(mock, &format!(", {}", &servers[1..servers.len() - 1]));
}

#[test]
fn mcp_logs_are_owner_only() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("done")]).unwrap();
    config_with_logging_servers(&env, &mock);
    // An older hrns left the directory open to others.
    let logs = env.path("state/hrns/mcp-logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("box.log"), "from before\n").unwrap();
    for (path, m) in [(&logs, 0o755), (&logs.join("box.log"), 0o644)] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(m)).unwrap();
    }
    let out = env.run(None, &["exec", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("log: {}", logs.join("broken.log").display())),
        "{err}"
    );
    assert_eq!(mode(&logs), 0o700);
    for log in ["box.log", "broken.log"] {
        assert_eq!(mode(&logs.join(log)), 0o600, "{log}");
    }
    let log = std::fs::read_to_string(logs.join("box.log")).unwrap();
    assert!(log.starts_with("from before\n"), "{log}");
    assert!(log.contains("box-started"), "{log}");
}

#[test]
fn exec_ephemeral_writes_no_mcp_logs() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "mcp__box__look", "{}")]),
        Reply::text_answer("looked at it"),
    ])
    .unwrap();
    config_with_logging_servers(&env, &mock);
    let out = env.run(None, &["exec", "--ephemeral", "look"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "looked at it\n");
    let err = stderr(&out);
    // The server ran (its tool answered), and the broken one is reported without a log.
    assert!(
        err.contains("MCP server broken failed") && err.contains("no log is kept"),
        "{err}"
    );
    assert!(!err.contains("mcp-logs"), "{err}");
    let logs = env.path("state/hrns/mcp-logs");
    assert!(
        !logs.exists(),
        "{:?}",
        std::fs::read_dir(&logs).map(|d| d.count())
    );
}

#[test]
fn mcp_config_warnings_name_the_config_file_given() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("done")]).unwrap();
    let config = serde_json::json!({
        "providers": {"mock": {"url": mock.base_url(), "key": common::KEY, "model": "mock-model"}},
        "mcpServers": {"odd": {"args": ["x"]}}});
    let file = env.write("elsewhere/team.json", &config.to_string());
    let file = file.display().to_string();
    for args in [&["exec", "hi"][..], &["mcp", "list"]] {
        let out = env
            .cmd(None)
            .args(["--config", file.as_str()])
            .args(args)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert!(
            err.contains(&format!("warning: {file}: ")),
            "{args:?}: {err}"
        );
        assert!(err.contains("odd"), "{args:?}: {err}");
        assert!(!err.contains("config.json"), "{args:?}: {err}");
    }
}

/// `hrns mcp approve` and `hrns hooks approve` keep their approvals apart, each in an
/// owner-only file of the state directory keyed by the project file's path; approving one
/// workspace keeps another's approval, and a changed file is no longer approved.
#[test]
fn project_file_approvals_are_owner_only_and_kept_apart() {
    let env = Env::with_dirs(&["work", "other"]);
    let mcp = r#"{"mcpServers": {"files": {"command": "/nonexistent/server"}}}"#;
    let hooks = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#;
    for dir in ["work", "other"] {
        env.write(&format!("{dir}/.mcp.json"), mcp);
    }
    env.write("work/.hrns/hooks.json", hooks);
    for (dir, args) in [
        ("work", &["mcp", "approve"][..]),
        ("work", &["hooks", "approve"]),
        ("other", &["mcp", "approve"]),
    ] {
        let out = env.run_in(dir, None, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
    let state = env.path("state/hrns");
    assert_eq!(mode(&state), 0o700);
    let read = |file: &str| -> serde_json::Map<String, serde_json::Value> {
        assert_eq!(mode(&state.join(file)), 0o600, "{file}");
        serde_json::from_str(&std::fs::read_to_string(state.join(file)).unwrap()).unwrap()
    };
    let path = |p: &str| env.path(p).canonicalize().unwrap().display().to_string();
    let mcp_approved = read("mcp-approved.json");
    let keys: Vec<&String> = mcp_approved.keys().collect();
    let mut want = [path("work/.mcp.json"), path("other/.mcp.json")];
    want.sort();
    assert_eq!(keys, want.iter().collect::<Vec<_>>());
    // Only a hash of each approved text is kept (a .mcp.json may carry tokens), the same for
    // the same text in two workspaces.
    let kept = mcp_approved[&path("work/.mcp.json")].as_str().unwrap();
    assert!(
        kept.starts_with("sha256:") && !kept.contains("nonexistent"),
        "{kept}"
    );
    assert_eq!(mcp_approved[&path("other/.mcp.json")].as_str(), Some(kept));
    let hooks_approved = read("hooks-approved.json");
    assert_eq!(hooks_approved.len(), 1);
    let kept = hooks_approved[&path("work/.hrns/hooks.json")]
        .as_str()
        .unwrap();
    assert!(
        kept.starts_with("sha256:") && !kept.contains("true"),
        "{kept}"
    );
    // Approved as it is: used, no warning. Changed: not approved any more.
    let listed = env.run_in("work", None, &["mcp", "list"]);
    assert!(
        !stderr(&listed).contains("not approved"),
        "{}",
        stderr(&listed)
    );
    env.write("work/.mcp.json", &mcp.replace("files", "files2"));
    let listed = env.run_in("work", None, &["mcp", "list"]);
    assert!(
        stderr(&listed).contains("is not approved"),
        "{}",
        stderr(&listed)
    );
}

/// An approval saved by an older hrns held the project file's whole text: it still approves
/// that very text, and the next approval rewrites every entry as a hash, so the tokens a
/// `.mcp.json` carries leave the state directory.
#[test]
fn an_older_approval_of_the_whole_text_counts_and_is_rewritten_as_a_hash() {
    let env = Env::with_dirs(&["work", "other"]);
    let mcp = r#"{"mcpServers": {"files": {"command": "/nonexistent/server", "env": {"TOKEN": "tok-9d1e"}}}}"#;
    env.write("work/.mcp.json", mcp);
    env.write("other/.mcp.json", mcp);
    let path = |p: &str| env.path(p).canonicalize().unwrap().display().to_string();
    let old = serde_json::json!({ path("work/.mcp.json"): mcp }).to_string();
    env.write("state/hrns/mcp-approved.json", &old);
    let listed = env.run_in("work", None, &["mcp", "list"]);
    assert!(
        !stderr(&listed).contains("not approved"),
        "{}",
        stderr(&listed)
    );
    let listed = env.run_in("other", None, &["mcp", "list"]);
    assert!(
        stderr(&listed).contains("is not approved"),
        "{}",
        stderr(&listed)
    );
    let out = env.run_in("other", None, &["mcp", "approve"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let kept = std::fs::read_to_string(env.path("state/hrns/mcp-approved.json")).unwrap();
    assert!(!kept.contains("tok-9d1e"), "{kept}");
    for dir in ["work", "other"] {
        let listed = env.run_in(dir, None, &["mcp", "list"]);
        assert!(
            !stderr(&listed).contains("not approved"),
            "{dir}: {}",
            stderr(&listed)
        );
    }
}
