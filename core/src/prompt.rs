//! The system prompt: the agent's prompt, facts about the environment, and the skills.
//!
//! The caller gathers the facts (working directory, OS, today's date) and hands them in; the
//! same context always gives the same text, byte for byte. The shape:
//!
//! ```text
//! {agent prompt}
//!
//! # Environment
//! - Working directory: /home/me/project
//! - Operating system: linux
//! - Date: 2025-01-31
//!
//! # Project instructions
//! {how to weigh them}
//!
//! ## /home/me/project/AGENTS.md
//! {its text}
//!
//! # Skills
//! {how to use them}
//! - release-notes: Writes release notes from the git log since the last tag.
//! ```
//!
//! The date line is left out when no date is given. The instructions section appears only when
//! instruction files were found ([`crate::instructions`]), in the order given. The skills section appears only when there
//! are skills and `load_skill` is among the tools offered, since the model could not load them
//! otherwise.

use crate::agent::Agent;
use crate::instructions::InstructionFile;
use crate::skill::Skill;
use crate::tool::builtin::LOAD_SKILL;
use std::fmt::Write as _;

/// What the system prompt is composed from.
#[derive(Debug, Clone, Copy)]
pub struct PromptContext<'a> {
    /// The agent in use; its prompt comes first.
    pub agent: &'a Agent,
    /// The skills found, in the order to list them.
    pub skills: &'a [Skill],
    /// The working directory, as the user would write it.
    pub cwd: &'a str,
    /// The operating system (`linux`, `macos`, …).
    pub os: &'a str,
    /// Today's date (`2025-01-31`), if the caller wants the model to know it.
    pub date: Option<&'a str>,
    /// The names of the tools offered to the model (after the agent's filter).
    pub tools: &'a [String],
    /// The project instruction files (`AGENTS.md`), outermost first.
    pub instructions: &'a [InstructionFile],
}

/// The heading and instruction of the project instructions section.
const INSTRUCTIONS_INTRO: &str = "# Project instructions\n\
The user and the project give these instructions in AGENTS.md files. Follow them. When two \
disagree, the one listed later (closer to the working directory) wins; the user's direct \
requests win over all of them.\n";

/// The heading and instruction of the skills section.
const SKILLS_INTRO: &str = "# Skills\n\
Skills are instructions for particular tasks. When a task matches a skill's description, call \
`load_skill` with the skill's name to read its instructions before you start, and follow them.\n";

/// The section on plans, when `update_plan` is offered.
const PLANS: &str = "# Plans\n\
For a task of several steps (a change across files, a feature, a long investigation), call \
`update_plan` first with the steps, then again whenever a step starts or is done: one step \
in_progress at a time, each finished step completed. The user watches this plan. Skip it for \
a simple question or a one-step change.\n";

/// Composes the system prompt for `ctx`; see the [module documentation](self) for its shape.
pub fn compose_system_prompt(ctx: &PromptContext<'_>) -> String {
    let mut out = String::new();
    let agent_prompt = ctx.agent.prompt.trim();
    if !agent_prompt.is_empty() {
        out.push_str(agent_prompt);
        out.push_str("\n\n");
    }

    out.push_str("# Environment\n");
    // Writing to a String cannot fail.
    let _ = writeln!(out, "- Working directory: {}", no_breaks(ctx.cwd));
    let _ = writeln!(out, "- Operating system: {}", no_breaks(ctx.os));
    if let Some(date) = ctx.date {
        let _ = writeln!(out, "- Date: {}", no_breaks(date));
    }

    if !ctx.instructions.is_empty() {
        out.push('\n');
        out.push_str(INSTRUCTIONS_INTRO);
        for file in ctx.instructions {
            let _ = write!(
                out,
                "\n## {}\n{}\n",
                no_breaks(&file.path),
                file.text.trim()
            );
        }
    }

    let can_load = ctx.tools.iter().any(|t| t == LOAD_SKILL);
    if can_load && !ctx.skills.is_empty() {
        out.push('\n');
        out.push_str(SKILLS_INTRO);
        for skill in ctx.skills {
            let _ = writeln!(
                out,
                "- {}: {}",
                one_line(&skill.name),
                one_line(&skill.description)
            );
        }
    }

    if ctx.tools.iter().any(|t| t == crate::plan::UPDATE_PLAN) {
        out.push('\n');
        out.push_str(PLANS);
    }

    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out
}

/// `text` with every run of whitespace (line breaks included) made one space, so a multi-line
/// description stays one list item.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` with line breaks made spaces and nothing else changed (a path may hold any spaces).
fn no_breaks(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests;
