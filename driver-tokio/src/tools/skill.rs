//! `load_skill`: the instructions of a skill the CLI discovered.

use crate::tool::ToolContext;
use hrns_core::skill::{Skill, load_skill, resolve_skills};
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{LOAD_SKILL, LoadSkillArgs};

/// `load_skill` over a fixed set of skills: the body of a skill by its name, as
/// [`hrns_core::skill::load_skill`] answers. The CLI discovers the SKILL.md files; this tool
/// reads no files.
#[derive(Debug, Clone, Default)]
pub struct LoadSkill {
    skills: Vec<Skill>,
}

impl LoadSkill {
    /// Returns the tool for these skills; of several with the same name (compared without
    /// regard to case), the first one given is kept, as [`resolve_skills`] does.
    pub fn new(skills: impl IntoIterator<Item = Skill>) -> Self {
        let skills = resolve_skills(skills.into_iter().collect(), Vec::new());
        LoadSkill { skills }
    }

    /// The skills this tool serves, for the system prompt's list.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }
}

builtin_tool!(LoadSkill: LOAD_SKILL, LoadSkillArgs => run);

async fn run(
    tool: &LoadSkill,
    a: LoadSkillArgs,
    _: &ToolContext,
) -> Result<ToolOutput, ToolOutput> {
    Ok(load_skill(&tool.skills, &a.name))
}
