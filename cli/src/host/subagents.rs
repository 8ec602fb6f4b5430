//! Subagents in the CLI: the `task` tool wired to this run's provider, agents and tools, and
//! how a child's activity is shown (indented on stderr, or JSON lines with `parent_call_id`).

use crate::setup::{Discovered, Setup};
use crate::term::style::Style;
use hrns_blocking::mcp::McpServers;
use hrns_blocking::tools::TaskTool;
use hrns_blocking::{Toolbox, Transport, tools};
use hrns_core::agent::Agent;
use hrns_core::prompt::{PromptContext, compose_system_prompt};
use hrns_core::session::{Event, SessionConfig, ToolStatus};
use hrns_core::skill::Skill;
use hrns_core::task::{self, ChildEvent, Children, StatedImagesFn};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// Whether the run's agent may use `task`.
pub(crate) fn enabled(setup: &Setup) -> bool {
    setup.agent.tools.allows(task::TASK_TOOL)
}

/// `update_plan`, when the run's agent allows it.
pub(crate) fn plan_spec(setup: &Setup) -> Option<hrns_core::tool::ToolSpec> {
    setup
        .agent
        .tools
        .allows(hrns_core::plan::UPDATE_PLAN)
        .then(hrns_core::plan::update_plan_spec)
}

/// The tools a child may get (before its agent's filter and the policy): every built-in and
/// every tool of the parent's MCP servers.
fn child_toolbox(skills: &[Skill], mcp: &McpServers) -> Toolbox {
    let mut all = tools::builtin_toolbox(skills.to_vec());
    let taken: Vec<String> = all.names().map(str::to_owned).collect();
    for tool in mcp.tools(taken.iter().map(String::as_str)) {
        all.add(tool);
    }
    all
}

/// What the parent session knows of its children, so it orders `task` calls by what they may
/// do; `None` when the run's agent may not use `task`.
pub(crate) fn subagents(setup: &Setup, mcp: &McpServers) -> Option<task::Subagents> {
    enabled(setup).then(|| task::Subagents {
        agents: setup.discovered.agents.clone(),
        tools: child_toolbox(&setup.discovered.skills, mcp).specs(),
        parent: Some(setup.agent.clone()),
    })
}

/// A composer of children's system prompts, with this run's skills, directory and
/// instructions.
fn prompt_composer(
    discovered: &Discovered,
    workspace: &Path,
) -> impl Fn(&Agent, &[String]) -> String + Send + Sync + 'static {
    let skills = discovered.skills.clone();
    let instructions = discovered.instructions.clone();
    let cwd = workspace.display().to_string();
    let today = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    move |agent: &Agent, names: &[String]| {
        compose_system_prompt(&PromptContext {
            agent,
            skills: &skills,
            cwd: &cwd,
            os: std::env::consts::OS,
            date: Some(&today[..10]),
            tools: names,
            instructions: &instructions,
        })
    }
}

/// The blocking `task` tool for `exec`: children run on `transport` with every built-in and
/// MCP tool (as the servers are when the child starts) their agent allows (a read-only agent
/// only the read-only ones); their events come out of the parent session's poll
/// ([`Event::Child`]), where `exec` prints and records them. A child whose agent names another model takes images as `stated_images`
/// says for it. No child gets a tool `parent_agent` (the run's agent) denies; `None` only for a
/// replay, which repeats what was recorded.
#[allow(clippy::too_many_arguments)] // each is a different part the children are made of
pub(crate) fn task_tool(
    discovered: &Discovered,
    workspace: &Path,
    parent_agent: Option<&Agent>,
    parent: &SessionConfig,
    stated_images: StatedImagesFn,
    mcp: &Arc<McpServers>,
    transport: Arc<dyn Transport>,
) -> TaskTool {
    let all = child_toolbox(&discovered.skills, mcp);
    let current = {
        let (skills, mcp) = (discovered.skills.clone(), Arc::clone(mcp));
        move || child_toolbox(&skills, &mcp)
    };
    let mut parent = parent.clone();
    parent.tools = all.specs();
    let mut children = Children::new(parent, discovered.agents.clone());
    if let Some(agent) = parent_agent {
        children = children.parent_agent(agent.clone());
    }
    let children = children
        .system_prompt(prompt_composer(discovered, workspace))
        .stated_images(move |model| stated_images(model));
    TaskTool::new(transport, children, all).current_tools(current)
}

/// The async `task` tool for the interactive UI: children run on `client` with every built-in
/// and MCP tool (as the servers are when the child starts) their agent allows (a read-only
/// agent only the read-only ones); their events come out of the parent session's poll
/// ([`Event::Child`]), and so do their approval questions, which the front end answers as it
/// answers the session's own ([`hrns_tokio::Runner::handle_answer`]). A child whose
/// agent names another model takes images as `stated_images` says for it. No child gets a tool
/// `parent_agent` (the session's agent) denies.
#[allow(clippy::too_many_arguments)] // each is a different part the children are made of
pub(crate) fn tokio_task_tool(
    discovered: &Discovered,
    workspace: &Path,
    parent_agent: &Agent,
    parent: &SessionConfig,
    stated_images: StatedImagesFn,
    mcp: &Arc<McpServers>,
    client: hrns_tokio::Client,
) -> hrns_tokio::tools::TaskTool {
    // `web_fetch` gets a client of its own that always verifies certificates.
    let http = hrns_tokio::HttpClient::new(&hrns_tokio::ClientConfig::default());
    let skills = discovered.skills.clone();
    let toolbox = {
        let mcp = Arc::clone(mcp);
        move || {
            let mut all = hrns_tokio::tools::builtin_toolbox(http.clone(), skills.clone());
            let taken: Vec<String> = all.names().map(str::to_owned).collect();
            for tool in mcp.tools(taken.iter().map(String::as_str)) {
                all.add(tool);
            }
            all
        }
    };
    let all = toolbox();
    let mut parent = parent.clone();
    parent.tools = all.specs();
    let children = Children::new(parent, discovered.agents.clone())
        .parent_agent(parent_agent.clone())
        .system_prompt(prompt_composer(discovered, workspace))
        .stated_images(move |model| stated_images(model));
    hrns_tokio::tools::TaskTool::new(client, children, all).current_tools(toolbox)
}

/// A child's activity, indented under the parent's `task` line: its start, its tool calls,
/// their failures, and how it ended. Text from the model and tools is stripped of terminal
/// control sequences, then redacted (the other way round, a key split by control characters
/// into pieces too short to recognise would be joined on screen).
pub(crate) fn print_human(child: &ChildEvent, s: Style, err: &mut impl Write) {
    let clean = |t: &str| -> String {
        crate::host::redact::redact(&crate::term::safe_text::safe(t)).into_owned()
    };
    let agent = &clean(&child.agent);
    let bar = s.dim("  │");
    let line = match &child.event {
        Event::TurnStarted { .. } => format!(
            "{} {}",
            s.dim("  ┌"),
            s.harness(&format!("subagent {agent}"))
        ),
        Event::ToolCall {
            name, arguments, ..
        } => format!(
            "{bar} {} {} {}",
            s.harness("●"),
            s.tool(&clean(&crate::exec::output::tool_label(name))),
            s.args(&crate::exec::output::one_line(&clean(arguments), 80))
        ),
        Event::ToolResult { status, output, .. }
            if *status != ToolStatus::Ok || output.is_error =>
        {
            format!(
                "{bar}   {} {}",
                s.dim("⎿"),
                s.error(&crate::exec::output::one_line(&clean(&output.content), 100))
            )
        }
        Event::TurnFinished { .. } => format!(
            "{} {}",
            s.dim("  └"),
            s.harness(&format!("{agent} answered"))
        ),
        Event::TurnFailed { error } => format!(
            "{} {}",
            s.dim("  └"),
            s.error(&format!("{agent} failed: {}", clean(&error.to_string())))
        ),
        Event::TurnCancelled => format!(
            "{} {}",
            s.dim("  └"),
            s.error(&format!("{agent} cancelled"))
        ),
        Event::RequestStarted { .. }
        | Event::ToolResult { .. }
        | Event::TextDelta { .. }
        | Event::ReasoningDelta { .. }
        | Event::RefusalDelta { .. }
        | Event::ToolCallStreaming { .. }
        | Event::ApprovalRequested { .. }
        | Event::Usage { .. }
        | Event::Retry { .. }
        | Event::OptionDropped { .. }
        | Event::ToolsChanged { .. }
        | Event::ContextCompacted { .. }
        | Event::PlanUpdated { .. }
        | Event::Message { .. }
        | Event::Checkpoint { .. }
        | Event::CheckpointFailed { .. }
        | Event::Hook { .. }
        | Event::Child(_) => return,
    };
    let _ = writeln!(err, "{line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key split by control characters into pieces too short to recognise is joined once
    /// they go: they must go before the text is redacted.
    #[test]
    fn a_childs_key_split_by_control_characters_is_not_shown() {
        let key = "sk-sub-0123456789abcdefXY";
        let mut secrets = hrns_core::secrets::Secrets::new();
        secrets.add(key);
        crate::host::redact::remember(&secrets);
        let child = ChildEvent {
            parent_call_id: "c1".into(),
            agent: "Builder".into(),
            event: Event::ToolCall {
                id: "t1".into(),
                name: "run_command".into(),
                arguments: "sk-sub-\x07012345\x076789ab\x07cdefXY".into(),
            },
        };
        let mut out = Vec::new();
        print_human(&child, Style::plain(), &mut out);
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("[redacted]"), "{out}");
        assert!(!out.contains("0123456789"), "{out}");
    }
}
