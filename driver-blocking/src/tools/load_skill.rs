//! `load_skill`: the instructions of a skill the CLI discovered.

use crate::tool::ToolContext;
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{LOAD_SKILL, LoadSkillArgs};

pub use hrns_core::skill::Skill;

/// The `load_skill` tool: returns the body of a skill by its name, as
/// [`hrns_core::skill::load_skill`] answers.
///
/// The skills are given at construction (the CLI discovers the SKILL.md files; this tool
/// reads no files). An unknown name is an error result listing the available names.
#[derive(Debug, Clone, Default)]
pub struct LoadSkill {
    skills: Vec<Skill>,
}

impl LoadSkill {
    /// Returns the tool for these skills; of several with the same name (compared without
    /// regard to case), the first one given is kept, as
    /// [`resolve_skills`](hrns_core::skill::resolve_skills) does.
    pub fn new(skills: impl IntoIterator<Item = Skill>) -> Self {
        let skills = hrns_core::skill::resolve_skills(skills.into_iter().collect(), Vec::new());
        LoadSkill { skills }
    }

    /// The skills this tool serves, for the system prompt's list.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }
}

builtin_tool!(LoadSkill: LOAD_SKILL, LoadSkillArgs => run);

fn run(tool: &LoadSkill, args: LoadSkillArgs, _: &ToolContext) -> Result<ToolOutput, ToolOutput> {
    Ok(hrns_core::skill::load_skill(&tool.skills, &args.name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_util::{call, workspace};
    use serde_json::json;

    fn tool() -> LoadSkill {
        LoadSkill::new([
            Skill::new("pdf", "read PDFs", "Use pdftotext.\n"),
            Skill::new("git", "use git well", "1. commit often\n"),
            Skill::new("PDF", "read PDFs", "shadowed\n"),
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
