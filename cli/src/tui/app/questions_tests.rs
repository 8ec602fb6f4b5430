//! The subagent-approval ordering (the fix of 660cdc2): a child's question on screen when
//! the session asks its next one survives, and comes back after it.

use super::*;
use crate::sandbox::escalate::Unsandboxed;
use hrns_core::session::{Approval, ToolRun};
use hrns_core::tool::Effect;
use tokio::sync::oneshot;

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
        run: run(id, path),
        unsandboxed: Unsandboxed::NotOffered,
        reason: false,
        from: Asker::Session,
    }
}

/// A child's question, and where its answer arrives.
fn childs(id: &str) -> (ChildAsk, oneshot::Receiver<Approval>) {
    let (reply, answer) = oneshot::channel();
    let ask = ChildAsk {
        agent: "Builder".into(),
        run: run(id, "out.txt"),
        reply,
    };
    (ask, answer)
}

fn shown_id(asking: &Option<Asking>) -> Option<&str> {
    asking.as_ref().map(|a| a.run.call_id.as_str())
}

/// Answers the question on screen as the UI does: the child's answer goes back to it.
fn answer(asking: &mut Option<Asking>) {
    match asking.take().expect("a question on screen").from {
        Asker::Session => {}
        Asker::Child { reply, .. } => reply.send(Approval::Once).expect("the child listens"),
    }
}

#[test]
fn a_childs_question_on_screen_survives_the_sessions_next_question() {
    let (mut asking, mut waiting) = (None, VecDeque::new());
    let (ask, mut answer_rx) = childs("w1");
    waiting.push_back(ask);
    // Nothing else is asked: the child's question is shown.
    assert!(show_next_child(&mut asking, &mut waiting, false, true));
    assert_eq!(shown_id(&asking), Some("w1"));
    // The session asks (its question event arrives while the child's is on screen).
    show_sessions(&mut asking, &mut waiting, sessions("wb", "b.txt"));
    assert_eq!(shown_id(&asking), Some("wb"));
    assert_eq!(waiting.len(), 1, "the child's question waits");
    assert!(
        matches!(
            answer_rx.try_recv(),
            Err(oneshot::error::TryRecvError::Empty)
        ),
        "the child's call is neither answered nor denied"
    );
    answer(&mut asking);
    assert!(show_next_child(&mut asking, &mut waiting, false, true));
    assert_eq!(shown_id(&asking), Some("w1"));
    answer(&mut asking);
    assert_eq!(answer_rx.try_recv().ok(), Some(Approval::Once));
}

#[test]
fn a_childs_question_waits_while_the_session_has_one_pending() {
    let (mut asking, mut waiting) = (Some(sessions("wa", "a.txt")), VecDeque::new());
    let (ask, mut answer_rx) = childs("w1");
    waiting.push_back(ask);
    assert!(!show_next_child(&mut asking, &mut waiting, false, true));
    // The answer to the session's question queued its next one, not yet on screen.
    answer(&mut asking);
    assert!(!show_next_child(&mut asking, &mut waiting, true, true));
    assert_eq!(shown_id(&asking), None);
    show_sessions(&mut asking, &mut waiting, sessions("wb", "b.txt"));
    answer(&mut asking);
    assert!(show_next_child(&mut asking, &mut waiting, false, true));
    answer(&mut asking);
    assert_eq!(answer_rx.try_recv().ok(), Some(Approval::Once));
}

#[test]
fn questions_of_children_that_stopped_or_of_an_ended_turn_are_dropped() {
    let (mut asking, mut waiting) = (None, VecDeque::new());
    let (gone, answer_rx) = childs("w1");
    drop(answer_rx);
    let (listening, _answer_rx) = childs("w2");
    waiting.extend([gone, listening]);
    assert!(show_next_child(&mut asking, &mut waiting, false, true));
    assert_eq!(shown_id(&asking), Some("w2"));
    let (late, _late_rx) = childs("w3");
    waiting.push_back(late);
    asking = None;
    assert!(!show_next_child(&mut asking, &mut waiting, false, false));
    assert!(waiting.is_empty());
}
