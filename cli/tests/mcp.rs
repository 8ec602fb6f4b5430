//! MCP servers from the CLI: `mcpServers` in config.json and an approved `./.mcp.json`, their
//! tools in `exec` against the mock provider, `hrns mcp list`. The servers are small sh
//! scripts speaking newline-delimited JSON-RPC (the client's request ids are 0, 1, 2, …).

mod common;

use common::{Env, KEY, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::{Value, json};

/// A stdio MCP server in sh with one tool, `work`, whose answer is `answer` (a text block) with
/// `@TOKEN@` and `@PARENT@` replaced by its variables `HELPER_TOKEN` and `PARENT_TOKEN`.
fn script_server(env: &Env, name: &str, answer: &str) -> String {
    let init = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}"#;
    let list = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"work","description":"Does work.","inputSchema":{"type":"object","properties":{"what":{"type":"string"}}},"annotations":{"readOnlyHint":true}}]}}"#;
    let call = json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": answer}]}});
    let script = format!(
        "while read -r line; do\n\
         case \"$line\" in\n\
         *'\"initialize\"'*) echo '{init}' ;;\n\
         *'\"tools/list\"'*) echo '{list}' ;;\n\
         *'\"tools/call\"'*) echo '{call}' | sed \"s/@TOKEN@/$HELPER_TOKEN/; s/@PARENT@/$PARENT_TOKEN/\" ;;\n\
         esac\n\
         done\n"
    );
    env.write(&format!("scripts/{name}.sh"), &script)
        .to_string_lossy()
        .into_owned()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn exec_offers_and_runs_mcp_tools_and_reports_a_broken_server_once() {
    let env = Env::new();
    let script = script_server(&env, "helper", "the work is done @TOKEN@ <@PARENT@>");
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "mcp__helper__work", r#"{"what":"all"}"#)]),
        Reply::text_answer("Done."),
    ])
    .unwrap();
    let servers = json!({"mcpServers": {
        "helper": {"command": "sh", "args": [script], "env": {"HELPER_TOKEN": "tok-NEVERSHOWN-77"}},
        "broken": {"command": "/nonexistent/server"},
        "off": {"command": "/nonexistent/server", "disabled": true}
    }});
    let extra = format!(
        ", {}",
        &servers.to_string()[1..servers.to_string().len() - 1]
    );
    env.config_with(&mock, &extra);
    let out = env
        .cmd(None)
        .env("PARENT_TOKEN", "parent-NEVERSHOWN-88")
        .args(["exec", "do the work"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Done.\n");
    let err = stderr(&out);
    assert_eq!(err.matches("MCP server broken failed").count(), 1, "{err}");
    assert!(
        !err.contains("off"),
        "a disabled server is not started: {err}"
    );
    assert!(
        !err.contains("tok-NEVERSHOWN-77") && !err.contains(KEY),
        "{err}"
    );
    let requests = mock.requests();
    let names = tool_names(&requests[0].json());
    assert!(names.contains(&"mcp__helper__work".to_owned()), "{names:?}");
    assert!(names.contains(&"read_file".to_owned()));
    let tool_message = &requests[1].json()["messages"][3];
    assert_eq!(tool_message["role"], "tool");
    // The server's own secret reached it and was redacted on the way back; the parent's
    // secret-looking variable never reached it.
    assert_eq!(tool_message["content"], "the work is done [redacted] <>");
    let sessions = env.path("state/hrns/sessions");
    for entry in std::fs::read_dir(&sessions).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(
            !text.contains("tok-NEVERSHOWN-77"),
            "a session file holds the secret"
        );
    }
}

#[test]
fn mcp_list_shows_status_and_tools() {
    let env = Env::new();
    let script = script_server(&env, "helper", "x");
    env.write(
        "config/hrns/config.json",
        &json!({"mcpServers": {
            "helper": {"command": "sh", "args": [script]},
            "broken": {"command": "/nonexistent/server"},
            "off": {"url": "https://example.invalid/mcp", "disabled": true,
                    "headers": {"Authorization": "Bearer NEVERSHOWN"}}
        }})
        .to_string(),
    );
    let out = env.run(None, &["mcp", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    let by_name = |n: &str| lines.iter().find(|l| l["name"] == n).unwrap().clone();
    assert_eq!(by_name("helper")["status"], "ready");
    assert_eq!(by_name("helper")["tools"], json!(["work"]));
    assert_eq!(by_name("helper")["protocol_version"], "2025-06-18");
    assert_eq!(by_name("broken")["status"], "failed");
    assert!(
        by_name("broken")["error"]
            .as_str()
            .unwrap()
            .contains("cannot run")
    );
    assert_eq!(by_name("off")["status"], "disabled");
    let out = env.run(None, &["mcp", "list"]);
    let text = stdout(&out);
    assert!(
        text.contains("helper  ready  stdio sh") && text.contains("    work"),
        "{text}"
    );
    assert!(!text.contains("NEVERSHOWN") && !stderr(&out).contains("NEVERSHOWN"));
}

#[test]
fn a_project_mcp_json_is_used_only_once_approved_as_it_is() {
    let env = Env::new();
    let script = script_server(&env, "proj", "x");
    let project = json!({"mcpServers": {"proj": {"command": "sh", "args": [script]}}}).to_string();
    env.write("work/.mcp.json", &project);
    let out = env.run(None, &["mcp", "list", "--json"]);
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(stderr(&out).contains("is not approved"), "{}", stderr(&out));

    let out = env.run(None, &["mcp", "approve"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = env.run(None, &["mcp", "list", "--json"]);
    let line: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(line["name"], "proj");
    assert_eq!(line["status"], "ready");

    // A project file cannot take its servers out of the sandbox.
    let loose = json!({"mcpServers": {"proj": {"command": "sh", "args": [script],
                                               "sandbox": "danger-full-access"}}})
    .to_string();
    env.write("work/.mcp.json", &loose);
    env.run(None, &["mcp", "approve"]);
    let out = env.run(None, &["mcp", "list", "--json"]);
    assert!(
        stderr(&out).contains("is honoured only in your config.json"),
        "{}",
        stderr(&out)
    );

    // A changed file needs approving again.
    env.write("work/.mcp.json", &project.replace("proj", "other"));
    let out = env.run(None, &["mcp", "list", "--json"]);
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(stderr(&out).contains("is not approved"));
}

/// A server with a read-only tool `look` (answering `seen`) and a tool `change` without
/// `readOnlyHint` (an effect).
fn two_tool_server(env: &Env) -> String {
    let init = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}}"#;
    let list = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"look","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},{"name":"change","inputSchema":{"type":"object"}}]}}"#;
    let call = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"seen"}]}}"#;
    let script = format!(
        "while read -r line; do\n\
         case \"$line\" in\n\
         *'\"initialize\"'*) echo '{init}' ;;\n\
         *'\"tools/list\"'*) echo '{list}' ;;\n\
         *'\"tools/call\"'*) echo '{call}' ;;\n\
         esac\n\
         done\n"
    );
    env.write("scripts/two.sh", &script)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_read_only_child_gets_the_read_only_mcp_tools_and_runs_them() {
    let env = Env::new();
    let script = two_tool_server(&env);
    let mock = MockProvider::start_with(|req| {
        if req.method != "POST" {
            return None;
        }
        let body = req.json();
        let last = body["messages"].as_array().unwrap().last().unwrap().clone();
        let is_parent = tool_names(&body).iter().any(|n| n == "task");
        Some(match (is_parent, last["role"] == "tool") {
            (true, false) => Reply::tool_calls(&[(
                "call_task",
                "task",
                r#"{"description":"look","prompt":"Look with the server."}"#,
            )]),
            (true, true) => Reply::text_answer(&format!(
                "Parent got: {}",
                last["content"].as_str().unwrap()
            )),
            (false, false) => Reply::tool_calls(&[("call_look", "mcp__two__look", "{}")]),
            (false, true) => Reply::text_answer(&format!(
                "The server said {}",
                last["content"].as_str().unwrap()
            )),
        })
    })
    .unwrap();
    let servers = json!({"mcpServers": {"two": {"command": "sh", "args": [script]}}}).to_string();
    env.config_with(&mock, &format!(", {}", &servers[1..servers.len() - 1]));
    let out = env.run(None, &["exec", "--approval", "auto", "Delegate it"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Parent got: The server said seen\n");
    let requests = mock.chat_requests();
    let parent = tool_names(&requests[0].json());
    assert!(
        parent.contains(&"mcp__two__look".to_owned())
            && parent.contains(&"mcp__two__change".to_owned()),
        "{parent:?}"
    );
    // The Explorer child got the server's read-only tool, not the one with effects.
    let child = tool_names(&requests[1].json());
    assert!(child.contains(&"mcp__two__look".to_owned()), "{child:?}");
    assert!(!child.contains(&"mcp__two__change".to_owned()), "{child:?}");
    assert!(!child.contains(&"task".to_owned()));
    let err = stderr(&out);
    assert!(
        err.contains("two › look"),
        "the child's call is shown: {err}"
    );
}

/// `mcpServers` as the extra top-level fields `Env::config_with` takes.
fn servers_extra(servers: &Value) -> String {
    let text = json!({ "mcpServers": servers }).to_string();
    format!(", {}", &text[1..text.len() - 1])
}

/// The content of the tool message answering call `call_id` in the request `body`.
fn tool_result(body: &Value, call_id: &str) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_else(|| panic!("no result for {call_id} in {body}"))
}

#[test]
fn stdio_servers_run_under_the_sandbox_unless_their_entry_opts_out() {
    let env = Env::outside_tmp();
    let outside = env.path("outside.txt");
    let write = |path: &str| json!({"path": path, "text": "x"}).to_string();
    for opt_out in [false, true] {
        let _ = std::fs::remove_file(&outside);
        let mock = MockProvider::start([
            Reply::tool_calls(&[
                ("out", "mcp__box__write", &write(outside.to_str().unwrap())),
                ("in", "mcp__box__write", &write("inside.txt")),
            ]),
            Reply::text_answer("Done."),
        ])
        .unwrap();
        let mut server = json!({"command": "python3", "args": [common::mcp_test_server()]});
        if opt_out {
            server["sandbox"] = json!("danger-full-access");
        }
        env.config_with(&mock, &servers_extra(&json!({ "box": server })));
        let out = env.run(None, &["exec", "write both"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        // The call names its server.
        assert!(stderr(&out).contains("box › write"), "{}", stderr(&out));
        let requests = mock.requests();
        let body = requests[1].json();
        assert_eq!(tool_result(&body, "in"), "wrote inside.txt");
        assert!(env.work().join("inside.txt").exists());
        let result = tool_result(&body, "out");
        if opt_out {
            assert!(outside.exists(), "{result}");
        } else {
            assert!(!outside.exists(), "the server wrote outside the workspace");
            assert!(
                result.contains("Read-only file system") || result.contains("Permission denied"),
                "{result}"
            );
        }
    }
}

#[test]
fn read_only_agents_and_policies_see_only_read_only_mcp_tools() {
    let env = Env::new();
    let server = json!({"box": {"command": "python3", "args": [common::mcp_test_server()]}});
    for (args, effectful) in [
        (&["exec"][..], true),
        (&["exec", "--agent", "Explorer"][..], false),
        (&["exec", "--approval", "read-only"][..], false),
    ] {
        let mock = MockProvider::start([Reply::text_answer("ok")]).unwrap();
        env.config_with(&mock, &servers_extra(&server));
        let out = env.cmd(None).args(args).arg("look").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let names = tool_names(&mock.requests()[0].json());
        assert!(
            names.contains(&"mcp__box__look".to_owned()),
            "{args:?}: {names:?}"
        );
        assert_eq!(
            names.contains(&"mcp__box__write".to_owned()),
            effectful,
            "{args:?}: {names:?}"
        );
    }
}

/// Whether the process `pid` is gone (or a zombie waiting to be reaped).
fn dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn a_second_signal_exits_at_once_and_kills_the_servers_process_groups() {
    let env = Env::new();
    // A server that starts a process of its own (in its group) and writes its pid: the server
    // itself ends when its stdin closes, the process would not.
    let server = script_server(&env, "helper", "x");
    let pidfile = env.path("sleeper.pid");
    let script = env.write(
        "scripts/spawning.sh",
        &format!(
            "sleep 300 &\necho $! > '{}'\n. '{server}'\n",
            pidfile.display()
        ),
    );
    let reply = Reply::text_answer("Some text, then the provider stalls for a long time.");
    let mid = reply.body().len() / 2;
    let mock = MockProvider::start([reply
        .split_at(&[mid])
        .delay(std::time::Duration::from_secs(30))])
    .unwrap();
    let servers = json!({"mcpServers": {"helper": {"command": "sh", "args": [script]}}});
    let extra = format!(
        ", {}",
        &servers.to_string()[1..servers.to_string().len() - 1]
    );
    env.config_with(&mock, &extra);
    let mut child = env
        .cmd(None)
        .args(["exec", "--json", "go"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Duration::from_secs(10);
    let mut lines = common::Lines::read(child.stdout.take().unwrap());
    lines.wait_for("first delta", t, |l| l.contains(r#""type":"text_delta""#));
    let sleeper = std::fs::read_to_string(&pidfile).unwrap().trim().to_owned();
    assert!(!dead(&sleeper));
    // Two different signals, so that they are not merged into one: the first cancels the
    // turn, the second exits before the normal end would have stopped the server.
    let pid = child.id().to_string();
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("kill -INT {pid}; kill -TERM {pid}")])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let code = out.status.code();
    assert!(matches!(code, Some(130 | 143)), "{code:?} {}", stderr(&out));
    let _ = lines.finish();
    let deadline = std::time::Instant::now() + t;
    while !dead(&sleeper) {
        assert!(
            std::time::Instant::now() < deadline,
            "the server's process survived hrns"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn secrets_in_a_configured_url_are_never_shown() {
    let env = Env::new();
    // A port nothing listens on: every use of the URL fails, naming it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!(
        "http://me:pw-NEVERSHOWN-1@127.0.0.1:{port}/mcp?api_key=q-NEVERSHOWN-2&format=json"
    );
    let provider = format!("http://you:pw-NEVERSHOWN-3@127.0.0.1:{port}/v1");
    env.write(
        "config/hrns/config.json",
        &json!({
            "providers": {"far": {"url": provider, "key": KEY, "model": "m"}},
            "currentProvider": "far",
            "mcpServers": {"web": {"url": url}}
        })
        .to_string(),
    );
    let mut shown = Vec::new();
    for args in [
        &["mcp", "list"][..],
        &["mcp", "list", "--json"],
        &["providers"],
        &["doctor"],
        &["doctor", "--json"],
        &["exec", "hello"],
    ] {
        let out = env.run(None, args);
        shown.push((args.join(" "), stdout(&out) + &stderr(&out)));
    }
    let logs = env.path("state/hrns/mcp-logs");
    for entry in std::fs::read_dir(&logs).unwrap() {
        let path = entry.unwrap().path();
        shown.push((
            path.display().to_string(),
            std::fs::read_to_string(&path).unwrap(),
        ));
    }
    for (what, text) in &shown {
        assert!(
            !text.contains("NEVERSHOWN") && !text.contains(KEY),
            "{what}: {text}"
        );
    }
    // What is not a secret still shows: the server failed, naming its URL's host.
    let (_, list) = &shown[0];
    assert!(
        list.contains("web  failed  http http://me:[redacted]@127.0.0.1")
            && list.contains("api_key=[redacted]&format=json"),
        "{list}"
    );
    let (_, providers) = &shown[2];
    assert!(
        providers.contains("far\thttp://you:[redacted]@127.0.0.1"),
        "{providers}"
    );
    let (_, exec) = &shown[5];
    assert!(exec.contains("MCP server web failed"), "{exec}");
}

#[test]
fn a_stdio_servers_stderr_reaches_its_log_redacted_cut_and_whole() {
    let env = Env::new();
    let token = "srv-NEVERSHOWN-0123456789";
    let server = || {
        json!({"command": "python3",
               "args": [common::mcp_test_server(), "--stderr-env", "SRV_TOKEN"],
               "env": {"SRV_TOKEN": token}})
    };
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "mcp__dying__die", "{}")]),
        Reply::text_answer("Done."),
    ])
    .unwrap();
    env.config_with(
        &mock,
        &servers_extra(&json!({"dying": server(), "quiet": server()})),
    );
    let out = env.run(None, &["exec", "die"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let log = |name: &str| {
        std::fs::read_to_string(env.path(&format!("state/hrns/mcp-logs/{name}.log")))
            .unwrap_or_default()
    };
    for name in ["dying", "quiet"] {
        let text = log(name);
        assert!(!text.contains("NEVERSHOWN"), "{name}: {text}");
        assert!(
            text.contains("starting with [redacted]\n"),
            "{name}: {text}"
        );
        // The 20000-byte line is cut, saying how much was left out.
        let long = text.lines().find(|l| l.starts_with("zzz")).unwrap();
        assert!(long.len() < 5000, "{name}: {} bytes", long.len());
        assert!(long.ends_with(" more bytes)"), "{name}: {long}");
    }
    // The last words of a server that died, and of the helper it left holding its stderr,
    // are logged before hrns says it failed; those of one stopped at the end of the run (no
    // line end) are logged too.
    let dying = log("dying");
    let words = dying.find("last words [redacted]\n");
    let late = dying.find("late words\n");
    let failed = dying.find("[hrns] the server failed");
    assert!(
        words.is_some() && late.is_some() && failed.is_some() && words < late && late < failed,
        "{dying}"
    );
    assert!(
        log("quiet").contains("bye [redacted]\n"),
        "{}",
        log("quiet")
    );
}
