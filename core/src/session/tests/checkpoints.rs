//! Checkpoints: the session asks for a snapshot before a turn's first call that may change
//! files and after each such call, and waits for it.

use super::*;
use crate::checkpoint::{CheckpointOutcome, Checkpoints, Moment};

fn with_checkpoints() -> H {
    let mut c = config(ApprovalPolicy::Auto);
    c.checkpoints = Checkpoints::On;
    H::new(c)
}

fn taken(h: &mut H, changed: &[&str]) {
    let due = h
        .checkpoints
        .last()
        .expect("a checkpoint was asked for")
        .clone();
    h.s.handle_checkpoint(
        h.now,
        due.id,
        CheckpointOutcome::Taken {
            id: format!("c{}", due.id),
            changed: changed.iter().map(|c| (*c).to_owned()).collect(),
            skipped: Vec::new(),
        },
    );
    h.drain();
}

fn recorded(h: &H) -> Vec<(Moment, u64, u32, Vec<String>)> {
    h.events
        .iter()
        .filter_map(|e| match e {
            Event::Checkpoint {
                moment,
                turn,
                step,
                changed,
                ..
            } => Some((*moment, *turn, *step, changed.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_write_waits_for_the_before_checkpoint_and_the_next_request_for_the_after_one() {
    let mut h = with_checkpoints();
    h.submit("x");
    h.sse(&tool_answer(&[
        ("r1", "read_file", r#"{"path":"a"}"#),
        ("w1", "write_file", r#"{"path":"a","content":"b"}"#),
        (
            "w2",
            "edit_file",
            r#"{"path":"a","old_string":"b","new_string":"c"}"#,
        ),
    ]));
    // The read runs; the write waits for it, then for the snapshot of the state before.
    assert_eq!(h.runs.len(), 1);
    assert!(h.checkpoints.is_empty());
    h.output("r1", "text");
    assert_eq!(h.checkpoints.len(), 1);
    assert_eq!(h.checkpoints[0].moment, Moment::BeforeTurn);
    assert_eq!(h.runs.len(), 1, "the write waits for the snapshot");
    taken(&mut h, &[]);
    assert_eq!(h.runs.last().unwrap().call_id, "w1");
    h.output("w1", "written");
    assert_eq!(h.checkpoints.len(), 2);
    assert_eq!(h.checkpoints[1].moment, Moment::AfterCall);
    assert_eq!(
        h.runs.len(),
        2,
        "the next write waits for the snapshot after this one"
    );
    taken(&mut h, &["a"]);
    assert_eq!(h.runs.last().unwrap().call_id, "w2");
    h.output("w2", "edited");
    assert_eq!(
        h.sent.len(),
        1,
        "no request before the snapshot after the last call"
    );
    taken(&mut h, &["a"]);
    assert_eq!(h.sent.len(), 2);
    h.sse(&text_answer("done"));
    assert_eq!(
        recorded(&h),
        [
            (Moment::BeforeTurn, 1, 1, vec![]),
            (Moment::AfterCall, 1, 1, vec!["a".to_owned()]),
            (Moment::AfterCall, 1, 1, vec!["a".to_owned()]),
        ]
    );
    // A second turn gets its own "before", with its own step numbers.
    h.submit("again");
    h.sse(&tool_answer(&[(
        "c1",
        "run_command",
        r#"{"command":"true"}"#,
    )]));
    assert_eq!(h.checkpoints.last().unwrap().moment, Moment::BeforeTurn);
    assert_eq!(h.checkpoints.last().unwrap().turn, 2);
    taken(&mut h, &[]);
    h.output("c1", "ok");
    taken(&mut h, &[]);
    h.sse(&tool_answer(&[(
        "c2",
        "run_command",
        r#"{"command":"true"}"#,
    )]));
    let due = h.checkpoints.last().unwrap();
    assert_eq!((due.moment, due.turn, due.step), (Moment::AfterCall, 2, 1));
    assert_eq!(h.runs.last().unwrap().call_id, "c2", "one before per turn");
    h.output("c2", "ok");
    assert_eq!(h.checkpoints.last().unwrap().step, 2);
}

#[test]
fn reads_take_no_checkpoint_and_off_asks_for_none() {
    let mut h = with_checkpoints();
    h.submit("x");
    h.sse(&tool_answer(&[("r1", "read_file", r#"{"path":"a"}"#)]));
    h.output("r1", "text");
    assert!(h.checkpoints.is_empty());
    assert_eq!(h.sent.len(), 2);

    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.sse(&tool_answer(&[(
        "w1",
        "write_file",
        r#"{"path":"a","content":"b"}"#,
    )]));
    h.output("w1", "written");
    assert!(h.checkpoints.is_empty());
    assert_eq!(h.sent.len(), 2);
}

#[test]
fn a_failed_snapshot_is_reported_and_the_call_goes_on() {
    let mut h = with_checkpoints();
    h.submit("x");
    h.sse(&tool_answer(&[(
        "w1",
        "write_file",
        r#"{"path":"a","content":"b"}"#,
    )]));
    let id = h.checkpoints[0].id;
    h.s.handle_checkpoint(
        h.now,
        id,
        CheckpointOutcome::Failed {
            reason: format!("git took too long ({KEY})"),
        },
    );
    h.drain();
    assert_eq!(h.runs.len(), 1);
    let warning = h
        .events
        .iter()
        .find_map(|e| match e {
            Event::CheckpointFailed { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .expect("the failure is reported");
    assert!(
        warning.contains("too long") && !warning.contains(KEY),
        "{warning}"
    );
}

#[test]
fn late_wrong_and_repeated_outcomes_are_ignored_and_cancel_abandons_the_wait() {
    let mut h = with_checkpoints();
    h.submit("x");
    h.sse(&tool_answer(&[(
        "w1",
        "write_file",
        r#"{"path":"a","content":"b"}"#,
    )]));
    let id = h.checkpoints[0].id;
    let outcome = || CheckpointOutcome::Failed { reason: "x".into() };
    h.s.handle_checkpoint(h.now, id + 7, outcome());
    h.drain();
    assert!(h.runs.is_empty(), "an id never asked for changes nothing");
    h.s.handle_checkpoint(h.now, id, outcome());
    h.s.handle_checkpoint(h.now, id, outcome());
    h.drain();
    assert_eq!(h.runs.len(), 1, "the repeat is ignored");
    h.output("w1", "written");
    h.s.cancel();
    h.drain();
    assert_eq!(h.finals().len(), 1);
    let late = h.checkpoints.last().unwrap().id;
    h.s.handle_checkpoint(h.now, late, outcome());
    h.drain();
    assert!(h.s.is_idle());
    assert_eq!(h.finals().len(), 1);
}

#[test]
fn checkpoint_events_have_a_stable_json_shape() {
    let event = Event::Checkpoint {
        id: "abc".into(),
        turn: 2,
        step: 3,
        moment: Moment::AfterCall,
        changed: vec!["src/a.rs".into()],
        skipped: Vec::new(),
    };
    assert_eq!(
        serde_json::to_string(&event).unwrap(),
        r#"{"type":"checkpoint","id":"abc","turn":2,"step":3,"moment":"after_call","changed":["src/a.rs"]}"#
    );
    assert!(!event.is_delta() && !event.is_final());
}

#[test]
fn a_call_waiting_for_its_checkpoint_is_cancelled_with_the_turn_and_its_late_snapshot_is_not_recorded()
 {
    let mut h = with_checkpoints();
    h.submit("x");
    h.sse(&tool_answer(&[
        ("w1", "write_file", r#"{"path":"a","content":"b"}"#),
        ("r1", "read_file", r#"{"path":"a"}"#),
    ]));
    assert_eq!(h.checkpoints.len(), 1);
    assert!(
        h.runs.is_empty(),
        "the write waits, and the read after it too"
    );
    h.s.cancel();
    h.drain();
    let statuses: Vec<_> = h.results().into_iter().map(|(id, s, _)| (id, s)).collect();
    assert_eq!(
        statuses,
        [
            ("w1".to_owned(), ToolStatus::Cancelled),
            ("r1".to_owned(), ToolStatus::Cancelled)
        ]
    );
    let id = h.checkpoints[0].id;
    h.s.handle_checkpoint(h.now, id, CheckpointOutcome::Failed { reason: "x".into() });
    h.drain();
    assert!(h.runs.is_empty() && recorded(&h).is_empty());
    assert!(
        !h.events
            .iter()
            .any(|e| matches!(e, Event::CheckpointFailed { .. })),
        "nobody waits for it any more"
    );
    assert!(h.s.is_idle());
}

#[test]
fn a_read_after_a_write_waits_for_the_snapshot_of_what_the_write_changed() {
    let mut h = with_checkpoints();
    h.submit("x");
    h.sse(&tool_answer(&[
        ("w1", "write_file", r#"{"path":"a","content":"b"}"#),
        ("r1", "read_file", r#"{"path":"a"}"#),
        ("r2", "read_file", r#"{"path":"b"}"#),
    ]));
    taken(&mut h, &[]);
    h.output("w1", "written");
    assert_eq!(h.checkpoints.len(), 2);
    assert_eq!(h.runs.len(), 1, "the reads wait for the snapshot after w1");
    taken(&mut h, &["a"]);
    let started: Vec<_> = h.runs.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(started, ["w1", "r1", "r2"], "then both reads start at once");
    h.output("r1", "b");
    h.output("r2", "c");
    assert_eq!(h.checkpoints.len(), 2, "reads take no checkpoint");
    assert_eq!(h.sent.len(), 2);
}

#[test]
fn a_failed_snapshot_after_a_call_is_a_warning_and_the_turn_goes_on() {
    let mut h = with_checkpoints();
    h.submit("x");
    h.sse(&tool_answer(&[(
        "c1",
        "run_command",
        r#"{"command":"true"}"#,
    )]));
    taken(&mut h, &[]);
    h.output("c1", "ok");
    assert_eq!(h.sent.len(), 1);
    let due = h.checkpoints.last().unwrap().clone();
    assert_eq!(due.moment, Moment::AfterCall);
    h.s.handle_checkpoint(
        h.now,
        due.id,
        CheckpointOutcome::Failed {
            reason: "disk full".into(),
        },
    );
    h.drain();
    let failed: Vec<_> = h
        .events
        .iter()
        .filter_map(|e| match e {
            Event::CheckpointFailed {
                moment,
                step,
                reason,
                ..
            } => Some((*moment, *step, reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(failed, [(Moment::AfterCall, 1, "disk full".to_owned())]);
    assert_eq!(h.sent.len(), 2, "the next request goes out without it");
    h.sse(&text_answer("done"));
    assert_eq!(h.finals().len(), 1);
}
