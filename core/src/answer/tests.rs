use super::*;

const SSE: &str = "content-type";

fn reader() -> AnswerReader {
    AnswerReader::new(crate::sse::DEFAULT_MAX_EVENT_SIZE)
}

fn events(r: &mut AnswerReader) -> Vec<StreamEvent> {
    std::iter::from_fn(|| r.poll_event()).collect()
}

#[test]
fn a_stream_in_any_split_gives_its_events_and_completion() {
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    for split in 0..body.len() {
        let mut r = reader();
        r.handle_head(200, [(SSE, &b"text/event-stream"[..])]);
        assert!(r.handle_data(&body.as_bytes()[..split]));
        let mut got = events(&mut r);
        r.handle_data(&body.as_bytes()[split..]);
        got.extend(events(&mut r));
        assert!(r.is_complete(), "complete at [DONE] without an end");
        let text: String = got
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ContentDelta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "Hello");
        assert_eq!(r.content(), "Hello");
        assert_eq!(r.finish().unwrap().choices[0].content, "Hello");
    }
}

#[test]
fn a_large_feed_is_read_whole() {
    let event = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n";
    let mut body = event.repeat(5000);
    body.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    let mut r = reader();
    r.handle_head(200, []);
    r.handle_data(body.as_bytes());
    let n = events(&mut r)
        .iter()
        .filter(|e| matches!(e, StreamEvent::ContentDelta { .. }))
        .count();
    assert_eq!(n, 5000);
    assert!(r.is_complete());
}

#[test]
fn a_json_answer_is_read_at_its_end() {
    let mut r = reader();
    r.handle_head(200, [(SSE, &b"application/json"[..])]);
    r.handle_data(br#"{"choices":[{"index":0,"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}]}"#);
    assert!(!r.is_complete());
    assert!(r.poll_event().is_none());
    r.handle_end();
    assert_eq!(
        events(&mut r),
        [StreamEvent::ContentDelta {
            choice: 0,
            text: "whole".into()
        }]
    );
    assert!(r.is_complete());
    assert_eq!(r.finish().unwrap().choices[0].content, "whole");
}

#[test]
fn an_error_status_keeps_the_providers_message_and_retry_after() {
    let mut r = reader();
    r.handle_head(429, [("Retry-After", &b"7"[..])]);
    r.handle_data(br#"{"error":{"message":"slow down"}}"#);
    r.handle_end();
    assert!(r.is_complete());
    match r.finish() {
        Err(AnswerError::Status {
            status: 429,
            retry_after,
            error,
            body,
        }) => {
            assert_eq!(retry_after, Some(Duration::from_secs(7)));
            assert_eq!(error.message, "slow down");
            assert!(body.contains("slow down"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_input_is_a_clear_error() {
    // Data before the head is refused; an end before the head is `NoHead`.
    let mut r = reader();
    assert!(!r.handle_data(b"x"));
    r.handle_end();
    assert!(matches!(r.finish(), Err(AnswerError::NoHead)));
    // A truncated stream keeps what arrived.
    let mut r = reader();
    r.handle_head(200, []);
    r.handle_data(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n");
    r.handle_end();
    events(&mut r);
    match r.finish() {
        Err(AnswerError::Stream(f)) => {
            assert!(matches!(f.error, StreamError::Truncated { .. }));
            assert_eq!(f.partial.choices[0].content, "par");
        }
        other => panic!("{other:?}"),
    }
    // A JSON answer that is not JSON quotes its start; one over the limit is refused.
    let mut r = reader();
    r.handle_head(200, [(SSE, &b"application/json"[..])]);
    r.handle_data(b"<html>login</html>");
    r.handle_end();
    match r.finish() {
        Err(AnswerError::Stream(f)) => {
            assert!(
                matches!(f.error, StreamError::Malformed { ref payload, .. } if payload.starts_with("<html>"))
            )
        }
        other => panic!("{other:?}"),
    }
    let mut r = AnswerReader::new(8);
    r.handle_head(200, [(SSE, &b"application/json"[..])]);
    r.handle_data(b"{\"choices\":[]}");
    assert!(r.is_complete());
    assert!(matches!(
        r.finish(),
        Err(AnswerError::Stream(StreamFailure {
            error: StreamError::EventTooLarge { limit: 8 },
            ..
        }))
    ));
    // An error body is kept only up to its limit, and the answer is complete there: an
    // endless error body is not read to its end.
    let mut r = reader();
    r.handle_head(500, []);
    assert!(r.announces_failure());
    r.handle_data(&vec![b'x'; MAX_ERROR_BODY - 1]);
    assert!(!r.is_complete());
    r.handle_data(&[b'y'; 1000]);
    assert!(r.is_complete(), "complete at the limit, without an end");
    r.handle_data(b"more");
    match r.finish() {
        Err(AnswerError::Status { body, .. }) => {
            assert_eq!(body.len(), MAX_ERROR_BODY);
            assert!(body.ends_with("xy"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_2xx_page_that_is_neither_stream_nor_json_fails_at_its_first_bytes() {
    let mut r = reader();
    r.handle_head(200, [(SSE, &b"text/html; charset=utf-8"[..])]);
    assert!(!r.is_complete());
    r.handle_data(b"");
    assert!(!r.is_complete(), "an empty piece says nothing yet");
    r.handle_data(b"<html><title>Portal login</title>");
    assert!(r.is_complete(), "no need to wait for the end");
    match r.finish() {
        Err(e @ AnswerError::UnexpectedContent { .. }) => {
            let shown = e.to_string();
            assert!(
                shown.contains("text/html") && shown.contains("Portal login"),
                "{shown}"
            );
        }
        other => panic!("{other:?}"),
    }
    // Without a body it fails at the end; without a content type it is read as a stream.
    let mut r = reader();
    r.handle_head(204, [(SSE, &b"application/xml"[..])]);
    r.handle_end();
    assert!(matches!(
        r.finish(),
        Err(AnswerError::UnexpectedContent { status: 204, .. })
    ));
    let mut r = reader();
    r.handle_head(200, [(SSE, &b"text/plain"[..])]);
    r.handle_data(b"data: [DONE]\n\n");
    assert_eq!(events(&mut r), [StreamEvent::Done]);
    assert!(r.is_complete());
}
