//! `load_skill`: the instructions of a skill the CLI discovered.

use super::{builtin_spec, refused};
use crate::tool::{Tool, ToolContext};
use hrns_core::tool::args::decode_args;
use hrns_core::tool::builtin::{LOAD_SKILL, LoadSkillArgs};
use hrns_core::tool::{ToolOutput, ToolSpec};

pub use hrns_core::skill::Skill;

/// The `load_skill` tool: returns the body of a skill by its exact name.
///
/// The skills are given at construction (the CLI discovers the SKILL.md files; this tool
/// reads no files). An unknown name is an error result listing the available names.
#[derive(Debug, Clone, Default)]
pub struct LoadSkill {
    skills: Vec<Skill>,
}

impl LoadSkill {
    /// Returns the tool for these skills; of several with the same name, the last one given
    /// is kept (so later sources override earlier ones).
    pub fn new(skills: impl IntoIterator<Item = Skill>) -> Self {
        let mut kept: Vec<Skill> = Vec::new();
        for skill in skills {
            kept.retain(|k| k.name != skill.name);
            kept.push(skill);
        }
        LoadSkill { skills: kept }
    }

    /// The skills this tool serves, for the system prompt's list.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }
}

impl Tool for LoadSkill {
    fn spec(&self) -> ToolSpec {
        builtin_spec(LOAD_SKILL)
    }

    fn run(&self, arguments: &str, _ctx: &ToolContext) -> ToolOutput {
        let args: LoadSkillArgs = match decode_args(LOAD_SKILL, arguments) {
            Ok(args) => args,
            Err(e) => return refused(e),
        };
        hrns_core::skill::load_skill(&self.skills, &args.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_util::{call, workspace};
    use serde_json::json;

    fn tool() -> LoadSkill {
        LoadSkill::new([
            Skill::new("pdf", "read PDFs", "old body"),
            Skill::new("git", "use git well", "1. commit often\n"),
            Skill::new("pdf", "read PDFs", "Use pdftotext.\n"),
            Skill::new("empty", "nothing", ""),
        ])
    }

    #[test]
    fn returns_the_body_of_a_known_skill() {
        let (_dir, ctx) = workspace();
        let tool = tool();
        assert_eq!(tool.skills().len(), 3);
        let out = call(&tool, &ctx, json!({"name": "pdf"}));
        assert_eq!(out, ToolOutput::ok("Use pdftotext.\n"));
        let out = call(&tool, &ctx, json!({"name": "empty"}));
        assert!(
            !out.is_error && out.content.contains("no instructions"),
            "{out:?}"
        );
    }

    #[test]
    fn unknown_names_list_the_available_skills() {
        let (_dir, ctx) = workspace();
        for name in ["nope", "", "../pdf"] {
            let out = call(&tool(), &ctx, json!({ "name": name }));
            assert!(out.is_error, "{name}");
            assert!(
                out.content.contains(&format!("no skill named `{name}`")),
                "{out:?}"
            );
            for known in ["empty", "git", "pdf"] {
                assert!(out.content.contains(known), "{out:?}");
            }
        }
        let out = call(&LoadSkill::default(), &ctx, json!({"name": "x"}));
        assert!(out.is_error && out.content.contains("no skills are available"));
        let out = call(&tool(), &ctx, json!({}));
        assert!(out.is_error && out.content.contains("`name`"));
    }
}
