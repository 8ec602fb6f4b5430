//! Hooks in the CLI: which are configured (`hooks` in config.json, per project under
//! `projects`, and an approved `./.hrns/hooks.json`), the facts their input carries, and
//! `hrns hooks list` / `hrns hooks approve`.
//!
//! A project's `.hrns/hooks.json` runs programs named by whoever wrote the repository, so its
//! hooks run only after the user approved that file with that exact content (`hrns hooks
//! approve`), as `./.mcp.json` is approved; a changed file needs approving again. Until then
//! they are skipped with a warning, never run. Approvals live in the state directory
//! (`hooks-approved.json`, 0600, see [`approvals`]), keyed by the file's absolute path.

use crate::args::{Global, HooksCommand};
use crate::setup::approvals;
use crate::setup::{CliError, ConfigFile};
use crate::term::safe_text::safe;
use hrns_core::file_refusal::MCP_CONFIG_CAP;
use hrns_core::hooks::{HookSource, Hooks};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The project file, below the workspace.
pub(crate) const PROJECT_FILE: &str = ".hrns/hooks.json";

/// Whether the project file's hooks may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Approval {
    /// Approved with this content.
    Approved,
    /// Not approved, or changed since: its hooks are skipped.
    NotApproved,
}

/// The configured hooks and what was wrong with the configuration.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// The hooks that run: the user's, then an approved project file's.
    pub(crate) hooks: Hooks,
    /// The hooks of a project file that is not approved (listed, never run).
    pub(crate) skipped: Hooks,
    pub(crate) warnings: Vec<String>,
    /// `./.hrns/hooks.json`, when there is one.
    pub(crate) project: Option<(PathBuf, Approval)>,
}

/// Reads the hooks for `workspace`: `hooks` of the config, then those of the longest
/// `projects` entry that holds the workspace, then an approved `.hrns/hooks.json`.
pub(crate) fn configured(file: &ConfigFile, workspace: &Path) -> Found {
    let config = &file.config;
    let name = file.path.display().to_string();
    let mut found = Found::default();
    if let Some(value) = config.extra.get("hooks") {
        let (hooks, errors) = Hooks::parse(value, &HookSource::User(name.clone()));
        found.hooks.extend(hooks);
        found.warnings.extend(errors);
    }
    let project = config
        .extra
        .get("projects")
        .and_then(Value::as_object)
        .and_then(|projects| {
            projects
                .iter()
                .filter(|(dir, _)| workspace.starts_with(dir.as_str()))
                .max_by_key(|(dir, _)| dir.len())
        });
    if let Some((dir, value)) = project.and_then(|(d, e)| e.get("hooks").map(|h| (d, h))) {
        let (hooks, errors) = Hooks::parse(
            value,
            &HookSource::UserProject {
                file: name,
                dir: dir.clone(),
            },
        );
        found.hooks.extend(hooks);
        found.warnings.extend(errors);
    }
    let path = workspace.join(PROJECT_FILE);
    let text = match hrns_blocking::read_text(&path, MCP_CONFIG_CAP) {
        Ok(text) => text,
        Err(e) if e.is_missing() => return found,
        Err(e) => {
            found
                .warnings
                .push(format!("{}; its hooks are not run", e.skipped()));
            return found;
        }
    };
    let source = HookSource::ProjectFile(path.display().to_string());
    let hooks = match serde_json::from_str::<Value>(&text) {
        Ok(value) => {
            let (hooks, errors) = Hooks::parse(value.get("hooks").unwrap_or(&Value::Null), &source);
            found.warnings.extend(errors);
            hooks
        }
        Err(e) => {
            found.warnings.push(format!(
                "{}: not valid JSON: {e}; its hooks are not run",
                path.display()
            ));
            Hooks::new()
        }
    };
    let approval = if approvals::HOOKS.approves(&path, &text) {
        found.hooks.extend(hooks);
        Approval::Approved
    } else {
        if !hooks.is_empty() {
            found.warnings.push(format!(
                "{} is not approved, so its hooks are skipped; review it and run `hrns hooks approve`",
                path.display()
            ));
        }
        found.skipped = hooks;
        Approval::NotApproved
    };
    found.project = Some((path, approval));
    found
}

/// `hrns hooks …`.
pub(crate) fn command(global: &Global, command: &HooksCommand) -> Result<u8, CliError> {
    let workspace = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .map_err(|e| CliError::usage(format!("cannot use the current directory: {e}")))?;
    match command {
        HooksCommand::List { json, .. } => {
            let file = ConfigFile::load(global.config.as_deref())?;
            list(&file, &workspace, *json)
        }
        HooksCommand::Approve => approve(&workspace),
    }
}

/// One line (or JSON object) per hook command: event, matcher, command, timeout, where it
/// comes from, and whether it runs.
fn list(file: &ConfigFile, workspace: &Path, json: bool) -> Result<u8, CliError> {
    let found = configured(file, workspace);
    for w in &found.warnings {
        eprintln!("hrns: warning: {}", safe(w));
    }
    if found.hooks.is_empty() && found.skipped.is_empty() {
        eprintln!(
            "no hooks configured (hooks in config.json, projects.<dir>.hooks, or ./{PROJECT_FILE})"
        );
    }
    let mut out = std::io::stdout().lock();
    let all = found
        .hooks
        .entries()
        .iter()
        .map(|e| (e, true))
        .chain(found.skipped.entries().iter().map(|e| (e, false)));
    for (entry, runs) in all {
        let approved = match &entry.source {
            HookSource::User(_) | HookSource::UserProject { .. } => "yours",
            HookSource::ProjectFile(_) if runs => "approved",
            HookSource::ProjectFile(_) => "not approved",
        };
        let fail = match entry.command.fail {
            hrns_core::hooks::FailMode::Open => "open",
            hrns_core::hooks::FailMode::Closed => "closed",
        };
        let line = if json {
            serde_json::json!({
                "event": entry.event.name(),
                "matcher": entry.matcher.as_str(),
                "command": entry.command.command,
                "timeout_secs": entry.command.timeout.as_secs_f64(),
                "fail": fail,
                "source": entry.source.to_string(),
                "approved": approved,
                "runs": runs,
            })
            .to_string()
        } else {
            let matcher = match entry.matcher.as_str() {
                "" => "*",
                m => m,
            };
            format!(
                "{} [{matcher}] {} (timeout {} s, fails {fail}) — {}, {approved}",
                entry.event,
                entry.command.command,
                entry.command.timeout.as_secs_f64(),
                entry.source
            )
        };
        let _ = writeln!(out, "{}", crate::host::redact::redact(&safe(&line)));
    }
    Ok(0)
}

/// What approving the project file at `path` holding `text` approves: every command and
/// when it runs, redacted and stripped of control sequences; an error when it cannot be read.
fn approval_lines(path: &Path, text: &str) -> Result<Vec<String>, CliError> {
    let value = serde_json::from_str::<Value>(text)
        .map_err(|e| CliError::usage(format!("{} is not valid JSON: {e}", path.display())))?;
    let source = HookSource::ProjectFile(path.display().to_string());
    let (hooks, errors) = Hooks::parse(value.get("hooks").unwrap_or(&Value::Null), &source);
    let mut lines: Vec<String> = errors.iter().map(|e| format!("warning: {e}")).collect();
    lines.push(format!(
        "{} runs {} (as you, outside the sandbox):",
        path.display(),
        crate::exec::output::count(hooks.entries().len(), "hook command")
    ));
    for entry in hooks.entries() {
        let matcher = match entry.matcher.as_str() {
            "" => "*",
            m => m,
        };
        lines.push(format!(
            "  {} [{matcher}] {}",
            entry.event, entry.command.command
        ));
    }
    Ok(lines
        .into_iter()
        .map(|l| crate::host::redact::redact(&safe(&l)).into_owned())
        .collect())
}

/// Approves `./.hrns/hooks.json` as it is now, after listing what it runs.
fn approve(workspace: &Path) -> Result<u8, CliError> {
    let path = workspace.join(PROJECT_FILE);
    let text = hrns_blocking::read_text(&path, MCP_CONFIG_CAP)
        .map_err(|e| CliError::usage(format!("cannot read {e}")))?;
    // What is approved, said before it is.
    for line in approval_lines(&path, &text)? {
        println!("{line}");
    }
    approvals::HOOKS.save(&path, &text)?;
    println!(
        "approved {} (approve again after it changes)",
        path.display()
    );
    Ok(0)
}

/// The interactive UI's question, on the terminal before the screen is taken: a project
/// file that is not approved (or changed since) is listed, and the user approves it with a
/// yes; anything else (an empty line, end of input) leaves its hooks skipped.
pub(crate) fn ask_on_terminal(workspace: &Path) -> Result<(), CliError> {
    let path = workspace.join(PROJECT_FILE);
    let Ok(text) = hrns_blocking::read_text(&path, MCP_CONFIG_CAP) else {
        return Ok(()); // missing, or unreadable: `configured` warns
    };
    if approvals::HOOKS.approves(&path, &text) {
        return Ok(());
    }
    let Ok(lines) = approval_lines(&path, &text) else {
        return Ok(()); // not JSON: `configured` warns
    };
    let s = crate::term::style::Style::stderr();
    for line in &lines {
        eprintln!("{} {line}", s.harness("hrns:"));
    }
    eprint!(
        "{} run these hooks in this project? [y/N] ",
        s.harness("hrns:")
    );
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    // A terminal that cannot be read counts as a no: the hooks stay skipped.
    let _ = std::io::stdin().read_line(&mut answer);
    if hrns_core::sandbox::is_yes(&answer) {
        approvals::HOOKS.save(&path, &text)?;
    }
    Ok(())
}

/// The session's hooks: `found`'s, with the session's facts for their input.
pub(crate) fn for_session(
    found: &Found,
    workspace: &Path,
    session: Option<(&str, &Path)>,
    start: hrns_core::hooks::StartSource,
) -> hrns_core::hooks::SessionHooks {
    hrns_core::hooks::SessionHooks {
        hooks: std::sync::Arc::new(found.hooks.clone()),
        context: hrns_core::hooks::HookContext {
            session_id: session.map(|(id, _)| id.to_owned()).unwrap_or_default(),
            transcript_path: session
                .map(|(_, p)| p.display().to_string())
                .unwrap_or_default(),
            cwd: workspace.display().to_string(),
        },
        role: hrns_core::hooks::AgentRole::Main,
        start,
    }
}
