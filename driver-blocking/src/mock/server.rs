//! The listener, one thread per connection, routing, and shutdown.
//!
//! Shutdown ([`Server::stop`], run on drop): raise the stop flag, wake every delayed reply,
//! shut down every open socket (which ends blocked reads and writes), wake each accept thread
//! with a connection to itself, then wait a bounded time for the threads to finish. A thread
//! that does not finish in time is left detached rather than waited for.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, mpsc};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::json;

use super::RecordedRequest;
use super::http::{After, Exchange, Reader, Request, RequestError, write_reply};
use super::script::Reply;

/// Threads accepting connections: more than one keeps the listen backlog (128 in std)
/// from overflowing when a benchmark opens a thousand connections at once.
const ACCEPT_THREADS: usize = 4;
/// How long [`Server::stop`] waits for the accept loop and for the connections.
const STOP_WAIT: Duration = Duration::from_secs(2);
/// Stack size of connection threads (a benchmark may open a thousand).
const CONNECTION_STACK: usize = 256 * 1024;
/// After rejecting a request, how long and how much of the rest to read before closing, so
/// the client sees the error response instead of a reset.
const LINGER_TIME: Duration = Duration::from_millis(250);
const LINGER_BYTES: usize = 1 << 20;

/// The script and the record; behind [`Shared::state`].
#[derive(Debug)]
pub(super) struct State {
    pub(super) script: VecDeque<Reply>,
    /// Served when the script is empty.
    pub(super) repeat: Option<Reply>,
    pub(super) models: Vec<String>,
    pub(super) requests: Vec<RecordedRequest>,
    /// The `GET /models` requests, kept apart from `requests`.
    pub(super) model_requests: Vec<RecordedRequest>,
    /// Requests parsed so far, recorded or not.
    pub(super) seen: usize,
    pub(super) recording: bool,
    /// Consulted first for every request; `None` from it falls back to the script.
    pub(super) responder: Option<ResponderSlot>,
    /// Answers every summary request of a compaction, wherever it comes; see
    /// [`super::MockProvider::with_summary_reply`].
    pub(super) summary: Option<Reply>,
    /// The context window: listed in `/models`, and enforced on chat requests.
    pub(super) window: Option<u64>,
}

/// The responder, shown in `Debug` only as present.
#[derive(Clone)]
pub(super) struct ResponderSlot(pub(super) super::Responder);

impl std::fmt::Debug for ResponderSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Responder")
    }
}

impl State {
    pub(super) fn new(script: VecDeque<Reply>, repeat: Option<Reply>) -> Self {
        Self {
            script,
            repeat,
            models: vec![super::chunk::MODEL.to_owned()],
            requests: Vec::new(),
            model_requests: Vec::new(),
            seen: 0,
            recording: true,
            responder: None,
            summary: None,
            window: None,
        }
    }
}

/// What the provider handle and the server threads share.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    /// Notified after each request is counted.
    requests_changed: Condvar,
    stopping: AtomicBool,
    /// Delayed replies sleep on `sleep_changed`; notified once, when stopping.
    sleep_lock: Mutex<()>,
    sleep_changed: Condvar,
    /// A clone of every open connection's socket, to shut them down when stopping.
    connections: Mutex<HashMap<u64, TcpStream>>,
    connections_changed: Condvar,
    next_connection: AtomicU64,
}

/// Locks `mutex`, ignoring poisoning: the data stays consistent between statements, and a
/// panicking test thread must not take the provider down with it.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Sleeps for `duration` (`Duration::MAX`: until stopped); `false` when stopping.
    fn sleep(&self, duration: Duration) -> bool {
        if duration.is_zero() {
            return !self.stopping();
        }
        let deadline = Instant::now().checked_add(duration);
        let mut guard = lock(&self.sleep_lock);
        loop {
            if self.stopping() {
                return false;
            }
            guard = match deadline {
                None => self
                    .sleep_changed
                    .wait(guard)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return true;
                    }
                    self.sleep_changed
                        .wait_timeout(guard, deadline - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
    }

    /// Waits until `n` requests were received; `false` on timeout.
    pub(super) fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        let deadline = Instant::now().checked_add(timeout);
        let mut state = lock(&self.state);
        while state.seen < n {
            let left = match deadline {
                None => Duration::MAX,
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
            };
            if left.is_zero() {
                return false;
            }
            state = self
                .requests_changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    /// Records `request` and chooses its reply.
    fn route(&self, request: Request) -> Reply {
        let path = request.target.split('?').next().unwrap_or_default();
        let chat = matches!(path, "/v1/chat/completions" | "/chat/completions");
        let models = matches!(path, "/v1/models" | "/models");
        let method = request.method.as_str();
        let recorded = RecordedRequest {
            method: request.method.clone(),
            path: request.target.clone(),
            headers: request.headers.clone(),
            body: request.body.clone(),
        };
        let responder = lock(&self.state).responder.clone();
        let answered = responder.and_then(|r| (r.0)(&recorded));
        let mut state = lock(&self.state);
        let tokens = super::context::request_tokens(&request.body);
        let reply = if let Some(reply) = answered {
            reply
        } else if chat && method == "POST" && state.window.is_some_and(|w| tokens > w) {
            super::context::overflow_reply(state.window.unwrap_or(0), tokens)
        } else if chat && method == "POST" && super::context::is_summary_request(&request.body) {
            match state.summary.clone() {
                Some(reply) => reply,
                None => match state.script.pop_front().or_else(|| state.repeat.clone()) {
                    Some(reply) => reply,
                    None => mock_error(500, "script exhausted"),
                },
            }
        } else if chat && method == "POST" {
            match state.script.pop_front().or_else(|| state.repeat.clone()) {
                Some(reply) => reply,
                None => mock_error(500, "script exhausted"),
            }
        } else if models && (method == "GET" || method == "HEAD") {
            let data: Vec<_> = state
                .models
                .iter()
                .map(|id| match state.window {
                    Some(w) => json!({"id": id, "object": "model", "owned_by": "mock", "context_length": w}),
                    None => json!({"id": id, "object": "model", "owned_by": "mock"}),
                })
                .collect();
            Reply::json(200, json!({"object": "list", "data": data}))
        } else if chat || models {
            let allow = if chat { "POST" } else { "GET, HEAD" };
            mock_error(405, "method not allowed").header("allow", allow)
        } else {
            mock_error(404, &format!("no route for {method} {path}"))
        };
        state.seen += 1;
        let lookup = models && (method == "GET" || method == "HEAD");
        if state.recording {
            // Clients may look the model list up before chatting (hrns does, for the context
            // window); kept apart so `requests()[n]` stays the n-th conversation request.
            if lookup {
                state.model_requests.push(recorded);
            } else {
                state.requests.push(recorded);
            }
        }
        drop(state);
        self.requests_changed.notify_all();
        reply
    }

    /// Registers a connection's socket for shutdown; `None` when stopping (or the socket
    /// cannot be cloned), and then the connection must not be served.
    fn register(&self, stream: &TcpStream) -> Option<u64> {
        let clone = stream.try_clone().ok()?;
        let mut connections = lock(&self.connections);
        if self.stopping() {
            return None;
        }
        let id = self.next_connection.fetch_add(1, Ordering::Relaxed);
        connections.insert(id, clone);
        Some(id)
    }

    /// How many connections were accepted and served so far.
    pub(super) fn connections_accepted(&self) -> u64 {
        self.next_connection.load(Ordering::Relaxed)
    }

    fn unregister(&self, id: u64) {
        lock(&self.connections).remove(&id);
        self.connections_changed.notify_all();
    }
}

/// An error the mock itself answers with: `{"error":{"message":"mock provider: ..","type":"mock"}}`.
fn mock_error(status: u16, message: &str) -> Reply {
    let message = format!("mock provider: {message}");
    Reply::json(
        status,
        json!({"error": {"message": message, "type": "mock"}}),
    )
}

/// A running server; stopped on drop.
pub(super) struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    /// How many of `threads` run [`accept_loop`].
    accepting: usize,
    /// The accept threads and the spawner.
    threads: Vec<JoinHandle<()>>,
}

impl Server {
    /// Binds 127.0.0.1 on an ephemeral port and starts the accept threads.
    pub(super) fn start(state: State) -> io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            requests_changed: Condvar::new(),
            stopping: AtomicBool::new(false),
            sleep_lock: Mutex::new(()),
            sleep_changed: Condvar::new(),
            connections: Mutex::new(HashMap::new()),
            connections_changed: Condvar::new(),
            next_connection: AtomicU64::new(0),
        });
        // On an early return the server drops and stops the threads started so far.
        let mut server = Self {
            addr,
            shared,
            accepting: 0,
            threads: Vec::new(),
        };
        let (queue, accepted) = mpsc::channel();
        let shared = Arc::clone(&server.shared);
        server.threads.push(
            thread::Builder::new()
                .name(format!("hrns-mock-spawn-{}", addr.port()))
                .spawn(move || spawn_loop(&accepted, &shared))?,
        );
        for _ in 0..ACCEPT_THREADS {
            let listener = listener.try_clone()?;
            let queue = queue.clone();
            let shared = Arc::clone(&server.shared);
            server.threads.push(
                thread::Builder::new()
                    .name(format!("hrns-mock-accept-{}", addr.port()))
                    .spawn(move || accept_loop(&listener, &shared, &queue))?,
            );
            server.accepting += 1;
        }
        Ok(server)
    }

    pub(super) fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub(super) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// Stops serving; returns within about twice [`STOP_WAIT`] whatever the connections do.
    fn stop(&mut self) {
        let shared = &*self.shared;
        shared.stopping.store(true, Ordering::SeqCst);
        {
            let _guard = lock(&shared.sleep_lock);
            shared.sleep_changed.notify_all();
        }
        for stream in lock(&shared.connections).values() {
            let _ = stream.shutdown(Shutdown::Both);
        }
        // Each accept thread ends at the next connection it accepts: give each one. When
        // they are gone, the spawner's queue closes and it ends too.
        for _ in 0..self.accepting {
            let _ = TcpStream::connect_timeout(&self.addr, STOP_WAIT);
        }
        let deadline = Instant::now() + STOP_WAIT;
        while self.threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(1));
        }
        for thread in self.threads.drain(..) {
            // A thread still running is left detached.
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
        let deadline = Instant::now() + STOP_WAIT;
        let mut connections = lock(&shared.connections);
        while !connections.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            connections = shared
                .connections_changed
                .wait_timeout(connections, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Accepts connections and queues them for the spawner; does nothing else, so that the
/// listen backlog (128 in std) drains fast when many clients connect at once.
fn accept_loop(listener: &TcpListener, shared: &Shared, queue: &mpsc::Sender<TcpStream>) {
    for stream in listener.incoming() {
        if shared.stopping() {
            return;
        }
        match stream {
            Ok(stream) => {
                if queue.send(stream).is_err() {
                    return;
                }
            }
            // Out of descriptors or similar: back off instead of spinning.
            Err(_) => thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// Starts a thread for each accepted connection, until the accept threads are gone.
fn spawn_loop(queue: &mpsc::Receiver<TcpStream>, shared: &Arc<Shared>) {
    for stream in queue {
        spawn_connection(stream, shared);
    }
}

fn spawn_connection(stream: TcpStream, shared: &Arc<Shared>) {
    let Some(id) = shared.register(&stream) else {
        return;
    };
    let registration = Registration {
        shared: Arc::clone(shared),
        id,
    };
    let _ = thread::Builder::new()
        .name("hrns-mock-connection".to_owned())
        .stack_size(CONNECTION_STACK)
        .spawn(move || {
            serve_connection(stream, &registration.shared);
            drop(registration);
        });
    // If spawning failed, the closure was dropped: the stream closed and unregistered.
}

/// Unregisters a connection when dropped, even if serving it panicked.
struct Registration {
    shared: Arc<Shared>,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.shared.unregister(self.id);
    }
}

/// Serves requests on one connection until it closes, fails, or the provider stops.
fn serve_connection(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let mut reader = Reader::new(stream);
    let sleep = |duration| shared.sleep(duration);
    while !shared.stopping() {
        let (reply, exchange) = match reader.read_request() {
            Ok(Some(request)) => {
                let exchange = Exchange {
                    head_only: request.method == "HEAD",
                    http10: request.http10,
                    keep_alive: request.keep_alive,
                };
                (shared.route(request), exchange)
            }
            Ok(None) | Err(RequestError::Gone) => return,
            Err(RequestError::Reject(status, message)) => {
                let exchange = Exchange {
                    head_only: false,
                    http10: false,
                    keep_alive: false,
                };
                let mut out = reader.get_ref();
                if write_reply(&mut out, &mock_error(status, message), exchange, sleep).is_ok() {
                    linger_close(out);
                }
                return;
            }
        };
        let mut out = reader.get_ref();
        match write_reply(&mut out, &reply, exchange, sleep) {
            Ok(After::KeepAlive) => {}
            Ok(After::Close) => {
                let _ = out.shutdown(Shutdown::Write);
                return;
            }
            Ok(After::Abort) | Err(_) => {
                let _ = out.shutdown(Shutdown::Both);
                return;
            }
        }
    }
}

/// Half-closes and reads away what the client still sends (bounded), so that closing does
/// not reset the connection before the client read the error response.
fn linger_close(mut stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(LINGER_TIME));
    let deadline = Instant::now() + LINGER_TIME;
    let mut sink = [0u8; 8 * 1024];
    let mut left = LINGER_BYTES;
    while left > 0 && Instant::now() < deadline {
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => return,
            Ok(n) => left = left.saturating_sub(n),
        }
    }
}
