//! Performs a [`Session`]'s IO with plain threads: sends its requests and feeds the body bytes
//! back as they arrive, runs its tool calls, stops the calls it aborts, and wakes it at its
//! deadlines. No decision is made here: the session makes them all.
//!
//! The owner of the session keeps it: [`Runner::complete_io`] borrows it for one step and
//! hands back the events of that step, so between steps the owner may call
//! [`Runner::handle_approval`], [`Session::cancel`] or [`Session::usage`] as it likes.

use crate::checkpoint::Checkpointer;
use crate::client::{Transport, io_error};
use crate::inbox::{self, Inbox};
use crate::read_ahead::{self, Chunk, Piece, read_chunks};
use crate::tool::{CancelFlag, ToolContext, Toolbox};
use hrns_core::http::{HttpRequest, RequestId};
use hrns_core::sandbox::SandboxPolicy;
use hrns_core::session::{
    Approval, Confinement, Event, Ledger, Question, Session, SessionError, ToolEnd, ToolRun,
    ToolsChange, ToolsReason, TransportError, TurnOutcome, Wait, Waited, Waiting, Work,
};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

/// Brings a toolbox up to date; returns why when it changed it.
type ToolUpdate<'a> = Box<dyn FnMut(&mut Toolbox) -> Option<ToolsReason> + 'a>;

/// How often blocked waits look at the cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// How many body pieces (or tool outputs) may wait for the session before the reader thread
/// waits: as many as its read loop keeps buffers for.
const READ_AHEAD: usize = read_ahead::DEPTH;

/// Performs the IO of a [`Session`] against a [`Transport`] (a [`Client`](crate::Client), or a
/// recording or replay of one) with a [`Toolbox`].
///
/// The owner drives it: after `submit`, call [`Runner::complete_io`] until the session is
/// idle, handling the events it returns (and answering [`Event::ApprovalRequested`] with
/// [`Runner::handle_approval`]). [`Runner::run`] does exactly that for one turn, answering
/// approvals with a callback.
///
/// ```no_run
/// use hrns_blocking::{Client, ClientConfig, Runner, ToolContext};
/// use hrns_core::session::{Approval, ApprovalPolicy, Event, Provider, Session, SessionConfig};
///
/// let provider = Provider::new("http://127.0.0.1:11434/v1", None);
/// let client = Client::new(provider.clone(), &ClientConfig::default());
/// let workspace = std::env::current_dir()?.canonicalize()?;
/// let toolbox = hrns_blocking::tools::builtin_toolbox(Vec::new());
/// let mut config = SessionConfig::new(provider, "llama3");
/// config.tools = toolbox.specs();
/// config.approval = ApprovalPolicy::Ask;
/// let mut session = Session::new(config);
/// let ctx = ToolContext::new(workspace)?;
/// let mut runner = Runner::new(std::sync::Arc::new(client), &toolbox, ctx);
/// session.submit("List the files here")?;
/// while !session.is_idle() {
///     for event in runner.complete_io(&mut session) {
///         match event {
///             Event::TextDelta { text } => print!("{text}"),
///             // The session is ours between steps: answer, cancel or read usage at will.
///             Event::ApprovalRequested { id, .. } => {
///                 runner.handle_approval(&mut session, &id, Approval::Once)?
///             }
///             _ => {}
///         }
///     }
/// }
/// println!("\n{} tokens", session.usage().prompt + session.usage().completion);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Runner<'a> {
    transport: Arc<dyn Transport>,
    tools: Toolbox,
    /// Brings the toolbox up to date before each input; see [`Runner::update_tools_with`].
    update_tools: Option<ToolUpdate<'a>>,
    ctx: ToolContext,
    approve: Box<dyn FnMut(&Question) -> Approval + 'a>,
    /// The core's bookkeeping: the calls waiting for a slot, the request in flight, the
    /// turn's outcome.
    ledger: Ledger,
    /// Everything the reader, tool, wait and child threads report, in arrival order.
    tx: inbox::Sender<Io>,
    rx: Inbox<Io>,
    /// The request whose body is being read, and the flag that stops its reader.
    exchange: Option<(RequestId, Arc<AtomicBool>)>,
    /// Running calls, each with its own stop flag.
    running: HashMap<String, CancelFlag>,
    /// The work of one step, kept empty between steps (kept for its buffer).
    work: Vec<Work>,
    /// Where the session's checkpoints are taken, if anywhere.
    checkpoints: Option<Arc<Checkpointer>>,
}

impl std::fmt::Debug for Runner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("tools", &self.tools)
            .field("ctx", &self.ctx)
            .field("exchange", &self.exchange.as_ref().map(|(id, _)| id))
            .field("running", &self.running.len())
            .finish_non_exhaustive()
    }
}

/// What [`Runner::drive_batches`] hands a turn to: a front end that shows, prints or saves its
/// events a step at a time, and answers the session's questions.
pub trait TurnFront {
    /// The events of one step of the turn (what one read, one tool output or one deadline
    /// brought), in order. A batch that asks for approval ends with the
    /// [`Event::ApprovalRequested`], or a subagent's inside an [`Event::Child`]
    /// ([`Question::asked_by`]); [`TurnFront::approve`] is called next.
    fn events(&mut self, events: &[Event]);

    /// The answer to the question asked in the event that ended the last batch: about one
    /// of the session's calls, or one of a subagent's ([`Question::agent`] says whose). One
    /// path for both.
    fn approve(&mut self, question: &Question) -> Approval;

    /// Nothing is queued for the session any more: the runner is about to wait for its next
    /// input. A front end that holds output back while more input is already waiting (a fast
    /// stream, read ahead) writes it now, so nothing it shows waits on the network.
    fn idle(&mut self) {}
}

/// [`Runner::drive`]'s front end: a callback per event and the runner's approval callback.
struct Callbacks<'c, F> {
    on_event: F,
    approve: &'c mut dyn FnMut(&Question) -> Approval,
}

impl<F: FnMut(&Event)> TurnFront for Callbacks<'_, F> {
    fn events(&mut self, events: &[Event]) {
        events.iter().for_each(&mut self.on_event);
    }

    fn approve(&mut self, question: &Question) -> Approval {
        (self.approve)(question)
    }
}

/// What a reader or tool thread hands to the runner.
pub(crate) enum Io {
    Head(RequestId, u16, Vec<(String, Vec<u8>)>),
    /// A piece of the body; its buffer goes back to the reader when it has been fed.
    Data(RequestId, Chunk),
    End(RequestId),
    Failed(RequestId, TransportError),
    /// A call ended.
    Tool(ToolRun, ToolEnd),
    /// A wait the session asked for (a snapshot, hooks) came to this.
    Waited(Waited),
    /// A running `task` call's child produced an event ([`crate::ChildLink`]).
    Child(Box<hrns_core::task::ChildEvent>),
}

impl<'a> Runner<'a> {
    /// A runner sending with `transport` (a [`crate::Client`]), running `tools` in `ctx`.
    /// [`Runner::run`] answers approval requests with [`Approval::Unattended`] until
    /// [`Runner::approve_with`] sets a callback.
    pub fn new(transport: Arc<dyn Transport>, tools: &Toolbox, mut ctx: ToolContext) -> Self {
        let (tx, rx) = inbox::inbox(READ_AHEAD);
        let ledger = Ledger::default();
        // A subagent's events (its tokens among them) come back on the runner's channel, and
        // go to the session like any input.
        ctx.children = crate::tool::ChildLink::to(tx.clone());
        Runner {
            transport,
            tools: tools.clone(),
            update_tools: None,
            ctx,
            approve: Box::new(|_| Approval::Unattended),
            ledger,
            tx,
            rx,
            exchange: None,
            running: HashMap::new(),
            work: Vec::new(),
            checkpoints: None,
        }
    }

    /// Sets the callback with which [`Runner::run`] answers approval requests: the session's
    /// own and its subagents' ([`Question`]).
    pub fn approve_with(mut self, approve: impl FnMut(&Question) -> Approval + 'a) -> Self {
        self.approve = Box::new(approve);
        self
    }

    /// Sets how the runner learns that the tools changed while a session runs (an MCP server
    /// stopped, or listed other tools). Before each input it gives the session (a response
    /// piece, a tool output, a deadline), the runner calls `update` with its toolbox; when
    /// `update` changed the toolbox it returns why (for people: a `String`, or a
    /// [`ToolsReason`] that is news even when the offered set stays the same), and the session
    /// gets the new specs ([`Session::handle_tools_changed`]) — so the request that input
    /// starts already offers them.
    pub fn update_tools_with<R: Into<ToolsReason>>(
        mut self,
        mut update: impl FnMut(&mut Toolbox) -> Option<R> + 'a,
    ) -> Self {
        self.update_tools = Some(Box::new(move |toolbox| update(toolbox).map(Into::into)));
        self
    }

    /// Applies a change of the tools now, as the runner does before each input: call it before
    /// [`Session::submit`], so that the first request of a turn offers the tools as they are.
    pub fn update_tools(&mut self, session: &mut Session) {
        let change = self.tools_change();
        self.ledger.handle_tools(session, change);
    }

    /// The change of the tools since the last look, if any.
    fn tools_change(&mut self) -> Option<ToolsChange> {
        let reason = self.update_tools.as_mut()?(&mut self.tools)?;
        Some(ToolsChange {
            tools: self.tools.specs(),
            reason,
        })
    }

    /// Hands the session the owner's answer about a call that waited for approval, after
    /// bringing the tools up to date as before every input: the answer can end the answer's
    /// calls and build the next request at once, and that request offers the tools as they
    /// are when the answer comes, not as they were when the question was asked. Answer
    /// through this rather than [`Session::handle_approval`] when the tools can change
    /// ([`Runner::update_tools_with`]).
    pub fn handle_approval(
        &mut self,
        session: &mut Session,
        call_id: &str,
        approval: Approval,
    ) -> Result<(), SessionError> {
        let change = self.tools_change();
        self.ledger
            .handle_approval(session, Instant::now(), change, call_id, approval)
    }

    /// [`Runner::handle_approval`] for any question, the session's own or a subagent's
    /// ([`Session::handle_answer`]): a subagent's answer goes to the waiting child at the
    /// next step. Fails for a question that is not pending.
    pub fn handle_answer(
        &mut self,
        session: &mut Session,
        question: &Question,
        approval: Approval,
    ) -> Result<(), SessionError> {
        let change = self.tools_change();
        self.ledger
            .handle_answer(session, Instant::now(), change, question, approval)
    }

    /// Takes the session's checkpoints ([`Action::TakeCheckpoint`](hrns_core::session::Action::TakeCheckpoint)) with `checkpointer`. A
    /// session that asks for checkpoints of a runner without one is told they failed.
    pub fn checkpoints(mut self, checkpointer: Arc<Checkpointer>) -> Self {
        self.checkpoints = Some(checkpointer);
        self
    }

    /// Sets how many tool calls may run at once (default 8).
    pub fn max_parallel_tools(mut self, n: usize) -> Self {
        self.ledger.set_max_parallel(n);
        self
    }

    /// The cancel flag: set it (from any thread, a Ctrl-C handler for one) and the next wait
    /// of [`Runner::complete_io`] (within 20 ms) cancels the session.
    pub fn cancel_flag(&self) -> CancelFlag {
        self.ctx.cancel.clone()
    }

    /// Performs the session's pending IO until something happened, feeds it to the session,
    /// and returns the events that came out (the final event of a turn among them).
    ///
    /// Returns at once with the events already queued; blocks otherwise until a response
    /// piece, a tool output or a deadline arrives, or the cancel flag is set. Returns an empty
    /// list when the session is idle or waits only for its owner (an approval).
    pub fn complete_io(&mut self, session: &mut Session) -> Vec<Event> {
        let mut events = Vec::new();
        self.complete_io_into(session, &mut events);
        events
    }

    /// [`Runner::complete_io`] appending the events to `events`: a caller that handles one
    /// batch per read of a fast stream reuses one buffer instead of growing a new one each
    /// time (hundreds of events per read).
    pub fn complete_io_into(&mut self, session: &mut Session, events: &mut Vec<Event>) {
        self.complete_io_until(session, events, &mut || {});
    }

    /// [`Runner::complete_io_into`], calling `idle` whenever it is about to wait with nothing
    /// queued ([`TurnFront::idle`]).
    fn complete_io_until(
        &mut self,
        session: &mut Session,
        events: &mut Vec<Event>,
        idle: &mut dyn FnMut(),
    ) {
        let before = events.len();
        loop {
            self.take_actions(session, events);
            if events.len() > before || session.is_idle() {
                return;
            }
            if self.ctx.cancel.is_cancelled() {
                session.cancel();
                continue;
            }
            let deadline = session.poll_timeout();
            match self.ledger.waiting(session) {
                Waiting::Io => {}
                // The owner answers (or the turn loop cancels: see `drive_batches`).
                Waiting::Idle | Waiting::Owner(_) | Waiting::Stuck => return,
            }
            let wait = deadline.map_or(CANCEL_POLL, |d| {
                d.saturating_duration_since(Instant::now()).min(CANCEL_POLL)
            });
            if self.rx.is_empty() {
                idle();
            }
            match self.rx.recv_timeout(wait) {
                Some(io) => self.feed(session, io),
                None => {
                    if deadline.is_some_and(|d| d <= Instant::now()) {
                        self.update_tools(session);
                        session.handle_timeout(Instant::now());
                    }
                }
            }
        }
    }

    /// After a turn: what the runner's threads handed in since, fed to the session without
    /// waiting, and the events that came out. A cancelled turn does not wait for its tools;
    /// a stopped child ends a moment later with its own final event, which belongs in the
    /// output and the session file, and its tokens still count: call this while waiting for
    /// such children (see [`crate::tools::Running`]). Late outputs of stopped calls are
    /// ignored by the session.
    pub fn take_late(&mut self, session: &mut Session) -> Vec<Event> {
        while let Some(io) = self.rx.try_recv() {
            self.feed(session, io);
        }
        let mut events = Vec::new();
        self.take_actions(session, &mut events);
        events
    }

    /// Submits `prompt` and runs the turn to its end, handing each event to `on_event` and
    /// answering approval requests with the [`Runner::approve_with`] callback. Fails only when
    /// a turn is already running.
    pub fn run(
        &mut self,
        session: &mut Session,
        prompt: &str,
        on_event: impl FnMut(&Event),
    ) -> Result<TurnOutcome, SessionError> {
        self.update_tools(session);
        session.submit(prompt)?;
        Ok(self.drive(session, on_event))
    }

    /// Runs the session's current turn (after `submit`, `submit_message` or `compact`) to its
    /// end, as [`Runner::run`] does.
    pub fn drive(&mut self, session: &mut Session, on_event: impl FnMut(&Event)) -> TurnOutcome {
        // The callback is lent to the turn and put back after it.
        let mut approve = std::mem::replace(&mut self.approve, Box::new(|_| Approval::Unattended));
        let mut front = Callbacks {
            on_event,
            approve: &mut *approve,
        };
        let outcome = self.drive_batches(session, &mut front);
        self.approve = approve;
        outcome
    }

    /// Runs the session's current turn to its end, handing `front` the events of each step
    /// at once (a read of a fast stream brings hundreds: a front end prints them with one
    /// write) and asking it about each call that needs approval. A batch ends at an
    /// [`Event::ApprovalRequested`]; the question is asked right after it, so that what the
    /// front end printed before is out when the user is asked. Returns how the turn ended.
    pub fn drive_batches(
        &mut self,
        session: &mut Session,
        front: &mut impl TurnFront,
    ) -> TurnOutcome {
        self.ledger.forget_outcome();
        let mut events = Vec::new();
        loop {
            // What the session waits for is the core's to say: a question asked before this
            // loop started is asked again, and a session nothing can move on is cancelled.
            match self.ledger.waiting(session) {
                Waiting::Idle => break,
                Waiting::Io => {}
                Waiting::Owner(run) => {
                    let question = Question::Call(run);
                    let decision = front.approve(&question);
                    self.handle_answer(session, &question, decision)
                        .expect("the session asked about this call");
                }
                Waiting::Stuck => session.cancel(),
            }
            events.clear();
            self.complete_io_until(session, &mut events, &mut || front.idle());
            let mut rest = &events[..];
            while !rest.is_empty() {
                let end = rest
                    .iter()
                    .position(Question::asked_by)
                    .map_or(rest.len(), |i| i + 1);
                let (batch, after) = rest.split_at(end);
                rest = after;
                front.events(batch);
                // Not asked any more (cancelled meanwhile): nothing to answer.
                let Some(question) = batch.last().and_then(|e| Question::pending_in(session, e))
                else {
                    continue;
                };
                let decision = front.approve(&question);
                self.handle_answer(session, &question, decision)
                    .expect("the session asked this question");
            }
        }
        self.ledger.outcome().clone()
    }

    /// Takes the session's decisions through the ledger: starts the work it hands out,
    /// appends the events to `events` (all at once: a read of a fast stream brings hundreds).
    fn take_actions(&mut self, session: &mut Session, events: &mut Vec<Event>) {
        let mut work = std::mem::take(&mut self.work);
        self.ledger.step(session, events, &mut work);
        for w in work.drain(..) {
            match w {
                Work::Send(req) => self.send(req),
                Work::Close(id) => self.close(id),
                Work::Start(run) => self.start_tool(run),
                Work::Stop { call_id } => {
                    if let Some(flag) = self.running.remove(&call_id) {
                        flag.cancel();
                    }
                }
                Work::Wait(wait) => self.carry_out(session, wait),
                Work::AnswerChild {
                    parent_call_id,
                    call_id,
                    approval,
                } => self.ctx.children.answer(&parent_call_id, call_id, approval),
            }
        }
        self.work = work;
    }

    fn feed(&mut self, session: &mut Session, io: Io) {
        self.update_tools(session);
        let now = Instant::now();
        let fed = match io {
            // The wall time lets the session read a `Retry-After` date.
            Io::Head(id, status, headers) => session.handle_response_head_at(
                now,
                SystemTime::now(),
                id,
                status,
                headers.iter().map(|(n, v)| (n.as_str(), v.as_slice())),
            ),
            Io::Data(id, chunk) => session.handle_response_data(now, id, chunk.bytes()),
            Io::End(id) => {
                self.ledger.response_ended(id);
                session.handle_response_end(now, id)
            }
            Io::Failed(id, e) => {
                self.ledger.response_ended(id);
                session.handle_transport_error(now, id, e)
            }
            Io::Tool(run, end) => {
                self.running.remove(&run.call_id);
                self.ledger.tool_ended(session, now, &run, end)
            }
            Io::Waited(waited) => self.ledger.waited(session, now, waited),
            Io::Child(child) => {
                self.ledger.child_event(session, *child);
                Ok(())
            }
        };
        fed.expect("the runner feeds only what the session issued, each head first");
    }

    /// Carries out a wait the session decided on, every kind in this one place, on a thread
    /// of its own so that a cancel is seen meanwhile (and even when it is quick: the channel
    /// may be full, and only this thread empties it).
    fn carry_out(&mut self, session: &Session, wait: Wait) {
        let work: Box<dyn FnOnce() -> Waited + Send> = match wait {
            Wait::Snapshot(due) => {
                let checkpointer = self.checkpoints.clone();
                Box::new(move || Waited::Snapshot {
                    id: due.id,
                    outcome: crate::checkpoint::take_checkpoint(checkpointer.as_deref(), &due),
                })
            }
            Wait::Hooks(due) => {
                let env = crate::hooks::HookEnv::new(
                    &self.ctx.workspace,
                    &self.ctx.sandbox.env,
                    session.secrets(),
                );
                // `run_hooks` turns a panic of any hook's thread into a result.
                Box::new(move || Waited::Hooks {
                    id: due.id,
                    runs: crate::hooks::run_hooks(&due, &env),
                })
            }
        };
        let tx = self.tx.clone();
        thread::spawn(move || tx.send(Io::Waited(work())).ok());
    }

    /// Sends one request; its body is read on a helper thread, so a cancel takes effect at
    /// once even while a read blocks.
    fn send(&mut self, req: HttpRequest) {
        let stop = Arc::new(AtomicBool::new(false));
        self.exchange = Some((req.id, Arc::clone(&stop)));
        let transport = Arc::clone(&self.transport);
        let tx = self.tx.clone();
        thread::spawn(move || fetch(&*transport, &req, &tx, &stop));
    }

    /// Stops reading the response of `id` (the reader stops at its next piece).
    fn close(&mut self, id: RequestId) {
        if let Some((_, stop)) = self.exchange.take_if(|(x, _)| *x == id) {
            stop.store(true, Ordering::SeqCst);
        }
    }

    /// Starts a call on its own thread; the ledger keeps to the parallel cap. A tool that
    /// panics is reported as crashed, so the turn goes on.
    fn start_tool(&mut self, run: ToolRun) {
        let mut ctx = self.ctx.clone();
        ctx.cancel = CancelFlag::new();
        match run.confinement {
            Confinement::Sandboxed => {}
            // The user let this command out of the sandbox, once.
            Confinement::Unsandboxed => ctx.sandbox.policy = SandboxPolicy::unconfined(),
        }
        self.running.insert(run.call_id.clone(), ctx.cancel.clone());
        let tool = self.tools.get(&run.name).cloned();
        let tx = self.tx.clone();
        thread::spawn(move || {
            let end = match tool {
                Some(tool) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    tool.run_call(&run.call_id, &run.arguments, &ctx)
                }))
                .map_or(ToolEnd::Crashed, ToolEnd::Output),
                None => ToolEnd::Unavailable,
            };
            // A dropped runner wants no output.
            tx.send(Io::Tool(run, end)).ok();
        });
    }
}

impl Drop for Runner<'_> {
    fn drop(&mut self) {
        if let Some((_, stop)) = &self.exchange {
            stop.store(true, Ordering::SeqCst);
        }
        for flag in self.running.values() {
            flag.cancel();
        }
    }
}

/// The body-reading thread: sends the head, then each piece of the body as it arrives, until
/// the end or until `stop` is set.
fn fetch(transport: &dyn Transport, req: &HttpRequest, tx: &inbox::Sender<Io>, stop: &AtomicBool) {
    let id = req.id;
    let send = |io: Io| !stop.load(Ordering::SeqCst) && tx.send(io).is_ok();
    let mut resp = match transport.send(req) {
        Ok(r) => r,
        Err(e) => {
            send(Io::Failed(id, e));
            return;
        }
    };
    let headers = std::mem::take(&mut resp.headers);
    if !send(Io::Head(id, resp.status, headers)) {
        return;
    }
    // The client's read loop: buffers are reused, not copied per read.
    read_chunks(&mut resp.body, |piece| {
        send(match piece {
            Piece::Data(chunk) => Io::Data(id, chunk),
            Piece::End => Io::End(id),
            Piece::Failed(e) => Io::Failed(id, io_error(&e)),
        })
    });
}
