//! hrns-tokio: the async driver of hrns, on tokio and hyper.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod client;
pub mod runner;
pub mod tool;

mod tls;

pub use client::{ChatEvents, Client, ClientConfig, ClientError, HttpClient, Response};
pub use hrns_core::session::TurnOutcome;
pub use runner::{ApprovalFuture, Runner};
pub use tool::{Tool, ToolContext, ToolFuture, Toolbox};
