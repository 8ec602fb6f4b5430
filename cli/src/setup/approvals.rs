//! Approvals of project files that run programs (`./.mcp.json`, `./.hrns/hooks.json`): whoever
//! wrote the repository chose those programs, so they run only after the user approved the
//! file with that exact content. Each kind has its own file in the state directory
//! (`mcp-approved.json`, `hooks-approved.json`, 0600 in a 0700 directory): a JSON object from
//! the project file's absolute path to the content approved. A changed file is not approved.

use crate::setup::CliError;
use crate::setup::paths;
use hrns_core::file_refusal::MCP_APPROVALS_CAP;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One kind of approval, kept in its own file in the state directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Approvals {
    /// The file's name in the state directory.
    file: &'static str,
}

/// `./.mcp.json`'s approvals.
pub(crate) const MCP: Approvals = Approvals {
    file: "mcp-approved.json",
};

/// `./.hrns/hooks.json`'s approvals.
pub(crate) const HOOKS: Approvals = Approvals {
    file: "hooks-approved.json",
};

impl Approvals {
    /// Where these approvals are kept; `None` without a state directory.
    fn path(self) -> Option<PathBuf> {
        paths::state_dir().ok().map(|d| d.join(self.file))
    }

    /// Every approval: path to approved content. A missing, unreadable or corrupt file
    /// approves nothing (the project file is then reported as not approved, never run).
    fn all(self) -> BTreeMap<String, String> {
        self.path()
            .and_then(|p| hrns_blocking::read_text(&p, MCP_APPROVALS_CAP).ok())
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    /// Whether `path` was approved holding exactly `text`.
    pub(crate) fn approves(self, path: &Path, text: &str) -> bool {
        self.all()
            .get(&path.to_string_lossy().into_owned())
            .is_some_and(|t| t == text)
    }

    /// Remembers `path` approved with `text` (replacing an earlier approval of it), owner-only.
    pub(crate) fn save(self, path: &Path, text: String) -> Result<(), CliError> {
        let target = self.path().ok_or_else(|| {
            CliError::usage("cannot find the state directory; set HOME or XDG_STATE_HOME")
        })?;
        let mut all = self.all();
        all.insert(path.to_string_lossy().into_owned(), text);
        let fail =
            |e: std::io::Error| CliError::failure(format!("cannot save {}: {e}", target.display()));
        if let Some(dir) = target.parent() {
            paths::private_dir(dir).map_err(fail)?;
        }
        let mut out = paths::create_private(&target).map_err(fail)?;
        let body = serde_json::to_string_pretty(&all).unwrap_or_default();
        out.write_all(body.as_bytes()).map_err(fail)?;
        Ok(())
    }
}
