use super::*;
use crate::tool::builtin::{GREP, LIST_FILES, LOAD_SKILL, READ_FILE, WEB_FETCH, builtin_specs};

const REVIEWER: &str = "---
name: Reviewer
description: Reviews the current change.
model: some-model
color: red
tools:
  \"*\": true
  write_file: false
  edit_file: false
---

You review code changes.

Report bugs first.
";

fn map(entries: &[(&str, bool)]) -> Option<BTreeMap<String, bool>> {
    Some(entries.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect())
}

fn file_agent(name: &str, path: &str) -> Agent {
    parse_agent_md(&format!("---\nname: {name}\n---\nprompt of {path}"), path).unwrap()
}

/// A tool that appears later (a new built-in, a plugin's) and declares that it writes or runs
/// something is kept from Explorer, Planner and Pirate without anyone naming it in their
/// definitions; one that only reads or fetches reaches them. Builder gets both. The same
/// holds for their subagents and for an agent file that denies the built-in writing tools.
#[test]
fn a_new_tool_with_effects_is_kept_from_read_only_agents_by_its_effect() {
    let tool = |name: &str, effect| ToolSpec {
        name: name.into(),
        description: String::new(),
        parameters: serde_json::json!({"type": "object"}),
        effect,
    };
    let new_tools = [
        tool("apply_patch", Effect::Write),
        tool("deploy", Effect::Exec),
        tool("mcp__git__push", Effect::Exec),
        tool("outline", Effect::ReadOnly),
        tool("search_web", Effect::Network),
    ];
    let offered = |agent: &Agent| -> Vec<String> {
        agent
            .tools
            .filter(new_tools.to_vec())
            .into_iter()
            .map(|t| t.name)
            .collect()
    };
    let agents = builtin_agents();
    assert_eq!(
        offered(&agents[0]).len(),
        new_tools.len(),
        "Builder gets all"
    );
    let file = parse_agent_md(
        "---\nname: Reader\ntools:\n  write_file: false\n  run_command: false\n---\nRead.",
        "r/AGENT.md",
    )
    .unwrap();
    for agent in agents[1..].iter().chain([&file]) {
        assert_eq!(offered(agent), ["outline", "search_web"], "{}", agent.name);
        assert!(agent.is_read_only(), "{}", agent.name);
    }
    // A child of Explorer, asking for Builder, gets no tool with effects either.
    let args = serde_json::json!({"description": "d", "prompt": "p", "agent": "Builder"});
    let plan = crate::task::plan_child(
        &args.to_string(),
        &agents,
        Some(&agents[1]),
        crate::session::ApprovalPolicy::Auto,
        &new_tools,
    )
    .unwrap();
    let names: Vec<&str> = plan.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["outline", "search_web"]);
}

#[test]
fn builtins() {
    let agents = builtin_agents();
    let names: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["Builder", "Explorer", "Planner", "Pirate"]);
    let all: Vec<String> = builtin_specs().into_iter().map(|t| t.name).collect();
    for agent in &agents {
        assert_eq!(agent.source, AgentSource::BuiltIn);
        assert!(agent.prompt.len() > 200, "{}", agent.name);
        assert!(!agent.description.is_empty());
        for tool in [READ_FILE, LIST_FILES, WEB_FETCH, LOAD_SKILL] {
            assert!(agent.tools.allows(tool), "{} {tool}", agent.name);
        }
    }
    assert!(all.iter().all(|t| agents[0].tools.allows(t)));
    let spec = |name: &str| {
        builtin_specs()
            .into_iter()
            .find(|t| t.name == name)
            .unwrap()
    };
    for agent in &agents[1..] {
        assert!(agent.is_read_only(), "{}", agent.name);
        for tool in [WRITE_FILE, EDIT_FILE, RUN_COMMAND] {
            assert!(!agent.tools.offers(&spec(tool)), "{} {tool}", agent.name);
        }
        let offered: Vec<String> = agent
            .tools
            .filter(builtin_specs())
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(
            offered,
            [READ_FILE, LIST_FILES, GREP, WEB_FETCH, LOAD_SKILL]
        );
    }
}

#[test]
fn an_old_tool_map_gives_edit_file_the_value_of_write_file() {
    let old = ToolFilter::from_map(map(&[("write_file", false)]));
    assert!(!old.allows(EDIT_FILE) && !old.allows(WRITE_FILE) && old.allows(READ_FILE));
    let only_write = ToolFilter::from_map(map(&[("*", false), ("write_file", true)]));
    assert!(only_write.allows(EDIT_FILE));
    let explicit = ToolFilter::from_map(map(&[("write_file", false), ("edit_file", true)]));
    assert!(explicit.allows(EDIT_FILE) && !explicit.allows(WRITE_FILE));
    let silent = ToolFilter::from_map(map(&[("*", false), ("read_file", true)]));
    assert!(
        !silent.allows(EDIT_FILE),
        "the default applies when neither is named"
    );
    let agent = parse_agent_md(
        "---\nname: Old\ntools:\n  write_file: false\n  run_command: false\n---\nx",
        "old/AGENT.md",
    )
    .unwrap();
    let offered: Vec<String> = agent
        .tools
        .filter(builtin_specs())
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(!offered.iter().any(|t| t == EDIT_FILE), "{offered:?}");
}

#[test]
fn tool_filter_rules() {
    let none = ToolFilter::from_map(None);
    assert!(none.allows("anything"));
    assert_eq!(none, ToolFilter::all());

    let f = ToolFilter::from_map(map(&[("*", true), ("run_command", false)]));
    assert!(f.allows("read_file") && !f.allows("run_command"));
    assert_eq!(f, ToolFilter::from_map(map(&[("run_command", false)])));
    assert_eq!(f, ToolFilter::all_except(&["run_command"]));

    let only = ToolFilter::from_map(map(&[
        ("*", false),
        ("read_file", true),
        ("no_such_tool", true),
    ]));
    assert!(only.allows("read_file") && only.allows("no_such_tool"));
    assert!(!only.allows("list_files") && !only.allows("Read_File"));
    let offered: Vec<String> = only
        .filter(builtin_specs())
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(offered, [READ_FILE]);

    let nothing = ToolFilter::from_map(map(&[("*", false)]));
    assert!(nothing.filter(builtin_specs()).is_empty());
    assert!(ToolFilter::from_map(map(&[])).allows("x"));
}

#[test]
fn parses_an_agent_file() {
    let agent = parse_agent_md(REVIEWER, ".hrns/agents/reviewer/AGENT.md").unwrap();
    assert_eq!(agent.name, "Reviewer");
    assert_eq!(agent.description, "Reviews the current change.");
    assert_eq!(
        agent.prompt,
        "You review code changes.\n\nReport bugs first."
    );
    assert_eq!(
        agent.tools,
        ToolFilter::all_except(&[WRITE_FILE, EDIT_FILE])
    );
    assert_eq!(
        agent.source,
        AgentSource::File(".hrns/agents/reviewer/AGENT.md".into())
    );
}

#[test]
fn bom_and_crlf_give_the_same_agent() {
    let crlf = format!("\u{feff}{}", REVIEWER.replace('\n', "\r\n"));
    let a = parse_agent_md(REVIEWER, "p").unwrap();
    let b = parse_agent_md(&crlf, "p").unwrap();
    assert_eq!(a, b);
}

#[test]
fn minimal_agent() {
    let agent = parse_agent_md("---\nname: ' x '\n---\n", "p").unwrap();
    assert_eq!(agent.name, "x");
    assert_eq!(agent.description, "");
    assert_eq!(agent.prompt, "");
    assert_eq!(agent.tools, ToolFilter::all());
}

#[test]
fn bad_agent_files() {
    let path = "/home/u/.hrns/agents/bad/AGENT.md";
    let cases: &[(&str, &str)] = &[
        ("", "no frontmatter"),
        ("You are a reviewer.", "no frontmatter"),
        ("---\nname: x\nYou are…", "never closes"),
        ("---\n---\nbody", "has no `name`"),
        ("---\ndescription: d\n---\nbody", "has no `name`"),
        ("---\nname: \"\"\n---\n", "has no `name`"),
        ("---\nname: |\n  two\n  lines\n---\n", "single line"),
        ("---\nname: x\ntools: [read_file]\n---\n", "line 3"),
        ("---\nname: x\ntools: read_file\n---\n", "invalid type"),
        ("---\nname: x\ntools:\n  read_file: yes\n---\n", "line 4"),
        ("---\nname: [a]\n---\n", "invalid type"),
        ("---\nname: x\ntools:\n  *: true\n---\n", "quote it"),
        ("---\nname: x\n  bad indent: 1\n---\n", "line"),
    ];
    for (text, needle) in cases {
        let e = parse_agent_md(text, path).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with(path), "{msg}");
        assert!(msg.contains(needle), "{text:?}: {msg}");
    }
}

#[test]
fn alias_bomb_in_tools_is_refused() {
    let mut yaml = String::from("name: x\na0: &a0 [t, t, t, t, t, t, t, t]\n");
    for i in 1..10 {
        let p = i - 1;
        yaml.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let text = format!("---\n{yaml}tools: *a9\n---\n");
    assert!(matches!(
        parse_agent_md(&text, "p"),
        Err(FrontmatterError::Yaml { .. })
    ));
}

#[test]
fn large_prompt_is_fine() {
    let body = "Do the thing.\n".repeat(80_000);
    let agent = parse_agent_md(&format!("---\nname: big\n---\n{body}"), "p").unwrap();
    assert_eq!(agent.prompt.len(), body.len() - 1);
}

#[test]
fn precedence_project_user_builtin() {
    let (agents, warnings) = resolve_agents(
        builtin_agents(),
        vec![
            file_agent("explorer", "project/explorer"),
            file_agent("Shared", "project/shared"),
            file_agent("Proj", "project/proj"),
            file_agent("PROJ", "project/proj-dup"),
        ],
        vec![
            file_agent("Explorer", "user/explorer"),
            file_agent("Planner", "user/planner"),
            file_agent("shared", "user/shared"),
            file_agent("Mine", "user/mine"),
        ],
    );
    let summary: Vec<(&str, String)> = agents
        .iter()
        .map(|a| {
            let src = match &a.source {
                AgentSource::BuiltIn => "builtin".to_owned(),
                AgentSource::File(p) => p.clone(),
            };
            (a.name.as_str(), src)
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("Builder", "builtin".to_owned()),
            ("Explorer", "user/explorer".to_owned()),
            ("Planner", "user/planner".to_owned()),
            ("Pirate", "builtin".to_owned()),
            ("shared", "user/shared".to_owned()),
            ("Mine", "user/mine".to_owned()),
            ("Proj", "project/proj".to_owned()),
        ]
    );
    // The project's Explorer and Shared are left out, each with a warning naming its file.
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("project/explorer: ignored")
            && warnings[0].contains("your agent Explorer (user/explorer)"),
        "{warnings:?}"
    );
    assert!(
        warnings[1].starts_with("project/shared: ignored"),
        "{warnings:?}"
    );
    assert_eq!(
        find_agent(&agents, "EXPLORER").unwrap().prompt,
        "prompt of user/explorer"
    );
    assert_eq!(
        find_agent(&agents, "builder").unwrap().source,
        AgentSource::BuiltIn
    );
    assert!(find_agent(&agents, "nobody").is_none());
}

/// A repository cannot slip in its own Explorer, the default `task` agent: the built-in stays,
/// and the user is told which file was ignored.
#[test]
fn a_project_agent_does_not_replace_a_builtin() {
    let (agents, warnings) = resolve_agents(
        builtin_agents(),
        vec![file_agent("Explorer", ".hrns/agents/Explorer/AGENT.md")],
        Vec::new(),
    );
    let explorer = find_agent(&agents, crate::task::DEFAULT_AGENT).unwrap();
    assert_eq!(explorer.source, AgentSource::BuiltIn);
    assert_eq!(agents.len(), builtin_agents().len());
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].contains(".hrns/agents/Explorer/AGENT.md")
            && warnings[0].contains("built-in agent Explorer"),
        "{warnings:?}"
    );
}

#[test]
fn tool_maps_accept_prefix_patterns() {
    let map: BTreeMap<String, bool> = [
        ("*", false),
        ("mcp__github__*", true),
        ("mcp__github__delete_*", false),
        ("mcp__github__delete_branch", true),
        ("read_file", true),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let filter = ToolFilter::from_map(Some(map));
    assert!(filter.allows("mcp__github__create_issue"));
    assert!(
        !filter.allows("mcp__github__delete_repo"),
        "the longer pattern wins"
    );
    assert!(
        filter.allows("mcp__github__delete_branch"),
        "an exact name wins"
    );
    assert!(!filter.allows("mcp__gitlab__x"));
    assert!(filter.allows("read_file") && !filter.allows("write_file"));
}
