//! `task`: runs a subagent — a child [`Session`] driven to its end by a [`Runner`] on the
//! parent's transport — and returns its final answer. The decisions (which agent, which tools,
//! what the result says) are [`hrns_core::task`]'s; this is the IO around them.

use crate::client::Transport;
use crate::runner::{Runner, TurnFront};
use crate::tool::{AnswerInbox, CancelFlag, ChildLink, Tool, ToolContext, Toolbox};
use hrns_core::session::{Approval, Event, PARENT_STOPPED, Question, Session};
use hrns_core::task::{self, ChildEvent, Children};
use hrns_core::tool::{ToolOutput, ToolSpec};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

/// Gives the tools a child may get as they are now (see [`TaskTool::current_tools`]).
pub type CurrentTools = Arc<dyn Fn() -> Toolbox + Send + Sync>;

/// The `task` tool. Add it to the parent's toolbox, and set the parent's
/// [`SessionConfig::subagents`](hrns_core::session::SessionConfig::subagents) to
/// [`TaskTool::subagents`]; its children use `tools` (which must not hold it) under the
/// parent's configuration.
#[derive(Clone)]
pub struct TaskTool {
    transport: Arc<dyn Transport>,
    children: Children,
    tools: Toolbox,
    /// The tools as they are now, asked for when a child starts ([`TaskTool::current_tools`]).
    current: Option<CurrentTools>,
    running: Running,
}

/// The children a [`TaskTool`] is running, to wait for after a cancel: a runner that is
/// cancelled stops waiting for its tools, and a child ends a moment later, with its own final
/// event. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Running(Arc<(Mutex<usize>, Condvar)>);

impl Running {
    /// Waits until no child runs, at most `timeout`; `false` if some still ran then.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let (count, changed) = &*self.0;
        let guard = count.lock().unwrap_or_else(PoisonError::into_inner);
        let (guard, _) = changed
            .wait_timeout_while(guard, timeout, |n| *n > 0)
            .unwrap_or_else(PoisonError::into_inner);
        *guard == 0
    }

    fn enter(&self) -> RunningGuard {
        *self.0.0.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        RunningGuard(self.clone())
    }
}

struct RunningGuard(Running);

impl Drop for RunningGuard {
    fn drop(&mut self) {
        let (count, changed) = &*self.0.0;
        *count.lock().unwrap_or_else(PoisonError::into_inner) -= 1;
        changed.notify_all();
    }
}

impl std::fmt::Debug for TaskTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskTool")
            .field("children", &self.children)
            .finish_non_exhaustive()
    }
}

impl TaskTool {
    /// A task tool whose children (what they are made of: see [`Children`]) talk to
    /// `transport` and run `tools`; their events go to the runner that runs the call
    /// ([`ToolContext::children`]), and so do their approval questions: they come out of the
    /// parent session's poll, its owner answers them as it answers its own
    /// ([`Runner::handle_answer`]), and the child waits for the answer meanwhile.
    pub fn new(transport: Arc<dyn Transport>, children: Children, tools: Toolbox) -> Self {
        TaskTool {
            transport,
            children,
            tools,
            current: None,
            running: Running::default(),
        }
    }

    /// Sets where a child's tools come from when it starts, instead of the fixed `tools` of
    /// [`TaskTool::new`]: the parent's MCP servers may have listed other tools or stopped
    /// since, and a child is offered them as they are then.
    #[must_use]
    pub fn current_tools(mut self, current: impl Fn() -> Toolbox + Send + Sync + 'static) -> Self {
        self.current = Some(Arc::new(current));
        self
    }

    /// What the parent session needs to know about this tool's children
    /// ([`Children::subagents`]).
    pub fn subagents(&self) -> task::Subagents {
        self.children.subagents()
    }

    /// The children running now, to wait for after a cancel.
    pub fn running(&self) -> Running {
        self.running.clone()
    }
}

impl Tool for TaskTool {
    fn spec(&self) -> ToolSpec {
        self.children.spec()
    }

    fn run(&self, arguments: &str, ctx: &ToolContext) -> ToolOutput {
        self.run_call(task::TASK_TOOL, arguments, ctx)
    }

    fn run_call(&self, call_id: &str, arguments: &str, ctx: &ToolContext) -> ToolOutput {
        let current = self.current.as_ref().map(|current| current());
        let all = current.as_ref().unwrap_or(&self.tools);
        let child = match self.children.start_with(arguments, &all.specs()) {
            Ok(child) => child,
            Err(refusal) => return refusal,
        };
        let _running = self.running.enter();
        let mut tools = all.clone();
        tools.retain(|name| child.tool_names.iter().any(|n| n == name));
        let mut session = Session::new(child.config);
        let mut runner = Runner::new(Arc::clone(&self.transport), &tools, ctx.clone());
        let agent = &child.plan.agent.name;
        // The child's events (its tokens and questions among them) go to the parent's runner,
        // which hands them to the parent session: they come out of its poll, before this
        // call's end. The answers come back to this inbox.
        let mut front = ChildFront {
            link: &ctx.children,
            inbox: ctx.children.listen(call_id),
            cancel: &ctx.cancel,
            parent_call_id: call_id,
            agent,
        };
        runner.update_tools(&mut session);
        let outcome = session
            .submit(&child.plan.prompt)
            .map(|()| runner.drive_batches(&mut session, &mut front));
        self.children.result(agent, outcome, session.messages())
    }
}

/// The child's side of its turn: its events go to the parent's runner, and its questions wait
/// for the parent's owner's answer (or for the call to be stopped).
struct ChildFront<'c> {
    link: &'c ChildLink,
    inbox: AnswerInbox,
    cancel: &'c CancelFlag,
    parent_call_id: &'c str,
    agent: &'c str,
}

impl TurnFront for ChildFront<'_> {
    fn events(&mut self, events: &[Event]) {
        for event in events {
            self.link.send(ChildEvent {
                parent_call_id: self.parent_call_id.to_owned(),
                agent: self.agent.to_owned(),
                event: event.clone(),
            });
        }
    }

    fn approve(&mut self, question: &Question) -> Approval {
        // The question went out with the last batch; the parent session's owner answers it.
        // A stopped call is not answered: its child is denied and then sees the cancel.
        loop {
            match self.inbox.wait(question.call_id(), CANCEL_POLL) {
                Ok(approval) => return approval,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) if !self.cancel.is_cancelled() => {}
                Err(
                    std::sync::mpsc::RecvTimeoutError::Timeout
                    | std::sync::mpsc::RecvTimeoutError::Disconnected,
                ) => {
                    return Approval::Deny {
                        reason: Some(PARENT_STOPPED.to_owned()),
                    };
                }
            }
        }
    }
}

/// How often a child waiting for an answer looks at its cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(20);
