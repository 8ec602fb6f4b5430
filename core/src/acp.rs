//! The Agent Client Protocol (ACP v1), the sans-IO part: what `hrns acp` decides, with no IO.
//!
//! An editor (Zed, a JetBrains IDE, Neovim, any ACP client) starts the agent and speaks
//! JSON-RPC 2.0 with it over the agent's stdin and stdout, one message per line. The server in
//! the CLI moves bytes and runs sessions; everything it decides about the protocol is here:
//!
//! ```text
//! stdin bytes ─► frame::LineDecoder ─► rpc::parse ─► Incoming::{Request, Notification, Response}
//!     Request / Notification ─► methods::ClientCall::decode ─► the server acts on a typed call
//!     Response ─► rpc::Outstanding::finish ─► the request that waits for it:
//!         request_permission ─► permission::Permissions::answer ─► Approval
//!         fs/read_text_file, fs/write_text_file ─► client_fs::read_result, write_result
//! session Events ─► update::Updates ─► session/update notifications (redacted across deltas)
//!     final Event ─► Updates::stop ─► the prompt's stopReason, or a JSON-RPC error
//! ```
//!
//! Bad input is answered, never fatal: invalid JSON is `PARSE_ERROR` with a `null` id, a
//! message that is not a request `INVALID_REQUEST`, an unknown method `METHOD_NOT_FOUND`,
//! parameters of the wrong shape `INVALID_PARAMS`, and a line longer than
//! [`frame::DEFAULT_MAX_LINE`] is dropped with an error of its own.

pub mod client_fs;
pub mod frame;
pub mod methods;
pub mod permission;
pub mod rpc;
pub mod update;

#[cfg(test)]
mod tests;
