//! The Model Context Protocol (MCP) client, without IO: tools from any MCP server.
//!
//! ```text
//! server bytes ─► jsonrpc::LineDecoder (stdio) ─┐
//!   SSE / JSON body ─► jsonrpc::Message::parse ─┴► Client::handle_message ─► poll():
//!        Send(Message) ─► the driver writes it (a line on stdio, a POST over HTTP)
//!        Emit(Event)   ─► Ready / ToolsChanged / CallFinished / Progress / Log / Failed
//! ```
//!
//! - [`jsonrpc`]: JSON-RPC 2.0 messages and the newline-delimited framing of stdio.
//! - [`legacy`]: the event stream of the HTTP+SSE transport of 2024-11-05 (its endpoint,
//!   checked to have the server's origin, and its messages), the fallback of HTTP servers.
//! - [`client`]: the per-server state machine — handshake with version negotiation, tool
//!   listing with pagination, calls with progress, cancellation, timeouts, server requests.
//! - [`content`]: what the model reads of a tool result.
//! - [`config`]: the `mcpServers` entries (the environment of server processes follows
//!   [`crate::sandbox::EnvPolicy`]).
//! - [`naming`]: the `mcp__SERVER__TOOL` names, specs and effects offered to the model.
//! - [`stderr`]: a stdio server's stderr as bounded, redacted lines for its log.

pub mod client;
pub mod config;
pub mod content;
mod error;
pub mod jsonrpc;
pub mod legacy;
pub mod naming;
pub mod refusal;
mod roots;
pub mod stderr;

pub use client::{
    Action, CallId, Client, ClientConfig, ClientError, Event, Failure, McpTool, Phase, Root,
    file_uri,
};
