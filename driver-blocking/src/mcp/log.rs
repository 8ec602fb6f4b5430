//! A server's log file (`NAME.log`): its stderr and hrns's `[hrns]` lines about it, written
//! through one handle so that rotation ([`LogBudget`]) sees every line. Past the server's
//! `maxLogBytes` the file is moved to `NAME.log.1`, replacing the one before, and a fresh one
//! is started. The files are the owner's alone (0600, in a 0700 directory): a server's stderr
//! may say anything about the user's work that redaction cannot know is private.

use hrns_core::mcp::stderr::{LogBudget, LogWrite};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The log of one server, shared by the thread copying its stderr and its connection.
#[derive(Debug, Clone)]
pub(crate) struct ServerLog(Arc<Mutex<Inner>>);

#[derive(Debug)]
struct Inner {
    /// `None` for a log that keeps nothing ([`ServerLog::discard`]).
    path: Option<PathBuf>,
    /// `None` after a rotation failed to open a fresh file: lines are dropped.
    file: Option<File>,
    budget: LogBudget,
}

impl ServerLog {
    /// Opens (appends to) the log at `path`, rotated past `max_bytes`.
    pub(crate) fn open(path: &Path, max_bytes: u64) -> Result<ServerLog, String> {
        let file = open_append(path)
            .map_err(|e| format!("cannot open its log {}: {e}", path.display()))?;
        let written = file.metadata().map_or(0, |m| m.len());
        Ok(ServerLog(Arc::new(Mutex::new(Inner {
            path: Some(path.to_owned()),
            file: Some(file),
            budget: LogBudget::new(max_bytes, written),
        }))))
    }

    /// A log that keeps nothing (no log directory: `hrns exec --ephemeral`): the server's
    /// stderr is still read, so that it never blocks on a full pipe, and dropped.
    pub(crate) fn discard() -> ServerLog {
        ServerLog(Arc::new(Mutex::new(Inner {
            path: None,
            file: None,
            budget: LogBudget::new(u64::MAX, 0),
        })))
    }

    /// Writes one line (its line end added), rotating first when the budget says so. Errors
    /// are dropped: a log that cannot be written must not stop the server.
    pub(crate) fn line(&self, line: &str) {
        let mut inner = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let Some(path) = inner.path.clone() else {
            return;
        };
        let bytes = format!("{line}\n");
        match inner.budget.admit(bytes.len()) {
            LogWrite::Append => {}
            LogWrite::RotateFirst => {
                inner.file = None;
                let mut old = path.clone().into_os_string();
                old.push(".1");
                let _ = std::fs::rename(&path, old);
                inner.file = open_append(&path).ok();
            }
        }
        if let Some(file) = inner.file.as_mut() {
            let _ = file.write_all(bytes.as_bytes());
        }
    }
}

/// Opens `path` for appending, created owner-only; a file an older hrns left readable by
/// others is made owner-only too.
fn open_append(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let file = options.open(path)?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        Ok(file)
    }
    #[cfg(not(unix))]
    options.open(path)
}

/// Creates the log directory and its missing parents, owner-only; an existing one is made
/// owner-only too.
pub(crate) fn create_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flood of lines leaves the log and its one rotated copy each within the limit.
    #[test]
    fn a_flooded_log_stays_within_twice_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.log");
        let log = ServerLog::open(&path, 10_000).unwrap();
        let line = "x".repeat(99);
        for _ in 0..10_000 {
            log.line(&line);
        }
        let size = |p: &Path| std::fs::metadata(p).unwrap().len();
        assert!(size(&path) <= 10_000, "{}", size(&path));
        assert!(size(&dir.path().join("s.log.1")) <= 10_000);
        assert!(size(&path) > 0);
    }

    #[cfg(unix)]
    fn mode(p: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    /// The log, its rotated copy and its directory are the owner's alone, also where an older
    /// hrns left them readable by others.
    #[cfg(unix)]
    #[test]
    fn logs_are_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("state/mcp-logs");
        create_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        let old = dir.join("old.log");
        std::fs::write(&old, "before\n").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        create_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        ServerLog::open(&old, 1000).unwrap().line("after");
        assert_eq!(mode(&old), 0o600);
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "before\nafter\n");
        let path = dir.join("s.log");
        let log = ServerLog::open(&path, 100).unwrap();
        assert_eq!(mode(&path), 0o600);
        for _ in 0..5 {
            log.line(&"x".repeat(40));
        }
        assert_eq!(mode(&dir.join("s.log.1")), 0o600);
        assert_eq!(mode(&path), 0o600);
    }
}
