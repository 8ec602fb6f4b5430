//! Approvals of project files that run programs (`./.mcp.json`, `./.hrns/hooks.json`): whoever
//! wrote the repository chose those programs, so they run only after the user approved the
//! file with that exact content. Each kind has its own file in the state directory
//! (`mcp-approved.json`, `hooks-approved.json`, 0600 in a 0700 directory): a JSON object from
//! the project file's absolute path to the SHA-256 of the content approved. A changed file is
//! not approved.
//!
//! Only the hash is kept: a `.mcp.json` often carries tokens in its `env` or headers, and an
//! approval should not be a second copy of them. Approvals written by older versions held the
//! whole text; they still approve that text, and are rewritten as hashes on the next approval.

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
            .is_some_and(|kept| matches(kept, text))
    }

    /// Remembers `path` approved with `text` (replacing an earlier approval of it), owner-only.
    /// Only `text`'s hash is written; older entries that held whole texts are hashed too.
    pub(crate) fn save(self, path: &Path, text: &str) -> Result<(), CliError> {
        let target = self.path().ok_or_else(|| {
            CliError::usage("cannot find the state directory; set HOME or XDG_STATE_HOME")
        })?;
        let mut all = self.all();
        for kept in all.values_mut() {
            if !kept.starts_with(HASH_PREFIX) {
                *kept = hash(kept);
            }
        }
        all.insert(path.to_string_lossy().into_owned(), hash(text));
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

/// How a kept approval names its hash, so that an older entry (the whole text) is told apart.
const HASH_PREFIX: &str = "sha256:";

/// What an approval keeps of `text`: `sha256:` and the hash in lower-case hex.
fn hash(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    let mut out = String::with_capacity(HASH_PREFIX.len() + 64);
    out.push_str(HASH_PREFIX);
    for byte in digest.as_ref() {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Whether a kept approval approves `text`: its hash, or (written by an older version) the
/// very text.
fn matches(kept: &str, text: &str) -> bool {
    match kept.strip_prefix(HASH_PREFIX) {
        Some(_) => kept == hash(text),
        None => kept == text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_approval_keeps_a_hash_that_matches_only_the_same_text() {
        let kept = hash(r#"{"env": {"TOKEN": "s3cr3t"}}"#);
        assert!(kept.starts_with(HASH_PREFIX));
        assert_eq!(kept.len(), HASH_PREFIX.len() + 64);
        assert!(!kept.contains("s3cr3t"));
        assert!(matches(&kept, r#"{"env": {"TOKEN": "s3cr3t"}}"#));
        assert!(!matches(&kept, r#"{"env": {"TOKEN": "s3cr3u"}}"#));
        assert!(!matches(&kept, ""));
        // The known SHA-256 of the empty string: the hash is the standard one.
        assert_eq!(
            hash(""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn an_older_approval_of_the_whole_text_still_approves_that_text_only() {
        assert!(matches("{}", "{}"));
        assert!(!matches("{}", "{ }"));
        // A text that merely looks like a hash is compared as a hash, never as text.
        let fake = format!("{HASH_PREFIX}{}", "0".repeat(64));
        assert!(!matches(&fake, &fake));
    }
}
