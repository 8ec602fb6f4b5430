//! The `hooks` setting, in the shape of Claude Code's: events, each a list of matcher groups,
//! each group a list of commands.

use serde_json::Value;
use std::time::Duration;

/// How long a hook may run when its entry sets no `timeout`: a minute, as in Claude Code.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest `timeout` an entry may set: ten minutes. A larger one is cut to it, so that a
/// typo cannot hold a session for days.
const MAX_HOOK_TIMEOUT: Duration = Duration::from_secs(600);

/// A point of the session where hooks run, named as in Claude Code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookEvent {
    /// The first turn of a session starts (a new or a resumed one).
    SessionStart,
    /// The user's prompt is about to be sent.
    UserPromptSubmit,
    /// A tool call is about to run (or to be asked about).
    PreToolUse,
    /// The user is about to be asked to approve a call.
    PermissionRequest,
    /// A tool call finished without error.
    PostToolUse,
    /// A tool call finished with an error.
    PostToolUseFailure,
    /// The history is about to be compacted.
    PreCompact,
    /// The model answered without tool calls: the turn would end.
    Stop,
    /// A subagent's turn would end.
    SubagentStop,
    /// The session ends.
    SessionEnd,
    /// hrns waits for the user (an approval question).
    Notification,
}

impl HookEvent {
    /// Every event, in the order of a session.
    pub const ALL: [HookEvent; 11] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PermissionRequest,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::PreCompact,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::SessionEnd,
        HookEvent::Notification,
    ];

    /// The name in the configuration and in `hook_event_name`.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PermissionRequest => "PermissionRequest",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Notification => "Notification",
        }
    }

    /// The event of this name (exact, as Claude Code spells it).
    pub fn from_name(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.name() == name)
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a hook that fails (exits with a code other than 0 and 2, times out, crashes or cannot
/// start) does to the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailMode {
    /// The error is shown and the run goes on (the default, as in Claude Code).
    Open,
    /// The failure blocks, like exit code 2 (`"failClosed": true`): a policy hook that
    /// breaks must not let everything through.
    Closed,
}

/// One command of a hook entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCommand {
    /// The shell command (`sh -c`), run in the workspace.
    pub command: String,
    /// How long it may run before it is killed.
    pub timeout: Duration,
    /// What its failure does.
    pub fail: FailMode,
}

/// Where a hook was configured: `hrns hooks list` says so, and only project files need the
/// user's approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookSource {
    /// `hooks` at the top of the user's config file (config.json, or `--config`), named by its
    /// path as the user gave or would recognise it.
    User(String),
    /// `projects.<dir>.hooks` in the user's config file.
    UserProject {
        /// The config file, as in [`HookSource::User`].
        file: String,
        /// The project directory the entry is for.
        dir: String,
    },
    /// A project's `.hrns/hooks.json`, approved by the user with this content.
    ProjectFile(String),
}

impl std::fmt::Display for HookSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HookSource::User(file) => f.write_str(file),
            HookSource::UserProject { file, dir } => write!(f, "{file} projects.{dir}"),
            HookSource::ProjectFile(path) => f.write_str(path),
        }
    }
}

/// A matcher: a regular expression that must match a whole tool name (hrns's, or Claude
/// Code's alias of it). Empty or `*` matches everything.
#[derive(Debug, Clone)]
pub struct Matcher {
    text: String,
    regex: Option<regex::Regex>,
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Matcher {}

impl Matcher {
    /// Compiles `text`; an invalid expression is an error naming it.
    pub fn new(text: &str) -> Result<Matcher, String> {
        let trimmed = text.trim();
        let regex = if trimmed.is_empty() || trimmed == "*" {
            None
        } else {
            let anchored = format!("^(?:{trimmed})$");
            Some(
                regex::Regex::new(&anchored)
                    .map_err(|e| format!("matcher `{trimmed}` is not a valid regex: {e}"))?,
            )
        };
        Ok(Matcher {
            text: text.to_owned(),
            regex,
        })
    }

    /// The matcher as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `subject` matches: a tool name (then its Claude Code alias counts too), or the
    /// event's own subject (`startup`, `manual`). Without a subject only a match-all matcher
    /// matches.
    pub fn matches(&self, subject: Option<&str>) -> bool {
        let Some(regex) = &self.regex else {
            return true;
        };
        let Some(subject) = subject else {
            return false;
        };
        regex.is_match(subject) || claude_tool_name(subject).is_some_and(|a| regex.is_match(a))
    }
}

/// Claude Code's name of an hrns tool (`run_command` is `Bash`); MCP tools are named
/// `mcp__SERVER__TOOL` in both, so they have no alias.
pub fn claude_tool_name(hrns: &str) -> Option<&'static str> {
    Some(match hrns {
        "run_command" => "Bash",
        "write_file" => "Write",
        "edit_file" => "Edit",
        "read_file" => "Read",
        "list_files" => "Glob",
        "grep" => "Grep",
        "web_fetch" => "WebFetch",
        "task" => "Task",
        _ => return None,
    })
}

/// One configured hook command with its event, matcher and origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookEntry {
    /// When it runs.
    pub event: HookEvent,
    /// Which tools (or subjects) it runs for.
    pub matcher: Matcher,
    /// What runs.
    pub command: HookCommand,
    /// Where it was configured.
    pub source: HookSource,
}

/// Every configured hook, in configuration order (user hooks first, then project ones).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hooks {
    entries: Vec<HookEntry>,
}

impl Hooks {
    /// No hooks.
    pub fn new() -> Hooks {
        Hooks::default()
    }

    /// Reads a `hooks` value (the object of events). Entries that cannot be used are left out,
    /// each with an error that names it; the rest are kept.
    pub fn parse(value: &Value, source: &HookSource) -> (Hooks, Vec<String>) {
        let mut hooks = Hooks::new();
        let mut errors = Vec::new();
        let Some(events) = value.as_object() else {
            errors.push(format!(
                "{source}: `hooks` must be an object of events, like {{\"PreToolUse\": [...]}}"
            ));
            return (hooks, errors);
        };
        for (name, groups) in events {
            let Some(event) = HookEvent::from_name(name) else {
                let known: Vec<&str> = HookEvent::ALL.iter().map(|e| e.name()).collect();
                errors.push(format!(
                    "{source}: unknown hook event `{name}`; the events are {}",
                    known.join(", ")
                ));
                continue;
            };
            let Some(groups) = groups.as_array() else {
                errors.push(format!(
                    "{source}: hooks.{name} must be a list of matcher groups"
                ));
                continue;
            };
            for (i, group) in groups.iter().enumerate() {
                let at = format!("{source}: hooks.{name}[{i}]");
                let matcher_text = match group.get("matcher") {
                    None | Some(Value::Null) => "",
                    Some(Value::String(m)) => m.as_str(),
                    Some(_) => {
                        errors.push(format!("{at}.matcher must be a string"));
                        continue;
                    }
                };
                let matcher = match Matcher::new(matcher_text) {
                    Ok(m) => m,
                    Err(e) => {
                        errors.push(format!("{at}: {e}"));
                        continue;
                    }
                };
                let Some(commands) = group.get("hooks").and_then(Value::as_array) else {
                    errors.push(format!("{at}.hooks must be a list of commands"));
                    continue;
                };
                for (j, command) in commands.iter().enumerate() {
                    match parse_command(command) {
                        Ok(command) => hooks.entries.push(HookEntry {
                            event,
                            matcher: matcher.clone(),
                            command,
                            source: source.clone(),
                        }),
                        Err(e) => errors.push(format!("{at}.hooks[{j}]: {e}")),
                    }
                }
            }
        }
        (hooks, errors)
    }

    /// Adds `other`'s entries after this one's.
    pub fn extend(&mut self, other: Hooks) {
        self.entries.extend(other.entries);
    }

    /// Every entry, in configuration order.
    pub fn entries(&self) -> &[HookEntry] {
        &self.entries
    }

    /// Whether no hook is configured.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether any hook is configured for `event`, whatever its matcher.
    pub fn has(&self, event: HookEvent) -> bool {
        self.entries.iter().any(|e| e.event == event)
    }

    /// The commands due for `event` about `subject` (a tool name, or the event's subject), in
    /// configuration order. A command configured twice runs once, as in Claude Code.
    pub fn due(&self, event: HookEvent, subject: Option<&str>) -> Vec<HookCommand> {
        let mut due: Vec<HookCommand> = Vec::new();
        for entry in &self.entries {
            if entry.event == event
                && entry.matcher.matches(subject)
                && !due.iter().any(|c| c.command == entry.command.command)
            {
                due.push(entry.command.clone());
            }
        }
        due
    }
}

fn parse_command(value: &Value) -> Result<HookCommand, String> {
    let Some(object) = value.as_object() else {
        return Err("must be an object like {\"type\": \"command\", \"command\": \"...\"}".into());
    };
    match object.get("type").and_then(Value::as_str) {
        Some("command") => {}
        Some(other) => {
            return Err(format!(
                "type `{other}` is not supported; hrns runs hooks of type `command`"
            ));
        }
        None => return Err("needs \"type\": \"command\"".into()),
    }
    let command = match object.get("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
        Some(_) | None => return Err("needs a non-empty \"command\" string".into()),
    };
    let timeout = match object.get("timeout") {
        None | Some(Value::Null) => DEFAULT_HOOK_TIMEOUT,
        Some(v) => match v.as_f64() {
            Some(secs) if secs > 0.0 && secs.is_finite() => {
                Duration::from_secs_f64(secs).min(MAX_HOOK_TIMEOUT)
            }
            Some(_) | None => return Err("\"timeout\" must be a positive number of seconds".into()),
        },
    };
    let fail = match object.get("failClosed") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => FailMode::Open,
        Some(Value::Bool(true)) => FailMode::Closed,
        Some(_) => return Err("\"failClosed\" must be true or false".into()),
    };
    Ok(HookCommand {
        command,
        timeout,
        fail,
    })
}
