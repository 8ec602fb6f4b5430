//! What a hook's answer means: its exit code and stdout read into a typed [`Verdict`], and the
//! verdicts of one event's hooks (which run in parallel) combined in a fixed order.
//!
//! Exit codes, as in Claude Code: `0` is success, and stdout is read as a JSON decision when
//! it is a JSON object (plain text is context for the model at `SessionStart` and
//! `UserPromptSubmit`); `2` blocks, with stderr as the reason; anything else, a timeout, a
//! crash or a command that cannot start is an error that is shown and does not block, unless
//! the entry says `"failClosed": true`.

use super::HookEvent;
use super::config::{FailMode, HookCommand};
use crate::secrets::Secrets;
use serde_json::{Map, Value};

/// The most bytes of stdout (and of stderr) a driver keeps of one hook; the rest is read and
/// dropped, and the run is marked [`HookRun::truncated`]. A decision cut off is no decision:
/// such output is an error.
pub const MAX_HOOK_OUTPUT: usize = 1024 * 1024;

/// The most bytes of one hook's text (a reason, context, a message) that reach the model or
/// the user; longer text is shortened with a note.
const MAX_HOOK_TEXT: usize = 10_000;

/// How a hook process ended, as a driver saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookExit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it (a crash, or killed from outside).
    Signal(i32),
    /// It ran past its timeout and its process group was killed.
    TimedOut,
    /// It could not be started (why).
    NotStarted(String),
}

/// What a driver hands back for one hook command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRun {
    /// How it ended.
    pub exit: HookExit,
    /// Its stdout, at most [`MAX_HOOK_OUTPUT`] bytes.
    pub stdout: Vec<u8>,
    /// Its stderr, at most [`MAX_HOOK_OUTPUT`] bytes.
    pub stderr: Vec<u8>,
    /// Whether stdout or stderr had more than [`MAX_HOOK_OUTPUT`] bytes.
    pub truncated: bool,
    /// How long it ran, in milliseconds (for the `hook` event only; nothing is decided on it).
    pub duration_ms: u64,
}

/// A hook's say about a tool call (or a prompt to approve).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Run it without asking (never past a read-only policy or the sandbox).
    Allow,
    /// Ask the user, even where the policy would run it.
    Ask,
}

/// What became of one hook, for the one line the user sees and the `hook` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookOutcome {
    /// It ran and decided nothing (or only added context or a message).
    Success,
    /// It blocked (exit code 2, `deny`, `decision: block`, or a failure with `failClosed`).
    Blocked,
    /// It allowed the call.
    Allowed,
    /// It asked for the user's approval.
    Ask,
    /// It stopped the run (`continue: false`).
    Stopped,
    /// It failed without blocking (bad exit code, timeout, crash, bad output).
    Error,
}

/// One hook's answer, read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    /// Set when it blocks: the reason, for the model or the user.
    pub block: Option<String>,
    /// Its say about the call, when it did not block.
    pub permission: Option<Permission>,
    /// `permissionDecisionReason` of an `allow` or `ask`.
    pub reason: Option<String>,
    /// Set by `continue: false`: the run stops, with this reason for the user.
    pub stop: Option<String>,
    /// `systemMessage`: shown to the user.
    pub system_message: Option<String>,
    /// `additionalContext` (or plain stdout where that is context): for the model.
    pub context: Option<String>,
    /// `updatedInput`: the arguments the call runs with instead.
    pub updated_input: Option<Map<String, Value>>,
    /// What went wrong, shown once (also when the failure blocks).
    pub error: Option<String>,
}

impl Verdict {
    /// The one-word outcome for the `hook` event.
    pub fn outcome(&self) -> HookOutcome {
        if self.stop.is_some() {
            HookOutcome::Stopped
        } else if self.block.is_some() {
            HookOutcome::Blocked
        } else if self.error.is_some() {
            HookOutcome::Error
        } else {
            match self.permission {
                Some(Permission::Allow) => HookOutcome::Allowed,
                Some(Permission::Ask) => HookOutcome::Ask,
                None => HookOutcome::Success,
            }
        }
    }
}

/// Reads what `command` answered at `event`. Every text in it is redacted with `secrets`.
pub fn verdict(
    event: HookEvent,
    command: &HookCommand,
    run: &HookRun,
    secrets: &Secrets,
) -> Verdict {
    let text = |bytes: &[u8]| -> String {
        let s = String::from_utf8_lossy(bytes);
        cap(secrets.redact_string(s.trim().to_owned()))
    };
    let failed = |why: String| -> Verdict {
        let mut v = Verdict {
            error: Some(why.clone()),
            ..Verdict::default()
        };
        match command.fail {
            FailMode::Open => {}
            FailMode::Closed => {
                v.block = Some(format!("the hook failed ({why}), and it fails closed"))
            }
        }
        v
    };
    match &run.exit {
        HookExit::Code(0) => {}
        HookExit::Code(2) => {
            let stderr = text(&run.stderr);
            let reason = if stderr.is_empty() {
                format!(
                    "blocked by the hook `{}`",
                    cap(secrets.redact_string(command.command.clone()))
                )
            } else {
                stderr
            };
            return Verdict {
                block: Some(reason),
                ..Verdict::default()
            };
        }
        HookExit::Code(code) => {
            let stderr = text(&run.stderr);
            let tail = if stderr.is_empty() {
                String::new()
            } else {
                format!(": {stderr}")
            };
            return failed(format!("exit code {code}{tail}"));
        }
        HookExit::Signal(signal) => return failed(format!("ended by signal {signal}")),
        HookExit::TimedOut => {
            return failed(format!(
                "did not finish within {} s and was killed",
                command.timeout.as_secs_f64()
            ));
        }
        HookExit::NotStarted(why) => return failed(format!("could not start: {why}")),
    }
    if run.truncated {
        return failed(format!(
            "its output is over {} bytes; it was not read",
            MAX_HOOK_OUTPUT
        ));
    }
    let stdout = String::from_utf8_lossy(&run.stdout);
    let trimmed = stdout.trim();
    if trimmed.is_empty() {
        return Verdict::default();
    }
    if !trimmed.starts_with('{') {
        let mut v = Verdict::default();
        if matches!(event, HookEvent::SessionStart | HookEvent::UserPromptSubmit) {
            v.context = Some(text(trimmed.as_bytes()));
        }
        return v;
    }
    let mut value: Value = match serde_json::from_str(trimmed) {
        Ok(v) => v,
        Err(e) => {
            let start = crate::text::shorten(trimmed, 200).into_owned();
            return failed(format!(
                "its output is not valid JSON ({e}): {}",
                secrets.redact_string(start)
            ));
        }
    };
    secrets.redact_json(&mut value);
    match read_json(event, &value) {
        Ok(v) => v,
        Err(e) => failed(e),
    }
}

/// Reads a JSON answer; an error says which field is wrong.
fn read_json(event: HookEvent, value: &Value) -> Result<Verdict, String> {
    let Some(object) = value.as_object() else {
        return Err("its output is JSON but not an object".into());
    };
    let mut v = Verdict::default();
    let string = |o: &Map<String, Value>, key: &str| -> Result<Option<String>, String> {
        match o.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(cap(s.clone()))),
            Some(_) => Err(format!("`{key}` in its output must be a string")),
        }
    };
    match object.get("continue") {
        None | Some(Value::Null) | Some(Value::Bool(true)) => {}
        Some(Value::Bool(false)) => {
            v.stop = Some(
                string(object, "stopReason")?.unwrap_or_else(|| "a hook stopped the run".into()),
            );
        }
        Some(_) => return Err("`continue` in its output must be true or false".into()),
    }
    v.system_message = string(object, "systemMessage")?;
    let reason = string(object, "reason")?;
    match string(object, "decision")?.as_deref() {
        None => {}
        Some("block") => {
            v.block = Some(reason.clone().unwrap_or_else(|| "blocked by a hook".into()));
        }
        // Claude Code's older PreToolUse answer.
        Some("approve") => v.permission = Some(Permission::Allow),
        Some(other) => {
            return Err(format!(
                "`decision` in its output must be \"block\", not \"{other}\""
            ));
        }
    }
    let specific = match object.get("hookSpecificOutput") {
        None | Some(Value::Null) => return Ok(v),
        Some(Value::Object(o)) => o,
        Some(_) => return Err("`hookSpecificOutput` in its output must be an object".into()),
    };
    if let Some(name) = string(specific, "hookEventName")? {
        if name != event.name() {
            return Err(format!(
                "its hookSpecificOutput is for `{name}`, but the event is `{}`",
                event.name()
            ));
        }
    }
    v.context = string(specific, "additionalContext")?;
    let decision_reason = string(specific, "permissionDecisionReason")?;
    match string(specific, "permissionDecision")?.as_deref() {
        None => {}
        Some("allow") => v.permission = Some(Permission::Allow),
        Some("ask") => v.permission = Some(Permission::Ask),
        Some("deny") => {
            v.block = Some(
                decision_reason
                    .clone()
                    .unwrap_or_else(|| "denied by a hook".into()),
            )
        }
        Some(other) => {
            return Err(format!(
                "`permissionDecision` must be \"allow\", \"deny\" or \"ask\", not \"{other}\""
            ));
        }
    }
    if v.permission.is_some() {
        v.reason = decision_reason;
    }
    let mut updated = match specific.get("updatedInput") {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(o.clone()),
        Some(_) => return Err("`updatedInput` in its output must be an object".into()),
    };
    // PermissionRequest answers as `decision: {behavior, message, updatedInput}`.
    match specific.get("decision") {
        None | Some(Value::Null) => {}
        Some(Value::Object(d)) => {
            let message = string(d, "message")?;
            match string(d, "behavior")?.as_deref() {
                Some("allow") => v.permission = Some(Permission::Allow),
                Some("deny") => {
                    v.block = Some(message.unwrap_or_else(|| "denied by a hook".into()))
                }
                Some(other) => {
                    return Err(format!(
                        "`decision.behavior` must be \"allow\" or \"deny\", not \"{other}\""
                    ));
                }
                None => return Err("`decision` needs a `behavior`".into()),
            }
            match d.get("updatedInput") {
                None | Some(Value::Null) => {}
                Some(Value::Object(o)) => updated = Some(o.clone()),
                Some(_) => return Err("`decision.updatedInput` must be an object".into()),
            }
        }
        Some(_) => return Err("`hookSpecificOutput.decision` must be an object".into()),
    }
    v.updated_input = updated;
    Ok(v)
}

/// Text cut to [`MAX_HOOK_TEXT`] bytes, with a note when it was longer.
fn cap(text: String) -> String {
    if text.len() <= MAX_HOOK_TEXT {
        return text;
    }
    crate::text::shorten(&text, MAX_HOOK_TEXT).into_owned()
}

/// The answers of one event's hooks together: any block wins, then `ask`, then `allow`. Texts
/// keep configuration order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Combined {
    /// Set when any hook blocked: every blocking hook's reason, one per line.
    pub block: Option<String>,
    /// `ask` when any hook asked, else `allow` when any allowed (only without a block).
    pub permission: Option<Permission>,
    /// The stop reason of the first hook that stopped the run.
    pub stop: Option<String>,
    /// Every hook's context for the model.
    pub context: Vec<String>,
    /// The first `updatedInput` (in configuration order) of a hook that did not block.
    pub updated_input: Option<Map<String, Value>>,
}

/// Combines the verdicts of one event's hooks, given in configuration order.
pub fn combine(verdicts: &[Verdict]) -> Combined {
    let mut c = Combined::default();
    let blocks: Vec<&str> = verdicts.iter().filter_map(|v| v.block.as_deref()).collect();
    if !blocks.is_empty() {
        c.block = Some(blocks.join("\n"));
    } else if verdicts
        .iter()
        .any(|v| v.permission == Some(Permission::Ask))
    {
        c.permission = Some(Permission::Ask);
    } else if verdicts
        .iter()
        .any(|v| v.permission == Some(Permission::Allow))
    {
        c.permission = Some(Permission::Allow);
    }
    c.stop = verdicts.iter().find_map(|v| v.stop.clone());
    c.context = verdicts.iter().filter_map(|v| v.context.clone()).collect();
    if c.block.is_none() {
        c.updated_input = verdicts.iter().find_map(|v| v.updated_input.clone());
    }
    c
}
