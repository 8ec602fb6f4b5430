use super::*;
use crate::answer::MAX_ERROR_BODY;
use crate::session::TransportErrorKind;
use crate::stream::StreamError;

const CT: &str = "content-type";
const SSE: &[u8] = b"text/event-stream";

fn delta(text: &str) -> String {
    format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\n")
}

/// Drives `answer` as a driver does, handing `body` in pieces of `piece` bytes; the events'
/// text and the errors handed out, in order.
fn drive(answer: &mut StreamedChat, body: &[u8], piece: usize) -> (String, Vec<ClientError>) {
    let mut pieces = body.chunks(piece.max(1));
    let (mut text, mut errors) = (String::new(), Vec::new());
    loop {
        match answer.poll_next() {
            Next::Event(StreamEvent::ContentDelta { text: t, .. }) => text.push_str(&t),
            Next::Event(_) => {}
            Next::Failed(e) => errors.push(e),
            Next::End => return (text, errors),
            Next::NeedsBody => match pieces.next() {
                Some(p) => answer.handle_data(p),
                None => answer.handle_end(),
            },
        }
    }
}

#[test]
fn a_stream_in_any_split_gives_its_events_then_the_end() {
    let body = format!("{}{}data: [DONE]\n\n", delta("Hel"), delta("lo"));
    for piece in 1..body.len() {
        let mut answer = StreamedChat::new(200, [(CT, SSE)]);
        assert!(matches!(answer.opening(), Opening::Open));
        let (text, errors) = drive(&mut answer, body.as_bytes(), piece);
        assert_eq!(text, "Hello");
        assert!(errors.is_empty(), "{errors:?}");
        assert!(
            matches!(answer.poll_next(), Next::End),
            "the end stays the end"
        );
        let completion = answer.finish().unwrap();
        assert_eq!(completion.choices[0].content, "Hello");
        assert!(completion.done);
    }
}

#[test]
fn an_error_status_is_read_whole_before_opening_and_fails_once() {
    let body = br#"{"error":{"message":"invalid key","type":"auth"}}"#;
    for piece in [1, 7, body.len()] {
        let mut answer = StreamedChat::new(401, [(CT, &b"application/json"[..])]);
        let mut pieces = body.chunks(piece);
        let error = loop {
            match answer.opening() {
                Opening::NeedsBody => match pieces.next() {
                    Some(p) => answer.handle_data(p),
                    None => answer.handle_end(),
                },
                Opening::Failed(e) => break e,
                Opening::Open => panic!("an error status never opens"),
            }
        };
        match &error {
            ClientError::Api {
                status: 401, error, ..
            } => assert_eq!(error.message, "invalid key"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(answer.poll_next(), Next::End), "failed once only");
        assert!(matches!(
            answer.finish(),
            Err(AnswerError::Status { status: 401, .. })
        ));
    }
}

#[test]
fn an_endless_error_body_is_read_only_to_its_limit() {
    let mut answer = StreamedChat::new(502, []);
    let piece = vec![b'<'; 4096];
    let mut read = 0;
    while let Opening::NeedsBody = answer.opening() {
        answer.handle_data(&piece);
        read += piece.len();
        assert!(read <= MAX_ERROR_BODY + piece.len(), "read past the limit");
    }
    assert!(read >= MAX_ERROR_BODY);
    match answer.finish() {
        Err(AnswerError::Status {
            status: 502, body, ..
        }) => {
            assert_eq!(body.len(), MAX_ERROR_BODY)
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_login_page_fails_at_its_first_bytes() {
    let mut answer = StreamedChat::new(200, [(CT, &b"text/html"[..])]);
    assert!(matches!(answer.opening(), Opening::NeedsBody));
    answer.handle_data(b"<html><title>Sign in</title>");
    match answer.opening() {
        Opening::Failed(ClientError::UnexpectedContent {
            status: 200,
            content_type,
            body_start,
        }) => {
            assert_eq!(content_type, "text/html");
            assert!(body_start.contains("Sign in"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_whole_json_answer_is_one_event_and_its_completion() {
    let mut answer = StreamedChat::new(200, [(CT, &b"application/json"[..])]);
    assert!(matches!(answer.opening(), Opening::Open));
    let body = br#"{"choices":[{"index":0,"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}]}"#;
    let (text, errors) = drive(&mut answer, body, 10);
    assert_eq!(text, "whole");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(answer.finish().unwrap().choices[0].content, "whole");
}

#[test]
fn a_truncated_or_malformed_stream_fails_once_after_its_events_and_keeps_them() {
    let truncated = delta("kept");
    let malformed = format!("{}data: {{not json\n\n{}", delta("kept"), delta("never"));
    for (body, is_expected) in [
        (
            truncated,
            (|e| matches!(e, StreamError::Truncated { .. })) as fn(&StreamError) -> bool,
        ),
        (malformed, |e| matches!(e, StreamError::Malformed { .. })),
    ] {
        let mut answer = StreamedChat::new(200, [(CT, SSE)]);
        let (text, errors) = drive(&mut answer, body.as_bytes(), 5);
        assert_eq!(text, "kept");
        match errors.as_slice() {
            [ClientError::Stream(e)] => assert!(is_expected(e), "{e:?}"),
            other => panic!("{other:?}"),
        }
        match answer.finish() {
            Err(AnswerError::Stream(failure)) => {
                assert!(is_expected(&failure.error));
                assert_eq!(failure.partial.choices[0].content, "kept");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn an_error_body_that_breaks_off_still_fails_with_its_status() {
    let mut answer = StreamedChat::new(429, [(CT, &b"application/json"[..])]);
    assert!(matches!(answer.opening(), Opening::NeedsBody));
    answer.handle_data(br#"{"error":{"message":"slow do"#);
    let error = answer.handle_transport_error(TransportError::new(
        TransportErrorKind::Timeout,
        "read timed out",
    ));
    assert!(
        matches!(error, ClientError::Api { status: 429, .. }),
        "{error:?}"
    );
    assert!(matches!(answer.poll_next(), Next::End), "failed once only");
}

#[test]
fn a_transport_error_is_the_one_error_and_what_arrived_is_kept() {
    let mut answer = StreamedChat::new(200, [(CT, SSE)]);
    let body = format!("{}{}", delta("a"), delta("b"));
    answer.handle_data(body.as_bytes());
    // The driver read more before draining (a read-ahead): the events still come out.
    let error = answer.handle_transport_error(TransportError::new(
        TransportErrorKind::Io,
        "connection reset",
    ));
    assert!(matches!(error, ClientError::Transport(ref e) if e.kind == TransportErrorKind::Io));
    let (text, errors) = drive(&mut answer, b"", 1);
    assert_eq!(text, "ab");
    assert!(
        errors.is_empty(),
        "the truncation is not a second error: {errors:?}"
    );
    match answer.finish() {
        Err(AnswerError::Stream(failure)) => assert_eq!(failure.partial.choices[0].content, "ab"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn finish_before_the_end_ends_the_answer_there() {
    let mut answer = StreamedChat::new(200, [(CT, SSE)]);
    answer.handle_data(delta("half").as_bytes());
    match answer.finish() {
        Err(AnswerError::Stream(failure)) => {
            assert_eq!(failure.partial.choices[0].content, "half")
        }
        other => panic!("{other:?}"),
    }
}
