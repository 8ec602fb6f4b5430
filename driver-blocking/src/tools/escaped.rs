//! Processes of a command that left its process group (`setsid`, a daemon's double fork):
//! found by a marker in their environment and ended when the call ends.
//!
//! Killing the command's process group does not reach a process that made a group or session
//! of its own. Every command gets [`MARKER_VAR`] with a value unique to the call; the
//! environment is inherited by everything the command starts, so at the end of the call hrns
//! looks through `/proc` for processes carrying it outside the group, kills them, and reaps
//! those that were reparented to it (the `hrns` program registers as child subreaper). A
//! process that clears its own environment is not found: this ends accidents, it is not a
//! wall (the sandbox is).

use rustix::process::{Pid, Signal, WaitOptions, getpid, kill_process, waitpid};
use std::sync::atomic::{AtomicU64, Ordering};

/// The variable that marks a command's processes.
pub(super) const MARKER_VAR: &str = "HRNS_COMMAND_ID";

/// A marker value unique to one call in this process.
pub(super) fn new_marker() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Kills every process that carries `marker` and is not in `group`, and reaps the ones that
/// are children of this process. Does nothing where there is no `/proc`.
pub(super) fn end_escaped(marker: &str, group: Option<Pid>) {
    let needle = format!("{MARKER_VAR}={marker}");
    end_marked(|var| var == needle.as_bytes(), group);
}

/// Ends every process that any command of this process started and that is still running:
/// for a program that exits after a cancel (a signal), when tool threads may not have finished
/// their own cleanup. Does nothing where there is no `/proc`.
pub fn end_all_commands() {
    let prefix = format!("{MARKER_VAR}={}-", std::process::id());
    end_marked(|var| var.starts_with(prefix.as_bytes()), None);
}

fn end_marked(matches: impl Fn(&[u8]) -> bool, group: Option<Pid>) {
    // Twice: a process may have forked while the first pass looked.
    for _ in 0..2 {
        let found = escaped(&matches, group);
        if found.is_empty() {
            return;
        }
        let me = getpid();
        for (pid, parent) in found {
            let _ = kill_process(pid, Signal::KILL);
            if parent == Some(me) {
                let _ = waitpid(Some(pid), WaitOptions::empty());
            }
        }
    }
}

/// The processes with a variable that `matches` outside `group`, with their parents.
fn escaped(matches: &impl Fn(&[u8]) -> bool, group: Option<Pid>) -> Vec<(Pid, Option<Pid>)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = getpid();
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
            .and_then(Pid::from_raw)
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !environ.split(|&b| b == 0).any(matches) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command name in parentheses: state, parent, process group.
        let mut fields = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest)
            .unwrap_or("")
            .split_whitespace();
        let parent = fields
            .nth(1)
            .and_then(|p| p.parse().ok())
            .and_then(Pid::from_raw);
        let pgrp = fields
            .next()
            .and_then(|p| p.parse().ok())
            .and_then(Pid::from_raw);
        if group.is_none() || pgrp != group {
            found.push((pid, parent));
        }
    }
    found
}
