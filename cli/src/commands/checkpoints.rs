//! `hrns checkpoints`, `hrns undo` and `hrns rewind`: a saved session's checkpoints listed,
//! its turns' file changes taken back (or brought back), and the session put back to before a
//! turn. The decisions are the core's `Timeline` (`hrns_core::checkpoint::timeline`);
//! the work is [`crate::host::checkpoints`]'s.

use crate::args::{CheckpointsArgs, Global, RewindArgs, UndoArgs};
use crate::host::checkpoints::{self as host, RestoreError};
use crate::host::sessions::{self, Claim, LoadedSession, SessionLog};
use crate::setup::{CliError, ConfigFile};
use hrns_core::checkpoint::Overwrite;
use hrns_core::checkpoint::timeline::{Code, Conversation, RestorePoint, Timeline};
use std::path::{Path, PathBuf};

/// The session `id` names, or the latest one started in this directory.
fn session_path(id: Option<&str>) -> Result<PathBuf, CliError> {
    let dir = crate::setup::paths::state_dir()
        .map_err(CliError::usage)?
        .join("sessions");
    match id {
        Some(id) => sessions::find(&dir, id).map_err(CliError::usage),
        None => {
            let cwd = std::env::current_dir()
                .and_then(|d| d.canonicalize())
                .map_err(|e| CliError::usage(format!("cannot use the current directory: {e}")))?;
            let cwd = cwd.display().to_string();
            sessions::latest_in(&dir, &cwd).ok_or_else(|| {
                CliError::usage(format!(
                    "no saved session started in {cwd}; name one with --session ID (see `hrns sessions`)"
                ))
            })
        }
    }
}

fn load(path: &Path) -> Result<LoadedSession, CliError> {
    let loaded = sessions::load(path).map_err(|e| CliError::usage(e.to_string()))?;
    for w in &loaded.warnings {
        eprintln!("hrns: warning: {}", crate::term::safe_text::safe(w));
    }
    Ok(loaded)
}

/// The session's file, for this command alone: a session another hrns still writes is left
/// to it (its own `/undo` works there).
fn claim(path: &Path) -> Result<SessionLog, CliError> {
    let id = sessions::short_id(path);
    match sessions::claim(path, sessions::FORK_GRACE, || {}) {
        Ok(Claim::Claimed(claimed)) => SessionLog::append_to(claimed, &id)
            .map_err(|e| CliError::failure(format!("cannot write the session {id}: {e}"))),
        Ok(Claim::Busy) => Err(CliError::failure(format!(
            "session {id} is being written by another hrns (a running exec or the UI); use /undo there, or wait for it to end"
        ))),
        Ok(Claim::Removed) => Err(CliError::usage(format!(
            "session {id} was removed by the hrns that wrote it"
        ))),
        Err(e) => Err(CliError::failure(format!(
            "cannot open the session {}: {e}",
            path.display()
        ))),
    }
}

/// The session's working directory, which its checkpoints are of.
fn workspace(loaded: &LoadedSession) -> Result<PathBuf, CliError> {
    let dir = PathBuf::from(&loaded.header.cwd);
    if !dir.is_dir() {
        return Err(CliError::failure(format!(
            "the session's directory {} is gone; its checkpoints cannot be restored there",
            dir.display()
        )));
    }
    Ok(dir)
}

/// `hrns checkpoints`.
pub(crate) fn list(global: &Global, args: &CheckpointsArgs) -> Result<u8, CliError> {
    let path = session_path(args.session.as_deref())?;
    let loaded = load(&path)?;
    let id = loaded.header.id.clone();
    let timeline = host::timeline(&loaded);
    let file = ConfigFile::load(global.config.as_deref())?;
    if args.prune {
        let ws = workspace(&loaded)?;
        let settings = file.config.checkpoint_settings().unwrap_or_default();
        let store = host::open_any(&settings, &ws).map_err(CliError::failure)?;
        let before = store.disk_use();
        let after = store
            .prune(&[id.as_str()])
            .map_err(|e| CliError::failure(format!("pruning failed: {e}")))?;
        if args.json {
            println!(
                "{}",
                serde_json::json!({"type": "pruned", "kept_session_id": id, "bytes_before": before, "bytes_after": after})
            );
        } else {
            println!(
                "pruned the checkpoints of every session of {} but {id}: {} → {}",
                ws.display(),
                bytes(before),
                bytes(after)
            );
        }
        return Ok(0);
    }
    if args.json {
        println!("{}", list_json(&id, &loaded.header.cwd, &timeline));
        return Ok(0);
    }
    print_list(&id, &loaded.header.cwd, &timeline);
    Ok(0)
}

fn bytes(n: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    format!("{:.1} MiB", n as f64 / MIB)
}

fn print_list(id: &str, cwd: &str, timeline: &Timeline) {
    use crate::term::safe_text::safe;
    let s = crate::term::style::Style::stdout();
    println!("session {id} in {}", safe(cwd));
    if timeline.turns().is_empty() {
        println!("no turns yet");
    }
    for turn in timeline.turns() {
        let mut marks = Vec::new();
        if turn.code == Code::Undone {
            marks.push("files undone");
        }
        if turn.conversation == Conversation::Rewound {
            marks.push("rewound");
        }
        let marks = match marks.is_empty() {
            true => String::new(),
            false => format!("  ({})", marks.join(", ")),
        };
        let changed = turn.changed();
        let files = match (changed.len(), turn.checkpoints.is_empty()) {
            (0, true) => "no checkpoint".to_owned(),
            (0, false) => "no file changed".to_owned(),
            (n, _) => crate::exec::output::count(n, "file") + " changed",
        };
        println!(
            "{}  {}  {}{}",
            s.tool(&format!("turn {}", turn.number)),
            crate::exec::output::one_line(&safe(&turn.message), 60),
            s.dim(&files),
            marks
        );
        for c in &turn.checkpoints {
            if c.moment == hrns_core::checkpoint::Moment::BeforeTurn {
                continue;
            }
            if c.changed.is_empty() {
                continue;
            }
            println!(
                "  step {}  {}  {}",
                c.step,
                s.dim(&c.id[..c.id.len().min(10)]),
                safe(&c.changed.join(", "))
            );
        }
        for reason in &turn.failed {
            println!("  {} {}", s.error("checkpoint failed:"), safe(reason));
        }
    }
}

fn list_json(id: &str, cwd: &str, timeline: &Timeline) -> serde_json::Value {
    let turns: Vec<serde_json::Value> = timeline
        .turns()
        .iter()
        .map(|t| {
            let checkpoints: Vec<serde_json::Value> = t
                .checkpoints
                .iter()
                .map(|c| serde_json::json!({"id": c.id, "step": c.step, "moment": c.moment, "changed": c.changed}))
                .collect();
            serde_json::json!({
                "turn": t.number,
                "message": t.message,
                "changed": t.changed(),
                "code": match t.code { Code::Kept => "kept", Code::Undone => "undone" },
                "conversation": match t.conversation { Conversation::Kept => "kept", Conversation::Rewound => "rewound" },
                "checkpoints": checkpoints,
                "failed": t.failed,
            })
        })
        .collect();
    serde_json::json!({"type": "checkpoints", "session_id": id, "cwd": cwd, "turns": turns})
}

fn overwrite(force: bool) -> Overwrite {
    match force {
        true => Overwrite::Force,
        false => Overwrite::Never,
    }
}

/// Carries out `point` and reports it.
fn restore_and_report(
    global: &Global,
    loaded: &LoadedSession,
    point: &RestorePoint,
    force: bool,
    json: bool,
    log: &mut SessionLog,
) -> Result<(), CliError> {
    let file = ConfigFile::load(global.config.as_deref())?;
    let ws = workspace(loaded)?;
    let id = &loaded.header.id;
    let done =
        host::restore(&file.config, &ws, id, point, overwrite(force), log).map_err(
            |e| match e {
                RestoreError::Store(m) => CliError::failure(m),
                e @ RestoreError::Record(_) => CliError::failure(e.to_string()),
            },
        )?;
    if json {
        println!("{}", host::done_json(&done, id));
    } else {
        for line in host::done_lines(&done) {
            println!("{}", crate::term::safe_text::safe(&line));
        }
    }
    Ok(())
}

/// `hrns undo`.
pub(crate) fn undo(global: &Global, args: &UndoArgs) -> Result<u8, CliError> {
    let path = session_path(args.session.as_deref())?;
    let mut log = claim(&path)?;
    let loaded = load(&path)?;
    let timeline = host::timeline(&loaded);
    let point = match args.redo {
        true => timeline.redo(),
        false => timeline.undo(args.turns as usize),
    }
    .map_err(|e| CliError::failure(e.to_string()))?;
    restore_and_report(global, &loaded, &point, args.force, args.json, &mut log)?;
    Ok(0)
}

/// `hrns rewind`.
pub(crate) fn rewind(global: &Global, args: &RewindArgs) -> Result<u8, CliError> {
    let path = session_path(Some(&args.session))?;
    let mut log = claim(&path)?;
    let loaded = load(&path)?;
    let timeline = host::timeline(&loaded);
    timeline
        .check_turn(args.to)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let code = !args.conversation;
    let conversation = !args.code;
    if code {
        match timeline
            .rewind_code(args.to)
            .map_err(|e| CliError::failure(e.to_string()))?
        {
            Some(point) => {
                restore_and_report(global, &loaded, &point, args.force, args.json, &mut log)?
            }
            None if args.json => println!(
                "{}",
                serde_json::json!({"type": "undo", "session_id": loaded.header.id, "turns": [], "restored": [], "removed": [], "kept": []})
            ),
            None => println!(
                "no file to restore: turn {} and later changed none that is not undone already",
                args.to
            ),
        }
    }
    if conversation {
        log.record_rewind(args.to).map_err(|e| {
            CliError::failure(format!(
                "cannot write the session {}: {e}",
                loaded.header.id
            ))
        })?;
        let id = &loaded.header.id;
        if args.json {
            println!(
                "{}",
                serde_json::json!({"type": "rewind", "session_id": id, "turn": args.to})
            );
        } else {
            println!(
                "the conversation is back to just before turn {}; `hrns exec --resume {id} …` or `hrns --resume {id}` goes on from there",
                args.to
            );
        }
    }
    Ok(0)
}
