//! The hyper client against the mock provider: models, non-streaming and streaming chat,
//! errors, the read idle timeout.

use hrns_blocking::mock::{MockProvider, Reply};
use hrns_core::StreamEvent;
use hrns_core::answer::AnswerError;
use hrns_core::http::Secret;
use hrns_core::session::{Provider, TransportErrorKind};
use hrns_core::wire::{ChatRequest, Message};
use hrns_tokio::{Client, ClientConfig, ClientError};
use serde_json::json;
use std::time::{Duration, Instant};

const KEY: &str = "sk-tokio-client-HIDDEN-31";

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

#[tokio::test]
async fn lists_models() {
    let mock = MockProvider::start([]).unwrap().with_models(["a", "b"]);
    let models = client(&mock).list_models().await.unwrap();
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    let req = &mock.model_requests()[0];
    assert_eq!(req.method, "GET");
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(req.header("user-agent").unwrap().starts_with("hrns/"));
}

#[tokio::test]
async fn non_streaming_chat() {
    let mock = MockProvider::start([Reply::json(
        200,
        json!({"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}]}),
    )])
    .unwrap();
    let resp = client(&mock).chat(&request()).await.unwrap();
    assert_eq!(resp.choices[0].message.text(), "hello");
    assert_eq!(mock.requests()[0].json()["stream"], false);
}

#[tokio::test]
async fn streaming_chat_yields_events_as_they_arrive() {
    let reply = Reply::text_answer("streamed words");
    let mid = reply.body().len() / 2;
    let mock =
        MockProvider::start([reply.split_at(&[mid]).delay(Duration::from_millis(300))]).unwrap();
    let start = Instant::now();
    let mut events = client(&mock).stream_chat(&request()).await.unwrap();
    let mut text = String::new();
    let mut first_at = None;
    while let Some(event) = events.next().await {
        first_at.get_or_insert_with(|| start.elapsed());
        if let StreamEvent::ContentDelta { text: t, .. } = event.unwrap() {
            text.push_str(&t);
        }
    }
    assert!(
        first_at.unwrap() < Duration::from_millis(250),
        "first event before the delayed half"
    );
    assert_eq!(text, "streamed words");
    let completion = events.finish().await.unwrap();
    assert_eq!(completion.choices[0].content, "streamed words");
    assert!(completion.done);
}

#[tokio::test]
async fn chat_events_are_a_stream() {
    use futures_core::Stream;
    use std::pin::Pin;
    let mock = MockProvider::start([Reply::text_answer("as a stream")]).unwrap();
    let mut events = client(&mock).stream_chat(&request()).await.unwrap();
    let mut count = 0;
    while let Some(event) = std::future::poll_fn(|cx| Pin::new(&mut events).poll_next(cx)).await {
        event.unwrap();
        count += 1;
    }
    assert!(count >= 2, "{count}");
}

#[tokio::test]
async fn api_errors_carry_the_provider_message_and_never_the_key() {
    let mock = MockProvider::start([
        Reply::error(401, "invalid key"),
        Reply::error(404, "no such model"),
    ])
    .unwrap();
    let c = client(&mock);
    let err = c.stream_chat(&request()).await.unwrap_err();
    assert!(
        matches!(&err, ClientError::Api { status: 401, error, .. } if error.message == "invalid key")
    );
    let err2 = c.chat(&request()).await.unwrap_err();
    assert!(err2.to_string().contains("no such model"));
    for shown in [
        format!("{err:?} {err}"),
        format!("{err2:?} {err2}"),
        format!("{c:?}"),
    ] {
        assert!(!shown.contains(KEY), "{shown}");
    }
}

#[tokio::test]
async fn broken_stream_is_an_error_with_partial_content() {
    let reply = Reply::text_answer("abc def ghi jkl mno pqr stu vwx yz");
    // In the middle of the text, before the finish reason.
    let cut = reply.body().len() / 2;
    let mock = MockProvider::start([reply.drop_after(cut)]).unwrap();
    let mut events = client(&mock).stream_chat(&request()).await.unwrap();
    let mut errors = Vec::new();
    while let Some(event) = events.next().await {
        errors.extend(event.err());
    }
    assert_eq!(errors.len(), 1, "one error: {errors:?}");
    match events.finish().await {
        Err(AnswerError::Stream(failure)) => {
            let content = &failure.partial.choices[0].content;
            assert!(!content.is_empty() && content.len() < 34, "{content:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_stream_broken_after_its_finish_reason_still_gives_the_whole_answer() {
    // Cut inside the usage chunk that follows the finish: the break is reported, and the
    // answer, whose every choice finished, is whole.
    let reply = Reply::text_answer("abcdefghijklmnopqrstuvwxyz");
    let usage = reply.offset_of(b"\"usage\":").expect("a usage chunk");
    let mock = MockProvider::start([reply.drop_after(usage)]).unwrap();
    let mut events = client(&mock).stream_chat(&request()).await.unwrap();
    let mut errors = Vec::new();
    while let Some(event) = events.next().await {
        errors.extend(event.err());
    }
    assert_eq!(errors.len(), 1, "the break is reported: {errors:?}");
    let completion = events.finish().await.unwrap();
    assert_eq!(completion.choices[0].content, "abcdefghijklmnopqrstuvwxyz");
    assert!(completion.usage.is_none());
}

#[tokio::test]
async fn an_endless_error_body_fails_at_its_start() {
    let mock =
        MockProvider::start([
            Reply::endless_sse([] as [&str; 0], "{\"error\":\"overloaded\"}").status(503),
        ])
        .unwrap();
    let c = client(&mock);
    let result = tokio::time::timeout(Duration::from_secs(20), c.stream_chat(&request())).await;
    match result {
        Ok(Err(ClientError::Api { status: 503, .. })) => {}
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_login_page_is_an_unexpected_content_error() {
    let page = "<html><title>Sign in to the proxy</title></html>";
    let mock =
        MockProvider::start([Reply::raw(200, &[("content-type", "text/html")], page)]).unwrap();
    match client(&mock).stream_chat(&request()).await {
        Err(ClientError::UnexpectedContent {
            status: 200,
            body_start,
            ..
        }) => assert!(body_start.contains("Sign in"), "{body_start}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_whole_json_answer_to_a_stream_request_is_one_event() {
    let mock = MockProvider::start([Reply::json(
        200,
        json!({"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"}, "finish_reason": "stop"}]}),
    )])
    .unwrap();
    let mut events = client(&mock).stream_chat(&request()).await.unwrap();
    let mut got = Vec::new();
    while let Some(event) = events.next().await {
        got.push(event.unwrap());
    }
    assert!(
        matches!(got.as_slice(), [StreamEvent::ContentDelta { text, .. }] if text == "whole"),
        "{got:?}"
    );
    assert_eq!(events.finish().await.unwrap().choices[0].content, "whole");
}

#[tokio::test]
async fn unreachable_provider_is_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let c = Client::new(Provider::new(url, None), &ClientConfig::default());
    match c.list_models().await {
        Err(ClientError::Transport(e)) => assert_eq!(e.kind, TransportErrorKind::Connect, "{e}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn bad_urls_are_invalid_requests() {
    for url in ["not a url", "ftp://127.0.0.1/v1", "file:///etc"] {
        let c = Client::new(Provider::new(url, None), &ClientConfig::default());
        match c.list_models().await {
            Err(ClientError::Transport(e)) => {
                assert_eq!(e.kind, TransportErrorKind::InvalidRequest, "{url}: {e}")
            }
            other => panic!("{url}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_stalled_stream_times_out_per_read() {
    let reply = Reply::text_answer("first half, then a long silence");
    let mid = reply.body().len() / 2;
    let mock = MockProvider::start([reply.split_at(&[mid]).delay(Duration::from_secs(5))]).unwrap();
    let config = ClientConfig {
        read_idle_timeout: Duration::from_millis(300),
        ..ClientConfig::default()
    };
    let c = Client::new(Provider::new(mock.base_url(), None), &config);
    let start = Instant::now();
    let mut events = c.stream_chat(&request()).await.unwrap();
    let mut error = None;
    while let Some(event) = events.next().await {
        if let Err(e) = event {
            error = Some(e);
        }
    }
    match error {
        Some(ClientError::Transport(e)) => assert_eq!(e.kind, TransportErrorKind::Timeout),
        other => panic!("{other:?}"),
    }
    let took = start.elapsed();
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[tokio::test]
async fn no_head_within_the_idle_timeout_is_a_timeout() {
    let mock = MockProvider::start([Reply::hang()]).unwrap();
    let config = ClientConfig {
        read_idle_timeout: Duration::from_millis(200),
        ..ClientConfig::default()
    };
    let c = Client::new(Provider::new(mock.base_url(), None), &config);
    match c.chat(&request()).await {
        Err(ClientError::Transport(e)) => assert_eq!(e.kind, TransportErrorKind::Timeout),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_rate_limited_answer_says_how_long_to_wait() {
    let mock = MockProvider::start([
        Reply::rate_limited("7"),
        Reply::rate_limited("2").header("retry-after-ms", "1500"),
        Reply::rate_limited("soon"),
        Reply::error(503, "overloaded"),
    ])
    .unwrap();
    let c = client(&mock);
    let err = c.stream_chat(&request()).await.unwrap_err();
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
    match c.chat(&request()).await.unwrap_err() {
        ClientError::Api { retry_after, .. } => {
            assert_eq!(retry_after, Some(Duration::from_millis(1500)))
        }
        other => panic!("{other:?}"),
    }
    // A value that is not a delay, or no header at all, is no wait, and says none.
    for _ in 0..2 {
        let err = c.stream_chat(&request()).await.unwrap_err();
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

/// The idle timeout measures the provider's silence, not the caller's pace: a caller busy for
/// longer than the timeout between two reads (here it blocks its thread, as heavy work between
/// polls does) loses nothing once the provider has sent everything.
#[tokio::test]
async fn a_caller_slower_than_the_idle_timeout_is_not_a_stall() {
    let text = "all of it sent at once";
    let mock = MockProvider::start([Reply::text_answer(text)]).unwrap();
    let idle = Duration::from_millis(500);
    let config = ClientConfig {
        read_idle_timeout: idle,
        ..ClientConfig::default()
    };
    let c = Client::new(Provider::new(mock.base_url(), None), &config);
    let mut events = c.stream_chat(&request()).await.unwrap();
    let mut shown = String::new();
    let mut first = true;
    while let Some(event) = events.next().await {
        if let StreamEvent::ContentDelta { text, .. } = event.unwrap() {
            shown.push_str(&text);
        }
        if std::mem::take(&mut first) {
            std::thread::sleep(idle + idle / 2);
        }
    }
    assert_eq!(shown, text);
    assert_eq!(events.finish().await.unwrap().choices[0].content, text);
}

#[tokio::test]
async fn a_rate_limited_model_list_says_how_long_to_wait() {
    let mock = MockProvider::start_with(|req| {
        req.path
            .ends_with("/models")
            .then(|| Reply::rate_limited("7"))
    })
    .unwrap();
    let err = client(&mock).list_models().await.unwrap_err();
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
