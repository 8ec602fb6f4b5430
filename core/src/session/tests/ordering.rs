//! The tool-call path's policies: effects in the model's order, deadlines, nobody to ask,
//! tools the driver lacks.

use super::*;

fn ids(runs: &[ToolRun]) -> Vec<&str> {
    runs.iter().map(|r| r.call_id.as_str()).collect()
}

#[test]
fn effects_run_in_the_models_order() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.sse(&tool_answer(&[
        ("r1", "read_file", r#"{"path":"a"}"#),
        ("r2", "read_file", r#"{"path":"b"}"#),
        ("w1", "edit_file", r#"{"path":"a","old":"x","new":"y"}"#),
        ("w2", "edit_file", r#"{"path":"a","old":"y","new":"z"}"#),
        ("r3", "read_file", r#"{"path":"a"}"#),
    ]));
    assert_eq!(ids(&h.runs), ["r1", "r2"], "reads overlap; the edit waits");
    h.output("r2", "b");
    assert_eq!(ids(&h.runs), ["r1", "r2"]);
    h.output("r1", "a");
    assert_eq!(ids(&h.runs), ["r1", "r2", "w1"], "the edit runs alone");
    h.output("w1", "edited");
    assert_eq!(ids(&h.runs), ["r1", "r2", "w1", "w2"]);
    h.output("w2", "edited");
    assert_eq!(
        ids(&h.runs),
        ["r1", "r2", "w1", "w2", "r3"],
        "the read sees both edits"
    );
    h.output("r3", "z");
    assert_eq!(h.sent.len(), 2);
}

#[test]
fn a_running_call_past_its_deadline_is_aborted_and_answered() {
    let mut c = config(ApprovalPolicy::Auto);
    c.tool_timeout = Some(Duration::from_secs(2));
    let mut h = H::new(c);
    h.submit("x");
    h.sse(&tool_answer(&[("c1", "read_file", r#"{"path":"a"}"#)]));
    let deadline = h.s.poll_timeout().expect("a running call has a deadline");
    assert_eq!(deadline, h.now + Duration::from_secs(2));
    h.s.handle_timeout(h.now + Duration::from_secs(1));
    h.drain();
    assert!(h.aborts.is_empty());
    h.s.handle_timeout(deadline);
    h.drain();
    assert_eq!(h.aborts, ["c1"]);
    assert_eq!(h.sent.len(), 2, "the turn goes on");
    let body = h.body(1);
    let answered = body.messages.last().unwrap().text();
    assert!(answered.contains("did not finish within 2 s"), "{answered}");
    // Its output, when it comes after all, is late: ignored.
    assert_eq!(
        h.s.handle_tool_output(h.now, "c1", ToolOutput::ok("late")),
        Ok(())
    );
    h.drain();
    assert_eq!(h.sent.len(), 2);
}

#[test]
fn cancel_aborts_running_calls() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.sse(&tool_answer(&[
        ("c1", "read_file", r#"{"path":"a"}"#),
        ("c2", "run_command", r#"{"command":"ls"}"#),
    ]));
    h.s.cancel();
    h.drain();
    assert_eq!(h.aborts, ["c1"], "only the call that was running");
    assert_eq!(h.events.last(), Some(&Event::TurnCancelled));
}

#[test]
fn nobody_to_ask_denies_with_the_sessions_words() {
    let mut h = H::new(config(ApprovalPolicy::Ask));
    h.submit("x");
    h.sse(&tool_answer(&[(
        "c1",
        "run_command",
        r#"{"command":"ls"}"#,
    )]));
    h.s.handle_approval(h.now, "c1", Approval::Unattended)
        .unwrap();
    h.drain();
    let r = h.results();
    assert_eq!(r[0].1, ToolStatus::Denied);
    assert!(
        r[0].2.contains("nobody is there to approve it"),
        "{}",
        r[0].2
    );
    assert_eq!(h.sent.len(), 2);
}

#[test]
fn a_tool_the_driver_lacks_is_reported_to_the_model() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.sse(&tool_answer(&[("c1", "read_file", r#"{"path":"a"}"#)]));
    h.s.handle_tool_unavailable(h.now, "c1", "read_file")
        .unwrap();
    h.drain();
    let r = h.results();
    assert_eq!(r[0].1, ToolStatus::Error);
    assert!(
        r[0].2.contains("`read_file` is not available"),
        "{}",
        r[0].2
    );
    // An id never issued is misuse.
    assert_eq!(
        h.s.handle_tool_unavailable(h.now, "zz", "read_file"),
        Err(SessionError::UnknownCall("zz".into()))
    );
}

fn with_subagents(policy: ApprovalPolicy) -> SessionConfig {
    let mut c = config(policy);
    let agents = crate::agent::builtin_agents();
    c.subagents = Some(crate::task::Subagents {
        agents: agents.clone(),
        tools: builtin_specs(),
        parent: None,
    });
    c.tools.push(crate::task::task_spec(&agents));
    c
}

#[test]
fn read_only_children_overlap_and_a_writing_child_runs_alone() {
    let mut h = H::new(with_subagents(ApprovalPolicy::Ask));
    h.submit("x");
    h.sse(&tool_answer(&[
        ("t1", "task", r#"{"description":"a","prompt":"look at a"}"#),
        (
            "t2",
            "task",
            r#"{"description":"b","prompt":"look at b","agent":"Planner"}"#,
        ),
        (
            "t3",
            "task",
            r#"{"description":"c","prompt":"fix c","agent":"Builder"}"#,
        ),
        ("r1", "read_file", r#"{"path":"c"}"#),
    ]));
    assert!(h.asks.is_empty(), "a task call is not asked about itself");
    assert_eq!(
        ids(&h.runs),
        ["t1", "t2"],
        "two explorers at once; the builder waits"
    );
    assert_eq!(h.runs[0].effect, Effect::ReadOnly);
    h.output("t1", "a is fine");
    assert_eq!(ids(&h.runs), ["t1", "t2"]);
    h.output("t2", "plan for b");
    assert_eq!(ids(&h.runs), ["t1", "t2", "t3"], "the builder runs alone");
    assert_eq!(h.runs[2].effect, Effect::Exec);
    h.output("t3", "fixed c");
    assert_eq!(
        ids(&h.runs),
        ["t1", "t2", "t3", "r1"],
        "the read sees the fix"
    );
}

#[test]
fn without_subagents_a_task_call_is_ordered_as_its_spec_says() {
    let mut c = with_subagents(ApprovalPolicy::Auto);
    c.subagents = None;
    let mut h = H::new(c);
    h.submit("x");
    h.sse(&tool_answer(&[
        (
            "t1",
            "task",
            r#"{"description":"a","prompt":"a","agent":"Builder"}"#,
        ),
        ("t2", "task", r#"{"description":"b","prompt":"b"}"#),
    ]));
    assert_eq!(ids(&h.runs), ["t1", "t2"]);
}

#[test]
fn a_childs_usage_counts_in_the_turn_and_the_session() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.sse(&tool_answer(&[("c1", "read_file", r#"{"path":"a"}"#)]));
    let child = crate::wire::Usage {
        prompt_tokens: Some(100),
        completion_tokens: Some(7),
        total_tokens: Some(107),
        extra: Default::default(),
    };
    h.s.add_child_usage(&child);
    h.output("c1", "a");
    h.sse(&text_answer("done"));
    // The text answer reports 10 prompt and 5 completion tokens; the tool answer none.
    assert_eq!(h.s.usage().prompt, 110);
    match h.finals()[0] {
        Event::TurnFinished { usage, .. } => {
            assert_eq!(usage.as_ref().and_then(|u| u.completion_tokens), Some(12))
        }
        other => panic!("{other:?}"),
    }
}

/// A child's events handed to the parent come out of the parent's own poll, in order, as
/// `Event::Child`; its usage counts in the turn and the session on the way, through the same
/// input (no second path); a late one after the turn still comes out and still counts.
#[test]
fn a_childs_events_come_out_of_the_parents_poll_and_its_usage_counts() {
    use crate::task::ChildEvent;
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.sse(&tool_answer(&[("c1", "read_file", r#"{"path":"a"}"#)]));
    let child = |event| ChildEvent {
        parent_call_id: "c1".into(),
        agent: "Explorer".into(),
        event,
    };
    let used = crate::wire::Usage {
        prompt_tokens: Some(100),
        completion_tokens: Some(7),
        total_tokens: Some(107),
        extra: Default::default(),
    };
    let before = h.events.len();
    h.s.handle_child_event(child(Event::TurnStarted { turn: 1 }));
    h.s.handle_child_event(child(Event::Usage {
        usage: Box::new(used.clone()),
    }));
    h.s.handle_child_event(child(Event::TurnFinished {
        finish_reason: None,
        usage: None,
        output: None,
    }));
    h.drain();
    let out: Vec<&Event> = h.events[before..].iter().collect();
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(
        *out[0],
        Event::Child(Box::new(child(Event::TurnStarted { turn: 1 })))
    );
    assert!(matches!(out[1], Event::Child(c) if matches!(c.event, Event::Usage { .. })));
    // The child's end is not the parent's.
    assert!(h.finals().is_empty());
    h.output("c1", "a");
    h.sse(&text_answer("done"));
    // The text answer reports 10 prompt and 5 completion tokens; the tool answer none.
    assert_eq!(h.s.usage().prompt, 110);
    match h.finals()[0] {
        Event::TurnFinished { usage, .. } => {
            assert_eq!(usage.as_ref().and_then(|u| u.completion_tokens), Some(12))
        }
        other => panic!("{other:?}"),
    }
    // A stopped child's last tokens and final event, after the turn.
    let before = h.events.len();
    h.s.handle_child_event(child(Event::Usage {
        usage: Box::new(used),
    }));
    h.s.handle_child_event(child(Event::TurnCancelled));
    h.drain();
    assert_eq!(h.s.usage().prompt, 210);
    assert_eq!(h.events.len() - before, 2);
    assert!(h.s.is_idle());
}
