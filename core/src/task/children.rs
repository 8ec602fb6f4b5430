//! [`Children`]: the half of a `task` tool that is the same in every driver — what a child is
//! made of (the parent's configuration, the agents, the prompt composer) and what the model is
//! told — so that a driver's task tool only drives the child's session and hands its events
//! to the parent's runner ([`ChildEvent`](super::ChildEvent)).

use super::{ChildPlan, Subagents, child_config, child_result, plan_child, task_spec};
use crate::agent::Agent;
use crate::session::{ImageInputs, SessionConfig, SessionError, TurnOutcome};
use crate::tool::{ToolOutput, ToolSpec};
use crate::wire::Message;
use std::fmt;
use std::sync::Arc;

/// Composes a child's system prompt from its agent and the names of its tools.
pub type PromptFn = Arc<dyn Fn(&Agent, &[String]) -> String + Send + Sync>;
/// What the configuration states about whether a model of the parent's provider takes images
/// (`None` when it says nothing); see [`child_config`].
pub type StatedImagesFn = Arc<dyn Fn(&str) -> Option<ImageInputs> + Send + Sync>;
/// What a task tool's children are made of. A driver's task tool holds one, asks it for each
/// call's [`ChildStart`], drives the child's session with its own IO, hands the child's events
/// to the parent's runner as [`ChildEvent`](super::ChildEvent)s (the parent session gets them:
/// [`Session::handle_child_event`](crate::Session::handle_child_event)) and turns the end into
/// the tool's result with [`Children::result`]. Cheap to clone.
#[derive(Clone)]
pub struct Children {
    parent: SessionConfig,
    /// The parent's agent: no child gets a tool it denies ([`plan_child`]).
    parent_agent: Option<Agent>,
    agents: Vec<Agent>,
    prompt: PromptFn,
    stated_images: StatedImagesFn,
}

impl fmt::Debug for Children {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Children")
            .field("agents", &self.agents.len())
            .field("model", &self.parent.model)
            .finish_non_exhaustive()
    }
}

/// One child, decided from a `task` call: its plan, its session configuration and the names of
/// the tools it may use (the driver keeps only those of its toolbox).
#[derive(Debug, Clone)]
pub struct ChildStart {
    /// The agent, the job and the tools, as [`plan_child`] decided.
    pub plan: ChildPlan,
    /// The child's session configuration ([`child_config`]).
    pub config: SessionConfig,
    /// The names of the child's tools.
    pub tool_names: Vec<String>,
}

impl Children {
    /// Children that run with the parent's configuration `parent` (provider, model, policy;
    /// its `tools` are what a child may be given) and pick from `agents`. Their system prompts
    /// are their agents' prompts until [`Children::system_prompt`] sets a composer. A child
    /// whose agent names another
    /// model takes images as [`ImageInputs::known_for`] says until
    /// [`Children::stated_images`] tells what the configuration states.
    pub fn new(parent: SessionConfig, agents: Vec<Agent>) -> Self {
        Children {
            parent,
            parent_agent: None,
            agents,
            prompt: Arc::new(|agent, _| agent.prompt.clone()),
            stated_images: Arc::new(|_| None),
        }
    }

    /// Sets what the configuration states about a model of the parent's provider taking
    /// images (typically [`crate::config::Config::image_inputs`] for that provider), for
    /// children whose agent names another model than the parent's.
    #[must_use]
    pub fn stated_images(
        mut self,
        stated: impl Fn(&str) -> Option<ImageInputs> + Send + Sync + 'static,
    ) -> Self {
        self.stated_images = Arc::new(stated);
        self
    }

    /// Sets the parent's agent: a child then gets only tools it allows too, and only
    /// read-only ones when it is read-only ([`plan_child`]). Without it, only the approval
    /// policy bounds a child.
    #[must_use]
    pub fn parent_agent(mut self, agent: Agent) -> Self {
        self.parent_agent = Some(agent);
        self
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

    /// What the parent session needs to know about these children
    /// ([`SessionConfig::subagents`]): set it so the session orders task calls by what their
    /// children may do.
    pub fn subagents(&self) -> Subagents {
        Subagents {
            agents: self.agents.clone(),
            tools: self.parent.tools.clone(),
            parent: self.parent_agent.clone(),
        }
    }

    /// The spec of the `task` tool, listing these agents.
    pub fn spec(&self) -> ToolSpec {
        task_spec(&self.agents)
    }

    /// Decides the child a `task` call with `arguments` runs; an error is the result the model
    /// gets (see [`plan_child`]).
    pub fn start(&self, arguments: &str) -> Result<ChildStart, ToolOutput> {
        self.start_with(arguments, &self.parent.tools)
    }

    /// As [`Children::start`], with the tools a child may be given as they are now
    /// (`available`) instead of those of [`Children::new`]'s parent: an MCP server listed
    /// other tools or stopped since.
    pub fn start_with(
        &self,
        arguments: &str,
        available: &[ToolSpec],
    ) -> Result<ChildStart, ToolOutput> {
        let plan = plan_child(
            arguments,
            &self.agents,
            self.parent_agent.as_ref(),
            self.parent.approval,
            available,
        )?;
        let tool_names: Vec<String> = plan.tools.iter().map(|t| t.name.clone()).collect();
        let config = child_config(
            &self.parent,
            &plan,
            (self.prompt)(&plan.agent, &tool_names),
            &*self.stated_images,
        );
        Ok(ChildStart {
            plan,
            config,
            tool_names,
        })
    }

    /// The tool's result for a child of `agent` whose turn ended with `outcome` after writing
    /// `history` ([`child_result`]); a child that did not start is an error the model reads.
    pub fn result(
        &self,
        agent: &str,
        outcome: Result<TurnOutcome, SessionError>,
        history: &[Message],
    ) -> ToolOutput {
        match outcome {
            Ok(outcome) => child_result(agent, &outcome, history),
            // A fresh session takes its first message; this is a bug, reported to the model.
            Err(e) => ToolOutput::error(format!("The subagent could not start: {e}")),
        }
    }
}
