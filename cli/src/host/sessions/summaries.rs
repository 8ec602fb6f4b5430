//! What `hrns sessions` shows of each session, remembered between listings.
//!
//! A row needs the number of messages, which is only known by reading the whole file; a long
//! session is tens of megabytes, and the listing reads up to 50 of them. So each row is kept
//! in `session-summaries.json` beside the sessions directory, with how far into its file it was made: the next
//! listing reads only what was appended since (nothing, for a session that did not change).
//! A session file is only ever appended to; a file that is shorter than the summary says, or
//! whose bytes before that point changed (compared through a hash of the last ones), is read
//! again from its start. The file is a cache: it may be deleted at any time, an unreadable one
//! is ignored, and a version of hrns that does not know it leaves it alone.

use super::{Entry, SessionHeader, Summary, open_session};
use hrns_core::file_refusal::SESSION_CAP;
use hrns_core::session::Event;
use hrns_core::wire::Role;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The cache's name, beside the sessions directory (which holds only sessions).
const FILE: &str = "session-summaries.json";

/// Where the cache of the sessions in `dir` is kept.
fn cache_path(dir: &Path) -> PathBuf {
    dir.with_file_name(FILE)
}

/// The largest cache read back (50 rows of at most a few KB each fit many times).
const CAP: u64 = 4 << 20;

/// How many bytes before a summary's end are hashed to tell that the file is still the one
/// summarised.
const CHECKED: u64 = 256;

/// One remembered row, for the file's first `len` bytes (whole lines).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Kept {
    len: u64,
    /// FNV-1a of the `CHECKED` bytes before `len`.
    check: u64,
    messages: usize,
    first_user_message: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    /// By file name.
    sessions: BTreeMap<String, Kept>,
}

/// The rows of one listing: those remembered, and those made now (saved by
/// [`Summaries::save`]).
#[derive(Debug)]
pub(crate) struct Summaries {
    dir: PathBuf,
    known: BTreeMap<String, Kept>,
    made: BTreeMap<String, Kept>,
    changed: bool,
}

impl Summaries {
    /// The rows remembered in `dir` (none when there is no cache or it cannot be read).
    pub(crate) fn open(dir: &Path) -> Summaries {
        let known = read_cache(&cache_path(dir)).unwrap_or_default();
        Summaries {
            dir: dir.to_owned(),
            known,
            made: BTreeMap::new(),
            changed: false,
        }
    }

    /// The row of the session at `path`, reading only what was appended since it was last
    /// summarised. `None` when it is not a session file.
    pub(crate) fn summarize(&mut self, path: &Path) -> Option<Summary> {
        let name = path.file_name()?.to_string_lossy().into_owned();
        let known = self.known.get(&name);
        let (summary, kept) = summarize_from(path, known)?;
        self.changed |= known != Some(&kept);
        self.made.insert(name, kept);
        Some(summary)
    }

    /// Remembers the rows made by this listing (only them: a session no longer listed is
    /// forgotten). Written whole or not at all; a failure only costs the next listing time.
    pub(crate) fn save(self) {
        if !self.changed && self.made.len() == self.known.len() {
            return;
        }
        let cache = CacheFile {
            version: 1,
            sessions: self.made,
        };
        let Ok(bytes) = serde_json::to_vec(&cache) else {
            return;
        };
        let _ = crate::exec::write_private(&cache_path(&self.dir), &bytes);
    }
}

fn read_cache(path: &Path) -> Option<BTreeMap<String, Kept>> {
    let (file, len) = hrns_blocking::open_regular(path).ok()?;
    if len > CAP {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(CAP).read_to_end(&mut bytes).ok()?;
    let cache: CacheFile = serde_json::from_slice(&bytes).ok()?;
    (cache.version == 1).then_some(cache.sessions)
}

/// FNV-1a, 64 bits: a cheap, stable hash (not a defence against anyone: the cache only saves
/// time, and a session's owner can write its file anyway).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The hash of the `CHECKED` bytes of `file` before `end`.
fn check_before(file: &mut std::fs::File, end: u64) -> io::Result<u64> {
    let start = end.saturating_sub(CHECKED);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity(CHECKED as usize);
    file.by_ref().take(end - start).read_to_end(&mut bytes)?;
    if (bytes.len() as u64) < end - start {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(fnv1a(&bytes))
}

/// The row of `path`, read from its start.
pub(super) fn summarize_whole(path: &Path) -> Option<Summary> {
    summarize_from(path, None).map(|(summary, _)| summary)
}

/// The row of `path`, starting from `known` when it still describes the file's beginning;
/// with what to remember of it.
fn summarize_from(path: &Path, known: Option<&Kept>) -> Option<(Summary, Kept)> {
    let mut file = open_session(path).ok()?;
    let mut reader = BufReader::with_capacity(256 * 1024, file.by_ref());
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line).ok()?;
    let head = line.strip_suffix(b"\n").unwrap_or(&line);
    let header: SessionHeader = serde_json::from_slice(head).ok()?;
    let header_len = line.len() as u64;
    drop(reader);
    let inner = file.get_mut();
    // Where reading starts, and what is already counted before it.
    let (mut at, mut messages, mut first) = (header_len, 0, None);
    if let Some(k) = known {
        if k.len >= header_len && check_before(inner, k.len).ok() == Some(k.check) {
            (at, messages, first) = (k.len, k.messages, k.first_user_message.clone());
        }
    }
    inner.seek(SeekFrom::Start(at)).ok()?;
    // Read no further than `open_session` would have from the start.
    file.set_limit(SESSION_CAP.saturating_sub(at));
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    let message = memchr::memmem::Finder::new(br#""type":"message""#);
    let user = memchr::memmem::Finder::new(br#""role":"user""#);
    // The end of the last whole line read: what the next listing may skip.
    let mut whole = at;
    let mut torn = 0;
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let complete = line.ends_with(b"\n");
                if complete {
                    whole += n as u64;
                }
                if message.find(&line).is_none() {
                    continue;
                }
                // A torn last line counts in this listing (as every line that holds a
                // message does) but is not remembered: it may be completed.
                if complete {
                    messages += 1;
                } else {
                    torn += 1;
                }
                if first.is_none() && user.find(&line).is_some() {
                    first = first_user_message(&line);
                }
            }
        }
    }
    let mut inner = reader.into_inner().into_inner();
    let check = check_before(&mut inner, whole).ok()?;
    let kept = Kept {
        len: whole,
        check,
        messages,
        first_user_message: first.clone(),
    };
    let summary = Summary {
        header,
        path: path.to_owned(),
        first_user_message: first,
        messages: messages + torn,
    };
    Some((summary, kept))
}

/// The text of the user's message on `line`, if it is one (not the images a tool sent).
fn first_user_message(line: &[u8]) -> Option<String> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let Ok(Entry { event }) = serde_json::from_slice(line) else {
        return None;
    };
    if let Event::Message { message } = event {
        if message.role == Role::User && !hrns_core::session::is_tool_images(&message) {
            return Some(message.text());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const HEADER: &str = r#"{"hrns_session":1,"id":"abc","started":"2026-01-01T00:00:00Z","cwd":"/w","provider":"p","model":"m","agent":"Builder"}"#;

    fn message(role: &str, text: &str) -> String {
        format!(
            r#"{{"event":{{"type":"message","message":{{"role":"{role}","content":"{text}"}}}}}}"#
        )
    }

    fn session(dir: &Path, lines: &[String]) -> PathBuf {
        let path = dir.join("2026-01-01T00-00-00_abc.jsonl");
        let mut text = format!("{HEADER}\n");
        for l in lines {
            text.push_str(l);
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        path
    }

    fn append(path: &Path, text: &str) {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    fn listed(dir: &Path, path: &Path) -> (usize, Option<String>) {
        let mut summaries = Summaries::open(dir);
        let s = summaries.summarize(path).unwrap();
        summaries.save();
        (s.messages, s.first_user_message)
    }

    #[test]
    fn a_second_listing_reads_only_what_was_appended() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("sessions");
        std::fs::create_dir(&dir).unwrap();
        // The messages, then other events: more than the checked bytes after them.
        let mut lines = vec![message("user", "first task"), message("assistant", "done")];
        lines.extend(
            (0..10).map(|t| format!(r#"{{"event":{{"type":"turn_started","turn":{t}}}}}"#)),
        );
        let path = session(&dir, &lines);
        assert_eq!(listed(&dir, &path), (2, Some("first task".into())));
        assert!(cache_path(&dir).exists());
        // A change in place far before the end (which a session file never sees) shows that
        // the part already summarised is not read again...
        let text = std::fs::read_to_string(&path).unwrap();
        let changed = text.replacen(r#""type":"message""#, r#""type":"massage""#, 1);
        std::fs::write(&path, &changed).unwrap();
        assert_eq!(summarize_whole(&path).unwrap().messages, 1);
        assert_eq!(listed(&dir, &path).0, 2, "the kept part was read again");
        // ...while what is appended is counted on top of it.
        append(&path, &format!("{}\n", message("user", "more")));
        assert_eq!(listed(&dir, &path), (3, Some("first task".into())));
        // A change among the last bytes before the kept end is seen: read from the start.
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(
            &path,
            text.replace(r#""content":"more""#, r#""content":"mere""#),
        )
        .unwrap();
        assert_eq!(listed(&dir, &path).0, 2);
    }

    #[test]
    fn a_rewritten_file_is_read_again_from_its_start() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("sessions");
        std::fs::create_dir(&dir).unwrap();
        let path = session(&dir, &[message("user", "one"), message("assistant", "two")]);
        assert_eq!(listed(&dir, &path).0, 2);
        // Shorter than the kept end.
        let path = session(&dir, &[message("user", "other")]);
        assert_eq!(listed(&dir, &path), (1, Some("other".into())));
        // Longer, with other bytes before the kept end.
        let path = session(
            &dir,
            &[
                message("user", "third"),
                message("assistant", "a much longer answer than before"),
                message("user", "again"),
            ],
        );
        assert_eq!(listed(&dir, &path), (3, Some("third".into())));
    }

    #[test]
    fn a_torn_last_line_is_counted_but_not_kept() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("sessions");
        std::fs::create_dir(&dir).unwrap();
        let path = session(&dir, &[message("user", "task")]);
        let torn = message("assistant", "half");
        append(&path, &torn[..torn.len() / 2 + 10]);
        assert_eq!(listed(&dir, &path).0, 2, "as a full read counts it");
        assert_eq!(summarize_whole(&path).unwrap().messages, 2);
        // Completed by the writer: counted once.
        append(&path, &format!("{}\n", &torn[torn.len() / 2 + 10..]));
        assert_eq!(listed(&dir, &path).0, 2);
        append(&path, &format!("{}\n", message("user", "next")));
        assert_eq!(listed(&dir, &path).0, 3);
    }

    #[test]
    fn a_broken_cache_is_ignored_and_replaced() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("sessions");
        std::fs::create_dir(&dir).unwrap();
        let path = session(&dir, &[message("user", "task")]);
        for junk in [
            "",
            "{",
            "[1,2]",
            r#"{"version":7,"sessions":{}}"#,
            "\u{0}\u{1}",
        ] {
            std::fs::write(cache_path(&dir), junk).unwrap();
            assert_eq!(listed(&dir, &path), (1, Some("task".into())));
        }
        let kept: CacheFile =
            serde_json::from_slice(&std::fs::read(cache_path(&dir)).unwrap()).unwrap();
        assert_eq!(kept.version, 1);
        assert_eq!(kept.sessions.len(), 1);
    }

    #[test]
    fn the_cache_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("sessions");
        std::fs::create_dir(&dir).unwrap();
        let path = session(&dir, &[message("user", "a secret plan")]);
        listed(&dir, &path);
        let mode = std::fs::metadata(cache_path(&dir))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
