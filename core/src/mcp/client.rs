//! The client side of one MCP server connection, as a state machine.
//!
//! [`Client`] speaks the Model Context Protocol (lifecycle and tools) over any transport: it
//! takes whole JSON-RPC [`Message`]s in ([`Client::handle_message`]) and hands messages to
//! send out ([`Action::Send`]); the driver frames them (one line each on stdio, one POST each
//! over HTTP). Its methods come in the usual four families:
//!
//! - getters: [`Client::phase`], [`Client::tools`], [`Client::protocol_version`],
//!   [`Client::server_info`], [`Client::poll_timeout`];
//! - inputs: [`Client::handle_message`], [`Client::handle_closed`],
//!   [`Client::handle_timeout`];
//! - commands: [`Client::start`], [`Client::call_tool`], [`Client::cancel_call`];
//! - output: [`Client::poll`].
//!
//! After any input or command, drain [`Client::poll`] until it returns `None`; then wait for
//! bytes from the server or for [`Client::poll_timeout`].
//!
//! The lifecycle: `start` sends `initialize` with the newest protocol version hrns speaks;
//! the server's version must be one of [`SUPPORTED_VERSIONS`]. Then `notifications/
//! initialized`, then `tools/list` page by page, then [`Event::Ready`]. A
//! `notifications/tools/list_changed` lists again ([`Event::ToolsChanged`]). Pings and
//! `roots/list` from the server are answered, other server requests get "method not found".
//! A server that does not answer `initialize` or `tools/list` within the request timeout,
//! breaks the protocol during the handshake, or closes the connection has failed: one
//! [`Event::Failed`], and every call in flight ends with an error result. A call that takes
//! longer than the call timeout (progress notifications restart it) is cancelled and ends
//! with an error result the model can act on.

use super::content::call_result_output;
pub use super::error::{ClientError, Failure};
use super::jsonrpc::{ErrorObject, METHOD_NOT_FOUND, Message, RequestId};
pub use super::roots::{Root, file_uri};
use crate::tool::ToolOutput;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

/// The protocol versions hrns speaks, newest first; the first is offered.
pub const SUPPORTED_VERSIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

/// Pages of `tools/list` accepted in one listing, against a server that pages forever.
pub const MAX_LIST_PAGES: usize = 100;

/// Tools accepted from one server.
pub const MAX_TOOLS: usize = 1000;

/// Ids of cancelled or timed-out requests remembered, so their late answers are dropped
/// quietly.
const REMEMBERED_CANCELLED: usize = 64;

/// How the client presents itself and what it offers.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The server's name in hrns's configuration, used in texts for the model and the user.
    pub server: String,
    /// `clientInfo.name` and `clientInfo.version` sent in `initialize`.
    pub client_name: String,
    /// See `client_name`.
    pub client_version: String,
    /// The roots offered to the server (`roots/list`): the workspace.
    pub roots: Vec<Root>,
    /// How long `initialize` and each `tools/list` page may take.
    pub request_timeout: Duration,
    /// How long a tool call may go without an answer or a progress notification.
    pub call_timeout: Duration,
}

impl ClientConfig {
    /// A configuration with the default timeouts (30 s per request, 10 minutes per call) and
    /// no roots.
    pub fn new(server: impl Into<String>) -> Self {
        ClientConfig {
            server: server.into(),
            client_name: "hrns".into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
            roots: Vec::new(),
            request_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(600),
        }
    }
}

/// A tool as the server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// The server's name for it, used in `tools/call`.
    pub name: String,
    /// A title for people, if any.
    pub title: Option<String>,
    /// What it does, for the model.
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
    /// `annotations.readOnlyHint`: the server says the tool changes nothing.
    pub read_only_hint: Option<bool>,
}

/// Where the connection is.
#[derive(Debug, Clone, PartialEq)]
pub enum Phase {
    /// [`Client::start`] was not called yet.
    New,
    /// Waiting for the answer to `initialize`.
    Initializing,
    /// Initialised; listing tools for the first time.
    Listing,
    /// Tools known; calls may be made.
    Ready,
    /// The connection failed or was closed; terminal.
    Failed(Failure),
}

/// Identifies one tool call made with [`Client::call_tool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(pub i64);

/// What the client reports.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The handshake and the first listing are done; the tools are [`Client::tools`].
    Ready,
    /// The server's tools changed and were listed again; see [`Client::tools`].
    ToolsChanged,
    /// A tool call ended (answered, failed, timed out, cancelled, or the server went away).
    CallFinished {
        /// The call.
        call: CallId,
        /// What the model reads.
        output: ToolOutput,
    },
    /// The server reported progress on a call.
    Progress {
        /// The call.
        call: CallId,
        /// Progress so far.
        progress: f64,
        /// The total, if known.
        total: Option<f64>,
        /// A message for people.
        message: Option<String>,
    },
    /// A log message from the server (`notifications/message`), or a note about a message
    /// the client dropped (a malformed one, an answer to no request).
    Log {
        /// The level (`info`, `warning`, …).
        level: String,
        /// The text.
        text: String,
    },
    /// The connection failed; reported once. Calls in flight end with error results.
    Failed(Failure),
}

/// What the caller must do next.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum Action {
    /// Send this message to the server.
    Send(Message),
    /// Report this.
    Emit(Event),
}

/// What a request in flight is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Initialize,
    ListTools,
    Call(CallId),
}

#[derive(Debug, Clone)]
struct Pending {
    purpose: Purpose,
    deadline: Instant,
}

/// A `tools/list` in progress.
#[derive(Debug, Default)]
struct Listing {
    tools: Vec<McpTool>,
    pages: usize,
    cursors: BTreeSet<String>,
}

/// The MCP client state machine for one server. See the module docs.
#[derive(Debug)]
pub struct Client {
    config: ClientConfig,
    phase: Phase,
    next_id: i64,
    pending: BTreeMap<i64, Pending>,
    out: VecDeque<Action>,
    tools: Vec<McpTool>,
    listing: Option<Listing>,
    /// A `list_changed` came during a listing: list again after it.
    list_again: bool,
    protocol_version: Option<String>,
    server_info: Option<Value>,
    instructions: Option<String>,
    cancelled: VecDeque<i64>,
}

impl Client {
    /// A client that has sent nothing yet; call [`start`](Self::start).
    pub fn new(config: ClientConfig) -> Self {
        Client {
            config,
            phase: Phase::New,
            next_id: 0,
            pending: BTreeMap::new(),
            out: VecDeque::new(),
            tools: Vec::new(),
            listing: None,
            list_again: false,
            protocol_version: None,
            server_info: None,
            instructions: None,
            cancelled: VecDeque::new(),
        }
    }

    // ---- getters ----

    /// Where the connection is.
    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    /// The configuration given at construction.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The server's tools as last listed (empty before [`Event::Ready`]).
    pub fn tools(&self) -> &[McpTool] {
        &self.tools
    }

    /// The negotiated protocol version, once `initialize` was answered. HTTP transports send
    /// it in the `MCP-Protocol-Version` header.
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }

    /// The server's `serverInfo` (name, version), once known.
    pub fn server_info(&self) -> Option<&Value> {
        self.server_info.as_ref()
    }

    /// The server's `instructions`, if it sent any.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// The earliest deadline of a request in flight; call
    /// [`handle_timeout`](Self::handle_timeout) then.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.pending.values().map(|p| p.deadline).min()
    }

    /// The calls in flight.
    pub fn calls_in_flight(&self) -> impl Iterator<Item = CallId> + '_ {
        self.pending.values().filter_map(|p| match p.purpose {
            Purpose::Call(call) => Some(call),
            Purpose::Initialize | Purpose::ListTools => None,
        })
    }

    // ---- output ----

    /// The next thing to do, or `None` until the next input.
    pub fn poll(&mut self) -> Option<Action> {
        self.out.pop_front()
    }

    // ---- commands ----

    /// Sends `initialize`.
    pub fn start(&mut self, now: Instant) -> Result<(), ClientError> {
        if self.phase != Phase::New {
            return Err(ClientError::AlreadyStarted);
        }
        self.phase = Phase::Initializing;
        let params = json!({
            "protocolVersion": SUPPORTED_VERSIONS[0],
            "capabilities": {"roots": {"listChanged": false}},
            "clientInfo": {"name": self.config.client_name, "version": self.config.client_version},
        });
        let timeout = self.config.request_timeout;
        self.request(now, timeout, Purpose::Initialize, "initialize", params);
        Ok(())
    }

    /// Calls tool `name` (the server's name for it) with `arguments`, a JSON object. The
    /// answer comes as [`Event::CallFinished`] with the returned id.
    pub fn call_tool(
        &mut self,
        now: Instant,
        name: &str,
        arguments: Value,
    ) -> Result<CallId, ClientError> {
        match &self.phase {
            Phase::Ready => {}
            Phase::New | Phase::Initializing | Phase::Listing => return Err(ClientError::NotReady),
            Phase::Failed(failure) => return Err(ClientError::Failed(failure.clone())),
        }
        let call = CallId(self.next_id);
        let params = json!({
            "name": name,
            "arguments": arguments,
            "_meta": {"progressToken": call.0},
        });
        let timeout = self.config.call_timeout;
        self.request(now, timeout, Purpose::Call(call), "tools/call", params);
        Ok(call)
    }

    /// Cancels a call in flight: sends `notifications/cancelled` and ends the call with an
    /// error result now. Does nothing for a call that already ended.
    pub fn cancel_call(&mut self, call: CallId, reason: &str) {
        if self.pending.remove(&call.0).is_none() {
            return;
        }
        self.forget(call.0);
        self.notify(
            "notifications/cancelled",
            json!({"requestId": call.0, "reason": reason}),
        );
        self.emit(Event::CallFinished {
            call,
            output: ToolOutput::error(format!("The call was cancelled: {reason}.")),
        });
    }

    // ---- inputs ----

    /// Takes one message from the server.
    pub fn handle_message(&mut self, now: Instant, message: Message) {
        if matches!(self.phase, Phase::Failed(_) | Phase::New) {
            return;
        }
        match message {
            Message::Request { id, method, params } => self.on_request(id, &method, params),
            Message::Notification { method, params } => self.on_notification(now, &method, params),
            Message::Response { id, result } => self.on_answer(now, id, Ok(result)),
            Message::Error {
                id: Some(id),
                error,
            } => self.on_answer(now, id, Err(error)),
            Message::Error { id: None, error } => self.log(
                "warning",
                format!(
                    "the server reported an error about an unreadable message: {}",
                    error.message
                ),
            ),
        }
    }

    /// Notes that a message from the server could not be read (reported by the framing);
    /// the message is dropped and logged.
    pub fn handle_malformed(&mut self, reason: &str) {
        if !matches!(self.phase, Phase::Failed(_)) {
            self.log("warning", format!("dropped a malformed message: {reason}"));
        }
    }

    /// The connection ended: the process exited, the stream closed, or the framing failed.
    /// The client fails with [`Failure::Closed`] unless it already failed.
    pub fn handle_closed(&mut self, reason: impl Into<String>) {
        self.fail(Failure::Closed {
            reason: reason.into(),
        });
    }

    /// The HTTP server forgot the session (it answered 404 to a request that carried its
    /// session id): calls in flight end with an error result, and the handshake starts again
    /// (a new `initialize`, a new listing, then [`Event::Ready`] once more).
    pub fn handle_session_expired(&mut self, now: Instant) {
        match self.phase {
            Phase::Initializing | Phase::Listing | Phase::Ready => {}
            Phase::New | Phase::Failed(_) => return,
        }
        let server = self.config.server.clone();
        for (id, pending) in std::mem::take(&mut self.pending) {
            self.forget(id);
            if let Purpose::Call(call) = pending.purpose {
                self.emit(Event::CallFinished {
                    call,
                    output: ToolOutput::error(format!(
                        "The MCP server {server} lost its session during the call, which may or                          may not have had an effect; the session is being restarted, so the call                          can be tried again."
                    )),
                });
            }
        }
        self.listing = None;
        self.list_again = false;
        self.protocol_version = None;
        self.phase = Phase::New;
        let _ = self.start(now);
    }

    /// Lets time pass: requests whose deadline is at or before `now` time out.
    pub fn handle_timeout(&mut self, now: Instant) {
        let expired: Vec<i64> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline <= now)
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            let Some(pending) = self.pending.remove(&id) else {
                continue;
            };
            match pending.purpose {
                Purpose::Initialize | Purpose::ListTools => {
                    self.forget(id);
                    let failure = Failure::Timeout {
                        method: method_of(pending.purpose),
                        timeout: self.config.request_timeout,
                    };
                    if pending.purpose == Purpose::ListTools {
                        self.listing_failed(failure);
                    } else {
                        self.fail(failure);
                    }
                }
                Purpose::Call(call) => {
                    self.forget(id);
                    let secs = self.config.call_timeout.as_secs_f32();
                    self.notify(
                        "notifications/cancelled",
                        json!({"requestId": id, "reason": "timed out"}),
                    );
                    self.emit(Event::CallFinished {
                        call,
                        output: ToolOutput::error(format!(
                            "The MCP server {} did not finish the call within {secs} s, so it \
                             was cancelled. It may have had an effect anyway.",
                            self.config.server
                        )),
                    });
                }
            }
        }
    }

    // ---- internals ----

    fn request(
        &mut self,
        now: Instant,
        timeout: Duration,
        purpose: Purpose,
        method: &str,
        params: Value,
    ) {
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(
            id,
            Pending {
                purpose,
                deadline: now + timeout,
            },
        );
        self.out.push_back(Action::Send(Message::Request {
            id: RequestId::Number(id),
            method: method.into(),
            params: Some(params),
        }));
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.out.push_back(Action::Send(Message::Notification {
            method: method.into(),
            params: Some(params),
        }));
    }

    fn emit(&mut self, event: Event) {
        self.out.push_back(Action::Emit(event));
    }

    fn log(&mut self, level: &str, text: String) {
        self.emit(Event::Log {
            level: level.into(),
            text,
        });
    }

    /// Remembers an abandoned request id so its late answer is dropped quietly.
    fn forget(&mut self, id: i64) {
        if self.cancelled.len() == REMEMBERED_CANCELLED {
            self.cancelled.pop_front();
        }
        self.cancelled.push_back(id);
    }

    fn fail(&mut self, failure: Failure) {
        if matches!(self.phase, Phase::Failed(_)) {
            return;
        }
        self.phase = Phase::Failed(failure.clone());
        self.listing = None;
        let server = self.config.server.clone();
        for (_, pending) in std::mem::take(&mut self.pending) {
            if let Purpose::Call(call) = pending.purpose {
                self.emit(Event::CallFinished {
                    call,
                    output: ToolOutput::error(format!(
                        "The MCP server {server} failed during the call ({failure}); the call \
                         may or may not have had an effect."
                    )),
                });
            }
        }
        self.emit(Event::Failed(failure));
    }

    /// A listing failed: during the handshake the server has failed; a later refresh only
    /// keeps the tools listed before, with a warning.
    fn listing_failed(&mut self, failure: Failure) {
        self.listing = None;
        match self.phase {
            Phase::Ready => {
                self.list_again = false;
                self.log("warning", format!("kept the earlier tool list: {failure}"));
            }
            Phase::New | Phase::Initializing | Phase::Listing | Phase::Failed(_) => {
                self.fail(failure)
            }
        }
    }

    fn on_request(&mut self, id: RequestId, method: &str, _params: Option<Value>) {
        let answer = match method {
            "ping" => Message::Response {
                id,
                result: json!({}),
            },
            "roots/list" => {
                let roots: Vec<Value> = self
                    .config
                    .roots
                    .iter()
                    .map(|root| match &root.name {
                        Some(name) => json!({"uri": root.uri, "name": name}),
                        None => json!({"uri": root.uri}),
                    })
                    .collect();
                Message::Response {
                    id,
                    result: json!({"roots": roots}),
                }
            }
            _ => Message::Error {
                id: Some(id),
                error: ErrorObject {
                    code: METHOD_NOT_FOUND,
                    message: format!("hrns does not support {method:?}"),
                    data: None,
                },
            },
        };
        self.out.push_back(Action::Send(answer));
    }

    fn on_notification(&mut self, now: Instant, method: &str, params: Option<Value>) {
        let params = params.unwrap_or(Value::Null);
        match method {
            "notifications/tools/list_changed" => match self.phase {
                Phase::Ready if self.listing.is_none() => self.list_tools(now, None),
                Phase::Ready | Phase::Listing => self.list_again = true,
                Phase::New | Phase::Initializing | Phase::Failed(_) => {}
            },
            "notifications/progress" => {
                let Some(token) = params.get("progressToken").and_then(Value::as_i64) else {
                    return;
                };
                let Some(pending) = self.pending.get_mut(&token) else {
                    return;
                };
                let Purpose::Call(call) = pending.purpose else {
                    return;
                };
                // "Receivers MAY reset the timeout clock for a request upon receiving a
                // progress notification."
                pending.deadline = now + self.config.call_timeout;
                let progress = params
                    .get("progress")
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0);
                let total = params.get("total").and_then(Value::as_f64);
                let message = params
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.emit(Event::Progress {
                    call,
                    progress,
                    total,
                    message,
                });
            }
            "notifications/message" => {
                let level = params
                    .get("level")
                    .and_then(Value::as_str)
                    .unwrap_or("info")
                    .to_owned();
                let text = match params.get("data") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                self.emit(Event::Log { level, text });
            }
            // Cancellations of the server's own requests (hrns answers at once), resource and
            // prompt notifications: nothing to do.
            _ => {}
        }
    }

    fn on_answer(&mut self, now: Instant, id: RequestId, answer: Result<Value, ErrorObject>) {
        let pending = match &id {
            RequestId::Number(n) => self.pending.remove(n),
            RequestId::String(_) => None,
        };
        let Some(pending) = pending else {
            let known = matches!(id, RequestId::Number(n) if self.cancelled.contains(&n));
            if !known {
                self.log(
                    "warning",
                    format!("dropped an answer to an unknown request id {id}"),
                );
            }
            return;
        };
        match pending.purpose {
            Purpose::Initialize => self.on_initialized(now, answer),
            Purpose::ListTools => self.on_tools_page(now, answer),
            Purpose::Call(call) => {
                let output = match answer {
                    Ok(result) => call_result_output(&self.config.server, &result),
                    Err(error) => ToolOutput::error(format!(
                        "The MCP server {} refused the call: {} (code {}).",
                        self.config.server, error.message, error.code
                    )),
                };
                self.emit(Event::CallFinished { call, output });
            }
        }
    }

    fn on_initialized(&mut self, now: Instant, answer: Result<Value, ErrorObject>) {
        let result = match answer {
            Ok(result) => result,
            Err(error) => {
                return self.fail(Failure::Refused {
                    method: "initialize",
                    code: error.code,
                    message: error.message,
                });
            }
        };
        let Some(version) = result.get("protocolVersion").and_then(Value::as_str) else {
            return self.fail(Failure::Malformed {
                method: "initialize",
                reason: "no protocolVersion".into(),
            });
        };
        if !SUPPORTED_VERSIONS.contains(&version) {
            return self.fail(Failure::UnsupportedVersion {
                version: version.into(),
            });
        }
        self.protocol_version = Some(version.into());
        self.server_info = result.get("serverInfo").cloned();
        self.instructions = result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned);
        self.out.push_back(Action::Send(Message::Notification {
            method: "notifications/initialized".into(),
            params: None,
        }));
        let has_tools = result
            .get("capabilities")
            .and_then(|c| c.get("tools"))
            .is_some_and(|t| !t.is_null());
        if has_tools {
            self.phase = Phase::Listing;
            self.list_tools(now, None);
        } else {
            self.phase = Phase::Ready;
            self.emit(Event::Ready);
        }
    }

    fn list_tools(&mut self, now: Instant, cursor: Option<String>) {
        if self.listing.is_none() {
            self.listing = Some(Listing::default());
        }
        let params = match cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let timeout = self.config.request_timeout;
        self.request(now, timeout, Purpose::ListTools, "tools/list", params);
    }

    fn on_tools_page(&mut self, now: Instant, answer: Result<Value, ErrorObject>) {
        let result = match answer {
            Ok(result) => result,
            Err(error) => {
                return self.listing_failed(Failure::Refused {
                    method: "tools/list",
                    code: error.code,
                    message: error.message,
                });
            }
        };
        let Some(listing) = self.listing.as_mut() else {
            return;
        };
        let Some(tools) = result.get("tools").and_then(Value::as_array) else {
            return self.listing_failed(Failure::Malformed {
                method: "tools/list",
                reason: "no tools list".into(),
            });
        };
        let mut skipped = 0;
        for tool in tools {
            match parse_tool(tool) {
                Some(tool) if listing.tools.len() < MAX_TOOLS => listing.tools.push(tool),
                Some(_) | None => skipped += 1,
            }
        }
        listing.pages += 1;
        let cursor = result
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(cursor) = cursor {
            if listing.pages >= MAX_LIST_PAGES || !listing.cursors.insert(cursor.clone()) {
                return self.listing_failed(Failure::Malformed {
                    method: "tools/list",
                    reason: format!(
                        "the listing does not end (more than {MAX_LIST_PAGES} pages, or a cursor repeated)"
                    ),
                });
            }
            if skipped > 0 {
                self.log(
                    "warning",
                    format!("left out {skipped} malformed or surplus tools"),
                );
            }
            return self.list_tools(now, Some(cursor));
        }
        let listing = self.listing.take().unwrap_or_default();
        if skipped > 0 {
            self.log(
                "warning",
                format!("left out {skipped} malformed or surplus tools"),
            );
        }
        self.tools = listing.tools;
        match self.phase {
            Phase::Listing => {
                self.phase = Phase::Ready;
                self.emit(Event::Ready);
            }
            Phase::Ready => self.emit(Event::ToolsChanged),
            Phase::New | Phase::Initializing | Phase::Failed(_) => {}
        }
        if std::mem::take(&mut self.list_again) {
            self.list_tools(now, None);
        }
    }
}

fn method_of(purpose: Purpose) -> &'static str {
    match purpose {
        Purpose::Initialize => "initialize",
        Purpose::ListTools => "tools/list",
        Purpose::Call(_) => "tools/call",
    }
}

/// Reads one tool of a `tools/list` page; `None` when it has no name.
fn parse_tool(tool: &Value) -> Option<McpTool> {
    let string = |name: &str| tool.get(name).and_then(Value::as_str).map(str::to_owned);
    let name = string("name").filter(|n| !n.is_empty())?;
    Some(McpTool {
        name,
        title: string("title").or_else(|| {
            tool.get("annotations")
                .and_then(|a| a.get("title"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        }),
        description: string("description"),
        input_schema: tool
            .get("inputSchema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"})),
        read_only_hint: tool
            .get("annotations")
            .and_then(|a| a.get("readOnlyHint"))
            .and_then(Value::as_bool),
    })
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
