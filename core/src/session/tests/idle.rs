//! The stream idle timeout: only data moves the deadline; past it the stream is a transport
//! timeout, retried before output and a broken stream after it.

use super::*;

const IDLE: Duration = Duration::from_secs(10);

fn idle_config() -> SessionConfig {
    let mut c = config(ApprovalPolicy::Auto);
    c.stream_idle_timeout = Some(IDLE);
    c
}

/// Keep-alives in their three shapes: a comment, whitespace data, a chunk that carries nothing.
const KEEP_ALIVES: &str = ": keep-alive\n\ndata:  \n\ndata: {\"choices\":[]}\n\n";

#[test]
fn keep_alives_do_not_move_the_deadline_and_the_stream_is_retried_past_it() {
    let mut h = H::new(idle_config());
    h.submit("x");
    assert_eq!(h.s.poll_timeout(), None, "no deadline before the head");
    h.head(200, &[("content-type", "text/event-stream")]);
    let deadline = h.now + IDLE;
    assert_eq!(h.s.poll_timeout(), Some(deadline));
    h.now += Duration::from_secs(9);
    h.data(KEEP_ALIVES);
    assert_eq!(
        h.s.poll_timeout(),
        Some(deadline),
        "keep-alives are not data"
    );
    h.s.handle_timeout(deadline - Duration::from_millis(1));
    h.drain();
    assert!(retries(&h).is_empty(), "not before the deadline");
    h.s.handle_timeout(deadline);
    h.drain();
    assert_eq!(retries(&h).len(), 1, "{:?}", h.events);
    let retry = h.s.poll_timeout().unwrap();
    h.now = retry;
    h.s.handle_timeout(retry);
    h.drain();
    assert_eq!(h.sent.len(), 2, "the request is sent again");
    h.sse(&text_answer("done"));
    assert_eq!(h.text(), "done");
    assert!(matches!(h.finals()[..], [Event::TurnFinished { .. }]));
}

#[test]
fn data_moves_the_deadline() {
    let mut h = H::new(idle_config());
    h.submit("x");
    h.head(200, &[("content-type", "text/event-stream")]);
    h.now += Duration::from_secs(9);
    h.data(&format!(
        "data: {}\n\n",
        delta(json!({"role": "assistant", "content": "a"}), None)
    ));
    assert_eq!(h.s.poll_timeout(), Some(h.now + IDLE));
}

#[test]
fn past_the_deadline_after_output_the_turn_fails_as_a_broken_stream() {
    let mut h = H::new(idle_config());
    h.submit("x");
    h.head(200, &[("content-type", "text/event-stream")]);
    h.data(&format!(
        "data: {}\n\n",
        delta(json!({"role": "assistant", "content": "partial"}), None)
    ));
    let deadline = h.s.poll_timeout().unwrap();
    h.s.handle_timeout(deadline);
    h.drain();
    assert!(retries(&h).is_empty(), "output was shown: no retry");
    assert!(
        matches!(h.finals()[..], [Event::TurnFailed { error: TurnError::StreamBroken { message } }]
            if message.contains("streamIdleTimeout")),
        "{:?}",
        h.events
    );
    assert!(
        !h.s.wants_response(h.req()),
        "the driver drops the connection"
    );
    assert_eq!(
        h.s.messages().last().unwrap().text(),
        "partial\n\n[cut off: the stream broke]"
    );
}

#[test]
fn past_the_deadline_after_the_finish_reason_the_answer_is_whole() {
    // A provider that finishes the answer and then neither sends `[DONE]` nor closes.
    let mut h = H::new(idle_config());
    h.submit("x");
    h.head(200, &[("content-type", "text/event-stream")]);
    h.data(&format!(
        "data: {}\n\ndata: {}\n\n",
        delta(json!({"role": "assistant", "content": "done"}), None),
        delta(json!({}), Some("stop"))
    ));
    let deadline = h.s.poll_timeout().unwrap();
    h.s.handle_timeout(deadline);
    h.drain();
    assert!(
        matches!(h.finals()[..], [Event::TurnFinished { .. }]),
        "{:?}",
        h.events
    );
    assert_eq!(h.s.messages().last().unwrap().text(), "done");
    assert!(
        !h.s.wants_response(h.req()),
        "the driver drops the connection"
    );
}

#[test]
fn keep_alives_alone_fail_as_a_transport_timeout_after_the_retries() {
    let mut c = idle_config();
    c.retry.max_attempts = 2;
    let mut h = H::new(c);
    h.submit("x");
    for attempt in 1..=2 {
        h.head(200, &[("content-type", "text/event-stream")]);
        h.data(KEEP_ALIVES);
        let deadline = h.s.poll_timeout().unwrap();
        h.now = deadline;
        h.s.handle_timeout(deadline);
        h.drain();
        if attempt == 1 {
            let retry = h.s.poll_timeout().unwrap();
            h.now = retry;
            h.s.handle_timeout(retry);
            h.drain();
        }
    }
    assert_eq!(h.sent.len(), 2);
    assert!(
        matches!(h.finals()[..], [Event::TurnFailed { error: TurnError::Transport { kind: TransportErrorKind::Timeout, message } }]
            if message.contains("no data for 10 s") && message.contains("streamIdleTimeout")),
        "{:?}",
        h.events
    );
}

#[test]
fn no_idle_timeout_means_no_deadline() {
    let mut c = config(ApprovalPolicy::Auto);
    c.stream_idle_timeout = None;
    let mut h = H::new(c);
    h.submit("x");
    h.head(200, &[("content-type", "text/event-stream")]);
    h.data(KEEP_ALIVES);
    assert_eq!(h.s.poll_timeout(), None);
}
