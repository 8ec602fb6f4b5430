//! Paths the file tools leave alone whatever the path is called: hrns's own files, and git's.
//!
//! - hrns's config and state directories hold the provider keys, the approvals of MCP
//!   servers and every saved conversation. A model that reads them can carry the keys out;
//!   one that writes them can loosen the sandbox of the next run (`"sandbox":
//!   "danger-full-access"`). The file tools neither read nor write below them, and
//!   `@`-mentions do not attach them, wherever the workspace is (a workspace at `$HOME`
//!   contains them).
//! - A `.git` directory is code in waiting: git runs its hooks and obeys its config
//!   (`core.fsmonitor`, `core.pager`) as the user at the next `git status` or `git commit`,
//!   outside any sandbox. The file tools do not write inside one (reading is fine) unless
//!   the user allows it with `"sandboxWritableGit": true`.
//!
//! The decision is here and lexical; the driver hands in real paths (symbolic links
//! resolved) and, for git, the directories git really uses ([`gitdir_of`] reads a `.git`
//! file's pointer, as in worktrees and submodules).

use super::ToolOutput;
use std::path::{Component, Path, PathBuf};

/// Whether the file tools may write inside git directories (`sandboxWritableGit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GitWrites {
    /// Refused: a hook or a config value written there runs outside the sandbox (the default).
    #[default]
    Refused,
    /// Allowed (`"sandboxWritableGit": true`), so that the model can commit.
    Allowed,
}

/// What a tool does with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileAccess {
    /// Reads or lists it (`read_file`, `list_files`, `grep`, an `@`-mention).
    Read,
    /// Creates, replaces or edits it (`write_file`, `edit_file`).
    Write,
}

/// Why a path is out of the tools' reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Protected {
    /// It is below hrns's own config or state directory.
    HrnsFiles,
    /// It is inside a git directory, and git writes are refused.
    GitDir,
}

impl Protected {
    /// The result a file tool returns for `shown` (the path as the model wrote it).
    pub fn refusal(&self, tool: &str, shown: &str) -> ToolOutput {
        ToolOutput::error(format!("{tool}: refused {shown}: {}", self.reason()))
    }

    /// Why, as a clause for the model and the user.
    pub fn reason(&self) -> &'static str {
        match self {
            Protected::HrnsFiles => {
                "it is part of hrns's own configuration or state (keys, sessions), which the \
                 tools do not read or change and hrns never sends to the model"
            }
            Protected::GitDir => {
                "it is inside a git directory (.git), which the tools do not change: git runs \
                 its hooks and obeys its config as the user, outside the sandbox. Change the \
                 working tree instead; the user can allow this with \"sandboxWritableGit\": \
                 true in the hrns config"
            }
        }
    }
}

/// The paths the file tools leave alone: hrns's own directories (neither read nor written)
/// and git directories (not written unless [`GitWrites::Allowed`]).
///
/// The default protects every `.git` from writes and nothing else (a library user has no
/// hrns directories).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProtectedPaths {
    hrns: Vec<PathBuf>,
    git_dirs: Vec<PathBuf>,
    git: GitWrites,
}

impl ProtectedPaths {
    /// Protects `hrns` (hrns's config and state directories, or single files such as a
    /// config given with `--config`) from every access, and `git_dirs` (directories git uses
    /// that are not named `.git`: a worktree's or submodule's git directory, a repository's
    /// common directory) plus every path with a `.git` component from writes, unless `git`
    /// allows them. Paths must be absolute and real (links resolved); relative ones are
    /// dropped, as they mean no one place.
    pub fn new(hrns: Vec<PathBuf>, git_dirs: Vec<PathBuf>, git: GitWrites) -> Self {
        let absolute = |paths: Vec<PathBuf>| -> Vec<PathBuf> {
            paths
                .into_iter()
                .filter(|p| p.is_absolute())
                .map(|p| super::path::normalize_lexically(&p))
                .collect()
        };
        ProtectedPaths {
            hrns: absolute(hrns),
            git_dirs: absolute(git_dirs),
            git,
        }
    }

    /// hrns's own directories and files.
    pub fn hrns_paths(&self) -> &[PathBuf] {
        &self.hrns
    }

    /// The git directories not named `.git` that are protected from writes.
    pub fn git_dirs(&self) -> &[PathBuf] {
        &self.git_dirs
    }

    /// Whether git directories may be written.
    pub fn git_writes(&self) -> GitWrites {
        self.git
    }

    /// Whether a tool may `access` the real path `real` (absolute, links resolved): below
    /// hrns's directories never; inside a git directory (a `.git` component in any letter
    /// case, for case-insensitive file systems, or below one of the git directories) not for
    /// writing unless allowed.
    pub fn check(&self, access: FileAccess, real: &Path) -> Result<(), Protected> {
        let real = super::path::normalize_lexically(real);
        if self.hrns.iter().any(|p| real.starts_with(p)) {
            return Err(Protected::HrnsFiles);
        }
        match (access, self.git) {
            (FileAccess::Read, _) | (FileAccess::Write, GitWrites::Allowed) => Ok(()),
            (FileAccess::Write, GitWrites::Refused) => {
                let named_git = real
                    .components()
                    .any(|c| matches!(c, Component::Normal(n) if n.eq_ignore_ascii_case(".git")));
                if named_git || self.git_dirs.iter().any(|d| real.starts_with(d)) {
                    Err(Protected::GitDir)
                } else {
                    Ok(())
                }
            }
        }
    }

    /// hrns's directories below `root` (real), for a directory walk to skip.
    pub fn hrns_below(&self, root: &Path) -> Vec<&Path> {
        let root = super::path::normalize_lexically(root);
        self.hrns
            .iter()
            .filter(|p| p.starts_with(&root))
            .map(PathBuf::as_path)
            .collect()
    }
}

/// The git directory a `.git` file points to (`gitdir: ../.git/worktrees/w`, as worktrees
/// and submodules have it), as written: relative paths are relative to the directory of the
/// `.git` file. `None` for text that is not such a pointer.
pub fn gitdir_of(text: &str) -> Option<&str> {
    let line = text.lines().next()?;
    let dir = line.strip_prefix("gitdir:")?.trim();
    (!dir.is_empty()).then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(git: GitWrites) -> ProtectedPaths {
        ProtectedPaths::new(
            vec![
                "/home/u/.config/hrns".into(),
                "/home/u/.local/state/hrns".into(),
                "relative/ignored".into(),
            ],
            vec!["/src/main/.git/worktrees/w".into(), "/src/bare.git".into()],
            git,
        )
    }

    #[test]
    fn hrns_files_are_refused_for_reading_and_writing() {
        let p = paths(GitWrites::Allowed);
        for path in [
            "/home/u/.config/hrns",
            "/home/u/.config/hrns/config.json",
            "/home/u/.config/hrns/../hrns/mcp-approved.json",
            "/home/u/.local/state/hrns/sessions/a.jsonl",
        ] {
            for access in [FileAccess::Read, FileAccess::Write] {
                assert_eq!(
                    p.check(access, Path::new(path)),
                    Err(Protected::HrnsFiles),
                    "{path} {access:?}"
                );
            }
        }
        for path in [
            "/home/u/.config/hrns2/x",
            "/home/u/.config",
            "/home/u/notes.md",
            "/relative/ignored",
        ] {
            assert_eq!(p.check(FileAccess::Read, Path::new(path)), Ok(()), "{path}");
            assert_eq!(
                p.check(FileAccess::Write, Path::new(path)),
                Ok(()),
                "{path}"
            );
        }
        assert_eq!(p.hrns_paths().len(), 2, "the relative path is dropped");
    }

    #[test]
    fn git_directories_are_refused_for_writing_only() {
        let p = paths(GitWrites::Refused);
        for path in [
            "/w/.git/hooks/pre-commit",
            "/w/.git/config",
            "/w/.git",
            "/w/sub/module/.git/info/exclude",
            "/w/.GIT/hooks/pre-commit",
            "/src/main/.git/worktrees/w/HEAD",
            "/src/bare.git/hooks/post-checkout",
        ] {
            assert_eq!(
                p.check(FileAccess::Write, Path::new(path)),
                Err(Protected::GitDir),
                "{path}"
            );
            assert_eq!(p.check(FileAccess::Read, Path::new(path)), Ok(()), "{path}");
        }
        for path in [
            "/w/.gitignore",
            "/w/.github/workflows/ci.yml",
            "/w/src/git/x",
            "/w/my.git",
            "/src/bare.gitx/hooks",
        ] {
            assert_eq!(
                p.check(FileAccess::Write, Path::new(path)),
                Ok(()),
                "{path}"
            );
        }
        let allowed = paths(GitWrites::Allowed);
        assert_eq!(
            allowed.check(FileAccess::Write, Path::new("/w/.git/hooks/pre-commit")),
            Ok(())
        );
        assert_eq!(
            ProtectedPaths::default().check(FileAccess::Write, Path::new("/w/.git/config")),
            Err(Protected::GitDir),
            "the default protects .git"
        );
    }

    #[test]
    fn refusals_say_why_and_how_to_allow() {
        let git = Protected::GitDir.refusal("write_file", ".git/hooks/pre-commit");
        assert!(git.is_error);
        assert!(
            git.content
                .starts_with("write_file: refused .git/hooks/pre-commit: it is inside a git"),
            "{}",
            git.content
        );
        assert!(git.content.contains("\"sandboxWritableGit\": true"));
        let hrns = Protected::HrnsFiles.refusal("read_file", "x");
        assert!(hrns.content.contains("hrns's own configuration or state"));
    }

    #[test]
    fn walks_skip_hrns_directories_below_their_root() {
        let p = paths(GitWrites::Refused);
        assert_eq!(
            p.hrns_below(Path::new("/home/u")),
            [
                Path::new("/home/u/.config/hrns"),
                Path::new("/home/u/.local/state/hrns")
            ]
        );
        assert!(p.hrns_below(Path::new("/w")).is_empty());
    }

    #[test]
    fn gitdir_pointers() {
        assert_eq!(
            gitdir_of("gitdir: /src/main/.git/worktrees/w\n"),
            Some("/src/main/.git/worktrees/w")
        );
        assert_eq!(
            gitdir_of("gitdir: ../.git/modules/m"),
            Some("../.git/modules/m")
        );
        for text in [
            "",
            "gitdir:",
            "gitdir:   \n",
            "ref: refs/heads/main",
            "\ngitdir: x",
        ] {
            assert_eq!(gitdir_of(text), None, "{text:?}");
        }
    }
}
