//! The names and specs under which MCP tools are offered to the model.
//!
//! Each tool of server `S` named `T` is offered as `mcp__S__T`. Providers accept function
//! names of at most [`MAX_TOOL_NAME_LEN`] characters from `[a-zA-Z0-9_-]`, so every other
//! character becomes `_` and long names are cut. When two tools end up with the same name
//! (after sanitising or cutting, or when they collide with a name already taken), the later one
//! in the given order gets a suffix `_2`, `_3`, … (the name cut to make room), so the same
//! servers and tools always give the same names.

use super::client::McpTool;
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

/// The spec offered to the model for `tool` of `server` under `name`.
///
/// The description names the server; the input schema is passed through, made an object
/// schema when the server sent something else (providers reject other schemas).
pub fn tool_spec(name: &str, server: &str, tool: &McpTool) -> ToolSpec {
    let mut description = match (&tool.title, tool.description.as_deref()) {
        (Some(title), Some(d)) if !d.is_empty() => format!("{title}: {d}"),
        (Some(title), _) => title.clone(),
        (None, Some(d)) => d.to_owned(),
        (None, None) => String::new(),
    };
    if !description.is_empty() {
        description.push_str("\n\n");
    }
    description.push_str(&format!(
        "(Tool {:?} of the MCP server {server:?}.)",
        tool.name
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
