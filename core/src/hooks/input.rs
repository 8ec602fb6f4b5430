//! What a hook reads on stdin: one JSON object with the fields every event has
//! (`session_id`, `transcript_path`, `cwd`, `hook_event_name`, `permission_mode`) and the
//! event's own, named as in Claude Code.

use super::HookEvent;
use super::config::claude_tool_name;
use crate::secrets::Secrets;
use crate::session::ApprovalPolicy;
use serde_json::{Map, Value};

/// The facts about a session that every hook input carries; the owner of the session knows
/// them (the core has no file system).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookContext {
    /// The session's id (its session file's name).
    pub session_id: String,
    /// The session file, where the conversation is saved (empty when it is not saved).
    pub transcript_path: String,
    /// The workspace: hooks run there.
    pub cwd: String,
}

/// Claude Code's name of an approval policy, for `permission_mode`: `ask` is its `default`,
/// `auto` its `bypassPermissions` and `read-only` its `plan`.
pub fn permission_mode(approval: ApprovalPolicy) -> &'static str {
    match approval {
        ApprovalPolicy::Ask => "default",
        ApprovalPolicy::Auto => "bypassPermissions",
        ApprovalPolicy::ReadOnly => "plan",
    }
}

/// The hrns tools whose `path` argument Claude Code calls `file_path`.
fn is_file_tool(name: &str) -> bool {
    matches!(name, "read_file" | "write_file" | "edit_file")
}

/// The input object of an event, built field by field.
#[derive(Debug)]
pub struct Input {
    fields: Map<String, Value>,
}

impl Input {
    /// The fields every event has.
    pub fn new(context: &HookContext, event: HookEvent, approval: ApprovalPolicy) -> Input {
        let mut fields = Map::new();
        fields.insert("session_id".into(), context.session_id.clone().into());
        fields.insert(
            "transcript_path".into(),
            context.transcript_path.clone().into(),
        );
        fields.insert("cwd".into(), context.cwd.clone().into());
        fields.insert("hook_event_name".into(), event.name().into());
        fields.insert("permission_mode".into(), permission_mode(approval).into());
        Input { fields }
    }

    /// Adds a field.
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Input {
        self.fields.insert(name.to_owned(), value.into());
        self
    }

    /// Adds `tool_name` (Claude Code's name when the tool has one, so a script written for
    /// `Bash` sees `Bash`), `hrns_tool_name` (hrns's own) and `tool_input`.
    pub fn with_tool(self, name: &str, arguments: &str) -> Input {
        let shown = claude_tool_name(name).unwrap_or(name);
        self.with("tool_name", shown)
            .with("hrns_tool_name", name)
            .with("tool_input", tool_input(name, arguments))
    }

    /// The JSON text with every secret taken out.
    pub fn finish(self, secrets: &Secrets) -> String {
        let mut value = Value::Object(self.fields);
        secrets.redact_json(&mut value);
        value.to_string()
    }
}

/// A call's arguments as a hook reads them: hrns's own fields, plus Claude Code's names beside
/// them (`file_path` beside `path` for the file tools, `path` beside `dir` for `list_files`).
pub fn tool_input(name: &str, arguments: &str) -> Value {
    let mut value: Value =
        serde_json::from_str(arguments).unwrap_or_else(|_| Value::Object(Map::new()));
    if let Value::Object(map) = &mut value {
        if is_file_tool(name) {
            if let Some(path) = map.get("path").cloned() {
                map.entry("file_path").or_insert(path);
            }
        }
        if name == "list_files" {
            if let Some(dir) = map.get("dir").cloned() {
                map.entry("path").or_insert(dir);
            }
        }
    }
    value
}

/// A hook's `updatedInput` as hrns arguments: Claude Code's names are read back (a changed
/// `file_path` is the new `path`), and the aliases [`tool_input`] added are dropped.
pub fn updated_arguments(name: &str, original: &str, mut updated: Map<String, Value>) -> String {
    let before = tool_input(name, original);
    if is_file_tool(name) {
        if let Some(file_path) = updated.remove("file_path") {
            let changed = before.get("file_path") != Some(&file_path);
            if changed || !updated.contains_key("path") {
                updated.insert("path".into(), file_path);
            }
        }
    }
    if name == "list_files" {
        if let Some(path) = updated.remove("path") {
            let changed = before.get("path") != Some(&path);
            if changed || !updated.contains_key("dir") {
                updated.insert("dir".into(), path);
            }
        }
    }
    Value::Object(updated).to_string()
}
