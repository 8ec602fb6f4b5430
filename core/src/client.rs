//! The pure parts of a provider client, shared by both drivers' `Client`: connection settings,
//! errors, request bodies and the reading of whole (non-streamed) answers.
//!
//! A driver's `list_models`, `chat` and `stream_chat` are then only IO: build the request here,
//! send it, and hand the status and body back here.

use crate::http::{HttpRequest, RequestId};
use crate::session::{Provider, TransportError};
use crate::stream::StreamError;
use crate::wire::{ApiError, ChatRequest, ChatResponse, ModelInfo, ModelList};
use serde::de::DeserializeOwned;
use std::time::Duration;

/// Largest `GET /models` body a client reads.
pub const MAX_MODELS_BODY: u64 = 16 * 1024 * 1024;
/// Largest non-streamed chat answer a client reads.
pub const MAX_CHAT_BODY: u64 = 64 * 1024 * 1024;
/// Largest error body a client reads (the start of it is enough to say what went wrong).
pub const MAX_ERROR_BODY: u64 = 64 * 1024;

/// How many characters of an unreadable body an error quotes.
const QUOTED_BODY_CHARS: usize = 300;

/// Connection settings of a driver's client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// Longest wait for a connection (default 10 s).
    pub connect_timeout: Duration,
    /// Longest wait for the response head and, after it, for each piece of the body: a stream
    /// that stalls this long fails (default 300 s, as reasoning models can think quietly).
    pub read_idle_timeout: Duration,
    /// Accept any TLS certificate. Only for self-signed local servers; off by default.
    pub skip_verify: bool,
    /// The `User-Agent` header.
    pub user_agent: String,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            connect_timeout: Duration::from_secs(10),
            read_idle_timeout: Duration::from_secs(300),
            skip_verify: false,
            user_agent: format!("hrns/{}", env!("CARGO_PKG_VERSION")),
        }
    }
}

/// Why a client call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The provider could not be reached, or the connection broke.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The provider answered with an error status; its message says what to fix.
    #[error("the provider answered {status}: {error}")]
    Api {
        /// The HTTP status.
        status: u16,
        /// The provider's error.
        error: Box<ApiError>,
    },
    /// The stream or the JSON answer could not be read (the server's fault).
    #[error(transparent)]
    Stream(#[from] StreamError),
}

/// The `GET /models` request of `provider`.
pub fn models_request(provider: &Provider) -> HttpRequest {
    provider.get_models(RequestId(0))
}

/// The `POST /chat/completions` request for `request`, with `stream` set as asked. A
/// non-streamed request never carries `stream_options` (providers reject it there).
pub fn chat_request(provider: &Provider, request: &ChatRequest, stream: bool) -> HttpRequest {
    let mut request = request.clone();
    request.stream = stream;
    if !stream {
        request.stream_options = None;
    }
    let body = serde_json::to_vec(&request).expect("a chat request always serializes");
    provider.post_chat(RequestId(0), body)
}

/// `Ok` for a 2xx status; otherwise the provider's error read from `body`.
pub fn check_status(status: u16, body: &[u8]) -> Result<(), ClientError> {
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(ClientError::Api {
            status,
            error: Box::new(ApiError::from_body(body)),
        })
    }
}

/// Reads a whole JSON answer: the status is checked first, then `body` is decoded as `T`; a
/// body that is not a `T` is [`StreamError::Malformed`] with the start of it quoted.
pub fn read_json<T: DeserializeOwned>(status: u16, body: &[u8]) -> Result<T, ClientError> {
    check_status(status, body)?;
    serde_json::from_slice(body).map_err(|e| {
        let text = String::from_utf8_lossy(body);
        ClientError::Stream(StreamError::Malformed {
            error: e.to_string(),
            payload: text.chars().take(QUOTED_BODY_CHARS).collect(),
        })
    })
}

/// Reads a `GET /models` answer.
pub fn read_models(status: u16, body: &[u8]) -> Result<Vec<ModelInfo>, ClientError> {
    read_json::<ModelList>(status, body).map(|list| list.data)
}

/// Reads a non-streamed chat answer.
pub fn read_chat(status: u16, body: &[u8]) -> Result<ChatResponse, ClientError> {
    read_json(status, body)
}

#[cfg(test)]
mod tests {
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
            Err(ClientError::Api { status: 401, error }) => assert_eq!(error.message, "bad key"),
            other => panic!("{other:?}"),
        }
        let models = read_models(200, br#"{"data":[{"id":"a"},{"id":"b"}]}"#).unwrap();
        assert_eq!(models.len(), 2);
        assert!(matches!(
            read_models(500, b"oops"),
            Err(ClientError::Api { status: 500, .. })
        ));
        let long = format!("<html>{}</html>", "x".repeat(1000));
        match read_chat(200, long.as_bytes()) {
            Err(ClientError::Stream(StreamError::Malformed { payload, .. })) => {
                assert_eq!(payload.chars().count(), QUOTED_BODY_CHARS);
                assert!(payload.starts_with("<html>"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn default_config_verifies_certificates() {
        let c = ClientConfig::default();
        assert!(!c.skip_verify);
        assert!(c.user_agent.starts_with("hrns/"));
    }
}
