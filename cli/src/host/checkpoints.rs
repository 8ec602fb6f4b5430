//! Checkpoints for the front ends: opening the workspace's store under the state directory,
//! reading a saved session's [`Timeline`], and carrying out an undo, a redo or the code half
//! of a rewind, recorded in the session file. `exec`, the TUI and `hrns undo` / `rewind` /
//! `checkpoints` all go through here, so they say and do the same.

use crate::host::sessions::{LoadedSession, MarkKind, SessionLog, turn_starts};
use hrns_blocking::{
    CheckpointError, CheckpointId, CheckpointLimits, CheckpointStore, Checkpointer,
};
use hrns_core::checkpoint::timeline::{Restore, RestoreKind, RestorePoint, Taken, Timeline};
use hrns_core::checkpoint::{Checkpoints, Kept, Overwrite, RestoreAction};
use hrns_core::config::{CheckpointSettings, Config};
use hrns_core::session::Event;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `$XDG_STATE_HOME/hrns/checkpoints`: one shadow repository per workspace below it.
pub(crate) fn root() -> Result<PathBuf, String> {
    Ok(crate::setup::paths::state_dir()?.join("checkpoints"))
}

/// The store's limits with the config's disk cap.
fn limits(settings: &CheckpointSettings) -> CheckpointLimits {
    CheckpointLimits {
        max_disk_bytes: settings.max_bytes,
        ..CheckpointLimits::default()
    }
}

/// Opens the store of `workspace`, with the settings of `config` (checked when the run was
/// set up; a bad value here falls back to the defaults). `Ok(None)` when the config turns
/// checkpoints off; an error says why there are none (no `git`), for one warning.
pub(crate) fn open(config: &Config, workspace: &Path) -> Result<Option<CheckpointStore>, String> {
    let settings = config.checkpoint_settings().unwrap_or_default();
    if settings.enabled == Checkpoints::Off {
        return Ok(None);
    }
    open_any(&settings, workspace).map(Some)
}

/// Opens the store of `workspace` whatever the config says of taking new checkpoints (an undo
/// of old ones still works after `"checkpoints": false`).
pub(crate) fn open_any(
    settings: &CheckpointSettings,
    workspace: &Path,
) -> Result<CheckpointStore, String> {
    let root = root()?;
    crate::setup::paths::private_dir(&root)
        .map_err(|e| format!("cannot create {}: {e}", root.display()))?;
    CheckpointStore::open(&root, workspace, limits(settings)).map_err(|e| match e {
        CheckpointError::GitMissing => e.to_string(),
        other => format!(
            "cannot open the checkpoints of {}: {other}",
            workspace.display()
        ),
    })
}

/// The warning shown once when checkpoints are on but cannot be taken.
pub(crate) fn off_warning(why: &str) -> String {
    format!("checkpoints are off, so undo cannot take this session's changes back: {why}")
}

/// A checkpointer for session `id` in `workspace`, or `None` (with the reason to warn of
/// once, when it is not the config's choice).
pub(crate) fn checkpointer(
    config: &Config,
    workspace: &Path,
    id: &str,
) -> (Option<Arc<Checkpointer>>, Option<String>) {
    match open(config, workspace) {
        Ok(Some(store)) => (Some(Arc::new(Checkpointer::new(store, id))), None),
        Ok(None) => (None, None),
        Err(why) => (None, Some(off_warning(&why))),
    }
}

/// The text of the user's message that started each turn, and the timeline of a loaded
/// session: its turns, their checkpoints, and the restores and rewinds recorded.
pub(crate) fn timeline(s: &LoadedSession) -> Timeline {
    let starts = turn_starts(&s.events);
    let mut t = Timeline::new();
    let mut marks = s.marks.iter().peekable();
    for (i, event) in s.events.iter().enumerate() {
        while let Some(mark) = marks.next_if(|m| m.at <= i) {
            apply(&mut t, &mark.kind);
        }
        if starts.binary_search(&i).is_ok() {
            let text = match s.events.get(i + 1) {
                Some(Event::Message { message }) => message.text(),
                _ => String::new(),
            };
            t.turn_started(text);
            continue;
        }
        match event {
            Event::Checkpoint {
                id,
                step,
                moment,
                changed,
                ..
            } => t.checkpoint(Taken {
                id: id.clone(),
                step: *step,
                moment: *moment,
                changed: changed.clone(),
            }),
            Event::CheckpointFailed { reason, .. } => t.checkpoint_failed(reason.clone()),
            Event::TurnStarted { .. }
            | Event::RequestStarted { .. }
            | Event::TextDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::RefusalDelta { .. }
            | Event::ToolCallStreaming { .. }
            | Event::ToolCall { .. }
            | Event::ApprovalRequested { .. }
            | Event::ToolResult { .. }
            | Event::Usage { .. }
            | Event::Retry { .. }
            | Event::OptionDropped { .. }
            | Event::ToolsChanged { .. }
            | Event::ContextCompacted { .. }
            | Event::PlanUpdated { .. }
            | Event::Message { .. }
            | Event::Hook { .. }
            | Event::TurnFinished { .. }
            | Event::TurnFailed { .. }
            | Event::TurnCancelled
            | Event::Child(_) => {}
        }
    }
    for mark in marks {
        apply(&mut t, &mark.kind);
    }
    t
}

fn apply(t: &mut Timeline, kind: &MarkKind) {
    match kind {
        MarkKind::Restore(r) => t.restored(r),
        MarkKind::Rewind(turn) => t.rewound(*turn),
    }
}

/// What a restore did, for people and for `--json`.
#[derive(Debug)]
pub(crate) struct Done {
    pub(crate) record: Restore,
    /// The paths written back.
    pub(crate) written: Vec<String>,
    /// The paths removed (the undone steps created them).
    pub(crate) removed: Vec<String>,
    /// The paths left alone.
    pub(crate) kept: Vec<Kept>,
}

/// Why a restore was not made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RestoreError {
    #[error("{0}")]
    Store(String),
    #[error("the files were restored, but recording it in the session file failed: {0}")]
    Record(std::io::Error),
}

/// Carries out `point` in `workspace` for `session` and records it in `log`.
pub(crate) fn restore(
    config: &Config,
    workspace: &Path,
    session: &str,
    point: &RestorePoint,
    overwrite: Overwrite,
    log: &mut SessionLog,
) -> Result<Done, RestoreError> {
    let settings = config.checkpoint_settings().unwrap_or_default();
    let store = open_any(&settings, workspace).map_err(RestoreError::Store)?;
    let restored = store
        .restore(
            session,
            &CheckpointId(point.to.clone()),
            &CheckpointId(point.latest.clone()),
            overwrite,
        )
        .map_err(|e| RestoreError::Store(e.to_string()))?;
    let mut written = Vec::new();
    let mut removed = Vec::new();
    for action in &restored.actions {
        match action {
            RestoreAction::Write { path, .. } => written.push(path.clone()),
            RestoreAction::Remove { path } => removed.push(path.clone()),
        }
    }
    let mut all: Vec<String> = written.iter().chain(&removed).cloned().collect();
    all.sort();
    let record = Restore {
        kind: point.kind,
        to: point.to.clone(),
        latest: point.latest.clone(),
        before: restored.before.0.clone(),
        turns: point.turns.clone(),
        restored: all,
        kept: restored.kept.iter().map(|k| k.path.clone()).collect(),
    };
    log.record_restore(&record).map_err(RestoreError::Record)?;
    Ok(Done {
        record,
        written,
        removed,
        kept: restored.kept,
    })
}

/// `turn 3` or `turns 2, 3`.
pub(crate) fn turns_text(turns: &[u64]) -> String {
    let list: Vec<String> = turns.iter().map(u64::to_string).collect();
    match list.len() {
        1 => format!("turn {}", list[0]),
        _ => format!("turns {}", list.join(", ")),
    }
}

/// The lines that tell what a restore did: which files came back, which were kept and why.
pub(crate) fn done_lines(done: &Done) -> Vec<String> {
    let what = match done.record.kind {
        RestoreKind::Undo => "undid",
        RestoreKind::Redo => "redid",
    };
    let mut lines = Vec::new();
    let changed = done.written.len() + done.removed.len();
    if changed == 0 {
        lines.push(format!(
            "{what} {}: no file needed restoring",
            turns_text(&done.record.turns)
        ));
    } else {
        lines.push(format!(
            "{what} {}: restored {}",
            turns_text(&done.record.turns),
            crate::exec::output::count(changed, "file")
        ));
    }
    for path in &done.written {
        lines.push(format!("  restored {path}"));
    }
    for path in &done.removed {
        lines.push(format!("  removed  {path}"));
    }
    for k in &done.kept {
        lines.push(format!("  kept     {} ({})", k.path, k.reason));
    }
    if !done.kept.is_empty() {
        lines.push(
            "files changed after the agent's last step were left as they are; --force (or yes in the UI) overwrites them"
                .to_owned(),
        );
    }
    lines
}

/// The JSON object of a restore, for `--json`.
pub(crate) fn done_json(done: &Done, session: &str) -> serde_json::Value {
    let kind = match done.record.kind {
        RestoreKind::Undo => "undo",
        RestoreKind::Redo => "redo",
    };
    let kept: Vec<serde_json::Value> = done
        .kept
        .iter()
        .map(|k| serde_json::json!({"path": k.path, "reason": k.reason.to_string()}))
        .collect();
    serde_json::json!({
        "type": kind,
        "session_id": session,
        "turns": done.record.turns,
        "to": done.record.to,
        "before": done.record.before,
        "restored": done.written,
        "removed": done.removed,
        "kept": kept,
    })
}

/// The paths a restore to `point` would leave because they changed after the agent (so a
/// front end can ask first).
pub(crate) fn would_keep(
    config: &Config,
    workspace: &Path,
    point: &RestorePoint,
) -> Result<Vec<Kept>, String> {
    let settings = config.checkpoint_settings().unwrap_or_default();
    let store = open_any(&settings, workspace)?;
    store
        .preview(
            &CheckpointId(point.to.clone()),
            &CheckpointId(point.latest.clone()),
            Overwrite::Never,
        )
        .map(|plan| plan.kept)
        .map_err(|e| e.to_string())
}
