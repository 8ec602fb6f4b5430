//! The hook contract's decisions, as tables: configuration, matchers, input, and every exit
//! code and JSON field of an answer.

use super::*;
use crate::secrets::Secrets;
use serde_json::json;
use std::time::Duration;

const KEY: &str = "sk-hooks-SECRET-987654321";

fn command(fail: FailMode) -> HookCommand {
    HookCommand {
        command: "check".into(),
        timeout: Duration::from_secs(5),
        fail,
    }
}

fn run(exit: HookExit, stdout: &str, stderr: &str) -> HookRun {
    HookRun {
        exit,
        stdout: stdout.as_bytes().to_vec(),
        stderr: stderr.as_bytes().to_vec(),
        truncated: false,
        duration_ms: 3,
    }
}

fn secrets() -> Secrets {
    let mut s = Secrets::new();
    s.add(KEY);
    s
}

fn read(event: HookEvent, exit: HookExit, stdout: &str, stderr: &str) -> Verdict {
    verdict(
        event,
        &command(FailMode::Open),
        &run(exit, stdout, stderr),
        &secrets(),
    )
}

#[test]
fn the_configuration_is_read_in_claude_codes_shape() {
    let value = json!({
        "PreToolUse": [{"matcher": "run_command|Bash", "hooks": [
            {"type": "command", "command": "no-rm", "timeout": 30},
            {"type": "command", "command": "audit", "failClosed": true}
        ]}],
        "Stop": [{"hooks": [{"type": "command", "command": "tests-pass"}]}]
    });
    let (hooks, errors) = Hooks::parse(&value, &HookSource::User("config.json".into()));
    assert!(errors.is_empty(), "{errors:?}");
    let entries = hooks.entries();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0].command.timeout, Duration::from_secs(30));
    assert_eq!(entries[0].command.fail, FailMode::Open);
    assert_eq!(entries[1].command.timeout, DEFAULT_HOOK_TIMEOUT);
    assert_eq!(entries[1].command.fail, FailMode::Closed);
    assert_eq!(entries[2].event, HookEvent::Stop);
    assert_eq!(
        hooks.due(HookEvent::PreToolUse, Some("run_command")).len(),
        2
    );
    assert!(
        hooks
            .due(HookEvent::PreToolUse, Some("read_file"))
            .is_empty()
    );
    assert_eq!(hooks.due(HookEvent::Stop, None).len(), 1);
}

#[test]
fn bad_entries_are_left_out_with_an_error_naming_them() {
    let value = json!({
        "PreToolUze": [],
        "Stop": "no",
        "PreToolUse": [
            {"matcher": "(", "hooks": [{"type": "command", "command": "a"}]},
            {"matcher": 3, "hooks": []},
            {"hooks": [{"type": "prompt", "prompt": "x"}, {"type": "command"},
                       {"type": "command", "command": "t", "timeout": -1},
                       {"type": "command", "command": "f", "failClosed": "yes"},
                       {"type": "command", "command": "ok"}]}
        ]
    });
    let (hooks, errors) = Hooks::parse(
        &value,
        &HookSource::ProjectFile("/p/.hrns/hooks.json".into()),
    );
    assert_eq!(hooks.entries().len(), 1, "only the good command is kept");
    let all = errors.join("\n");
    for needle in [
        "unknown hook event `PreToolUze`",
        "hooks.Stop must be a list",
        "matcher `(` is not a valid regex",
        "matcher must be a string",
        "type `prompt` is not supported",
        "non-empty \"command\"",
        "\"timeout\" must be a positive number",
        "\"failClosed\" must be true or false",
        "/p/.hrns/hooks.json",
    ] {
        assert!(all.contains(needle), "{needle:?} missing in {all}");
    }
    let (_, errors) = Hooks::parse(&json!([]), &HookSource::User("config.json".into()));
    assert!(errors[0].contains("must be an object of events"));
}

#[test]
fn matchers_match_hrns_names_claude_code_aliases_and_mcp_tools() {
    let cases: &[(&str, &str, bool)] = &[
        ("Bash", "run_command", true),
        ("run_command", "run_command", true),
        ("Write|Edit", "write_file", true),
        ("Write|Edit", "edit_file", true),
        ("Edit", "write_file", false),
        ("Read", "read_file", true),
        ("Glob", "list_files", true),
        ("Grep", "grep", true),
        ("WebFetch", "web_fetch", true),
        ("Task", "task", true),
        ("mcp__github__.*", "mcp__github__create_issue", true),
        ("mcp__github__.*", "mcp__gitlab__x", false),
        // A whole name, not a part of one: `Bash` does not match `Bashful`.
        ("Bash", "Bashful", false),
        ("", "anything", true),
        ("*", "anything", true),
    ];
    for (matcher, tool, expected) in cases {
        let m = Matcher::new(matcher).unwrap();
        assert_eq!(m.matches(Some(tool)), *expected, "{matcher} vs {tool}");
    }
    assert!(!Matcher::new("Bash").unwrap().matches(None));
}

#[test]
fn a_command_configured_twice_runs_once() {
    let value = json!({"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "same"}]},
        {"matcher": "run_command", "hooks": [{"type": "command", "command": "same"}]}
    ]});
    let (hooks, _) = Hooks::parse(&value, &HookSource::User("config.json".into()));
    assert_eq!(
        hooks.due(HookEvent::PreToolUse, Some("run_command")).len(),
        1
    );
}

#[test]
fn tool_input_carries_claude_codes_names_beside_hrns_ones() {
    let ctx = HookContext {
        session_id: "s1".into(),
        transcript_path: "/t/s1.jsonl".into(),
        cwd: "/w".into(),
    };
    let text = input::Input::new(
        &ctx,
        HookEvent::PreToolUse,
        crate::session::ApprovalPolicy::Ask,
    )
    .with_tool("write_file", r#"{"path":"a.txt","content":"x"}"#)
    .with("tool_use_id", "c1")
    .finish(&secrets());
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["session_id"], "s1");
    assert_eq!(v["transcript_path"], "/t/s1.jsonl");
    assert_eq!(v["cwd"], "/w");
    assert_eq!(v["hook_event_name"], "PreToolUse");
    assert_eq!(v["permission_mode"], "default");
    assert_eq!(v["tool_name"], "Write");
    assert_eq!(v["hrns_tool_name"], "write_file");
    assert_eq!(v["tool_input"]["path"], "a.txt");
    assert_eq!(v["tool_input"]["file_path"], "a.txt");
    let listed = input::tool_input("list_files", r#"{"dir":"src"}"#);
    assert_eq!(listed["path"], "src");
}

#[test]
fn input_is_redacted() {
    let ctx = HookContext::default();
    let args = format!(r#"{{"command":"curl -H 'Authorization: Bearer {KEY}'"}}"#);
    let text = input::Input::new(
        &ctx,
        HookEvent::PreToolUse,
        crate::session::ApprovalPolicy::Auto,
    )
    .with_tool("run_command", &args)
    .finish(&secrets());
    assert!(!text.contains(KEY), "{text}");
    assert!(text.contains("bypassPermissions"));
}

#[test]
fn updated_input_reads_claude_codes_names_back() {
    let original = r#"{"path":"a.txt","content":"x"}"#;
    let changed = json!({"file_path": "b.txt", "path": "a.txt", "content": "y"});
    let args =
        input::updated_arguments("write_file", original, changed.as_object().unwrap().clone());
    let v: serde_json::Value = serde_json::from_str(&args).unwrap();
    assert_eq!(v, json!({"path": "b.txt", "content": "y"}));
    // hrns's own name changed and the alias left as it was: the own name counts.
    let changed = json!({"file_path": "a.txt", "path": "c.txt", "content": "y"});
    let args =
        input::updated_arguments("write_file", original, changed.as_object().unwrap().clone());
    let v: serde_json::Value = serde_json::from_str(&args).unwrap();
    assert_eq!(v["path"], "c.txt");
    assert!(v.get("file_path").is_none());
}

#[test]
fn exit_codes() {
    let e = HookEvent::PreToolUse;
    let ok = read(e, HookExit::Code(0), "", "noise");
    assert_eq!(ok, Verdict::default());
    assert_eq!(ok.outcome(), HookOutcome::Success);

    let block = read(e, HookExit::Code(2), "ignored", "no rm here\n");
    assert_eq!(block.block.as_deref(), Some("no rm here"));
    assert_eq!(block.outcome(), HookOutcome::Blocked);
    let silent = read(e, HookExit::Code(2), "", "");
    assert!(
        silent
            .block
            .unwrap()
            .contains("blocked by the hook `check`")
    );

    for (exit, needle) in [
        (HookExit::Code(1), "exit code 1: boom"),
        (HookExit::Code(127), "exit code 127"),
        (HookExit::Signal(9), "signal 9"),
        (HookExit::TimedOut, "did not finish within 5 s"),
        (
            HookExit::NotStarted("no shell".into()),
            "could not start: no shell",
        ),
    ] {
        let v = read(e, exit.clone(), "{\"decision\":\"block\"}", "boom");
        assert_eq!(v.outcome(), HookOutcome::Error, "{exit:?}");
        assert!(v.block.is_none(), "a failure does not block: {exit:?}");
        assert!(
            v.error.as_deref().unwrap().contains(needle),
            "{exit:?}: {v:?}"
        );
        let closed = verdict(
            e,
            &command(FailMode::Closed),
            &run(exit.clone(), "", "boom"),
            &secrets(),
        );
        assert!(
            closed.block.as_deref().unwrap().contains("fails closed"),
            "{exit:?}"
        );
    }
}

#[test]
fn plain_stdout_is_context_only_where_claude_code_makes_it_so() {
    for event in [HookEvent::SessionStart, HookEvent::UserPromptSubmit] {
        let v = read(
            event,
            HookExit::Code(0),
            "ticket ABC-1: fix the login\n",
            "",
        );
        assert_eq!(v.context.as_deref(), Some("ticket ABC-1: fix the login"));
    }
    let v = read(HookEvent::PreToolUse, HookExit::Code(0), "just talking", "");
    assert_eq!(v, Verdict::default());
}

#[test]
fn every_json_field() {
    let e = HookEvent::PreToolUse;
    let v = read(
        e,
        HookExit::Code(0),
        r#"{"continue": false, "stopReason": "enough"}"#,
        "",
    );
    assert_eq!(v.stop.as_deref(), Some("enough"));
    assert_eq!(v.outcome(), HookOutcome::Stopped);
    let v = read(e, HookExit::Code(0), r#"{"continue": false}"#, "");
    assert!(v.stop.is_some());
    let v = read(e, HookExit::Code(0), r#"{"systemMessage": "careful"}"#, "");
    assert_eq!(v.system_message.as_deref(), Some("careful"));
    let v = read(
        HookEvent::Stop,
        HookExit::Code(0),
        r#"{"decision": "block", "reason": "tests fail"}"#,
        "",
    );
    assert_eq!(v.block.as_deref(), Some("tests fail"));
    let v = read(e, HookExit::Code(0), r#"{"decision": "approve"}"#, "");
    assert_eq!(v.permission, Some(Permission::Allow));
    let specific = |body: serde_json::Value| {
        let text = json!({"hookSpecificOutput": body}).to_string();
        read(e, HookExit::Code(0), &text, "")
    };
    let v = specific(
        json!({"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "safe"}),
    );
    assert_eq!(
        (v.permission, v.reason.as_deref()),
        (Some(Permission::Allow), Some("safe"))
    );
    assert_eq!(v.outcome(), HookOutcome::Allowed);
    let v = specific(json!({"permissionDecision": "ask"}));
    assert_eq!(v.permission, Some(Permission::Ask));
    assert_eq!(v.outcome(), HookOutcome::Ask);
    let v = specific(json!({"permissionDecision": "deny", "permissionDecisionReason": "no rm"}));
    assert_eq!(v.block.as_deref(), Some("no rm"));
    let v = specific(json!({"updatedInput": {"command": "ls"}}));
    assert_eq!(v.updated_input.unwrap()["command"], "ls");
    let v = specific(json!({"additionalContext": "the repo uses pnpm"}));
    assert_eq!(v.context.as_deref(), Some("the repo uses pnpm"));
    // PermissionRequest's own shape.
    let text =
        json!({"hookSpecificOutput": {"decision": {"behavior": "deny", "message": "not on main"}}})
            .to_string();
    let v = read(HookEvent::PermissionRequest, HookExit::Code(0), &text, "");
    assert_eq!(v.block.as_deref(), Some("not on main"));
    let text = json!({"hookSpecificOutput": {"decision": {"behavior": "allow", "updatedInput": {"command": "ls"}}}}).to_string();
    let v = read(HookEvent::PermissionRequest, HookExit::Code(0), &text, "");
    assert_eq!(v.permission, Some(Permission::Allow));
    assert!(v.updated_input.is_some());
}

#[test]
fn malformed_output_is_a_clear_error_and_never_a_decision() {
    let e = HookEvent::PreToolUse;
    for (stdout, needle) in [
        ("{\"decision\": \"block\"", "not valid JSON"),
        (
            r#"{"decision": "maybe"}"#,
            "`decision` in its output must be \"block\"",
        ),
        (
            r#"{"continue": "no"}"#,
            "`continue` in its output must be true or false",
        ),
        (
            r#"{"systemMessage": 3}"#,
            "`systemMessage` in its output must be a string",
        ),
        (r#"{"hookSpecificOutput": []}"#, "must be an object"),
        (
            r#"{"hookSpecificOutput": {"permissionDecision": "yes"}}"#,
            "not \"yes\"",
        ),
        (
            r#"{"hookSpecificOutput": {"updatedInput": "ls"}}"#,
            "`updatedInput`",
        ),
        (
            r#"{"hookSpecificOutput": {"hookEventName": "Stop"}}"#,
            "is for `Stop`",
        ),
        (
            r#"{"hookSpecificOutput": {"decision": {}}}"#,
            "needs a `behavior`",
        ),
    ] {
        let v = read(e, HookExit::Code(0), stdout, "");
        assert_eq!(v.outcome(), HookOutcome::Error, "{stdout}");
        assert!(
            v.error.as_deref().unwrap().contains(needle),
            "{stdout}: {v:?}"
        );
        assert!(v.block.is_none() && v.permission.is_none(), "{stdout}");
    }
}

#[test]
fn huge_output_is_not_read_and_long_text_is_cut() {
    let mut r = run(
        HookExit::Code(0),
        r#"{"decision": "block", "reason": "x"}"#,
        "",
    );
    r.truncated = true;
    let v = verdict(
        HookEvent::PreToolUse,
        &command(FailMode::Open),
        &r,
        &secrets(),
    );
    assert!(v.error.unwrap().contains("over 1048576 bytes"));
    assert!(v.block.is_none());
    let long = "y".repeat(50_000);
    let v = read(HookEvent::PreToolUse, HookExit::Code(2), "", &long);
    let reason = v.block.unwrap();
    assert!(reason.len() < 10_100, "{}", reason.len());
    assert!(reason.contains("more bytes"));
}

#[test]
fn secrets_in_answers_are_redacted() {
    let stdout = json!({"systemMessage": format!("key {KEY}"), "hookSpecificOutput": {"additionalContext": KEY}}).to_string();
    let v = read(HookEvent::PreToolUse, HookExit::Code(0), &stdout, "");
    assert!(!format!("{v:?}").contains(KEY));
    let v = read(
        HookEvent::PreToolUse,
        HookExit::Code(2),
        "",
        &format!("leak {KEY}"),
    );
    assert!(!format!("{v:?}").contains(KEY));
    let v = read(
        HookEvent::PreToolUse,
        HookExit::Code(0),
        &format!("{{bad {KEY}"),
        "",
    );
    assert!(!format!("{v:?}").contains(KEY));
}

#[test]
fn parallel_hooks_that_disagree_combine_in_a_fixed_order() {
    let allow = Verdict {
        permission: Some(Permission::Allow),
        updated_input: Some(json!({"command": "ls -a"}).as_object().unwrap().clone()),
        context: Some("a".into()),
        ..Verdict::default()
    };
    let ask = Verdict {
        permission: Some(Permission::Ask),
        context: Some("b".into()),
        ..Verdict::default()
    };
    let block = Verdict {
        block: Some("no".into()),
        ..Verdict::default()
    };
    let block2 = Verdict {
        block: Some("never".into()),
        ..Verdict::default()
    };
    // Any block wins, whatever the order; both reasons are kept.
    for order in [
        vec![allow.clone(), ask.clone(), block.clone(), block2.clone()],
        vec![block.clone(), allow.clone(), block2.clone(), ask.clone()],
    ] {
        let c = combine(&order);
        let reason = c.block.unwrap();
        assert!(reason.contains("no") && reason.contains("never"));
        assert_eq!(c.permission, None);
        assert_eq!(c.updated_input, None, "a blocked call gets no new input");
    }
    // Then ask, then allow.
    let c = combine(&[allow.clone(), ask.clone()]);
    assert_eq!(c.permission, Some(Permission::Ask));
    assert_eq!(c.context, ["a", "b"]);
    assert!(c.updated_input.is_some());
    let c = combine(&[Verdict::default(), allow.clone()]);
    assert_eq!(c.permission, Some(Permission::Allow));
    assert_eq!(combine(&[]), Combined::default());
}
