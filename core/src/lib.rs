//! hrns-core: the sans-IO heart of hrns. Bytes in, decisions out.
//!
//! hrns sends a conversation to an OpenAI-compatible `/chat/completions` endpoint, streams the
//! answer, runs the tools the model asks for, feeds the results back and repeats until the
//! model answers without tool calls. Every decision of that loop is made here, in plain data
//! structures with no sockets, files, threads, clocks or randomness: drivers (`hrns-blocking`,
//! `hrns-tokio`) do the IO, and tests, fuzzers and replays drive the same code byte for byte.
//!
//! # Layers
//!
//! ```text
//! bytes ─► sse::Decoder ─► SSE events ─► chunk views ─► Accumulator ─► StreamEvent (deltas)
//!          (layer 1)                      (layer 2: stream::ChatStream)   └► Completion
//! Session (layer 3): submit ─► SendRequest ─► handle_response_* ─► RunTool / AskApproval
//!                    ─► handle_tool_output ─► SendRequest … ─► Emit(TurnFinished)
//! ```
//!
//! # From socket to screen, in five sentences
//!
//! 1. The owner of a [`Session`] (the TUI, `hrns exec`, a library user) lends it to a driver's
//!    `Runner::complete_io`, which sends the [`http::HttpRequest`] the session asked for
//!    ([`Action::SendRequest`]) and hands each piece of the response back through
//!    [`Session::handle_response_head`], [`Session::handle_response_data`] and
//!    [`Session::handle_response_end`].
//! 2. The session reads the response with an [`answer::AnswerReader`]: [`sse::Decoder`] cuts
//!    the bytes into SSE events, [`ChatStream`] parses each chunk and merges it into the
//!    [`Accumulator`], and every delta comes out as a [`StreamEvent`].
//! 3. The deltas of choice 0 become [`Event`]s (`TextDelta`, `ReasoningDelta`, …) queued as
//!    [`Action::Emit`], which `complete_io` returns to the owner to show as they arrive.
//! 4. When the answer is complete the session decides what follows — the final event, or its
//!    tool calls as [`Action::RunTool`] in an order that keeps their effects in the model's
//!    order — and the driver runs them and hands each output back with
//!    [`Session::handle_tool_output`], which sends the next request.
//! 5. Between two steps the owner holds the session and may answer approvals, cancel or read
//!    [`Session::usage`] directly, and since every decision is made here, both drivers and both
//!    front ends behave alike.
//!
//! # Modules
//!
//! - [`answer`]: the response to one chat request (stream, whole JSON or error status), read
//!   sans-IO.
//! - [`sse`]: the WHATWG EventSource format, any split of the input.
//! - [`wire`]: serde mirrors of the chat JSON that keep unknown fields.
//! - [`accumulate`] and [`stream`]: chunks merged into complete choices, tolerant of the shapes
//!   real providers send.
//! - [`session`]: the agent loop — requests, tool decisions, approvals, retries,
//!   cancellation — as a state machine.
//! - [`tool`]: tool specs and the pure parts of the built-in tools; [`history`]: validity
//!   checks of a conversation; [`http`]: the request description with the key redacted;
//!   [`client`]: the pure parts of the drivers' provider clients (requests, errors, and
//!   [`client::StreamedChat`], the answer of a `stream_chat`); [`mcp`]: the Model Context
//!   Protocol client; [`acp`]: the Agent Client Protocol server's framing, methods, updates
//!   and permissions (`hrns acp`).
//! - [`quirks`]: what a provider deviates in, as requests must respect it; [`probe`]: the
//!   requests and judgements of `hrns doctor`, which finds the quirks out.
//! - [`context`]: the context window — token estimates, pruning and the compaction summary.
//! - [`task`]: subagents, a child session per `task` call; [`checkpoint`]: what undoing the
//!   agent's file changes must write, remove and leave alone.
//! - [`sandbox`]: the sandbox policy of commands as plain data; [`secrets`] and
//!   [`url_secrets`]: which values are secret and their redaction from every text that leaves.
//! - [`config`]: the config file model; [`agent`], [`skill`] and [`command`]: agents, skills
//!   and custom slash commands parsed from their files ([`frontmatter`]: the YAML header they
//!   share); [`instructions`]: project instruction files (`AGENTS.md`) and their order;
//!   [`prompt`]: the system prompt composed from all of these; [`mention`]: `@path` mentions
//!   in a user message; [`file_refusal`]: why a file hrns meant to read on its own was
//!   left alone (a FIFO, a device, too large), and the size caps per kind of file.
//! - `fuzzing` (feature `fuzzing`): entry points for the fuzz targets.
//!
//! # The run loop every driver writes
//!
//! After any input or command, drain [`Session::poll`] until it returns `None`; then wait for a
//! response, a tool result, the user or [`Session::poll_timeout`].
//!
//! ```
//! use hrns_core::session::{Action, ApprovalPolicy, Event, Provider, Session, SessionConfig};
//! use hrns_core::tool::ToolOutput;
//! use std::time::Instant;
//!
//! let mut config = SessionConfig::new(Provider::new("http://127.0.0.1:11434/v1", None), "llama3");
//! config.approval = ApprovalPolicy::Auto;
//! let mut session = Session::new(config);
//! session.submit("Say hi")?;
//!
//! // A canned "server" so the example runs without a network.
//! let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi!\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
//! let mut answer = String::new();
//! while let Some(action) = session.poll() {
//!     match action {
//!         Action::SendRequest(req) => {
//!             // A real driver POSTs `req.body` to `req.url` with `req.wire_headers()`.
//!             let now = Instant::now();
//!             session.handle_response_head(now, req.id, 200, [("content-type", &b"text/event-stream"[..])])?;
//!             session.handle_response_data(now, req.id, body.as_bytes())?;
//!             // Complete at [DONE] already: the end comes late, and is accepted and ignored.
//!             session.handle_response_end(now, req.id)?;
//!         }
//!         Action::RunTool(run) => {
//!             session.handle_tool_output(Instant::now(), &run.call_id, ToolOutput::ok("…"))?
//!         }
//!         Action::AbortTool { .. } => {} // no tool here runs long enough to be stopped
//!         Action::TakeCheckpoint(_) => {} // checkpoints are off unless the config turns them on
//!         Action::RunHooks(_) => {} // no hooks are configured here
//!         Action::AskApproval(run) => {
//!             let yes = hrns_core::session::Approval::Once;
//!             session.handle_approval(Instant::now(), &run.call_id, yes)?
//!         }
//!         Action::Emit(Event::TextDelta { text }) => answer.push_str(&text),
//!         Action::Emit(_) => {}
//!     }
//! }
//! assert_eq!(answer, "Hi!");
//! assert!(session.is_idle());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod accumulate;
pub mod acp;
pub mod agent;
pub mod answer;
pub mod checkpoint;
mod chunk;
pub mod client;
pub mod command;
pub mod config;
pub mod context;
mod envelope;
pub mod file_refusal;
pub mod frontmatter;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod history;
pub mod hooks;
pub mod http;
pub mod instructions;
pub mod mcp;
pub mod mention;
pub mod plan;
pub mod pricing;
pub mod probe;
pub mod prompt;
#[cfg(test)]
mod proptest_seeds;
pub mod quirks;
pub mod sandbox;
pub mod secrets;
pub mod session;
pub mod skill;
pub mod sse;
pub mod stream;
pub mod task;
mod text;
pub mod tool;
pub mod url_secrets;
pub mod wire;

pub use accumulate::{Accumulator, Choice, Completion, FinishReason};
pub use session::{Action, Event, Session, SessionConfig};
pub use stream::{ChatStream, DeltaText, StreamError, StreamEvent, StreamFailure};
