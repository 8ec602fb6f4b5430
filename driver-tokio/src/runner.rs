//! Performs a [`Session`]'s IO on tokio: sends its requests and feeds body frames back as they
//! arrive, runs its tool calls as concurrent tasks, stops the calls it aborts, and wakes it at
//! its deadlines. No decision is made here: the session makes them all.
//!
//! The owner of the session keeps it: [`Runner::complete_io`] borrows it for one step and
//! hands back the events of that step, so between steps (or in another branch of a
//! `select!`) the owner may call [`Runner::handle_approval`], [`Session::cancel`] or
//! [`Session::usage`] as it likes.

use crate::client::{Client, IncomingResponse};
use crate::tool::{ToolContext, Toolbox};
use hrns_blocking::Checkpointer;
use hrns_core::http::{HttpRequest, RequestId};
use hrns_core::sandbox::SandboxPolicy;
use hrns_core::session::{
    Approval, Confinement, Event, Ledger, Question, Session, SessionError, ToolEnd, ToolRun,
    ToolsChange, ToolsReason, TransportError, TurnOutcome, Wait, Waited, Waiting, Work,
};
use hrns_core::task::ChildEvent;
use hyper::body::Bytes;
use std::collections::HashMap;
use std::fmt;
use std::future::{Future, pending, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::mpsc;
use tokio::task::{AbortHandle, Id, JoinSet};
use tokio_util::sync::CancellationToken;

/// The future an approval callback returns.
pub type ApprovalFuture = Pin<Box<dyn Future<Output = Approval> + Send>>;

type Approver = Box<dyn FnMut(Question) -> ApprovalFuture + Send>;

/// Brings a toolbox up to date; returns why when it changed it.
type ToolUpdate = Box<dyn FnMut(&mut Toolbox) -> Option<ToolsReason> + Send>;

/// How long a stopped tool gets to end on its own (a command is killed and reaped) before its
/// task is dropped.
const CANCEL_GRACE: Duration = Duration::from_millis(500);

/// Performs the IO of a [`Session`] with a [`Client`] and a [`Toolbox`].
///
/// The owner drives it: after `submit`, await [`Runner::complete_io`] until the session is
/// idle, handling the events it returns. The future of `complete_io` may be dropped at any
/// point (it is one branch of a `select!` in a UI) without losing anything: the requests and
/// tools in flight live in the runner. [`Runner::run`] drives one turn with callbacks.
///
/// Cancelling: call [`Session::cancel`] (the next `complete_io` stops the request and the
/// tools), or cancel the [`cancel token`](Runner::cancel_token) from anywhere.
pub struct Runner {
    client: Client,
    tools: Toolbox,
    /// Brings the toolbox up to date before each input; see [`Runner::update_tools_with`].
    update_tools: Option<ToolUpdate>,
    ctx: ToolContext,
    approve: Approver,
    /// The core's bookkeeping: the calls waiting for a slot, the request in flight, the
    /// turn's outcome.
    ledger: Ledger,
    exchange: Option<Exchange>,
    running: Tools,
    /// The work of one [`Runner::dispatch`], kept empty between calls so its buffer is
    /// allocated once, not on every frame of a stream.
    work: Vec<Work>,
    /// Where the session's checkpoints are taken, if anywhere.
    checkpoints: Option<Arc<Checkpointer>>,
    /// The waits being carried out (snapshots, batches of hooks), each on a blocking thread.
    waits: JoinSet<Waited>,
    /// What running `task` calls' children produced ([`crate::ChildLink`]); the runner holds
    /// a sender too (in its tools' context), so it never closes.
    children: mpsc::UnboundedReceiver<ChildEvent>,
}

impl fmt::Debug for Runner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runner")
            .field("client", &self.client)
            .field("tools", &self.tools)
            .field("ctx", &self.ctx)
            .field("exchange", &self.exchange.as_ref().map(|x| x.id))
            .field("running", &self.running.calls.len())
            .finish_non_exhaustive()
    }
}

impl Runner {
    /// A runner sending with `client`, running `tools` in `ctx`. [`Runner::run`] answers
    /// approval requests with [`Approval::Unattended`] until [`Runner::approve_with`] sets a
    /// callback. At most 8 tool calls run at once.
    pub fn new(client: Client, tools: Toolbox, mut ctx: ToolContext) -> Self {
        let ledger = Ledger::default();
        // A subagent's events (its tokens among them) come back on the runner's channel, and
        // go to the session like any input.
        let (tx, children) = mpsc::unbounded_channel();
        ctx.children = crate::tool::ChildLink::to(tx);
        Runner {
            client,
            tools,
            update_tools: None,
            ctx,
            approve: Box::new(|_| Box::pin(async { Approval::Unattended })),
            ledger,
            exchange: None,
            running: Tools::default(),
            work: Vec::new(),
            checkpoints: None,
            waits: JoinSet::new(),
            children,
        }
    }

    /// Sets the async callback with which [`Runner::run`] answers approval requests. An owner
    /// that drives [`Runner::complete_io`] itself answers with [`Runner::handle_approval`]
    /// instead, whenever it likes.
    pub fn approve_with<F, Fut>(mut self, mut approve: F) -> Self
    where
        F: FnMut(Question) -> Fut + Send + 'static,
        Fut: Future<Output = Approval> + Send + 'static,
    {
        self.approve = Box::new(move |run| Box::pin(approve(run)));
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
        mut update: impl FnMut(&mut Toolbox) -> Option<R> + Send + 'static,
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
    /// ([`Session::handle_answer`]): the one path a front end answers on. A subagent's answer
    /// goes to the waiting child at the next [`Runner::dispatch`]. Fails for a question that
    /// is not pending (late, or never asked).
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

    /// Takes the session's checkpoints ([`Action::TakeCheckpoint`](hrns_core::session::Action::TakeCheckpoint)) with `checkpointer`, on
    /// blocking threads. A session that asks for checkpoints of a runner without one is told
    /// they failed.
    pub fn checkpoints(mut self, checkpointer: Arc<Checkpointer>) -> Self {
        self.checkpoints = Some(checkpointer);
        self
    }

    /// Sets how many tool calls may run at once (default 8).
    pub fn max_parallel_tools(mut self, n: usize) -> Self {
        self.ledger.set_max_parallel(n);
        self
    }

    /// The token that cancels the running turn, from any task or thread. A cancelled token
    /// stays cancelled, so after a cancel the runner takes a fresh one: ask for the token
    /// again before the next turn.
    pub fn cancel_token(&self) -> CancellationToken {
        self.ctx.cancel.clone()
    }

    /// Performs the session's pending IO until something happened, feeds it to the session,
    /// and returns the events that came out (the final event of a turn among them).
    ///
    /// Resolves at once with the events already queued, and with an empty list when the
    /// session is idle. While the session waits only for its owner (an approval) it stays
    /// pending — drop it (as a `select!` does) to give the session its input. Cancel-safe.
    pub async fn complete_io(&mut self, session: &mut Session) -> Vec<Event> {
        loop {
            let events = self.dispatch(session);
            if !events.is_empty() || session.is_idle() {
                return events;
            }
            let deadline = session.poll_timeout();
            let cancel = self.ctx.cancel.clone();
            tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    session.cancel();
                    self.ctx.cancel = CancellationToken::new();
                }
                step = next_step(&mut self.exchange), if self.exchange.is_some() => {
                    self.update_tools(session);
                    self.feed_step(session, step);
                }
                // Before the calls' ends: a child's events, sent before its call ended,
                // reach the session first (its tokens count before its result).
                Some(child) = self.children.recv() => {
                    self.update_tools(session);
                    self.ledger.child_event(session, child);
                }
                Some((run, end)) = self.running.next(), if !self.running.is_empty() => {
                    self.update_tools(session);
                    self.ledger
                        .tool_ended(session, Instant::now(), &run, end)
                        .expect("the session issued this call");
                }
                Some(joined) = self.waits.join_next(), if !self.waits.is_empty() => {
                    // `carry_out` turns a panic into a result, so every wait comes back.
                    if let Ok(waited) = joined {
                        self.update_tools(session);
                        self.ledger
                            .waited(session, Instant::now(), waited)
                            .expect("the session asked for this wait");
                    }
                }
                () = sleep_until(deadline), if deadline.is_some() => {
                    self.update_tools(session);
                    session.handle_timeout(Instant::now());
                }
            }
        }
    }

    /// Submits `prompt` and runs the turn to its end, handing each event to `on_event` as it
    /// happens and answering approval requests with the [`Runner::approve_with`] callback.
    /// Fails only when a turn is already running.
    ///
    /// The future is `Send`. Dropping it mid-turn cancels the turn: the final events still
    /// reach `on_event`, and the running tools are stopped.
    pub async fn run(
        &mut self,
        session: &mut Session,
        prompt: &str,
        on_event: impl FnMut(&Event) + Send,
    ) -> Result<TurnOutcome, SessionError> {
        self.update_tools(session);
        session.submit(prompt)?;
        Ok(self.drive(session, on_event).await)
    }

    /// Runs the session's current turn (after `submit`, `submit_message` or `compact`) to its
    /// end, as [`Runner::run`] does.
    pub async fn drive(
        &mut self,
        session: &mut Session,
        on_event: impl FnMut(&Event) + Send,
    ) -> TurnOutcome {
        self.ledger.forget_outcome();
        let mut turn = Turn {
            runner: self,
            session,
            on_event,
        };
        loop {
            // What the session waits for is the core's to say: a question asked before this
            // loop started is asked again, and a session nothing can move on is cancelled.
            match turn.runner.ledger.waiting(turn.session) {
                Waiting::Idle => break,
                Waiting::Io => {}
                Waiting::Owner(run) => turn.ask(Question::Call(run)).await,
                Waiting::Stuck => turn.session.cancel(),
            }
            let events = turn.runner.complete_io(turn.session).await;
            for event in events {
                turn.emit(&event);
                // Not asked any more (answered or cancelled meanwhile): nothing to answer.
                if let Some(question) = Question::pending_in(turn.session, &event) {
                    turn.ask(question).await;
                }
            }
        }
        turn.runner.settle().await;
        // Stopped children ended meanwhile: their last events (and tokens) still count.
        for event in turn.runner.take_late(turn.session) {
            turn.emit(&event);
        }
        turn.runner.ledger.outcome().clone()
    }

    /// After a turn: the children's events handed in since, fed to the session without
    /// waiting, and the events that came out. A stopped child ends a moment after its
    /// parent's turn with its own final event, which belongs in the record, and its tokens
    /// still count; [`Runner::run`] does this after each turn.
    pub fn take_late(&mut self, session: &mut Session) -> Vec<Event> {
        while let Ok(child) = self.children.try_recv() {
            self.ledger.child_event(session, child);
        }
        self.dispatch(session)
    }

    /// Waits for a child's event that comes after its parent's turn (a stopped child ends a
    /// moment later with its own final event) and returns what it brought out of the
    /// session. For an owner that drives [`Runner::complete_io`] itself, to await while the
    /// session is idle (one branch of a `select!`): it never resolves when no child runs.
    /// Cancel-safe.
    pub async fn next_late(&mut self, session: &mut Session) -> Vec<Event> {
        loop {
            let Some(child) = self.children.recv().await else {
                return pending().await;
            };
            self.ledger.child_event(session, child);
            let events = self.dispatch(session);
            if !events.is_empty() {
                return events;
            }
        }
    }

    /// Starts the IO the session asked for (requests, tool calls, aborts) and returns the
    /// events it queued, without waiting. Call it after giving the session input of your own
    /// ([`Session::cancel`], [`Runner::handle_approval`]) to see the effects at once;
    /// [`Runner::complete_io`] begins with it.
    pub fn dispatch(&mut self, session: &mut Session) -> Vec<Event> {
        let mut events = Vec::new();
        let mut work = std::mem::take(&mut self.work);
        // All at once: a frame of a fast stream brings hundreds of deltas.
        self.ledger.step(session, &mut events, &mut work);
        for w in work.drain(..) {
            match w {
                Work::Send(req) => self.exchange = Some(Exchange::start(&self.client, req)),
                // The answer is complete or abandoned: close the stream.
                Work::Close(id) => {
                    self.exchange.take_if(|x| x.id == id);
                }
                Work::Start(run) => self.spawn_tool(run),
                Work::Stop { call_id } => self.running.abort(&call_id),
                Work::Wait(wait) => self.carry_out(session, wait),
                Work::AnswerChild {
                    parent_call_id,
                    call_id,
                    approval,
                } => self.ctx.children.answer(&parent_call_id, call_id, approval),
            }
        }
        self.work = work;
        events
    }

    /// Carries out a wait the session decided on, every kind in this one place, on a
    /// blocking thread; `complete_io` hands what it came to in.
    fn carry_out(&mut self, session: &Session, wait: Wait) {
        match wait {
            Wait::Snapshot(due) => {
                let checkpointer = self.checkpoints.clone();
                self.waits.spawn_blocking(move || Waited::Snapshot {
                    id: due.id,
                    outcome: hrns_blocking::checkpoint::take_checkpoint(
                        checkpointer.as_deref(),
                        &due,
                    ),
                });
            }
            Wait::Hooks(due) => {
                let env = hrns_blocking::hooks::HookEnv::new(
                    &self.ctx.workspace,
                    &self.ctx.sandbox.env,
                    session.secrets(),
                );
                // `run_hooks` turns a panic of any hook's thread into a result.
                self.waits.spawn_blocking(move || Waited::Hooks {
                    id: due.id,
                    runs: hrns_blocking::hooks::run_hooks(&due, &env),
                });
            }
        }
    }

    fn feed_step(&mut self, session: &mut Session, step: Step) {
        let Some(x) = self.exchange.as_mut() else {
            return;
        };
        let (id, now) = (x.id, Instant::now());
        let fed = match step {
            Step::Head => {
                let resp = x.response().expect("a head step leaves the response");
                let headers = resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_slice()));
                // The wall time lets the session read a `Retry-After` date.
                session.handle_response_head_at(now, SystemTime::now(), id, resp.status, headers)
            }
            Step::Data(bytes) => session.handle_response_data(now, id, &bytes),
            Step::End => {
                self.exchange = None;
                self.ledger.response_ended(id);
                session.handle_response_end(now, id)
            }
            Step::Failed(error) => {
                self.exchange = None;
                self.ledger.response_ended(id);
                session.handle_transport_error(now, id, error)
            }
        };
        fed.expect("the runner feeds only what the session issued, each head first");
    }

    /// Starts a tool call as its own task (the ledger keeps to the parallel cap). The call
    /// gets its own cancellation token, a child of the turn's, so the session can stop it
    /// alone.
    fn spawn_tool(&mut self, run: ToolRun) {
        let tool = self.tools.get(&run.name).cloned();
        let mut ctx = self.ctx.clone();
        ctx.cancel = self.ctx.cancel.child_token();
        match run.confinement {
            Confinement::Sandboxed => {}
            // The user let this command out of the sandbox, once.
            Confinement::Unsandboxed => ctx.sandbox.policy = SandboxPolicy::unconfined(),
        }
        let token = ctx.cancel.clone();
        let started = run.clone();
        let task = self.running.set.spawn(async move {
            let end = match tool {
                Some(tool) => {
                    ToolEnd::Output(tool.run_call(&run.call_id, &run.arguments, &ctx).await)
                }
                None => ToolEnd::Unavailable,
            };
            (run, end)
        });
        self.running.calls.insert(
            task.id(),
            Call {
                run: started,
                token,
                task,
            },
        );
    }

    /// After a turn: tools that were stopped get a moment to end in order (kill and reap);
    /// what is left then is dropped. Their outputs come too late to matter.
    async fn settle(&mut self) {
        if self.running.is_empty() {
            return;
        }
        let running = &mut self.running;
        let _ = tokio::time::timeout(CANCEL_GRACE, async {
            while running.next().await.is_some() {}
        })
        .await;
        self.running.stop().await;
    }
}

/// The running tool calls, each a task, with the call id of each task.
#[derive(Default)]
struct Tools {
    set: JoinSet<(ToolRun, ToolEnd)>,
    calls: HashMap<Id, Call>,
}

/// What the runner keeps about a running call: enough to answer it if its task panics, and
/// to stop it.
struct Call {
    run: ToolRun,
    token: CancellationToken,
    task: AbortHandle,
}

impl Tools {
    fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Stops one call: its token first (a command is killed and reaped), the task itself if
    /// it has not ended after a grace period. Its late output is ignored by the session.
    fn abort(&mut self, call_id: &str) {
        if let Some(call) = self.calls.values().find(|c| c.run.call_id == call_id) {
            call.token.cancel();
            let task = call.task.clone();
            tokio::spawn(async move {
                tokio::time::sleep(CANCEL_GRACE).await;
                task.abort();
            });
        }
    }

    /// The next call to end, and how. A task that was aborted was stopped by the session,
    /// whose result for it is already decided: it is skipped.
    async fn next(&mut self) -> Option<(ToolRun, ToolEnd)> {
        loop {
            let (id, done) = match self.set.join_next_with_id().await? {
                Ok((id, done)) => (id, Some(done)),
                Err(e) if e.is_panic() => (e.id(), None),
                Err(e) => {
                    self.calls.remove(&e.id());
                    continue;
                }
            };
            let call = self.calls.remove(&id)?;
            return Some(done.unwrap_or((call.run, ToolEnd::Crashed)));
        }
    }

    /// Stops one call at once: its token, then its task (a dropped command is killed).
    fn abort_now(&mut self, call_id: &str) {
        if let Some(call) = self.calls.values().find(|c| c.run.call_id == call_id) {
            call.token.cancel();
            call.task.abort();
        }
    }

    /// Aborts every running call and waits until each is dropped (its cleanup ran).
    async fn stop(&mut self) {
        self.set.abort_all();
        while self.set.join_next().await.is_some() {}
        self.calls.clear();
    }
}

/// One turn of [`Runner::run`]: the runner, the session and the caller's event callback.
/// Dropping it mid-turn (the run future was dropped) cancels the session, still hands the
/// final events to the callback, and stops the running tools.
struct Turn<'r, 's, F: FnMut(&Event)> {
    runner: &'r mut Runner,
    session: &'s mut Session,
    on_event: F,
}

impl<F: FnMut(&Event)> Turn<'_, '_, F> {
    fn emit(&mut self, event: &Event) {
        (self.on_event)(event);
    }

    /// Asks the approval callback about `question` (the session's own call's or a
    /// subagent's), which waits for an answer; a cancel meanwhile wins.
    async fn ask(&mut self, question: Question) {
        let asking = (self.runner.approve)(question.clone());
        let cancel = self.runner.ctx.cancel.clone();
        tokio::select! {
            approval = asking => {
                // Late (the child's call stopped meanwhile): the session denied it already.
                match self.runner.handle_answer(self.session, &question, approval) {
                    Ok(()) | Err(SessionError::UnknownChildQuestion { .. }) => {}
                    Err(e) => panic!("the session asked about this call: {e}"),
                }
            }
            () = cancel.cancelled() => {} // `complete_io` cancels the session next
        }
    }
}

impl<F: FnMut(&Event)> Drop for Turn<'_, '_, F> {
    fn drop(&mut self) {
        if self.session.is_idle() {
            return;
        }
        self.session.cancel();
        let (mut events, mut work) = (Vec::new(), Vec::new());
        self.runner
            .ledger
            .step(self.session, &mut events, &mut work);
        for event in &events {
            self.emit(event);
        }
        for w in work {
            match w {
                Work::Stop { call_id } => self.runner.running.abort_now(&call_id),
                // Nothing new starts in a cancelled turn; the stream is closed below.
                // A stopped child needs no answer.
                Work::Close(_)
                | Work::Send(_)
                | Work::Start(_)
                | Work::Wait(_)
                | Work::AnswerChild { .. } => {}
            }
        }
        self.runner.exchange = None;
    }
}

/// One request in flight: sending it, then reading its body.
struct Exchange {
    id: RequestId,
    state: ExchangeState,
}

enum ExchangeState {
    Sending(Pin<Box<dyn Future<Output = Result<IncomingResponse, TransportError>> + Send>>),
    Receiving(IncomingResponse),
}

/// What happened next to the request in flight.
enum Step {
    /// The response head arrived; see [`Exchange::response`].
    Head,
    Data(Bytes),
    End,
    Failed(TransportError),
}

impl Exchange {
    fn start(client: &Client, req: HttpRequest) -> Self {
        let client = client.clone();
        Exchange {
            id: req.id,
            state: ExchangeState::Sending(Box::pin(async move { client.send(req).await })),
        }
    }

    fn response(&self) -> Option<&IncomingResponse> {
        match &self.state {
            ExchangeState::Receiving(resp) => Some(resp),
            ExchangeState::Sending(_) => None,
        }
    }

    fn poll_step(&mut self, cx: &mut Context<'_>) -> Poll<Step> {
        match &mut self.state {
            ExchangeState::Sending(sending) => {
                Poll::Ready(match ready!(sending.as_mut().poll(cx)) {
                    Ok(resp) => {
                        self.state = ExchangeState::Receiving(resp);
                        Step::Head
                    }
                    Err(e) => Step::Failed(e),
                })
            }
            ExchangeState::Receiving(resp) => Poll::Ready(match ready!(resp.poll_chunk(cx)) {
                Some(Ok(bytes)) => Step::Data(bytes),
                Some(Err(e)) => Step::Failed(e),
                None => Step::End,
            }),
        }
    }
}

async fn next_step(exchange: &mut Option<Exchange>) -> Step {
    match exchange {
        Some(x) => poll_fn(|cx| x.poll_step(cx)).await,
        None => pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => pending().await,
    }
}
