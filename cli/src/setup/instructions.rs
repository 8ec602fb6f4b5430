//! Finding and reading the project instruction files (`AGENTS.md`); what they are and in which
//! order they apply is decided in [`hrns_core::instructions`].

use hrns_blocking::SafeReadError;
use hrns_core::file_refusal::{FileRefusal, SpecialKind};
use hrns_core::instructions::{self, InstructionFile, InstructionSettings, PRIMARY_NAME};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The instruction files found, and the problems met (reported, never fatal).
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub(crate) files: Vec<InstructionFile>,
    pub(crate) warnings: Vec<String>,
}

/// The nearest ancestor of `cwd` (itself included) holding `.git`, a directory or — in a
/// worktree or submodule — a file.
pub(crate) fn repository_root(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .find(|d| d.join(".git").symlink_metadata().is_ok())
        .map(Path::to_owned)
}

/// Finds the instruction files for `cwd`: `global_dir/AGENTS.md` first, then one per directory
/// from the repository root down to `cwd`. A file reached twice (through a link) is used once.
pub(crate) fn discover(
    cwd: &Path,
    global_dir: Option<&Path>,
    settings: &InstructionSettings,
) -> Found {
    let mut found = Found::default();
    let mut seen: Vec<PathBuf> = Vec::new();
    if let Some(dir) = global_dir {
        found.take(&dir.join(PRIMARY_NAME), settings, &mut seen);
    }
    let root = repository_root(cwd);
    let names = settings.names();
    for dir in instructions::directories(root.as_deref(), cwd) {
        for name in &names {
            let path = dir.join(name);
            if path.symlink_metadata().is_err() {
                continue;
            }
            if found.take(&path, settings, &mut seen) {
                break;
            }
        }
    }
    found
}

impl Found {
    /// Reads `path` if it is a file not seen before. Returns whether the name counts as taken
    /// in its directory (a file is, even when unreadable; a directory or broken link is not).
    fn take(
        &mut self,
        path: &Path,
        settings: &InstructionSettings,
        seen: &mut Vec<PathBuf>,
    ) -> bool {
        let shown = path.display().to_string();
        // Opened without blocking and only if a regular file: a FIFO or a device named
        // AGENTS.md is reported, never waited on or read without end.
        let (file, total) = match hrns_blocking::open_regular(path) {
            Ok(opened) => opened,
            Err(SafeReadError::Missing { .. }) => {
                if path.symlink_metadata().is_ok() {
                    self.warnings
                        .push(format!("{shown}: skipped, a link to nothing"));
                }
                return false;
            }
            // A directory of that name is not an instruction file; nothing to report.
            Err(SafeReadError::Refused {
                refusal: FileRefusal::NotRegular(SpecialKind::Directory),
                ..
            }) => return false,
            Err(
                e @ (SafeReadError::Refused { .. }
                | SafeReadError::NotText { .. }
                | SafeReadError::Io { .. }),
            ) => {
                self.warnings.push(e.skipped());
                return false;
            }
        };
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_owned());
        if seen.contains(&canonical) {
            return true;
        }
        seen.push(canonical);
        match read_head(file, total, settings.max_bytes) {
            Ok((bytes, total)) => {
                match instructions::decode(&shown, &bytes, total, settings.max_bytes) {
                    Ok((text, warning)) => {
                        self.warnings.extend(warning);
                        if !text.trim().is_empty() {
                            self.files.push(InstructionFile { path: shown, text });
                        }
                    }
                    Err(message) => self.warnings.push(message),
                }
            }
            Err(e) => self.warnings.push(format!("{shown}: skipped, {e}")),
        }
        true
    }
}

/// The first `max + 4` bytes of the file (enough to tell a cut character from a bad byte) and
/// its length, so a huge file is never read whole.
fn read_head(file: std::fs::File, total: u64, max: usize) -> std::io::Result<(Vec<u8>, u64)> {
    let mut bytes = Vec::new();
    file.take(max as u64 + 4).read_to_end(&mut bytes)?;
    let total = total.max(bytes.len() as u64);
    Ok((bytes, total))
}

#[cfg(test)]
mod tests;
