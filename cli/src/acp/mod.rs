//! `hrns acp`: an Agent Client Protocol (v1) agent on stdin/stdout, on the tokio driver.
//!
//! The protocol's decisions are in [`hrns_core::acp`]; this is the IO around them. One task
//! reads stdin (framing, sorting, answering malformed input), one writes stdout (protocol
//! lines only, each redacted once more as a last net), and each session is a task of its own
//! ([`session`]) owning its conversation, built by [`crate::host::conversation`] like the TUI's.
//! Requests to the client (`session/request_permission`) go through [`Outbound`], whose
//! answers the reader hands back by id.

mod files;
mod prompt;
mod session;

use crate::args::Global;
use crate::setup::{CliError, ConfigFile};
use hrns_core::acp::client_fs::ClientFailure;
use hrns_core::acp::frame::{FrameError, LineDecoder};
use hrns_core::acp::methods::{ClientCall, ClientCapabilities, PROTOCOL_VERSION};
use hrns_core::acp::rpc::{self, Incoming, Outstanding, RpcError, StrayAnswer};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

/// Runs the agent until stdin ends. Returns the exit code.
pub(crate) fn run(global: &Global) -> Result<u8, CliError> {
    // A config that cannot be read is said at once, before any editor waits on us.
    ConfigFile::load(global.config.as_deref())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::failure(format!("cannot start the async runtime: {e}")))?;
    let global = global.clone();
    let code = runtime.block_on(serve(global));
    // Sessions' tools and MCP servers end with the runtime.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    Ok(code)
}

/// Our requests awaiting the client's answers, by id (the correlation is the core's).
type Pending = Arc<Mutex<Outstanding<oneshot::Sender<Result<Value, RpcError>>>>>;

/// The way out to the client: lines for the writer task, and requests awaiting answers.
#[derive(Clone, Debug)]
pub(crate) struct Outbound {
    lines: mpsc::UnboundedSender<String>,
    pending: Pending,
}

impl Outbound {
    fn send(&self, line: String) {
        let _ = self.lines.send(line);
    }

    /// Answers request `id` with `result`.
    pub(crate) fn result(&self, id: &Value, result: Value) {
        self.send(rpc::encode_result(id, result));
    }

    /// Answers request `id` with `error`.
    pub(crate) fn error(&self, id: &Value, error: &RpcError) {
        self.send(rpc::encode_error(id, error));
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: Value) {
        self.send(rpc::encode_notification(method, params));
    }

    /// Sends a request and waits for its answer (an error when the client went away).
    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let (_, rx) = self.start(method, params);
        rx.await
            .unwrap_or_else(|_| Err(RpcError::new(rpc::INTERNAL_ERROR, "the client went away")))
    }

    /// Sends a request and waits at most `limit` for its answer; a late answer is then
    /// ignored as a stray.
    pub(crate) async fn request_within(
        &self,
        method: &str,
        params: Value,
        limit: std::time::Duration,
    ) -> Result<Value, ClientFailure> {
        let (id, rx) = self.start(method, params);
        match tokio::time::timeout(limit, rx).await {
            Ok(Ok(answer)) => answer.map_err(ClientFailure::Refused),
            Ok(Err(_)) => Err(ClientFailure::Gone),
            Err(_) => {
                if let Ok(mut p) = self.pending.lock() {
                    p.forget(id);
                }
                Err(ClientFailure::TimedOut(limit))
            }
        }
    }

    fn start(
        &self,
        method: &str,
        params: Value,
    ) -> (u64, oneshot::Receiver<Result<Value, RpcError>>) {
        let (tx, rx) = oneshot::channel();
        // A poisoned map drops `tx`: the request then fails as if the client went away.
        let id = match self.pending.lock() {
            Ok(mut p) => p.start(tx),
            Err(_) => return (u64::MAX, rx),
        };
        self.send(rpc::encode_request(id, method, params));
        (id, rx)
    }

    /// Hands the client's answer to the request that waits for it.
    fn answered(&self, id: &Value, outcome: Result<Value, RpcError>) -> Result<(), StrayAnswer> {
        let waiting = match self.pending.lock() {
            Ok(mut p) => p.finish(id),
            Err(_) => Err(StrayAnswer { id: id.clone() }),
        };
        let _ = waiting?.send(outcome);
        Ok(())
    }

    /// The client is gone: every request waiting for an answer fails at once.
    fn hang_up(&self) {
        if let Ok(mut p) = self.pending.lock() {
            drop(p.drain());
        }
    }
}

/// What every session shares: the flags, the client's capabilities, the way out.
#[derive(Debug)]
pub(crate) struct Server {
    pub(crate) global: Global,
    pub(crate) out: Outbound,
    pub(crate) client: Mutex<ClientCapabilities>,
    /// The open sessions, by id.
    pub(crate) sessions: Mutex<HashMap<String, mpsc::UnboundedSender<session::Command>>>,
}

/// At most this much of waiting output is gathered into one write of stdout.
const BATCH_BYTES: usize = 1 << 20;

async fn serve(global: Global) -> u8 {
    let (lines_tx, mut lines_rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        let mut batch = String::new();
        while let Some(first) = lines_rx.recv().await {
            // Every line already waiting goes out in one write: tokio's stdout hands each write
            // to a blocking thread, which costs more than a streamed delta's line itself.
            let mut next = Some(first);
            while let Some(line) = next {
                // The mapping redacted already (across deltas); this is the net for the rest.
                batch.push_str(&crate::host::redact::redact(&line));
                batch.push('\n');
                next = if batch.len() < BATCH_BYTES {
                    lines_rx.try_recv().ok()
                } else {
                    None
                };
            }
            if stdout.write_all(batch.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
            batch.clear();
        }
    });
    let server = Arc::new(Server {
        global,
        out: Outbound {
            lines: lines_tx,
            pending: Default::default(),
        },
        client: Mutex::new(ClientCapabilities::default()),
        sessions: Mutex::new(HashMap::new()),
    });
    let mut stdin = tokio::io::stdin();
    let mut decoder = LineDecoder::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match stdin.read(&mut buf).await {
            Ok(0) | Err(_) => 0,
            Ok(n) => n,
        };
        if n == 0 {
            decoder.feed_eof();
        } else {
            decoder.feed(&buf[..n]);
        }
        loop {
            match decoder.poll_line() {
                Ok(Some(line)) => on_line(&server, &line),
                Ok(None) => break,
                Err(e @ FrameError::TooLong { .. }) => {
                    server.out.error(
                        &Value::Null,
                        &RpcError::new(rpc::INVALID_REQUEST, e.to_string()),
                    );
                }
                Err(e @ FrameError::Truncated { .. }) => eprintln!("hrns acp: {e}"),
                Err(e) => eprintln!("hrns acp: {e}"),
            }
        }
        if n == 0 {
            break;
        }
    }
    // The client is gone: requests waiting for it fail (a tool's read says so), sessions end
    // (their logs are closed), then the writer.
    server.out.hang_up();
    let senders: Vec<_> = server
        .sessions
        .lock()
        .map(|mut s| s.drain().map(|(_, tx)| tx).collect())
        .unwrap_or_default();
    for tx in senders {
        let (done, wait) = oneshot::channel();
        if tx
            .send(session::Command::Close { done: Some(done) })
            .is_ok()
        {
            let _ = wait.await;
        }
    }
    drop(server);
    let _ = writer.await;
    0
}

/// Acts on one line from the client.
fn on_line(server: &Arc<Server>, line: &[u8]) {
    match rpc::parse(line) {
        Err(malformed) => server.out.error(&malformed.id, &malformed.error),
        Ok(Incoming::Response { id, outcome }) => {
            if let Err(stray) = server.out.answered(&id, outcome) {
                eprintln!("hrns acp: {stray}");
            }
        }
        Ok(Incoming::Request { id, method, params }) => match ClientCall::decode(&method, params) {
            Ok(call) => on_call(server, Some(id), call),
            Err(e) => server.out.error(&id, &e),
        },
        Ok(Incoming::Notification { method, params }) => {
            match ClientCall::decode(&method, params) {
                Ok(call) => on_call(server, None, call),
                // "The Server MUST NOT reply to a Notification": said on stderr instead.
                Err(e) => eprintln!("hrns acp: notification {method} ignored: {}", e.message),
            }
        }
    }
}

fn on_call(server: &Arc<Server>, id: Option<Value>, call: ClientCall) {
    let Some(id) = id else {
        // Of the calls hrns serves only `session/cancel` is a notification.
        match call {
            ClientCall::Cancel(p) => {
                if let Some(tx) = session_of(server, &p.session_id) {
                    let _ = tx.send(session::Command::Cancel);
                }
            }
            other => eprintln!(
                "hrns acp: {} was sent as a notification and needs an id; ignored",
                call_name(&other)
            ),
        }
        return;
    };
    match call {
        ClientCall::Initialize(p) => {
            if let Ok(mut c) = server.client.lock() {
                *c = p.client_capabilities;
            }
            server.out.result(&id, initialize_result());
        }
        ClientCall::Authenticate => server.out.result(&id, json!({})),
        ClientCall::NewSession(p) => {
            session::open(server, id, session::Open::New(p));
        }
        ClientCall::LoadSession(p) => session::open(server, id, session::Open::Load(p)),
        ClientCall::ResumeSession(p) => session::open(server, id, session::Open::Resume(p)),
        ClientCall::ListSessions(p) => {
            let server = Arc::clone(server);
            tokio::task::spawn_blocking(move || match session::list(&p) {
                Ok(list) => server.out.result(&id, list),
                Err(e) => server.out.error(&id, &e),
            });
        }
        ClientCall::Cancel(p) => {
            // Sent as a request: cancelled all the same, and answered.
            if let Some(tx) = session_of(server, &p.session_id) {
                let _ = tx.send(session::Command::Cancel);
            }
            server.out.result(&id, Value::Null);
        }
        call @ (ClientCall::Prompt(_)
        | ClientCall::SetMode(_)
        | ClientCall::SetConfigOption(_)
        | ClientCall::CloseSession(_)) => {
            let sid = call.session_id().unwrap_or_default().to_owned();
            let Some(tx) = session_of(server, &sid) else {
                server.out.error(&id, &unknown_session(&sid));
                return;
            };
            if let ClientCall::CloseSession(_) = &call {
                if let Ok(mut s) = server.sessions.lock() {
                    s.remove(&sid);
                }
            }
            let command = session::Command::Call {
                id: id.clone(),
                call,
            };
            if tx.send(command).is_err() {
                server.out.error(&id, &unknown_session(&sid));
            }
        }
    }
}

fn call_name(call: &ClientCall) -> &'static str {
    match call {
        ClientCall::Initialize(_) => "initialize",
        ClientCall::Authenticate => "authenticate",
        ClientCall::NewSession(_) => "session/new",
        ClientCall::LoadSession(_) => "session/load",
        ClientCall::ResumeSession(_) => "session/resume",
        ClientCall::ListSessions(_) => "session/list",
        ClientCall::CloseSession(_) => "session/close",
        ClientCall::Prompt(_) => "session/prompt",
        ClientCall::Cancel(_) => "session/cancel",
        ClientCall::SetMode(_) => "session/set_mode",
        ClientCall::SetConfigOption(_) => "session/set_config_option",
    }
}

pub(crate) fn session_of(
    server: &Server,
    id: &str,
) -> Option<mpsc::UnboundedSender<session::Command>> {
    server.sessions.lock().ok()?.get(id).cloned()
}

pub(crate) fn unknown_session(id: &str) -> RpcError {
    RpcError::new(
        rpc::RESOURCE_NOT_FOUND,
        format!(
            "no open session `{id}`; open one with session/new, session/load or session/resume"
        ),
    )
}

fn initialize_result() -> Value {
    json!({
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": true,
            // Images are attached when the session's model takes them (else the prompt says
            // they were left out).
            "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
            "mcpCapabilities": {"http": true, "sse": true},
            "sessionCapabilities": {"list": {}, "resume": {}, "close": {}},
        },
        // The provider and its key come from hrns's config.
        "authMethods": [],
        "agentInfo": {"name": "hrns", "title": "hrns", "version": env!("CARGO_PKG_VERSION")},
    })
}
