//! `task`: runs a subagent — a child [`Session`] driven to its end by a [`Runner`] on the
//! parent's transport — and returns its final answer. The decisions (which agent, which tools,
//! what the result says) are [`hrns_core::task`]'s; this is the IO around them.

use crate::client::Transport;
use crate::runner::Runner;
use crate::tool::{Tool, ToolContext, Toolbox};
use hrns_core::session::{Approval, Event, Session, ToolRun};
use hrns_core::task::{self, ChildEvent, Children};
use hrns_core::tool::{ToolOutput, ToolSpec};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

/// Answers a child's approval requests: it gets the child's agent (so the question can say
/// who asks) and the call.
pub type ApproveFn = Arc<dyn Fn(&str, &ToolRun) -> Approval + Send + Sync>;

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
    approve: Option<ApproveFn>,
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
    /// ([`ToolContext::children`]). Their approval requests are denied
    /// until [`TaskTool::approve_with`].
    pub fn new(transport: Arc<dyn Transport>, children: Children, tools: Toolbox) -> Self {
        TaskTool {
            transport,
            children,
            tools,
            current: None,
            approve: None,
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

    /// Sets who answers the children's approval requests: `approve` gets the child's agent
    /// and the call, as the async driver's does.
    #[must_use]
    pub fn approve_with(
        mut self,
        approve: impl Fn(&str, &ToolRun) -> Approval + Send + Sync + 'static,
    ) -> Self {
        self.approve = Some(Arc::new(approve));
        self
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
        if let Some(approve) = self.approve.clone() {
            runner = runner.approve_with(move |run| approve(agent, run));
        }
        // The child's events (its tokens among them) go to the parent's runner, which hands
        // them to the parent session: they come out of its poll, before this call's end.
        let outcome = runner.run(&mut session, &child.plan.prompt, |event: &Event| {
            ctx.children.send(ChildEvent {
                parent_call_id: call_id.to_owned(),
                agent: agent.clone(),
                event: event.clone(),
            });
        });
        self.children.result(agent, outcome, session.messages())
    }
}
