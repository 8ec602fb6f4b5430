//! The facts of the sandbox's path and workspace rules, gathered from the file system: where
//! hrns's own files and the workspace's git directories really are, and whether the workspace
//! is `$HOME` or `/`. hrns-core decides what they mean ([`ProtectedPaths`],
//! [`WorkspaceCheck`]).

use hrns_core::config::Config;
use hrns_core::sandbox::{ModeOrigin, SafetySettings, SandboxMode, WorkspaceCheck};
use hrns_core::tool::protect::{GitWrites, ProtectedPaths, gitdir_of};
use std::path::{Path, PathBuf};

/// The paths the file tools and `@`-mentions leave alone for `workspace`: the config file in
/// use, hrns's config and state directories (read and write), and the git directories of
/// the repository the workspace is in (write, unless `git` allows it).
pub(crate) fn protected_paths(
    config_file: &Path,
    workspace: &Path,
    git: GitWrites,
) -> ProtectedPaths {
    let hrns = [
        Some(config_file.to_path_buf()),
        super::paths::config_dir().ok(),
        super::paths::state_dir().ok(),
    ]
    .into_iter()
    .flatten()
    .map(|p| real_path(&p))
    .collect();
    ProtectedPaths::new(hrns, git_dirs(workspace), git)
}

/// `path` with its links resolved as far as it exists (the rest joined as written), so that
/// a directory not made yet is still recognised once the tools reach it through a link.
fn real_path(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut probe = path;
    loop {
        if let Ok(real) = probe.canonicalize() {
            return missing.iter().rev().fold(real, |p, name| p.join(name));
        }
        match (probe.file_name(), probe.parent()) {
            (Some(name), Some(parent)) => {
                missing.push(name.to_os_string());
                probe = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// The git directories of the repository `workspace` is in, found by walking up to the
/// first `.git`: a `.git` directory itself, or for a `.git` file (worktrees, submodules) the
/// directory it points to and that one's common directory. Paths named `.git` are protected
/// by their name already; these cover the ones that are not (`…/.git/worktrees/w`'s common
/// directory is, but `modules/m` or a `gitdir: /elsewhere/repo.git` are not).
fn git_dirs(workspace: &Path) -> Vec<PathBuf> {
    let Some(dot_git) = workspace
        .ancestors()
        .map(|dir| dir.join(".git"))
        .find(|p| p.symlink_metadata().is_ok())
    else {
        return Vec::new();
    };
    let mut dirs = vec![real_path(&dot_git)];
    let pointer = std::fs::read_to_string(&dot_git).ok();
    if let Some(gitdir) = pointer.as_deref().and_then(gitdir_of) {
        let base = dot_git.parent().unwrap_or(Path::new("/"));
        let gitdir = real_path(&base.join(gitdir));
        let common = std::fs::read_to_string(gitdir.join("commondir"))
            .ok()
            .map(|c| real_path(&gitdir.join(c.trim())));
        dirs.push(gitdir);
        dirs.extend(common);
    }
    dirs
}

/// The broad-workspace check of a run: `flag` is `--sandbox`, the config's `sandbox` the
/// other origin; `None` when the workspace is neither `$HOME` nor `/`.
pub(crate) fn workspace_check(
    flag: Option<SandboxMode>,
    settings: &SafetySettings,
    workspace: &Path,
) -> Option<WorkspaceCheck> {
    let (requested, origin) = match (flag, settings.sandbox) {
        (Some(mode), _) => (mode, ModeOrigin::Flag),
        (None, Some(mode)) => (mode, ModeOrigin::Config),
        (None, None) => (SandboxMode::default(), ModeOrigin::Default),
    };
    let home = super::paths::home().map(|h| real_path(&h));
    WorkspaceCheck::new(workspace, home.as_deref(), requested, origin)
}

/// [`workspace_check`] for a run set up from `config` (its settings read again; a bad key
/// was already reported when the sandbox was made).
pub(crate) fn workspace_check_of(
    flag: Option<SandboxMode>,
    config: &Config,
    workspace: &Path,
) -> Option<WorkspaceCheck> {
    let settings = SafetySettings::from_config(&config.extra, workspace).unwrap_or_default();
    workspace_check(flag, &settings, workspace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_dirs_of_a_repository_a_worktree_and_no_repository() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let main = root.join("main");
        std::fs::create_dir_all(main.join(".git/worktrees/w")).unwrap();
        std::fs::create_dir_all(main.join("src/deep")).unwrap();
        assert_eq!(git_dirs(&main.join("src/deep")), [main.join(".git")]);

        let wt = root.join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: ../main/.git/worktrees/w\n").unwrap();
        std::fs::write(main.join(".git/worktrees/w/commondir"), "../..\n").unwrap();
        assert_eq!(
            git_dirs(&wt),
            [
                wt.join(".git"),
                main.join(".git/worktrees/w"),
                main.join(".git")
            ]
        );
    }

    #[test]
    fn real_paths_resolve_the_part_that_exists() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("a")).unwrap();
        std::os::unix::fs::symlink(real.join("a"), real.join("link")).unwrap();
        assert_eq!(
            real_path(&real.join("link/not/yet")),
            real.join("a/not/yet")
        );
        assert_eq!(real_path(Path::new("relative/x")), Path::new("relative/x"));
    }
}
