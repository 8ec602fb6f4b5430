//! Subagents' approval questions: they come out of the parent's own poll, are answered on the
//! parent's one approval path ([`Session::handle_answer`]), and the answer leaves as
//! [`Action::AnswerChild`]; a question whose parent call stopped is denied by the session, and
//! a late or unknown answer is a typed error.

use super::*;
use crate::task::ChildEvent;

fn child(parent: &str, event: Event) -> ChildEvent {
    ChildEvent {
        parent_call_id: parent.into(),
        agent: "Builder".into(),
        event,
    }
}

fn asks(id: &str) -> Event {
    Event::ApprovalRequested {
        id: id.into(),
        name: "write_file".into(),
        arguments: r#"{"path":"a","content":"x"}"#.into(),
    }
}

/// A session whose model called two read-only tools (stand-ins for `task` calls: the
/// session only needs them running), `t1` and `t2`.
fn two_running() -> H {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.sse(&tool_answer(&[
        ("t1", "read_file", r#"{"path":"a"}"#),
        ("t2", "read_file", r#"{"path":"b"}"#),
    ]));
    assert_eq!(h.runs.len(), 2, "both run at once");
    h
}

fn question(h: &H, event: &Event) -> Question {
    Question::pending_in(&h.s, event).expect("the question is pending")
}

#[test]
fn a_childs_question_comes_out_of_the_parents_poll_in_order_and_its_answer_goes_back() {
    let mut h = two_running();
    let before = h.events.len();
    h.s.handle_child_event(child("t1", Event::TurnStarted { turn: 1 }));
    h.s.handle_child_event(child("t1", asks("w1")));
    h.drain();
    let out = &h.events[before..];
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[1], Event::Child(Box::new(child("t1", asks("w1")))));
    assert!(Question::asked_by(&out[1]) && !Question::asked_by(&out[0]));
    let q = question(&h, &out[1].clone());
    assert_eq!(q.agent(), Some("Builder"));
    assert_eq!((q.call_id(), q.name()), ("w1", "write_file"));
    // The session's own question path is untouched: it asked nothing.
    assert!(h.s.asked().is_none());
    // "Always" keeps its meaning: it goes to the child's session as it is.
    h.s.handle_answer(h.now, &q, Approval::AlwaysThisTool)
        .unwrap();
    h.drain();
    assert_eq!(
        h.child_answers,
        [("t1".into(), "w1".into(), Approval::AlwaysThisTool)]
    );
    assert!(h.s.child_questions().is_empty());
    // Answered once: a second answer is late, a typed error, and nothing goes out.
    let again = h.s.handle_answer(h.now, &q, Approval::Once);
    assert!(
        matches!(&again, Err(SessionError::UnknownChildQuestion { parent_call_id, call_id })
            if parent_call_id == "t1" && call_id == "w1"),
        "{again:?}"
    );
    h.drain();
    assert_eq!(h.child_answers.len(), 1);
    // The turn goes on as before.
    h.output("t1", "a");
    h.output("t2", "b");
    h.sse(&text_answer("done"));
    assert!(matches!(h.finals()[..], [Event::TurnFinished { .. }]));
}

#[test]
fn two_children_asking_at_once_are_answered_each_by_its_own_key() {
    let mut h = two_running();
    h.s.handle_child_event(child("t1", asks("w1")));
    // The same child call id in another child is another question.
    h.s.handle_child_event(child("t2", asks("w1")));
    h.drain();
    assert_eq!(h.s.child_questions().len(), 2);
    let second = Question::Child(h.s.child_questions()[1].clone());
    let first = Question::Child(h.s.child_questions()[0].clone());
    h.s.handle_answer(h.now, &second, Approval::OnceUnsandboxed)
        .unwrap();
    h.s.handle_answer(
        h.now,
        &first,
        Approval::Deny {
            reason: Some("no".into()),
        },
    )
    .unwrap();
    h.drain();
    assert_eq!(
        h.child_answers,
        [
            ("t2".into(), "w1".into(), Approval::OnceUnsandboxed),
            (
                "t1".into(),
                "w1".into(),
                Approval::Deny {
                    reason: Some("no".into())
                }
            ),
        ]
    );
}

#[test]
fn cancelling_the_turn_denies_pending_child_questions_and_later_answers_are_errors() {
    let mut h = two_running();
    h.s.handle_child_event(child("t1", asks("w1")));
    h.s.handle_child_event(child("t2", asks("w2")));
    h.drain();
    let q = Question::Child(h.s.child_questions()[0].clone());
    h.s.cancel();
    h.drain();
    assert!(h.s.child_questions().is_empty(), "nothing is left pending");
    let denied = Approval::Deny {
        reason: Some(PARENT_STOPPED.into()),
    };
    assert_eq!(
        h.child_answers,
        [
            ("t1".into(), "w1".into(), denied.clone()),
            ("t2".into(), "w2".into(), denied),
        ]
    );
    assert_eq!(h.aborts, ["t1", "t2"]);
    assert!(matches!(
        h.s.handle_answer(h.now, &q, Approval::Once),
        Err(SessionError::UnknownChildQuestion { .. })
    ));
    // A stopped child's late events (its question among them) still come out; the question
    // is denied at once, never pending.
    let before = h.child_answers.len();
    h.s.handle_child_event(child("t1", asks("w3")));
    h.drain();
    assert!(h.s.child_questions().is_empty());
    assert_eq!(h.child_answers.len(), before + 1);
    assert!(h.s.is_idle());
}

#[test]
fn a_question_whose_task_ends_or_times_out_is_denied_and_the_others_stay() {
    let mut c = config(ApprovalPolicy::Auto);
    c.tool_timeout = Some(Duration::from_secs(5));
    let mut h = H::new(c);
    h.submit("x");
    h.sse(&tool_answer(&[
        ("t1", "read_file", r#"{"path":"a"}"#),
        ("t2", "read_file", r#"{"path":"b"}"#),
    ]));
    h.s.handle_child_event(child("t1", asks("w1")));
    h.s.handle_child_event(child("t2", asks("w2")));
    // t1 ends (its child crashed out without an answer): its question goes.
    h.output("t1", "a");
    assert_eq!(h.s.child_questions().len(), 1);
    assert_eq!(h.s.child_questions()[0].parent_call_id, "t2");
    // t2 times out: its child is stopped, its question denied.
    h.s.handle_timeout(h.now + Duration::from_secs(6));
    h.drain();
    assert!(h.s.child_questions().is_empty());
    let parents: Vec<&str> = h.child_answers.iter().map(|a| a.0.as_str()).collect();
    assert_eq!(parents, ["t1", "t2"]);
}

#[test]
fn an_answer_to_a_question_never_asked_is_a_typed_error_and_sends_nothing() {
    let mut h = two_running();
    let never = Question::Child(ChildQuestion {
        parent_call_id: "t1".into(),
        agent: "Builder".into(),
        call_id: "nope".into(),
        name: "write_file".into(),
        arguments: "{}".into(),
    });
    let e =
        h.s.handle_answer(h.now, &never, Approval::Once)
            .unwrap_err();
    assert!(e.to_string().contains("`nope`"), "{e}");
    // Not a parent's question either: the session's own path says so.
    assert!(matches!(
        h.s.handle_child_approval("t9", "w1", Approval::Once),
        Err(SessionError::UnknownChildQuestion { .. })
    ));
    h.drain();
    assert!(h.child_answers.is_empty());
    assert!(h.s.child_questions().is_empty());
}

#[test]
fn the_ledger_hands_a_childs_answer_to_the_driver() {
    let mut h = two_running();
    let mut ledger = Ledger::default();
    h.s.handle_child_event(child("t1", asks("w1")));
    let (mut events, mut work) = (Vec::new(), Vec::new());
    ledger.step(&mut h.s, &mut events, &mut work);
    let q = events
        .iter()
        .find_map(|e| Question::pending_in(&h.s, e))
        .expect("asked");
    ledger
        .handle_answer(&mut h.s, h.now, None, &q, Approval::Once)
        .unwrap();
    work.clear();
    ledger.step(&mut h.s, &mut events, &mut work);
    assert_eq!(
        work,
        [Work::AnswerChild {
            parent_call_id: "t1".into(),
            call_id: "w1".into(),
            approval: Approval::Once,
        }]
    );
}
