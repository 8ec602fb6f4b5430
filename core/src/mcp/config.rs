//! The `mcpServers` configuration, in the shape Claude Desktop, Cursor and Claude Code use.
//!
//! ```json
//! "mcpServers": {
//!   "time": { "command": "mcp-server-time", "args": ["--local-timezone", "UTC"],
//!             "env": { "TZ": "UTC" }, "cwd": "/tmp" },
//!   "docs": { "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer …" },
//!             "timeout": 60000, "disabled": true }
//! }
//! ```
//!
//! A server with `command` runs over stdio; one with `url` over streamable HTTP (`"type"`,
//! when present, must agree: `stdio`, `http`, `streamable-http` or `sse`). `timeout` is the
//! per-call timeout in milliseconds (as in Gemini CLI); `startTimeout` how long the server may
//! take to start, in milliseconds: to answer `initialize` and to list its tools (each page of
//! a later listing too). `env` and `headers` values are never shown in `Debug`; which of them
//! are secrets, hidden from every text, is decided by
//! [`Secrets::add_named`](crate::secrets::Secrets::add_named): those whose names say so
//! (`API_KEY`, `Authorization`) or that look like credentials, not `NODE_ENV=production`.
//!
//! Each entry may bound what the server can make hrns hold or wait for ([`Limits`], each with
//! a default): `totalTimeout` (milliseconds a call may take in all, progress or not),
//! `maxResultChars` (characters of a result the model reads, head and tail kept),
//! `maxTools` and `maxToolBytes` (how many tools, and how many bytes of their definitions,
//! are offered from it), and `maxLogBytes` (the size of its stderr log before it is rotated).
//!
//! A stdio server runs under the session's sandbox policy, like `run_command`, unless its
//! entry names another with `"sandbox"` (`"danger-full-access"` for a server that must write
//! outside the workspace or use the network; see
//! [`SandboxPolicy::for_mode`](crate::sandbox::SandboxPolicy::for_mode)).

use crate::sandbox::SandboxMode;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// The key of an entry's per-call limit (milliseconds), named in the texts of a call that
/// ran out of it.
pub const TIMEOUT_KEY: &str = "timeout";

/// The key of an entry's start-up limit (milliseconds), named in the texts of a server that
/// did not start, or list its tools, in time.
pub const START_TIMEOUT_KEY: &str = "startTimeout";

/// The key of an entry's total limit per call (milliseconds), named in the text of a call
/// that ran out of it.
pub const TOTAL_TIMEOUT_KEY: &str = "totalTimeout";

/// The key of an entry's cap on the characters of a result, named in the note of a cut one.
pub const MAX_RESULT_CHARS_KEY: &str = "maxResultChars";

/// The key of an entry's cap on its number of tools, named in the warning of a cut listing.
pub const MAX_TOOLS_KEY: &str = "maxTools";

/// The key of an entry's cap on the bytes of its tool definitions, named in the warning of a
/// cut listing.
pub const MAX_TOOL_BYTES_KEY: &str = "maxToolBytes";

/// The key of an entry's cap on its stderr log before rotation.
pub const MAX_LOG_BYTES_KEY: &str = "maxLogBytes";

/// What one server may make hrns wait for or hold; each has a default and a key in the
/// server's `mcpServers` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long a call may take in all (`totalTimeout`, milliseconds; default 30 minutes).
    /// Progress notifications restart the per-call `timeout` but never extend this: the
    /// specification asks clients to "enforce a maximum timeout, regardless of progress
    /// notifications".
    pub total_timeout: Duration,
    /// Characters of a result the model reads (`maxResultChars`; default 30 000, as
    /// `run_command`'s output); a longer one keeps its head and tail and says what was cut.
    pub max_result_chars: usize,
    /// Tools taken from the server (`maxTools`; default 128, the most one request may offer at
    /// OpenAI); the rest are left out with a warning naming the server.
    pub max_tools: usize,
    /// Bytes of tool definitions (name, description, schema, as sent to the provider) taken
    /// from the server (`maxToolBytes`; default 128 KiB, about 32 000 tokens); every request
    /// carries them, so past this the rest are left out with a warning naming the server.
    pub max_tool_bytes: usize,
    /// Bytes of the server's stderr log (`maxLogBytes`; default 10 MiB): past it the log is
    /// rotated to `NAME.log.1` (replacing the one before) and starts afresh.
    pub max_log_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            total_timeout: Duration::from_secs(30 * 60),
            max_result_chars: crate::tool::builtin::DEFAULT_OUTPUT_CHARS,
            max_tools: 128,
            max_tool_bytes: 128 * 1024,
            max_log_bytes: 10 * 1024 * 1024,
        }
    }
}

/// The largest count or size accepted for a `max…` key: limits are kept in memory and added
/// up, and an absurd one would overflow them.
const MAX_COUNT: u64 = 1 << 40;

/// The largest `timeout` or `startTimeout` accepted (24 hours): limits are added to the
/// clock, and an absurd one would overflow it.
const MAX_LIMIT_MS: u64 = 24 * 60 * 60 * 1000;

/// How hrns reaches a server.
#[derive(Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it on top of the scrubbed environment (secrets).
        env: BTreeMap<String, String>,
        /// Its working directory; the workspace when absent.
        cwd: Option<String>,
    },
    /// A streamable HTTP endpoint (with the older HTTP+SSE transport as fallback).
    Http {
        /// The endpoint.
        url: String,
        /// Extra request headers (secrets).
        headers: BTreeMap<String, String>,
    },
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys = |map: &BTreeMap<String, String>| map.keys().cloned().collect::<Vec<_>>();
        match self {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env (values redacted)", &keys(env))
                .field("cwd", cwd)
                .finish(),
            Transport::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", url)
                .field("headers (values redacted)", &keys(headers))
                .finish(),
        }
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Its name, the key in `mcpServers`.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// `"disabled": true`: configured but not started.
    pub disabled: bool,
    /// The per-call timeout (`"timeout"`, milliseconds), if set.
    pub timeout: Option<Duration>,
    /// How long the start may take (`"startTimeout"`, milliseconds), if set: the answer to
    /// `initialize`, the first listing, and each page of a later listing.
    pub start_timeout: Option<Duration>,
    /// `"sandbox"`: the policy its process runs under instead of the session's (stdio only).
    pub sandbox: Option<SandboxMode>,
    /// What it may make hrns wait for or hold, defaults filled in.
    pub limits: Limits,
}

impl ServerConfig {
    /// The secrets of this server as a redaction set: its env and header values that are
    /// secrets ([`Secrets::add_named`](crate::secrets::Secrets::add_named)), and the secrets
    /// its URL carries (a userinfo password, credentials in the query; see
    /// [`url_secrets`](crate::url_secrets::url_secrets)), which errors and listings naming
    /// the URL would otherwise show.
    pub fn secret_set(&self) -> crate::secrets::Secrets {
        let mut secrets = crate::secrets::Secrets::new();
        match &self.transport {
            Transport::Stdio { env, .. } => {
                for (name, value) in env {
                    secrets.add_named(name, value);
                }
            }
            Transport::Http { url, headers } => {
                for (name, value) in headers {
                    secrets.add_named(name, value);
                }
                for value in crate::url_secrets::url_secrets(url) {
                    secrets.add(&value);
                }
            }
        }
        secrets
    }

    /// `text` with every secret of this server (and long fragments of one) replaced by
    /// `[redacted]`: tool results and failure reasons pass through it before anyone sees them.
    pub fn redact(&self, text: &str) -> String {
        self.secret_set().redact(text).into_owned()
    }
}

/// Why one server entry was not understood. The configuration's fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("MCP server {server:?} in mcpServers: {reason}; fix or remove that entry")]
pub struct ServerConfigError {
    /// The entry's name.
    pub server: String,
    /// What is wrong.
    pub reason: String,
}

/// Reads an `mcpServers` object. Each entry is read on its own: the good ones are returned in
/// name order, each bad one as an error, so one typo does not lose the other servers.
pub fn parse_servers(value: &Value) -> (Vec<ServerConfig>, Vec<ServerConfigError>) {
    let mut servers = Vec::new();
    let mut errors = Vec::new();
    let Some(entries) = value.as_object() else {
        errors.push(ServerConfigError {
            server: String::new(),
            reason: "mcpServers is not an object".into(),
        });
        return (servers, errors);
    };
    let mut names: Vec<&String> = entries.keys().collect();
    names.sort();
    for name in names {
        match parse_server(name, &entries[name]) {
            Ok(server) => servers.push(server),
            Err(reason) => errors.push(ServerConfigError {
                server: name.clone(),
                reason,
            }),
        }
    }
    (servers, errors)
}

fn string_map(entry: &Value, field: &str) -> Result<BTreeMap<String, String>, String> {
    match entry.get(field) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(format!("{field}.{k} is not a string")),
            })
            .collect(),
        Some(_) => Err(format!("{field} is not an object of strings")),
    }
}

fn parse_server(name: &str, entry: &Value) -> Result<ServerConfig, String> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    if !entry.is_object() {
        return Err("the entry is not an object".into());
    }
    let text = |field: &str| -> Result<Option<String>, String> {
        match entry.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("{field} is not a string")),
        }
    };
    let kind = text("type")?;
    let transport = match (text("command")?, text("url")?) {
        (Some(command), None) => {
            if !matches!(kind.as_deref(), None | Some("stdio")) {
                return Err(format!(
                    "type {:?} does not go with command",
                    kind.unwrap_or_default()
                ));
            }
            if command.is_empty() {
                return Err("command is empty".into());
            }
            let args = match entry.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|a| {
                        a.as_str()
                            .map(str::to_owned)
                            .ok_or("args holds a non-string")
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("args is not a list of strings".into()),
            };
            Transport::Stdio {
                command,
                args,
                env: string_map(entry, "env")?,
                cwd: text("cwd")?,
            }
        }
        (None, Some(url)) => {
            if !matches!(
                kind.as_deref(),
                None | Some("http" | "streamable-http" | "sse")
            ) {
                return Err(format!(
                    "type {:?} does not go with url",
                    kind.unwrap_or_default()
                ));
            }
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err("url is not an http(s) URL".into());
            }
            Transport::Http {
                url,
                headers: string_map(entry, "headers")?,
            }
        }
        (Some(_), Some(_)) => return Err("it has both command and url; keep one".into()),
        (None, None) => return Err("it has neither command (stdio) nor url (HTTP)".into()),
    };
    let disabled = match entry.get("disabled") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("disabled is not true or false".into()),
    };
    let milliseconds = |field: &str| match entry.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(ms) if ms > MAX_LIMIT_MS => Err(format!(
                "{field} is more than 24 hours ({MAX_LIMIT_MS} milliseconds)"
            )),
            Some(ms) if ms > 0 => Ok(Some(Duration::from_millis(ms))),
            _ => Err(format!("{field} is not a positive number of milliseconds")),
        },
    };
    let timeout = milliseconds(TIMEOUT_KEY)?;
    let start_timeout = milliseconds(START_TIMEOUT_KEY)?;
    let count = |field: &str| match entry.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n > MAX_COUNT => Err(format!("{field} is more than {MAX_COUNT}")),
            Some(n) if n > 0 => Ok(Some(n)),
            _ => Err(format!("{field} is not a positive whole number")),
        },
    };
    let defaults = Limits::default();
    let limits = Limits {
        total_timeout: milliseconds(TOTAL_TIMEOUT_KEY)?.unwrap_or(defaults.total_timeout),
        max_result_chars: count(MAX_RESULT_CHARS_KEY)?
            .map_or(defaults.max_result_chars, |n| n as usize),
        max_tools: count(MAX_TOOLS_KEY)?.map_or(defaults.max_tools, |n| n as usize),
        max_tool_bytes: count(MAX_TOOL_BYTES_KEY)?.map_or(defaults.max_tool_bytes, |n| n as usize),
        max_log_bytes: count(MAX_LOG_BYTES_KEY)?.unwrap_or(defaults.max_log_bytes),
    };
    let sandbox = match text("sandbox")? {
        None => None,
        Some(_) if matches!(transport, Transport::Http { .. }) => {
            return Err("sandbox applies to command (stdio) servers only".into());
        }
        Some(mode) => Some(mode.parse::<SandboxMode>().map_err(|e| e.to_string())?),
    };
    Ok(ServerConfig {
        name: name.into(),
        transport,
        disabled,
        timeout,
        start_timeout,
        sandbox,
        limits,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_stdio_and_http_entries_and_reports_bad_ones() {
        let (servers, errors) = parse_servers(&json!({
            "time": {"command": "mcp-server-time", "args": ["--x"],
                     "env": {"TOKEN": "s3cret-t0ken-x", "NODE_ENV": "production"}},
            "web": {"type": "http", "url": "https://u:pw-in-url-0123@h/mcp?api_key=q-secret-4567",
                    "headers": {"Authorization": "Bearer abc-d3f-ghi-jkl", "Accept-Language": "en-US,en;q=0.9"},
                    "timeout": 1500, "startTimeout": 2500, "disabled": true},
            "both": {"command": "a", "url": "http://h"},
            "none": {},
            "badenv": {"command": "a", "env": {"A": 1}},
            "badtype": {"type": "sse", "command": "a"},
            "badtimeout": {"command": "a", "timeout": -1},
            "badstart": {"command": "a", "startTimeout": "1s"},
            "badurl": {"url": "ftp://h"},
            "free": {"command": "a", "sandbox": "danger-full-access"},
            "badsandbox": {"command": "a", "sandbox": "none"},
            "httpsandbox": {"url": "http://h/mcp", "sandbox": "read-only"}
        }));
        assert_eq!(servers.len(), 3);
        assert_eq!(servers[0].name, "free");
        assert_eq!(servers[0].sandbox, Some(SandboxMode::DangerFullAccess));
        let servers = &servers[1..];
        assert_eq!(servers[0].name, "time");
        assert_eq!(servers[0].sandbox, None);
        assert_eq!(
            servers[0].transport,
            Transport::Stdio {
                command: "mcp-server-time".into(),
                args: vec!["--x".into()],
                env: [
                    ("NODE_ENV".to_owned(), "production".to_owned()),
                    ("TOKEN".to_owned(), "s3cret-t0ken-x".to_owned())
                ]
                .into(),
                cwd: None
            }
        );
        assert!(servers[1].disabled);
        assert_eq!(servers[1].timeout, Some(Duration::from_millis(1500)));
        assert_eq!(servers[1].start_timeout, Some(Duration::from_millis(2500)));
        assert_eq!(servers[0].start_timeout, None);
        let names: Vec<&str> = errors.iter().map(|e| e.server.as_str()).collect();
        assert_eq!(
            names,
            [
                "badenv",
                "badsandbox",
                "badstart",
                "badtimeout",
                "badtype",
                "badurl",
                "both",
                "httpsandbox",
                "none"
            ]
        );
        // Secrets never show in Debug.
        let debug = format!("{servers:?}");
        assert!(
            !debug.contains("s3cret")
                && !debug.contains("Bearer abc")
                && !debug.contains("production"),
            "{debug}"
        );
        assert!(debug.contains("TOKEN") && debug.contains("Authorization"));
        assert_eq!(
            servers[1]
                .redact("POST to https://u:pw-in-url-0123@h/mcp?api_key=q-secret-4567 failed"),
            "POST to https://u:[redacted]@h/mcp?api_key=[redacted] failed"
        );
        assert_eq!(
            servers[1].redact("h: Bearer abc-d3f-ghi-jkl! en-US,en;q=0.9"),
            "h: [redacted]! en-US,en;q=0.9"
        );
        // Only the value whose name says it is secret is hidden.
        assert_eq!(
            servers[0].redact("s3cret-t0ken-x s3cret-t0ken-x production"),
            "[redacted] [redacted] production"
        );
    }

    /// A limit is added to the clock: one past a day is refused with a clear reason, not
    /// left to overflow the clock where the server starts.
    #[test]
    fn an_absurd_limit_is_refused() {
        let (servers, errors) = parse_servers(&json!({
            "huge": {"command": "a", "startTimeout": u64::MAX},
            "day": {"command": "a", "timeout": MAX_LIMIT_MS},
            "over": {"command": "a", "timeout": MAX_LIMIT_MS + 1}
        }));
        assert_eq!(servers.len(), 1);
        assert_eq!(servers[0].timeout, Some(Duration::from_secs(24 * 60 * 60)));
        let reasons: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(reasons.len(), 2, "{reasons:?}");
        assert!(
            reasons.iter().all(|r| r.contains("more than 24 hours")),
            "{reasons:?}"
        );
    }

    /// The bounds have defaults, take positive numbers, and refuse anything else by name.
    #[test]
    fn limits_default_and_are_checked() {
        let (servers, errors) = parse_servers(&json!({
            "plain": {"command": "a"},
            "tight": {"command": "a", "totalTimeout": 5000, "maxResultChars": 100,
                      "maxTools": 3, "maxToolBytes": 2048, "maxLogBytes": 4096},
            "zero": {"command": "a", "maxTools": 0},
            "text": {"command": "a", "maxLogBytes": "1M"},
            "huge": {"command": "a", "maxToolBytes": u64::MAX}
        }));
        assert_eq!(servers.len(), 2, "{errors:?}");
        assert_eq!(servers[0].limits, Limits::default());
        assert_eq!(servers[0].limits.total_timeout, Duration::from_secs(1800));
        assert_eq!(
            servers[1].limits,
            Limits {
                total_timeout: Duration::from_secs(5),
                max_result_chars: 100,
                max_tools: 3,
                max_tool_bytes: 2048,
                max_log_bytes: 4096,
            }
        );
        let reasons: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(reasons.len(), 3, "{reasons:?}");
        assert!(
            reasons[0].contains("maxToolBytes is more than"),
            "{reasons:?}"
        );
        assert!(
            reasons[1].contains("maxLogBytes is not a positive"),
            "{reasons:?}"
        );
        assert!(
            reasons[2].contains("maxTools is not a positive"),
            "{reasons:?}"
        );
    }

    #[test]
    fn a_non_object_is_one_error() {
        let (servers, errors) = parse_servers(&json!([1]));
        assert!(servers.is_empty());
        assert_eq!(errors.len(), 1);
    }
}
