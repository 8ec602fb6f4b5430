use super::*;
use crate::http::Secret;
use crate::wire::Message;
use serde_json::{Value, json};

fn provider() -> Provider {
    Provider::new("http://h/v1/", Some(Secret::new("sk-x")))
}

fn request() -> ChatRequest {
    serde_json::from_value(json!({
        "model": "m", "messages": [Message::user("hi")],
        "stream_options": {"include_usage": true}
    }))
    .unwrap()
}

#[test]
fn chat_requests_set_stream_and_drop_stream_options_when_not_streaming() {
    let streamed = chat_request(&provider(), &request(), true);
    assert_eq!(streamed.url, "http://h/v1/chat/completions");
    let body: Value = serde_json::from_slice(&streamed.body).unwrap();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    let whole = chat_request(&provider(), &request(), false);
    let body: Value = serde_json::from_slice(&whole.body).unwrap();
    assert_eq!(body["stream"], false);
    assert!(body.get("stream_options").is_none());
    assert!(format!("{whole:?}").contains("[redacted]"));
    assert_eq!(models_request(&provider()).url, "http://h/v1/models");
}

#[test]
fn status_and_json_reading() {
    assert_eq!(check_status(204, b""), Ok(()));
    match check_status(401, br#"{"error":{"message":"bad key"}}"#) {
        Err(ClientError::Api {
            status: 401, error, ..
        }) => assert_eq!(error.message, "bad key"),
        other => panic!("{other:?}"),
    }
    let models = read_models(200, [], br#"{"data":[{"id":"a"},{"id":"b"}]}"#).unwrap();
    assert_eq!(models.len(), 2);
    assert!(matches!(
        read_models(500, [], b"oops"),
        Err(ClientError::Api {
            status: 500,
            retry_after: None,
            ..
        })
    ));
    assert!(matches!(
        read_models(429, [("Retry-After", &b"7"[..])], b"slow down"),
        Err(ClientError::Api {
            status: 429,
            retry_after: Some(wait),
            ..
        }) if wait == Duration::from_secs(7)
    ));
    let long = format!("<html>{}</html>", "x".repeat(1000));
    match read_chat(200, [], long.as_bytes()) {
        Err(ClientError::Stream(StreamError::Malformed { payload, .. })) => {
            assert_eq!(payload.chars().count(), QUOTED_BODY_CHARS);
            assert!(payload.starts_with("<html>"));
        }
        other => panic!("{other:?}"),
    }
}
