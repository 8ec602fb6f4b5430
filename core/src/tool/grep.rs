//! The pure parts of `grep`: which files count, and the text the model reads.
//!
//! The driver walks the files (honouring `.gitignore`) and searches each one with ripgrep's
//! libraries; it hands every matching and context line to [`GrepResults`] and gets back the
//! result: `path:line: text` for matches, `path-line- text` for context lines, `--` between
//! groups that are not adjacent, capped at [`GREP_MAX_MATCHES`] matches with a count of the rest.

use super::ToolOutput;
use super::builtin::GrepArgs;
use super::files::{push_unread, unread_line};
use super::glob::Glob;
use super::path::{display_path, slash_path};
use crate::file_refusal::FileRefusal;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Matching lines `grep` returns at most; further matches are counted.
pub const GREP_MAX_MATCHES: usize = 200;
/// Characters of one line `grep` shows; the rest of a longer line is cut.
pub const GREP_MAX_LINE_CHARS: usize = 300;
/// The most context lines before and after a match `grep` shows.
pub const GREP_MAX_CONTEXT: usize = 10;

/// Whether a line is a match or context around one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// The line matches the pattern.
    Match,
    /// A line before or after a match.
    Context,
}

/// The results of one `grep` call as the search finds them.
#[derive(Debug, Clone)]
pub struct GrepResults {
    root: PathBuf,
    dir: PathBuf,
    glob: Option<Glob>,
    out: String,
    with_context: bool,
    shown: usize,
    more: usize,
    binary: usize,
    last: Option<(String, u64)>,
    unread: Vec<String>,
}

impl GrepResults {
    /// Empty results for a search under `dir` (as resolved from the model's `path`) in the
    /// workspace `root`, or the refusal of an invalid `glob`.
    pub fn new(root: &Path, dir: &Path, args: &GrepArgs) -> Result<GrepResults, ToolOutput> {
        let glob = args.glob.as_deref().map(Glob::new).transpose()?;
        Ok(GrepResults {
            root: root.to_path_buf(),
            dir: dir.to_path_buf(),
            glob,
            out: String::new(),
            with_context: args.context_lines() > 0,
            shown: 0,
            more: 0,
            binary: 0,
            last: None,
            unread: Vec::new(),
        })
    }

    /// Whether the file at `path` (found below the searched directory, or the searched file
    /// itself) is searched: its path relative to the directory matches the glob. A glob
    /// without a `/` also matches the file name alone, so `*.rs` finds Rust files anywhere.
    pub fn wants(&self, path: &Path) -> bool {
        let Some(glob) = &self.glob else {
            return true;
        };
        let relative = path.strip_prefix(&self.dir).unwrap_or(path);
        let relative = slash_path(relative);
        let name = relative.rsplit('/').next().unwrap_or(&relative);
        glob.matches(&relative) || glob.matches(name)
    }

    /// Adds a line of the file at `path`; `number` counts from 1 and `line` may end in a line
    /// break. Returns false once the cap is reached and only counting goes on.
    pub fn add(&mut self, path: &Path, number: u64, line: &[u8], kind: LineKind) -> bool {
        if self.shown >= GREP_MAX_MATCHES {
            if kind == LineKind::Match {
                self.more += 1;
            }
            return false;
        }
        let shown = display_path(&self.root, path);
        let adjacent = self
            .last
            .as_ref()
            .is_some_and(|(p, n)| *p == shown && n + 1 == number);
        if self.with_context && self.last.is_some() && !adjacent {
            self.out.push_str("--\n");
        }
        let sep = match kind {
            LineKind::Match => ':',
            LineKind::Context => '-',
        };
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches(['\n', '\r']);
        let _ = write!(self.out, "{shown}{sep}{number}{sep} ");
        push_capped(&mut self.out, text);
        self.out.push('\n');
        if kind == LineKind::Match {
            self.shown += 1;
        }
        self.last = Some((shown, number));
        true
    }

    /// Notes a file left unsearched because it looks binary (it holds a NUL byte).
    pub fn skip_binary(&mut self) {
        self.binary += 1;
    }

    /// Notes an ignore file (`.gitignore`, `.ignore`) at `path` the walk did not read, and
    /// why; its rules were not applied. The model is told, so it can mention it.
    pub fn unread_ignore_file(&mut self, path: &Path, refusal: &FileRefusal) {
        self.unread
            .push(unread_line(&display_path(&self.root, path), refusal));
    }

    /// The result for the model.
    pub fn finish(self) -> ToolOutput {
        let mut out = self.out;
        if self.shown == 0 {
            out.push_str("no matches");
        }
        if self.more > 0 {
            let _ = write!(
                out,
                "… and {} more matching lines (only the first {GREP_MAX_MATCHES} are shown; \
                 narrow the pattern, path or glob)",
                self.more
            );
        }
        if self.binary > 0 {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            let _ = write!(out, "({} binary files skipped)", self.binary);
        }
        push_unread(&mut out, &self.unread);
        ToolOutput::ok(out.trim_end().to_owned() + "\n")
    }
}

/// Appends `text`, cut to [`GREP_MAX_LINE_CHARS`] characters with a note of the rest.
fn push_capped(out: &mut String, text: &str) {
    match text.char_indices().nth(GREP_MAX_LINE_CHARS) {
        None => out.push_str(text),
        Some((cut, _)) => {
            out.push_str(&text[..cut]);
            let rest = text[cut..].chars().count();
            let _ = write!(out, " … ({rest} more characters)");
        }
    }
}

/// The refusal of a pattern the regex engine rejects, with its message.
pub fn invalid_pattern(pattern: &str, message: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "invalid regular expression {pattern:?}: {message}\nThe pattern is a Rust regex: escape \
         special characters such as ( [ . * + ? with a backslash to match them literally."
    ))
}

#[cfg(test)]
mod tests;
