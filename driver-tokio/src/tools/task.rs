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
use crate::runner::Runner;
use crate::tool::{Tool, ToolContext, ToolFuture, Toolbox};
use hrns_core::session::{Approval, Event, PARENT_STOPPED, Question, Session};
use hrns_core::task::{self, ChildEvent, Children, Subagents};
use hrns_core::tool::{ToolOutput, ToolSpec};
use std::sync::Arc;

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
    /// ([`ToolContext::children`]), and so do their approval questions: they come out of the
    /// parent session's poll, its owner answers them as it answers its own
    /// ([`Runner::handle_answer`]), and the child awaits the answer meanwhile.
    pub fn new(client: Client, children: Children, tools: Toolbox) -> Self {
        TaskTool {
            client,
            children,
            tools,
            current: None,
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
        // Its questions went out with its events (through the parent's session); the answer
        // comes back to this call's inbox. No answer can come once the call stopped: denied.
        let inbox = Arc::new(tokio::sync::Mutex::new(ctx.children.listen(call_id)));
        let runner = Runner::new(self.client.clone(), tools, child_ctx).approve_with(
            move |question: Question| {
                let inbox = Arc::clone(&inbox);
                async move {
                    let answer = inbox.lock().await.wait(question.call_id()).await;
                    answer.unwrap_or(Approval::Deny {
                        reason: Some(PARENT_STOPPED.to_owned()),
                    })
                }
            },
        );
        let mut runner = runner;
        let agent = &child.plan.agent.name;
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
