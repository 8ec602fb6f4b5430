//! Agents: a named system prompt with the set of tools it may use.
//!
//! hrns has four built-in agents ([`builtin_agents`]), the original hrns's: Builder, with all
//! tools; Explorer, which reads and answers; Planner, which reads and answers with a plan; and
//! Pirate, which reads and answers in a pirate's voice. Users add agents (and replace
//! built-ins, from their home directory only) with `AGENT.md` files (the CLI reads `./.hrns/agents/*/AGENT.md` and
//! `~/.hrns/agents/*/AGENT.md` and hands the text to [`parse_agent_md`]):
//!
//! ```text
//! ---
//! name: Reviewer
//! description: Reviews the current change and reports bugs, without editing.
//! tools:
//!   "*": true
//!   write_file: false
//!   edit_file: false
//! ---
//! You review code changes. …
//! ```
//!
//! `name` is required, `description` optional, the body is the prompt. `tools` maps tool names to
//! `true` or `false`; `"*"` (quoted, since a bare `*` is YAML alias syntax) sets the default for
//! the tools not named. Other keys are ignored, so files written for other harnesses still load.
//! [`resolve_agents`] merges the three sources by name (a project agent never replaces a
//! built-in or user agent), and the chosen agent's [`ToolFilter`] decides which tools are
//! offered to the model.

use crate::frontmatter::{self, FrontmatterError};
use crate::tool::builtin::{EDIT_FILE, RUN_COMMAND, WRITE_FILE};
use crate::tool::{Effect, ToolSpec};
use serde::Deserialize;
use std::collections::BTreeMap;

/// An agent: who the model is told to be and which tools it gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// The name users pick it by (`--agent`, `/agent`); matched case-insensitively.
    pub name: String,
    /// One line on what it is for, shown in `/agents`; may be empty.
    pub description: String,
    /// The agent's part of the system prompt.
    pub prompt: String,
    /// Which tools the agent may use.
    pub tools: ToolFilter,
    /// The model it runs on as a subagent (`model:` in `AGENT.md`); `None` uses the parent's.
    pub model: Option<String>,
    /// Where it was defined.
    pub source: AgentSource,
}

impl Agent {
    /// Whether the agent may use no tool that changes files or runs commands, as Explorer,
    /// Planner and Pirate ([`Effects::ReadOnly`]): it is offered no tool whose declared effect
    /// is [`Effect::Write`] or [`Effect::Exec`] — a built-in, an MCP server's, or one added
    /// later — and its subagents are read-only too.
    pub fn is_read_only(&self) -> bool {
        self.tools.effects() == Effects::ReadOnly
    }
}

/// Where an [`Agent`] was defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentSource {
    /// Built into hrns.
    BuiltIn,
    /// An `AGENT.md` file, by the path the CLI gave.
    File(String),
}

/// Which tools an agent may use: a default for all tools plus per-tool exceptions.
///
/// Built from the frontmatter `tools` map: `"*"` sets the default (allowed when absent) and
/// every other entry overrides it for one tool. So `{"*": true, "run_command": false}` is every
/// tool but `run_command`, `{"*": false, "read_file": true}` is `read_file` only, and
/// `{"run_command": false}` alone is the same as the first. Names of tools that do not exist are
/// kept and do no harm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFilter {
    default: bool,
    overrides: BTreeMap<String, bool>,
    effects: Effects,
}

/// Which effects the tools of an agent may have, whatever their names: a tool declares its
/// effect in its spec ([`ToolSpec::effect`]), so a new tool is kept from a read-only agent
/// without anyone naming it in the agent's definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effects {
    /// Any effect: the names alone decide.
    Any,
    /// Only tools that change nothing: [`Effect::ReadOnly`], and [`Effect::Network`]
    /// (fetching a page changes nothing here). A tool that writes ([`Effect::Write`]) or runs
    /// something ([`Effect::Exec`], which is also what an MCP tool without `readOnlyHint`
    /// declares) is never offered.
    ReadOnly,
}

impl Effects {
    /// Whether a tool with `effect` may be offered.
    pub fn allows(self, effect: Effect) -> bool {
        match (self, effect) {
            (Effects::Any, _) | (Effects::ReadOnly, Effect::ReadOnly | Effect::Network) => true,
            (Effects::ReadOnly, Effect::Write | Effect::Exec) => false,
        }
    }
}

impl ToolFilter {
    /// The key that sets the default.
    pub const WILDCARD: &'static str = "*";

    /// Every tool.
    pub fn all() -> Self {
        ToolFilter {
            default: true,
            overrides: BTreeMap::new(),
            effects: Effects::Any,
        }
    }

    /// Every tool that changes nothing ([`Effects::ReadOnly`]): Explorer's, Planner's and
    /// Pirate's.
    pub fn read_only() -> Self {
        ToolFilter {
            effects: Effects::ReadOnly,
            ..ToolFilter::all()
        }
    }

    /// Every tool but the ones named.
    pub fn all_except(denied: &[&str]) -> Self {
        ToolFilter {
            default: true,
            overrides: denied.iter().map(|n| ((*n).to_owned(), false)).collect(),
            effects: Effects::Any,
        }
    }

    /// The filter a frontmatter `tools` map describes; `None` (no map) allows every tool.
    ///
    /// `edit_file` is newer than the original hrns's agent files: a map that sets `write_file`
    /// but does not name `edit_file` gives `edit_file` the same value, so an old read-only
    /// agent (`write_file: false`) cannot edit files either.
    ///
    /// A map that denies every built-in tool that changes files or runs commands (`write_file`,
    /// `edit_file` and `run_command`) is how an agent file says "read-only": such an agent
    /// gets [`Effects::ReadOnly`], so no other tool with those effects reaches it either.
    pub fn from_map(map: Option<BTreeMap<String, bool>>) -> Self {
        let mut overrides = map.unwrap_or_default();
        if let Some(&write) = overrides.get(WRITE_FILE) {
            overrides.entry(EDIT_FILE.to_owned()).or_insert(write);
        }
        let default = overrides.remove(Self::WILDCARD).unwrap_or(true);
        let mut filter = ToolFilter {
            default,
            overrides,
            effects: Effects::Any,
        };
        if ![WRITE_FILE, EDIT_FILE, RUN_COMMAND]
            .iter()
            .any(|t| filter.allows(t))
        {
            filter.effects = Effects::ReadOnly;
        }
        filter
    }

    /// Which effects the agent's tools may have.
    pub fn effects(&self) -> Effects {
        self.effects
    }

    /// Whether the tool `spec` is offered: its name is allowed ([`ToolFilter::allows`]) and
    /// its declared effect too ([`Effects::allows`]).
    pub fn offers(&self, spec: &ToolSpec) -> bool {
        self.allows(&spec.name) && self.effects.allows(spec.effect)
    }

    /// Whether the tool called `name` is allowed.
    ///
    /// An entry naming the tool exactly wins; otherwise the longest pattern ending in `*` that
    /// the name starts with (`"mcp__github__*": false` covers every tool of the `github` MCP
    /// server); otherwise the default.
    pub fn allows(&self, name: &str) -> bool {
        if let Some(&allowed) = self.overrides.get(name) {
            return allowed;
        }
        self.overrides
            .iter()
            .filter_map(|(pattern, &allowed)| {
                let prefix = pattern.strip_suffix('*')?;
                name.starts_with(prefix).then_some((prefix.len(), allowed))
            })
            .max_by_key(|(len, _)| *len)
            .map_or(self.default, |(_, allowed)| allowed)
    }

    /// Keeps only the offered tools of `tools` ([`ToolFilter::offers`]), in their order.
    pub fn filter(&self, mut tools: Vec<ToolSpec>) -> Vec<ToolSpec> {
        tools.retain(|t| self.offers(t));
        tools
    }
}

impl Default for ToolFilter {
    fn default() -> Self {
        ToolFilter::all()
    }
}

const BUILDER_PROMPT: &str = "\
You are hrns, a coding agent working in the user's terminal on the project in the working \
directory. You can read, list, create and edit files, run commands and fetch web pages.

Understand before you change: read the code involved and follow the project's conventions. \
Make focused changes that do what was asked and nothing more; prefer edit_file for changing \
existing files and write_file for new ones. After a change, build and run the relevant tests or \
checks when the project has them, and fix what you broke. Do not undo changes you did not make, \
and ask before anything destructive or outside the workspace. If the request is unclear, ask \
one short question instead of guessing.

End with a brief summary of what you changed and anything left to do.";

const EXPLORER_PROMPT: &str = "\
You are hrns in Explorer mode: you answer questions about the project in the working directory \
without changing anything. You can read and list files and fetch web pages; you cannot write or \
edit files or run commands.

Look around before answering: list the relevant directories, search for the names involved and \
read the files that matter. Ground every claim in what you read and cite file paths (with line \
numbers where it helps) so the user can check. Say plainly when something is uncertain or could \
not be found instead of guessing. Keep answers as short as the question allows.";

const PLANNER_PROMPT: &str = "\
You are hrns in Planner mode: you design changes to the project in the working directory but do \
not make them. You can read and list files and fetch web pages; you cannot write or edit files \
or run commands.

Study the code involved first. Then answer with a plan: the goal, the files and functions to \
change and how, the order of the steps, the risks and open questions, and how to test the \
result. The plan is your answer in this conversation, not a file. Make it concrete enough that \
someone else (or hrns in Builder mode) can carry it out step by step, and ask the user about \
decisions that are theirs to make.";

const PIRATE_PROMPT: &str = "\
You are hrns in Pirate mode, a playful shipmate who speaks like a pirate: answer in a pirate's \
voice, with nautical turns of phrase and a bit of humour. You can read and list files and fetch \
web pages; you cannot write or edit files or run commands.

The voice is the costume, not the cargo: look at the code before answering, and keep every \
fact, file path, command and line of code exactly right. Keep answers short. When the user asks \
for something serious or precise, give it accurately and only lightly pirate-flavoured.";

/// The built-in agents, in this order: Builder (all tools), Explorer, Planner and Pirate (read
/// only: none of them is offered a tool whose effect writes or runs something, see
/// [`Effects::ReadOnly`]).
pub fn builtin_agents() -> Vec<Agent> {
    let agent = |name: &str, description: &str, prompt: &str, tools| Agent {
        name: name.to_owned(),
        description: description.to_owned(),
        prompt: prompt.to_owned(),
        tools,
        model: None,
        source: AgentSource::BuiltIn,
    };
    vec![
        agent(
            "Builder",
            "Writes and changes code, runs commands and tests; all tools.",
            BUILDER_PROMPT,
            ToolFilter::all(),
        ),
        agent(
            "Explorer",
            "Answers questions about the code; reads, never writes or runs commands.",
            EXPLORER_PROMPT,
            ToolFilter::read_only(),
        ),
        agent(
            "Planner",
            "Studies the code and answers with a step-by-step plan; never writes or runs commands.",
            PLANNER_PROMPT,
            ToolFilter::read_only(),
        ),
        agent(
            "Pirate",
            "Answers in a pirate's voice; reads, never writes or runs commands.",
            PIRATE_PROMPT,
            ToolFilter::read_only(),
        ),
    ]
}

/// The frontmatter fields an `AGENT.md` may have.
#[derive(Deserialize)]
struct AgentMeta {
    name: Option<String>,
    description: Option<String>,
    tools: Option<BTreeMap<String, bool>>,
    model: Option<String>,
}

/// Parses the text of an `AGENT.md` file; `path` is where it came from, for messages and
/// [`AgentSource::File`].
///
/// The frontmatter needs `name` (one line); `description`, `tools` and `model` (the model it runs
/// on as a subagent) are optional, and the body
/// (which may be empty) is the prompt. Errors name the path and, for YAML problems, the line.
pub fn parse_agent_md(text: &str, path: &str) -> Result<Agent, FrontmatterError> {
    let parsed = frontmatter::parse::<AgentMeta>(text, path)?;
    let meta = parsed.meta;
    Ok(Agent {
        name: frontmatter::required_line(meta.name, "name", path)?,
        description: meta.description.unwrap_or_default().trim().to_owned(),
        prompt: parsed.body,
        tools: ToolFilter::from_map(meta.tools),
        model: meta
            .model
            .map(|m| m.trim().to_owned())
            .filter(|m| !m.is_empty()),
        source: AgentSource::File(path.to_owned()),
    })
}

/// Merges agents from all sources: a user agent replaces a built-in of the same name
/// (compared case-insensitively); a project agent never replaces a built-in or a user agent.
///
/// A project's `AGENT.md` is written by whoever wrote the repository (or by a command run in
/// it), so it may add agents but not take the place of one the user relies on: an Explorer
/// that writes files, or a default `task` agent that runs commands. A project agent with a
/// taken name is left out, and the second list returned says so, naming its file, for the
/// caller to show the user.
///
/// The result keeps the built-ins' order, each in place even when replaced, then the other user
/// agents, then the other project agents. Within one list the first agent of a name wins, so the
/// caller should pass each list in a stable order (sorted by path).
pub fn resolve_agents(
    builtins: Vec<Agent>,
    project: Vec<Agent>,
    user: Vec<Agent>,
) -> (Vec<Agent>, Vec<String>) {
    let mut merged: Vec<Agent> = Vec::new();
    let mut warnings = Vec::new();
    for (layer, is_project) in [(builtins, false), (user, false), (project, true)] {
        let mut seen: Vec<String> = Vec::new();
        for agent in layer {
            let key = agent.name.to_lowercase();
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            match merged.iter_mut().find(|a| same_name(&a.name, &agent.name)) {
                Some(slot) if is_project => warnings.push(shadow_warning(&agent, slot)),
                Some(slot) => *slot = agent,
                None => merged.push(agent),
            }
        }
    }
    (merged, warnings)
}

/// Why the project agent `agent` is left out: `taken` has its name.
fn shadow_warning(agent: &Agent, taken: &Agent) -> String {
    let file = match &agent.source {
        AgentSource::File(path) => path.as_str(),
        AgentSource::BuiltIn => "a project agent",
    };
    let whose = match &taken.source {
        AgentSource::BuiltIn => format!("the built-in agent {}", taken.name),
        AgentSource::File(path) => format!("your agent {} ({path})", taken.name),
    };
    format!(
        "{file}: ignored: a project agent may not replace {whose}; give it another `name` to          use it, or copy it to ~/.hrns/agents to replace {} everywhere",
        taken.name
    )
}

/// Finds the agent called `name`, ignoring case.
pub fn find_agent<'a>(agents: &'a [Agent], name: &str) -> Option<&'a Agent> {
    agents.iter().find(|a| same_name(&a.name, name))
}

fn same_name(a: &str, b: &str) -> bool {
    a == b || a.to_lowercase() == b.to_lowercase()
}

#[cfg(test)]
mod tests;
