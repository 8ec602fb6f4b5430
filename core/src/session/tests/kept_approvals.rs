//! A host that builds a new session for the same conversation (another model, agent or
//! policy) carries the user's "always" and "never" answers over.

use super::*;

/// A finished first session: `run_command` always allowed, `write_file` never.
fn decided() -> H {
    let mut h = H::new(config(ApprovalPolicy::Ask));
    h.submit("x");
    h.sse(&tool_answer(&[
        ("c1", "run_command", r#"{"command":"a"}"#),
        ("c2", "write_file", r#"{"path":"p","content":""}"#),
    ]));
    h.s.handle_approval(h.now, "c1", Approval::AlwaysThisTool)
        .unwrap();
    h.drain();
    h.output("c1", "ok");
    h.s.handle_approval(h.now, "c2", Approval::NeverThisTool)
        .unwrap();
    h.drain();
    h.sse(&text_answer("done"));
    assert!(h.s.is_idle());
    h
}

/// The next session of the conversation, given `approvals` or not, asked to run both tools.
fn rebuilt(old: &H, approvals: Option<SessionApprovals>) -> H {
    let mut h = H::new(config(ApprovalPolicy::Ask));
    h.s = Session::with_history(config(ApprovalPolicy::Ask), old.s.messages().to_vec()).unwrap();
    if let Some(approvals) = approvals {
        h.s.keep_approvals(approvals);
    }
    h.submit("again");
    h.sse(&tool_answer(&[
        ("c3", "run_command", r#"{"command":"b"}"#),
        ("c4", "write_file", r#"{"path":"q","content":""}"#),
    ]));
    h
}

#[test]
fn a_rebuilt_session_keeps_always_and_never() {
    let old = decided();
    let approvals = old.s.approvals();
    assert_eq!(approvals.always().collect::<Vec<_>>(), ["run_command"]);
    assert_eq!(approvals.never().collect::<Vec<_>>(), ["write_file"]);

    let mut h = rebuilt(&old, Some(approvals));
    assert!(h.asks.is_empty(), "nothing is asked again: {:?}", h.asks);
    let ran: Vec<_> = h.runs.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(
        ran,
        ["c3"],
        "the always-allowed tool runs, the denied one does not"
    );
    let denied = h.results();
    assert_eq!(denied.len(), 1);
    assert_eq!(denied[0].0, "c4");
    assert_eq!(denied[0].1, ToolStatus::Denied);
    assert!(denied[0].2.contains("denied every `write_file` call"));
    h.output("c3", "ok");
    assert_eq!(
        h.s.approvals(),
        old.s.approvals(),
        "and it hands them on again"
    );
}

#[test]
fn without_them_the_new_session_asks_again() {
    let old = decided();
    let h = rebuilt(&old, None);
    assert!(h.runs.is_empty());
    assert_eq!(h.asks.len(), 1, "asks about c3 first");
    assert_eq!(h.asks[0].call_id, "c3");
    assert!(h.s.approvals().is_empty());
}

#[test]
fn never_wins_over_always_for_the_same_tool() {
    let mut h = H::new(config(ApprovalPolicy::Ask));
    let mut both = SessionApprovals::default();
    both.always.insert("run_command".into());
    both.never.insert("run_command".into());
    h.s.keep_approvals(both);
    let kept = h.s.approvals();
    assert_eq!(kept.always().count(), 0);
    assert_eq!(kept.never().collect::<Vec<_>>(), ["run_command"]);
    h.submit("x");
    h.sse(&tool_answer(&[("c1", "run_command", r#"{"command":"a"}"#)]));
    assert!(h.runs.is_empty() && h.asks.is_empty());
    assert_eq!(h.results()[0].1, ToolStatus::Denied);
}
