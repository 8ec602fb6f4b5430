//! The client's file system (`fs/read_text_file`, `fs/write_text_file`): the requests hrns
//! sends when the client offers both, and what their answers mean.
//!
//! The file tools still resolve, confine and check every path; the client only moves the
//! text, so the editor shows its unsaved buffers to the model and its undo records the
//! model's writes. Every failure (the client's JSON-RPC error, an answer of the wrong shape,
//! no answer in time, a client that went away) becomes one sentence for the tool's error.

use super::methods::ClientCapabilities;
use super::rpc::RpcError;
use serde_json::{Value, json};
use std::time::Duration;

/// `fs/read_text_file`.
pub const READ_TEXT_FILE: &str = "fs/read_text_file";
/// `fs/write_text_file`.
pub const WRITE_TEXT_FILE: &str = "fs/write_text_file";

/// How long hrns waits for the client's answer to a file request: an editor answers from
/// memory or its disk at once, and a client that does not answer must not hold the turn.
pub const FS_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether the file tools go through the client: only when it offers both methods, so that an
/// edit reads and writes the same copy of the file (the editor's buffer, not the buffer for one
/// and the disk for the other).
pub fn delegates_files(client: &ClientCapabilities) -> bool {
    client.fs.read_text_file && client.fs.write_text_file
}

/// The parameters of `fs/read_text_file` for the whole file at `path` (absolute).
pub fn read_params(session_id: &str, path: &str) -> Value {
    json!({"sessionId": session_id, "path": path})
}

/// The parameters of `fs/write_text_file`.
pub fn write_params(session_id: &str, path: &str, content: &str) -> Value {
    json!({"sessionId": session_id, "path": path, "content": content})
}

/// Why a request to the client came to nothing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientFailure {
    /// The client answered with a JSON-RPC error.
    #[error("the editor answered: {}", .0.message)]
    Refused(RpcError),
    /// The answer was not of the shape the method has.
    #[error("the editor's answer is not what {method} returns: {why}")]
    Malformed {
        /// The method.
        method: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// No answer within [`FS_TIMEOUT`].
    #[error("the editor did not answer within {} seconds", .0.as_secs())]
    TimedOut(Duration),
    /// The client closed the connection.
    #[error("the editor closed the connection")]
    Gone,
}

/// The text in the client's result for `fs/read_text_file` (`{"content": "…"}`). The
/// result of `fs/write_text_file` carries nothing (`null` or `{}`): any result means written.
pub fn read_result(result: Value) -> Result<String, ClientFailure> {
    let malformed = |why: &str| ClientFailure::Malformed {
        method: READ_TEXT_FILE,
        why: why.to_owned(),
    };
    match result {
        Value::Object(mut object) => match object.remove("content") {
            Some(Value::String(content)) => Ok(content),
            Some(_) => Err(malformed("`content` is not a string")),
            None => Err(malformed("it has no `content`")),
        },
        _ => Err(malformed("it is not an object")),
    }
}
