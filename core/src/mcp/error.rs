//! The errors of the MCP client: a failed server connection, and misuse by the caller.

use super::client::SUPPORTED_VERSIONS;
use super::config::START_TIMEOUT_KEY;
use std::time::Duration;

/// Why a server connection failed. The server's (or its transport's) fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Failure {
    /// The server did not answer a request of the handshake (or of a listing) in time.
    #[error(
        "the server did not answer {method} within {} s ({START_TIMEOUT_KEY:?} in its \
         mcpServers entry sets this limit, in milliseconds)",
        timeout.as_secs_f32()
    )]
    Timeout {
        /// The unanswered method.
        method: &'static str,
        /// The timeout that passed.
        timeout: Duration,
    },
    /// The server was not ready (initialised, its tools listed) when the start-up time ran
    /// out, though no single request timed out.
    #[error(
        "the server was not ready within {} s ({START_TIMEOUT_KEY:?} in its mcpServers entry \
         sets this limit, in milliseconds)",
        timeout.as_secs_f32()
    )]
    NotReady {
        /// The start-up time that passed.
        timeout: Duration,
    },
    /// The server chose a protocol version hrns does not speak.
    #[error("the server wants protocol version {version:?}; hrns speaks {}", SUPPORTED_VERSIONS.join(", "))]
    UnsupportedVersion {
        /// What the server answered.
        version: String,
    },
    /// The server answered a handshake request with an error.
    #[error("the server refused {method}: {message} (code {code})")]
    Refused {
        /// The refused method.
        method: &'static str,
        /// The JSON-RPC error code.
        code: i64,
        /// The server's message.
        message: String,
    },
    /// The server's answer to a handshake request is not what the protocol says.
    #[error("the server's answer to {method} is malformed: {reason}")]
    Malformed {
        /// The method answered.
        method: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The connection ended (the process exited, the stream closed, bytes were unreadable).
    #[error("the connection closed: {reason}")]
    Closed {
        /// What the driver saw.
        reason: String,
    },
}

/// Misuse of the client by its caller.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// [`Client::start`](super::Client::start) was called twice.
    #[error("the MCP client was already started")]
    AlreadyStarted,
    /// A call was made before the client was ready.
    #[error("the MCP server is not ready yet")]
    NotReady,
    /// A call was made after the connection failed.
    #[error("the MCP server connection has failed: {0}")]
    Failed(Failure),
}
