//! Opening the files hrns reads on its own initiative, safely.
//!
//! A repository is untrusted input: Git can commit a symbolic link (`.mcp.json` →
//! `/dev/zero`), and a command can make a FIFO called `AGENTS.md`. A plain
//! [`std::fs::read`] of either grows without bound or blocks forever. [`read_capped`] and
//! [`open_regular`] are the one way hrns opens such files (config, `.mcp.json`, approvals,
//! agents, commands, skills, instruction files, ignore files, sessions, `grep`'s files):
//!
//! 1. the path is opened with `O_NONBLOCK | O_NOCTTY`, so opening a FIFO returns at once and
//!    a terminal never becomes the controlling one;
//! 2. the opened handle (not the path, which could change in between) is checked with `fstat`:
//!    only a regular file, links resolved, goes on; on Linux `fstatfs` also refuses files of
//!    procfs and sysfs, which claim to be regular but can block or never end;
//! 3. at most `cap` bytes are read ([`hrns_core::file_refusal`] holds the caps per kind); a
//!    longer file, or one that grows while read, is refused, never cut silently.
//!
//! The refusal is a [`SafeReadError`] naming the path and why, for one warning.

use hrns_core::file_refusal::{FileRefusal, SpecialKind};
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// A file that was not read, with its path.
#[derive(Debug, thiserror::Error)]
pub enum SafeReadError {
    /// Nothing is there (or a parent is not a directory, or a link leads nowhere): the normal
    /// case for optional files, which callers skip without a word.
    #[error("{}: does not exist", path.display())]
    Missing {
        /// The path asked for.
        path: PathBuf,
    },
    /// The file is hostile or unsuitable: not a regular file, a kernel pseudo-file, or over
    /// its cap. The user (or the repository) can remove or fix it.
    #[error("{}: {refusal}", path.display())]
    Refused {
        /// The path asked for.
        path: PathBuf,
        /// Why it was left alone.
        refusal: FileRefusal,
    },
    /// The file is not UTF-8 text ([`read_text`] only).
    #[error("{}: not UTF-8 text", path.display())]
    NotText {
        /// The path asked for.
        path: PathBuf,
    },
    /// The operating system refused (permissions, IO error).
    #[error("{}: {source}", path.display())]
    Io {
        /// The path asked for.
        path: PathBuf,
        /// The error of the failed call.
        source: io::Error,
    },
}

impl SafeReadError {
    /// Whether nothing is at the path, which optional files treat as "not configured".
    pub fn is_missing(&self) -> bool {
        matches!(self, SafeReadError::Missing { .. })
    }

    /// The one-line warning for a file that is skipped: `PATH: skipped, WHY`.
    pub fn skipped(&self) -> String {
        let why = match self {
            SafeReadError::Missing { .. } => "it does not exist".to_owned(),
            SafeReadError::Refused { refusal, .. } => refusal.to_string(),
            SafeReadError::NotText { .. } => "not UTF-8 text".to_owned(),
            SafeReadError::Io { source, .. } => source.to_string(),
        };
        format!("{}: skipped, {why}", self.path().display())
    }

    /// The path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            SafeReadError::Missing { path }
            | SafeReadError::Refused { path, .. }
            | SafeReadError::NotText { path }
            | SafeReadError::Io { path, .. } => path,
        }
    }
}

/// Opens `path` for reading if it is a regular file after following links and not a kernel
/// pseudo-file, without ever blocking; returns the file and its length.
///
/// # Errors
/// [`SafeReadError::Missing`] when nothing is there, [`SafeReadError::Refused`] for anything but
/// a regular file, [`SafeReadError::Io`] when the system refuses.
pub fn open_regular(path: &Path) -> Result<(File, u64), SafeReadError> {
    let io_error = |source: io::Error| {
        if matches!(
            source.kind(),
            io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
        ) {
            SafeReadError::Missing {
                path: path.to_owned(),
            }
        } else {
            SafeReadError::Io {
                path: path.to_owned(),
                source,
            }
        }
    };
    let refused = |refusal| SafeReadError::Refused {
        path: path.to_owned(),
        refusal,
    };
    let file = open_nonblocking(path).map_err(io_error)?;
    let meta = file.metadata().map_err(io_error)?;
    if !meta.is_file() {
        return Err(refused(FileRefusal::NotRegular(special_kind(
            meta.file_type(),
        ))));
    }
    if is_kernel_file(&file) {
        return Err(refused(FileRefusal::KernelFile));
    }
    Ok((file, meta.len()))
}

/// Reads the whole of `path` if it is a regular file of at most `cap` bytes (see
/// [`open_regular`]).
///
/// # Errors
/// As [`open_regular`], and [`SafeReadError::Refused`] with [`FileRefusal::TooLarge`] when the
/// file holds more than `cap` bytes.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, SafeReadError> {
    let (file, len) = open_regular(path)?;
    let too_large = |size| SafeReadError::Refused {
        path: path.to_owned(),
        refusal: FileRefusal::TooLarge { size, cap },
    };
    if len > cap {
        return Err(too_large(len));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| SafeReadError::Io {
            path: path.to_owned(),
            source,
        })?;
    if bytes.len() as u64 > cap {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`read_capped`], then the bytes as UTF-8 text.
///
/// # Errors
/// As [`read_capped`], and [`SafeReadError::NotText`] for bytes that are not UTF-8.
pub fn read_text(path: &Path, cap: u64) -> Result<String, SafeReadError> {
    String::from_utf8(read_capped(path, cap)?).map_err(|_| SafeReadError::NotText {
        path: path.to_owned(),
    })
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt;
    let flags = (OFlags::NONBLOCK | OFlags::NOCTTY).bits();
    OpenOptions::new()
        .read(true)
        .custom_flags(i32::try_from(flags).unwrap_or(0))
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).open(path)
}

fn special_kind(file_type: std::fs::FileType) -> SpecialKind {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return SpecialKind::Fifo;
        }
        if file_type.is_socket() {
            return SpecialKind::Socket;
        }
        if file_type.is_char_device() {
            return SpecialKind::CharDevice;
        }
        if file_type.is_block_device() {
            return SpecialKind::BlockDevice;
        }
    }
    if file_type.is_dir() {
        SpecialKind::Directory
    } else {
        SpecialKind::Other
    }
}

/// Whether the open file lives on procfs or sysfs (Linux).
#[cfg(target_os = "linux")]
fn is_kernel_file(file: &File) -> bool {
    /// `SYSFS_MAGIC` of `linux/magic.h`.
    const SYSFS_MAGIC: i128 = 0x6265_6572;
    rustix::fs::fstatfs(file).is_ok_and(|st| {
        let kind = i128::from(st.f_type);
        kind == i128::from(rustix::fs::PROC_SUPER_MAGIC) || kind == SYSFS_MAGIC
    })
}

#[cfg(not(target_os = "linux"))]
fn is_kernel_file(_: &File) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn refusal(result: Result<Vec<u8>, SafeReadError>) -> FileRefusal {
        match result {
            Err(SafeReadError::Refused { refusal, .. }) => refusal,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn regular_files_are_read_up_to_their_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_capped(&path, 5).unwrap(), b"12345");
        assert_eq!(
            refusal(read_capped(&path, 4)),
            FileRefusal::TooLarge { size: 5, cap: 4 }
        );
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(
            read_capped(&link, 5).unwrap(),
            b"12345",
            "links are followed"
        );
        assert!(
            read_capped(&dir.path().join("none"), 5)
                .unwrap_err()
                .is_missing()
        );
        assert!(
            read_capped(&path.join("below_a_file"), 5)
                .unwrap_err()
                .is_missing()
        );
    }

    #[test]
    fn devices_directories_and_kernel_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert_eq!(
            refusal(read_capped(&link, 1024)),
            FileRefusal::NotRegular(SpecialKind::CharDevice)
        );
        assert_eq!(
            refusal(read_capped(dir.path(), 1024)),
            FileRefusal::NotRegular(SpecialKind::Directory)
        );
        assert_eq!(
            refusal(read_capped(Path::new("/proc/self/status"), 1 << 20)),
            FileRefusal::KernelFile
        );
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        // Run on a thread so a regression fails the test instead of hanging the suite.
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || tx.send(refusal(read_capped(&path, 1024))));
        let got = rx.recv_timeout(Duration::from_secs(60));
        assert_eq!(got, Ok(FileRefusal::NotRegular(SpecialKind::Fifo)));
    }
}
