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
//!   bytes arrive: a read loop around the core's
//!   [`StreamedChat`](hrns_core::client::StreamedChat), as in hrns-blocking).
//! - [`Runner`]: performs a session's IO. [`Runner::complete_io`] borrows the session for one
//!   step — it starts the requests and tool calls the session asked for, waits for the next
//!   thing to happen (a body frame, a tool output, a deadline), feeds it in and returns the
//!   events — so the owner of the session keeps it, and answers approvals, cancels and reads
//!   token counts between steps. Tool calls run as concurrent tasks (8 at once by default),
//!   in the order and with the deadlines the session decides. [`Runner::run`] drives one
//!   whole turn with callbacks.
//! - [`Tool`] and [`Toolbox`], and the built-in [`tools`]: the blocking driver's std tools
//!   run on tokio's blocking threads (any [`hrns_blocking::Tool`] is a [`Tool`] here), and
//!   `web_fetch` on the hyper client.
//!
//! # What comes from hrns-blocking
//!
//! The std tools are written once, in hrns-blocking, because they are blocking IO: the file
//! tools, `run_command`, `grep`, `list_files` and the sandbox launcher ([`Launcher`]) (MCP's
//! stdio transport lives there too). This crate runs those tools on tokio's blocking threads.
//! The other blocking work a step can hold is taken from there the same way, for the same
//! reason: a hook's commands ([`hrns_blocking::hooks::run_hooks`]) and a checkpoint's `git`
//! calls ([`hrns_blocking::Checkpointer`]), each on a blocking thread. Beside those it takes
//! only the plain [`ClientConfig`] settings; its client, runner and `web_fetch` are its own.
//!
//! # One step
//!
//! ```text
//! owner: Session::submit ─► Runner::complete_io(&mut session) ─► Vec<Event> ─► owner …
//!   complete_io: Session::poll ─► SendRequest ─► Client::send ─► body frames ─► Session
//!                              └► RunTool ─► JoinSet of tool tasks ─► tool outputs ─► Session
//!   between steps the owner may call Runner::handle_approval, Session::cancel, ::usage
//! ```
//!
//! # Cancellation
//!
//! The owner calls [`Session::cancel`](hrns_core::Session::cancel) and then
//! [`Runner::dispatch`] (or the next `complete_io`): the response body is dropped, running
//! commands are killed with their whole process group, and the history stays a valid request
//! (every tool call answered). From another task, cancel [`Runner::cancel_token`]. Either
//! way the turn ends with exactly one final event,
//! [`Event::TurnCancelled`](hrns_core::Event::TurnCancelled); dropping the future of
//! [`Runner::run`] cancels too.
//!
//! # Many sessions
//!
//! The runner holds no global state and its futures are `Send`: give each session its own
//! runner (clones of one [`Client`] share the connection pool) and spawn each as a task.
//!
//! # Example
//!
//! ```no_run
//! use hrns_core::http::Secret;
//! use hrns_core::session::{Approval, ApprovalPolicy, Event, Provider, Session, SessionConfig};
//! use hrns_tokio::tools::builtin_toolbox;
//! use hrns_tokio::{Client, ClientConfig, HttpClient, Runner, ToolContext};
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
//!     let mut runner = Runner::new(client, tools, ToolContext::new(std::env::current_dir()?)?);
//!
//!     session.submit("List the files here and summarise them")?;
//!     let give_up = tokio::time::sleep(Duration::from_secs(600));
//!     tokio::pin!(give_up);
//!     while !session.is_idle() {
//!         tokio::select! {
//!             events = runner.complete_io(&mut session) => {
//!                 for event in events {
//!                     match event {
//!                         Event::TextDelta { text } => print!("{text}"),
//!                         Event::ApprovalRequested { id, name, arguments } => {
//!                             eprintln!("[allowing {name} {arguments}]");
//!                             runner.handle_approval(&mut session, &id, Approval::Once)?;
//!                         }
//!                         Event::TurnFailed { error } => eprintln!("failed: {error}"),
//!                         _ => {}
//!                     }
//!                 }
//!             }
//!             // The session is ours: the other branch of a select may use it directly.
//!             () = &mut give_up => {
//!                 session.cancel();
//!                 runner.dispatch(&mut session);
//!             }
//!         }
//!     }
//!     let used = session.usage();
//!     eprintln!("{} tokens", used.prompt + used.completion);
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

pub use client::{ChatEvents, Client, ClientConfig, ClientError, HttpClient, IncomingResponse};
pub use hrns_blocking::{Files, Launch, Launcher, Sandbox, SandboxRefusal, TextFiles};
pub use hrns_core::session::TurnOutcome;
pub use runner::{ApprovalFuture, Runner};
pub use tool::{AnswerInbox, ChildAnswer, ChildLink, Tool, ToolContext, ToolFuture, Toolbox};
