//! `Runner::drive_batches`: a front end gets the turn's events a step at a time, each batch
//! that asks for approval ends with the question, and the answer is asked for right after it.

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_blocking::{Client, ClientConfig, Runner, ToolContext, TurnFront, TurnOutcome};
use hrns_core::session::{
    Approval, ApprovalPolicy, Event, Provider, Question, Session, SessionConfig,
};

/// What the front end saw, in order.
#[derive(Default)]
struct Seen {
    batches: Vec<Vec<Event>>,
    /// The call ids asked about, each with the number of batches seen before the question.
    asked: Vec<(String, usize)>,
}

impl TurnFront for Seen {
    fn events(&mut self, events: &[Event]) {
        assert!(!events.is_empty(), "no empty batch is handed out");
        self.batches.push(events.to_vec());
    }

    fn approve(&mut self, question: &Question) -> Approval {
        self.asked
            .push((question.call_id().to_owned(), self.batches.len()));
        Approval::Deny {
            reason: Some("not now".into()),
        }
    }
}

#[test]
fn batches_end_at_a_question_which_is_asked_next() {
    let workspace = tempfile::tempdir().unwrap();
    let mock = MockProvider::start([
        Reply::tool_calls(&[("c1", "write_file", r#"{"path":"a.txt","content":"hi"}"#)]),
        Reply::text_answer("fine, not written"),
    ])
    .unwrap();
    let provider = Provider::new(mock.base_url(), None);
    let client = Client::new(provider.clone(), &ClientConfig::default());
    let toolbox = hrns_blocking::tools::builtin_toolbox(Vec::new());
    let mut config = SessionConfig::new(provider, "m");
    config.tools = toolbox.specs();
    config.approval = ApprovalPolicy::Ask;
    let ctx = ToolContext::new(workspace.path()).unwrap();
    let mut runner = Runner::new(std::sync::Arc::new(client), &toolbox, ctx);
    let mut session = Session::new(config);
    session.submit("write a file").unwrap();
    let mut seen = Seen::default();
    let outcome = runner.drive_batches(&mut session, &mut seen);
    assert_eq!(outcome, TurnOutcome::Finished);
    assert!(
        !workspace.path().join("a.txt").exists(),
        "the call was denied"
    );

    // Asked once, right after the batch that ends with the question.
    assert_eq!(seen.asked.len(), 1);
    let (id, after) = &seen.asked[0];
    let asking = &seen.batches[after - 1];
    assert!(
        matches!(asking.last(), Some(Event::ApprovalRequested { id: asked, .. }) if asked == id),
        "{asking:?}"
    );
    let all: Vec<&Event> = seen.batches.iter().flatten().collect();
    let questions = all
        .iter()
        .filter(|e| matches!(e, Event::ApprovalRequested { .. }))
        .count();
    assert_eq!(questions, 1);
    // Every event of the turn, once, in order: the denial's result, then the answer.
    let text: String = all
        .iter()
        .filter_map(|e| match e {
            Event::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "fine, not written");
    assert!(all.last().is_some_and(|e| e.is_final()));
    assert_eq!(all.iter().filter(|e| e.is_final()).count(), 1);
    let result = all
        .iter()
        .position(|e| matches!(e, Event::ToolResult { .. }))
        .unwrap();
    let question = all
        .iter()
        .position(|e| matches!(e, Event::ApprovalRequested { .. }))
        .unwrap();
    assert!(question < result);
}

/// A front end that notes what text it had seen each time it was told the runner is idle.
#[derive(Default)]
struct Idles {
    /// The text seen at each `idle`.
    idle_after: Vec<String>,
    text: String,
}

impl TurnFront for Idles {
    fn events(&mut self, events: &[Event]) {
        for event in events {
            if let Event::TextDelta { text } = event {
                self.text.push_str(text);
            }
        }
    }

    fn approve(&mut self, _: &Question) -> Approval {
        Approval::Unattended
    }

    fn idle(&mut self) {
        self.idle_after.push(self.text.clone());
    }
}

/// When the stream stalls after some text, the front end hears that the runner is idle
/// before the rest arrives (so output held back while more was queued goes out then), and
/// after the batch with that text.
#[test]
fn the_front_end_hears_the_runner_is_idle_before_it_waits() {
    let workspace = tempfile::tempdir().unwrap();
    let reply = Reply::text_answer("early bird, then the rest");
    let body = reply.body().to_vec();
    let cut = body.windows(5).position(|w| w == b"early").unwrap();
    let cut = cut + body[cut..].windows(2).position(|w| w == b"\n\n").unwrap() + 2;
    let stall = std::time::Duration::from_millis(300);
    let mock = MockProvider::start([reply.split_at(&[cut]).delay(stall)]).unwrap();
    let provider = Provider::new(mock.base_url(), None);
    let client = Client::new(provider.clone(), &ClientConfig::default());
    let toolbox = hrns_blocking::tools::builtin_toolbox(Vec::new());
    let mut config = SessionConfig::new(provider, "m");
    config.tools = toolbox.specs();
    let ctx = ToolContext::new(workspace.path()).unwrap();
    let mut runner = Runner::new(std::sync::Arc::new(client), &toolbox, ctx);
    let mut session = Session::new(config);
    session.submit("talk").unwrap();
    let mut front = Idles::default();
    let outcome = runner.drive_batches(&mut session, &mut front);
    assert_eq!(outcome, TurnOutcome::Finished);
    assert_eq!(front.text, "early bird, then the rest");
    // The batch with "early" came, then the runner waited out the stall: idle in between.
    assert!(
        front.idle_after.iter().any(|seen| seen == "early"),
        "no idle while the stream stalled after \"early\": {:?}",
        front.idle_after
    );
}
