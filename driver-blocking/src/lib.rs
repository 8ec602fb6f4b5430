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
#![forbid(unsafe_code)]

#[cfg(feature = "http")]
pub mod client;
pub mod mcp;
#[cfg(feature = "mock")]
pub mod mock;
#[cfg(feature = "http")]
mod read_ahead;
#[cfg(feature = "http")]
pub mod runner;
pub mod sandbox;
pub mod tool;
pub mod tools;

#[cfg(feature = "http")]
pub use client::{ChatEvents, Client, ClientConfig, ClientError, Response, Transport};
pub use hrns_core::session::TurnOutcome;
#[cfg(feature = "http")]
pub use runner::Runner;
pub use sandbox::{Launch, Launcher, Sandbox, SandboxRefusal};
pub use tool::{CancelFlag, Tool, ToolContext, Toolbox};
