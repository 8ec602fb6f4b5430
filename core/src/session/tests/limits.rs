//! The session's limits on what a provider may send: the answer-size cap, and `Retry-After`
//! values past the retry budget.

use super::*;
use crate::stream::StreamError;

#[test]
fn an_answer_past_the_cap_fails_at_once_and_stays_out_of_the_history() {
    let mut c = config(ApprovalPolicy::Auto);
    c.max_answer_bytes = 4096;
    let mut h = H::new(c);
    h.submit("write it");
    h.head(200, &[("content-type", "text/event-stream")]);
    h.data(&format!(
        "data: {}\n\n",
        delta(
            json!({"role": "assistant", "content": "Writing the file now."}),
            None
        )
    ));
    h.data(&format!(
        "data: {}\n\n",
        delta(
            json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                "function": {"name": "write_file", "arguments": "{\"path\":\"a\",\"content\":\""}}]}),
            None
        )
    ));
    let fragment = format!(
        "data: {}\n\n",
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "y".repeat(100)}}]}),
            None
        )
    );
    let mut fed = 0;
    while h.finals().is_empty() {
        h.data(&fragment);
        fed += 1;
        assert!(fed < 1000, "the cap never fired");
    }
    assert!(fed <= 4096 / 100 + 1, "{fed}");
    match h.finals()[..] {
        [
            Event::TurnFailed {
                error:
                    TurnError::Stream {
                        error: StreamError::AnswerTooLarge { limit: 4096 },
                    },
            },
        ] => {}
        ref other => panic!("{other:?}"),
    }
    assert_eq!(h.sent.len(), 1, "not retried");
    assert!(h.runs.is_empty(), "no call of the partial answer runs");
    assert_eq!(h.s.messages().len(), 1, "only the user's message");
    assert_eq!(h.s.messages()[0].role, Role::User);
    assert!(h.s.is_idle());
    // The session takes the next turn normally.
    h.submit("again");
    h.sse(&text_answer("short"));
    assert!(matches!(h.finals()[1], Event::TurnFinished { .. }));
}

#[test]
fn a_whole_json_answer_past_the_cap_fails_too() {
    let mut c = config(ApprovalPolicy::Auto);
    c.max_answer_bytes = 10;
    let mut h = H::new(c);
    h.submit("x");
    let body = json!({"choices": [{"index": 0, "message": {"role": "assistant",
        "content": "eleven byte"}, "finish_reason": "stop"}]});
    h.status(
        200,
        &[("content-type", "application/json")],
        &body.to_string(),
    );
    assert!(matches!(
        h.finals()[..],
        [Event::TurnFailed {
            error: TurnError::Stream {
                error: StreamError::AnswerTooLarge { limit: 10 }
            }
        }]
    ));
    assert_eq!(h.s.messages().len(), 1);
}

/// Wed, 21 Oct 2015 07:28:00 GMT.
fn wall() -> std::time::SystemTime {
    std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480)
}

impl H {
    /// An error status whose head arrived at the wall time `wall()`.
    fn dated_status(&mut self, status: u16, headers: &[(&str, &str)], body: &str) {
        let req = self.req();
        self.s
            .handle_response_head_at(
                self.now,
                wall(),
                req,
                status,
                headers.iter().map(|(n, v)| (*n, v.as_bytes())),
            )
            .unwrap();
        self.drain();
        self.data(body);
        self.end();
    }
}

fn over_budget(h: &H) -> (u64, u64, String) {
    let [Event::TurnFailed { error }] = &h.finals()[..] else {
        panic!("{:?}", h.finals());
    };
    let TurnError::RetryAfterTooLong {
        wait_secs,
        budget_secs,
        failure,
    } = error
    else {
        panic!("{error:?}");
    };
    assert!(matches!(**failure, TurnError::Api { .. }), "{failure:?}");
    (*wait_secs, *budget_secs, error.to_string())
}

#[test]
fn a_retry_after_past_the_budget_fails_at_once_saying_how_long() {
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.status(
        429,
        &[("retry-after", "3600")],
        r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#,
    );
    let (wait, budget, shown) = over_budget(&h);
    assert_eq!((wait, budget), (3600, 300));
    assert!(
        shown.contains(
            "the provider asked to wait 3600 s before retrying; more than the retry budget of 300 s"
        ),
        "{shown}"
    );
    assert!(shown.contains("Rate limit reached"), "{shown}");
    assert!(
        shown.contains(&format!(
            "raise `{}` in config.json",
            crate::config::RETRY_MAX_WAIT_KEY
        )),
        "names the key that raises the budget: {shown}"
    );
    assert_eq!(h.sent.len(), 1, "no retry");
    assert!(h.s.poll_timeout().is_none(), "nothing waits");
    assert!(!h.events.iter().any(|e| matches!(e, Event::Retry { .. })));
    assert!(h.s.is_idle());
}

#[test]
fn an_http_date_retry_after_is_honoured_with_the_wall_time() {
    // An hour ahead, from a 503: over the budget.
    let mut h = H::new(config(ApprovalPolicy::Auto));
    h.submit("x");
    h.dated_status(
        503,
        &[("Retry-After", "Wed, 21 Oct 2015 08:28:00 GMT")],
        "{}",
    );
    let (wait, _, shown) = over_budget(&h);
    assert_eq!(wait, 3600);
    assert!(shown.contains("asked to wait 3600 s"), "{shown}");

    // Two seconds ahead: the retry waits exactly that long, then goes out.
    h.submit("y");
    h.dated_status(
        429,
        &[("Retry-After", "Wed, 21 Oct 2015 07:28:02 GMT")],
        "{}",
    );
    match h.events.last() {
        Some(Event::Retry { delay_ms, .. }) => assert_eq!(*delay_ms, 2000),
        other => panic!("{other:?}"),
    }
    assert_eq!(h.s.poll_timeout(), Some(h.now + Duration::from_secs(2)));
    let sent = h.sent.len();
    h.s.handle_timeout(h.now + Duration::from_secs(2));
    h.drain();
    assert_eq!(h.sent.len(), sent + 1, "retried at the date");
    h.sse(&text_answer("fine"));
    assert!(matches!(
        h.finals().last(),
        Some(Event::TurnFinished { .. })
    ));
}

#[test]
fn an_http_date_without_the_wall_time_or_malformed_falls_back_to_backoff() {
    for (date, dated) in [
        ("Wed, 21 Oct 2015 08:28:00 GMT", false),
        ("Wed, 21 Oct 2015 08:28:00", true),
        ("Wed, 99 Oct 2015 08:28:00 GMT", true),
        ("in a while", true),
    ] {
        let mut h = H::new(config(ApprovalPolicy::Auto));
        h.submit("x");
        if dated {
            h.dated_status(429, &[("Retry-After", date)], "{}");
        } else {
            h.status(429, &[("Retry-After", date)], "{}");
        }
        match h.events.last() {
            // The first backoff is at most the base delay (1 s).
            Some(Event::Retry { delay_ms, .. }) => assert!(*delay_ms <= 1000, "{date}: {delay_ms}"),
            other => panic!("{date}: {other:?}"),
        }
    }
}
