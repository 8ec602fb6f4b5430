//! The subagent-approval ordering (the fix of 660cdc2): a child's question on screen when
//! the session asks its next one survives, and comes back after it; a question the session no
//! longer waits for is not shown.

use super::*;
use crate::sandbox::escalate::Unsandboxed;
use hrns_core::session::ToolRun;
use hrns_core::tool::Effect;

fn run(id: &str, path: &str) -> ToolRun {
    ToolRun {
        call_id: id.into(),
        name: "write_file".into(),
        arguments: format!(r#"{{"path":"{path}","content":"x"}}"#),
        effect: Effect::Write,
        confinement: Default::default(),
    }
}

fn sessions(id: &str, path: &str) -> Asking {
    Asking {
        question: Question::Call(run(id, path)),
        unsandboxed: Unsandboxed::NotOffered,
        reason: false,
    }
}

/// A child's question.
fn childs(id: &str) -> ChildQuestion {
    ChildQuestion {
        parent_call_id: "t1".into(),
        agent: "Builder".into(),
        call_id: id.into(),
        name: "write_file".into(),
        arguments: r#"{"path":"out.txt","content":"x"}"#.into(),
    }
}

fn shown_id(asking: &Option<Asking>) -> Option<&str> {
    asking.as_ref().map(|a| a.question.call_id())
}

/// Answers the question on screen; returns whose it was.
fn answer(asking: &mut Option<Asking>) -> String {
    let ask = asking.take().expect("a question on screen");
    ask.question.call_id().to_owned()
}

#[test]
fn a_childs_question_on_screen_survives_the_sessions_next_question() {
    let (mut asking, mut waiting) = (None, VecDeque::new());
    let pending = [childs("w1")];
    waiting.push_back(childs("w1"));
    // Nothing else is asked: the child's question is shown.
    assert!(show_next_child(&mut asking, &mut waiting, false, &pending));
    assert_eq!(shown_id(&asking), Some("w1"));
    // The session asks (its question event arrives while the child's is on screen).
    show_sessions(&mut asking, &mut waiting, sessions("wb", "b.txt"));
    assert_eq!(shown_id(&asking), Some("wb"));
    assert_eq!(waiting.len(), 1, "the child's question waits");
    assert_eq!(answer(&mut asking), "wb");
    assert!(show_next_child(&mut asking, &mut waiting, false, &pending));
    assert_eq!(shown_id(&asking), Some("w1"));
    assert_eq!(answer(&mut asking), "w1");
}

#[test]
fn a_childs_question_waits_while_the_session_has_one_pending() {
    let (mut asking, mut waiting) = (Some(sessions("wa", "a.txt")), VecDeque::new());
    let pending = [childs("w1")];
    waiting.push_back(childs("w1"));
    assert!(!show_next_child(&mut asking, &mut waiting, false, &pending));
    // The answer to the session's question queued its next one, not yet on screen.
    answer(&mut asking);
    assert!(!show_next_child(&mut asking, &mut waiting, true, &pending));
    assert_eq!(shown_id(&asking), None);
    show_sessions(&mut asking, &mut waiting, sessions("wb", "b.txt"));
    answer(&mut asking);
    assert!(show_next_child(&mut asking, &mut waiting, false, &pending));
    assert_eq!(answer(&mut asking), "w1");
}

#[test]
fn questions_the_session_no_longer_waits_for_are_dropped() {
    let (mut asking, mut waiting) = (None, VecDeque::new());
    // w1's task stopped (the session denied it): only w2 is pending.
    waiting.extend([childs("w1"), childs("w2")]);
    assert!(show_next_child(
        &mut asking,
        &mut waiting,
        false,
        &[childs("w2")]
    ));
    assert_eq!(shown_id(&asking), Some("w2"));
    waiting.push_back(childs("w3"));
    asking = None;
    // The turn ended: nothing is pending.
    assert!(!show_next_child(&mut asking, &mut waiting, false, &[]));
    assert!(waiting.is_empty());
}
