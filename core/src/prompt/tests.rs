use super::*;
use crate::agent::{AgentSource, ToolFilter, builtin_agents};

fn agent(prompt: &str) -> Agent {
    Agent {
        name: "Test".into(),
        description: String::new(),
        prompt: prompt.into(),
        tools: ToolFilter::all(),
        model: None,
        source: AgentSource::BuiltIn,
    }
}

fn skill(name: &str, description: &str) -> Skill {
    Skill {
        name: name.into(),
        description: description.into(),
        body: "secret body".into(),
        path: format!("skills/{name}/SKILL.md"),
    }
}

fn tools(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

#[test]
fn full_prompt() {
    let agent = agent("  You are a test agent.\n\nBe brief.\n");
    let skills = [
        skill("pdf", "Reads PDFs.\n  Use for PDF files."),
        skill("notes", "Writes notes."),
    ];
    let tools = tools(&["read_file", "load_skill"]);
    let ctx = PromptContext {
        agent: &agent,
        skills: &skills,
        cwd: "/home/me/my project",
        os: "linux",
        date: Some("2025-01-31"),
        tools: &tools,
        instructions: &[],
    };
    let expected = "You are a test agent.\n\nBe brief.\n\n\
# Environment\n\
- Working directory: /home/me/my project\n\
- Operating system: linux\n\
- Date: 2025-01-31\n\n\
# Skills\n\
Skills are instructions for particular tasks. When a task matches a skill's description, call \
`load_skill` with the skill's name to read its instructions before you start, and follow them.\n\
- pdf: Reads PDFs. Use for PDF files.\n\
- notes: Writes notes.";
    let prompt = compose_system_prompt(&ctx);
    assert_eq!(prompt, expected);
    assert!(!prompt.contains("secret body"));
    assert_eq!(compose_system_prompt(&ctx), prompt);
}

#[test]
fn skills_need_load_skill_and_skills() {
    let agent = agent("A.");
    let skills = [skill("pdf", "Reads PDFs.")];
    let without = tools(&["read_file"]);
    let with = tools(&["load_skill"]);
    let base = PromptContext {
        agent: &agent,
        skills: &skills,
        cwd: "/w",
        os: "macos",
        date: None,
        tools: &without,
        instructions: &[],
    };
    let expected = "A.\n\n# Environment\n- Working directory: /w\n- Operating system: macos";
    assert_eq!(compose_system_prompt(&base), expected);
    let no_skills = PromptContext {
        skills: &[],
        tools: &with,
        ..base
    };
    assert_eq!(compose_system_prompt(&no_skills), expected);
    let both = PromptContext {
        tools: &with,
        ..base
    };
    assert!(compose_system_prompt(&both).ends_with("\n- pdf: Reads PDFs."));
}

#[test]
fn empty_agent_prompt_and_line_breaks_in_facts() {
    let agent = agent("  \n");
    let ctx = PromptContext {
        agent: &agent,
        skills: &[],
        cwd: "/a\nb",
        os: "linux",
        date: Some("today"),
        tools: &[],
        instructions: &[],
    };
    assert_eq!(
        compose_system_prompt(&ctx),
        "# Environment\n- Working directory: /a b\n- Operating system: linux\n- Date: today"
    );
}

#[test]
fn builtin_agents_compose() {
    for agent in builtin_agents() {
        let ctx = PromptContext {
            agent: &agent,
            skills: &[],
            cwd: "/w",
            os: "linux",
            date: None,
            tools: &[],
            instructions: &[],
        };
        let prompt = compose_system_prompt(&ctx);
        assert!(prompt.starts_with(agent.prompt.as_str()));
        assert!(prompt.ends_with("- Operating system: linux"));
    }
}

#[test]
fn instructions_come_after_the_environment_each_under_its_path() {
    let agent = agent("A.");
    let skills = [skill("pdf", "Reads PDFs.")];
    let tools = tools(&["load_skill"]);
    let files = [
        InstructionFile {
            path: "/home/me/.config/hrns/AGENTS.md".into(),
            text: "Answer in English.\n".into(),
        },
        InstructionFile {
            path: "/w/AGENTS.md\nfake".into(),
            text: "\n  Run `make test` before you finish.\n\n".into(),
        },
    ];
    let ctx = PromptContext {
        agent: &agent,
        skills: &skills,
        cwd: "/w",
        os: "linux",
        date: None,
        tools: &tools,
        instructions: &files,
    };
    let prompt = compose_system_prompt(&ctx);
    let expected = format!(
        "A.\n\n# Environment\n- Working directory: /w\n- Operating system: linux\n\n\
         {INSTRUCTIONS_INTRO}\n## /home/me/.config/hrns/AGENTS.md\nAnswer in English.\n\n\
         ## /w/AGENTS.md fake\nRun `make test` before you finish.\n\n# Skills\n"
    );
    assert!(prompt.starts_with(&expected), "{prompt}");
    assert!(prompt.ends_with("- pdf: Reads PDFs."));
}

#[test]
fn the_plans_section_comes_with_update_plan() {
    let agent = agent("A.");
    let without = tools(&["read_file"]);
    let with = tools(&["read_file", "update_plan"]);
    let ctx = |tools| PromptContext {
        agent: &agent,
        skills: &[],
        cwd: "/w",
        os: "linux",
        date: None,
        tools,
        instructions: &[],
    };
    assert!(!compose_system_prompt(&ctx(&without)).contains("update_plan"));
    let prompt = compose_system_prompt(&ctx(&with));
    assert!(prompt.ends_with(PLANS.trim_end()), "{prompt}");
    assert!(prompt.contains("call `update_plan` first"));
}
