//! The texts of the built-in tools' outcomes that the other modules do not render: file-system
//! failures, confirmations of writes, fetch and spawn failures, skills.
//!
//! The drivers observe what happened (an `std::io::Error`, a byte count) and call these, so
//! the model reads the same words from either driver. Paths are shown as the model sent them,
//! since that is the name it knows the file by.

use super::ToolOutput;
use std::io::ErrorKind;

/// What a tool was doing when a file-system call failed.
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

/// Reports a failed file-system call on `path` as an error result.
///
/// The message names the operation and the path and turns the common causes into advice:
/// `cannot read 'src/x.rs': it does not exist; list_files shows which files there are`.
pub fn fs_error(op: FsOp, path: &str, err: &std::io::Error) -> ToolOutput {
    let verb = match op {
        FsOp::Read => "read",
        FsOp::List => "list",
        FsOp::Resolve => "resolve",
        FsOp::CreateDirs => "create the parent directories of",
        FsOp::Write => "write",
    };
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
    ToolOutput::error(format!("cannot {verb} '{path}': {reason}"))
}

/// Reports that a tool wanting a file was given a directory.
pub fn is_a_directory(path: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "'{path}' is a directory, not a file; list_files shows what is in it"
    ))
}

/// Reports that `read_file` was given something that is neither a file nor a directory (a
/// device, a pipe, a socket), which could block or never end.
pub fn not_a_regular_file(path: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "'{path}' is not a regular file (it is a device, pipe or socket); only files can be read"
    ))
}

/// Reports that `list_files` was given a file instead of a directory.
pub fn not_a_directory(path: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "'{path}' is a file, not a directory; read it with read_file, or list its directory"
    ))
}

/// Reports that `edit_file` was asked to edit a file that does not exist.
pub fn edit_missing_file(path: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "'{path}' does not exist; to create a file, use write_file"
    ))
}

/// Reports that `edit_file` refuses a file that is not UTF-8 text.
pub fn edit_not_text(path: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "'{path}' is not a text file (it has NUL bytes or is not valid UTF-8); edit_file only \
         edits text files"
    ))
}

/// Confirms a `write_file`: `created 'a.txt' (12 bytes)` or `overwrote 'a.txt' (12 bytes)`.
pub fn wrote_file(path: &str, bytes: usize, created: bool) -> ToolOutput {
    let verb = if created { "created" } else { "overwrote" };
    let s = if bytes == 1 { "" } else { "s" };
    ToolOutput::ok(format!("{verb} '{path}' ({bytes} byte{s})"))
}

/// Confirms an `edit_file`: `edited 'a.rs': replaced 2 occurrences`.
pub fn edited_file(path: &str, replacements: usize) -> ToolOutput {
    let s = if replacements == 1 { "" } else { "s" };
    ToolOutput::ok(format!(
        "edited '{path}': replaced {replacements} occurrence{s}"
    ))
}

/// Reports that `web_fetch` got no complete response within its timeout of `secs` seconds
/// (normally [`WEB_FETCH_TIMEOUT_SECS`](super::builtin::WEB_FETCH_TIMEOUT_SECS)).
pub fn fetch_timed_out(url: &str, secs: u64) -> ToolOutput {
    ToolOutput::error(format!(
        "fetching {url} failed: no complete response within {secs} s"
    ))
}

/// Reports that `web_fetch` failed before a response arrived (DNS, connection, TLS, ...);
/// `detail` is the HTTP client's description.
pub fn fetch_failed(url: &str, detail: &str) -> ToolOutput {
    ToolOutput::error(format!("fetching {url} failed: {detail}"))
}

/// Reports that `run_command` could not start the shell.
pub fn spawn_failed(err: &std::io::Error) -> ToolOutput {
    ToolOutput::error(format!("could not start the command with sh: {err}"))
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
            edited_file("a.rs", 2).content,
            "edited 'a.rs': replaced 2 occurrences"
        );
        assert_eq!(
            edited_file("a.rs", 1).content,
            "edited 'a.rs': replaced 1 occurrence"
        );
    }

    #[test]
    fn failures_are_errors() {
        for out in [
            is_a_directory("d"),
            not_a_regular_file("/dev/zero"),
            not_a_directory("f"),
            edit_missing_file("f"),
            edit_not_text("f"),
            fetch_timed_out("http://x", 30),
            fetch_failed("http://x", "connection refused"),
            spawn_failed(&Error::from(ErrorKind::NotFound)),
        ] {
            assert!(out.is_error, "{}", out.content);
        }
        assert!(
            fetch_timed_out("http://x", 30)
                .content
                .contains("within 30 s")
        );
    }
}
