//! Subagents: the `task` tool runs a child [`Session`](crate::Session) for one self-contained
//! job and hands its final answer back as the tool's result.
//!
//! Everything here is a decision; a driver's task tool does the running. It holds a
//! [`Children`], which decodes the call ([`plan_child`]) and builds the child's configuration
//! ([`child_config`]); the driver drives the child session to its end with the parent's
//! transport, hands the child's events, tagged with the parent call id ([`ChildEvent`]), to the
//! parent's runner, which gives them to the parent session
//! ([`Session::handle_child_event`](crate::Session::handle_child_event)): they come out of the
//! parent's own `poll` as [`Event::Child`], and the child's usage counts in the parent's. The
//! driver turns the outcome into the result ([`Children::result`], [`child_result`]). Nothing
//! here calls back: a child's events are data the parent's owner reads like its own.
//!
//! Rules: rights never grow — a child gets at most its parent's tools and approval policy
//! (a read-only parent's children are read-only, whatever agent the call names); the default
//! agent is [`DEFAULT_AGENT`]; an agent that can change files or run commands
//! is refused when the parent's approval policy denies that, and tools the policy denies are
//! left out of the child's; a read-only agent ([`Agent::is_read_only`]) gets only the tools
//! that change nothing (the parent's MCP tools included, by their effect); the child starts with a fresh history holding
//! only the prompt, uses the parent's provider, policy and retries, its agent's model or else the
//! parent's, and has its own
//! step limit ([`CHILD_MAX_STEPS`]); it never gets the `task` tool itself (no nesting).

mod children;

pub use children::{ChildStart, Children, PromptFn, StatedImagesFn};

use crate::agent::{Agent, find_agent};
use crate::session::{
    ApprovalPolicy, Event, ImageInputs, PolicyDecision, SessionConfig, TurnOutcome,
};
use crate::tool::args::decode_args;
use crate::tool::{Effect, ToolOutput, ToolSpec};
use crate::wire::{Message, Role, Usage};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The tool's name.
pub const TASK_TOOL: &str = "task";
/// The agent a task runs when the call names none.
pub const DEFAULT_AGENT: &str = "Explorer";
/// Model requests a child may make in its one turn.
pub const CHILD_MAX_STEPS: u32 = 30;
/// Most characters of a child's answer passed back (head and tail kept).
pub const MAX_RESULT_CHARS: usize = 32 * 1024;

/// The spec of the `task` tool, listing the agents a call may name. Its effect is
/// [`Effect::ReadOnly`]: the call itself changes nothing, and what the child may do is checked
/// against the approval policy when it starts ([`plan_child`]) and again for each of its calls.
pub fn task_spec(agents: &[Agent]) -> ToolSpec {
    let list: Vec<String> = agents
        .iter()
        .map(|a| format!("- {}: {}", a.name, a.description))
        .collect();
    ToolSpec {
        name: TASK_TOOL.to_owned(),
        description: format!(
            "Runs a subagent on a self-contained job and returns its final answer. The subagent \
             starts with no memory of this conversation: put everything it needs in `prompt`. \
             Use it for searches or studies that would fill this conversation with material you \
             only need a summary of. Several task calls in one answer may run at the same time. \
             Agents (default {DEFAULT_AGENT}):\n{}",
            list.join("\n")
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "A few words on the job, shown to the user."},
                "prompt": {"type": "string", "description": "The complete instructions for the subagent."},
                "agent": {"type": "string", "description": "The agent to run; default Explorer."}
            },
            "required": ["description", "prompt"],
            "additionalProperties": false
        }),
        effect: Effect::ReadOnly,
    }
}

/// What `task` calls of a session may run: the agents a call may name, the tools a child
/// may be given (the full set before any agent's filter) and the parent's own agent, whose
/// rights no child exceeds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Subagents {
    /// The agents, as [`plan_child`] takes them.
    pub agents: Vec<Agent>,
    /// The tools a child may get, as [`plan_child`] takes them (`available`).
    pub tools: Vec<ToolSpec>,
    /// The parent's agent, as [`plan_child`] takes it (`parent`): a child gets no tool it
    /// denies. `None` sets no ceiling beyond the policy (a library user's choice).
    pub parent: Option<Agent>,
}

/// What a `task` call is to the ordering of its answer's calls: the strongest of
/// [`Effect::Exec`] and [`Effect::Write`] among its child's tools, so that a child that may
/// change files or run commands runs alone (after the calls before it, before the calls after
/// it), as such a call of the parent's would; [`Effect::ReadOnly`] otherwise, so read-only
/// children run at the same time. A child's `web_fetch` does not make it run alone: nothing
/// the other calls read changes. A call that will be refused ([`plan_child`] fails) is
/// read-only too: it does nothing.
pub fn call_effect(arguments: &str, subagents: &Subagents, policy: ApprovalPolicy) -> Effect {
    let parent = subagents.parent.as_ref();
    let Ok(plan) = plan_child(
        arguments,
        &subagents.agents,
        parent,
        policy,
        &subagents.tools,
    ) else {
        return Effect::ReadOnly;
    };
    let has = |effect: Effect| plan.tools.iter().any(|t| t.effect == effect);
    if has(Effect::Exec) {
        Effect::Exec
    } else if has(Effect::Write) {
        Effect::Write
    } else {
        Effect::ReadOnly
    }
}

/// The arguments of a `task` call.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskArgs {
    description: String,
    prompt: String,
    #[serde(default)]
    agent: Option<String>,
}

/// A child to run, as decided from a `task` call.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildPlan {
    /// The agent the child runs as.
    pub agent: Agent,
    /// The job in a few words, for the user.
    pub description: String,
    /// The child's only message.
    pub prompt: String,
    /// The child's tools: the tools both the agent and the parent's agent allow and the
    /// policy does not deny, without `task`.
    pub tools: Vec<ToolSpec>,
}

/// Decides what a `task` call runs, from its arguments, the known `agents`, the parent's
/// agent (`parent`), its approval `policy` and the tools a child may get (`available`). An
/// error is the result the model gets: bad arguments, an unknown agent, or an agent the policy
/// does not allow.
///
/// Rights never grow: the child gets only tools the parent's agent allows too, and a read-only
/// parent ([`Agent::is_read_only`]) makes the child read-only whatever agent it names — an
/// Explorer asking for a Builder gets a Builder that reads, not one that writes or runs
/// commands.
pub fn plan_child(
    arguments: &str,
    agents: &[Agent],
    parent: Option<&Agent>,
    policy: ApprovalPolicy,
    available: &[ToolSpec],
) -> Result<ChildPlan, ToolOutput> {
    let args: TaskArgs =
        decode_args(TASK_TOOL, arguments).map_err(|e| ToolOutput::error(e.to_string()))?;
    if args.prompt.trim().is_empty() {
        return Err(ToolOutput::error(
            "`prompt` is empty: give the subagent complete instructions.",
        ));
    }
    let wanted = args
        .agent
        .as_deref()
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .unwrap_or(DEFAULT_AGENT);
    let Some(agent) = find_agent(agents, wanted) else {
        let names: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
        return Err(ToolOutput::error(format!(
            "There is no agent `{wanted}`. Agents: {}.",
            names.join(", ")
        )));
    };
    // A read-only agent gets no tool that changes files or runs commands, by the effect the
    // tool declares (an MCP server's tool without `readOnlyHint` declares one): its map cannot
    // name every such tool. A read-only parent's filter keeps them from its children too.
    let allowed: Vec<&ToolSpec> = available
        .iter()
        .filter(|t| t.name != TASK_TOOL && agent.tools.offers(t))
        .filter(|t| parent.is_none_or(|p| p.tools.offers(t)))
        .collect();
    // An agent made to change files or run commands is refused where that is denied; a lesser
    // tool the policy denies (web_fetch under read-only) is only left out.
    if let Some(denied) = allowed.iter().find(|t| {
        matches!(t.effect, Effect::Write | Effect::Exec)
            && policy.decide(t.effect) == PolicyDecision::Deny
    }) {
        return Err(ToolOutput::error(format!(
            "The agent `{}` may use `{}`, which the current approval policy does not allow. \
             Run a read-only agent ({DEFAULT_AGENT} or Planner) instead.",
            agent.name, denied.name
        )));
    }
    let tools = allowed
        .into_iter()
        .filter(|t| policy.decide(t.effect) != PolicyDecision::Deny)
        .cloned()
        .collect();
    Ok(ChildPlan {
        agent: agent.clone(),
        description: args.description.trim().to_owned(),
        prompt: args.prompt,
        tools,
    })
}

/// The child's session configuration: the parent's provider, options, policy and retries, the
/// agent's model (`model:` in its `AGENT.md`) or else the parent's, the agent's `system_prompt`,
/// the plan's tools (never `task`) and the child step limit.
///
/// Whether the child is sent images is decided for its own model: the parent's setting when
/// the model is the parent's, else what the configuration states for that model of the
/// parent's provider (`stated_images`, as [`crate::config::Config::image_inputs`] reads it),
/// else [`ImageInputs::known_for`] — so a text-only parent does not withhold images from a
/// vision child, nor a vision parent send them to a text-only child.
pub fn child_config(
    parent: &SessionConfig,
    plan: &ChildPlan,
    system_prompt: String,
    stated_images: &dyn Fn(&str) -> Option<ImageInputs>,
) -> SessionConfig {
    let mut config = parent.clone();
    config.system_prompt = Some(system_prompt);
    if let Some(model) = &plan.agent.model {
        if *model != parent.model {
            config.images = stated_images(model).unwrap_or_else(|| ImageInputs::known_for(model));
        }
        config.model = model.clone();
    }
    config.tools = plan.tools.clone();
    config.subagents = None; // no task inside a task
    // The parent's hooks watch the child's calls too; its end is a `SubagentStop`.
    config.hooks.role = crate::hooks::AgentRole::Subagent;
    config.max_steps = CHILD_MAX_STEPS.min(parent.max_steps.max(1));
    config
}

/// The tool result for a child that ended with `outcome` after writing `history`: its final
/// answer (capped, head and tail kept) when it finished, otherwise an error saying why, with
/// what it had answered so far.
pub fn child_result(agent: &str, outcome: &TurnOutcome, history: &[Message]) -> ToolOutput {
    let answer = history
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant && m.tool_calls.is_empty())
        .map(Message::text)
        .unwrap_or_default();
    let answer = crate::tool::truncate::truncate_head_tail(answer.trim(), MAX_RESULT_CHARS);
    match outcome {
        TurnOutcome::Finished if answer.is_empty() => ToolOutput::error(format!(
            "The subagent `{agent}` finished without an answer."
        )),
        TurnOutcome::Finished => ToolOutput::ok(answer.into_owned()),
        TurnOutcome::Failed(error) => {
            let mut text = format!("The subagent `{agent}` failed: {error}");
            if !answer.is_empty() {
                text.push_str("\nIts last answer before that:\n");
                text.push_str(&answer);
            }
            ToolOutput::error(text)
        }
        TurnOutcome::Cancelled => ToolOutput::error(format!(
            "The subagent `{agent}` was cancelled before it answered."
        )),
    }
}

/// A turn's usage with its children's added (`None` stays `None` only when nobody reported
/// any), so that the tokens a turn cost include its subagents'.
pub fn add_usage(parent: Option<Usage>, children: &[Usage]) -> Option<Usage> {
    if parent.is_none() && children.is_empty() {
        return None;
    }
    let mut total = parent.unwrap_or_default();
    let mut cached = crate::pricing::cached_tokens(&total);
    for child in children {
        let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
        total.prompt_tokens = sum(total.prompt_tokens, child.prompt_tokens);
        total.completion_tokens = sum(total.completion_tokens, child.completion_tokens);
        total.total_tokens = sum(total.total_tokens, child.total_tokens);
        cached = sum(cached, crate::pricing::cached_tokens(child));
    }
    // The cached share travels with the sum, so that its cost stays right.
    if let Some(cached) = cached.filter(|_| !children.is_empty()) {
        total.extra.remove("prompt_cache_hit_tokens");
        total.extra.insert(
            "prompt_tokens_details".into(),
            serde_json::json!({ "cached_tokens": cached }),
        );
    }
    Some(total)
}

/// A child session's event, tagged with the `task` call that runs it: what a driver's task
/// tool hands the parent's runner, and what [`Event::Child`] carries out of the parent's
/// `poll`. Serialized as `{"parent_call_id":…,"agent":…,"event":{…}}`; a front end that
/// prints the event's own object with the two fields added (`exec --json`) flattens it
/// itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildEvent {
    /// The id of the parent's `task` call.
    pub parent_call_id: String,
    /// The child's agent.
    pub agent: String,
    /// The child's event.
    pub event: Event,
}

#[cfg(test)]
mod tests;
