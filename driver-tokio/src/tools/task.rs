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
use crate::tool::{Tool, ToolContext, ToolFuture, Toolbox};
use hrns_core::session::{Event, Session, ToolRun};
use hrns_core::task::{self, ChildEvent, Children, Subagents};
use hrns_core::tool::{ToolOutput, ToolSpec};
use std::sync::Arc;

/// Answers a child's approval requests, given the child's agent and its call.
pub type ApproveFn = Arc<dyn Fn(String, ToolRun) -> ApprovalFuture + Send + Sync>;

/// Gives the tools a child may get as they are now (see [`TaskTool::current_tools`]).
pub type CurrentTools = Arc<dyn Fn() -> Toolbox + Send + Sync>;

/// The `task` tool of the async driver. Add it to the parent's toolbox, and set the parent's
/// [`SessionConfig::subagents`](hrns_core::session::SessionConfig::subagents) to
/// [`TaskTool::subagents`] so the session orders task calls by what their children may do;
/// its children use `tools` (which must not hold it).
#[derive(Clone)]
pub struct TaskTool {
    client: Client,
    children: Children,
    tools: Toolbox,
    /// The tools as they are now, asked for when a child starts ([`TaskTool::current_tools`]).
    current: Option<CurrentTools>,
    approve: Option<ApproveFn>,
}

impl std::fmt::Debug for TaskTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskTool")
            .field("children", &self.children)
            .finish_non_exhaustive()
    }
}

impl TaskTool {
    /// A task tool whose children (what they are made of: see [`Children`]) talk through
    /// `client` and run `tools`; their events go to the runner that runs the call
    /// ([`ToolContext::children`]). Their approval requests are
    /// answered [`Approval::Unattended`](hrns_core::session::Approval::Unattended) (denied)
    /// until [`TaskTool::approve_with`].
    pub fn new(client: Client, children: Children, tools: Toolbox) -> Self {
        TaskTool {
            client,
            children,
            tools,
            current: None,
            approve: None,
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
    pub fn subagents(&self) -> Subagents {
        self.children.subagents()
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
        let current = self.current.as_ref().map(|current| current());
        let all = current.as_ref().unwrap_or(&self.tools);
        let child = match self.children.start_with(arguments, &all.specs()) {
            Ok(child) => child,
            Err(refusal) => return refusal,
        };
        let mut tools = all.clone();
        tools.retain(|name| child.tool_names.iter().any(|n| n == name));
        // The child's cancel token is this call's: a cancelled parent turn or an aborted call
        // cancels the child. Its runner gives it its own usage sink (no task inside a task).
        let child_ctx = ctx.clone();
        let mut runner = Runner::new(self.client.clone(), tools, child_ctx);
        let agent = &child.plan.agent.name;
        if let Some(approve) = self.approve.clone() {
            let agent = agent.clone();
            runner = runner.approve_with(move |run| approve(agent.clone(), run));
        }
        let mut session = Session::new(child.config);
        // The child's events (its tokens among them) go to the parent's runner, which hands
        // them to the parent session: they come out of its poll, before this call's end.
        let link = ctx.children.clone();
        let outcome = runner
            .run(&mut session, &child.plan.prompt, |event: &Event| {
                link.send(ChildEvent {
                    parent_call_id: call_id.to_owned(),
                    agent: agent.clone(),
                    event: event.clone(),
                });
            })
            .await;
        self.children.result(agent, outcome, session.messages())
    }
}

impl Tool for TaskTool {
    fn spec(&self) -> ToolSpec {
        self.children.spec()
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
