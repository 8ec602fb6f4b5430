//! The prompt history, kept across runs in `$XDG_STATE_HOME/hrns/history`.
//!
//! The file holds one entry per line, oldest first, with `\` written as `\\`, a newline as `\n`
//! and a carriage return as `\r`, so multi-line entries round-trip. Entries are appended as
//! they are sent (one `write` each, so concurrent sessions interleave whole lines) and the file
//! is rewritten with the newest [`HISTORY_LIMIT`] entries when it grows to twice that. A
//! missing or unreadable file is an empty history; lines that are not UTF-8 are skipped.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// How many entries are kept.
pub(crate) const HISTORY_LIMIT: usize = 1000;

/// Sent prompts, oldest first, optionally backed by a file.
#[derive(Debug, Clone, Default)]
pub(crate) struct History {
    entries: Vec<String>,
    path: Option<PathBuf>,
    /// Lines in the file, to know when to rewrite it.
    file_lines: usize,
}

impl History {
    /// A history that is not saved anywhere.
    pub(crate) fn in_memory() -> History {
        History::default()
    }

    /// The default file, `$XDG_STATE_HOME/hrns/history`; `None` without a home directory.
    pub(crate) fn default_path() -> Option<PathBuf> {
        crate::setup::paths::state_dir()
            .ok()
            .map(|d| d.join("history"))
    }

    /// Loads the history from `path` and appends to it from now on. Never fails: a missing or
    /// unreadable file gives an empty history (and a later [`History::add`] reports the error).
    pub(crate) fn load(path: PathBuf) -> History {
        let bytes = std::fs::read(&path).unwrap_or_default();
        let mut history = History {
            entries: Vec::new(),
            path: None,
            file_lines: 0,
        };
        for line in bytes.split(|&b| b == b'\n') {
            if line.is_empty() {
                continue;
            }
            history.file_lines += 1;
            if let Ok(line) = std::str::from_utf8(line) {
                history.remember(unescape(line.strip_suffix('\r').unwrap_or(line)));
            }
        }
        history.path = Some(path);
        history
    }

    /// The entries, oldest first.
    pub(crate) fn entries(&self) -> &[String] {
        &self.entries
    }

    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Adds a sent prompt, unless it is blank or the same as the last entry, and appends it to
    /// the file. The entry is kept in memory even when the file cannot be written; the error
    /// is returned for the caller to show once (it is never fatal). A secret typed into the
    /// prompt is kept as `[redacted]`, in memory and in the file, like everything hrns writes.
    pub(crate) fn add(&mut self, entry: &str) -> io::Result<()> {
        let entry = crate::host::redact::redact(entry).into_owned();
        if !self.remember(entry.clone()) {
            return Ok(());
        }
        let Some(path) = self.path.clone() else {
            return Ok(());
        };
        if self.file_lines + 1 >= 2 * HISTORY_LIMIT {
            self.rewrite(&path)
        } else {
            append(&path, &format!("{}\n", escape(&entry)))?;
            self.file_lines += 1;
            Ok(())
        }
    }

    /// Keeps `entry` in memory; returns whether it was new.
    fn remember(&mut self, entry: String) -> bool {
        if entry.trim().is_empty() || self.entries.last() == Some(&entry) {
            return false;
        }
        self.entries.push(entry);
        if self.entries.len() > HISTORY_LIMIT {
            let extra = self.entries.len() - HISTORY_LIMIT;
            self.entries.drain(..extra);
        }
        true
    }

    /// Replaces the file with the entries in memory (a temporary file renamed over it).
    fn rewrite(&mut self, path: &Path) -> io::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        crate::setup::paths::private_dir(dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        let mut text = String::new();
        for e in &self.entries {
            // Entries read from a file an older hrns wrote may hold a secret.
            text.push_str(&escape(&crate::host::redact::redact(e)));
            text.push('\n');
        }
        tmp.write_all(text.as_bytes())?;
        tmp.persist(path).map_err(|e| e.error)?;
        self.file_lines = self.entries.len();
        Ok(())
    }
}

/// Appends `text` to the file in one write, creating it (owner-only) and its directory.
fn append(path: &Path, text: &str) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        crate::setup::paths::private_dir(dir)?;
    }
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(text.as_bytes())
}

/// One entry as one line of the file.
fn escape(entry: &str) -> String {
    let mut out = String::with_capacity(entry.len());
    for c in entry.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

/// The entry of one line of the file; an unknown escape is kept as written.
fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_round_trips() {
        for s in [
            "plain",
            "two\nlines",
            "back\\slash\\n",
            "crlf\r\n",
            "\\",
            "é日本",
        ] {
            let e = escape(s);
            assert!(!e.contains('\n'));
            assert_eq!(unescape(&e), s);
        }
        assert_eq!(unescape("odd\\x end\\"), "odd\\x end\\");
    }

    #[test]
    fn file_round_trip_with_multi_line_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/hrns/history");
        let mut h = History::load(path.clone());
        assert!(h.entries().is_empty());
        h.add("first").unwrap();
        h.add("fn main() {\n    x\\n\n}").unwrap();
        h.add("fn main() {\n    x\\n\n}").unwrap(); // consecutive duplicate
        h.add("   ").unwrap(); // blank
        h.add("first").unwrap();
        let again = History::load(path.clone());
        assert_eq!(
            again.entries(),
            ["first", "fn main() {\n    x\\n\n}", "first"]
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 3);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn corrupt_or_missing_file_is_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history");
        std::fs::write(&path, b"good\n\xff\xfe bad\n\nlast\\\r\n").unwrap();
        let h = History::load(path);
        assert_eq!(h.entries(), ["good", "last\\"]);
        // A directory where the file should be: empty history, and adding reports an error.
        let mut h = History::load(dir.path().to_owned());
        assert!(h.entries().is_empty());
        assert!(h.add("x").is_err());
        assert_eq!(h.entries(), ["x"]);
    }

    #[test]
    fn capped_and_compacted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history");
        let mut h = History::load(path.clone());
        for i in 0..2 * HISTORY_LIMIT + 5 {
            h.add(&format!("entry {i}")).unwrap();
        }
        assert_eq!(h.len(), HISTORY_LIMIT);
        assert_eq!(
            h.entries().last().unwrap(),
            &format!("entry {}", 2 * HISTORY_LIMIT + 4)
        );
        let lines = std::fs::read_to_string(&path).unwrap().lines().count();
        assert!(lines < 2 * HISTORY_LIMIT, "{lines}");
        let again = History::load(path);
        assert_eq!(again.entries(), h.entries());
    }
}
