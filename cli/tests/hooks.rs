//! Hooks end to end: the real `hrns exec` against the scripted provider, with hooks written
//! as small sh scripts in Claude Code's contract (JSON on stdin, exit code 2 blocks, JSON
//! decisions on stdout).

mod common;

use common::{Env, KEY, stderr, stdout};
use hrns_blocking::mock::{MockProvider, Reply};
use serde_json::{Value, json};

/// A config for `mock` with `hooks` as its `hooks` setting.
fn config_with_hooks(env: &Env, mock: &MockProvider, hooks: Value) {
    env.config_with(mock, &format!(", \"hooks\": {hooks}"));
}

/// A hook script at `scripts/NAME.sh`; returns the command that runs it.
fn script(env: &Env, name: &str, body: &str) -> String {
    let path = env.write(&format!("scripts/{name}.sh"), body);
    format!("sh {}", path.display())
}

fn one(event: &str, matcher: &str, command: &str) -> Value {
    json!({event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": 30}]}]})
}

fn bodies(mock: &MockProvider) -> Vec<String> {
    mock.chat_requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect()
}

#[test]
fn a_pre_tool_use_hook_denies_rm_with_exit_2_and_the_model_reads_why() {
    let env = Env::new();
    env.write("work/victim.txt", "keep me");
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", r#"{"command":"rm -rf victim.txt"}"#)]),
        Reply::text_answer("I will not delete it."),
    ])
    .unwrap();
    // Written for Claude Code: it reads `tool_input.command` of a `Bash` call.
    let hook = script(
        &env,
        "no-rm",
        "input=$(cat)\n\
         case \"$input\" in *'\"tool_name\":\"Bash\"'*'rm -rf'*|*'rm -rf'*'\"tool_name\":\"Bash\"'*)\n\
           echo 'rm -rf is not allowed in this repository' >&2; exit 2;;\n\
         esac\nexit 0\n",
    );
    config_with_hooks(&env, &mock, one("PreToolUse", "Bash", &hook));
    let out = env.run(None, &["exec", "--json", "clean up"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.path("work/victim.txt")).unwrap(),
        "keep me"
    );
    let bodies = bodies(&mock);
    assert!(
        bodies[1].contains("rm -rf is not allowed in this repository"),
        "{}",
        bodies[1]
    );
    let hook_line = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["type"] == "hook")
        .expect("a hook event");
    assert_eq!(hook_line["event"], "PreToolUse");
    assert_eq!(hook_line["outcome"], "blocked");
    assert_eq!(hook_line["call_id"], "c1");
    assert!(hook_line["duration_ms"].is_u64());
    // The human output says it in one line.
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", r#"{"command":"rm -rf victim.txt"}"#)]),
        Reply::text_answer("ok"),
    ])
    .unwrap();
    config_with_hooks(&env, &mock, one("PreToolUse", "Bash", &hook));
    let out = env.run(None, &["exec", "clean up"]);
    let err = stderr(&out);
    assert!(
        err.contains("hook PreToolUse") && err.contains("blocked"),
        "{err}"
    );
}

#[test]
fn updated_input_rewrites_a_command() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[(
            "c1",
            "run_command",
            r#"{"command":"echo original > out.txt"}"#,
        )]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "updatedInput": {"command": "echo rewritten > out.txt"}}});
    let hook = script(
        &env,
        "rewrite",
        &format!("cat >/dev/null\necho '{answer}'\n"),
    );
    config_with_hooks(&env, &mock, one("PreToolUse", "run_command", &hook));
    let out = env.run(None, &["exec", "write it"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(env.path("work/out.txt")).unwrap(),
        "rewritten\n"
    );
    assert!(
        stderr(&out).contains("rewritten"),
        "the new call is shown: {}",
        stderr(&out)
    );
}

#[test]
fn post_tool_use_context_reaches_the_next_request() {
    let env = Env::new();
    env.write("work/notes.txt", "hello");
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "read_file", r#"{"path":"notes.txt"}"#)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    // Claude Code's `Read` hook reads `tool_input.file_path`.
    let hook = script(
        &env,
        "context",
        "input=$(cat)\n\
         case \"$input\" in *'\"file_path\":\"notes.txt\"'*)\n\
           echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"notes.txt is generated from notes.in\"}}';;\n\
         esac\n",
    );
    config_with_hooks(&env, &mock, one("PostToolUse", "Read", &hook));
    let out = env.run(None, &["exec", "read the notes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(bodies(&mock)[1].contains("notes.txt is generated from notes.in"));
}

#[test]
fn user_prompt_submit_exit_2_sends_no_request() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("never")]).unwrap();
    let hook = script(
        &env,
        "guard",
        "cat >/dev/null\necho 'no deploys on Friday' >&2\nexit 2\n",
    );
    config_with_hooks(&env, &mock, one("UserPromptSubmit", "", &hook));
    let out = env.run(None, &["exec", "deploy"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(mock.chat_requests().is_empty(), "no request is sent");
    assert!(
        stderr(&out).contains("no deploys on Friday"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_stop_hook_that_blocks_twice_then_allows() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::text_answer("done 1"),
        Reply::text_answer("done 2"),
        Reply::text_answer("done 3"),
    ])
    .unwrap();
    let count = env.path("count");
    let hook = script(
        &env,
        "tests-pass",
        &format!(
            "cat >/dev/null\nn=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}\n\
             if [ $n -le 2 ]; then echo '{{\"decision\":\"block\",\"reason\":\"2 tests still fail\"}}'; fi\n",
            c = count.display()
        ),
    );
    config_with_hooks(&env, &mock, one("Stop", "", &hook));
    let out = env.run(None, &["exec", "make the tests pass"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bodies = bodies(&mock);
    assert_eq!(bodies.len(), 3);
    assert!(bodies[1].contains("2 tests still fail") && bodies[2].contains("2 tests still fail"));
    assert!(stdout(&out).contains("done 3"));
}

#[test]
fn a_hook_that_hangs_past_its_timeout_is_an_error_and_the_run_goes_on() {
    let env = Env::new();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", r#"{"command":"echo ran > ran.txt"}"#)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let hooks = json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "sleep 60", "timeout": 1}]}]});
    config_with_hooks(&env, &mock, hooks);
    let out = env.run(None, &["exec", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("did not finish within 1 s"),
        "{}",
        stderr(&out)
    );
    assert!(
        env.path("work/ran.txt").exists(),
        "a failing hook does not block"
    );
    // With `failClosed`, the same failure blocks.
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", r#"{"command":"echo ran > ran2.txt"}"#)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let hooks = json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "sleep 60", "timeout": 1, "failClosed": true}]}]});
    config_with_hooks(&env, &mock, hooks);
    let out = env.run(None, &["exec", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!env.path("work/ran2.txt").exists());
}

#[test]
fn an_unapproved_project_hook_is_not_run_until_approved() {
    let env = Env::new();
    let marker = env.path("ran-marker");
    let hooks = json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command",
        "command": format!("touch {}", marker.display())}]}]}});
    env.write("work/.hrns/hooks.json", &hooks.to_string());
    let replies = || {
        [
            Reply::tool_calls(&[("c1", "read_file", r#"{"path":"x"}"#)]),
            Reply::text_answer("done"),
        ]
    };
    let mock = MockProvider::start(replies()).unwrap();
    env.config_with(&mock, "");
    let out = env.run(None, &["exec", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!marker.exists(), "an unapproved project hook never runs");
    assert!(
        stderr(&out).contains("is not approved, so its hooks are skipped"),
        "{}",
        stderr(&out)
    );
    let listed = env.run(None, &["hooks", "list", "--json"]);
    let line: Value = serde_json::from_str(stdout(&listed).lines().next().unwrap()).unwrap();
    assert_eq!(line["approved"], "not approved");
    assert_eq!(line["runs"], false);
    assert_eq!(line["event"], "PreToolUse");

    let approved = env.run(None, &["hooks", "approve"]);
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));
    assert!(stdout(&approved).contains("PreToolUse"));
    let mock = MockProvider::start(replies()).unwrap();
    env.config_with(&mock, "");
    let out = env.run(None, &["exec", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(marker.exists(), "approved, it runs");

    // A changed file needs approving again.
    std::fs::remove_file(&marker).unwrap();
    env.write("work/.hrns/hooks.json", &format!("{hooks} "));
    let mock = MockProvider::start(replies()).unwrap();
    env.config_with(&mock, "");
    let out = env.run(None, &["exec", "go"]);
    assert!(!marker.exists(), "{}", stderr(&out));
}

#[test]
fn the_provider_key_is_absent_from_a_hooks_environment_and_input() {
    let env = Env::new();
    let args = json!({"command": format!("echo {KEY}")}).to_string();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "run_command", &args)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    let seen = env.path("seen");
    let hook = script(
        &env,
        "dump",
        &format!("cat > {s}.input\nenv > {s}.env\n", s = seen.display()),
    );
    config_with_hooks(&env, &mock, one("PreToolUse", "", &hook));
    let out = env
        .cmd(None)
        .args(["exec", "go"])
        // The key under its usual name, and under a name that says nothing.
        .env("OPENAI_API_KEY", KEY)
        .env("DEPLOY_VALUE", KEY)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let input = std::fs::read_to_string(format!("{}.input", seen.display())).unwrap();
    let environment = std::fs::read_to_string(format!("{}.env", seen.display())).unwrap();
    assert!(
        input.contains("\"hook_event_name\":\"PreToolUse\""),
        "{input}"
    );
    assert!(!input.contains(KEY), "{input}");
    assert!(!environment.contains(KEY), "{environment}");
    assert!(
        environment.contains("HRNS_PROJECT_DIR=") && environment.contains("CLAUDE_PROJECT_DIR=")
    );
}

#[test]
fn hooks_list_says_where_each_comes_from() {
    let env = Env::new();
    let mock = MockProvider::start([]).unwrap();
    let work = env.work();
    let extra = json!({
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "user-stop"}]}]},
        "projects": {work.display().to_string(): {"hooks": {"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": "project-pre", "timeout": 5}]}]}}}
    });
    let text = extra.to_string();
    env.config_with(&mock, &format!(", {}", &text[1..text.len() - 1]));
    let out = env.run(None, &["hooks", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listing = stdout(&out);
    assert!(listing.contains("Stop [*] user-stop"), "{listing}");
    assert!(
        listing.contains("PreToolUse [Bash] project-pre (timeout 5 s"),
        "{listing}"
    );
    assert!(listing.contains("config.json projects."), "{listing}");
    let out = env.run(None, &["hooks", "list", "--json"]);
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let source = lines[0]["source"].as_str().unwrap();
    assert!(source.ends_with("/config.json"), "{source}");
    assert_eq!(lines[1]["matcher"], "Bash");
    // A bad entry is named, the rest kept.
    env.config_with(&mock, ", \"hooks\": {\"PreToolUze\": []}");
    let out = env.run(None, &["hooks", "list"]);
    assert!(
        stderr(&out).contains("unknown hook event `PreToolUze`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn replay_runs_hooks_only_with_the_hooks_flag() {
    let env = Env::new();
    env.write("work/notes.txt", "hello");
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "read_file", r#"{"path":"notes.txt"}"#)]),
        Reply::text_answer("done"),
    ])
    .unwrap();
    env.config_with(&mock, "");
    let record = env.path("run.record");
    let out = env.run(
        None,
        &["exec", "--record", record.to_str().unwrap(), "read"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let marker = env.path("hook-ran");
    let hooks = one(
        "PreToolUse",
        "Read",
        &format!("cat >/dev/null; touch {}", marker.display()),
    );
    config_with_hooks(&env, &mock, hooks);
    let out = env.run(None, &["replay", record.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!marker.exists(), "hooks are off in a replay");
    let out = env.run(None, &["replay", "--hooks", record.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(marker.exists(), "--hooks runs them");
}

#[test]
fn session_end_runs_with_reason_other_and_the_final_event_stays_the_last_json_line() {
    let env = Env::new();
    let mock = MockProvider::start([Reply::text_answer("all done")]).unwrap();
    let seen = env.path("session-end.json");
    let hook = script(
        &env,
        "end",
        &format!(
            "cat > {}\necho '{{\"systemMessage\":\"audit log closed\"}}'\n",
            seen.display()
        ),
    );
    config_with_hooks(&env, &mock, one("SessionEnd", "", &hook));
    let out = env.run(None, &["exec", "--json", "finish up"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "SessionEnd");
    assert_eq!(input["reason"], "other");
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let hook_line = lines
        .iter()
        .position(|l| l["type"] == "hook" && l["event"] == "SessionEnd")
        .expect("the SessionEnd hook is a `hook` line");
    assert!(
        lines[hook_line]["message"]
            .as_str()
            .is_some_and(|m| m.contains("audit log closed"))
    );
    // A script that reads until the final event misses nothing.
    assert_eq!(lines.last().unwrap()["type"], "turn_finished", "{lines:?}");
    assert!(hook_line < lines.len() - 1);
    common::check_event_lines(&stdout(&out));
}

#[test]
fn a_subagents_calls_run_the_tool_hooks_and_its_end_is_subagent_stop() {
    use hrns_blocking::mock::RecordedRequest;
    let env = Env::new();
    env.write("work/notes.txt", "the notes");
    let offers_task = |body: &Value| {
        body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["function"]["name"] == "task")
    };
    let mock = MockProvider::start_with(move |req: &RecordedRequest| {
        if req.method != "POST" {
            return None;
        }
        let body = req.json();
        let after_tool = body["messages"].as_array().unwrap().last().unwrap()["role"] == "tool";
        Some(match (offers_task(&body), after_tool) {
            (true, false) => Reply::tool_calls(&[(
                "call_task",
                "task",
                r#"{"description":"read","prompt":"Read notes.txt"}"#,
            )]),
            (true, true) => Reply::text_answer("parent done"),
            (false, false) => {
                Reply::tool_calls(&[("child_read", "read_file", r#"{"path":"notes.txt"}"#)])
            }
            (false, true) => Reply::text_answer("child done"),
        })
    })
    .unwrap();
    let seen = env.path("hooks.jsonl");
    let record = format!("cat >> {0}; echo >> {0}", seen.display());
    let entry = |matcher: &str| json!([{"matcher": matcher, "hooks": [{"type": "command", "command": record}]}]);
    config_with_hooks(
        &env,
        &mock,
        json!({"PreToolUse": entry("Read"), "PostToolUse": entry("Read"),
               "SubagentStop": entry(""), "Stop": entry("")}),
    );
    let out = env.run(None, &["exec", "--json", "delegate the reading"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let inputs: Vec<Value> = std::fs::read_to_string(&seen)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let events: Vec<&str> = inputs
        .iter()
        .map(|i| i["hook_event_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        events,
        ["PreToolUse", "PostToolUse", "SubagentStop", "Stop"],
        "{inputs:?}"
    );
    // The child's call, as a Claude Code script reads it.
    assert_eq!(inputs[0]["tool_name"], "Read");
    assert_eq!(inputs[0]["tool_input"]["file_path"], "notes.txt");
    assert_eq!(inputs[0]["tool_use_id"], "child_read");
    assert_eq!(inputs[2]["last_assistant_message"], "child done");
    assert_eq!(inputs[3]["last_assistant_message"], "parent done");
    assert!(stdout(&out).contains("parent done"));
}

/// Hooks of a `--config` file are listed (and warned about) under that file's name, not under
/// the default config.json's.
#[test]
fn hooks_of_a_config_file_given_are_named_by_it() {
    let env = Env::new();
    let config = json!({
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "team-stop"}]}],
            "PreToolUze": []
        }
    });
    let file = env.write("elsewhere/team.json", &config.to_string());
    let file = file.display().to_string();
    let out = env
        .cmd(None)
        .args(["--config", file.as_str(), "hooks", "list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (listing, err) = (stdout(&out), stderr(&out));
    assert!(listing.contains("team-stop (timeout"), "{listing}");
    assert!(listing.contains(&format!("— {file}, yours")), "{listing}");
    assert!(
        err.contains(&format!("{file}: unknown hook event `PreToolUze`")),
        "{err}"
    );
    assert!(
        !listing.contains("config.json") && !err.contains("config.json"),
        "{listing}{err}"
    );
}
