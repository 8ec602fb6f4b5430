//! Checkpoints of the workspace, as plain data: what a restore must write or remove, and which
//! files it must leave alone because someone changed them after the agent.
//!
//! A driver snapshots the workspace (hrns-blocking's `CheckpointStore` uses a shadow git
//! repository) and hands the facts in: the paths that differ between the checkpoint to go back
//! to and the latest snapshot, and what each path holds now. [`plan_restore`] decides; the
//! driver carries the plan out. So the rule "restore exactly what the undone steps changed,
//! never a user's later edit" lives in one place and is tested without a file system.

pub mod timeline;

use crate::tool::Effect;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Whether a session takes checkpoints around the steps that may change files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Checkpoints {
    /// No checkpoints (the default of a [`Session`](crate::Session): its owner must have a
    /// store to take them).
    #[default]
    Off,
    /// Before the first call of a turn that may change files, and after every such call, the
    /// session asks its driver for a snapshot ([`Action::TakeCheckpoint`]).
    ///
    /// [`Action::TakeCheckpoint`]: crate::session::Action::TakeCheckpoint
    On,
}

/// Whether a call with this effect may change files, so that it gets checkpoints: writes and
/// commands (an MCP tool with effects, a `task` whose child may write) do; reading and
/// fetching do not.
pub fn changes_files(effect: Effect) -> bool {
    match effect {
        Effect::Write | Effect::Exec => true,
        Effect::ReadOnly | Effect::Network => false,
    }
}

/// A snapshot the session wants taken now, before it goes on: hand the result to
/// [`Session::handle_checkpoint`](crate::Session::handle_checkpoint) with [`id`](Self::id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointDue {
    /// The request's id within the session.
    pub id: u64,
    /// The turn, from 1.
    pub turn: u64,
    /// The model request of the turn whose calls it is about, from 1.
    pub step: u32,
    /// Before the turn's first call that may change files, or after one.
    pub moment: Moment,
}

/// When a checkpoint is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Moment {
    /// Before the first call of the turn that may change files: the state to undo to.
    BeforeTurn,
    /// After a call that may have changed files.
    AfterCall,
}

/// What the driver's snapshot gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointOutcome {
    /// Taken.
    Taken {
        /// The checkpoint's id in the store.
        id: String,
        /// The paths that changed since the previous checkpoint.
        changed: Vec<String>,
        /// The paths left out (too large, too many files), each with why.
        skipped: Vec<String>,
    },
    /// Not taken (the time limit passed, git failed): the step goes on without one, and the
    /// user is warned.
    Failed {
        /// Why, for people.
        reason: String,
    },
}

/// What a snapshot holds at one path: a file's kind and its content's object id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Entry {
    /// The kind of file.
    pub kind: EntryKind,
    /// The content's id (git's blob id: the hash of the bytes, or of a link's target).
    pub oid: String,
}

/// The kinds of file a checkpoint keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A regular file without the executable bit (git mode 100644).
    File,
    /// A regular file with the executable bit (git mode 100755).
    Executable,
    /// A symbolic link; its content is the target (git mode 120000).
    Symlink,
}

impl EntryKind {
    /// The kind of a git tree mode, or `None` for modes a checkpoint does not restore
    /// (directories, submodules).
    pub fn from_git_mode(mode: &str) -> Option<EntryKind> {
        match mode {
            "100644" | "100664" => Some(EntryKind::File),
            "100755" => Some(EntryKind::Executable),
            "120000" => Some(EntryKind::Symlink),
            _ => None,
        }
    }
}

/// One path that differs between the checkpoint restored to and the latest snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathChange {
    /// The path relative to the workspace, `/`-separated.
    pub path: String,
    /// What the checkpoint restored to holds there (`None`: nothing; the steps created it).
    pub at_checkpoint: Option<Entry>,
    /// What the latest snapshot holds there (`None`: nothing; the steps deleted it).
    pub at_latest: Option<Entry>,
}

/// What a path holds in the workspace now, as the driver found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Current {
    /// Nothing is there.
    Missing,
    /// A file, executable or link, with its content's id.
    Entry(Entry),
    /// A directory (a checkpoint holds the files in it, not the directory).
    Directory,
    /// Something else a checkpoint does not hold (a socket, an unreadable file).
    Other,
}

/// Whether a restore may overwrite files changed after the latest snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overwrite {
    /// Leave them and name them (the default).
    #[default]
    Never,
    /// Restore them too (`--force`, or the user said yes).
    Force,
}

/// One change a restore makes to the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreAction {
    /// Remove the file or link at `path` (the undone steps created it).
    Remove {
        /// The path relative to the workspace.
        path: String,
    },
    /// Write `entry` at `path` (the undone steps changed or deleted it).
    Write {
        /// The path relative to the workspace.
        path: String,
        /// What to write.
        entry: Entry,
    },
}

impl RestoreAction {
    /// The path the action changes.
    pub fn path(&self) -> &str {
        match self {
            RestoreAction::Remove { path } | RestoreAction::Write { path, .. } => path,
        }
    }
}

/// A path a restore leaves as it is, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The path relative to the workspace.
    pub path: String,
    /// Why it was left.
    pub reason: KeptReason,
}

/// Why a restore left a path alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptReason {
    /// It changed after the agent's last step: an edit by the user or another program.
    ChangedSince,
}

impl fmt::Display for KeptReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeptReason::ChangedSince => f.write_str("changed after the agent's last step"),
        }
    }
}

/// What a restore will do: removals first (so a file can replace a directory the steps made),
/// then writes, each in path order; and the paths it leaves.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RestorePlan {
    /// The changes, in the order to make them.
    pub actions: Vec<RestoreAction>,
    /// The paths left alone.
    pub kept: Vec<Kept>,
}

/// Decides how to put back the paths the undone steps changed.
///
/// A path is restored only when it still holds what the latest snapshot recorded (or with
/// [`Overwrite::Force`]); otherwise someone changed it after the agent, and it is kept and
/// named. A path already as the checkpoint had it needs nothing. Paths outside `changes` are
/// never touched: there is no blanket reset.
pub fn plan_restore(
    changes: &[PathChange],
    current: impl Fn(&str) -> Current,
    overwrite: Overwrite,
) -> RestorePlan {
    // The directories the latest snapshot implies: a step that replaced a file by a directory
    // left one there, which is no change by anyone else.
    let mut latest_dirs = std::collections::HashSet::new();
    for change in changes.iter().filter(|c| c.at_latest.is_some()) {
        let mut path = change.path.as_str();
        while let Some((parent, _)) = path.rsplit_once('/') {
            if !latest_dirs.insert(parent) {
                break;
            }
            path = parent;
        }
    }
    let mut removals = Vec::new();
    let mut writes = Vec::new();
    let mut kept = Vec::new();
    for change in changes {
        let now = current(&change.path);
        let wanted = match &change.at_checkpoint {
            Some(entry) => Current::Entry(entry.clone()),
            None => Current::Missing,
        };
        if now == wanted {
            continue;
        }
        let latest = match &change.at_latest {
            Some(entry) => Current::Entry(entry.clone()),
            None => Current::Missing,
        };
        let as_latest = now == latest
            || (now == Current::Directory
                && change.at_latest.is_none()
                && latest_dirs.contains(change.path.as_str()));
        if !as_latest && overwrite == Overwrite::Never {
            kept.push(Kept {
                path: change.path.clone(),
                reason: KeptReason::ChangedSince,
            });
            continue;
        }
        match &change.at_checkpoint {
            Some(entry) => writes.push(RestoreAction::Write {
                path: change.path.clone(),
                entry: entry.clone(),
            }),
            None => removals.push(RestoreAction::Remove {
                path: change.path.clone(),
            }),
        }
    }
    // Deepest removals first, so directories empty out before their parents are looked at.
    removals.sort_by(|a, b| b.path().cmp(a.path()));
    writes.sort_by(|a, b| a.path().cmp(b.path()));
    kept.sort_by(|a, b| a.path.cmp(&b.path));
    removals.extend(writes);
    RestorePlan {
        actions: removals,
        kept,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn file(oid: &str) -> Option<Entry> {
        Some(Entry {
            kind: EntryKind::File,
            oid: oid.into(),
        })
    }

    fn change(path: &str, at_checkpoint: Option<Entry>, at_latest: Option<Entry>) -> PathChange {
        PathChange {
            path: path.into(),
            at_checkpoint,
            at_latest,
        }
    }

    fn now(map: &[(&str, Option<Entry>)]) -> impl Fn(&str) -> Current + use<> {
        let map: HashMap<String, Current> = map
            .iter()
            .map(|(p, e)| {
                let c = match e {
                    Some(e) => Current::Entry(e.clone()),
                    None => Current::Missing,
                };
                ((*p).to_owned(), c)
            })
            .collect();
        move |p| map.get(p).cloned().unwrap_or(Current::Missing)
    }

    #[test]
    fn created_files_are_removed_and_changed_or_deleted_ones_written_back() {
        let changes = [
            change("new.txt", None, file("n")),
            change("edited.rs", file("a"), file("b")),
            change("gone.md", file("g"), None),
        ];
        let plan = plan_restore(
            &changes,
            now(&[("new.txt", file("n")), ("edited.rs", file("b"))]),
            Overwrite::Never,
        );
        assert_eq!(
            plan.actions,
            vec![
                RestoreAction::Remove {
                    path: "new.txt".into()
                },
                RestoreAction::Write {
                    path: "edited.rs".into(),
                    entry: file("a").unwrap()
                },
                RestoreAction::Write {
                    path: "gone.md".into(),
                    entry: file("g").unwrap()
                },
            ]
        );
        assert!(plan.kept.is_empty());
    }

    #[test]
    fn a_file_changed_after_the_agent_is_kept_unless_forced() {
        let changes = [change("a.rs", file("old"), file("agent"))];
        let user = now(&[("a.rs", file("user"))]);
        let plan = plan_restore(&changes, &user, Overwrite::Never);
        assert!(plan.actions.is_empty());
        assert_eq!(
            plan.kept,
            vec![Kept {
                path: "a.rs".into(),
                reason: KeptReason::ChangedSince
            }]
        );
        let forced = plan_restore(&changes, &user, Overwrite::Force);
        assert_eq!(forced.actions.len(), 1);
        assert!(forced.kept.is_empty());
        // A file the user deleted after the agent counts as changed too.
        let deleted = plan_restore(&changes, now(&[]), Overwrite::Never);
        assert_eq!(deleted.kept.len(), 1);
        // Something that is no longer a file (a directory in its place) is not overwritten.
        let other = plan_restore(&changes, |_: &str| Current::Other, Overwrite::Never);
        assert_eq!(other.kept.len(), 1);
        let dir = plan_restore(&changes, |_: &str| Current::Directory, Overwrite::Never);
        assert_eq!(dir.kept.len(), 1);
    }

    #[test]
    fn a_directory_the_steps_made_in_place_of_a_file_is_theirs_not_a_later_change() {
        // The steps deleted file `d` and made `d/e/f`: `d` is a directory now, as the latest
        // snapshot implies, so the file is written back once `d/e/f` is removed.
        let changes = [
            change("d", file("x"), None),
            change("d/e/f", None, file("y")),
        ];
        let current = |p: &str| match p {
            "d" => Current::Directory,
            _ => Current::Entry(file("y").unwrap()),
        };
        let plan = plan_restore(&changes, current, Overwrite::Never);
        assert!(plan.kept.is_empty(), "{:?}", plan.kept);
        assert_eq!(
            plan.actions,
            [
                RestoreAction::Remove {
                    path: "d/e/f".into()
                },
                RestoreAction::Write {
                    path: "d".into(),
                    entry: file("x").unwrap()
                },
            ]
        );
        // A directory the latest snapshot does not imply was made by someone else: kept.
        let alone = [change("d", file("x"), None)];
        let plan = plan_restore(&alone, |_: &str| Current::Directory, Overwrite::Never);
        assert_eq!(plan.kept.len(), 1);
    }

    #[test]
    fn a_path_already_as_the_checkpoint_had_it_needs_nothing() {
        let changes = [
            change("a", file("x"), file("y")),
            change("b", None, file("z")),
        ];
        let plan = plan_restore(&changes, now(&[("a", file("x"))]), Overwrite::Never);
        assert_eq!(plan, RestorePlan::default());
    }

    #[test]
    fn mode_and_link_changes_are_changes() {
        let exe = Some(Entry {
            kind: EntryKind::Executable,
            oid: "x".into(),
        });
        let link = Entry {
            kind: EntryKind::Symlink,
            oid: "x".into(),
        };
        let changes = [change("run.sh", file("x"), exe.clone())];
        let plan = plan_restore(&changes, now(&[("run.sh", exe)]), Overwrite::Never);
        assert_eq!(plan.actions.len(), 1);
        let changes = [change("l", Some(link.clone()), file("x"))];
        let plan = plan_restore(&changes, now(&[("l", file("x"))]), Overwrite::Never);
        assert_eq!(
            plan.actions,
            vec![RestoreAction::Write {
                path: "l".into(),
                entry: link
            }]
        );
    }

    #[test]
    fn removals_come_first_deepest_first() {
        let changes = [
            change("a", file("f"), None),
            change("a/x", None, file("1")),
            change("a/y/z", None, file("2")),
        ];
        let plan = plan_restore(
            &changes,
            now(&[("a/x", file("1")), ("a/y/z", file("2"))]),
            Overwrite::Never,
        );
        let paths: Vec<&str> = plan.actions.iter().map(RestoreAction::path).collect();
        assert_eq!(paths, ["a/y/z", "a/x", "a"]);
    }

    #[test]
    fn git_modes() {
        assert_eq!(EntryKind::from_git_mode("100644"), Some(EntryKind::File));
        assert_eq!(
            EntryKind::from_git_mode("100755"),
            Some(EntryKind::Executable)
        );
        assert_eq!(EntryKind::from_git_mode("120000"), Some(EntryKind::Symlink));
        assert_eq!(EntryKind::from_git_mode("160000"), None);
        assert_eq!(EntryKind::from_git_mode("040000"), None);
    }
}
