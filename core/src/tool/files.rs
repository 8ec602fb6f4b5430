//! The decisions and texts of the file tools: `read_file`, `list_files`, `write_file` and
//! `edit_file`.
//!
//! The drivers observe the file system (an `std::io::Error`, a file's kind and size, the
//! entries of a directory walk) and hand the facts here, so the four tools decide the same
//! things and report them in the same words under either driver. Paths are shown as the model
//! sent them, since that is the name it knows the file by; paths found by a listing are shown
//! with [`super::path::display_path`].
//!
//! The behaviour both drivers implement around these calls is described in the
//! [module docs of `tool`](super#the-built-in-tools).

use super::ToolOutput;
use super::builtin::{EditFileArgs, LIST_FILES_CAP};
use super::edit::{EditError, Edited, apply_edit};
use super::glob::Glob;
use super::page::looks_binary;
use super::path::{display_path, slash_path};
use super::render::render_file_list;
use crate::file_refusal::FileRefusal;
use std::ffi::OsStr;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// Largest file `edit_file` loads (it holds the whole file and writes it back); larger files
/// are refused with a hint to change them with `run_command`. `read_file` streams and has no
/// such limit.
pub const MAX_EDIT_BYTES: u64 = 64 * 1024 * 1024;

/// Names `list_files` leaves out and never walks into: the internals of version-control
/// systems (and the `.git` file of a worktree or submodule), which are never what the model is
/// looking for. Other hidden files and directories are listed (`.github/`, `.gitignore`,
/// `.cargo/config.toml` matter to a coding agent).
pub const LIST_FILES_SKIPPED_DIRS: [&str; 4] = [".git", ".hg", ".svn", ".jj"];

/// What a tool was doing when a file-system call failed; it words the failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsOp {
    /// Opening or reading a file.
    Read,
    /// Listing a directory.
    List,
    /// Resolving a path (following symbolic links) before writing to it.
    Resolve,
    /// Creating a file's missing parent directories.
    CreateDirs,
    /// Writing a file (the temporary file, its permissions, or the rename over the target).
    Write,
}

impl FsOp {
    fn verb(self) -> &'static str {
        match self {
            FsOp::Read => "read",
            FsOp::List => "list",
            FsOp::Resolve => "resolve",
            FsOp::CreateDirs => "create the parent directories of",
            FsOp::Write => "write",
        }
    }
}

/// What kind of thing a path names, as the driver's `metadata` call found it (symbolic links
/// followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A device, pipe or socket (or anything else that is neither a file nor a directory).
    Special,
}

impl From<std::fs::FileType> for FileKind {
    fn from(file_type: std::fs::FileType) -> Self {
        if file_type.is_file() {
            FileKind::File
        } else if file_type.is_dir() {
            FileKind::Directory
        } else {
            FileKind::Special
        }
    }
}

/// Reports a failed file-system call on `path` as an error result.
///
/// The message names the operation and the path and turns the common causes into advice:
/// `cannot read 'src/x.rs': it does not exist; list_files shows which files there are`.
pub fn fs_error(op: FsOp, path: &str, err: &std::io::Error) -> ToolOutput {
    let reason = match err.kind() {
        ErrorKind::NotFound => match op {
            FsOp::Read | FsOp::List | FsOp::Resolve => {
                "it does not exist; list_files shows which files there are".to_owned()
            }
            FsOp::CreateDirs | FsOp::Write => "a directory on the way does not exist".to_owned(),
        },
        ErrorKind::PermissionDenied => "permission denied".to_owned(),
        ErrorKind::NotADirectory => "a component of the path is a file, not a directory".to_owned(),
        ErrorKind::IsADirectory => "it is a directory".to_owned(),
        ErrorKind::AlreadyExists => "a file is in the way".to_owned(),
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => "the disk is full".to_owned(),
        ErrorKind::ReadOnlyFilesystem => "the file system is read-only".to_owned(),
        _ => err.to_string(),
    };
    ToolOutput::error(format!("cannot {} '{path}': {reason}", op.verb()))
}

/// Reports that the editor holding the files (an ACP client, see the driver's `Files`) failed
/// to read or write `path`, with the editor's own reason (its error, a timeout, a closed
/// connection). The file is as it was, as far as hrns knows.
pub fn editor_error(op: FsOp, path: &str, reason: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "cannot {} '{path}' through the editor: {reason}",
        op.verb()
    ))
}

/// Checks that `path`, which a tool wants to read or write (`op`), is a regular file.
///
/// A directory is refused with a pointer to `list_files`; a device, pipe or socket is refused
/// before it is opened, since reading one could block or never end and replacing one is
/// never what the model meant.
pub fn require_file(op: FsOp, path: &str, kind: FileKind) -> Result<(), ToolOutput> {
    match kind {
        FileKind::File => Ok(()),
        FileKind::Directory => Err(ToolOutput::error(format!(
            "'{path}' is a directory, not a file; list_files shows what is in it"
        ))),
        FileKind::Special => Err(ToolOutput::error(format!(
            "'{path}' is not a regular file (it is a device, pipe or socket); only regular \
             files can be {}",
            if op == FsOp::Read { "read" } else { "written" }
        ))),
    }
}

/// Checks that `path`, which `list_files` was asked to list, is a directory.
pub fn require_dir(path: &str, kind: FileKind) -> Result<(), ToolOutput> {
    match kind {
        FileKind::Directory => Ok(()),
        FileKind::File => Err(ToolOutput::error(format!(
            "'{path}' is a file, not a directory; read it with read_file, or list its directory"
        ))),
        FileKind::Special => Err(ToolOutput::error(format!(
            "'{path}' is not a directory (it is a device, pipe or socket)"
        ))),
    }
}

/// Confirms a `write_file`: `created 'a.txt' (12 bytes)` or `overwrote 'a.txt' (12 bytes)`.
pub fn wrote_file(path: &str, bytes: usize, created: bool) -> ToolOutput {
    let verb = if created { "created" } else { "overwrote" };
    let s = if bytes == 1 { "" } else { "s" };
    ToolOutput::ok(format!("{verb} '{path}' ({bytes} byte{s})"))
}

/// Reports that `edit_file` was asked to edit a file that does not exist.
pub fn edit_missing_file(path: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "'{path}' does not exist; to create a file, use write_file"
    ))
}

/// Checks the size of a file `edit_file` is about to load against [`MAX_EDIT_BYTES`].
pub fn check_edit_size(path: &str, size: u64) -> Result<(), ToolOutput> {
    if size <= MAX_EDIT_BYTES {
        return Ok(());
    }
    Err(ToolOutput::error(format!(
        "'{path}' is {size} bytes, more than the {} MiB edit_file loads; change it with \
         run_command (sed, or a script) instead",
        MAX_EDIT_BYTES / (1024 * 1024)
    )))
}

/// The edit of `edit_file`: checks that `bytes`, the whole file at `path`, are UTF-8 text,
/// and applies [`apply_edit`] with the call's arguments.
///
/// Returns the new content, or the refusal to return (the file is then left alone): a file
/// that is not text (NUL bytes or invalid UTF-8 anywhere, since writing it back would change
/// it), or an [`EditError`] prefixed with the path.
pub fn edit_text(path: &str, bytes: Vec<u8>, args: &EditFileArgs) -> Result<Edited, ToolOutput> {
    let not_text = || {
        ToolOutput::error(format!(
            "'{path}' is not a text file (it has NUL bytes or is not valid UTF-8); edit_file \
             only edits text files"
        ))
    };
    if looks_binary(&bytes) {
        return Err(not_text());
    }
    let text = String::from_utf8(bytes).map_err(|_| not_text())?;
    let replace_all = args.replace_all.unwrap_or(false);
    apply_edit(&text, &args.old_string, &args.new_string, replace_all)
        .map_err(|e| edit_refused(path, &e))
}

/// Reports an edit that [`apply_edit`] refused: `'a.rs' was not changed: old_string was not
/// found in the file; …`.
pub fn edit_refused(path: &str, err: &EditError) -> ToolOutput {
    ToolOutput::error(format!("'{path}' was not changed: {err}"))
}

/// Confirms an `edit_file`: `edited 'a.rs': replaced 2 occurrences`.
pub fn edited_file(path: &str, replacements: usize) -> ToolOutput {
    let s = if replacements == 1 { "" } else { "s" };
    ToolOutput::ok(format!(
        "edited '{path}': replaced {replacements} occurrence{s}"
    ))
}

/// Returns whether `list_files` skips an entry called `name` ([`LIST_FILES_SKIPPED_DIRS`]).
pub fn is_skipped_dir(name: &OsStr) -> bool {
    LIST_FILES_SKIPPED_DIRS
        .iter()
        .any(|skipped| name == *skipped)
}

/// The result of `list_files`, collected from the files a driver's directory walk finds.
///
/// The driver walks `dir` honouring `.gitignore`, `.ignore` and git's exclude files (also
/// outside a git repository), does not follow symbolic links, lists hidden files, and does not
/// descend into directories that [`is_skipped_dir`] names. It hands every entry that is not a
/// directory (a symbolic link to one included) to [`Listing::add`], and stops early when the
/// call is cancelled. The listing keeps the paths whose path relative to `dir` matches the
/// pattern ([`Glob`]), shown relative to the workspace root when inside it, and
/// [`Listing::finish`] renders them sorted and capped at [`LIST_FILES_CAP`].
#[derive(Debug, Clone)]
pub struct Listing {
    root: PathBuf,
    dir: PathBuf,
    glob: Option<Glob>,
    paths: Vec<String>,
    unread: Vec<String>,
}

impl Listing {
    /// Returns an empty listing of `dir` (as resolved from the model's `dir`) for the workspace
    /// `root`, or the refusal of an invalid `pattern`.
    pub fn new(root: &Path, dir: &Path, pattern: Option<&str>) -> Result<Listing, ToolOutput> {
        let glob = pattern.map(Glob::new).transpose()?;
        Ok(Listing {
            root: root.to_path_buf(),
            dir: dir.to_path_buf(),
            glob,
            paths: Vec::new(),
            unread: Vec::new(),
        })
    }

    /// Adds a file the walk found at `path` (below the listed directory), if it matches.
    pub fn add(&mut self, path: &Path) {
        let Ok(relative) = path.strip_prefix(&self.dir) else {
            return;
        };
        if self
            .glob
            .as_ref()
            .is_none_or(|g| g.matches(&slash_path(relative)))
        {
            self.paths.push(display_path(&self.root, path));
        }
    }

    /// Returns the result: the paths sorted, at most [`LIST_FILES_CAP`] with a note about the
    /// rest, or "no files matched".
    pub fn finish(self) -> ToolOutput {
        let mut out = render_file_list(self.paths, LIST_FILES_CAP);
        push_unread(&mut out.content, &self.unread);
        out
    }

    /// Notes an ignore file (`.gitignore`, `.ignore`) at `path` the walk did not read, and
    /// why; its rules were not applied. The model is told, so it can mention it.
    pub fn unread_ignore_file(&mut self, path: &Path, refusal: &FileRefusal) {
        self.unread
            .push(unread_line(&display_path(&self.root, path), refusal));
    }
}

/// The note for an ignore file left unread because it is hostile.
pub(crate) fn unread_line(shown: &str, refusal: &FileRefusal) -> String {
    format!("[ignore file {shown} not read: {refusal}; its rules were not applied]")
}

/// Appends the notes about unread ignore files, one per line.
pub(crate) fn push_unread(out: &mut String, unread: &[String]) {
    for line in unread {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(line);
        out.push('\n');
    }
}

/// Refuses to walk or search below `/proc`, `/sys` or `/dev` (see [`is_kernel_tree`]).
///
/// [`is_kernel_tree`]: crate::file_refusal::is_kernel_tree
pub fn kernel_tree_refused(tool: &str, shown: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "{tool}: refused {shown}: /proc, /sys and /dev hold kernel objects whose reads can \
         block or never end; read one file there with read_file or run_command instead"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Error;

    #[test]
    fn fs_errors_give_advice() {
        let table = [
            (
                FsOp::Read,
                ErrorKind::NotFound,
                "cannot read 'a': it does not exist; list_files shows which files there are",
            ),
            (
                FsOp::Write,
                ErrorKind::PermissionDenied,
                "cannot write 'a': permission denied",
            ),
            (
                FsOp::CreateDirs,
                ErrorKind::NotADirectory,
                "cannot create the parent directories of 'a': a component of the path is a \
                 file, not a directory",
            ),
            (
                FsOp::List,
                ErrorKind::StorageFull,
                "cannot list 'a': the disk is full",
            ),
            (
                FsOp::Write,
                ErrorKind::NotFound,
                "cannot write 'a': a directory on the way does not exist",
            ),
            (
                FsOp::Read,
                ErrorKind::IsADirectory,
                "cannot read 'a': it is a directory",
            ),
            (
                FsOp::Resolve,
                ErrorKind::ReadOnlyFilesystem,
                "cannot resolve 'a': the file system is read-only",
            ),
        ];
        for (op, kind, text) in table {
            assert_eq!(
                fs_error(op, "a", &Error::from(kind)),
                ToolOutput::error(text)
            );
        }
        let other = fs_error(FsOp::Read, "a", &Error::other("boom"));
        assert_eq!(other.content, "cannot read 'a': boom");
    }

    #[test]
    fn kinds_are_checked() {
        assert_eq!(require_file(FsOp::Read, "f", FileKind::File), Ok(()));
        let dir = require_file(FsOp::Read, "d", FileKind::Directory).unwrap_err();
        assert!(dir.is_error && dir.content.contains("'d' is a directory"));
        let dev = require_file(FsOp::Read, "/dev/zero", FileKind::Special).unwrap_err();
        assert!(dev.content.contains("not a regular file") && dev.content.ends_with("read"));
        let fifo = require_file(FsOp::Write, "p", FileKind::Special).unwrap_err();
        assert!(fifo.content.ends_with("written"), "{}", fifo.content);
        assert_eq!(require_dir("d", FileKind::Directory), Ok(()));
        let file = require_dir("f", FileKind::File).unwrap_err();
        assert!(
            file.content
                .contains("is a file, not a directory; read it with read_file")
        );
        assert!(require_dir("/dev/null", FileKind::Special).is_err());
    }

    #[test]
    fn confirmations() {
        assert_eq!(
            wrote_file("a.txt", 1, true),
            ToolOutput::ok("created 'a.txt' (1 byte)")
        );
        assert_eq!(
            wrote_file("a.txt", 0, false).content,
            "overwrote 'a.txt' (0 bytes)"
        );
        assert_eq!(
            edited_file("a.rs", 2),
            ToolOutput::ok("edited 'a.rs': replaced 2 occurrences")
        );
        assert_eq!(
            edited_file("a.rs", 1).content,
            "edited 'a.rs': replaced 1 occurrence"
        );
        assert!(edit_missing_file("f").content.contains("use write_file"));
    }

    fn edit(old: &str, new: &str, all: bool) -> EditFileArgs {
        EditFileArgs {
            path: "f".into(),
            old_string: old.into(),
            new_string: new.into(),
            replace_all: Some(all),
        }
    }

    #[test]
    fn edits_text_and_refuses_the_rest() {
        let done = edit_text("f", b"a b a".to_vec(), &edit("a", "c", true)).unwrap();
        assert_eq!((done.content.as_str(), done.replacements), ("c b c", 2));
        let refused = edit_text("f", b"a b a".to_vec(), &edit("a", "c", false)).unwrap_err();
        assert!(refused.is_error);
        assert!(
            refused
                .content
                .starts_with("'f' was not changed: old_string was found 2 times"),
            "{}",
            refused.content
        );
        for bytes in [&b"ab\0c"[..], b"caf\xe9"] {
            let out = edit_text("f", bytes.to_vec(), &edit("a", "c", false)).unwrap_err();
            assert!(
                out.content.contains("'f' is not a text file"),
                "{}",
                out.content
            );
        }
        // Invalid UTF-8 after the part `looks_binary` samples is refused too.
        let mut late = "a\n".repeat(10_000).into_bytes();
        late.extend_from_slice(b"caf\xe9\n");
        assert!(edit_text("f", late, &edit("a", "c", true)).is_err());
        assert_eq!(check_edit_size("f", MAX_EDIT_BYTES), Ok(()));
        let big = check_edit_size("f", MAX_EDIT_BYTES + 1).unwrap_err();
        assert!(big.content.contains("64 MiB") && big.content.contains("run_command"));
    }

    #[test]
    fn listings_match_relative_to_dir_and_show_paths_from_the_root() {
        let root = Path::new("/w");
        let mut all = Listing::new(root, Path::new("/w/src"), None).unwrap();
        let mut rs = Listing::new(root, Path::new("/w/src"), Some("*.rs")).unwrap();
        let mut outside = Listing::new(root, Path::new("/o"), Some("**")).unwrap();
        for path in ["/w/src/b.rs", "/w/src/a.md", "/w/src/x/c.rs", "/w/other.rs"] {
            all.add(Path::new(path));
            rs.add(Path::new(path));
        }
        outside.add(Path::new("/o/n.txt"));
        assert_eq!(all.finish().content, "src/a.md\nsrc/b.rs\nsrc/x/c.rs\n");
        assert_eq!(rs.finish().content, "src/b.rs\n");
        assert_eq!(outside.finish().content, "/o/n.txt\n");
        let empty = Listing::new(root, root, Some("*.py")).unwrap().finish();
        assert_eq!(empty, ToolOutput::ok("no files matched"));
        let bad = Listing::new(root, root, Some("src/[ab")).unwrap_err();
        assert!(bad.is_error && bad.content.contains("no closing ']'"));
    }

    #[test]
    fn only_version_control_directories_are_skipped() {
        for name in [".git", ".hg", ".svn", ".jj"] {
            assert!(is_skipped_dir(OsStr::new(name)), "{name}");
        }
        for name in [".github", ".gitignore", ".cargo", "git", "src"] {
            assert!(!is_skipped_dir(OsStr::new(name)), "{name}");
        }
    }
}
