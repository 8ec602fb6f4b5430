//! `task`: runs a subagent — a child [`Session`] driven to its end by a [`Runner`] on the
//! parent's [`Client`] — and returns its final answer. The decisions (which agent, which tools,
//! what the result says, how task calls are ordered) are [`hrns_core::task`]'s; this is the IO
//! around them.
//!
//! Each call is a future of its own, so the runner runs the read-only task calls of one answer
//! at the same time, as it runs any calls the session releases together. Cancelling the
//! parent's turn cancels the call's token, which the child's runner watches: the child ends
//! with its own [`Event::TurnCancelled`] and its result says so.

use crate::client::Client;
use crate::runner::{ApprovalFuture, Runner};
use crate::tool::{Tool, ToolContext, ToolFuture, Toolbox, UsageSink};
use hrns_core::agent::Agent;
use hrns_core::session::{Event, Session, SessionConfig, ToolRun};
use hrns_core::task::{self, ChildEvent, Subagents};
use hrns_core::tool::{ToolOutput, ToolSpec};
use std::sync::Arc;

/// Composes a child's system prompt from its agent and the names of its tools.
pub type PromptFn = Arc<dyn Fn(&Agent, &[String]) -> String + Send + Sync>;
/// Receives every event of every child, tagged with the parent call id.
pub type ChildObserver = Arc<dyn Fn(&ChildEvent) + Send + Sync>;
/// Answers a child's approval requests, given the child's agent and its call.
pub type ApproveFn = Arc<dyn Fn(String, ToolRun) -> ApprovalFuture + Send + Sync>;

/// The `task` tool of the async driver. Add it to the parent's toolbox, and set the parent's
/// [`SessionConfig::subagents`] to [`TaskTool::subagents`] so the session orders task calls
/// by what their children may do; its children use `tools` (which must not hold it).
#[derive(Clone)]
pub struct TaskTool {
    client: Client,
    parent: SessionConfig,
    agents: Vec<Agent>,
    tools: Toolbox,
    prompt: PromptFn,
    observer: ChildObserver,
    approve: Option<ApproveFn>,
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
    /// A task tool whose children talk through `client` with the parent's configuration
    /// `parent` (provider, model, policy; its `tools` are what a child may be given), pick from
    /// `agents`, and run `tools`. Children's system prompts are their agents' prompts until
    /// [`TaskTool::system_prompt`] sets a composer; their events go nowhere until
    /// [`TaskTool::on_event`]; their approval requests are answered
    /// [`Approval::Unattended`](hrns_core::session::Approval::Unattended) (denied) until
    /// [`TaskTool::approve_with`].
    pub fn new(client: Client, parent: SessionConfig, agents: Vec<Agent>, tools: Toolbox) -> Self {
        TaskTool {
            client,
            parent,
            agents,
            tools,
            prompt: Arc::new(|agent, _| agent.prompt.clone()),
            observer: Arc::new(|_| {}),
            approve: None,
        }
    }

    /// What the parent session needs to know about this tool's children
    /// ([`SessionConfig::subagents`]).
    pub fn subagents(&self) -> Subagents {
        Subagents {
            agents: self.agents.clone(),
            tools: self.parent.tools.clone(),
        }
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

    /// Sets who answers the children's approval requests: `approve` gets the child's agent
    /// and the call, and its answer goes to the child's session.
    #[must_use]
    pub fn approve_with<F, Fut>(mut self, approve: F) -> Self
    where
        F: Fn(String, ToolRun) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = hrns_core::session::Approval> + Send + 'static,
    {
        self.approve = Some(Arc::new(move |agent, run| Box::pin(approve(agent, run))));
        self
    }

    async fn run_child(&self, call_id: &str, arguments: &str, ctx: &ToolContext) -> ToolOutput {
        let plan = match task::plan_child(
            arguments,
            &self.agents,
            self.parent.approval,
            &self.parent.tools,
        ) {
            Ok(plan) => plan,
            Err(refusal) => return refusal,
        };
        let names: Vec<String> = plan.tools.iter().map(|t| t.name.clone()).collect();
        let config = task::child_config(&self.parent, &plan, (self.prompt)(&plan.agent, &names));
        let mut tools = self.tools.clone();
        tools.retain(|name| names.iter().any(|n| n == name));
        // The child's cancel token is this call's: a cancelled parent turn or an aborted call
        // cancels the child. Its own tools report no usage (no task inside a task).
        let mut child_ctx = ctx.clone();
        child_ctx.usage = UsageSink::default();
        let mut runner = Runner::new(self.client.clone(), tools, child_ctx);
        if let Some(approve) = self.approve.clone() {
            let agent = plan.agent.name.clone();
            runner = runner.approve_with(move |run| approve(agent.clone(), run));
        }
        let mut session = Session::new(config);
        let agent = plan.agent.name.clone();
        let observer = Arc::clone(&self.observer);
        let usage = ctx.usage.clone();
        let outcome = runner
            .run(&mut session, &plan.prompt, |event: &Event| {
                if let Event::Usage { usage: used } = event {
                    usage.report(used.clone());
                }
                observer(&ChildEvent {
                    parent_call_id: call_id.to_owned(),
                    agent: agent.clone(),
                    event: event.clone(),
                });
            })
            .await;
        match outcome {
            Ok(outcome) => task::child_result(&plan.agent.name, &outcome, session.messages()),
            // A fresh session takes its first message; this is a bug, reported to the model.
            Err(e) => ToolOutput::error(format!("The subagent could not start: {e}")),
        }
    }
}

impl Tool for TaskTool {
    fn spec(&self) -> ToolSpec {
        task::task_spec(&self.agents)
    }

    fn run<'a>(&'a self, arguments: &'a str, ctx: &'a ToolContext) -> ToolFuture<'a> {
        self.run_call(task::TASK_TOOL, arguments, ctx)
    }

    fn run_call<'a>(
        &'a self,
        call_id: &'a str,
        arguments: &'a str,
        ctx: &'a ToolContext,
    ) -> ToolFuture<'a> {
        Box::pin(self.run_child(call_id, arguments, ctx))
    }
}
