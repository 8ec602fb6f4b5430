//! [`StreamedChat`]: the sans-IO half of a driver's `stream_chat` — an [`AnswerReader`] whose
//! failures come out in order with the events, so that a driver's event iterator is only a
//! read loop.

use super::ClientError;
use crate::accumulate::Completion;
use crate::answer::{AnswerError, AnswerReader};
use crate::session::TransportError;
use crate::stream::StreamEvent;

/// What [`StreamedChat::opening`] found: whether `stream_chat` may hand out its events yet.
#[derive(Debug)]
pub enum Opening {
    /// The answer is a stream (or a whole JSON answer): iterate its events.
    Open,
    /// The head announced a failure (an error status); its body holds the message and is
    /// read first, so that `stream_chat` itself returns the error.
    NeedsBody,
    /// The answer failed before any event: `stream_chat` returns this.
    Failed(ClientError),
}

/// What [`StreamedChat::poll_next`] found.
#[derive(Debug)]
pub enum Next {
    /// The next event.
    Event(StreamEvent),
    /// The answer failed; handed out once, after every event before the failure.
    Failed(ClientError),
    /// More body is needed: read, then hand it to [`StreamedChat::handle_data`] or
    /// [`StreamedChat::handle_end`].
    NeedsBody,
    /// Nothing more will come; [`StreamedChat::finish`] has the answer.
    End,
}

#[derive(Debug)]
enum State {
    Reading(Box<AnswerReader>),
    /// The answer is complete.
    Done(Result<Completion, AnswerError>),
}

/// One streamed chat answer for a client without a session: head, body bytes and end in,
/// events and at most one error out, [`finish`](Self::finish) to the complete answer. Both
/// drivers' `ChatEvents` are a read loop around it:
///
/// ```
/// use hrns_core::client::{Next, StreamedChat};
/// use hrns_core::stream::StreamEvent;
///
/// let mut answer = StreamedChat::new(200, [("content-type", &b"text/event-stream"[..])]);
/// let mut body: &[u8] = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n";
/// let mut shown = String::new();
/// loop {
///     match answer.poll_next() {
///         Next::Event(StreamEvent::ContentDelta { text, .. }) => shown.push_str(&text),
///         Next::Event(_) => {}
///         Next::Failed(error) => panic!("{error}"),
///         Next::End => break,
///         // A driver reads its socket here.
///         Next::NeedsBody if body.is_empty() => answer.handle_end(),
///         Next::NeedsBody => answer.handle_data(std::mem::take(&mut body)),
///     }
/// }
/// assert_eq!(shown, "Hi");
/// assert_eq!(answer.finish()?.choices[0].content, "Hi");
/// # Ok::<(), hrns_core::answer::AnswerError>(())
/// ```
#[derive(Debug)]
pub struct StreamedChat {
    state: State,
    /// An error was handed out: nothing fails twice.
    reported: bool,
}

impl StreamedChat {
    /// The answer whose head (status and headers) arrived, with the default limits.
    pub fn new<'a>(status: u16, headers: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Self {
        let mut reader = AnswerReader::new(crate::sse::DEFAULT_MAX_EVENT_SIZE);
        reader.handle_head(status, headers);
        StreamedChat {
            state: State::Reading(Box::new(reader)),
            reported: false,
        }
    }

    /// Whether the events may be handed out yet; see [`Opening`].
    pub fn opening(&mut self) -> Opening {
        self.settle();
        match &self.state {
            State::Reading(reader) if reader.announces_failure() => Opening::NeedsBody,
            State::Done(Err(error)) if !self.reported => {
                self.reported = true;
                Opening::Failed(error.clone().into())
            }
            State::Reading(_) | State::Done(_) => Opening::Open,
        }
    }

    /// Body bytes arrived (any split, any size).
    pub fn handle_data(&mut self, bytes: &[u8]) {
        if let State::Reading(reader) = &mut self.state {
            reader.handle_data(bytes);
        }
    }

    /// The body ended.
    pub fn handle_end(&mut self) {
        if let State::Reading(reader) = &mut self.state {
            reader.handle_end();
        }
    }

    /// Reading the body failed: the answer ends here (what arrived is kept for
    /// [`finish`](Self::finish)), and the transport error is the one error handed out, unless
    /// the status already said what went wrong (a 401 or 429 whose error body broke off): the
    /// user needs "invalid key", not "connection reset".
    pub fn handle_transport_error(&mut self, error: TransportError) -> ClientError {
        self.handle_end();
        self.settle();
        self.reported = true;
        match &self.state {
            State::Done(Err(status @ AnswerError::Status { .. })) => status.into(),
            _ => ClientError::Transport(error),
        }
    }

    /// The next event or the failure, or what the driver should do next.
    #[inline]
    pub fn poll_next(&mut self) -> Next {
        if let State::Reading(reader) = &mut self.state {
            if let Some(event) = reader.poll_event() {
                return Next::Event(event);
            }
        }
        self.settle();
        match &self.state {
            State::Reading(_) => Next::NeedsBody,
            State::Done(Err(error)) if !self.reported => {
                self.reported = true;
                Next::Failed(error.into())
            }
            State::Done(_) => Next::End,
        }
    }

    /// The complete answer (ending it here if its body has not ended), or the error with what
    /// arrived before it.
    pub fn finish(self) -> Result<Completion, AnswerError> {
        match self.state {
            State::Reading(reader) => reader.finish(),
            State::Done(result) => result,
        }
    }

    /// Takes the reader's result once it is complete (every event handed out).
    fn settle(&mut self) {
        if matches!(&self.state, State::Reading(reader) if reader.is_complete()) {
            let State::Reading(reader) =
                std::mem::replace(&mut self.state, State::Done(Err(AnswerError::NoHead)))
            else {
                unreachable!("matched as reading above");
            };
            self.state = State::Done(reader.finish());
        }
    }
}

#[cfg(test)]
#[path = "streamed_tests.rs"]
mod tests;
