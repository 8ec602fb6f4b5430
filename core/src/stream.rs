//! `ChatStream`: the bytes of a streamed `/chat/completions` answer in, UI deltas and the complete
//! choices out.
//!
//! It is [`sse::Decoder`] + chunk parsing + [`Accumulator`], with the decoder's
//! `feed` / `feed_eof` / `poll_event` trio. DESIGN.md's rule 2 lives here: `event: error` is an
//! error, data `[DONE]` ends the stream (later bytes are ignored), empty data is a keep-alive.

use crate::accumulate::{Accumulator, ChunkError, Completion};
use crate::sse::{self, DecodeError};
use crate::wire::ApiError;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::ops::ControlFlow;

pub use crate::accumulate::{DeltaText, StreamEvent};

/// The default cap on one answer's text, reasoning, refusal and tool arguments together
/// (32 MiB): far above any real answer, low enough that an endless stream fails in seconds
/// instead of filling the memory. `maxAnswerBytes` in `config.json` sets another.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 32 * 1024 * 1024;

/// The config key that sets the answer-size cap, named in [`StreamError::AnswerTooLarge`].
pub const MAX_ANSWER_BYTES_KEY: &str = "maxAnswerBytes";

/// How a stream ended too early.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Truncation {
    /// The body ended with no event at all.
    Empty,
    /// The body ended in the middle of an event.
    MidEvent,
    /// The body ended between events, without `[DONE]`, while a choice had no finish reason.
    Unfinished,
}

/// Why a stream could not be read to its end. Errors are sticky: once `poll_event` returns
/// one, it returns the same one again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StreamError {
    /// The body ended before the answer was complete: the connection broke or the server
    /// stopped early. Retrying the request is the usual remedy.
    #[error("the provider's stream ended before the answer was complete ({})", truncation_text(*.truncation))]
    Truncated {
        /// How it ended.
        truncation: Truncation,
    },
    /// The server sent data that is not a chat-completion chunk. Server's fault; the payload
    /// (shortened) shows what it sent.
    #[error("the provider sent a malformed chunk ({error}): {payload}")]
    Malformed {
        /// What the JSON parser said.
        error: String,
        /// The offending data, shortened.
        payload: String,
    },
    /// The provider reported an error inside the stream (`{"error":…}` or `event: error`).
    #[error("the provider reported an error: {error}")]
    Provider {
        /// The provider's error object.
        error: Box<ApiError>,
    },
    /// One event was larger than the configured limit. Server's fault, or a limit set too low.
    #[error(
        "the provider sent an event larger than {limit} bytes (the byte limit for one event), which \
         no chat answer needs; check the base URL and the server"
    )]
    EventTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The answer's text, reasoning, refusal and tool arguments together passed the cap: a
    /// server that does not stop (an endless stream), or a cap set too low. Not retried.
    #[error(
        "the answer passed {limit} bytes of text, reasoning and tool arguments (the answer-size \
         cap); the provider may be stuck in an endless answer. If such long answers are \
         expected, raise `maxAnswerBytes` in config.json"
    )]
    AnswerTooLarge {
        /// The cap in bytes.
        limit: usize,
    },
}

fn truncation_text(t: Truncation) -> &'static str {
    match t {
        Truncation::Empty => "the body was empty",
        Truncation::MidEvent => "it stopped in the middle of an event",
        Truncation::Unfinished => "no [DONE] and no finish reason",
    }
}

impl From<ChunkError> for StreamError {
    fn from(e: ChunkError) -> Self {
        match e {
            ChunkError::Malformed { error, payload } => StreamError::Malformed { error, payload },
            ChunkError::Provider(error) => StreamError::Provider { error },
        }
    }
}

/// A stream that failed, with everything that was received before the failure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{error}")]
pub struct StreamFailure {
    /// What went wrong.
    pub error: StreamError,
    /// What arrived before it, so that nothing is lost.
    pub partial: Box<Completion>,
}

/// Tested with `matches!` on the per-event path: the derived `==` (which must compare errors)
/// is a call per event there.
#[derive(Debug, Clone, PartialEq)]
enum State {
    Open,
    /// `[DONE]` arrived.
    Done,
    /// The input ended cleanly without `[DONE]`.
    Ended,
    Failed(StreamError),
}

/// Decodes a streamed chat answer; see the module docs.
///
/// ```
/// use hrns_core::stream::{ChatStream, StreamEvent};
///
/// let mut stream = ChatStream::new();
/// stream.feed(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n");
/// stream.feed(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
/// stream.feed_eof();
/// let mut text = String::new();
/// while let Some(event) = stream.poll_event()? {
///     if let StreamEvent::ContentDelta { text: t, .. } = event {
///         text.push_str(&t);
///     }
/// }
/// assert_eq!(text, "Hello");
/// let completion = stream.finish()?;
/// assert_eq!(completion.choices[0].content, "Hello");
/// assert!(completion.done);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ChatStream {
    decoder: sse::Decoder,
    /// Where the decoder hands its events (kept apart from the decoder so that decoding in
    /// place borrows both, rather than moving the decoder out and back for every piece).
    out: Output,
    /// The input ended (the decoder is told once its events are drained).
    eof: bool,
    /// The body ended inside an event (its blank line, or more, missing).
    ended_inside_event: bool,
}

/// The answer so far and its events not yet handed out.
#[derive(Debug)]
struct Output {
    acc: Accumulator,
    events: VecDeque<StreamEvent>,
    state: State,
    /// The answer-size cap, and the bytes of text, reasoning, refusal and tool arguments
    /// counted so far (each delta counted once, as it arrives).
    max_answer_bytes: usize,
    answer_bytes: usize,
}

impl Default for ChatStream {
    fn default() -> Self {
        Self::new()
    }
}

impl ChatStream {
    /// A stream with the default event size limit ([`sse::DEFAULT_MAX_EVENT_SIZE`]).
    pub fn new() -> Self {
        Self::with_max_event_size(sse::DEFAULT_MAX_EVENT_SIZE)
    }

    /// A stream whose single events may not exceed `limit` bytes.
    pub fn with_max_event_size(limit: usize) -> Self {
        Self::with_limits(limit, DEFAULT_MAX_ANSWER_BYTES)
    }

    /// A stream whose single events may not exceed `max_event_size` bytes and whose answer
    /// (text, reasoning, refusal and tool arguments of all choices together) may not exceed
    /// `max_answer_bytes`; past that it fails with [`StreamError::AnswerTooLarge`].
    pub fn with_limits(max_event_size: usize, max_answer_bytes: usize) -> Self {
        ChatStream {
            decoder: sse::Decoder::with_max_event_size(max_event_size),
            out: Output {
                acc: Accumulator::new(),
                events: VecDeque::new(),
                state: State::Open,
                max_answer_bytes,
                answer_bytes: 0,
            },
            eof: false,
            ended_inside_event: false,
        }
    }

    /// The same stream with every chunk parsed in full: the reference the fast path is
    /// compared with by tests and the fuzz targets.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn without_fast_path(mut self) -> Self {
        self.out.acc.no_fast_path = true;
        self
    }

    /// Takes body bytes, any amount: they are decoded here where they lie, the events queued
    /// for [`poll_event`](Self::poll_event), and only an incomplete last line is copied
    /// (copying every byte into the decoder's buffer was a seventh of the decode path's time,
    /// measured in `BENCHMARKS.md`). Whole common events are taken straight from the input
    /// (see the `Sink` implementation), whether the piece is one event, as providers that
    /// flush each event send them, or a large read. Bytes after `[DONE]`, an error or the end
    /// are ignored.
    pub fn feed(&mut self, bytes: &[u8]) {
        if !matches!(self.out.state, State::Open) || self.eof {
            return;
        }
        let decoded = self.decoder.decode_into(bytes, &mut self.out);
        if let Err(DecodeError::EventTooLarge { limit }) = decoded {
            self.out
                .apply(Read::Failed(StreamError::EventTooLarge { limit }));
        }
        if !matches!(self.out.state, State::Open) {
            // Nothing more is read after `[DONE]` or a failure: the decoder's buffers (the rest
            // of this piece, kept after the `Break`) go, as `apply` does for `[DONE]`.
            self.decoder = sse::Decoder::with_max_event_size(self.decoder.max_event_size());
        }
    }

    /// Marks the end of the body.
    pub fn feed_eof(&mut self) {
        self.eof = true;
    }

    /// The next event: `Ok(None)` means "feed me more" (or, after the end, nothing more).
    #[inline]
    pub fn poll_event(&mut self) -> Result<Option<StreamEvent>, StreamError> {
        loop {
            if let Some(ev) = self.out.events.pop_front() {
                return Ok(Some(ev));
            }
            match &self.out.state {
                State::Failed(e) => return Err(e.clone()),
                State::Done | State::Ended => return Ok(None),
                // `feed` decodes every complete line at once: until the end of input, the
                // decoder has nothing more to give (and asking it costs a scan per piece).
                State::Open if !self.eof => return Ok(None),
                State::Open => {}
            }
            match self.next_read() {
                Some(read) => self.apply(read),
                None if !self.decoder.is_eof() => {
                    self.close_last_event();
                    self.decoder.feed_eof();
                }
                None => self.out.state = self.end_state(),
            }
        }
    }

    /// The next event already decoded, if any: [`poll_event`](Self::poll_event)'s common case,
    /// without its result to unwrap.
    #[inline]
    pub(crate) fn queued(&mut self) -> Option<StreamEvent> {
        self.out.events.pop_front()
    }

    /// Reads the decoder's next SSE event into the accumulator; `None` when it needs input.
    fn next_read(&mut self) -> Option<Read> {
        match self.decoder.poll_event_bytes() {
            Ok(Some(event)) => Some(read_sse(event, &mut self.out.acc, &mut self.out.events)),
            Ok(None) => None,
            Err(DecodeError::EventTooLarge { limit }) => {
                Some(Read::Failed(StreamError::EventTooLarge { limit }))
            }
        }
    }

    fn apply(&mut self, read: Read) {
        let done = matches!(read, Read::Done);
        self.out.apply(read);
        if done {
            // Nothing more is read: the decoder's buffers go.
            let limit = self.decoder.max_event_size();
            self.decoder = sse::Decoder::with_max_event_size(limit);
        }
    }

    /// Whether the answer so far is whole: it has a choice, and every choice has its finish
    /// reason. What may still come (usage, `[DONE]`) tells nothing more of it, so a body that
    /// ends now, cleanly or not, ends a whole answer.
    pub fn is_whole(&self) -> bool {
        let acc = &self.out.acc;
        !acc.is_empty() && acc.choices().all(|c| c.finish_reason.is_some())
    }

    /// The accumulated answer so far.
    pub fn accumulator(&self) -> &Accumulator {
        &self.out.acc
    }

    /// Whether the stream reached its end: `[DONE]`, a clean end of input, or an error. Once
    /// true, [`ChatStream::finish`] has everything.
    pub fn is_finished(&self) -> bool {
        !matches!(self.out.state, State::Open) && self.out.events.is_empty()
    }

    /// Ends the stream (as if the body ended here, if it has not) and gives the complete
    /// choices, or the error with everything received before it.
    pub fn finish(mut self) -> Result<Completion, StreamFailure> {
        self.feed_eof();
        while let Ok(Some(_)) = self.poll_event() {}
        let Output { acc, state, .. } = self.out;
        match state {
            State::Done => Ok(acc.into_completion(true)),
            State::Ended => Ok(acc.into_completion(false)),
            State::Failed(error) => Err(StreamFailure {
                error,
                partial: Box::new(acc.into_completion(false)),
            }),
            State::Open => unreachable!("poll_event after feed_eof always leaves the open state"),
        }
    }

    /// At the end of the body, reads an event the body left open (its blank line, or its
    /// last line end, missing) as if it were closed. The SSE specification discards such an
    /// event, but servers that end with `data: [DONE]` or their last chunk and no blank line
    /// are common, and their answer is whole. An event that, closed, is not a chunk was cut
    /// off: what came before it stands, and [`Self::end_state`] decides.
    fn close_last_event(&mut self) {
        if self.decoder.buffered_len() == 0 {
            return;
        }
        self.ended_inside_event = true;
        let closed = self.decoder.decode_into(b"\n\n", &mut self.out);
        if let Err(DecodeError::EventTooLarge { limit }) = closed {
            self.out
                .apply(Read::Failed(StreamError::EventTooLarge { limit }));
        }
        if let State::Failed(StreamError::Malformed { .. }) = self.out.state {
            self.out.state = State::Open;
        }
    }

    /// How a body that ended without `[DONE]` leaves the stream: whole when every choice
    /// finished (whatever was cut off after that, a usage chunk or `[DONE]`, told nothing
    /// of the answer), else truncated.
    fn end_state(&self) -> State {
        let acc = &self.out.acc;
        let truncation = if self.is_whole() {
            None
        } else if self.ended_inside_event || self.decoder.is_truncated() {
            Some(Truncation::MidEvent)
        } else if acc.is_empty() {
            Some(Truncation::Empty)
        } else {
            Some(Truncation::Unfinished)
        };
        match truncation {
            Some(truncation) => State::Failed(StreamError::Truncated { truncation }),
            None => State::Ended,
        }
    }
}

/// Every piece is decoded in place into the stream; its common events (a chunk in a known
/// envelope, see [`crate::envelope`]) are taken straight from the input.
impl Output {
    /// What one SSE event did: the state it leaves.
    fn apply(&mut self, read: Read) {
        match read {
            Read::Nothing => {}
            Read::Chunk { from } => self.count_answer_bytes(from),
            Read::Done => self.state = State::Done,
            Read::Failed(error) => self.state = State::Failed(error),
        }
    }

    /// Adds the sizes of the events from `from` on to the answer's size; past the cap the
    /// stream fails and those events are dropped (the caller never sees the answer grow past
    /// it). Each event is counted once, so the whole answer costs linear time.
    fn count_answer_bytes(&mut self, from: usize) {
        for ev in self.events.range(from..) {
            let n = match ev {
                StreamEvent::ContentDelta { text, .. }
                | StreamEvent::ReasoningDelta { text, .. }
                | StreamEvent::RefusalDelta { text, .. } => text.len(),
                StreamEvent::ToolCallArgumentsDelta { fragment, .. } => fragment.len(),
                StreamEvent::ToolCallBegin { .. }
                | StreamEvent::ChoiceFinished { .. }
                | StreamEvent::Usage(_)
                | StreamEvent::Done => 0,
            };
            self.answer_bytes = self.answer_bytes.saturating_add(n);
        }
        if self.answer_bytes.saturating_add(self.acc.untracked_bytes()) > self.max_answer_bytes {
            self.events.truncate(from);
            self.state = State::Failed(StreamError::AnswerTooLarge {
                limit: self.max_answer_bytes,
            });
        }
    }
}

impl sse::Sink for Output {
    #[inline]
    fn event(&mut self, event: sse::SseEventBytes<'_>) -> ControlFlow<()> {
        let read = read_sse(event, &mut self.acc, &mut self.events);
        self.apply(read);
        if matches!(self.state, State::Open) {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    }

    #[inline]
    fn at_boundary(&mut self, rest: &[u8], limit: usize) -> usize {
        // An event past the answer-size cap goes the usual way, which fails the stream (the
        // untracked bytes do not change on this path).
        let budget = self
            .max_answer_bytes
            .saturating_sub(self.acc.untracked_bytes())
            .saturating_sub(self.answer_bytes);
        let (taken, added) = self
            .acc
            .apply_sse_events(rest, limit, budget, &mut self.events);
        self.answer_bytes += added;
        taken
    }
}

/// What one SSE event did to the stream.
enum Read {
    /// A keep-alive.
    Nothing,
    /// A chunk, whose events start at `from` in the queue.
    Chunk {
        from: usize,
    },
    /// `[DONE]`.
    Done,
    Failed(StreamError),
}

/// Reads one SSE event (DESIGN.md's rule 2) into the accumulator, its deltas into `events`.
///
/// The data is still raw bytes: the chunk's fast path checks only the part it uses, and
/// everything else decodes it lossily first, as the decoder's own `poll_event_ref` would.
fn read_sse(
    event: sse::SseEventBytes<'_>,
    acc: &mut Accumulator,
    events: &mut VecDeque<StreamEvent>,
) -> Read {
    // Rule 2: `event: error` is an error.
    if event.event_type() == "error" {
        let data = String::from_utf8_lossy(event.data);
        let api = serde_json::from_str::<serde_json::Value>(&data)
            .ok()
            .and_then(|v| ApiError::from_value(&v))
            .unwrap_or_else(|| ApiError {
                message: crate::text::shorten(&data, 300).into_owned(),
                ..ApiError::default()
            });
        return Read::Failed(StreamError::Provider {
            error: Box::new(api),
        });
    }
    // ASCII whitespace never occurs inside a UTF-8 sequence, so trimming the bytes trims the
    // decoded text alike.
    let data = event.data.trim_ascii();
    if data.is_empty() {
        return Read::Nothing; // keep-alive
    }
    if data == b"[DONE]" {
        events.push_back(StreamEvent::Done);
        return Read::Done;
    }
    let from = events.len();
    match acc.handle_chunk_bytes(data, events) {
        Ok(()) => Read::Chunk { from },
        Err(e) => Read::Failed(e.into()),
    }
}

#[cfg(test)]
mod answer_cap_tests;
#[cfg(test)]
mod lane_tests;
#[cfg(test)]
mod tests;
