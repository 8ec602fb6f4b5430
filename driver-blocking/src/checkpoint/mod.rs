//! [`CheckpointStore`]: snapshots of a workspace in a shadow git repository, and restoring
//! exactly the paths some steps changed.
//!
//! The shadow repository lives under hrns's state directory (one per workspace) with its own
//! `GIT_DIR`, index and config; the workspace is only its work tree. So the user's refs, index,
//! stash, config and hooks are never read for writing or run: `git status` in the workspace
//! shows the same before and after. Where the workspace is inside a git repository, the shadow
//! borrows that repository's objects through `objects/info/alternates` (read-only), so files
//! the user already committed cost no disk, and its first index is the user's `HEAD`.
//!
//! Every call of `git` runs with a deadline, with the user's global and system config, hooks,
//! `fsmonitor`, attributes-driven filters and line-end conversion switched off, so snapshots
//! hold the bytes as they are on disk.
//!
//! What the store reads of the user's repository and workspace on its own (a `.git` file,
//! `commondir`, the user's `config`, a file's current content) goes through
//! [`crate::safe_file`], so a FIFO, a device or a huge file there is refused, not waited on or
//! read whole. The shadow repository's own files (its loose refs, `info/exclude`, the list of
//! skipped paths) are hrns's, in its private state directory, and are read plainly. What a restore writes is decided in
//! [`hrns_core::checkpoint::plan_restore`]; this module gathers the facts and carries it out.

mod git;
mod paths;
mod preview;
#[cfg(test)]
mod tests;

use hrns_core::checkpoint::{
    CheckpointDue, CheckpointOutcome, Current, EntryKind, Kept, Moment, Overwrite, PathChange,
    RestoreAction, plan_restore,
};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::io::{BufRead as _, BufReader, Read as _};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Why a checkpoint could not be taken or restored.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// There is no `git` program on `PATH`: checkpoints are off.
    #[error("checkpoints need the `git` program, and none is on PATH: install git to turn them on")]
    GitMissing,
    /// A `git` call failed.
    #[error("`git {command}` failed (exit {status:?}): {stderr}")]
    Git {
        /// The arguments.
        command: String,
        /// Its exit code, if it exited.
        status: Option<i32>,
        /// What it printed on stderr, shortened.
        stderr: String,
    },
    /// A `git` call took longer than the snapshot's time limit and was killed.
    #[error("`git {command}` took longer than the checkpoint time limit and was stopped")]
    TimedOut {
        /// The arguments.
        command: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Another hrns is taking a checkpoint of the same workspace and did not finish in time.
    #[error("another hrns is taking a checkpoint of this workspace")]
    Busy,
    /// A checkpoint id that the shadow repository does not have (pruned, or not a checkpoint).
    #[error("no checkpoint {0} (it may have been pruned)")]
    Unknown(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The bounds of a store: what a snapshot skips, how long it may take, how much disk it keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointLimits {
    /// Untracked files larger than this are not snapshotted (default 10 MiB).
    pub max_file_bytes: u64,
    /// An untracked directory with more files than this is skipped whole (default 5 000).
    pub max_dir_files: usize,
    /// The longest one snapshot or restore may take (default 10 s).
    pub time_limit: Duration,
    /// The disk the shadow repository may use before the oldest sessions are pruned
    /// (default 2 GiB).
    pub max_disk_bytes: u64,
}

impl Default for CheckpointLimits {
    fn default() -> Self {
        CheckpointLimits {
            max_file_bytes: 10 * 1024 * 1024,
            max_dir_files: 5_000,
            time_limit: Duration::from_secs(10),
            max_disk_bytes: 2 * 1024 * 1024 * 1024,
        }
    }
}

/// The id of a checkpoint: the shadow repository's commit.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CheckpointId(pub String);

impl std::fmt::Display for CheckpointId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A path a snapshot left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The path relative to the workspace (a directory ends in `/`).
    pub path: String,
    /// Why.
    pub reason: SkipReason,
}

/// Why a snapshot left a path out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// An untracked file over [`CheckpointLimits::max_file_bytes`].
    TooLarge {
        /// Its size.
        bytes: u64,
    },
    /// An untracked directory with more than [`CheckpointLimits::max_dir_files`] files.
    TooManyFiles {
        /// How many were counted before giving up.
        at_least: usize,
    },
}

/// A snapshot taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The checkpoint.
    pub id: CheckpointId,
    /// The paths that differ from the previous checkpoint of the session (none for the first).
    pub changed: Vec<String>,
    /// What was left out.
    pub skipped: Vec<Skipped>,
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The paths written back or removed, in the order it changed them.
    pub actions: Vec<RestoreAction>,
    /// The paths left alone because they changed after the agent (see [`Overwrite`]).
    pub kept: Vec<Kept>,
    /// The state of the workspace just before the restore, for a redo.
    pub before: CheckpointId,
}

/// A store and the session whose checkpoints it takes: what a runner needs to carry out the
/// session's [`Action::TakeCheckpoint`](hrns_core::session::Action::TakeCheckpoint).
#[derive(Debug)]
pub struct Checkpointer {
    store: CheckpointStore,
    session: String,
}

impl Checkpointer {
    /// Checkpoints of `session` (its id, which names its chain in the store) in `store`.
    pub fn new(store: CheckpointStore, session: impl Into<String>) -> Self {
        Checkpointer {
            store,
            session: session.into(),
        }
    }

    /// The store.
    pub fn store(&self) -> &CheckpointStore {
        &self.store
    }

    /// The session whose checkpoints these are.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// Takes the snapshot the session asked for.
    pub fn take(&self, due: &CheckpointDue) -> CheckpointOutcome {
        let moment = match due.moment {
            Moment::BeforeTurn => "before",
            Moment::AfterCall => "after a call of",
        };
        let message = format!("turn {} step {}: {moment}", due.turn, due.step);
        match self.store.snapshot(&self.session, &message) {
            Ok(snapshot) => CheckpointOutcome::Taken {
                id: snapshot.id.0,
                changed: snapshot.changed,
                skipped: snapshot.skipped.iter().map(Skipped::describe).collect(),
            },
            Err(e) => CheckpointOutcome::Failed {
                reason: e.to_string(),
            },
        }
    }
}

/// Takes the snapshot `due` with `checkpointer`, as a runner carries out a
/// [`Wait::Snapshot`](hrns_core::session::Wait::Snapshot). Without a store, or when taking it
/// panics, the outcome is a failure, which the session reports as a warning while the turn
/// goes on. Both drivers' runners call it, so that they report alike.
pub fn take_checkpoint(
    checkpointer: Option<&Checkpointer>,
    due: &CheckpointDue,
) -> CheckpointOutcome {
    let Some(checkpointer) = checkpointer else {
        return CheckpointOutcome::Failed {
            reason: "this runner has no checkpoint store".into(),
        };
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| checkpointer.take(due)))
        .unwrap_or_else(|_| CheckpointOutcome::Failed {
            reason: "the snapshot failed: taking it panicked".into(),
        })
}

impl Skipped {
    /// `path (why)`, for people.
    pub fn describe(&self) -> String {
        match self.reason {
            SkipReason::TooLarge { bytes } => format!("{} ({bytes} bytes)", self.path),
            SkipReason::TooManyFiles { at_least } => {
                format!("{} (over {at_least} files)", self.path)
            }
        }
    }
}

/// The file in the shadow repository that lists what the snapshots leave out (NUL-separated),
/// so the next snapshot checks those paths again.
const SKIPPED_LIST: &str = "hrns-skipped";

/// Snapshots of one workspace, kept in a shadow git repository.
#[derive(Debug)]
pub struct CheckpointStore {
    git: git::Git,
    limits: CheckpointLimits,
    /// The shadow repository's disk use as last measured plus what the steps since are
    /// estimated to have added; `None` until the first snapshot measures it.
    disk: std::sync::Mutex<Option<u64>>,
    /// The user's repository enclosing the workspace, if any: (its git dir, the workspace's
    /// path inside it).
    enclosing: Option<(PathBuf, String)>,
}

impl CheckpointStore {
    /// Opens the store of `workspace` under `root` (hrns's `…/state/hrns/checkpoints`).
    ///
    /// Nothing is written here: the shadow repository is made by the first snapshot, so a run
    /// that never changes a file (or never asks for a checkpoint) leaves no repository behind.
    ///
    /// Fails with [`CheckpointError::GitMissing`] when there is no `git` program: checkpoints
    /// are then off, and hrns says so once.
    pub fn open(
        root: &Path,
        workspace: &Path,
        limits: CheckpointLimits,
    ) -> Result<CheckpointStore, CheckpointError> {
        Self::open_with(git::find_program(), root, workspace, limits)
    }

    /// [`open`](Self::open) with the `git` program found (or not) by the caller.
    fn open_with(
        program: Option<PathBuf>,
        root: &Path,
        workspace: &Path,
        limits: CheckpointLimits,
    ) -> Result<CheckpointStore, CheckpointError> {
        let program = program.ok_or(CheckpointError::GitMissing)?;
        let workspace = fs::canonicalize(workspace).map_err(io(workspace))?;
        let git_dir = root.join(paths::workspace_key(&workspace));
        let store = CheckpointStore {
            git: git::Git {
                program,
                git_dir,
                work_tree: workspace.clone(),
            },
            limits,
            disk: std::sync::Mutex::new(None),
            enclosing: paths::enclosing_repository(&workspace),
        };
        Ok(store)
    }

    /// The shadow repository's directory.
    pub fn git_dir(&self) -> &Path {
        &self.git.git_dir
    }

    fn deadline(&self) -> Instant {
        Instant::now() + self.limits.time_limit
    }

    /// Whether the shadow repository exists yet (the first snapshot makes it).
    fn exists(&self) -> bool {
        self.git.git_dir.join("HEAD").is_file()
    }

    /// Makes the shadow repository unless it exists: built whole in a directory beside it and
    /// renamed into place, so another hrns never sees it half made (whichever renames first
    /// wins; the other's copy is removed).
    fn init(&self) -> Result<(), CheckpointError> {
        if self.exists() {
            return Ok(());
        }
        let dir = &self.git.git_dir;
        let parent = dir.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(parent).map_err(io(parent))?;
        let building = tempfile::Builder::new()
            .prefix(".hrns-init-")
            .tempdir_in(parent)
            .map_err(io(parent))?;
        let staged = git::Git {
            git_dir: building.path().to_owned(),
            ..self.git.clone()
        };
        self.init_in(&staged)?;
        match fs::rename(building.path(), dir) {
            Ok(()) => {
                // Renamed: nothing is left for the guard to remove.
                let _ = building.keep();
                Ok(())
            }
            Err(_) if self.exists() => Ok(()),
            // Something other than a shadow repository is in the way (a directory left
            // without its HEAD): make the repository in it, as git would.
            Err(_) if dir.is_dir() => self.init_in(&self.git),
            Err(e) => Err(io(dir)(e)),
        }
    }

    /// Makes a shadow repository in `staged`'s git dir.
    fn init_in(&self, staged: &git::Git) -> Result<(), CheckpointError> {
        let dir = &staged.git_dir;
        let config = staged.global_config();
        fs::write(&config, "[safe]\n\tdirectory = *\n").map_err(io(&config))?;
        staged.run(
            &[OsStr::new("init"), OsStr::new("--quiet")],
            None,
            self.deadline(),
        )?;
        staged.run(
            &["config", "core.bare", "false"].map(OsStr::new),
            None,
            self.deadline(),
        )?;
        let info = dir.join("info");
        fs::create_dir_all(&info).map_err(io(&info))?;
        // Highest precedence: no filter, conversion or encoding from the workspace's
        // .gitattributes, so a snapshot holds the bytes on disk.
        let attributes = info.join("attributes");
        fs::write(
            &attributes,
            "* -text -eol -filter -ident -working-tree-encoding\n",
        )
        .map_err(io(&attributes))?;
        if let Some(objects) = self.enclosing_objects() {
            let alternates = dir.join("objects/info/alternates");
            fs::write(&alternates, format!("{}\n", objects.display())).map_err(io(&alternates))?;
        }
        Ok(())
    }

    /// The user's object directory, when it can be borrowed (a SHA-1 repository). Its config
    /// is read with [`crate::safe_file`]: one that is not a regular file of sane size (a FIFO,
    /// a link to a device) means a repository not to borrow from.
    fn enclosing_objects(&self) -> Option<PathBuf> {
        let (git_dir, _) = self.enclosing.as_ref()?;
        let config = match crate::safe_file::read_capped(
            &git_dir.join("config"),
            hrns_core::file_refusal::CONFIG_CAP,
        ) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.is_missing() => String::new(),
            Err(_) => return None,
        };
        if config
            .to_ascii_lowercase()
            .contains("objectformat = sha256")
        {
            return None;
        }
        let objects = git_dir.join("objects");
        objects.is_dir().then_some(objects)
    }

    /// Takes a snapshot of the workspace for `session`, as the child of the session's last
    /// one, and returns it with the paths that changed since.
    ///
    /// An unchanged workspace gives back the last checkpoint (no new commit, no disk).
    ///
    /// The shadow index is kept between snapshots, so a step costs one `lstat` per file (in
    /// `git status`, whose untracked cache re-reads only directories that changed) plus work
    /// in proportion to what changed: only those paths are staged (by `git update-index`
    /// when the index is the session's last checkpoint, which then also gives the changed
    /// paths without a `git diff-tree`; by `git add` otherwise).
    pub fn snapshot(&self, session: &str, message: &str) -> Result<Snapshot, CheckpointError> {
        self.init()?;
        let deadline = self.deadline();
        let _lock = self.lock(deadline)?;
        let session_ref = paths::session_ref(session);
        let parent = self.tip(&session_ref, deadline)?;
        let fresh_index = !self.git.git_dir.join("index").exists();
        if fresh_index {
            self.seed_index(deadline)?;
        }
        // What shrank is out of `info/exclude` before `git status` runs, so it is listed.
        let mut skipped = self.still_unbounded(deadline)?;
        self.write_exclude(&skipped)?;
        let scan = self.scan(deadline)?;
        let new = self.unbounded(&scan.untracked, deadline)?;
        if !new.is_empty() {
            skipped.extend(new);
            self.write_exclude(&skipped)?;
        }
        let skipped_paths: std::collections::BTreeSet<&[u8]> =
            skipped.iter().map(|s| s.path.as_bytes()).collect();
        let to_add: Vec<&[u8]> = scan
            .changed
            .iter()
            .chain(&scan.untracked)
            .map(Vec::as_slice)
            .filter(|p| !skipped_paths.contains(p))
            // A nested repository is left out: `git add` records it as a submodule, which a
            // restore does not write back, and fails outright on one without a commit.
            .filter(|p| {
                !(p.ends_with(b"/")
                    && fs::symlink_metadata(
                        self.git.work_tree.join(OsStr::from_bytes(p)).join(".git"),
                    )
                    .is_ok())
            })
            .collect();
        let head_is_parent = scan.head.is_some() && scan.head == parent;
        if scan.nothing && head_is_parent {
            // The index is HEAD's tree, HEAD is the session's last checkpoint, and the
            // workspace matches the index: nothing to write at all.
            return Ok(Snapshot {
                id: CheckpointId(parent.unwrap_or_default()),
                changed: Vec::new(),
                skipped,
            });
        }
        // The index is the session's last checkpoint (HEAD is it, and no record says the
        // index differs from HEAD): what changes now is exactly what is staged now.
        let index_is_parent = head_is_parent && !scan.staged;
        if index_is_parent && to_add.is_empty() {
            // Only skipped paths or nested repositories differ: the tree is the parent's.
            return Ok(Snapshot {
                id: CheckpointId(parent.unwrap_or_default()),
                changed: Vec::new(),
                skipped,
            });
        }
        let staged = match index_is_parent {
            true => self.stage_files(&to_add, &scan.untracked, deadline)?,
            false => None,
        };
        if staged.is_none() {
            self.add(&to_add, deadline)?;
        }
        let tree = text(self.git.run(&[OsStr::new("write-tree")], None, deadline)?);
        let changed: Vec<String> = match (staged, &parent) {
            (Some(changed), _) => changed,
            (None, Some(parent)) => {
                let raw = self.diff_raw(parent, &tree, deadline)?;
                if raw.is_empty() {
                    return Ok(Snapshot {
                        id: CheckpointId(parent.clone()),
                        changed: Vec::new(),
                        skipped,
                    });
                }
                paths::parse_raw_diff(&raw)
                    .into_iter()
                    .map(|c| c.path)
                    .collect()
            }
            (None, None) => Vec::new(),
        };
        let mut args = vec!["commit-tree".to_owned(), tree, "-m".into(), message.into()];
        if let Some(parent) = &parent {
            args.extend(["-p".into(), parent.clone()]);
        }
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        let commit = text(self.git.run(&args, None, deadline)?);
        // HEAD follows the index (it is the tree just written), so the next `git status` only
        // compares what changed against it; no branch of the shadow repository is used.
        let updates =
            format!("update {session_ref} {commit}\noption no-deref\nupdate HEAD {commit}\n");
        self.git.run(
            &["update-ref", "--stdin"].map(OsStr::new),
            Some(updates.as_bytes()),
            deadline,
        )?;
        self.keep_within_cap(&session_ref, parent.is_none(), &changed, deadline)?;
        self.roll_up_packs(deadline);
        Ok(Snapshot {
            id: CheckpointId(commit),
            changed,
            skipped,
        })
    }

    /// The last checkpoint of a session: its loose ref file when there is one (the shadow
    /// repository keeps git's files format, where a loose ref is authoritative), else git's
    /// answer (a ref packed by `gc`, or none yet).
    fn tip(&self, session_ref: &str, deadline: Instant) -> Result<Option<String>, CheckpointError> {
        let loose = self.git.git_dir.join(session_ref);
        if let Ok(text) = fs::read_to_string(&loose) {
            let id = text.trim();
            if matches!(id.len(), 40 | 64) && id.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Ok(Some(id.to_owned()));
            }
        }
        let out = text(
            self.git.run(
                &[
                    "for-each-ref",
                    "--format=%(refname) %(objectname)",
                    session_ref,
                ]
                .map(OsStr::new),
                None,
                deadline,
            )?,
        );
        Ok(out.lines().find_map(|line| {
            let (name, commit) = line.split_once(' ')?;
            (name == session_ref).then(|| commit.to_owned())
        }))
    }

    /// What differs between the shadow index and the workspace: `git status` with the
    /// untracked cache, which also writes the refreshed `stat` data and the cache back to the
    /// shadow index (its optional lock is ours).
    fn scan(&self, deadline: Instant) -> Result<paths::Scan, CheckpointError> {
        let out = self.git.run_with(
            &[
                "status",
                "--porcelain=v2",
                "--branch",
                "-z",
                "--untracked-files=normal",
                "--ignore-submodules=all",
                "--no-renames",
            ]
            .map(OsStr::new),
            None,
            &[("GIT_OPTIONAL_LOCKS", "1")],
            deadline,
        )?;
        Ok(paths::parse_status(&out))
    }

    /// Stages `changed` (files and untracked directories); past a few thousand paths, or
    /// if one vanished in between, the whole workspace instead.
    fn add(&self, changed: &[&[u8]], deadline: Instant) -> Result<(), CheckpointError> {
        const WHOLE_TREE_PAST: usize = 100;
        if changed.is_empty() {
            return Ok(());
        }
        // For many paths (a first snapshot), every blob counts as "big", so `git add` streams
        // them all into one pack instead of one compressed file each: 20 000 files make one
        // file, not 20 000, in a third of the time. Fast compression: it is a local store. A
        // step's few files stay loose (a pack would cost an fsync each).
        let pack_all = [
            ("GIT_CONFIG_COUNT", "2"),
            ("GIT_CONFIG_KEY_0", "core.bigFileThreshold"),
            ("GIT_CONFIG_VALUE_0", "1"),
            ("GIT_CONFIG_KEY_1", "pack.compression"),
            ("GIT_CONFIG_VALUE_1", "1"),
        ];
        let whole = || {
            self.git.run_with(
                &["add", "--all", "--ignore-errors", "--", "."].map(OsStr::new),
                None,
                &pack_all,
                deadline,
            )
        };
        if changed.len() > WHOLE_TREE_PAST {
            return match self.add_in_batches(changed, &pack_all, deadline) {
                Ok(()) => Ok(()),
                Err(CheckpointError::Git { .. }) => whole().map(|_| ()),
                Err(e) => Err(e),
            };
        }
        let mut input = Vec::new();
        for path in changed {
            input.extend_from_slice(path.strip_suffix(b"/").unwrap_or(path));
            input.push(0);
        }
        let staged = self.git.run_with(
            &[
                "add",
                "--all",
                "--ignore-errors",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ]
            .map(OsStr::new),
            Some(&input),
            &[("GIT_LITERAL_PATHSPECS", "1")],
            deadline,
        );
        match staged {
            Ok(_) => Ok(()),
            Err(CheckpointError::Git { .. }) => whole().map(|_| ()),
            Err(e) => Err(e),
        }
    }

    /// Stages a step's few changed files, when the index is the session's last checkpoint,
    /// with one `git update-index --add --remove` (no pathspecs, no walk), and returns them:
    /// they are then exactly what differs from the last checkpoint, so no `git diff-tree` is
    /// needed.
    ///
    /// `None` (nothing staged, or only part of it; the caller stages with `git add` and diffs)
    /// when that cannot be known so cheaply: many paths, an untracked directory (its files
    /// are not listed), a tracked file that became a directory, a path `update-index`
    /// refuses (an unreadable file), or an untracked file that vanished before it could be staged
    /// (`update-index` passes over it without a word).
    fn stage_files(
        &self,
        to_add: &[&[u8]],
        untracked: &[Vec<u8>],
        deadline: Instant,
    ) -> Result<Option<Vec<String>>, CheckpointError> {
        const FEW: usize = 100;
        let is_dir = |p: &[u8]| {
            fs::symlink_metadata(self.git.work_tree.join(OsStr::from_bytes(p)))
                .is_ok_and(|m| m.is_dir())
        };
        // A tracked file that became a directory is listed by its old name alone, and
        // `update-index --remove` would drop it without adding the files now inside.
        if to_add.len() > FEW || to_add.iter().any(|p| p.ends_with(b"/") || is_dir(p)) {
            return Ok(None);
        }
        let mut input = Vec::new();
        for path in to_add {
            input.extend_from_slice(path);
            input.push(0);
        }
        let staged = self.git.run(
            &["update-index", "--add", "--remove", "-z", "--stdin"].map(OsStr::new),
            Some(&input),
            deadline,
        );
        match staged {
            Ok(_) => {}
            Err(CheckpointError::Git { .. }) => return Ok(None),
            Err(e) => return Err(e),
        }
        let vanished = to_add.iter().any(|p| {
            untracked.iter().any(|u| u == p)
                && fs::symlink_metadata(self.git.work_tree.join(OsStr::from_bytes(p))).is_err()
        });
        if vanished {
            return Ok(None);
        }
        // In git's order of paths, as `git diff-tree` would give them.
        let mut changed: Vec<&[u8]> = to_add.to_vec();
        changed.sort_unstable();
        changed.dedup();
        Ok(Some(
            changed
                .into_iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect(),
        ))
    }

    /// Stages many paths (a first snapshot) through `git update-index --add --remove
    /// --stdin`, at most 20 000 paths per process: `changed` (its
    /// files) and every untracked file `git ls-files --others --exclude-standard` lists (so
    /// `.gitignore` and the skipped paths in `info/exclude` hold, as for `git add`).
    ///
    /// Why batches: git's bulk check-in (each blob streamed into one pack) checks each new
    /// object against every object already in the pack being written, one by one, so one
    /// process for n files costs n² comparisons: 200 000 files took 88 s of CPU in one
    /// `git add`, where 20 000 took 1.5 s. Batches keep it linear, one pack each.
    ///
    /// A directory `ls-files` names is a nested repository: it is left out (`git add` would
    /// record it as a submodule, which a restore does not write back, and fails on one
    /// without a commit).
    fn add_in_batches(
        &self,
        changed: &[&[u8]],
        pack_all: &[(&str, &str)],
        deadline: Instant,
    ) -> Result<(), CheckpointError> {
        const BATCH: usize = 20_000;
        let others = self.git.run(
            &["ls-files", "-z", "--others", "--exclude-standard"].map(OsStr::new),
            None,
            deadline,
        )?;
        let mut paths: std::collections::BTreeSet<&[u8]> = std::collections::BTreeSet::new();
        for path in others.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            if !path.ends_with(b"/") {
                paths.insert(path);
            }
        }
        paths.extend(changed.iter().copied().filter(|p| !p.ends_with(b"/")));
        let paths: Vec<&[u8]> = paths.into_iter().collect();
        for batch in paths.chunks(BATCH) {
            let mut input = Vec::new();
            for path in batch {
                input.extend_from_slice(path);
                input.push(0);
            }
            self.git.run_with(
                &["update-index", "--add", "--remove", "-z", "--stdin"].map(OsStr::new),
                Some(&input),
                pack_all,
                deadline,
            )?;
        }
        Ok(())
    }

    /// Each `git add` writes one pack: past a few dozen, the small ones are rolled into one
    /// (`repack --geometric`, which leaves the big first pack alone and takes the loose trees
    /// and commits along), so lookups stay fast and the cost stays in proportion to the steps.
    /// A failure only leaves more packs: the snapshot stands.
    fn roll_up_packs(&self, deadline: Instant) {
        const PACKS_BEFORE_ROLL_UP: usize = 32;
        let packs = fs::read_dir(self.git.git_dir.join("objects/pack")).map_or(0, |entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().as_encoded_bytes().ends_with(b".pack"))
                .count()
        });
        if packs > PACKS_BEFORE_ROLL_UP {
            let _ = self.git.run(
                &["repack", "-d", "-q", "--geometric=2"].map(OsStr::new),
                None,
                deadline,
            );
        }
    }

    /// Keeps the shadow repository within its disk cap without walking it every step: the
    /// disk is measured on a session's first snapshot (and the store's), then estimated from
    /// what each step changed, and measured again only when the estimate passes the cap.
    fn keep_within_cap(
        &self,
        current: &str,
        first_of_session: bool,
        changed: &[String],
        deadline: Instant,
    ) -> Result<(), CheckpointError> {
        let mut disk = self.disk.lock().unwrap_or_else(|e| e.into_inner());
        let estimate = match *disk {
            Some(known) if !first_of_session => {
                known.saturating_add(paths::estimated_growth(&self.git.work_tree, changed))
            }
            _ => paths::disk_use(&self.git.git_dir),
        };
        *disk = Some(estimate);
        if estimate <= self.limits.max_disk_bytes {
            return Ok(());
        }
        let measured = paths::disk_use(&self.git.git_dir);
        *disk = Some(measured);
        if measured > self.limits.max_disk_bytes {
            self.prune_over_cap(current, deadline)?;
            *disk = Some(paths::disk_use(&self.git.git_dir));
        }
        Ok(())
    }

    /// The paths that differ between two checkpoints, with what each holds there.
    pub fn changes(
        &self,
        from: &CheckpointId,
        to: &CheckpointId,
    ) -> Result<Vec<PathChange>, CheckpointError> {
        let deadline = self.deadline();
        self.known(&[from, to], deadline)?;
        self.diff(&from.0, &to.0, deadline)
    }

    /// Puts back the paths that changed between `to` and `latest` as `to` had them, leaving
    /// every other path alone, and paths changed after `latest` unless `overwrite` says so.
    ///
    /// The workspace's state just before is snapshotted first (as a checkpoint of `session`),
    /// so the restore itself can be undone: restore from [`Restored::before`].
    pub fn restore(
        &self,
        session: &str,
        to: &CheckpointId,
        latest: &CheckpointId,
        overwrite: Overwrite,
    ) -> Result<Restored, CheckpointError> {
        let changes = self.changes(to, latest)?;
        let before = self.snapshot(session, "before a restore")?.id;
        let deadline = self.deadline();
        let _lock = self.lock(deadline)?;
        let workspace = &self.git.work_tree;
        let current: BTreeMap<String, Current> = changes
            .iter()
            .map(|c| (c.path.clone(), paths::current(workspace, &c.path)))
            .collect();
        let plan = plan_restore(
            &changes,
            |p| current.get(p).cloned().unwrap_or(Current::Other),
            overwrite,
        );
        let blobs = self.read_blobs(&plan.actions, deadline)?;
        for action in &plan.actions {
            match action {
                RestoreAction::Remove { path } => paths::remove(workspace, path)?,
                RestoreAction::Write { path, entry } => {
                    let bytes = blobs.get(&entry.oid).map(Vec::as_slice).unwrap_or_default();
                    paths::write(workspace, path, entry.kind, bytes)?;
                }
            }
        }
        Ok(Restored {
            actions: plan.actions,
            kept: plan.kept,
            before,
        })
    }

    /// Removes every checkpoint of sessions other than `keep`, oldest first, until the shadow
    /// repository is within its disk cap (everything of them with `0`), and packs what is left.
    pub fn prune(&self, keep: &[&str]) -> Result<u64, CheckpointError> {
        if !self.exists() {
            return Ok(0);
        }
        let deadline = Instant::now() + self.limits.time_limit * 6;
        let _lock = self.lock(deadline)?;
        for (_, session_ref) in self.sessions(deadline)? {
            if keep.iter().any(|k| paths::session_ref(k) == session_ref) {
                continue;
            }
            self.git.run(
                &["update-ref", "-d", &session_ref].map(OsStr::new),
                None,
                deadline,
            )?;
        }
        self.gc(deadline)?;
        let disk = paths::disk_use(&self.git.git_dir);
        *self.disk.lock().unwrap_or_else(|e| e.into_inner()) = Some(disk);
        Ok(disk)
    }

    /// The disk the shadow repository uses, in bytes.
    pub fn disk_use(&self) -> u64 {
        paths::disk_use(&self.git.git_dir)
    }

    /// Removes the oldest sessions but `current` (the one being written, which may share its
    /// second with an older one) until the store is within its cap.
    fn prune_over_cap(&self, current: &str, deadline: Instant) -> Result<(), CheckpointError> {
        if paths::disk_use(&self.git.git_dir) <= self.limits.max_disk_bytes {
            return Ok(());
        }
        let sessions = self.sessions(deadline)?;
        for (_, session_ref) in sessions.iter().filter(|(_, r)| r != current) {
            self.git.run(
                &["update-ref", "-d", session_ref].map(OsStr::new),
                None,
                deadline,
            )?;
            self.gc(deadline)?;
            if paths::disk_use(&self.git.git_dir) <= self.limits.max_disk_bytes {
                break;
            }
        }
        Ok(())
    }

    fn gc(&self, deadline: Instant) -> Result<(), CheckpointError> {
        // HEAD points at the last snapshot, which may be of a session just removed: unborn
        // again, it keeps nothing alive (the next `git status` compares against no commit).
        self.git.run(
            &["symbolic-ref", "HEAD", "refs/heads/unborn"].map(OsStr::new),
            None,
            deadline,
        )?;
        self.git.run(
            &["gc", "--quiet", "--prune=now"].map(OsStr::new),
            None,
            deadline,
        )?;
        Ok(())
    }

    /// The sessions' refs, oldest tip first.
    fn sessions(&self, deadline: Instant) -> Result<Vec<(i64, String)>, CheckpointError> {
        let out = text(
            self.git.run(
                &[
                    "for-each-ref",
                    "--format=%(committerdate:unix) %(refname)",
                    "refs/hrns/sessions/",
                ]
                .map(OsStr::new),
                None,
                deadline,
            )?,
        );
        let mut sessions: Vec<(i64, String)> = out
            .lines()
            .filter_map(|l| {
                let (when, name) = l.split_once(' ')?;
                Some((when.parse().ok()?, name.to_owned()))
            })
            .collect();
        sessions.sort();
        Ok(sessions)
    }

    /// The user's `HEAD` (at the workspace's place in it) as the first index, so the files
    /// the user tracks are never taken for a huge untracked directory.
    fn seed_index(&self, deadline: Instant) -> Result<(), CheckpointError> {
        let Some((user_git_dir, prefix)) = &self.enclosing else {
            return Ok(());
        };
        if self.enclosing_objects().is_none() {
            return Ok(());
        }
        let spec = format!("HEAD:{prefix}");
        let tree = git::Git {
            git_dir: user_git_dir.clone(),
            ..self.git.clone()
        }
        .run(
            &["rev-parse", "--verify", "--quiet", &spec].map(OsStr::new),
            None,
            deadline,
        );
        // A repository without commits yet has no HEAD: nothing to seed.
        if let Ok(tree) = tree {
            let tree = text(tree);
            self.git
                .run(&["read-tree", &tree].map(OsStr::new), None, deadline)?;
        }
        Ok(())
    }

    /// What the last snapshots left out and is still over its limit. Those paths stay in
    /// `info/exclude` (so `git status` does not list them again); the ones that shrank or went
    /// away are dropped from it here, and `git status` then lists them as new.
    fn still_unbounded(&self, deadline: Instant) -> Result<Vec<Skipped>, CheckpointError> {
        let list = self.git.git_dir.join(SKIPPED_LIST);
        let before = match fs::read_to_string(&list) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(io(&list)(e)),
        };
        let paths: Vec<Vec<u8>> = before
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(|p| p.as_bytes().to_vec())
            .collect();
        self.unbounded(&paths, deadline)
    }

    /// Which of `untracked` (files, and directories ending in `/`) are over the size limit or
    /// hold too many files.
    fn unbounded(
        &self,
        untracked: &[Vec<u8>],
        deadline: Instant,
    ) -> Result<Vec<Skipped>, CheckpointError> {
        let mut skipped = Vec::new();
        for entry in untracked {
            let Ok(path) = std::str::from_utf8(entry) else {
                continue;
            };
            let full = self.git.work_tree.join(path.trim_end_matches('/'));
            if path.ends_with('/') {
                paths::scan_dir(&full, path, &self.limits, &mut skipped, deadline);
            } else if let Ok(meta) = fs::symlink_metadata(&full)
                && meta.is_file()
                && meta.len() > self.limits.max_file_bytes
            {
                skipped.push(Skipped {
                    path: path.to_owned(),
                    reason: SkipReason::TooLarge { bytes: meta.len() },
                });
            }
            if Instant::now() >= deadline {
                return Err(CheckpointError::TimedOut {
                    command: "status --untracked-files".into(),
                });
            }
        }
        Ok(skipped)
    }

    /// Writes `info/exclude` (and the list beside it) so that `git add` leaves `skipped` out;
    /// only when it changed, since a new `info/exclude` makes the untracked cache start over.
    fn write_exclude(&self, skipped: &[Skipped]) -> Result<(), CheckpointError> {
        let lines: String = skipped
            .iter()
            .map(|s| paths::exclude_line(&s.path))
            .collect();
        let list: String = skipped.iter().map(|s| format!("{}\0", s.path)).collect();
        let exclude = self.git.git_dir.join("info/exclude");
        if fs::read(&exclude).ok().as_deref() != Some(lines.as_bytes()) {
            fs::write(&exclude, lines).map_err(io(&exclude))?;
        }
        let path = self.git.git_dir.join(SKIPPED_LIST);
        if fs::read(&path).ok().as_deref() != Some(list.as_bytes()) {
            fs::write(&path, list).map_err(io(&path))?;
        }
        Ok(())
    }

    /// `git diff-tree --raw` between two tree-ish (a commit or a tree).
    fn diff_raw(
        &self,
        from: &str,
        to: &str,
        deadline: Instant,
    ) -> Result<Vec<u8>, CheckpointError> {
        self.git.run(
            &["diff-tree", "-r", "-z", "--no-renames", "--raw", from, to].map(OsStr::new),
            None,
            deadline,
        )
    }

    fn diff(
        &self,
        from: &str,
        to: &str,
        deadline: Instant,
    ) -> Result<Vec<PathChange>, CheckpointError> {
        Ok(paths::parse_raw_diff(&self.diff_raw(from, to, deadline)?))
    }

    /// Fails with [`CheckpointError::Unknown`] unless every id names a commit of the store:
    /// hex only (so nothing is taken for an option or a ref name), checked in one call.
    fn known(&self, ids: &[&CheckpointId], deadline: Instant) -> Result<(), CheckpointError> {
        if let Some(bad) = ids
            .iter()
            .find(|id| id.0.len() < 4 || !id.0.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Err(CheckpointError::Unknown(bad.0.clone()));
        }
        if let Some(first) = ids.first().filter(|_| !self.exists()) {
            // No snapshot was ever taken here: no id is known, and nothing is made to say so.
            return Err(CheckpointError::Unknown(first.0.clone()));
        }
        let input: String = ids
            .iter()
            .map(|id| format!("{}^{{commit}}\n", id.0))
            .collect();
        let out = self.git.run(
            &["cat-file", "--batch-check"].map(OsStr::new),
            Some(input.as_bytes()),
            deadline,
        )?;
        let answers = String::from_utf8_lossy(&out);
        let mut lines = answers.lines();
        for id in ids {
            let is_commit = lines
                .next()
                .is_some_and(|line| line.split(' ').nth(1) == Some("commit"));
            if !is_commit {
                return Err(CheckpointError::Unknown(id.0.clone()));
            }
        }
        Ok(())
    }

    /// The contents of the blobs the actions write, in one `cat-file --batch`.
    fn read_blobs(
        &self,
        actions: &[RestoreAction],
        deadline: Instant,
    ) -> Result<BTreeMap<String, Vec<u8>>, CheckpointError> {
        let oids: Vec<&str> = actions
            .iter()
            .filter_map(|a| match a {
                RestoreAction::Write { entry, .. } => Some(entry.oid.as_str()),
                RestoreAction::Remove { .. } => None,
            })
            .collect();
        if oids.is_empty() {
            return Ok(BTreeMap::new());
        }
        let input: String = oids.iter().map(|o| format!("{o}\n")).collect();
        let out = self.git.run(
            &["cat-file", "--batch"].map(OsStr::new),
            Some(input.as_bytes()),
            deadline,
        )?;
        let mut reader = BufReader::new(out.as_slice());
        let mut blobs = BTreeMap::new();
        let mut header = String::new();
        while reader.read_line(&mut header).unwrap_or(0) > 0 {
            let mut parts = header.split_whitespace();
            let (Some(oid), Some("blob"), Some(size)) = (parts.next(), parts.next(), parts.next())
            else {
                return Err(CheckpointError::Unknown(header.trim().to_owned()));
            };
            let size: usize = size.parse().unwrap_or(0);
            let mut bytes = vec![0; size];
            let mut newline = [0u8; 1];
            if reader.read_exact(&mut bytes).is_err() || reader.read_exact(&mut newline).is_err() {
                return Err(CheckpointError::Unknown(oid.to_owned()));
            }
            blobs.insert(oid.to_owned(), bytes);
            header.clear();
        }
        Ok(blobs)
    }

    /// Holds the store's lock file until dropped; a lock left by a killed hrns is released by
    /// the kernel, and git's own lock left beside it is then stale and removed.
    fn lock(&self, deadline: Instant) -> Result<fs::File, CheckpointError> {
        use rustix::fs::{FlockOperation, flock};
        let path = self.git.git_dir.join("hrns.lock");
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io(&path))?;
        loop {
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => break,
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(_) => return Err(CheckpointError::Busy),
            }
        }
        let stale = self.git.git_dir.join("index.lock");
        if stale.exists() {
            fs::remove_file(&stale).map_err(io(&stale))?;
        }
        Ok(file)
    }
}

fn text(out: Vec<u8>) -> String {
    String::from_utf8_lossy(&out).trim().to_owned()
}

/// The kind of a file on disk, as a checkpoint would record it.
fn kind_of(meta: &fs::Metadata) -> Option<EntryKind> {
    use std::os::unix::fs::PermissionsExt as _;
    if meta.file_type().is_symlink() {
        Some(EntryKind::Symlink)
    } else if meta.is_file() {
        Some(match meta.permissions().mode() & 0o111 {
            0 => EntryKind::File,
            _ => EntryKind::Executable,
        })
    } else {
        None
    }
}
