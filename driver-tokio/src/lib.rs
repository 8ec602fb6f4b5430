//! hrns-tokio: the async driver of hrns, on tokio and hyper.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod client;

mod tls;

pub use client::{ChatEvents, Client, ClientConfig, ClientError, HttpClient, Response};
