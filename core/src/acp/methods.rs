//! The ACP methods hrns serves, decoded from a request's method name and parameters.
//!
//! [`ClientCall::decode`] turns an unknown method into `METHOD_NOT_FOUND` and parameters of
//! the wrong shape into `INVALID_PARAMS` with serde's words for what is wrong; the server only
//! acts on typed values.

use super::rpc::{INVALID_PARAMS, METHOD_NOT_FOUND, RpcError};
use serde::Deserialize;
use serde_json::Value;

/// The protocol version hrns speaks.
pub const PROTOCOL_VERSION: u64 = 1;

/// A request or notification from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientCall {
    /// `initialize`.
    Initialize(InitializeParams),
    /// `authenticate`: nothing to do, the provider comes from hrns's config.
    Authenticate,
    /// `session/new`.
    NewSession(NewSessionParams),
    /// `session/load`: the history is replayed as updates.
    LoadSession(OpenSessionParams),
    /// `session/resume`: like load, without the replay.
    ResumeSession(OpenSessionParams),
    /// `session/list`.
    ListSessions(ListSessionsParams),
    /// `session/close`.
    CloseSession(SessionRef),
    /// `session/prompt`.
    Prompt(PromptParams),
    /// `session/cancel` (a notification).
    Cancel(SessionRef),
    /// `session/set_mode`.
    SetMode(SetModeParams),
    /// `session/set_config_option`.
    SetConfigOption(SetConfigOptionParams),
}

impl ClientCall {
    /// Decodes `method` with `params`.
    pub fn decode(method: &str, params: Value) -> Result<ClientCall, RpcError> {
        fn typed<T: for<'de> Deserialize<'de>>(method: &str, params: Value) -> Result<T, RpcError> {
            let params = if params.is_null() {
                Value::Object(Default::default())
            } else {
                params
            };
            serde_json::from_value(params).map_err(|e| {
                RpcError::new(INVALID_PARAMS, format!("invalid params for {method}: {e}"))
            })
        }
        Ok(match method {
            "initialize" => ClientCall::Initialize(typed(method, params)?),
            "authenticate" => ClientCall::Authenticate,
            "session/new" => ClientCall::NewSession(typed(method, params)?),
            "session/load" => ClientCall::LoadSession(typed(method, params)?),
            "session/resume" => ClientCall::ResumeSession(typed(method, params)?),
            "session/list" => ClientCall::ListSessions(typed(method, params)?),
            "session/close" => ClientCall::CloseSession(typed(method, params)?),
            "session/prompt" => ClientCall::Prompt(typed(method, params)?),
            "session/cancel" => ClientCall::Cancel(typed(method, params)?),
            "session/set_mode" => ClientCall::SetMode(typed(method, params)?),
            "session/set_config_option" => ClientCall::SetConfigOption(typed(method, params)?),
            other => {
                return Err(RpcError::new(
                    METHOD_NOT_FOUND,
                    format!("hrns does not serve the method `{other}`"),
                ));
            }
        })
    }

    /// The session a call is about, when it is about one.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            ClientCall::Initialize(_)
            | ClientCall::Authenticate
            | ClientCall::NewSession(_)
            | ClientCall::ListSessions(_) => None,
            ClientCall::LoadSession(p) | ClientCall::ResumeSession(p) => Some(&p.session_id),
            ClientCall::CloseSession(p) | ClientCall::Cancel(p) => Some(&p.session_id),
            ClientCall::Prompt(p) => Some(&p.session_id),
            ClientCall::SetMode(p) => Some(&p.session_id),
            ClientCall::SetConfigOption(p) => Some(&p.session_id),
        }
    }
}

/// `initialize`'s parameters.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The newest version the client speaks.
    pub protocol_version: u64,
    /// What the client offers.
    #[serde(default)]
    pub client_capabilities: ClientCapabilities,
}

/// What the client offers the agent.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// `fs/read_text_file` and `fs/write_text_file`.
    #[serde(default)]
    pub fs: FsCapabilities,
    /// `terminal/*`.
    #[serde(default)]
    pub terminal: bool,
}

/// The client's file system methods.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FsCapabilities {
    /// `fs/read_text_file`.
    #[serde(default)]
    pub read_text_file: bool,
    /// `fs/write_text_file`.
    #[serde(default)]
    pub write_text_file: bool,
}

/// An MCP server the client wants the session to use.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum McpServer {
    /// Over HTTP (`type: "http"`) or the older HTTP+SSE (`type: "sse"`).
    Http {
        /// `http` or `sse`.
        #[serde(rename = "type")]
        kind: HttpKind,
        /// The server's name (the tools are `mcp__NAME__TOOL`).
        name: String,
        /// Its URL.
        url: String,
        /// Headers to send.
        #[serde(default)]
        headers: Vec<NameValue>,
    },
    /// A child process over stdio.
    Stdio {
        /// The server's name.
        name: String,
        /// The program.
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Environment variables to set.
        #[serde(default)]
        env: Vec<NameValue>,
    },
}

/// The HTTP transports of MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HttpKind {
    /// Streamable HTTP.
    Http,
    /// HTTP with server-sent events (the older transport).
    Sse,
}

/// A header or environment variable.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NameValue {
    /// The name.
    pub name: String,
    /// The value.
    pub value: String,
}

/// `session/new`'s parameters.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionParams {
    /// The working directory (an absolute path).
    pub cwd: String,
    /// MCP servers to start for the session.
    #[serde(default)]
    pub mcp_servers: Vec<McpServer>,
}

/// `session/load`'s and `session/resume`'s parameters.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenSessionParams {
    /// The saved session.
    pub session_id: String,
    /// The working directory.
    pub cwd: String,
    /// MCP servers to start for the session.
    #[serde(default)]
    pub mcp_servers: Vec<McpServer>,
}

/// `session/list`'s parameters.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSessionsParams {
    /// Only sessions of this directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Where the last page ended.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// Parameters naming one session.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRef {
    /// The session.
    pub session_id: String,
}

/// `session/prompt`'s parameters.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptParams {
    /// The session.
    pub session_id: String,
    /// The user's message.
    pub prompt: Vec<ContentBlock>,
}

/// A piece of a prompt.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64.
    Image {
        /// The bytes in base64.
        data: String,
        /// `image/png`, …
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, which hrns does not take.
    Audio {
        /// The MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A link to a resource the agent may read (a file, by a `file://` URI).
    ResourceLink {
        /// The URI.
        uri: String,
        /// Its name.
        #[serde(default)]
        name: Option<String>,
    },
    /// A resource whose contents came with the prompt (an editor's selection or buffer).
    Resource {
        /// The contents.
        resource: EmbeddedResource,
    },
}

/// The contents of an embedded resource.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EmbeddedResource {
    /// The URI.
    pub uri: String,
    /// The text, for a text resource.
    #[serde(default)]
    pub text: Option<String>,
    /// The bytes in base64, for a binary one.
    #[serde(default)]
    pub blob: Option<String>,
    /// The MIME type.
    #[serde(default, rename = "mimeType")]
    pub mime_type: Option<String>,
}

/// `session/set_mode`'s parameters.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetModeParams {
    /// The session.
    pub session_id: String,
    /// The mode: an agent's name.
    pub mode_id: String,
}

/// `session/set_config_option`'s parameters.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetConfigOptionParams {
    /// The session.
    pub session_id: String,
    /// `model`, `approval` or `mode`.
    pub config_id: String,
    /// The value id.
    pub value: Value,
}

/// The path of a `file://` URI, percent-decoded; `None` for other schemes or an invalid
/// encoding.
pub fn file_uri_path(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    // `file:///abs` or `file://localhost/abs`.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
