//! Drives a [`Session`] through one turn with plain threads: sends requests, feeds body bytes
//! as they arrive, runs tools, asks for approvals, sleeps for retries, and hands every event to
//! the caller. No decision is made here: the session makes them all.

use crate::client::{Transport, io_error};
use crate::tool::{CancelFlag, ToolContext, Toolbox};
use hrns_core::http::HttpRequest;
use hrns_core::session::{
    Action, Approval, Event, Session, ToolRun, TransportError, TransportErrorKind, TurnError,
    TurnOutcome,
};
use hrns_core::tool::ToolOutput;
use std::collections::VecDeque;
use std::io::Read;
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// How often blocked waits look at the cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// Size of one body read.
const READ_SIZE: usize = 64 * 1024;

/// Runs turns of a [`Session`] against a [`Transport`] (a [`Client`](crate::Client), or a
/// recording or replay of one) with a [`Toolbox`].
///
/// ```no_run
/// use hrns_blocking::{Client, ClientConfig, Runner, ToolContext};
/// use hrns_core::session::{ApprovalPolicy, Event, Provider, Session, SessionConfig};
///
/// let provider = Provider::new("http://127.0.0.1:11434/v1", None);
/// let client = Client::new(provider.clone(), &ClientConfig::default());
/// let workspace = std::env::current_dir()?.canonicalize()?;
/// let toolbox = hrns_blocking::tools::builtin_toolbox(Vec::new());
/// let mut config = SessionConfig::new(provider, "llama3");
/// config.tools = toolbox.specs();
/// config.approval = ApprovalPolicy::Auto;
/// let mut session = Session::new(config);
/// let ctx = ToolContext { workspace, cancel: Default::default(), sandbox: Default::default() };
/// let mut runner = Runner::new(std::sync::Arc::new(client), &toolbox, ctx);
/// runner.run(&mut session, "List the files here", |event| {
///     if let Event::TextDelta { text } = event {
///         print!("{text}");
///     }
/// });
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Runner<'a> {
    transport: Arc<dyn Transport>,
    tools: &'a Toolbox,
    ctx: ToolContext,
    approve: Box<dyn FnMut(&ToolRun) -> Approval + 'a>,
    max_parallel_tools: usize,
}

impl std::fmt::Debug for Runner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("tools", self.tools)
            .field("ctx", &self.ctx)
            .finish_non_exhaustive()
    }
}

/// Work the session asked for that the runner has not done yet.
struct Pending<'e> {
    requests: VecDeque<HttpRequest>,
    runs: VecDeque<ToolRun>,
    asks: VecDeque<ToolRun>,
    outcome: TurnOutcome,
    on_event: &'e mut dyn FnMut(&Event),
}

impl Pending<'_> {
    fn drain(&mut self, session: &mut Session) {
        while let Some(action) = session.poll() {
            match action {
                Action::SendRequest(r) => self.requests.push_back(r),
                Action::RunTool(r) => self.runs.push_back(r),
                Action::AskApproval(r) => self.asks.push_back(r),
                Action::Emit(ev) => {
                    if let Some(outcome) = TurnOutcome::from_event(&ev) {
                        self.outcome = outcome;
                    }
                    (self.on_event)(&ev);
                }
            }
        }
    }
}

/// What the body-reading thread hands to the session thread.
enum Chunk {
    Head(u16, Vec<(String, Vec<u8>)>),
    Data(Vec<u8>),
    End,
    Error(TransportError),
}

impl<'a> Runner<'a> {
    /// A runner sending with `transport` (a [`crate::Client`]), running `tools` in `ctx`.
    /// Calls that need approval are denied until [`Runner::approve_with`] sets a callback.
    pub fn new(transport: Arc<dyn Transport>, tools: &'a Toolbox, ctx: ToolContext) -> Self {
        Runner {
            transport,
            tools,
            ctx,
            approve: Box::new(|_| Approval::Deny {
                reason: Some("nobody is there to approve it".to_owned()),
            }),
            max_parallel_tools: 8,
        }
    }

    /// Sets the callback that answers approval requests.
    pub fn approve_with(mut self, approve: impl FnMut(&ToolRun) -> Approval + 'a) -> Self {
        self.approve = Box::new(approve);
        self
    }

    /// Sets how many tool calls may run at once (default 8).
    pub fn max_parallel_tools(mut self, n: usize) -> Self {
        self.max_parallel_tools = n.max(1);
        self
    }

    /// The cancel flag: set it (from any thread, a Ctrl-C handler for one) to cancel the turn.
    pub fn cancel_flag(&self) -> CancelFlag {
        self.ctx.cancel.clone()
    }

    /// Submits `prompt` and runs the turn to its end, handing each event to `on_event`.
    pub fn run(
        &mut self,
        session: &mut Session,
        prompt: &str,
        on_event: impl FnMut(&Event),
    ) -> TurnOutcome {
        if let Err(e) = session.submit(prompt) {
            return TurnOutcome::Failed(TurnError::Transport {
                kind: TransportErrorKind::Other,
                message: e.to_string(),
            });
        }
        self.drive(session, on_event)
    }

    /// Runs the session's current turn (after `submit`) to its end.
    pub fn drive(
        &mut self,
        session: &mut Session,
        mut on_event: impl FnMut(&Event),
    ) -> TurnOutcome {
        let mut p = Pending {
            requests: VecDeque::new(),
            runs: VecDeque::new(),
            asks: VecDeque::new(),
            outcome: TurnOutcome::Cancelled,
            on_event: &mut on_event,
        };
        loop {
            p.drain(session);
            if session.is_idle() {
                return p.outcome;
            }
            if self.ctx.cancel.is_cancelled() {
                session.cancel();
                continue;
            }
            if let Some(req) = p.requests.pop_front() {
                self.exchange(session, req, &mut p);
            } else if !p.runs.is_empty() {
                let runs: Vec<ToolRun> = p.runs.drain(..).collect();
                self.run_tools(session, runs, &mut p);
            } else if let Some(run) = p.asks.pop_front() {
                let decision = (self.approve)(&run);
                let _ = session.handle_approval(&run.call_id, decision);
            } else if let Some(deadline) = session.poll_timeout() {
                self.sleep_until(deadline);
                session.handle_timeout(Instant::now());
            } else {
                // The session waits for nothing the runner can give; stop rather than hang.
                session.cancel();
            }
        }
    }

    /// Sends one request and feeds its response to the session as it arrives. The body is
    /// read on a helper thread, so a cancel takes effect at once even while a read blocks.
    fn exchange(&mut self, session: &mut Session, req: HttpRequest, p: &mut Pending<'_>) {
        let id = req.id;
        let (tx, rx) = mpsc::sync_channel::<Chunk>(4);
        let transport = Arc::clone(&self.transport);
        thread::spawn(move || fetch(&*transport, &req, &tx));
        loop {
            let chunk = match rx.recv_timeout(CANCEL_POLL) {
                Ok(c) => c,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if self.ctx.cancel.is_cancelled() {
                        return; // dropping `rx` stops the reader at its next chunk
                    }
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => Chunk::Error(TransportError::new(
                    TransportErrorKind::Other,
                    "the HTTP reader stopped unexpectedly",
                )),
            };
            let now = Instant::now();
            let _ = match chunk {
                Chunk::Head(status, headers) => session.handle_response_head(
                    now,
                    id,
                    status,
                    headers.iter().map(|(n, v)| (n.as_str(), v.as_slice())),
                ),
                Chunk::Data(bytes) => session.handle_response_data(now, id, &bytes),
                Chunk::End => session.handle_response_end(now, id),
                Chunk::Error(e) => session.handle_transport_error(now, id, e),
            };
            // Events reach the caller while the stream is still open.
            p.drain(session);
            if !session.wants_response(id) {
                return;
            }
        }
    }

    /// Runs tool calls on their own threads, at most `max_parallel_tools` at once, and hands
    /// each output to the session as it finishes.
    fn run_tools(&mut self, session: &mut Session, runs: Vec<ToolRun>, p: &mut Pending<'_>) {
        let (tx, rx) = mpsc::channel::<(String, ToolOutput)>();
        let mut queue: VecDeque<ToolRun> = runs.into();
        let mut running = 0usize;
        while !queue.is_empty() || running > 0 {
            while running < self.max_parallel_tools {
                let Some(run) = queue.pop_front() else { break };
                let tx = tx.clone();
                let ctx = self.ctx.clone();
                let tool = self.tools.get(&run.name).cloned();
                running += 1;
                thread::spawn(move || {
                    let output = match tool {
                        Some(tool) => tool.run(&run.arguments, &ctx),
                        None => ToolOutput::error(format!(
                            "The tool `{}` is not available in this driver.",
                            run.name
                        )),
                    };
                    let _ = tx.send((run.call_id, output));
                });
            }
            match rx.recv_timeout(CANCEL_POLL) {
                Ok((call_id, output)) => {
                    running -= 1;
                    let _ = session.handle_tool_output(&call_id, output);
                    p.drain(session);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if self.ctx.cancel.is_cancelled() {
                        // The tools see the flag and stop; their late outputs are ignored.
                        return;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    fn sleep_until(&self, deadline: Instant) {
        loop {
            let now = Instant::now();
            if now >= deadline || self.ctx.cancel.is_cancelled() {
                return;
            }
            thread::sleep((deadline - now).min(CANCEL_POLL));
        }
    }
}

/// The body-reading thread: sends the head, then each piece of the body as it arrives.
fn fetch(transport: &dyn Transport, req: &HttpRequest, tx: &mpsc::SyncSender<Chunk>) {
    let mut resp = match transport.send(req) {
        Ok(r) => r,
        Err(e) => {
            let _ = tx.send(Chunk::Error(e));
            return;
        }
    };
    let headers = std::mem::take(&mut resp.headers);
    if tx.send(Chunk::Head(resp.status, headers)).is_err() {
        return;
    }
    let mut buf = vec![0u8; READ_SIZE];
    loop {
        match resp.body.read(&mut buf) {
            Ok(0) => {
                let _ = tx.send(Chunk::End);
                return;
            }
            // Only the bytes read are copied: reads are often one small event each.
            Ok(n) => {
                if tx.send(Chunk::Data(buf[..n].to_vec())).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.send(Chunk::Error(io_error(&e)));
                return;
            }
        }
    }
}
