//! The pure parts of a provider client, shared by both drivers' `Client`: errors, request
//! bodies, the reading of whole (non-streamed) answers, and [`StreamedChat`], a streamed one.
//!
//! A driver's `list_models`, `chat` and `stream_chat` are then only IO: build the request here,
//! send it, and hand the status and body back here. Connection settings (timeouts, TLS, the
//! user agent) are the drivers' own.

use crate::answer::{AnswerError, QUOTED_BODY_CHARS};
use crate::http::{HttpRequest, RequestId};
use crate::session::{Provider, TransportError, TransportErrorKind};
use crate::stream::StreamError;
use crate::wire::{ApiError, ChatRequest, ChatResponse, ModelInfo, ModelList};
use serde::de::DeserializeOwned;
use std::time::Duration;

mod streamed;

pub use streamed::{Next, Opening, StreamedChat};

/// Largest `GET /models` body a client reads.
pub const MAX_MODELS_BODY: u64 = 16 * 1024 * 1024;
/// Largest non-streamed chat answer a client reads.
pub const MAX_CHAT_BODY: u64 = 64 * 1024 * 1024;

/// Why a client call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The provider could not be reached, or the connection broke.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The provider answered with an error status; its message says what to fix, and
    /// `retry_after` how long to wait before trying again when it is rate limited or
    /// overloaded.
    #[error("the provider answered {status}: {error}{}", wait_note(*retry_after))]
    Api {
        /// The HTTP status.
        status: u16,
        /// The provider's error.
        error: Box<ApiError>,
        /// How long the provider asked to wait before a retry (`retry-after-ms`, else
        /// `Retry-After` in seconds; an HTTP date is not read, as the core has no clock), read
        /// as the session reads it.
        retry_after: Option<Duration>,
    },
    /// The stream or the JSON answer could not be read (the server's fault).
    #[error(transparent)]
    Stream(#[from] StreamError),
    /// A 2xx answer that is neither an event stream nor JSON: a login page of a proxy or a
    /// captive portal, or a wrong base URL.
    #[error(
        "the provider answered {status} with `{content_type}` instead of an event stream or JSON (a proxy or login page, or a wrong base URL?); it began: {body_start}"
    )]
    UnexpectedContent {
        /// The status.
        status: u16,
        /// The content type it named.
        content_type: String,
        /// The start of the body, shortened.
        body_start: String,
    },
}

impl From<AnswerError> for ClientError {
    fn from(error: AnswerError) -> Self {
        ClientError::from(&error)
    }
}

/// By reference: a failed stream's partial answer (up to the answer-size cap) stays with the
/// [`AnswerError`] for [`StreamedChat::finish`]; the client error takes only what it says.
impl From<&AnswerError> for ClientError {
    fn from(error: &AnswerError) -> Self {
        match error {
            AnswerError::Status {
                status,
                error,
                retry_after,
                ..
            } => ClientError::Api {
                status: *status,
                error: error.clone(),
                retry_after: *retry_after,
            },
            AnswerError::Stream(failure) => ClientError::Stream(failure.error.clone()),
            AnswerError::NoHead => ClientError::Transport(TransportError::new(
                TransportErrorKind::Io,
                AnswerError::NoHead.to_string(),
            )),
            AnswerError::UnexpectedContent {
                status,
                content_type,
                body_start,
            } => ClientError::UnexpectedContent {
                status: *status,
                content_type: content_type.clone(),
                body_start: body_start.clone(),
            },
        }
    }
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
            retry_after: None,
        })
    }
}

/// The end of an API error's message that says how long the provider asked to wait.
fn wait_note(retry_after: Option<Duration>) -> String {
    match retry_after {
        Some(wait) => format!(
            " (it asks to wait {:.1} s before retrying)",
            wait.as_secs_f64()
        ),
        None => String::new(),
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

/// Reads a `GET /models` answer with its response `headers`: an error status keeps how long
/// the provider asked to wait (`retry-after-ms`, `Retry-After`), as [`read_chat`] does.
pub fn read_models<'a>(
    status: u16,
    headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    body: &[u8],
) -> Result<Vec<ModelInfo>, ClientError> {
    with_retry_after(read_json::<ModelList>(status, body), headers).map(|list| list.data)
}

/// `answer` with the wait its response `headers` ask for set on an [`ClientError::Api`].
fn with_retry_after<'a, T>(
    mut answer: Result<T, ClientError>,
    headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<T, ClientError> {
    if let Err(ClientError::Api { retry_after, .. }) = &mut answer {
        *retry_after = crate::session::retry_after(headers, None);
    }
    answer
}

/// Reads a non-streamed chat answer with its response `headers`: an error status keeps how
/// long the provider asked to wait (`retry-after-ms`, `Retry-After`).
pub fn read_chat<'a>(
    status: u16,
    headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    body: &[u8],
) -> Result<ChatResponse, ClientError> {
    with_retry_after(read_json(status, body), headers)
}

#[cfg(test)]
mod tests;
