//! Drives a [`Session`] through one turn on tokio: sends requests, feeds body frames as they
//! arrive, runs tool calls concurrently, asks for approvals, sleeps for retries, and hands every
//! event to the caller. No decision is made here: the session makes them all.

use crate::client::{Client, Response};
use crate::tool::{ToolContext, Toolbox};
use hrns_core::http::{HttpRequest, RequestId};
use hrns_core::session::{
    Action, Approval, Event, Session, ToolRun, TransportError, TransportErrorKind, TurnError,
    TurnOutcome,
};
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::MAX_COMMAND_TIMEOUT_SECS;
use hyper::body::Bytes;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::{Future, pending, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio::task::{Id, JoinSet};
use tokio_util::sync::CancellationToken;

/// The future an approval callback returns.
pub type ApprovalFuture = Pin<Box<dyn Future<Output = Approval> + Send>>;

type Approver = Box<dyn FnMut(ToolRun) -> ApprovalFuture + Send>;

/// How long tools get to stop on their own after a cancel (a command is killed and reaped)
/// before they are dropped.
const CANCEL_GRACE: Duration = Duration::from_millis(500);

/// Runs turns of a [`Session`] against a [`Client`] with a [`Toolbox`].
///
/// The future of [`Runner::run`] is `Send`, so a turn can run in its own task. It ends in one
/// of three ways, each leaving a valid history and having emitted exactly one final event:
/// the turn finishes or fails; the [`cancel token`](Runner::cancel_token) is cancelled; or the
/// future is dropped. The last two reach the session as [`Session::cancel`] at once: the
/// response body is dropped and running tools are stopped (commands are killed with their
/// process group).
pub struct Runner {
    client: Client,
    tools: Toolbox,
    ctx: ToolContext,
    approve: Approver,
    permits: Arc<Semaphore>,
    tool_timeout: Option<Duration>,
}

impl fmt::Debug for Runner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runner")
            .field("client", &self.client)
            .field("tools", &self.tools)
            .field("ctx", &self.ctx)
            .field("tool_timeout", &self.tool_timeout)
            .finish_non_exhaustive()
    }
}

impl Runner {
    /// A runner sending with `client`, running `tools` in `ctx`. Calls that need approval are
    /// denied until [`Runner::approve_with`] sets a callback. At most 8 tool calls run at
    /// once, and each may take as long as `run_command`'s longest timeout plus a minute.
    pub fn new(client: Client, tools: Toolbox, ctx: ToolContext) -> Self {
        Runner {
            client,
            tools,
            ctx,
            approve: Box::new(|_| {
                Box::pin(async {
                    Approval::Deny {
                        reason: Some("nobody is there to approve it".to_owned()),
                    }
                })
            }),
            permits: Arc::new(Semaphore::new(8)),
            tool_timeout: Some(Duration::from_secs(MAX_COMMAND_TIMEOUT_SECS + 60)),
        }
    }

    /// Sets the async callback that answers approval requests, one at a time (tools and the
    /// stream go on meanwhile). To answer from elsewhere (a UI task), send the [`ToolRun`]
    /// with a `oneshot` sender over a channel and await the reply in the returned future.
    pub fn approve_with<F, Fut>(mut self, mut approve: F) -> Self
    where
        F: FnMut(ToolRun) -> Fut + Send + 'static,
        Fut: Future<Output = Approval> + Send + 'static,
    {
        self.approve = Box::new(move |run| Box::pin(approve(run)));
        self
    }

    /// Sets how many tool calls may run at once (default 8).
    pub fn max_parallel_tools(mut self, n: usize) -> Self {
        self.permits = Arc::new(Semaphore::new(n.max(1)));
        self
    }

    /// Sets how long one tool call may run before it is stopped and the model told so;
    /// `None` for no limit.
    pub fn tool_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.tool_timeout = timeout;
        self
    }

    /// The token that cancels the running turn, from any task or thread. A cancelled token
    /// stays cancelled, so after a cancelled turn the runner takes a fresh one: ask for the
    /// token again before the next turn.
    pub fn cancel_token(&self) -> CancellationToken {
        self.ctx.cancel.clone()
    }

    /// Submits `prompt` and runs the turn to its end, handing each event to `on_event` as it
    /// happens (use a channel sender in it to consume events elsewhere).
    pub async fn run(
        &mut self,
        session: &mut Session,
        prompt: &str,
        on_event: impl FnMut(&Event) + Send,
    ) -> TurnOutcome {
        if let Err(e) = session.submit(prompt) {
            return TurnOutcome::Failed(TurnError::Transport {
                kind: TransportErrorKind::Other,
                message: e.to_string(),
            });
        }
        self.drive(session, on_event).await
    }

    /// Runs the session's current turn (after `submit`) to its end.
    pub async fn drive(
        &mut self,
        session: &mut Session,
        on_event: impl FnMut(&Event) + Send,
    ) -> TurnOutcome {
        let cancel = self.ctx.cancel.clone();
        let mut turn = Turn {
            session,
            on_event,
            outcome: TurnOutcome::Cancelled,
        };
        let mut exchange: Option<Exchange> = None;
        let mut tools = Tools::default();
        let mut asks: VecDeque<ToolRun> = VecDeque::new();
        let mut asking: Option<(String, ApprovalFuture)> = None;
        loop {
            while let Some(action) = turn.session.poll() {
                match action {
                    Action::SendRequest(req) => exchange = Some(Exchange::start(&self.client, req)),
                    Action::RunTool(run) => self.spawn_tool(&mut tools, run),
                    Action::AskApproval(run) => asks.push_back(run),
                    Action::Emit(event) => turn.emit(event),
                }
            }
            if turn.session.is_idle() {
                break;
            }
            if exchange
                .as_ref()
                .is_some_and(|x| !turn.session.wants_response(x.id))
            {
                exchange = None; // the answer is complete or abandoned: close the stream
            }
            if asking.is_none() {
                asking = asks
                    .pop_front()
                    .map(|run| (run.call_id.clone(), (self.approve)(run)));
            }
            let deadline = turn.session.poll_timeout();
            let session = &mut *turn.session;
            tokio::select! {
                biased;
                () = cancel.cancelled() => session.cancel(),
                step = next_step(&mut exchange), if exchange.is_some() => {
                    let Some(x) = exchange.as_mut() else { continue };
                    let (id, now) = (x.id, Instant::now());
                    let _ = match step {
                        Step::Head => {
                            let resp = x.response().expect("a head step leaves the response");
                            let headers = resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_slice()));
                            session.handle_response_head(now, id, resp.status, headers)
                        }
                        Step::Data(bytes) => session.handle_response_data(now, id, &bytes),
                        Step::End => {
                            exchange = None;
                            session.handle_response_end(now, id)
                        }
                        Step::Failed(error) => {
                            exchange = None;
                            session.handle_transport_error(now, id, error)
                        }
                    };
                }
                Some((call_id, output)) = tools.next(), if !tools.is_empty() => {
                    let _ = session.handle_tool_output(&call_id, output);
                }
                approval = next_approval(&mut asking), if asking.is_some() => {
                    if let Some((call_id, _)) = asking.take() {
                        let _ = session.handle_approval(&call_id, approval);
                    }
                }
                () = sleep_until(deadline), if deadline.is_some() => {
                    session.handle_timeout(Instant::now());
                }
                // The session waits for nothing the runner can give; stop rather than hang.
                else => session.cancel(),
            }
        }
        if !tools.is_empty() {
            // Only a cancelled turn leaves tools running. They saw the token: give them a
            // moment to stop in order (kill and reap), then drop what is left.
            let _ = tokio::time::timeout(CANCEL_GRACE, async {
                while tools.next().await.is_some() {}
            })
            .await;
            tools.stop().await;
        }
        if cancel.is_cancelled() {
            self.ctx.cancel = CancellationToken::new();
        }
        turn.outcome.clone()
    }

    /// Starts a tool call as its own task; it waits for a permit first, so at most
    /// `max_parallel_tools` run at once.
    fn spawn_tool(&self, tools: &mut Tools, run: ToolRun) {
        let tool = self.tools.get(&run.name).cloned();
        let ctx = self.ctx.clone();
        let permits = self.permits.clone();
        let limit = self.tool_timeout;
        let call_id = run.call_id.clone();
        let task = tools.set.spawn(async move {
            let _permit = permits.acquire_owned().await;
            let Some(tool) = tool else {
                return ToolOutput::error(format!(
                    "The tool `{}` is not available in this driver.",
                    run.name
                ));
            };
            let running = tool.run(&run.arguments, &ctx);
            match limit {
                None => running.await,
                Some(limit) => tokio::time::timeout(limit, running)
                    .await
                    .unwrap_or_else(|_| {
                        ToolOutput::error(format!(
                            "`{}` did not finish within {} s and was stopped",
                            run.name,
                            limit.as_secs_f64()
                        ))
                    }),
            }
        });
        tools.calls.insert(task.id(), call_id);
    }
}

/// The running tool calls, each a task, with the call id of each task.
#[derive(Default)]
struct Tools {
    set: JoinSet<ToolOutput>,
    calls: HashMap<Id, String>,
}

impl Tools {
    fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// The next call to finish with its output; a tool that panicked reports it as an error.
    async fn next(&mut self) -> Option<(String, ToolOutput)> {
        let (id, output) = match self.set.join_next_with_id().await? {
            Ok(done) => done,
            Err(e) if e.is_panic() => (e.id(), ToolOutput::error("the tool crashed (panicked)")),
            Err(e) => (e.id(), ToolOutput::error("the tool was stopped")),
        };
        let call_id = self.calls.remove(&id).unwrap_or_default();
        Some((call_id, output))
    }

    /// Aborts every running call and waits until each is dropped (its cleanup ran).
    async fn stop(&mut self) {
        self.set.abort_all();
        while self.set.join_next().await.is_some() {}
        self.calls.clear();
    }
}

/// The session and the caller's event callback for one turn. Dropping it mid-turn (the run
/// future was dropped) cancels the session and still hands the final events to the callback.
struct Turn<'s, F: FnMut(&Event)> {
    session: &'s mut Session,
    on_event: F,
    outcome: TurnOutcome,
}

impl<F: FnMut(&Event)> Turn<'_, F> {
    fn emit(&mut self, event: Event) {
        if let Some(outcome) = TurnOutcome::from_event(&event) {
            self.outcome = outcome;
        }
        (self.on_event)(&event);
    }
}

impl<F: FnMut(&Event)> Drop for Turn<'_, F> {
    fn drop(&mut self) {
        if self.session.is_idle() {
            return;
        }
        self.session.cancel();
        while let Some(action) = self.session.poll() {
            if let Action::Emit(event) = action {
                self.emit(event);
            }
        }
    }
}

/// One request in flight: sending it, then reading its body.
struct Exchange {
    id: RequestId,
    state: ExchangeState,
}

enum ExchangeState {
    Sending(Pin<Box<dyn Future<Output = Result<Response, TransportError>> + Send>>),
    Receiving(Response),
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

    fn response(&self) -> Option<&Response> {
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

async fn next_approval(asking: &mut Option<(String, ApprovalFuture)>) -> Approval {
    match asking {
        Some((_, decision)) => decision.await,
        None => pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => pending().await,
    }
}
