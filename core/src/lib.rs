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
//!         Action::AnswerChild { .. } => {} // no subagents run here
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
//!
//! A driver does not write this loop by hand: its runner keeps a [`session::Ledger`], which
//! drains the session, keeps the tool calls waiting for a slot under the parallel cap, the
//! request in flight, the snapshot being taken, the turn's outcome and the tokens the
//! subagents spent, and hands the driver [`session::Work`] to carry out (send, close, start,
//! stop, and [`session::Wait`]s: a snapshot, hooks). The driver reports back through the
//! ledger (`tool_ended`, `response_ended`, `waited`), and asks it what the session waits for
//! ([`session::Waiting`]) when a step brought nothing.
//!
//! # Walkthroughs
//!
//! Where a change goes, in the terms of `DESIGN.md`: decisions in this crate, IO in the
//! drivers, presentation in the front ends (`hrns exec`'s printers and the TUI in `cli`).
//!
//! ## A new tool
//!
//! 1. **Its spec, here.** A [`tool::ToolSpec`] with a name, a description, a JSON Schema and
//!    an [`tool::Effect`]. The effect is the tool's declaration, and every rule reads it: the
//!    order of an answer's calls (a call with effects runs alone), the approval policy
//!    ([`session::ApprovalPolicy::decide`]), checkpoints before and after calls that may
//!    change files, and which agents get the tool — a tool that declares [`tool::Effect::Write`]
//!    or [`tool::Effect::Exec`] is never offered to Explorer, Planner or Pirate, nor to their
//!    subagents ([`agent::Effects::ReadOnly`]), without anyone touching their definitions.
//!    A built-in's name goes in [`tool::builtin`]; its pure parts (argument decoding, checks,
//!    the text the model reads) next to the others in [`tool`].
//! 2. **Its IO, once, in `hrns-blocking`.** Implement `hrns_blocking::Tool` and add it to
//!    `hrns_blocking::tools::builtin_toolbox_with`; `hrns-tokio`'s `builtin_toolbox` is built
//!    from the same function and runs the tool on a blocking thread. A tool of your own goes
//!    into a `Toolbox` with `add`, on either driver.
//! 3. **Nothing else.** Its call and result reach every front end as
//!    [`Event::ToolCall`] and [`Event::ToolResult`]; a crash is answered by the ledger with
//!    the core's text ([`session::ToolEnd::Crashed`]), a timeout by the session.
//!
//! ## A hook point before a tool runs
//!
//! This is how `PreToolUse` hooks ([`hooks`]) are built, and the checkpoint before a call
//! that may change files (`CallState::Checkpoint`); another point that waits for something
//! outside the loop goes the same way. Such a wait is one more state of a call, in one place:
//! `CallState` in `session/calls.rs`, beside `AwaitingApproval` (the user) and `Running` (the
//! driver).
//! 1. **The state and its decision, here.** `CallState::PreHook` is entered where the policy
//!    lets a call run or be asked about (`pre_hook` in `session/calls.rs`); `Calls::release`
//!    starts a call only once its hooks answered, in the model's order as ever.
//!    [`Action::RunHooks`] asks the driver to run the commands, and
//!    [`Session::handle_hooks`] takes their runs and reads them into typed verdicts (block
//!    with text for the model, allow, ask, updated input), which the session carries out.
//!    [`Event::Hook`] tells the user what each hook did.
//! 2. **The compiler points at the rest.** The ledger's `step` matches [`Action`] without a
//!    wildcard: [`Action::RunHooks`] became [`session::Wait::Hooks`], handed out as
//!    [`session::Work::Wait`] and counted as in flight until [`session::Ledger::waited`]
//!    takes its [`session::Waited::Hooks`]. Each driver carries out every `Wait` in one
//!    place, without a wildcard (`carry_out` in each runner, run on a thread or a blocking
//!    task): it runs the commands (`hrns_blocking::hooks::run_hooks`) and hands back what
//!    they came to, which the runner reports through the ledger. [`Event`] is not
//!    `#[non_exhaustive]` and the front ends match it without wildcards, so the new event
//!    failed to compile in `exec`'s text printer (`cli/src/exec/output.rs`), its JSON lines
//!    (`cli/src/exec/json_lines.rs`) and its turn front (`cli/src/exec/mod.rs`), the TUI
//!    (`cli/src/tui/app/turn.rs`, `cli/src/tui/tasks.rs`), the host code (`cli/src/host/`)
//!    and the ACP mapping ([`acp`]), until each decided what to show.
//! 3. **Both drivers behave alike**, since neither decides: the behaviour suite
//!    (`driver-blocking/tests/suite`, `behaviour_tests!`), which runs against both, has a
//!    case for it (`hooks_block_add_context_and_keep_the_turn_going`).
//!
//! ## A new front end (an editor server, say)
//!
//! A front end owns a [`Session`] and a driver's runner, and is one adapter:
//! 1. **Drive the turn.** On the blocking driver, implement `hrns_blocking::TurnFront` (the
//!    events of each step, and an answer to each approval question) and call
//!    `Runner::drive_batches`; on tokio, await `Runner::complete_io` in a `select!` with your
//!    own inputs and answer with `Runner::handle_approval` whenever the user does. What the
//!    turn loop does when only the owner can move the session on is the ledger's to say.
//! 2. **Show the events.** Match [`Event`] exhaustively; the compiler lists what a new
//!    variant needs. [`Event`] is serde-serialisable with a `type` tag, the encoding of
//!    `hrns exec --json`, which [`event_json::JsonLines`] writes with its redaction (a
//!    secret split across deltas included); a front end with messages of its own builds
//!    them from [`event_json::Deltas`]' redacted pieces. Pass it [`Session::secrets`].
//! 3. **Answer questions** with a [`session::Approval`]: once, always for the tool, deny
//!    with a reason, or once outside the sandbox ([`session::Approval::OnceUnsandboxed`]: the
//!    session marks the call and the driver runs it unconfined; no tool wrapper needed).
//! 4. **Read the cost** from [`Session::usage`]: it counts the subagents' tokens on both
//!    drivers.
//!
//! On the tokio driver a conversation is put together once, for the TUI and `hrns acp`
//! alike, by `cli/src/host/conversation.rs` (provider, agent, tools, MCP servers, hooks,
//! subagents, checkpoints; its module docs walk through what an editor server implements).
//! The event stream's one encoding, the `--json` lines with their redaction across deltas, is
//! [`event_json`]: `exec --json` writes its lines, and `hrns acp` builds its message chunks from
//! its redacted deltas. Putting a conversation together (config, tools, the session file) is
//! the CLI's host (`cli/src/host`), over both drivers. A subagent's events, its tokens and its
//! approval questions come out of the parent session's own [`Session::poll`] as
//! [`Event::Child`]: the driver's task tool hands them to the runner that runs the call, which
//! gives them to the session ([`Session::handle_child_event`]). A child's question is the
//! parent's to answer ([`session::Question`], [`Session::handle_answer`], the same path as its
//! own calls'); the answer leaves as [`Action::AnswerChild`] and the driver hands it to the
//! waiting child. There are no callbacks for any of it.
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
pub mod event_json;
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
