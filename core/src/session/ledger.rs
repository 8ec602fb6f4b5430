//! [`Ledger`]: the bookkeeping every driver keeps between the steps of a [`Session`], written
//! once so that the drivers cannot drift apart. It holds the tool calls waiting for a slot and
//! the parallel cap, which calls run, the request in flight, the snapshot being taken and how
//! the turn ended; it turns the session's [`Action`]s into [`Work`] for the driver, and the
//! driver's reports back into the session's inputs. Like the session it does no IO: a driver
//! keeps only its own handles (a thread's stop flag, a task, a connection) keyed by what the
//! ledger hands out.

use super::{
    Action, Approval, Event, Question, Session, SessionError, ToolRun, ToolsReason, TurnOutcome,
};
use crate::checkpoint::{CheckpointDue, CheckpointOutcome};
use crate::http::{HttpRequest, RequestId};
use crate::tool::{ToolOutput, ToolSpec};
use std::collections::VecDeque;
use std::time::Instant;

/// How many tool calls run at once unless the driver's owner says otherwise.
pub const DEFAULT_MAX_PARALLEL_TOOLS: usize = 8;

/// Something the driver must do now, handed out by [`Ledger::step`].
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum Work {
    /// Send this request and report its response ([`Ledger::response_ended`] at its end).
    Send(HttpRequest),
    /// Stop reading the response of this request: the session no longer wants it (the answer
    /// is complete, failed or cancelled). Drop the connection.
    Close(RequestId),
    /// Start this tool call now and report its end with [`Ledger::tool_ended`]; the parallel
    /// cap is already respected.
    Start(ToolRun),
    /// Stop this running call (it timed out, or the turn was cancelled): its result is already
    /// decided, and what it reports later is ignored.
    Stop {
        /// The call id of an earlier [`Work::Start`].
        call_id: String,
    },
    /// Hand this answer to the waiting subagent of the running `task` call `parent_call_id`
    /// (the driver's link to its children); drop it when that child is gone.
    AnswerChild {
        /// The parent's `task` call.
        parent_call_id: String,
        /// The child's call.
        call_id: String,
        /// The answer.
        approval: Approval,
    },
    /// Carry out this wait for something outside the loop, off the turn loop's thread, and
    /// report what it came to with [`Ledger::waited`]. Meanwhile a cancel must be seen.
    Wait(Wait),
}

/// Something outside the loop that a call or the turn waits for: the session decided it is
/// due, the driver only carries it out (off the turn loop's thread) and hands back a
/// [`Waited`]. A new kind of wait is a variant here and in [`Waited`]: the compiler then
/// points at each driver's one place that carries waits out.
#[derive(Debug, Clone, PartialEq)]
pub enum Wait {
    /// Take this snapshot of the workspace ([`Action::TakeCheckpoint`]); a driver without a
    /// checkpoint store reports [`CheckpointOutcome::Failed`].
    Snapshot(CheckpointDue),
    /// Run these hooks, all at once: they are processes with timeouts ([`Action::RunHooks`]).
    Hooks(crate::hooks::HookDue),
}

/// What a [`Wait`] came to, for [`Ledger::waited`].
#[derive(Debug, Clone, PartialEq)]
pub enum Waited {
    /// The snapshot of [`Wait::Snapshot`] with this id was taken, or failed (a warning: the
    /// call goes on without it).
    Snapshot {
        /// The [`CheckpointDue::id`] it was asked with.
        id: u64,
        /// What the driver's snapshot gave.
        outcome: CheckpointOutcome,
    },
    /// The hooks of [`Wait::Hooks`] with this id ran.
    Hooks {
        /// The [`HookDue::id`](crate::hooks::HookDue::id) they were asked with.
        id: u64,
        /// One run per command, in the order of the due's commands.
        runs: Vec<crate::hooks::HookRun>,
    },
}

/// A wait in flight, by its kind and id (ids are counted per kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WaitKey {
    Snapshot(u64),
    Hooks(u64),
}

impl Wait {
    fn key(&self) -> WaitKey {
        match self {
            Wait::Snapshot(due) => WaitKey::Snapshot(due.id),
            Wait::Hooks(due) => WaitKey::Hooks(due.id),
        }
    }
}

impl Waited {
    fn key(&self) -> WaitKey {
        match self {
            Waited::Snapshot { id, .. } => WaitKey::Snapshot(*id),
            Waited::Hooks { id, .. } => WaitKey::Hooks(*id),
        }
    }
}

/// How a tool call the driver started ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolEnd {
    /// The tool returned this output.
    Output(ToolOutput),
    /// The driver has no tool of that name.
    Unavailable,
    /// The tool crashed (it panicked) before it returned.
    Crashed,
}

/// What a session waits for after a step that brought no events: what its driver's turn loop
/// does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Waiting {
    /// No turn runs and its final event was taken.
    Idle,
    /// Output is queued, IO is in flight or a deadline is set: do the next step.
    Io,
    /// Only the owner can move it on: this call waits for an answer
    /// ([`Ledger::handle_approval`]). A turn loop with someone to ask asks again; the
    /// question was already shown (a turn loop that started after it went out must not
    /// leave the turn hanging, nor cancel it).
    Owner(ToolRun),
    /// Nothing is in flight, no deadline is set and nobody was asked: nothing can move it on,
    /// so the turn loop cancels it ([`Session::cancel`]) rather than hang.
    Stuck,
}

/// The driver-side bookkeeping of one session; see the module docs. One per runner.
#[derive(Debug)]
pub struct Ledger {
    max_parallel: usize,
    /// Calls the session released, waiting for a free slot, in the session's order.
    queue: VecDeque<ToolRun>,
    /// Calls started and not ended (nor stopped), by call id.
    running: Vec<String>,
    /// The request whose response is being read.
    request: Option<RequestId>,
    /// The waits the driver carries out (snapshots, batches of hooks).
    waits: Vec<WaitKey>,
    /// How the last turn whose final event went through [`Ledger::step`] ended.
    outcome: TurnOutcome,
    /// The session's actions of one step, kept empty between steps so its buffer is allocated
    /// once, not on every read of a stream.
    actions: Vec<Action>,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger::new(DEFAULT_MAX_PARALLEL_TOOLS)
    }
}

impl Ledger {
    /// A ledger that lets at most `max_parallel` calls run at once (at least one).
    pub fn new(max_parallel: usize) -> Self {
        Ledger {
            max_parallel: max_parallel.max(1),
            queue: VecDeque::new(),
            running: Vec::new(),
            request: None,
            waits: Vec::new(),
            outcome: TurnOutcome::Cancelled,
            actions: Vec::new(),
        }
    }

    /// A running `task` call's child produced `child` (its task tool handed it to the
    /// driver): the session gets it ([`Session::handle_child_event`]), counts its usage and
    /// hands it out of its next poll as [`Event::Child`]. A driver hands a call's child
    /// events in the order they came and all of them before the call's end
    /// ([`Ledger::tool_ended`]), so that a child's tokens are counted before its result moves
    /// the turn on (and ends it); those that come after a turn (a stopped child finishing)
    /// are handed in too.
    pub fn child_event(&mut self, session: &mut Session, child: crate::task::ChildEvent) {
        session.handle_child_event(child);
    }

    /// Changes how many calls may run at once (at least one).
    pub fn set_max_parallel(&mut self, n: usize) {
        self.max_parallel = n.max(1);
    }

    /// Takes everything the session decided: its events are appended to `events` (all at
    /// once: a read of a fast stream brings hundreds), the IO to do now to `work`, in order.
    /// Notes the turn's outcome from its final event.
    pub fn step(&mut self, session: &mut Session, events: &mut Vec<Event>, work: &mut Vec<Work>) {
        let before = events.len();
        let mut actions = std::mem::take(&mut self.actions);
        session.poll_into(events, &mut actions);
        for action in actions.drain(..) {
            match action {
                Action::SendRequest(req) => {
                    if let Some(old) = self.request.replace(req.id) {
                        work.push(Work::Close(old));
                    }
                    work.push(Work::Send(req));
                }
                Action::RunTool(run) => self.queue.push_back(run),
                Action::AbortTool { call_id } => {
                    self.queue.retain(|run| run.call_id != call_id);
                    if let Some(i) = self.running.iter().position(|id| *id == call_id) {
                        self.running.swap_remove(i);
                        work.push(Work::Stop { call_id });
                    }
                }
                // The owner learns of it from `Event::ApprovalRequested`, and the turn loop
                // from `Ledger::waiting`.
                Action::AskApproval(_) => {}
                Action::AnswerChild {
                    parent_call_id,
                    call_id,
                    approval,
                } => work.push(Work::AnswerChild {
                    parent_call_id,
                    call_id,
                    approval,
                }),
                Action::TakeCheckpoint(due) => self.wait(Wait::Snapshot(due), work),
                Action::RunHooks(due) => self.wait(Wait::Hooks(due), work),
                Action::Emit(event) => events.push(event),
            }
        }
        self.actions = actions;
        if let Some(id) = self.request {
            if !session.wants_response(id) {
                self.request = None;
                work.push(Work::Close(id));
            }
        }
        while self.running.len() < self.max_parallel {
            let Some(run) = self.queue.pop_front() else {
                break;
            };
            self.running.push(run.call_id.clone());
            work.push(Work::Start(run));
        }
        if let Some(outcome) = events[before..]
            .iter()
            .rev()
            .find_map(TurnOutcome::from_event)
        {
            self.outcome = outcome;
        }
    }

    fn wait(&mut self, wait: Wait, work: &mut Vec<Work>) {
        self.waits.push(wait.key());
        work.push(Work::Wait(wait));
    }

    /// Whether the driver has IO the session waits for: a response, a running call or a
    /// [`Wait`] (a snapshot, hooks).
    pub fn in_flight(&self) -> bool {
        self.request.is_some() || !self.running.is_empty() || !self.waits.is_empty()
    }

    /// The request whose response is being read, if any.
    pub fn request(&self) -> Option<RequestId> {
        self.request
    }

    /// How many calls run now (stopped ones not counted).
    pub fn running(&self) -> usize {
        self.running.len()
    }

    /// The response of `req` ended or failed: nothing more will come of it.
    pub fn response_ended(&mut self, req: RequestId) {
        if self.request == Some(req) {
            self.request = None;
        }
    }

    /// A call ended as `end`: its slot is free and the session gets the result. The text the
    /// model reads about a tool that is missing or crashed is written here.
    pub fn tool_ended(
        &mut self,
        session: &mut Session,
        now: Instant,
        run: &ToolRun,
        end: ToolEnd,
    ) -> Result<(), SessionError> {
        self.running.retain(|id| *id != run.call_id);
        match end {
            ToolEnd::Output(output) => session.handle_tool_output(now, &run.call_id, output),
            ToolEnd::Unavailable => session.handle_tool_unavailable(now, &run.call_id, &run.name),
            ToolEnd::Crashed => {
                session.handle_tool_output(now, &run.call_id, ToolOutput::error(crashed(&run.name)))
            }
        }
    }

    /// A [`Work::Wait`] came to `waited`: it is no longer in flight, and the session takes
    /// its result ([`Session::handle_checkpoint`], [`Session::handle_hooks`]). Fails only for
    /// hooks the session never asked for, or with the wrong number of runs.
    pub fn waited(
        &mut self,
        session: &mut Session,
        now: Instant,
        waited: Waited,
    ) -> Result<(), SessionError> {
        let key = waited.key();
        self.waits.retain(|w| *w != key);
        match waited {
            Waited::Snapshot { id, outcome } => {
                session.handle_checkpoint(now, id, outcome);
                Ok(())
            }
            Waited::Hooks { id, runs } => session.handle_hooks(now, id, runs),
        }
    }

    /// Hands the session a change of its tools, if there is one, and then the owner's answer
    /// about a call that waited for approval. In that order: the answer can end the answer's
    /// calls and build the next request at once, and that request must offer the tools as
    /// they are when the answer comes, not as they were when the question was asked.
    pub fn handle_approval(
        &mut self,
        session: &mut Session,
        now: Instant,
        tools: Option<ToolsChange>,
        call_id: &str,
        approval: Approval,
    ) -> Result<(), SessionError> {
        self.handle_tools(session, tools);
        session.handle_approval(now, call_id, approval)
    }

    /// [`Ledger::handle_approval`] for any question, the session's own or a subagent's
    /// ([`Session::handle_answer`]): the one path a front end answers on.
    pub fn handle_answer(
        &mut self,
        session: &mut Session,
        now: Instant,
        tools: Option<ToolsChange>,
        question: &Question,
        approval: Approval,
    ) -> Result<(), SessionError> {
        self.handle_tools(session, tools);
        session.handle_answer(now, question, approval)
    }

    /// Hands the session a change of its tools, if there is one
    /// ([`Session::handle_tools_changed`]). A driver calls it before every input it gives
    /// the session, so the request that input may start already offers the new set.
    pub fn handle_tools(&mut self, session: &mut Session, tools: Option<ToolsChange>) {
        if let Some(change) = tools {
            session.handle_tools_changed(change.tools, change.reason);
        }
    }

    /// What the session waits for now; call it after a step that brought no events (or
    /// before a step, to know whether one can bring any).
    pub fn waiting(&self, session: &Session) -> Waiting {
        if session.is_idle() {
            return Waiting::Idle;
        }
        if session.has_output() || self.in_flight() || session.poll_timeout().is_some() {
            return Waiting::Io;
        }
        match session.asked() {
            Some(run) => Waiting::Owner(run.clone()),
            None => Waiting::Stuck,
        }
    }

    /// How the last turn seen by [`Ledger::step`] ended; [`TurnOutcome::Cancelled`] until a
    /// final event went through.
    pub fn outcome(&self) -> &TurnOutcome {
        &self.outcome
    }

    /// Forgets the last turn's outcome: a turn loop calls it when it starts, so that it
    /// reports its own turn's.
    pub fn forget_outcome(&mut self) {
        self.outcome = TurnOutcome::Cancelled;
    }
}

/// A new tool set and why it changed, for [`Ledger::handle_tools`].
#[derive(Debug, Clone, PartialEq)]
pub struct ToolsChange {
    /// The tools offered from now on.
    pub tools: Vec<ToolSpec>,
    /// Why, for people (and whether it is news when the set stays the same).
    pub reason: ToolsReason,
}

/// What the model reads about a call whose tool crashed.
fn crashed(name: &str) -> String {
    format!(
        "The tool `{name}` crashed (it panicked) before it returned a result. This is a bug in the tool, not in your call; do not repeat the call unchanged."
    )
}
