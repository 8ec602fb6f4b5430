//! `task`: runs a subagent — a child [`Session`] driven to its end by a [`Runner`] on the
//! parent's transport — and returns its final answer. The decisions (which agent, which tools,
//! what the result says) are [`hrns_core::task`]'s; this is the IO around them.

use crate::client::Transport;
use crate::runner::Runner;
use crate::tool::{Tool, ToolContext, Toolbox};
use hrns_core::agent::Agent;
use hrns_core::session::{Approval, Event, Session, SessionConfig, ToolRun};
use hrns_core::task::{self, ChildEvent};
use hrns_core::tool::{ToolOutput, ToolSpec};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

/// Composes a child's system prompt from its agent and the names of its tools.
pub type PromptFn = Arc<dyn Fn(&Agent, &[String]) -> String + Send + Sync>;
/// Receives every event of every child, tagged with the parent call id.
pub type ChildObserver = Arc<dyn Fn(&ChildEvent) + Send + Sync>;
/// Answers a child's approval requests.
pub type ApproveFn = Arc<dyn Fn(&ToolRun) -> Approval + Send + Sync>;

/// The `task` tool. Add it to the parent's toolbox; its children use `tools` (which must not
/// hold it) under the parent's configuration.
#[derive(Clone)]
pub struct TaskTool {
    transport: Arc<dyn Transport>,
    parent: SessionConfig,
    agents: Vec<Agent>,
    tools: Toolbox,
    prompt: PromptFn,
    observer: ChildObserver,
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
            .field("agents", &self.agents.len())
            .field("model", &self.parent.model)
            .finish_non_exhaustive()
    }
}

impl TaskTool {
    /// A task tool whose children talk to `transport` with the parent's configuration `parent`
    /// (provider, model, policy; its `tools` are what a child may be given), pick from
    /// `agents`, and run `tools`. Children's system prompts are their agents' prompts until
    /// [`TaskTool::system_prompt`] sets a composer; their events go nowhere until
    /// [`TaskTool::on_event`]; their approval requests are denied until
    /// [`TaskTool::approve_with`].
    pub fn new(
        transport: Arc<dyn Transport>,
        parent: SessionConfig,
        agents: Vec<Agent>,
        tools: Toolbox,
    ) -> Self {
        TaskTool {
            transport,
            parent,
            agents,
            tools,
            prompt: Arc::new(|agent, _| agent.prompt.clone()),
            observer: Arc::new(|_| {}),
            approve: None,
            running: Running::default(),
        }
    }

    /// What the parent session needs to know about this tool's children
    /// ([`SessionConfig::subagents`]): set it so the session orders task calls by what their
    /// children may do.
    pub fn subagents(&self) -> task::Subagents {
        task::Subagents {
            agents: self.agents.clone(),
            tools: self.parent.tools.clone(),
        }
    }

    /// The children running now, to wait for after a cancel.
    pub fn running(&self) -> Running {
        self.running.clone()
    }

    /// Sets how a child's system prompt is composed.
    #[must_use]
    pub fn system_prompt(
        mut self,
        prompt: impl Fn(&Agent, &[String]) -> String + Send + Sync + 'static,
    ) -> Self {
        self.prompt = Arc::new(prompt);
        self
    }

    /// Sets who receives the children's events.
    #[must_use]
    pub fn on_event(mut self, observer: impl Fn(&ChildEvent) + Send + Sync + 'static) -> Self {
        self.observer = Arc::new(observer);
        self
    }

    /// Sets who answers the children's approval requests.
    #[must_use]
    pub fn approve_with(
        mut self,
        approve: impl Fn(&ToolRun) -> Approval + Send + Sync + 'static,
    ) -> Self {
        self.approve = Some(Arc::new(approve));
        self
    }
}

impl Tool for TaskTool {
    fn spec(&self) -> ToolSpec {
        task::task_spec(&self.agents)
    }

    fn run(&self, arguments: &str, ctx: &ToolContext) -> ToolOutput {
        self.run_call(task::TASK_TOOL, arguments, ctx)
    }

    fn run_call(&self, call_id: &str, arguments: &str, ctx: &ToolContext) -> ToolOutput {
        let plan = match task::plan_child(
            arguments,
            &self.agents,
            self.parent.approval,
            &self.parent.tools,
        ) {
            Ok(plan) => plan,
            Err(refusal) => return refusal,
        };
        let _running = self.running.enter();
        let names: Vec<String> = plan.tools.iter().map(|t| t.name.clone()).collect();
        let config = task::child_config(&self.parent, &plan, (self.prompt)(&plan.agent, &names));
        let mut tools = self.tools.clone();
        tools.retain(|name| names.iter().any(|n| n == name));
        let mut session = Session::new(config);
        let mut runner = Runner::new(Arc::clone(&self.transport), &tools, ctx.clone());
        if let Some(approve) = self.approve.clone() {
            runner = runner.approve_with(move |run| approve(run));
        }
        let agent = plan.agent.name.clone();
        let observer = Arc::clone(&self.observer);
        let outcome = runner.run(&mut session, &plan.prompt, |event: &Event| {
            observer(&ChildEvent {
                parent_call_id: call_id.to_owned(),
                agent: agent.clone(),
                event: event.clone(),
            });
        });
        match outcome {
            Ok(outcome) => task::child_result(&plan.agent.name, &outcome, session.messages()),
            // A fresh session takes its first message; this is a bug, reported to the model.
            Err(e) => ToolOutput::error(format!("The subagent could not start: {e}")),
        }
    }
}
