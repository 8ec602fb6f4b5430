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
//!   [`Client::handle_timeout`], [`Client::handle_start_deadline`];
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
//! with an error result the model can act on, and so is a call that runs past its total
//! limit ([`Limits::total_timeout`]), which progress does not extend.
//!
//! What a server hands over is bounded by its [`Limits`]: a result's text is cut to
//! `max_result_chars` (head and tail kept, the cut said), and a listing keeps at most
//! `max_tools` tools and `max_tool_bytes` of their definitions ([`Client::tools_left_out`]).
//!
//! A call answered while the tool list is being refreshed is reported
//! ([`Event::CallFinished`]) only after that refresh ([`Event::ToolsChanged`]), or after the
//! refresh failed: a tool that changes the server's tools usually says so just before it
//! answers, and whoever waits for the call then sees the tools as they are now.

mod incoming;
mod listing;

pub use super::config::Limits;
pub use super::error::{ClientError, Failure};
use super::jsonrpc::{Message, RequestId};
pub use super::roots::{Root, file_uri};
use crate::tool::ToolOutput;
use listing::Listing;
pub use listing::{LeftOut, MAX_LIST_PAGES, MAX_TOOLS, McpTool};
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

/// The protocol versions hrns speaks, newest first; the first is offered.
pub const SUPPORTED_VERSIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

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
    /// The server's bounds: the total time of a call, the size of a result, the number and
    /// size of its tools.
    pub limits: Limits,
}

impl ClientConfig {
    /// A configuration with the default timeouts (30 s per request, 10 minutes per call
    /// without progress), the default [`Limits`] and no roots.
    pub fn new(server: impl Into<String>) -> Self {
        ClientConfig {
            server: server.into(),
            client_name: "hrns".into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
            roots: Vec::new(),
            request_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(600),
            limits: Limits::default(),
        }
    }
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
    /// For a call: the end of its total limit, which progress never moves.
    total: Option<Instant>,
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
    /// What the last listing left out against the limits.
    left_out: LeftOut,
    /// Calls answered during a refresh of the tool list, reported when it ends.
    held: Vec<(CallId, ToolOutput)>,
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
            left_out: LeftOut::default(),
            held: Vec::new(),
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

    /// What the last listing of tools left out: tools past [`Limits::max_tools`] or
    /// [`Limits::max_tool_bytes`], and malformed ones. For a warning naming the server.
    pub fn tools_left_out(&self) -> &LeftOut {
        &self.left_out
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
        let total = now + self.config.limits.total_timeout;
        if let Some(pending) = self.pending.get_mut(&call.0) {
            pending.total = Some(total);
            pending.deadline = pending.deadline.min(total);
        }
        Ok(call)
    }

    /// Cancels a call in flight: sends `notifications/cancelled` and ends the call with an
    /// error result now. Does nothing for a call that already ended. A call that was answered
    /// and waits for a refresh of the tool list ends now with its answer.
    pub fn cancel_call(&mut self, call: CallId, reason: &str) {
        if let Some(at) = self.held.iter().position(|(held, _)| *held == call) {
            let (call, output) = self.held.remove(at);
            return self.emit(Event::CallFinished { call, output });
        }
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
        self.release_held();
        let server = self.config.server.clone();
        for (id, pending) in std::mem::take(&mut self.pending) {
            self.forget(id);
            if let Purpose::Call(call) = pending.purpose {
                self.emit(Event::CallFinished {
                    call,
                    output: ToolOutput::error(format!(
                        "The MCP server {server} lost its session during the call, which may or \
                         may not have had an effect; the session is being restarted, so the call \
                         can be tried again."
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

    /// The start-up time (`timeout`) ran out: a client still initialising or listing its
    /// tools for the first time fails with [`Failure::NotReady`]. Call
    /// [`handle_timeout`](Self::handle_timeout) first, so that a request timing out at the
    /// same moment is named instead.
    pub fn handle_start_deadline(&mut self, timeout: Duration) {
        match self.phase {
            Phase::Initializing | Phase::Listing => self.fail(Failure::NotReady { timeout }),
            Phase::New | Phase::Ready | Phase::Failed(_) => {}
        }
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
                    let server = &self.config.server;
                    let text = if pending.total.is_some_and(|total| total <= now) {
                        let secs = self.config.limits.total_timeout.as_secs_f32();
                        let key = super::config::TOTAL_TIMEOUT_KEY;
                        format!(
                            "The MCP server {server} did not finish the call within {secs} s in \
                             all (the limit its {key:?} in mcpServers sets, in milliseconds, \
                             which progress reports do not extend), so it was cancelled. It may \
                             have had an effect anyway."
                        )
                    } else {
                        let secs = self.config.call_timeout.as_secs_f32();
                        let key = super::config::TIMEOUT_KEY;
                        format!(
                            "The MCP server {server} did not finish the call within {secs} s (the \
                             limit its {key:?} in mcpServers sets, in milliseconds), so it was \
                             cancelled. It may have had an effect anyway."
                        )
                    };
                    self.notify(
                        "notifications/cancelled",
                        json!({"requestId": id, "reason": "timed out"}),
                    );
                    self.emit(Event::CallFinished {
                        call,
                        output: ToolOutput::error(text),
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
                total: None,
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

    /// Reports the calls answered during a refresh of the tool list.
    fn release_held(&mut self) {
        for (call, output) in std::mem::take(&mut self.held) {
            self.emit(Event::CallFinished { call, output });
        }
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
        // Answered before the failure: their answers stand.
        self.release_held();
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
}

fn method_of(purpose: Purpose) -> &'static str {
    match purpose {
        Purpose::Initialize => "initialize",
        Purpose::ListTools => "tools/list",
        Purpose::Call(_) => "tools/call",
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
