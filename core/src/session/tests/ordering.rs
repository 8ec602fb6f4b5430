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
