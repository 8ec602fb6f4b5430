//! The session's side of the response path: which stream events a user sees, which failures
//! are worth a retry, what is redacted, and the repairs an answer gets before it enters the
//! history. Reading the answer itself is [`crate::answer::AnswerReader`].

use super::retry;
use super::shared::Shared;
use crate::stream::{StreamError, StreamEvent, Truncation};
use crate::wire::ApiError;

use super::event::Event;

/// The marker appended to answer text the user saw before cancelling.
pub(crate) const INTERRUPTED_MARKER: &str = "\n\n[interrupted by the user]";

/// The marker appended to answer text the user saw before the stream broke (the connection
/// dropped, the provider sent an error or something unreadable mid-answer).
pub(crate) const BROKEN_MARKER: &str = "\n\n[cut off: the stream broke]";

/// The stream events a user sees, for choice 0.
pub(super) fn ui_event(ev: StreamEvent) -> Option<Event> {
    match ev {
        StreamEvent::ContentDelta { choice: 0, text } => Some(Event::TextDelta { text }),
        StreamEvent::ReasoningDelta { choice: 0, text } => Some(Event::ReasoningDelta { text }),
        StreamEvent::RefusalDelta { choice: 0, text } => Some(Event::RefusalDelta { text }),
        StreamEvent::ToolCallBegin {
            choice: 0,
            call,
            name,
            ..
        } => Some(Event::ToolCallStreaming { index: call, name }),
        StreamEvent::ContentDelta { .. }
        | StreamEvent::ReasoningDelta { .. }
        | StreamEvent::RefusalDelta { .. }
        | StreamEvent::ToolCallBegin { .. }
        | StreamEvent::ToolCallArgumentsDelta { .. }
        | StreamEvent::ChoiceFinished { .. }
        | StreamEvent::Usage(_)
        | StreamEvent::Done => None,
    }
}

/// Whether a failed stream is worth another request (when nothing was shown yet): a cut-off
/// stream, or a provider error that says it is overloaded or rate limited.
pub(super) fn stream_error_is_retryable(error: &StreamError) -> bool {
    match error {
        StreamError::Truncated {
            truncation: Truncation::Empty | Truncation::MidEvent | Truncation::Unfinished,
        } => true,
        StreamError::Provider { error } => provider_error_is_retryable(error),
        StreamError::Malformed { .. }
        | StreamError::EventTooLarge { .. }
        | StreamError::AnswerTooLarge { .. } => false,
    }
}

/// Whether an error object inside a 200 stream says the provider is overloaded or rate
/// limited.
fn provider_error_is_retryable(error: &ApiError) -> bool {
    let code = match &error.code {
        Some(serde_json::Value::Number(n)) => n.as_u64().map(|c| c as u16),
        Some(serde_json::Value::String(s)) => s.parse().ok(),
        _ => None,
    };
    if code.is_some_and(retry::is_retryable_status) {
        return true;
    }
    let kind = error.kind.as_deref().unwrap_or("");
    ["overloaded", "rate_limit", "server_error", "timeout"]
        .iter()
        .any(|k| kind.contains(k))
}

/// Every field of a provider's error, unknown ones included, without secrets.
pub(super) fn redact_api_error(s: &Shared, error: ApiError) -> ApiError {
    let Ok(mut value) = serde_json::to_value(&error) else {
        return error;
    };
    s.secrets.redact_json(&mut value);
    serde_json::from_value(value).unwrap_or(error)
}

/// The error with the API key removed from the text that came from the provider.
pub(super) fn redact_stream_error(s: &Shared, error: StreamError) -> StreamError {
    match error {
        StreamError::Provider { error } => StreamError::Provider {
            error: Box::new(redact_api_error(s, *error)),
        },
        StreamError::Malformed { error, payload } => StreamError::Malformed {
            error,
            payload: s.redact(payload),
        },
        e @ (StreamError::Truncated { .. }
        | StreamError::EventTooLarge { .. }
        | StreamError::AnswerTooLarge { .. }) => e,
    }
}
