//! hrns-blocking: the blocking driver of hrns, on ureq and plain threads.
//!
//! It does the IO around [`hrns_core::Session`] and nothing else: [`Client`] sends the requests
//! the session describes and reads bodies as they arrive, [`Runner`] performs a session's IO
//! one step at a time ([`Runner::complete_io`] borrows the session and returns the step's
//! events, so its owner keeps it; [`Runner::run`] drives a whole turn), and [`tools`] are the
//! built-in tools on `std`. `hrns exec` and simple embedders use it; the
//! scripted
#![cfg_attr(feature = "mock", doc = "[`mock`]")]
#![cfg_attr(not(feature = "mock"), doc = "`mock`")]
//! provider (feature `mock`) is the test server of the whole project.
//!
//! - [`Client`]: a ureq 3 agent (TLS verification on; [`skip_verify`](ClientConfig::skip_verify)
//!   only when asked) that sends a session's requests and hands back the body as it is read;
//!   also `list_models`, `chat` and `stream_chat` for use without a session (a read loop
//!   around the core's [`StreamedChat`](hrns_core::client::StreamedChat)). Its
//!   [`ClientConfig`] (timeouts, certificate checks, user agent) is hrns-tokio's too.
//! - [`Runner`]: drives a turn on the calling thread: sends requests, feeds body bytes to the
//!   session as they arrive, runs tool calls (read-only ones concurrently, effects in the
//!   model's order), sleeps for retries, asks for approvals through a callback, and hands every
//!   event to your callback.
//! - [`Tool`], [`Toolbox`] and the built-in [`tools`] (`read_file`, `write_file`, `edit_file`,
//!   `run_command`, …), confined to the [`ToolContext`]'s workspace.
//!
//! # The one home of the std tools
//!
//! Each tool that does blocking IO on `std` — the file tools, `run_command`, `grep` and
//! `list_files`, the sandbox [`Launcher`], and MCP's stdio transport — is written once, here.
//! hrns-tokio runs these same implementations on tokio's blocking threads rather than keeping
//! copies, and uses nothing else of this crate but [`ClientConfig`]; a fix to a tool is
//! therefore a fix in both drivers.
//!
//! # One turn
//!
//! ```text
//! Runner::run ─► Session::submit ─► SendRequest ─► Client::send ─► body bytes ─► Session
//!     ▲                                                                  │
//!     └────── tool outputs ◄── Tool::run (threads) ◄── RunTool ◄─────────┘
//! every Emit(Event) ─► your callback;  CancelFlag::cancel ─► Session::cancel
//! ```
//!
//! # Example
//!
//! The same environment variables as `hrns` (`OPENAI_BASE_URL`, `OPENAI_API_KEY`,
//! `HRNS_MODEL`), resolved by the same code:
//!
//! ```no_run
//! # #[cfg(feature = "http")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use hrns_blocking::{Client, ClientConfig, Runner, ToolContext, TurnOutcome, tools};
//! use hrns_core::config::{Config, Selection};
//! use hrns_core::session::{ApprovalPolicy, Event, Session, SessionConfig};
//! use std::sync::Arc;
//!
//! // OPENAI_BASE_URL (default OpenAI's), OPENAI_API_KEY and HRNS_MODEL, as the CLI reads them.
//! let resolved = Config::default().resolve(&Selection::default(), &|name| std::env::var(name).ok())?;
//! let provider = resolved.to_provider();
//! let client = Client::new(provider.clone(), &ClientConfig::default());
//! let toolbox = tools::builtin_toolbox(Vec::new());
//!
//! let mut config = SessionConfig::new(provider, resolved.model);
//! config.tools = toolbox.specs();
//! config.approval = ApprovalPolicy::ReadOnly; // only read-only tools run
//! let mut session = Session::new(config);
//!
//! let ctx = ToolContext::new(std::env::current_dir()?)?;
//! let mut runner = Runner::new(Arc::new(client), &toolbox, ctx);
//! let outcome = runner.run(&mut session, "What does this project do?", |event| {
//!     if let Event::TextDelta { text } = event {
//!         print!("{text}");
//!     }
//! })?;
//! match outcome {
//!     TurnOutcome::Finished => Ok(()),
//!     TurnOutcome::Failed(error) => Err(error.into()),
//!     TurnOutcome::Cancelled => Err("cancelled".into()),
//! }
//! # }
//! # #[cfg(not(feature = "http"))]
//! # fn main() {}
//! ```
#![forbid(unsafe_code)]

pub mod checkpoint;
#[cfg(feature = "http")]
pub mod client;
pub mod client_config;
pub mod hooks;
#[cfg(feature = "http")]
mod inbox;
pub mod mcp;
#[cfg(feature = "mock")]
pub mod mock;
#[cfg(feature = "http")]
mod read_ahead;
#[cfg(feature = "http")]
pub mod runner;
pub mod safe_file;
pub mod sandbox;
pub mod tool;
pub mod tools;

pub use checkpoint::{
    CheckpointError, CheckpointId, CheckpointLimits, CheckpointStore, Checkpointer,
};
#[cfg(feature = "http")]
pub use client::{ChatEvents, Client, ClientError, HttpResponse, Transport};
pub use client_config::ClientConfig;
pub use hrns_core::session::TurnOutcome;
#[cfg(feature = "http")]
pub use runner::{Runner, TurnFront};
pub use safe_file::{SafeReadError, open_regular, read_capped, read_text};
pub use sandbox::{Launch, Launcher, Sandbox, SandboxRefusal};
pub use tool::{
    AnswerInbox, CancelFlag, ChildAnswer, ChildLink, Files, TextFiles, Tool, ToolContext, Toolbox,
};
