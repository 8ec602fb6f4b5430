//! The ureq client against the mock provider: models, non-streaming and streaming chat, errors.

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_blocking::{Client, ClientConfig, ClientError};
use hrns_core::StreamEvent;
use hrns_core::answer::AnswerError;
use hrns_core::http::Secret;
use hrns_core::session::Provider;
use hrns_core::wire::{ChatRequest, Message};
use serde_json::json;
use std::time::{Duration, Instant};

const KEY: &str = "sk-client-HIDDEN-77";

fn client(mock: &MockProvider) -> Client {
    Client::new(
        Provider::new(mock.base_url(), Some(Secret::new(KEY))),
        &ClientConfig::default(),
    )
}

fn request() -> ChatRequest {
    serde_json::from_value(json!({"model": "mock-model", "messages": [Message::user("hi")]}))
        .unwrap()
}

#[test]
fn lists_models() {
    let mock = MockProvider::start([]).unwrap().with_models(["a", "b"]);
    let models = client(&mock).list_models().unwrap();
    assert_eq!(
        models.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
        ["a", "b"]
    );
    let req = &mock.model_requests()[0];
    assert_eq!(req.method, "GET");
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[test]
fn non_streaming_chat() {
    let mock = MockProvider::start([Reply::json(
        200,
        json!({"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}]}),
    )])
    .unwrap();
    let resp = client(&mock).chat(&request()).unwrap();
    assert_eq!(resp.choices[0].message.text(), "hello");
    assert_eq!(mock.requests()[0].json()["stream"], false);
}

#[test]
fn streaming_chat_yields_events_as_they_arrive() {
    let reply = Reply::text_answer("streamed words");
    let mid = reply.body().len() / 2;
    let mock =
        MockProvider::start([reply.split_at(&[mid]).delay(Duration::from_millis(300))]).unwrap();
    let start = Instant::now();
    let mut events = client(&mock).stream_chat(&request()).unwrap();
    let first = events.next().unwrap().unwrap();
    assert!(
        start.elapsed() < Duration::from_millis(250),
        "first event before the delayed half"
    );
    let mut text = String::new();
    for ev in std::iter::once(Ok(first)).chain(events.by_ref()) {
        if let StreamEvent::ContentDelta { text: t, .. } = ev.unwrap() {
            text.push_str(&t);
        }
    }
    assert_eq!(text, "streamed words");
    let completion = events.finish().unwrap();
    assert_eq!(completion.choices[0].content, "streamed words");
    assert!(completion.done);
}

#[test]
fn api_errors_carry_the_provider_message_and_never_the_key() {
    let mock = MockProvider::start([
        Reply::error(401, "invalid key"),
        Reply::error(404, "no such model"),
    ])
    .unwrap();
    let c = client(&mock);
    let err = c.stream_chat(&request()).unwrap_err();
    assert!(
        matches!(&err, ClientError::Api { status: 401, error, .. } if error.message == "invalid key")
    );
    let err2 = c.chat(&request()).unwrap_err();
    assert!(err2.to_string().contains("no such model"));
    for shown in [
        format!("{err:?} {err}"),
        format!("{err2:?} {err2}"),
        format!("{c:?}"),
    ] {
        assert!(!shown.contains(KEY), "{shown}");
    }
}

#[test]
fn broken_stream_is_an_error_with_partial_content() {
    let reply = Reply::text_answer("abc def ghi jkl mno pqr stu vwx yz");
    // In the middle of the text, before the finish reason.
    let cut = reply.body().len() / 2;
    let mock = MockProvider::start([reply.drop_after(cut)]).unwrap();
    let mut events = client(&mock).stream_chat(&request()).unwrap();
    let errors: Vec<ClientError> = events.by_ref().filter_map(Result::err).collect();
    assert_eq!(errors.len(), 1, "one error: {errors:?}");
    match events.finish() {
        Err(AnswerError::Stream(failure)) => {
            let content = &failure.partial.choices[0].content;
            assert!(!content.is_empty() && content.len() < 34, "{content:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_stream_broken_after_its_finish_reason_still_gives_the_whole_answer() {
    // Cut inside the usage chunk that follows the finish: the break is reported, and the
    // answer, whose every choice finished, is whole.
    let reply = Reply::text_answer("abcdefghijklmnopqrstuvwxyz");
    let usage = reply.offset_of(b"\"usage\":").expect("a usage chunk");
    let mock = MockProvider::start([reply.drop_after(usage)]).unwrap();
    let mut events = client(&mock).stream_chat(&request()).unwrap();
    let errors: Vec<ClientError> = events.by_ref().filter_map(Result::err).collect();
    assert_eq!(errors.len(), 1, "the break is reported: {errors:?}");
    let completion = events.finish().unwrap();
    assert_eq!(completion.choices[0].content, "abcdefghijklmnopqrstuvwxyz");
    assert!(completion.usage.is_none());
}

#[test]
fn an_endless_error_body_fails_at_its_start() {
    let mock =
        MockProvider::start([
            Reply::endless_sse([] as [&str; 0], "{\"error\":\"overloaded\"}").status(503),
        ])
        .unwrap();
    let c = client(&mock);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(c.stream_chat(&request()).map(|_| ()));
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(Err(ClientError::Api { status: 503, .. })) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_login_page_is_an_unexpected_content_error() {
    let page = "<html><title>Sign in to the proxy</title></html>";
    let mock =
        MockProvider::start([Reply::raw(200, &[("content-type", "text/html")], page)]).unwrap();
    match client(&mock).stream_chat(&request()) {
        Err(ClientError::UnexpectedContent {
            status: 200,
            body_start,
            ..
        }) => assert!(body_start.contains("Sign in"), "{body_start}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_whole_json_answer_to_a_stream_request_is_one_event() {
    let mock = MockProvider::start([Reply::json(
        200,
        json!({"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"}, "finish_reason": "stop"}]}),
    )])
    .unwrap();
    let mut events = client(&mock).stream_chat(&request()).unwrap();
    let got: Vec<StreamEvent> = events.by_ref().map(Result::unwrap).collect();
    assert!(
        matches!(got.as_slice(), [StreamEvent::ContentDelta { text, .. }] if text == "whole"),
        "{got:?}"
    );
    assert_eq!(events.finish().unwrap().choices[0].content, "whole");
}

#[test]
fn unreachable_provider_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let c = Client::new(Provider::new(url, None), &ClientConfig::default());
    assert!(matches!(c.list_models(), Err(ClientError::Transport(_))));
}

#[test]
fn a_rate_limited_answer_says_how_long_to_wait() {
    let mock = MockProvider::start([
        Reply::rate_limited("7"),
        Reply::rate_limited("2").header("retry-after-ms", "1500"),
        Reply::rate_limited("soon"),
        Reply::error(503, "overloaded"),
    ])
    .unwrap();
    let c = client(&mock);
    let err = c.stream_chat(&request()).unwrap_err();
    match &err {
        ClientError::Api {
            status: 429,
            retry_after,
            ..
        } => assert_eq!(*retry_after, Some(Duration::from_secs(7))),
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string().contains("wait 7.0 s before retrying"),
        "{err}"
    );
    // The non-streamed call keeps it too; `retry-after-ms` is the finer of the two.
    match c.chat(&request()).unwrap_err() {
        ClientError::Api { retry_after, .. } => {
            assert_eq!(retry_after, Some(Duration::from_millis(1500)))
        }
        other => panic!("{other:?}"),
    }
    // A value that is not a delay, or no header at all, is no wait, and says none.
    for _ in 0..2 {
        let err = c.stream_chat(&request()).unwrap_err();
        assert!(
            matches!(
                &err,
                ClientError::Api {
                    retry_after: None,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(!err.to_string().contains("wait"), "{err}");
    }
}

#[test]
fn a_rate_limited_model_list_says_how_long_to_wait() {
    let mock = MockProvider::start_with(|req| {
        req.path
            .ends_with("/models")
            .then(|| Reply::rate_limited("7"))
    })
    .unwrap();
    let err = client(&mock).list_models().unwrap_err();
    match &err {
        ClientError::Api {
            status: 429,
            retry_after,
            ..
        } => assert_eq!(*retry_after, Some(Duration::from_secs(7))),
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string().contains("wait 7.0 s before retrying"),
        "{err}"
    );
}
