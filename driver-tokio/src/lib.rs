//! hrns-tokio: the async driver of hrns, on tokio and hyper.
//!
//! It does the IO around [`hrns_core::Session`] and nothing else, for programs that run many
//! streams and tools at once and let the user interrupt at any moment (the interactive TUI,
//! async embedders):
//!
//! - [`Client`]: a pooled hyper 1 client over rustls — HTTP/1.1 and HTTP/2 by ALPN,
//!   Mozilla's roots, [`skip_verify`](ClientConfig::skip_verify) only when asked, connect and
//!   read-idle timeouts — with [`list_models`](Client::list_models), [`chat`](Client::chat)
//!   and [`stream_chat`](Client::stream_chat) (a `Stream` of events, each yielded as its
//!   bytes arrive).
//! - [`Runner`]: drives a session's turn: sends its requests and feeds body frames as they
//!   arrive, runs independent tool calls concurrently (8 at once by default, each with a
//!   timeout), asks for approvals through an async callback, sleeps for retries with
//!   `tokio::time`, and hands every event to a callback.
//! - [`Tool`] and [`Toolbox`], and the built-in [`tools`]: the blocking driver's std tools
//!   run on tokio's blocking threads (any [`hrns_blocking::Tool`] is a [`Tool`] here), and
//!   `web_fetch` on the hyper client.
//!
//! # One turn
//!
//! ```text
//! Runner::run ─► Session::submit ─► SendRequest ─► Client::send ─► body frames ─► Session
//!     ▲                                                                   │
//!     └── tool outputs ◄── JoinSet of tool tasks (a semaphore, timeouts) ◄┘ RunTool …
//! every Emit(Event) ─► your callback;  cancel token or dropped future ─► Session::cancel
//! ```
//!
//! # Cancellation
//!
//! [`Runner::cancel_token`] gives a `CancellationToken`; cancelling it (or dropping the
//! future of [`Runner::run`]) calls [`Session::cancel`](hrns_core::Session::cancel) at once:
//! the response body is dropped, running commands are killed with their whole process group,
//! and the history stays a valid request (every tool call answered). The turn still ends with
//! exactly one final event, [`Event::TurnCancelled`](hrns_core::Event::TurnCancelled), even
//! when the future was dropped.
//!
//! # Many sessions
//!
//! The runner holds no global state and its future is `Send`: give each session its own
//! runner (clones of one [`Client`] share the connection pool) and spawn each turn as a task.
//!
//! # Example
//!
//! ```no_run
//! use hrns_core::http::Secret;
//! use hrns_core::session::{Approval, ApprovalPolicy, Event, Provider, Session, SessionConfig};
//! use hrns_tokio::tools::builtin_toolbox;
//! use hrns_tokio::{Client, ClientConfig, HttpClient, Runner, ToolContext, TurnOutcome};
//! use std::time::Duration;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let key = std::env::var("OPENAI_API_KEY").ok().map(Secret::new);
//!     let provider = Provider::new("https://api.openai.com/v1", key);
//!     let client = Client::new(provider.clone(), &ClientConfig::default());
//!     // web_fetch gets a client of its own that always verifies certificates.
//!     let tools = builtin_toolbox(HttpClient::new(&ClientConfig::default()), Vec::new());
//!
//!     let mut config = SessionConfig::new(provider, "gpt-4o-mini");
//!     config.tools = tools.specs();
//!     config.approval = ApprovalPolicy::Ask; // writes, commands and fetches are asked about
//!     let mut session = Session::new(config);
//!
//!     let workspace = ToolContext::new(std::env::current_dir()?)?;
//!     let mut runner = Runner::new(client, tools, workspace)
//!         .approve_with(|run| async move {
//!             eprintln!("[allowing {} {}]", run.name, run.arguments);
//!             Approval::Once
//!         });
//!
//!     // Cancel from anywhere: a key handler, a signal, a deadline.
//!     let cancel = runner.cancel_token();
//!     tokio::spawn(async move {
//!         tokio::time::sleep(Duration::from_secs(600)).await;
//!         cancel.cancel();
//!     });
//!
//!     let outcome = runner
//!         .run(&mut session, "List the files here and summarise them", |event| {
//!             if let Event::TextDelta { text } = event {
//!                 print!("{text}");
//!             }
//!         })
//!         .await;
//!     match outcome {
//!         TurnOutcome::Finished => println!(),
//!         TurnOutcome::Failed(error) => eprintln!("failed: {error}"),
//!         TurnOutcome::Cancelled => eprintln!("cancelled"),
//!     }
//!     // Whatever happened, the history can be sent again.
//!     hrns_core::history::validate(session.messages())?;
//!     Ok(())
//! }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod client;
pub mod runner;
pub mod tool;
pub mod tools;

mod tls;

pub use client::{ChatEvents, Client, ClientConfig, ClientError, HttpClient, Response};
pub use hrns_blocking::{Launch, Launcher, Sandbox, SandboxRefusal};
pub use hrns_core::session::TurnOutcome;
pub use runner::{ApprovalFuture, Runner};
pub use tool::{Tool, ToolContext, ToolFuture, Toolbox};
