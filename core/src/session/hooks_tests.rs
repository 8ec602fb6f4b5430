//! Hooks in the session: each event where the session waits on hooks, and what every kind of
//! answer does there. The driver's part (running the processes) is scripted: each test hands
//! back the [`HookRun`]s a hook would have produced.

use super::tests::{H, KEY, config, text_answer, tool_answer};
use super::*;
use crate::hooks::{AgentRole, HookDue, HookEvent, HookExit, HookRun, HookSource, HookWait, Hooks};
use serde_json::{Value, json};
use std::sync::Arc;

fn with_hooks(policy: ApprovalPolicy, hooks: Value) -> H {
    let mut c = config(policy);
    let (parsed, errors) = Hooks::parse(&hooks, &HookSource::User("config.json".into()));
    assert!(errors.is_empty(), "{errors:?}");
    c.hooks.hooks = Arc::new(parsed);
    c.hooks.context.session_id = "s-1".into();
    H::new(c)
}

fn one(event: &str, matcher: &str) -> Value {
    json!({event: [{"matcher": matcher, "hooks": [{"type": "command", "command": "h"}]}]})
}

fn exited(code: i32, stdout: &str, stderr: &str) -> HookRun {
    HookRun {
        exit: HookExit::Code(code),
        stdout: stdout.as_bytes().to_vec(),
        stderr: stderr.as_bytes().to_vec(),
        truncated: false,
        duration_ms: 1,
    }
}

impl H {
    /// The hooks asked for last, taken out.
    fn due(&mut self) -> HookDue {
        self.hooks.pop().expect("hooks were asked for")
    }

    fn answer_hooks(&mut self, due: &HookDue, runs: Vec<HookRun>) {
        self.s.handle_hooks(self.now, due.id, runs).unwrap();
        self.drain();
    }

    fn input(due: &HookDue) -> Value {
        serde_json::from_str(&due.input).unwrap()
    }

    fn hook_events(&self) -> Vec<(String, crate::hooks::HookOutcome)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Hook { event, outcome, .. } => Some((event.clone(), *outcome)),
                _ => None,
            })
            .collect()
    }
}

fn last_request_text(h: &H) -> String {
    String::from_utf8(h.sent.last().unwrap().body.clone()).unwrap()
}

#[test]
fn without_hooks_nothing_changes() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("hi");
    assert!(h.hooks.is_empty());
    assert_eq!(h.sent.len(), 1);
}

#[test]
fn pre_tool_use_exit_2_blocks_the_call_and_the_model_reads_why() {
    let mut h = with_hooks(ApprovalPolicy::Auto, one("PreToolUse", "Bash"));
    h.submit("clean up");
    h.sse(&tool_answer(&[(
        "c1",
        "run_command",
        r#"{"command":"rm -rf /"}"#,
    )]));
    assert!(h.runs.is_empty(), "nothing runs before its hooks answered");
    let due = h.due();
    assert_eq!(due.event, HookEvent::PreToolUse);
    assert_eq!(due.wait, HookWait::Awaited);
    let input = H::input(&due);
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_input"]["command"], "rm -rf /");
    assert_eq!(input["tool_use_id"], "c1");
    assert_eq!(input["session_id"], "s-1");
    h.answer_hooks(&due, vec![exited(2, "", "rm is not allowed here")]);
    assert!(h.runs.is_empty(), "the command never runs");
    let results = h.results();
    assert_eq!(results[0].1, ToolStatus::BlockedByHook);
    assert!(results[0].2.contains("rm is not allowed here"));
    assert!(
        last_request_text(&h).contains("rm is not allowed here"),
        "the model sees the reason"
    );
    assert_eq!(
        h.hook_events(),
        [("PreToolUse".to_owned(), crate::hooks::HookOutcome::Blocked)]
    );
}

#[test]
fn a_matcher_that_does_not_match_asks_for_no_hooks() {
    let mut h = with_hooks(ApprovalPolicy::Auto, one("PreToolUse", "Write|Edit"));
    h.submit("look");
    h.sse(&tool_answer(&[("c1", "read_file", r#"{"path":"a"}"#)]));
    assert!(h.hooks.is_empty());
    assert_eq!(h.runs.len(), 1);
}

#[test]
fn updated_input_rewrites_the_call_which_is_checked_and_shown_again() {
    let mut h = with_hooks(ApprovalPolicy::Auto, one("PreToolUse", "run_command"));
    h.submit("test");
    h.sse(&tool_answer(&[(
        "c1",
        "run_command",
        r#"{"command":"npm test"}"#,
    )]));
    let due = h.due();
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "pnpm test"}}});
    h.answer_hooks(&due, vec![exited(0, &answer.to_string(), "")]);
    assert_eq!(h.runs.len(), 1);
    let args: Value = serde_json::from_str(&h.runs[0].arguments).unwrap();
    assert_eq!(args["command"], "pnpm test");
    let shown = h
        .events
        .iter()
        .filter(|e| matches!(e, Event::ToolCall { arguments, .. } if arguments.contains("pnpm")))
        .count();
    assert_eq!(shown, 1, "the new call is shown");
    // New arguments for `web_fetch` go through its checks again: not an object is impossible,
    // but a hook cannot smuggle a call past the read-only policy.
}

#[test]
fn allow_spares_the_question_ask_asks_and_read_only_still_wins() {
    let allow = json!({"hookSpecificOutput": {"permissionDecision": "allow"}}).to_string();
    let mut h = with_hooks(ApprovalPolicy::Ask, one("PreToolUse", ""));
    h.submit("go");
    h.sse(&tool_answer(&[(
        "c1",
        "run_command",
        r#"{"command":"ls"}"#,
    )]));
    let due = h.due();
    h.answer_hooks(&due, vec![exited(0, &allow, "")]);
    assert!(h.asks.is_empty());
    assert_eq!(h.runs.len(), 1);

    let ask = json!({"hookSpecificOutput": {"permissionDecision": "ask"}}).to_string();
    let mut h = with_hooks(ApprovalPolicy::Auto, one("PreToolUse", ""));
    h.submit("go");
    h.sse(&tool_answer(&[("c1", "read_file", r#"{"path":"a"}"#)]));
    let due = h.due();
    h.answer_hooks(&due, vec![exited(0, &ask, "")]);
    assert!(h.runs.is_empty());
    assert_eq!(h.asks.len(), 1);

    let mut h = with_hooks(ApprovalPolicy::ReadOnly, one("PreToolUse", ""));
    h.submit("go");
    h.sse(&tool_answer(&[(
        "c1",
        "run_command",
        r#"{"command":"ls"}"#,
    )]));
    assert!(
        h.hooks.is_empty(),
        "a refused call never reaches a hook that could allow it"
    );
    assert_eq!(h.results()[0].1, ToolStatus::DeniedByPolicy);
}

#[test]
fn post_tool_use_context_reaches_the_next_request() {
    let hooks = json!({"PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "h"}]}]});
    let mut h = with_hooks(ApprovalPolicy::Auto, hooks);
    h.submit("read");
    h.sse(&tool_answer(&[("c1", "read_file", r#"{"path":"a.txt"}"#)]));
    h.output("c1", "file text");
    assert_eq!(h.sent.len(), 1, "the result waits for its hooks");
    let due = h.due();
    assert_eq!(due.event, HookEvent::PostToolUse);
    let input = H::input(&due);
    assert_eq!(input["tool_input"]["file_path"], "a.txt");
    assert_eq!(input["tool_response"]["output"], "file text");
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "a.txt is generated; edit a.in"}});
    h.answer_hooks(&due, vec![exited(0, &answer.to_string(), "")]);
    assert_eq!(h.sent.len(), 2);
    assert!(last_request_text(&h).contains("a.txt is generated; edit a.in"));
}

#[test]
fn post_tool_use_failure_is_its_own_event() {
    let hooks = json!({"PostToolUseFailure": [{"hooks": [{"type": "command", "command": "h"}]}]});
    let mut h = with_hooks(ApprovalPolicy::Auto, hooks);
    h.submit("read");
    h.sse(&tool_answer(&[("c1", "read_file", r#"{"path":"a.txt"}"#)]));
    h.output("c1", "fine");
    assert!(h.hooks.is_empty(), "a success is not a failure");
    let mut h = with_hooks(
        ApprovalPolicy::Auto,
        json!({"PostToolUseFailure": [{"hooks": [{"type": "command", "command": "h"}]}]}),
    );
    h.submit("read");
    h.sse(&tool_answer(&[("c1", "read_file", r#"{"path":"a.txt"}"#)]));
    h.s.handle_tool_output(h.now, "c1", crate::tool::ToolOutput::error("no such file"))
        .unwrap();
    h.drain();
    let due = h.due();
    assert_eq!(H::input(&due)["error"], "no such file");
    h.answer_hooks(&due, vec![exited(2, "", "try a.in")]);
    assert!(last_request_text(&h).contains("try a.in"));
}

#[test]
fn user_prompt_submit_exit_2_sends_nothing() {
    let mut h = with_hooks(ApprovalPolicy::Auto, one("UserPromptSubmit", ""));
    h.submit("deploy to prod");
    assert!(h.sent.is_empty());
    let due = h.due();
    assert_eq!(H::input(&due)["prompt"], "deploy to prod");
    h.answer_hooks(&due, vec![exited(2, "", "no deploys on Friday")]);
    assert!(h.sent.is_empty(), "no request is sent");
    assert!(
        h.s.messages().is_empty(),
        "the prompt is not in the history"
    );
    match h.finals()[..] {
        [
            Event::TurnFailed {
                error: TurnError::HookBlocked { reason, .. },
            },
        ] => {
            assert_eq!(reason, "no deploys on Friday")
        }
        ref other => panic!("{other:?}"),
    }
    assert!(h.s.is_idle());
}

#[test]
fn session_start_and_prompt_context_reach_the_model_once() {
    let hooks = json!({
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "a"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "b"}]}]
    });
    let mut h = with_hooks(ApprovalPolicy::Auto, hooks);
    h.submit("fix the bug");
    let due = h.due();
    assert_eq!(due.event, HookEvent::SessionStart);
    assert_eq!(H::input(&due)["source"], "startup");
    h.answer_hooks(&due, vec![exited(0, "branch: main", "")]);
    let due = h.due();
    assert_eq!(due.event, HookEvent::UserPromptSubmit);
    h.answer_hooks(&due, vec![exited(0, "ticket ABC-1: login fails", "")]);
    let body = last_request_text(&h);
    assert!(
        body.contains("branch: main") && body.contains("ticket ABC-1"),
        "{body}"
    );
    h.sse(&text_answer("done"));
    h.submit("again");
    let due = h.due();
    assert_eq!(
        due.event,
        HookEvent::UserPromptSubmit,
        "SessionStart runs once"
    );
}

#[test]
fn a_stop_hook_that_blocks_twice_then_allows_keeps_the_turn_going_twice() {
    let mut h = with_hooks(ApprovalPolicy::Auto, one("Stop", ""));
    h.submit("make the tests pass");
    for round in 0..3 {
        h.sse(&text_answer("done"));
        let due = h.due();
        assert_eq!(due.event, HookEvent::Stop);
        assert_eq!(H::input(&due)["stop_hook_active"], round > 0);
        if round < 2 {
            let answer = json!({"decision": "block", "reason": "2 tests fail"});
            h.answer_hooks(&due, vec![exited(0, &answer.to_string(), "")]);
            assert!(h.finals().is_empty());
            assert!(last_request_text(&h).contains("2 tests fail"));
        } else {
            h.answer_hooks(&due, vec![exited(0, "", "")]);
        }
    }
    assert_eq!(h.sent.len(), 3);
    assert!(matches!(h.finals()[..], [Event::TurnFinished { .. }]));
}

#[test]
fn a_stop_hook_keeps_a_turn_going_at_most_eight_times_in_a_row() {
    let mut h = with_hooks(ApprovalPolicy::Auto, one("Stop", ""));
    h.submit("loop");
    let mut blocks = 0;
    loop {
        h.sse(&text_answer("done"));
        if !h.finals().is_empty() {
            break;
        }
        let due = h.due();
        h.answer_hooks(&due, vec![exited(2, "", "not yet")]);
        blocks += 1;
    }
    assert_eq!(blocks, 8);
    assert!(matches!(h.finals()[..], [Event::TurnFinished { .. }]));
}

#[test]
fn a_subagents_stop_is_subagent_stop() {
    let mut c = config(ApprovalPolicy::Auto);
    let (hooks, _) = Hooks::parse(
        &one("SubagentStop", ""),
        &HookSource::User("config.json".into()),
    );
    c.hooks.hooks = Arc::new(hooks);
    c.hooks.role = AgentRole::Subagent;
    let mut h = H::new(c);
    h.submit("explore");
    h.sse(&text_answer("found it"));
    let due = h.due();
    assert_eq!(due.event, HookEvent::SubagentStop);
    assert_eq!(H::input(&due)["hook_event_name"], "SubagentStop");
}

#[test]
fn permission_request_hooks_answer_instead_of_the_user_and_notification_hears_of_a_question() {
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}});
    let mut h = with_hooks(ApprovalPolicy::Ask, one("PermissionRequest", "Bash"));
    h.submit("go");
    h.sse(&tool_answer(&[(
        "c1",
        "run_command",
        r#"{"command":"ls"}"#,
    )]));
    assert!(h.asks.is_empty(), "the hook is asked first");
    let due = h.due();
    h.answer_hooks(&due, vec![exited(0, &allow.to_string(), "")]);
    assert!(h.asks.is_empty());
    assert_eq!(h.runs.len(), 1);

    let hooks = json!({
        "PermissionRequest": [{"hooks": [{"type": "command", "command": "p"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "n"}]}]
    });
    let mut h = with_hooks(ApprovalPolicy::Ask, hooks);
    h.submit("go");
    h.sse(&tool_answer(&[(
        "c1",
        "run_command",
        r#"{"command":"ls"}"#,
    )]));
    let due = h.due();
    h.answer_hooks(&due, vec![exited(0, "", "")]);
    assert_eq!(h.asks.len(), 1, "no decision: the user is asked");
    let note = h.due();
    assert_eq!(note.event, HookEvent::Notification);
    assert_eq!(note.wait, HookWait::Background);
    assert!(
        H::input(&note)["message"]
            .as_str()
            .unwrap()
            .contains("Bash")
    );

    let deny =
        json!({"hookSpecificOutput": {"decision": {"behavior": "deny", "message": "not on main"}}});
    let mut h = with_hooks(ApprovalPolicy::Ask, one("PermissionRequest", ""));
    h.submit("go");
    h.sse(&tool_answer(&[(
        "c1",
        "run_command",
        r#"{"command":"ls"}"#,
    )]));
    let due = h.due();
    h.answer_hooks(&due, vec![exited(0, &deny.to_string(), "")]);
    assert!(h.asks.is_empty() && h.runs.is_empty());
    assert!(h.results()[0].2.contains("not on main"));
}

#[test]
fn continue_false_stops_the_run_after_the_calls() {
    let mut h = with_hooks(ApprovalPolicy::Auto, one("PreToolUse", ""));
    h.submit("go");
    h.sse(&tool_answer(&[("c1", "read_file", r#"{"path":"a"}"#)]));
    let due = h.due();
    let stop = json!({"continue": false, "stopReason": "budget spent"});
    h.answer_hooks(&due, vec![exited(0, &stop.to_string(), "")]);
    assert_eq!(h.sent.len(), 1, "no next request");
    match h.finals()[..] {
        [
            Event::TurnFailed {
                error: TurnError::HookStopped { reason, .. },
            },
        ] => assert_eq!(reason, "budget spent"),
        ref other => panic!("{other:?}"),
    }
}

#[test]
fn a_failing_hook_is_shown_and_the_run_goes_on() {
    let mut h = with_hooks(ApprovalPolicy::Auto, one("PreToolUse", ""));
    h.submit("go");
    h.sse(&tool_answer(&[("c1", "read_file", r#"{"path":"a"}"#)]));
    let due = h.due();
    let hung = HookRun {
        exit: HookExit::TimedOut,
        stdout: Vec::new(),
        stderr: Vec::new(),
        truncated: false,
        duration_ms: 5000,
    };
    h.answer_hooks(&due, vec![hung]);
    assert_eq!(h.runs.len(), 1);
    match h.events.iter().find(|e| matches!(e, Event::Hook { .. })) {
        Some(Event::Hook {
            outcome,
            message,
            duration_ms,
            call_id,
            ..
        }) => {
            assert_eq!(*outcome, crate::hooks::HookOutcome::Error);
            assert!(message.as_deref().unwrap().contains("did not finish"));
            assert_eq!(*duration_ms, 5000);
            assert_eq!(call_id.as_deref(), Some("c1"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn misuse_and_late_answers() {
    let mut h = with_hooks(ApprovalPolicy::Auto, one("PreToolUse", ""));
    h.submit("go");
    h.sse(&tool_answer(&[("c1", "read_file", r#"{"path":"a"}"#)]));
    let due = h.due();
    assert_eq!(
        h.s.handle_hooks(h.now, 99, vec![]),
        Err(SessionError::UnknownHooks(99))
    );
    assert!(matches!(
        h.s.handle_hooks(h.now, due.id, vec![]),
        Err(SessionError::HookCount {
            expected: 1,
            got: 0,
            ..
        })
    ));
    h.s.cancel();
    h.drain();
    assert!(matches!(h.finals()[..], [Event::TurnCancelled]));
    // Late: accepted and ignored.
    h.s.handle_hooks(h.now, due.id, vec![exited(0, "", "")])
        .unwrap();
    h.drain();
    assert!(h.s.is_idle());
}

#[test]
fn session_end_is_handed_to_the_owner() {
    let mut h = with_hooks(ApprovalPolicy::Auto, one("SessionEnd", ""));
    let due =
        h.s.end(crate::hooks::EndReason::PromptInputExit)
            .expect("a SessionEnd hook is configured");
    assert_eq!(H::input(&due)["reason"], "prompt_input_exit");
    h.s.handle_hooks(h.now, due.id, vec![exited(1, "", "disk full")])
        .unwrap();
    h.drain();
    assert_eq!(
        h.hook_events(),
        [("SessionEnd".to_owned(), crate::hooks::HookOutcome::Error)]
    );
    let mut plain = H::new(config(ApprovalPolicy::Auto));
    assert!(plain.s.end(crate::hooks::EndReason::Other).is_none());
}

#[test]
fn session_end_matchers_match_the_reason() {
    let mut h = with_hooks(ApprovalPolicy::Auto, one("SessionEnd", "clear"));
    assert!(h.s.end(crate::hooks::EndReason::Other).is_none());
    let due =
        h.s.end(crate::hooks::EndReason::Clear)
            .expect("matches clear");
    assert_eq!(H::input(&due)["reason"], "clear");
    assert_eq!(H::input(&due)["hook_event_name"], "SessionEnd");
}

#[test]
fn an_idle_prompt_is_a_notification_in_the_background() {
    let mut h = with_hooks(ApprovalPolicy::Ask, one("Notification", "idle_prompt"));
    let due =
        h.s.notify_idle()
            .expect("an idle_prompt hook is configured");
    assert_eq!(due.wait, crate::hooks::HookWait::Background);
    let input = H::input(&due);
    assert_eq!(input["notification_type"], "idle_prompt");
    assert_eq!(input["message"], "hrns is waiting for your input");
    assert_eq!(input["hook_event_name"], "Notification");
    // A block from a notification hook changes nothing: the session stays idle.
    h.s.handle_hooks(h.now, due.id, vec![exited(2, "", "no")])
        .unwrap();
    h.drain();
    assert!(h.s.is_idle());
    assert_eq!(h.hook_events().len(), 1);
    let mut other = with_hooks(
        ApprovalPolicy::Ask,
        one("Notification", "permission_prompt"),
    );
    assert!(other.s.notify_idle().is_none(), "the matcher is the type");
}

#[test]
fn the_provider_key_never_reaches_a_hook() {
    let mut h = with_hooks(ApprovalPolicy::Auto, one("PreToolUse", ""));
    h.submit("go");
    let args = format!(r#"{{"command":"echo {KEY}"}}"#);
    h.sse(&tool_answer(&[("c1", "run_command", &args)]));
    let due = h.due();
    assert!(!due.input.contains(KEY), "{}", due.input);
}

#[test]
fn post_tool_use_hooks_and_the_snapshot_after_a_call_are_both_awaited_in_either_order() {
    for snapshot_first in [true, false] {
        let hooks = json!({"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "h"}]}]});
        let mut c = config(ApprovalPolicy::Auto);
        c.hooks.hooks = Arc::new(Hooks::parse(&hooks, &HookSource::User("config.json".into())).0);
        c.checkpoints = crate::checkpoint::Checkpoints::On;
        let mut h = H::new(c);
        h.submit("write");
        h.sse(&tool_answer(&[(
            "w1",
            "write_file",
            r#"{"path":"a","content":"b"}"#,
        )]));
        let before = h
            .checkpoints
            .pop()
            .expect("the before snapshot is asked for");
        h.s.handle_checkpoint(
            h.now,
            before.id,
            crate::checkpoint::CheckpointOutcome::Failed { reason: "x".into() },
        );
        h.drain();
        h.output("w1", "written");
        let after = h
            .checkpoints
            .pop()
            .expect("the after snapshot is asked for");
        let due = h.due();
        assert_eq!(due.event, HookEvent::PostToolUse, "both run at once");
        let snapshot = |h: &mut H| {
            h.s.handle_checkpoint(
                h.now,
                after.id,
                crate::checkpoint::CheckpointOutcome::Failed { reason: "y".into() },
            );
            h.drain();
        };
        if snapshot_first {
            snapshot(&mut h);
            assert_eq!(h.sent.len(), 1, "the hooks are still awaited");
            h.answer_hooks(&due, vec![exited(0, "", "")]);
        } else {
            h.answer_hooks(&due, vec![exited(0, "", "")]);
            assert_eq!(h.sent.len(), 1, "the snapshot is still awaited");
            snapshot(&mut h);
        }
        assert_eq!(h.sent.len(), 2, "snapshot first: {snapshot_first}");
    }
}

/// "Never for this tool" denies the call, the same tool's other waiting calls and its later
/// calls without asking again, so `Notification` hooks hear of one question only; other
/// tools are still asked.
#[test]
fn never_this_tool_denies_its_later_calls_without_asking_or_notifying() {
    let mut h = with_hooks(
        ApprovalPolicy::Ask,
        one("Notification", "permission_prompt"),
    );
    h.submit("go");
    h.sse(&tool_answer(&[
        ("c1", "run_command", r#"{"command":"a"}"#),
        ("c2", "run_command", r#"{"command":"b"}"#),
        ("c3", "write_file", r#"{"path":"p","content":""}"#),
    ]));
    assert_eq!(h.asks.len(), 1);
    assert_eq!(h.due().event, HookEvent::Notification);
    h.s.handle_approval(h.now, "c1", Approval::NeverThisTool)
        .unwrap();
    h.drain();
    // c2 is denied with c1; the next question is about the other tool.
    let asked: Vec<_> = h.asks.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(asked, ["c1", "c3"]);
    assert_eq!(h.due().event, HookEvent::Notification, "asked about c3");
    h.s.handle_approval(h.now, "c3", Approval::Deny { reason: None })
        .unwrap();
    h.drain();
    let r = h.results();
    assert_eq!(r.len(), 3);
    for (id, status, text) in &r[..2] {
        assert_eq!(*status, ToolStatus::Denied, "{id}");
        assert!(text.contains("every later one"), "{id}: {text}");
    }
    assert!(h.runs.is_empty());
    // A later step's call of the tool is denied at once: no question, no notification.
    h.sse(&tool_answer(&[("c4", "run_command", r#"{"command":"c"}"#)]));
    assert_eq!(h.asks.len(), 2);
    assert!(h.hooks.is_empty(), "no permission_prompt for c4");
    assert!(
        !h.events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested { id, .. } if id == "c4"))
    );
    let r = h.results();
    let (_, status, text) = r.iter().find(|(id, ..)| id == "c4").unwrap();
    assert_eq!(*status, ToolStatus::Denied);
    assert!(text.contains("rest of this session"), "{text}");
    assert!(h.runs.is_empty());
}
