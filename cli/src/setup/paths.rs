//! Where hrns keeps its files, following the XDG base directories on every platform.

use etcetera::BaseStrategy;
use std::fs::{DirBuilder, File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The XDG directories, or an error saying that no home directory could be found.
fn xdg() -> Result<etcetera::base_strategy::Xdg, String> {
    etcetera::base_strategy::Xdg::new()
        .map_err(|e| format!("cannot find your home directory ({e}); set HOME or XDG_CONFIG_HOME"))
}

/// `$XDG_CONFIG_HOME/hrns/config.json` (default `~/.config/hrns/config.json`).
pub(crate) fn config_file() -> Result<PathBuf, String> {
    Ok(xdg()?.config_dir().join("hrns").join("config.json"))
}

/// `$XDG_CONFIG_HOME/hrns` (default `~/.config/hrns`), where the global `AGENTS.md` lives.
pub(crate) fn config_dir() -> Result<PathBuf, String> {
    Ok(xdg()?.config_dir().join("hrns"))
}

/// `$XDG_STATE_HOME/hrns` (default `~/.local/state/hrns`).
pub(crate) fn state_dir() -> Result<PathBuf, String> {
    let x = xdg()?;
    Ok(x.state_dir()
        .unwrap_or_else(|| x.home_dir().join(".local/state"))
        .join("hrns"))
}

/// The home directory.
pub(crate) fn home() -> Option<PathBuf> {
    etcetera::home_dir().ok()
}

/// Creates `dir` and its missing parents owner-only (0700), and makes `dir` itself 0700 if it
/// already existed (a state directory made by an older hrns with 0755). Sessions, history and
/// records hold whole conversations: nobody else on the machine should read them.
pub(crate) fn private_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::set_permissions(dir, Permissions::from_mode(0o700))?;
    // The hrns state directory above it too, when `dir` is inside it.
    if let Ok(state) = state_dir() {
        if dir != state && dir.starts_with(&state) {
            std::fs::set_permissions(&state, Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}

/// Open options that create files owner-only (0600).
pub(crate) fn private_file() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(0o600);
    options
}

/// Creates or truncates `path` as an owner-only (0600) file; an existing file's mode is
/// tightened too (`create` keeps the mode of a file that exists).
pub(crate) fn create_private(path: &Path) -> io::Result<File> {
    let file = private_file()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    file.set_permissions(Permissions::from_mode(0o600))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn private_dirs_and_files_are_owner_only() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.path().join("a")), 0o700);
        std::fs::set_permissions(&dir, Permissions::from_mode(0o755)).unwrap();
        private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700, "an existing directory is tightened");
        let file = dir.join("f");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, Permissions::from_mode(0o644)).unwrap();
        create_private(&file).unwrap();
        assert_eq!(mode(&file), 0o600, "an existing file is tightened");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "", "and truncated");
    }
}
