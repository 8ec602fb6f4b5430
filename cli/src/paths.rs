//! Where hrns keeps its files, following the XDG base directories on every platform.

use etcetera::BaseStrategy;
use std::path::PathBuf;

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
