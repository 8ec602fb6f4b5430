//! Project instructions: `AGENTS.md` files, which ones apply, and how large they may be.
//!
//! Files are loaded in this order: the user's global one (`$XDG_CONFIG_HOME/hrns/AGENTS.md`),
//! then one per directory from the repository root (the nearest ancestor holding `.git`) down to
//! the working directory. A more specific file comes later, so it has the last word. In each
//! directory the first existing name of [`InstructionSettings::names`] is taken: `AGENTS.md`,
//! then the configured fallbacks (`CLAUDE.md`, …) for projects that have only those.
//!
//! Everything here is pure: the CLI walks the directories, reads the files and hands over the
//! text. [`crate::prompt`] puts the files into the system prompt, each under its path.

use crate::config::Config;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The name looked for first in every directory.
pub const PRIMARY_NAME: &str = "AGENTS.md";

/// The largest part of one file used, unless the config says otherwise (32 KiB).
pub const DEFAULT_MAX_BYTES: usize = 32 * 1024;

/// The key of the config file that holds [`InstructionSettings`].
pub const CONFIG_KEY: &str = "instructions";

/// One instruction file as it goes into the system prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    /// The path shown to the model and the user.
    pub path: String,
    /// The text (already capped).
    pub text: String,
}

/// How instruction files are found, from the config's `instructions` object:
///
/// ```json
/// { "instructions": { "fallbackNames": ["CLAUDE.md"], "maxBytes": 32768 } }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstructionSettings {
    /// Names tried, in order, in a directory without an `AGENTS.md`.
    #[serde(default)]
    pub fallback_names: Vec<String>,
    /// The largest part of one file used; the rest is left out with a warning.
    #[serde(default = "default_max")]
    pub max_bytes: usize,
}

fn default_max() -> usize {
    DEFAULT_MAX_BYTES
}

impl Default for InstructionSettings {
    fn default() -> Self {
        InstructionSettings {
            fallback_names: Vec::new(),
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

impl InstructionSettings {
    /// The settings in `config`; the defaults when it has none, and an error saying what to fix
    /// when its `instructions` object is malformed.
    pub fn from_config(config: &Config) -> Result<InstructionSettings, String> {
        match config.extra.get(CONFIG_KEY) {
            None => Ok(InstructionSettings::default()),
            Some(value) => InstructionSettings::deserialize(value).map_err(|e| {
                format!(
                    "the config's `{CONFIG_KEY}` is not valid ({e}); expected {{\"fallbackNames\": [\"CLAUDE.md\"], \"maxBytes\": 32768}}"
                )
            }),
        }
    }

    /// The names to try in each directory, in order: `AGENTS.md`, then the fallbacks. Names
    /// holding a path separator or naming `.`/`..` are left out: a name is a file in the
    /// directory, never a way out of it.
    pub fn names(&self) -> Vec<&str> {
        let mut names = vec![PRIMARY_NAME];
        for n in &self.fallback_names {
            let n = n.as_str();
            let plain = !n.is_empty() && n != "." && n != ".." && !n.contains(['/', '\\']);
            if plain && !names.contains(&n) {
                names.push(n);
            }
        }
        names
    }
}

/// The directories to look in, outermost first: from `root` down to `cwd`. When `cwd` is not
/// under `root` (or there is no root), only `cwd`.
pub fn directories(root: Option<&Path>, cwd: &Path) -> Vec<PathBuf> {
    let Some(rest) = root.and_then(|r| cwd.strip_prefix(r).ok().map(|rest| (r, rest))) else {
        return vec![cwd.to_owned()];
    };
    let (root, rest) = rest;
    let mut dirs = vec![root.to_owned()];
    let mut at = root.to_owned();
    for part in rest.components() {
        at.push(part);
        dirs.push(at.clone());
    }
    dirs
}

/// The text of an instruction file named `path`, from its first `bytes` (the caller may read
/// only a little more than `max` of a larger file) and its full length `total`: cut to at most
/// `max` bytes on a character boundary, with a warning naming `path` when something was left
/// out. Fails with a message naming `path` when the bytes are not UTF-8 text.
pub fn decode(
    path: &str,
    bytes: &[u8],
    total: u64,
    max: usize,
) -> Result<(String, Option<String>), String> {
    let head = &bytes[..bytes.len().min(max)];
    let cut = head.len() < bytes.len() || (head.len() as u64) < total;
    let text = match std::str::from_utf8(head) {
        Ok(text) => text,
        // A character cut in two at the cap is not an error; an invalid byte is.
        Err(e) if cut && e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return Err(format!("{path}: skipped, not UTF-8 text")),
    };
    let warning = cut.then(|| {
        format!(
            "{path}: larger than {max} bytes; only the first {} of {total} bytes are used (raise instructions.maxBytes in the config, or shorten the file)",
            text.len()
        )
    });
    Ok((text.to_owned(), warning))
}

/// What `/init` asks the model to do.
pub const INIT_PROMPT: &str = "Look around this project and write an AGENTS.md file at its root \
for coding agents that will work on it. Read the README, the build files and a few source files \
first. Keep it short and specific to this project: what it is, how the code is laid out, how to \
build, test and lint it (the exact commands), the conventions the code follows, and anything a \
newcomer would trip over. If an AGENTS.md already exists, improve it instead of starting over. \
Do not invent commands you have not seen in the project.";

#[cfg(test)]
mod tests;
