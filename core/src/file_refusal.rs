//! Why a file hrns meant to read on its own initiative was left alone, and how large each kind
//! may be.
//!
//! A cloned repository is untrusted: it can commit a symbolic link to `/dev/zero` named
//! `.mcp.json`, and a sandboxed command can make a FIFO called `AGENTS.md`. Every file hrns
//! opens without being asked (config, `.mcp.json`, approvals, agents, commands, skills,
//! instruction files, ignore files, sessions) is therefore opened without blocking, read only
//! if it is a regular file after resolving links and not a kernel pseudo-file, and read under
//! a cap for its kind (an instruction file is never read past the part the prompt takes). The driver observes the file (`hrns_blocking::safe_file`); this module
//! names the refusal, so the warning reads the same wherever it is shown.

use std::fmt;

/// Largest config file (`config.json`) read: a hand-written config is a few KiB.
pub const CONFIG_CAP: u64 = 4 * 1024 * 1024;
/// Largest `.mcp.json` read.
pub const MCP_CONFIG_CAP: u64 = 1024 * 1024;
/// Largest MCP approvals file (`mcp-approved.json`, a copy of each approved `.mcp.json`) read.
pub const MCP_APPROVALS_CAP: u64 = 16 * 1024 * 1024;
/// Largest agent (`AGENT.md`), skill (`SKILL.md`) or custom command file read.
pub const DEFINITION_CAP: u64 = 1024 * 1024;
/// Largest `.gitignore`, `.ignore` or git exclude file read during a walk.
pub const IGNORE_FILE_CAP: u64 = 1024 * 1024;
/// Largest session file (`*.jsonl`) loaded for `--continue`, `--resume` or listing.
pub const SESSION_CAP: u64 = 256 * 1024 * 1024;

/// What a path turned out to be, when it is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialKind {
    /// A directory.
    Directory,
    /// A FIFO (named pipe): opening or reading it can block forever.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device such as `/dev/zero`: endless or blocking.
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Anything else the file system reports.
    Other,
}

impl fmt::Display for SpecialKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SpecialKind::Directory => "a directory",
            SpecialKind::Fifo => "a FIFO (named pipe), which could block hrns",
            SpecialKind::Socket => "a socket",
            SpecialKind::CharDevice => "a character device, which could be endless or block",
            SpecialKind::BlockDevice => "a block device",
            SpecialKind::Other => "not a regular file",
        })
    }
}

/// Why a file was not read. Each is the file's fault (or its author's), never hrns's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRefusal {
    /// After following links, the path is not a regular file.
    NotRegular(SpecialKind),
    /// The file lives in `/proc` or `/sys`, whose files can block or never end.
    KernelFile,
    /// The file holds more than `cap` bytes (`size` is what was seen: its length, or `cap + 1`
    /// when it grew while being read).
    TooLarge {
        /// Bytes seen.
        size: u64,
        /// The cap for this kind of file.
        cap: u64,
    },
}

impl fmt::Display for FileRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileRefusal::NotRegular(kind) => write!(f, "{kind}"),
            FileRefusal::KernelFile => f.write_str(
                "a kernel pseudo-file (in /proc or /sys), which could block or never end",
            ),
            FileRefusal::TooLarge { size, cap } => write!(
                f,
                "larger than the {} limit for this kind of file ({} seen)",
                human_bytes(*cap),
                human_bytes(*size)
            ),
        }
    }
}

/// `4 MiB`, `512 KiB` or `100 bytes`, for limits that are powers of two.
fn human_bytes(n: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    if n >= MIB && n % MIB == 0 {
        format!("{} MiB", n / MIB)
    } else if n >= KIB && n % KIB == 0 {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

/// Whether a walk may descend into (or search) `path`: not below `/proc`, `/sys` or `/dev`,
/// whose entries are kernel objects that can block, never end, or loop. `path` is absolute.
pub fn is_kernel_tree(path: &std::path::Path) -> bool {
    ["/proc", "/sys", "/dev"]
        .iter()
        .any(|top| path.starts_with(top))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn refusals_say_what_the_file_is() {
        assert_eq!(
            FileRefusal::NotRegular(SpecialKind::Fifo).to_string(),
            "a FIFO (named pipe), which could block hrns"
        );
        assert_eq!(
            FileRefusal::TooLarge {
                size: 2 * 1024 * 1024 + 1,
                cap: MCP_CONFIG_CAP
            }
            .to_string(),
            "larger than the 1 MiB limit for this kind of file (2097153 bytes seen)"
        );
    }

    #[test]
    fn kernel_trees_are_proc_sys_and_dev_only() {
        for p in ["/proc", "/proc/self/status", "/sys/kernel", "/dev/zero"] {
            assert!(is_kernel_tree(Path::new(p)), "{p}");
        }
        for p in ["/", "/home/u/proc", "/procs", "/devices", "/tmp/dev"] {
            assert!(!is_kernel_tree(Path::new(p)), "{p}");
        }
    }
}
