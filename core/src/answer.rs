//! [`AnswerReader`]: the response to one chat request, read sans-IO — the head, body bytes and
//! end go in, stream events come out, and [`AnswerReader::finish`] gives the complete answer.
//!
//! It is the one place that knows what a chat response may look like: an event stream (the
//! usual case), a whole JSON answer (a provider that ignored `stream: true`), or an error
//! status with the provider's error body. [`Session`](crate::session::Session) reads every
//! answer with it; a program that sends single chat requests of its own can too.

use crate::accumulate::{Choice, Completion, FinishReason, ToolCallParts};
use crate::stream::{ChatStream, StreamError, StreamEvent, StreamFailure};
use crate::wire::{ApiError, ChatResponse};
use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

/// Most of an error body that is read: its start says what went wrong, and the answer is
/// complete once this much arrived (the rest is never read).
pub const MAX_ERROR_BODY: usize = 64 * 1024;

/// How many characters of an unreadable body an error quotes (an error answer's, here and in
/// [`crate::client`]).
pub(crate) const QUOTED_BODY_CHARS: usize = 300;

/// Why an answer could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    /// The provider answered with an error status; its message says what to fix.
    #[error("the provider answered {status}: {error}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// How long the provider asked to wait before a retry (`Retry-After`).
        retry_after: Option<Duration>,
        /// The provider's error, read from the body.
        error: Box<ApiError>,
        /// The start of the body (at most [`MAX_ERROR_BODY`] bytes), lossily decoded.
        body: String,
    },
    /// The stream or the JSON answer could not be read (the server's fault), with what arrived
    /// before the failure.
    #[error(transparent)]
    Stream(#[from] StreamFailure),
    /// The body ended before the response head was handed in: the connection closed early.
    #[error("the response ended before its status line")]
    NoHead,
    /// A 2xx answer that is neither an event stream nor JSON: a login page of a proxy or a
    /// captive portal, or a wrong base URL. Not worth a retry.
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

#[derive(Debug)]
enum Body {
    AwaitingHead,
    Stream(Box<ChatStream>),
    Json(Vec<u8>),
    /// A 2xx that is neither a stream nor JSON: kept until its first bytes arrive.
    Unexpected {
        status: u16,
        content_type: String,
    },
    Error {
        status: u16,
        retry_after: Option<Duration>,
        body: Vec<u8>,
    },
    /// `finish` may take the result; `poll_event` has nothing more.
    Ended(Box<Result<Completion, AnswerError>>),
}

/// The response to one chat request; see the module docs.
///
/// Call order: [`handle_head`](Self::handle_head) once, [`handle_data`](Self::handle_data) for
/// each piece of the body (any split, any size), [`handle_end`](Self::handle_end) at its end;
/// drain [`poll_event`](Self::poll_event) after each; [`finish`](Self::finish) once
/// [`is_complete`](Self::is_complete) (or at any time, to end early).
///
/// ```
/// use hrns_core::answer::AnswerReader;
/// use hrns_core::stream::StreamEvent;
///
/// let mut answer = AnswerReader::new(hrns_core::sse::DEFAULT_MAX_EVENT_SIZE);
/// answer.handle_head(200, [("content-type", &b"text/event-stream"[..])]);
/// answer.handle_data(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
/// let mut text = String::new();
/// while let Some(event) = answer.poll_event() {
///     if let StreamEvent::ContentDelta { text: t, .. } = event {
///         text.push_str(&t);
///     }
/// }
/// assert!(answer.is_complete());
/// assert_eq!(text, "Hi");
/// assert_eq!(answer.finish()?.choices[0].content, "Hi");
/// # Ok::<(), hrns_core::answer::AnswerError>(())
/// ```
#[derive(Debug)]
pub struct AnswerReader {
    body: Body,
    max_event_size: usize,
    max_answer_bytes: usize,
    /// Events of a whole JSON answer, handed out after its end.
    events: VecDeque<StreamEvent>,
}

impl AnswerReader {
    /// A reader whose single stream events (and whole JSON answers) may not exceed
    /// `max_event_size` bytes, with the default answer-size cap
    /// ([`DEFAULT_MAX_ANSWER_BYTES`](crate::stream::DEFAULT_MAX_ANSWER_BYTES)).
    pub fn new(max_event_size: usize) -> Self {
        Self::with_limits(max_event_size, crate::stream::DEFAULT_MAX_ANSWER_BYTES)
    }

    /// A reader with an event size limit and a cap on the answer's text, reasoning, refusal
    /// and tool arguments together ([`StreamError::AnswerTooLarge`] past it), streamed or
    /// whole.
    pub fn with_limits(max_event_size: usize, max_answer_bytes: usize) -> Self {
        AnswerReader {
            body: Body::AwaitingHead,
            max_event_size,
            max_answer_bytes,
            events: VecDeque::new(),
        }
    }

    /// The status line and headers arrived. A 2xx whose content type says JSON is read as a
    /// whole answer; any other 2xx as an event stream; other statuses as an error body.
    /// A second head is ignored. A `Retry-After` date is ignored here (there is no wall time
    /// to count from); [`handle_head_at`](Self::handle_head_at) reads it.
    pub fn handle_head<'a>(
        &mut self,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) {
        self.head(status, headers, None);
    }

    /// [`handle_head`](Self::handle_head) for a head that arrived at the wall time `wall`, so
    /// that a `Retry-After` HTTP date becomes a delay.
    pub fn handle_head_at<'a>(
        &mut self,
        wall: SystemTime,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) {
        self.head(status, headers, Some(wall));
    }

    fn head<'a>(
        &mut self,
        status: u16,
        headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
        wall: Option<SystemTime>,
    ) {
        if !matches!(self.body, Body::AwaitingHead) {
            return;
        }
        let headers: Vec<(&str, &[u8])> = headers.into_iter().collect();
        self.body = if (200..300).contains(&status) {
            let content_type = headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
                .map(|(_, v)| String::from_utf8_lossy(v).to_ascii_lowercase());
            match content_type.as_deref().map(kind_of) {
                Some(Kind::Json) => Body::Json(Vec::new()),
                // No content type at all is read as a stream (some servers send none).
                None | Some(Kind::Stream) => Body::Stream(Box::new(ChatStream::with_limits(
                    self.max_event_size,
                    self.max_answer_bytes,
                ))),
                Some(Kind::Other) => Body::Unexpected {
                    status,
                    content_type: crate::text::shorten(content_type.as_deref().unwrap_or(""), 100)
                        .into_owned(),
                },
            }
        } else {
            Body::Error {
                status,
                retry_after: crate::session::retry_after(headers.iter().copied(), wall),
                body: Vec::new(),
            }
        };
    }

    /// Whether the head arrived.
    pub fn has_head(&self) -> bool {
        !matches!(self.body, Body::AwaitingHead)
    }

    /// Whether the head announced a failure (an error status, or a 2xx that is neither a
    /// stream nor JSON) whose body is still to come: the answer will be an error, and its
    /// body only says which.
    pub fn announces_failure(&self) -> bool {
        match self.body {
            Body::Error { .. } | Body::Unexpected { .. } => true,
            Body::AwaitingHead | Body::Stream(_) | Body::Json(_) | Body::Ended(_) => false,
        }
    }

    /// Body bytes arrived (any split, any size; each piece is decoded where it lies). Bytes after
    /// the answer is complete are ignored. Returns `false` (and ignores them) if the head has
    /// not arrived yet — a caller's mistake.
    pub fn handle_data(&mut self, bytes: &[u8]) -> bool {
        match &mut self.body {
            Body::AwaitingHead => return false,
            Body::Stream(stream) => stream.feed(bytes),
            Body::Json(body) => {
                if body.len() + bytes.len() > self.max_event_size {
                    let limit = self.max_event_size;
                    self.fail(StreamError::EventTooLarge { limit });
                } else {
                    body.extend_from_slice(bytes);
                }
            }
            Body::Error { body, .. } => {
                let room = MAX_ERROR_BODY.saturating_sub(body.len());
                body.extend_from_slice(&bytes[..bytes.len().min(room)]);
                // The start says what went wrong: the answer is complete, the rest unread.
                if body.len() == MAX_ERROR_BODY {
                    self.handle_end();
                }
            }
            // An empty piece says nothing yet (an empty frame); wait for bytes or the end.
            Body::Unexpected { .. } if bytes.is_empty() => {}
            Body::Unexpected { .. } => {
                // The first bytes say enough: it fails at once, without waiting for the end.
                let Body::Unexpected {
                    status,
                    content_type,
                } = std::mem::replace(&mut self.body, Body::AwaitingHead)
                else {
                    unreachable!("matched above");
                };
                self.body = Body::Ended(Box::new(Err(unexpected(status, content_type, bytes))));
            }
            Body::Ended(_) => {}
        }
        true
    }

    /// The body ended.
    pub fn handle_end(&mut self) {
        let result = match std::mem::replace(&mut self.body, Body::AwaitingHead) {
            Body::AwaitingHead => Err(AnswerError::NoHead),
            Body::Stream(mut stream) => {
                stream.feed_eof();
                self.body = Body::Stream(stream);
                return;
            }
            Body::Json(body) => match serde_json::from_slice::<ChatResponse>(&body) {
                Ok(resp) => 'json: {
                    let completion = completion_from_response(resp);
                    let limit = self.max_answer_bytes;
                    if answer_bytes(&completion) > limit {
                        break 'json Err(AnswerError::Stream(StreamFailure {
                            error: StreamError::AnswerTooLarge { limit },
                            partial: Box::default(),
                        }));
                    }
                    if let Some(choice) = completion.choices.iter().find(|c| c.index == 0) {
                        if !choice.content.is_empty() {
                            self.events.push_back(StreamEvent::ContentDelta {
                                choice: 0,
                                text: choice.content.as_str().into(),
                            });
                        }
                    }
                    Ok(completion)
                }
                Err(e) => Err(malformed(&e.to_string(), &body)),
            },
            Body::Unexpected {
                status,
                content_type,
            } => Err(unexpected(status, content_type, b"")),
            Body::Error {
                status,
                retry_after,
                body,
            } => Err(AnswerError::Status {
                status,
                retry_after,
                error: Box::new(ApiError::from_body(&body)),
                body: String::from_utf8_lossy(&body).into_owned(),
            }),
            ended @ Body::Ended(_) => {
                self.body = ended;
                return;
            }
        };
        self.body = Body::Ended(Box::new(result));
    }

    /// The next stream event, or `None` when more input is needed (or nothing more will
    /// come). A stream error is not an event: it is given by [`finish`](Self::finish).
    #[inline]
    pub fn poll_event(&mut self) -> Option<StreamEvent> {
        if let Some(ev) = self.events.pop_front() {
            return Some(ev);
        }
        match &mut self.body {
            Body::Stream(stream) => match stream.queued() {
                Some(ev) => Some(ev),
                None => stream.poll_event().ok().flatten(),
            },
            Body::AwaitingHead
            | Body::Json(_)
            | Body::Unexpected { .. }
            | Body::Error { .. }
            | Body::Ended(_) => None,
        }
    }

    /// Whether the answer is complete (or failed) and every event was handed out: then
    /// [`finish`](Self::finish) has everything, and the rest of the body may be dropped.
    pub fn is_complete(&self) -> bool {
        self.events.is_empty()
            && match &self.body {
                Body::Stream(stream) => stream.is_finished(),
                Body::Ended(_) => true,
                Body::AwaitingHead
                | Body::Json(_)
                | Body::Unexpected { .. }
                | Body::Error { .. } => false,
            }
    }

    /// Whether a streamed answer is whole though its body has not ended
    /// ([`ChatStream::is_whole`]): a connection that breaks now loses nothing of it.
    pub fn is_whole(&self) -> bool {
        match &self.body {
            Body::Stream(stream) => stream.is_whole(),
            Body::AwaitingHead
            | Body::Json(_)
            | Body::Unexpected { .. }
            | Body::Error { .. }
            | Body::Ended(_) => false,
        }
    }

    /// The text of choice 0 so far (what a user saw of a streamed answer).
    pub fn content(&self) -> String {
        match &self.body {
            Body::Stream(stream) => stream
                .accumulator()
                .choices()
                .find(|c| c.index == 0)
                .map(|c| c.content.clone())
                .unwrap_or_default(),
            Body::AwaitingHead
            | Body::Json(_)
            | Body::Unexpected { .. }
            | Body::Error { .. }
            | Body::Ended(_) => String::new(),
        }
    }

    /// Ends the answer (as if the body ended here, if it has not) and gives the complete
    /// choices or the error.
    pub fn finish(mut self) -> Result<Completion, AnswerError> {
        self.handle_end();
        match self.body {
            Body::Stream(stream) => stream.finish().map_err(AnswerError::Stream),
            Body::Ended(result) => *result,
            Body::AwaitingHead | Body::Json(_) | Body::Unexpected { .. } | Body::Error { .. } => {
                unreachable!("handle_end leaves a stream or an ended answer")
            }
        }
    }

    fn fail(&mut self, error: StreamError) {
        self.body = Body::Ended(Box::new(Err(AnswerError::Stream(StreamFailure {
            error,
            partial: Box::default(),
        }))));
    }
}

/// The bytes of text, reasoning, refusal and tool arguments of a whole answer, which the
/// answer-size cap limits.
fn answer_bytes(completion: &Completion) -> usize {
    completion
        .choices
        .iter()
        .map(|c| {
            c.content.len()
                + c.reasoning.as_ref().map_or(0, String::len)
                + c.refusal.as_ref().map_or(0, String::len)
                + c.tool_calls
                    .iter()
                    .map(|t| t.arguments.len())
                    .sum::<usize>()
        })
        .sum()
}

/// What a 2xx content type announces.
pub(crate) enum Kind {
    Stream,
    Json,
    Other,
}

pub(crate) fn kind_of(content_type: &str) -> Kind {
    // `text/plain` is read as a stream too: some gateways label event streams so.
    if content_type.contains("event-stream") || content_type.starts_with("text/plain") {
        Kind::Stream
    } else if content_type.contains("json") {
        Kind::Json
    } else {
        Kind::Other
    }
}

fn unexpected(status: u16, content_type: String, body: &[u8]) -> AnswerError {
    let text = String::from_utf8_lossy(&body[..body.len().min(4 * QUOTED_BODY_CHARS)]);
    let body_start = crate::text::shorten(text.trim(), QUOTED_BODY_CHARS).into_owned();
    AnswerError::UnexpectedContent {
        status,
        content_type,
        body_start,
    }
}

fn malformed(error: &str, body: &[u8]) -> AnswerError {
    let text = String::from_utf8_lossy(body);
    AnswerError::Stream(StreamFailure {
        error: StreamError::Malformed {
            error: error.to_owned(),
            payload: crate::text::shorten(&text, QUOTED_BODY_CHARS).into_owned(),
        },
        partial: Box::default(),
    })
}

/// A non-streamed answer (a provider that ignored `stream: true`) as a completion.
fn completion_from_response(resp: ChatResponse) -> Completion {
    let choices = resp
        .choices
        .into_iter()
        .map(|c| {
            let m = c.message;
            Choice {
                index: c.index,
                role: Some(m.role.as_str().to_owned()),
                content: m.text(),
                reasoning: m.reasoning_content.clone(),
                refusal: m.refusal.clone(),
                tool_calls: m
                    .tool_calls
                    .into_iter()
                    .enumerate()
                    .map(|(i, t)| ToolCallParts {
                        index: i as u32,
                        id: Some(t.id),
                        kind: Some(t.kind),
                        name: t.function.name,
                        arguments: t.function.arguments,
                        function_extra: t.function.extra,
                        extra: t.extra,
                    })
                    .collect(),
                function_call: None,
                finish_reason: c.finish_reason.as_deref().and_then(FinishReason::parse),
                logprobs: None,
                extra: m.extra,
                meta: c.extra,
            }
        })
        .collect();
    Completion {
        id: resp.id,
        model: resp.model,
        choices,
        usage: resp.usage,
        done: true,
        extra: resp.extra,
    }
}

#[cfg(test)]
mod tests;
