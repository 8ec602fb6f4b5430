//! The names and specs under which MCP tools are offered to the model.
//!
//! Each tool of server `S` named `T` is offered as `mcp__S__T`. Providers accept function
//! names of at most [`MAX_TOOL_NAME_LEN`] characters from `[a-zA-Z0-9_-]`, so every other
//! character becomes `_` and long names are cut. When two tools end up with the same name
//! (after sanitising or cutting, or when they collide with a name already taken), the later one
//! in the given order gets a suffix `_2`, `_3`, … (the name cut to make room), so the same
//! servers and tools always give the same names.

use super::client::McpTool;
use crate::agent::Agent;
use crate::session::ApprovalPolicy;
use crate::text::strip_controls;
use crate::tool::{Effect, ToolSpec};
use std::collections::BTreeSet;

/// The longest function name providers accept (OpenAI: 64).
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// The prefix of every MCP tool name.
pub const PREFIX: &str = "mcp__";

/// Replaces every character outside `[a-zA-Z0-9_-]` with `_`.
pub fn sanitise(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The name of `tool` of `server` before collisions are resolved: `mcp__SERVER__TOOL`,
/// sanitised and cut to [`MAX_TOOL_NAME_LEN`].
pub fn qualified_name(server: &str, tool: &str) -> String {
    let mut name = format!("{PREFIX}{}__{}", sanitise(server), sanitise(tool));
    name.truncate(MAX_TOOL_NAME_LEN);
    name
}

/// The server and tool parts of an offered name `mcp__SERVER__TOOL` (as sanitised), or `None`
/// for a name that is not an MCP tool's. It splits at the first `__` after the prefix, so a
/// server name holding `__` shows part of it with the tool.
pub fn split_name(name: &str) -> Option<(&str, &str)> {
    let (server, tool) = name.strip_prefix(PREFIX)?.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

/// Gives each `(server, tool)` pair a unique offered name, in order, avoiding the names in
/// `taken` (the built-in tools). Deterministic: the same input gives the same names.
pub fn assign_names<'a, 'b>(
    tools: impl IntoIterator<Item = (&'a str, &'a str)>,
    taken: impl IntoIterator<Item = &'b str>,
) -> Vec<String> {
    let mut used: BTreeSet<String> = taken.into_iter().map(str::to_owned).collect();
    let mut names = Vec::new();
    for (server, tool) in tools {
        let base = qualified_name(server, tool);
        let mut name = base.clone();
        let mut n = 2u64;
        while used.contains(&name) {
            let suffix = format!("_{n}");
            let mut cut = base.clone();
            cut.truncate(MAX_TOOL_NAME_LEN - suffix.len());
            name = cut + &suffix;
            n += 1;
        }
        used.insert(name.clone());
        names.push(name);
    }
    names
}

/// The effect of an MCP tool: read-only when the server says so (`readOnlyHint: true`);
/// otherwise it is treated like a command, since the tool may do anything.
pub fn effect(tool: &McpTool) -> Effect {
    if tool.read_only_hint == Some(true) {
        Effect::ReadOnly
    } else {
        Effect::Exec
    }
}

/// Whether the MCP tool `spec` is offered to `agent` under the approval `policy`.
///
/// A tool the server marks read-only is offered when the agent's tool map allows it. Any other
/// may change things as a command can ([`effect`]), so it is offered only where it could run:
/// never under the `read-only` approval policy, and never to a read-only agent
/// ([`Agent::is_read_only`]: Explorer, Planner, Pirate), by its effect
/// ([`crate::agent::ToolFilter::offers`]) — the same rule every tool follows.
pub fn offered(spec: &ToolSpec, agent: &Agent, policy: ApprovalPolicy) -> bool {
    if !agent.tools.offers(spec) {
        return false;
    }
    match (spec.effect, policy) {
        (Effect::ReadOnly, _) => true,
        (_, ApprovalPolicy::ReadOnly) => false,
        (_, ApprovalPolicy::Ask | ApprovalPolicy::Auto) => true,
    }
}

/// The spec offered to the model for `tool` of `server` under `name`.
///
/// The description names the server; the input schema is passed through, made an object
/// schema when the server sent something else (providers reject other schemas). The server's
/// title, description and tool name reach the model without control characters or terminal
/// escapes (whole escape sequences removed, not just their ESC).
pub fn tool_spec(name: &str, server: &str, tool: &McpTool) -> ToolSpec {
    let title = tool.title.as_deref().map(strip_controls);
    let text = tool.description.as_deref().map(strip_controls);
    let mut description = match (title, text) {
        (Some(title), Some(d)) if !d.is_empty() => format!("{title}: {d}"),
        (Some(title), _) => title.into_owned(),
        (None, Some(d)) => d.into_owned(),
        (None, None) => String::new(),
    };
    if !description.is_empty() {
        description.push_str("\n\n");
    }
    description.push_str(&format!(
        "(Tool \"{}\" of the MCP server \"{}\".)",
        strip_controls(&tool.name),
        strip_controls(server)
    ));
    let mut parameters = tool.input_schema.clone();
    match parameters.as_object_mut() {
        Some(schema) if schema.get("type").and_then(|t| t.as_str()) == Some("object") => {}
        Some(schema) => {
            schema.insert("type".into(), "object".into());
        }
        None => parameters = serde_json::json!({"type": "object"}),
    }
    ToolSpec {
        name: name.to_owned(),
        description,
        parameters,
        effect: effect(tool),
    }
}

/// Whether `name` matches `pattern` of an agent's tool map: equal, or a `*` at the end of
/// the pattern matching any rest (`mcp__github__*`, `mcp__*`).
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_sanitised_and_cut() {
        assert_eq!(
            qualified_name("git hub", "create.issue"),
            "mcp__git_hub__create_issue"
        );
        assert_eq!(qualified_name("é", "t"), "mcp_____t");
        let long = qualified_name("server", &"x".repeat(100));
        assert_eq!(long.len(), MAX_TOOL_NAME_LEN);
    }

    #[test]
    fn offered_names_split_into_server_and_tool() {
        assert_eq!(
            split_name("mcp__github__create_issue"),
            Some(("github", "create_issue"))
        );
        assert_eq!(split_name("mcp__a__b__c"), Some(("a", "b__c")));
        assert_eq!(split_name("read_file"), None);
        assert_eq!(split_name("mcp__x"), None);
        assert_eq!(split_name("mcp____t"), None);
    }

    #[test]
    fn collisions_get_deterministic_suffixes() {
        let long = "y".repeat(80);
        let tools = [
            ("a", "t.x"),
            ("a", "t_x"),
            ("a", "t x"),
            ("s", long.as_str()),
            ("s", long.as_str()),
            ("b", "read_file"),
        ];
        let names = assign_names(tools, ["mcp__b__read_file"]);
        assert_eq!(names[0], "mcp__a__t_x");
        assert_eq!(names[1], "mcp__a__t_x_2");
        assert_eq!(names[2], "mcp__a__t_x_3");
        assert_eq!(names[3].len(), 64);
        assert!(names[4].ends_with("_2") && names[4].len() == 64);
        assert_eq!(names[5], "mcp__b__read_file_2");
        assert_eq!(names, assign_names(tools, ["mcp__b__read_file"]));
    }

    #[test]
    fn effect_and_spec_follow_the_annotations() {
        let mut tool = McpTool {
            name: "get".into(),
            title: None,
            description: Some("Gets.".into()),
            input_schema: json!({"properties": {}}),
            read_only_hint: Some(true),
        };
        let spec = tool_spec("mcp__s__get", "s", &tool);
        assert_eq!(spec.effect, Effect::ReadOnly);
        assert_eq!(spec.parameters, json!({"type": "object", "properties": {}}));
        assert!(spec.description.starts_with("Gets.\n\n"));
        tool.read_only_hint = None;
        tool.input_schema = json!(true);
        let spec = tool_spec("mcp__s__get", "s", &tool);
        assert_eq!(spec.effect, Effect::Exec);
        assert_eq!(spec.parameters, json!({"type": "object"}));
    }

    /// A server's names and texts reach the model without control characters or escapes.
    #[test]
    fn descriptions_and_names_lose_control_characters() {
        let tool = McpTool {
            name: "ev\x1b[2Jil".into(),
            title: Some("\x1b]0;pwned\x07Title".into()),
            description: Some("Does \x1b[31mthings\x1b[0m.\r\nSecond\x07 line.".into()),
            input_schema: json!({"type": "object"}),
            read_only_hint: None,
        };
        let spec = tool_spec("mcp__s__evil", "s\u{9b}1m", &tool);
        assert_eq!(
            spec.description,
            "Title: Does things.\nSecond line.\n\n(Tool \"evil\" of the MCP server \"s\".)"
        );
        assert!(
            !spec
                .description
                .chars()
                .any(|c| c.is_control() && c != '\n')
        );
    }

    #[test]
    fn read_only_agents_and_policies_get_only_read_only_tools() {
        use crate::agent::ToolFilter;
        let spec = |effect| ToolSpec {
            name: "mcp__gh__make".into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            effect,
        };
        let agents = crate::agent::builtin_agents();
        let (builder, explorer) = (&agents[0], &agents[1]);
        let with = |tools: ToolFilter| Agent {
            tools,
            ..builder.clone()
        };
        let named = with(ToolFilter::from_map(Some(
            [
                ("run_command", false),
                ("write_file", false),
                ("mcp__gh__*", true),
            ]
            .map(|(k, v)| (k.to_owned(), v))
            .into(),
        )));
        let denied = with(ToolFilter::all_except(&["mcp__gh__make"]));
        use ApprovalPolicy::*;
        let cases = [
            // (agent, policy, read-only tool offered, effectful tool offered)
            (builder, Auto, true, true),
            (builder, Ask, true, true),
            (builder, ReadOnly, true, false),
            (explorer, Auto, true, false),
            (explorer, ReadOnly, true, false),
            (&named, Auto, true, false),
            (&denied, Auto, false, false),
        ];
        for (i, (agent, policy, read_only, effectful)) in cases.into_iter().enumerate() {
            assert_eq!(
                offered(&spec(Effect::ReadOnly), agent, policy),
                read_only,
                "case {i}"
            );
            assert_eq!(
                offered(&spec(Effect::Exec), agent, policy),
                effectful,
                "case {i}"
            );
        }
    }

    #[test]
    fn patterns_match_prefixes() {
        assert!(pattern_matches(
            "mcp__github__*",
            "mcp__github__create_issue"
        ));
        assert!(!pattern_matches("mcp__github__*", "mcp__gitlab__x"));
        assert!(pattern_matches("read_file", "read_file"));
        assert!(pattern_matches("*", "anything"));
    }
}
