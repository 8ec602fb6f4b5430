//! A server's log file (`NAME.log`): its stderr and hrns's `[hrns]` lines about it, written
//! through one handle so that rotation ([`LogBudget`]) sees every line. Past the server's
//! `maxLogBytes` the file is moved to `NAME.log.1`, replacing the one before, and a fresh one
//! is started.

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
    path: PathBuf,
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
            path: path.to_owned(),
            file: Some(file),
            budget: LogBudget::new(max_bytes, written),
        }))))
    }

    /// Writes one line (its line end added), rotating first when the budget says so. Errors
    /// are dropped: a log that cannot be written must not stop the server.
    pub(crate) fn line(&self, line: &str) {
        let mut inner = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let bytes = format!("{line}\n");
        match inner.budget.admit(bytes.len()) {
            LogWrite::Append => {}
            LogWrite::RotateFirst => {
                inner.file = None;
                let mut old = inner.path.clone().into_os_string();
                old.push(".1");
                let _ = std::fs::rename(&inner.path, old);
                inner.file = open_append(&inner.path).ok();
            }
        }
        if let Some(file) = inner.file.as_mut() {
            let _ = file.write_all(bytes.as_bytes());
        }
    }
}

fn open_append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
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
}
