//! Skills: instructions for particular tasks that the model loads when it needs them.
//!
//! A skill is a `SKILL.md` file in a directory of its own (the CLI reads
//! `~/.agents/skills/*/SKILL.md` and `./.agents/skills/*/SKILL.md` and hands the text to
//! [`parse_skill_md`]):
//!
//! ```text
//! ---
//! name: release-notes
//! description: Writes release notes from the git log since the last tag.
//! ---
//! 1. Run `git describe --tags --abbrev=0` to find the last tag. …
//! ```
//!
//! Only names and descriptions go into the system prompt (see [`crate::prompt`]), so many skills
//! cost few tokens; the model calls the `load_skill` tool to read a body, answered by
//! [`load_skill`].

use crate::frontmatter::{self, FrontmatterError};
use crate::tool::ToolOutput;
use serde::Deserialize;
use std::path::Path;

/// A skill: a name and description for the system prompt, and the instructions to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// The name the model loads it by.
    pub name: String,
    /// When to use it, written for the model; never empty.
    pub description: String,
    /// The instructions: the file after its frontmatter.
    pub body: String,
    /// The `SKILL.md` it came from, as the CLI gave it.
    pub path: String,
}

impl Skill {
    /// A skill from its parts, not read from a file (embedders, tests).
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        body: impl Into<String>,
    ) -> Self {
        Skill {
            name: name.into(),
            description: description.into(),
            body: body.into(),
            path: String::new(),
        }
    }
}

/// The frontmatter fields a `SKILL.md` may have.
#[derive(Deserialize)]
struct SkillMeta {
    name: Option<String>,
    description: Option<String>,
}

/// Parses the text of a `SKILL.md` file found at `path`.
///
/// `description` is required: the model picks skills by it, so a skill without one would never
/// be used. `name` defaults to the name of the directory holding the file (`…/pdf/SKILL.md` is
/// `pdf`), the convention skill directories follow; it must be one line. Errors name the path
/// and, for YAML problems, the line. `path` is only looked at as text, never opened.
pub fn parse_skill_md(text: &str, path: &str) -> Result<Skill, FrontmatterError> {
    let parsed = frontmatter::parse::<SkillMeta>(text, path)?;
    let meta = parsed.meta;
    let name = match meta.name {
        Some(name) if !name.trim().is_empty() => Some(name),
        _ => directory_name(path),
    };
    Ok(Skill {
        name: frontmatter::required_line(name, "name", path)?,
        description: frontmatter::required(meta.description, "description", path)?,
        body: parsed.body,
        path: path.to_owned(),
    })
}

/// The name of the directory that holds the file at `path`, if it has one.
fn directory_name(path: &str) -> Option<String> {
    let dir = Path::new(path).parent()?.file_name()?;
    Some(dir.to_string_lossy().into_owned())
}

/// Merges skills from the project and the user: a project skill replaces a user skill of the
/// same name (compared case-insensitively). Project skills come first; within one list the first
/// skill of a name wins.
pub fn resolve_skills(project: Vec<Skill>, user: Vec<Skill>) -> Vec<Skill> {
    let mut merged: Vec<Skill> = Vec::new();
    for skill in project.into_iter().chain(user) {
        if find_skill(&merged, &skill.name).is_none() {
            merged.push(skill);
        }
    }
    merged
}

/// Finds the skill called `name`: an exact match first, then one that differs only in case.
pub fn find_skill<'a>(skills: &'a [Skill], name: &str) -> Option<&'a Skill> {
    let name = name.trim();
    skills.iter().find(|s| s.name == name).or_else(|| {
        let lower = name.to_lowercase();
        skills.iter().find(|s| s.name.to_lowercase() == lower)
    })
}

/// The answer to a `load_skill` call: the skill's body, or an error that lists the skills there
/// are.
pub fn load_skill(skills: &[Skill], name: &str) -> ToolOutput {
    match find_skill(skills, name) {
        Some(skill) if skill.body.is_empty() => ToolOutput::ok(format!(
            "The skill `{}` has no instructions beyond its description.",
            skill.name
        )),
        Some(skill) => ToolOutput::ok(skill.body.clone()),
        None if skills.is_empty() => ToolOutput::error(format!(
            "There is no skill named `{name}`; no skills are available."
        )),
        None => {
            let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
            ToolOutput::error(format!(
                "There is no skill named `{name}`. Available skills: {}.",
                names.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests;
