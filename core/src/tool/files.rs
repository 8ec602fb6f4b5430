//! What the file tools tell the model about the file system: how paths are shown, and the
//! messages for failures, refusals and successful writes.
//!
//! The drivers observe the file system (an `std::io::Error`, a file's size and kind) and hand
//! the facts here, so `read_file`, `list_files`, `write_file` and `edit_file` report the same
//! things in the same words under either driver.

use super::ToolOutput;
use super::edit::EditError;
use std::io;
use std::path::Path;

/// Largest file `read_file` and `edit_file` load; larger ones are refused with a hint to use
/// `run_command` (`head`, `tail`, `grep`, `sed -n`).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// What a tool was doing when the file system said no; it words the failure message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAction {
    /// Reading a file.
    Read,
    /// Listing a directory.
    List,
    /// Creating or replacing a file.
    Write,
    /// Editing a file in place.
    Edit,
}

impl FileAction {
    fn verb(self) -> &'static str {
        match self {
            FileAction::Read => "read",
            FileAction::List => "list",
            FileAction::Write => "write",
            FileAction::Edit => "edit",
        }
    }
}

/// What kind of thing a path names, when it is not what the tool needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A device, socket or pipe.
    Special,
}

/// Shows `path` to the model: relative to `root` when it lies inside it (`src/main.rs`, or `.`
/// for the root itself), else absolute.
pub fn display_path(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// The message for an IO failure on `path` (as [`display_path`] shows it), worded by kind:
/// a missing file, a missing permission, a directory where a file was expected, or the
/// system's own message.
pub fn io_failure(action: FileAction, path: &str, error: &io::Error) -> ToolOutput {
    let verb = action.verb();
    let text = match error.kind() {
        io::ErrorKind::NotFound => match action {
            FileAction::Write => format!("cannot write {path}: a parent directory is missing"),
            FileAction::Read | FileAction::List | FileAction::Edit => {
                format!("{path} does not exist; check the path (list_files shows what is there)")
            }
        },
        io::ErrorKind::PermissionDenied => format!("permission denied: cannot {verb} {path}"),
        io::ErrorKind::IsADirectory => format!("cannot {verb} {path}: it is a directory"),
        io::ErrorKind::NotADirectory => {
            format!("cannot {verb} {path}: a part of the path is a file, not a directory")
        }
        io::ErrorKind::StorageFull => format!("cannot {verb} {path}: the disk is full"),
        io::ErrorKind::ReadOnlyFilesystem => {
            format!("cannot {verb} {path}: the file system is read-only")
        }
        _ => format!("cannot {verb} {path}: {error}"),
    };
    ToolOutput::error(text)
}

/// The refusal for a path that is not of the kind `action` needs (a directory given to
/// `read_file`, a file given to `list_files`, a device anywhere).
pub fn wrong_kind(action: FileAction, path: &str, found: FileKind) -> ToolOutput {
    let verb = action.verb();
    let text = match (action, found) {
        (FileAction::List, FileKind::File) => {
            format!("{path} is a file, not a directory; use read_file to read it")
        }
        (_, FileKind::Directory) => {
            format!("{path} is a directory, not a file; use list_files to see what is in it")
        }
        (_, FileKind::Special) => {
            format!("cannot {verb} {path}: it is a device, socket or pipe, not a regular file")
        }
        (_, FileKind::File) => format!("cannot {verb} {path}"),
    };
    ToolOutput::error(text)
}

/// The refusal for a file larger than [`MAX_FILE_BYTES`].
pub fn too_large(path: &str, size: u64) -> ToolOutput {
    ToolOutput::error(format!(
        "{path} is {size} bytes, more than the {} MiB the file tools load; look at parts of it \
         with run_command (head, tail, grep, sed -n)",
        MAX_FILE_BYTES / (1024 * 1024)
    ))
}

/// The refusal for a binary file (see [`looks_binary`](super::render::looks_binary)).
pub fn binary(path: &str, size: u64) -> ToolOutput {
    ToolOutput::error(format!(
        "{path} is a binary file ({size} bytes), not text; it cannot be shown or edited as text"
    ))
}

/// The refusal of a `list_files` pattern that is not a valid glob; `reason` is the glob
/// parser's message.
pub fn bad_pattern(pattern: &str, reason: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "list_files: the pattern '{pattern}' is not a valid glob ({reason}); use `*`, `**`, `?`, \
         `[abc]` and `{{a,b}}`, e.g. `**/*.rs`"
    ))
}

/// The result of a successful `write_file`.
pub fn written(path: &str, bytes: usize, replaced: bool) -> ToolOutput {
    let how = if replaced { "replaced" } else { "created" };
    ToolOutput::ok(format!("wrote {bytes} bytes to {path} ({how})"))
}

/// The result of an `edit_file` call: the replacement count, or why nothing was changed.
pub fn edited(path: &str, result: Result<usize, EditError>) -> ToolOutput {
    match result {
        Ok(1) => ToolOutput::ok(format!("edited {path}: replaced 1 occurrence")),
        Ok(n) => ToolOutput::ok(format!("edited {path}: replaced {n} occurrences")),
        Err(e) => ToolOutput::error(format!("{path} was not changed: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn paths_are_shown_relative_to_the_root_when_inside() {
        let root = PathBuf::from("/ws");
        assert_eq!(display_path(&root, Path::new("/ws/src/a.rs")), "src/a.rs");
        assert_eq!(display_path(&root, Path::new("/ws")), ".");
        assert_eq!(display_path(&root, Path::new("/etc/hosts")), "/etc/hosts");
        assert_eq!(display_path(&root, Path::new("/wsx/a")), "/wsx/a");
    }

    #[test]
    fn io_failures_say_what_happened() {
        let table = [
            (
                FileAction::Read,
                io::ErrorKind::NotFound,
                "a.txt does not exist",
            ),
            (
                FileAction::Write,
                io::ErrorKind::NotFound,
                "parent directory is missing",
            ),
            (
                FileAction::Edit,
                io::ErrorKind::PermissionDenied,
                "permission denied: cannot edit",
            ),
            (
                FileAction::List,
                io::ErrorKind::NotADirectory,
                "is a file, not a directory",
            ),
            (
                FileAction::Write,
                io::ErrorKind::StorageFull,
                "disk is full",
            ),
            (
                FileAction::Read,
                io::ErrorKind::IsADirectory,
                "it is a directory",
            ),
            (
                FileAction::Read,
                io::ErrorKind::Other,
                "cannot read a.txt: boom",
            ),
        ];
        for (action, kind, says) in table {
            let out = io_failure(action, "a.txt", &io::Error::new(kind, "boom"));
            assert!(out.is_error);
            assert!(out.content.contains(says), "{kind:?}: {}", out.content);
        }
    }

    #[test]
    fn refusals_and_successes() {
        assert!(
            wrong_kind(FileAction::Read, "src", FileKind::Directory)
                .content
                .contains("use list_files")
        );
        assert!(
            wrong_kind(FileAction::List, "a.rs", FileKind::File)
                .content
                .contains("use read_file")
        );
        assert!(
            wrong_kind(FileAction::Read, "/dev/zero", FileKind::Special)
                .content
                .contains("device")
        );
        assert!(too_large("big.log", 1 << 30).content.contains("64 MiB"));
        assert!(binary("a.png", 10).content.contains("binary"));
        assert!(
            bad_pattern("[", "unclosed")
                .content
                .contains("'[' is not a valid glob")
        );
        assert_eq!(
            written("a.txt", 3, false).content,
            "wrote 3 bytes to a.txt (created)"
        );
        assert!(!edited("a", Ok(2)).is_error);
        assert_eq!(
            edited("a", Ok(1)).content,
            "edited a: replaced 1 occurrence"
        );
        let refused = edited("a", Err(EditError::NoChange));
        assert!(refused.is_error && refused.content.starts_with("a was not changed: "));
    }
}
