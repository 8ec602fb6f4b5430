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
