//! One MCP server connection: the core's [`Client`] behind a mutex, a reader thread feeding it
//! the server's messages, and callers that wait on a condition variable for their answers.
//!
//! Every decision (timeouts, cancellation, what a result says) is the core's; this file moves
//! messages and wakes waiters. Time enters as `Instant::now()` at each input.

use hrns_core::mcp::jsonrpc::{DecodeError, LineDecoder, Message};
use hrns_core::mcp::{Action, CallId, Client, Event, Failure, Phase};
use hrns_core::secrets::Secrets;
use hrns_core::tool::ToolOutput;
use std::collections::HashMap;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::log::ServerLog;
use crate::tool::CancelFlag;

/// How often a waiting caller looks at its cancellation flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Counts changes of the servers' tools, and wakes those waiting for one.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    count: AtomicU64,
    lock: Mutex<()>,
    bumped: Condvar,
}

impl Changes {
    /// The number of changes so far.
    pub(crate) fn count(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    fn bump(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
        // Taken so that a waiter between its check and its wait is not missed.
        drop(self.lock.lock().unwrap_or_else(|p| p.into_inner()));
        self.bumped.notify_all();
    }

    /// Waits until the count is no longer `since`, or `timeout`; returns the count.
    pub(crate) fn wait_past(&self, since: u64, timeout: Duration) -> u64 {
        let deadline = Instant::now() + timeout;
        let mut guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let now = Instant::now();
            if self.count() != since || now >= deadline {
                return self.count();
            }
            guard = self
                .bumped
                .wait_timeout(guard, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

/// Where the client's outgoing messages go.
pub(crate) trait Outgoing: Send {
    /// Sends one message; an error means the connection is gone.
    fn send(&mut self, message: &Message) -> std::io::Result<()>;
    /// Closes the way to the server (stdin of a child), asking it to exit.
    fn close(&mut self);
}

/// The state behind the mutex.
pub(crate) struct State {
    pub(crate) client: Client,
    out: Box<dyn Outgoing>,
    finished: HashMap<CallId, ToolOutput>,
    /// Log lines (server logs, dropped messages), written to the server's log by the owner.
    log: ServerLog,
    /// The server's configured secrets (env and header values), cut out of every line
    /// written to `log`: a server may echo its key in a log message, and the file is read by
    /// people and pasted into bug reports.
    secrets: Secrets,
    /// Counts changes of the server's tools (a new listing, or the server failed), shared by
    /// every server of a session so that a runner learns of any change with one load.
    changes: Arc<Changes>,
}

/// A connection shared by the reader thread, the tools and the owner.
pub(crate) struct Connection {
    state: Mutex<State>,
    changed: Condvar,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").finish_non_exhaustive()
    }
}

impl Connection {
    pub(crate) fn new(
        client: Client,
        out: Box<dyn Outgoing>,
        log: ServerLog,
        secrets: Secrets,
        changes: Arc<Changes>,
    ) -> Arc<Self> {
        Arc::new(Connection {
            state: Mutex::new(State {
                client,
                out,
                finished: HashMap::new(),
                log,
                secrets,
                changes,
            }),
            changed: Condvar::new(),
        })
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `input` on the client, performs what it asks and wakes the waiters.
    pub(crate) fn with_client<R>(&self, input: impl FnOnce(&mut Client, Instant) -> R) -> R {
        let mut state = self.lock();
        let result = input(&mut state.client, Instant::now());
        drain(&mut state);
        drop(state);
        self.changed.notify_all();
        result
    }

    /// Starts the handshake and waits until the server is ready, has failed, or `wait` has
    /// passed (counted from the `initialize` sent). A server not ready by then fails, naming
    /// the request that timed out ([`Client::handle_timeout`]) or else that it was not ready
    /// ([`Client::handle_start_deadline`]). Returns the phase reached.
    pub(crate) fn start(&self, wait: Duration) -> Phase {
        let deadline = self.with_client(|client, now| {
            let _ = client.start(now);
            now + wait
        });
        let mut state = self.lock();
        loop {
            match state.client.phase() {
                Phase::Ready | Phase::Failed(_) => return state.client.phase().clone(),
                Phase::New | Phase::Initializing | Phase::Listing => {}
            }
            let now = Instant::now();
            if now >= deadline {
                state.client.handle_timeout(now);
                state.client.handle_start_deadline(wait);
                drain(&mut state);
                let phase = state.client.phase().clone();
                drop(state);
                self.changed.notify_all();
                return phase;
            }
            state = self.wait(state, deadline);
        }
    }

    /// Calls a tool and waits for its end; cancelled through `cancel`.
    pub(crate) fn call(
        &self,
        name: &str,
        arguments: serde_json::Value,
        cancel: &CancelFlag,
    ) -> ToolOutput {
        let call = match self.with_client(|client, now| client.call_tool(now, name, arguments)) {
            Ok(call) => call,
            Err(e) => return hrns_core::mcp::refusal::call_not_sent(&e),
        };
        let mut state = self.lock();
        loop {
            if let Some(output) = state.finished.remove(&call) {
                return output;
            }
            if cancel.is_cancelled() {
                state.client.cancel_call(call, "the user interrupted");
                drain(&mut state);
                continue;
            }
            let until = Instant::now() + CANCEL_POLL;
            state = self.wait(state, until);
        }
    }

    /// Waits for a change, for `until`, or for the client's next deadline, which it handles.
    fn wait<'a>(&'a self, state: MutexGuard<'a, State>, until: Instant) -> MutexGuard<'a, State> {
        let wake = state.client.poll_timeout().map_or(until, |t| t.min(until));
        let pause = wake.saturating_duration_since(Instant::now());
        let (mut state, _) = self
            .changed
            .wait_timeout(state, pause)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = Instant::now();
        if state.client.poll_timeout().is_some_and(|t| t <= now) {
            state.client.handle_timeout(now);
            drain(&mut state);
            self.changed.notify_all();
        }
        state
    }

    /// Reads the server's output until it ends, feeding the client. Runs on its own thread.
    pub(crate) fn read_from(&self, mut input: impl Read, what_ended: impl FnOnce() -> String) {
        let mut decoder = LineDecoder::new();
        let mut buf = vec![0u8; 64 * 1024];
        let closed = loop {
            let n = match input.read(&mut buf) {
                Ok(0) => break None,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => break Some(format!("reading its output failed: {e}")),
            };
            decoder.feed(&buf[..n]);
            if let Some(reason) = self.take_messages(&mut decoder) {
                break Some(reason);
            }
        };
        decoder.feed_eof();
        let reason = self
            .take_messages(&mut decoder)
            .or(closed)
            .unwrap_or_else(what_ended);
        self.with_client(|client, _| client.handle_closed(reason));
    }

    /// Hands every complete message to the client; `Some(reason)` when the framing failed.
    fn take_messages(&self, decoder: &mut LineDecoder) -> Option<String> {
        let mut state = self.lock();
        let outcome = loop {
            match decoder.poll_message() {
                Ok(Some(message)) => state.client.handle_message(Instant::now(), message),
                Ok(None) => break None,
                Err(DecodeError::Malformed(e)) => state.client.handle_malformed(&e.to_string()),
                Err(e) => break Some(e.to_string()),
            }
            drain(&mut state);
        };
        drain(&mut state);
        drop(state);
        self.changed.notify_all();
        outcome
    }

    /// Closes the way to the server; the reader sees the end soon after.
    pub(crate) fn close(&self) {
        self.lock().out.close();
    }

    /// The failure, if the connection failed.
    pub(crate) fn failure(&self) -> Option<Failure> {
        match self.lock().client.phase() {
            Phase::Failed(failure) => Some(failure.clone()),
            Phase::New | Phase::Initializing | Phase::Listing | Phase::Ready => None,
        }
    }
}

/// Writes one `[hrns]` line to the server's log, its secrets cut out.
fn log(state: &mut State, line: &str) {
    let line = state.secrets.redact(line);
    state.log.line(&format!("[hrns] {line}"));
}

/// Performs the client's actions: sends messages, keeps call results, logs.
fn drain(state: &mut State) {
    loop {
        let mut broken = None;
        while let Some(action) = state.client.poll() {
            match action {
                Action::Send(message) => {
                    if broken.is_none() {
                        if let Err(e) = state.out.send(&message) {
                            broken = Some(format!("writing to it failed: {e}"));
                        }
                    }
                }
                Action::Emit(Event::CallFinished { call, output }) => {
                    state.finished.insert(call, output);
                }
                Action::Emit(Event::Log { level, text }) => {
                    log(state, &format!("server log ({level}): {text}"));
                }
                Action::Emit(Event::Failed(failure)) => {
                    log(state, &format!("the server failed: {failure}"));
                    // Counted before a caller wakes to its call's end: the tools it had are
                    // gone by the time the call's result is handed on.
                    state.changes.bump();
                }
                Action::Emit(Event::ToolsChanged) => {
                    log(state, "the server changed its tools");
                    state.changes.bump();
                }
                Action::Emit(Event::Ready) => {
                    // Ready again after a new session (HTTP 404, then a new handshake and
                    // listing): whoever dropped the tools meanwhile takes them up again.
                    state.changes.bump();
                }
                Action::Emit(Event::Progress { .. }) => {}
                Action::Emit(_) => {}
            }
        }
        match broken {
            Some(reason) => state.client.handle_closed(reason),
            None => return,
        }
    }
}
