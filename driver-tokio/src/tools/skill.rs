//! `load_skill`: the instructions of a discovered skill, read from its SKILL.md.

use crate::tool::ToolContext;
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{LOAD_SKILL, LoadSkillArgs};
use hrns_core::tool::files::{FileAction, MAX_FILE_BYTES, io_failure, too_large};
use hrns_core::tool::skill::{render_skill, unknown_skill};
use std::path::PathBuf;

/// `load_skill` over a fixed set of skills (the CLI discovers them).
#[derive(Debug, Clone, Default)]
pub struct LoadSkill {
    skills: Vec<(String, PathBuf)>,
}

impl LoadSkill {
    /// The skills by name, each with the path of its SKILL.md.
    pub fn new(skills: Vec<(String, PathBuf)>) -> Self {
        LoadSkill { skills }
    }
}

builtin_tool!(LoadSkill: LOAD_SKILL, LoadSkillArgs => load_skill);

async fn load_skill(
    tool: &LoadSkill,
    a: LoadSkillArgs,
    _: &ToolContext,
) -> Result<ToolOutput, ToolOutput> {
    let Some((name, path)) = tool.skills.iter().find(|(n, _)| *n == a.name) else {
        let known: Vec<&str> = tool.skills.iter().map(|(n, _)| n.as_str()).collect();
        return Err(unknown_skill(&a.name, &known));
    };
    let shown = path.display().to_string();
    let failed = |e: std::io::Error| io_failure(FileAction::Read, &shown, &e);
    let meta = tokio::fs::metadata(path).await.map_err(failed)?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large(&shown, meta.len()));
    }
    let bytes = tokio::fs::read(path).await.map_err(failed)?;
    Ok(render_skill(name, &String::from_utf8_lossy(&bytes)))
}
