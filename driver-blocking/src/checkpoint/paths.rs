//! The file-system side of checkpoints: where a workspace's shadow repository lives, what a
//! path holds now, and writing back or removing what a restore decided.

use super::{CheckpointError, CheckpointLimits, SkipReason, Skipped, io, kind_of};
use hrns_core::checkpoint::{Current, Entry, EntryKind, PathChange};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The shadow repository's directory name for a workspace: its last component, for people,
/// and a hash of its whole path, so two workspaces never share one.
pub(super) fn workspace_key(workspace: &Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    let digest = sha1_smol::Sha1::from(workspace.as_os_str().as_bytes())
        .digest()
        .to_string();
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{name}-{}", &digest[..16])
}

/// The ref that holds a session's checkpoints.
pub(super) fn session_ref(session: &str) -> String {
    let safe: String = session
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("refs/hrns/sessions/{safe}")
}

/// The most a `.git` file or a `commondir` file may hold: one path.
const POINTER_CAP: u64 = 64 * 1024;

/// The git repository enclosing `workspace`, found by looking for `.git` upwards without
/// running git (so nothing of the user's config runs): its common git dir, and the
/// workspace's path inside its work tree (`""` at the top, else ending in `/`).
///
/// The repository is untrusted input: its `.git` file and `commondir` are read with
/// [`crate::safe_file`], so a FIFO there cannot hang hrns, nor a link to `/dev/zero` or a huge
/// file fill its memory. Such a repository counts as none (the store then borrows nothing).
pub(super) fn enclosing_repository(workspace: &Path) -> Option<(PathBuf, String)> {
    let mut dir = workspace;
    loop {
        let dot_git = dir.join(".git");
        if let Some(git_dir) = git_dir_of(&dot_git) {
            let common = match crate::safe_file::read_text(&git_dir.join("commondir"), POINTER_CAP)
            {
                Ok(c) => git_dir.join(c.trim()),
                Err(e) if e.is_missing() => git_dir,
                Err(_) => return None,
            };
            let prefix = workspace.strip_prefix(dir).ok()?;
            let mut prefix = prefix.to_string_lossy().into_owned();
            if !prefix.is_empty() {
                prefix.push('/');
            }
            return Some((fs::canonicalize(&common).unwrap_or(common), prefix));
        }
        dir = dir.parent()?;
    }
}

/// The git dir a `.git` entry names: the directory itself, or the target of a `gitdir:` file.
fn git_dir_of(dot_git: &Path) -> Option<PathBuf> {
    let meta = fs::symlink_metadata(dot_git).ok()?;
    if meta.is_dir() {
        return dot_git.join("HEAD").is_file().then(|| dot_git.to_owned());
    }
    let text = crate::safe_file::read_text(dot_git, POINTER_CAP).ok()?;
    let target = text.strip_prefix("gitdir:")?.trim();
    let path = dot_git.parent()?.join(target);
    path.join("HEAD").is_file().then_some(path)
}

/// What `path` holds in the workspace now, with its content's git blob id.
///
/// A file is opened with [`crate::safe_file::open_regular`] (a FIFO or device put there after
/// the `lstat` is refused, never waited on) and hashed as it is read, so a huge file costs
/// time in proportion to it but no memory; one whose length changes while read is `Other`.
pub(super) fn current(workspace: &Path, path: &str) -> Current {
    let full = workspace.join(path);
    let Ok(meta) = fs::symlink_metadata(&full) else {
        return Current::Missing;
    };
    if meta.is_dir() {
        return Current::Directory;
    }
    let Some(kind) = kind_of(&meta) else {
        return Current::Other;
    };
    let oid = match kind {
        EntryKind::Symlink => {
            use std::os::unix::ffi::OsStrExt as _;
            match fs::read_link(&full) {
                Ok(target) => blob_id(target.as_os_str().as_bytes()),
                Err(_) => return Current::Other,
            }
        }
        EntryKind::File | EntryKind::Executable => match file_blob_id(&full) {
            Some(oid) => oid,
            None => return Current::Other,
        },
    };
    Current::Entry(Entry { kind, oid })
}

/// git's id of the blob the regular file at `path` holds, hashed while read; `None` when it
/// is not a regular file now or changed length while read.
pub(super) fn file_blob_id(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let (file, len) = crate::safe_file::open_regular(path).ok()?;
    let mut hash = sha1_smol::Sha1::new();
    hash.update(format!("blob {len}\0").as_bytes());
    let mut reader = file.take(len.saturating_add(1));
    let mut buf = vec![0u8; 64 * 1024];
    let mut read = 0u64;
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                read += n as u64;
                hash.update(&buf[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    (read == len).then(|| hash.digest().to_string())
}

/// git's id of a blob holding `bytes`.
pub(super) fn blob_id(bytes: &[u8]) -> String {
    let mut hash = sha1_smol::Sha1::new();
    hash.update(format!("blob {}\0", bytes.len()).as_bytes());
    hash.update(bytes);
    hash.digest().to_string()
}

/// Removes the file or link at `path`, then the directories it leaves empty (up to the
/// workspace, which stays).
pub(super) fn remove(workspace: &Path, path: &str) -> Result<(), CheckpointError> {
    let full = workspace.join(path);
    match fs::remove_file(&full) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(&full)(e)),
    }
    let mut dir = full.parent();
    while let Some(d) = dir {
        if d == workspace || !d.starts_with(workspace) || fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

/// Writes `bytes` at `path` as `kind`: a file atomically (a temporary file renamed over it),
/// with its mode; a link by replacing whatever is there.
pub(super) fn write(
    workspace: &Path,
    path: &str,
    kind: EntryKind,
    bytes: &[u8],
) -> Result<(), CheckpointError> {
    use std::os::unix::fs::PermissionsExt as _;
    let full = workspace.join(path);
    let parent = full.parent().unwrap_or(workspace);
    fs::create_dir_all(parent).map_err(io(parent))?;
    // A directory the undone steps made where a file was: the removals before emptied it
    // and, once empty, it goes. One that still holds files (someone else's) is not deleted:
    // the restore fails on it, naming it.
    if fs::symlink_metadata(&full).is_ok_and(|m| m.is_dir()) {
        fs::remove_dir(&full).map_err(io(&full))?;
    }
    match kind {
        EntryKind::Symlink => {
            use std::os::unix::ffi::OsStrExt as _;
            let target = std::ffi::OsStr::from_bytes(bytes);
            if fs::symlink_metadata(&full).is_ok() {
                fs::remove_file(&full).map_err(io(&full))?;
            }
            std::os::unix::fs::symlink(target, &full).map_err(io(&full))
        }
        EntryKind::File | EntryKind::Executable => {
            let mode = if kind == EntryKind::Executable {
                0o755
            } else {
                0o644
            };
            let mut temp = tempfile::NamedTempFile::new_in(parent).map_err(io(parent))?;
            std::io::Write::write_all(&mut temp, bytes).map_err(io(&full))?;
            fs::set_permissions(temp.path(), fs::Permissions::from_mode(mode))
                .map_err(io(&full))?;
            if fs::symlink_metadata(&full).is_ok_and(|m| m.file_type().is_symlink()) {
                fs::remove_file(&full).map_err(io(&full))?;
            }
            temp.persist(&full)
                .map(|_| ())
                .map_err(|e| io(&full)(e.error))
        }
    }
}

/// Counts the files of an untracked directory up to the limit (without following links) and
/// notes the directory, or its files over the size limit, as left out.
pub(super) fn scan_dir(
    full: &Path,
    relative: &str,
    limits: &CheckpointLimits,
    skipped: &mut Vec<Skipped>,
    deadline: Instant,
) {
    let mut count = 0usize;
    let mut large = Vec::new();
    let mut stack = vec![(full.to_owned(), relative.to_owned())];
    while let Some((dir, rel)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            let name = entry.file_name().to_string_lossy().into_owned();
            if meta.is_dir() {
                if name != ".git" {
                    stack.push((entry.path(), format!("{rel}{name}/")));
                }
                continue;
            }
            count += 1;
            if meta.is_file() && meta.len() > limits.max_file_bytes {
                large.push(Skipped {
                    path: format!("{rel}{name}"),
                    reason: SkipReason::TooLarge { bytes: meta.len() },
                });
            }
            if count > limits.max_dir_files || Instant::now() >= deadline {
                skipped.push(Skipped {
                    path: relative.to_owned(),
                    reason: SkipReason::TooManyFiles { at_least: count },
                });
                return;
            }
        }
    }
    skipped.extend(large);
}

/// A line of `info/exclude` that matches exactly `path` (a directory ends in `/`), anchored
/// at the top and with the pattern characters escaped.
pub(super) fn exclude_line(path: &str) -> String {
    let mut line = String::from("/");
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '!' | '#' | ' ') {
            line.push('\\');
        }
        line.push(c);
    }
    line.push('\n');
    line
}

/// Parses `git diff-tree -r -z --raw` output into path changes.
///
/// Each record is `:OLDMODE NEWMODE OLDOID NEWOID STATUS\0PATH\0`; an all-zero oid (or mode)
/// means absent. Modes a checkpoint does not restore (submodules) are left out.
pub(super) fn parse_raw_diff(out: &[u8]) -> Vec<PathChange> {
    let mut changes = Vec::new();
    let mut fields = out.split(|b| *b == 0);
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        let meta = String::from_utf8_lossy(meta);
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_oid, new_oid, _status] = parts[..] else {
            continue;
        };
        let side = |mode: &str, oid: &str| {
            let kind = EntryKind::from_git_mode(mode)?;
            Some(Entry {
                kind,
                oid: oid.to_owned(),
            })
        };
        let at_checkpoint = side(old_mode, old_oid);
        let at_latest = side(new_mode, new_oid);
        let restorable = |mode: &str| mode == "000000" || EntryKind::from_git_mode(mode).is_some();
        if !restorable(old_mode) || !restorable(new_mode) {
            continue;
        }
        changes.push(PathChange {
            path: String::from_utf8_lossy(path).into_owned(),
            at_checkpoint,
            at_latest,
        });
    }
    changes
}

/// What `git status --porcelain=v2 -z` found: tracked paths whose file changed (or went),
/// and untracked paths (a directory ends in `/`), as raw bytes.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Scan {
    pub(super) changed: Vec<Vec<u8>>,
    pub(super) untracked: Vec<Vec<u8>>,
    /// HEAD's commit (`None` while HEAD is unborn).
    pub(super) head: Option<String>,
    /// No record at all: the work tree matches the index and the index matches HEAD.
    pub(super) nothing: bool,
    /// Some record says the index differs from HEAD (its index side is not `.`), or could
    /// not be read: the index is then not known to be HEAD's tree.
    pub(super) staged: bool,
}

/// Parses `git status --porcelain=v2 -z` output. Only the work-tree side of each record
/// counts (its index side is the last snapshot against HEAD); malformed records are dropped.
pub(super) fn parse_status(out: &[u8]) -> Scan {
    let mut scan = Scan {
        nothing: true,
        ..Scan::default()
    };
    let mut records = out.split(|b| *b == 0);
    while let Some(record) = records.next() {
        if let Some(head) = record.strip_prefix(b"# branch.oid ") {
            let head = String::from_utf8_lossy(head);
            if head.bytes().all(|b| b.is_ascii_hexdigit()) && !head.is_empty() {
                scan.head = Some(head.into_owned());
            }
            continue;
        }
        if !record.is_empty() && !record.starts_with(b"#") {
            scan.nothing = false;
        }
        // Fields before the path, by record kind: `1` has 8, `2` has 9 (and the original
        // path follows as its own record), `u` has 10.
        let (fields, renamed) = match record.first() {
            Some(b'1') => (8, false),
            Some(b'2') => (9, true),
            Some(b'u') => (10, false),
            Some(b'?') => {
                if let Some(path) = record.strip_prefix(b"? ") {
                    scan.untracked.push(path.to_vec());
                }
                continue;
            }
            _ => continue,
        };
        let mut parts = record.splitn(fields + 1, |b| *b == b' ');
        let xy = parts.nth(1);
        if renamed || fields == 10 || xy.is_none_or(|xy| xy.len() != 2 || xy[0] != b'.') {
            scan.staged = true;
        }
        let Some(path) = parts.nth(fields - 2) else {
            scan.staged = true;
            continue;
        };
        let original = if renamed { records.next() } else { None };
        if xy.is_some_and(|xy| xy.len() == 2 && xy[1] != b'.') {
            scan.changed.push(path.to_vec());
            scan.changed.extend(original.map(<[u8]>::to_vec));
        }
    }
    scan
}

/// An upper guess of what a snapshot that changed `changed` added to the shadow repository:
/// each file's size as it is now (objects are stored compressed) and a few KiB of trees and
/// commit for each.
pub(super) fn estimated_growth(workspace: &Path, changed: &[String]) -> u64 {
    const TREES_PER_PATH: u64 = 8 * 1024;
    changed
        .iter()
        .map(|path| {
            let size = fs::symlink_metadata(workspace.join(path)).map_or(0, |m| m.len());
            size.saturating_add(TREES_PER_PATH)
        })
        .fold(0, u64::saturating_add)
}

/// The bytes the files under `dir` take.
pub(super) fn disk_use(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                total += meta.len();
            }
        }
    }
    total
}
