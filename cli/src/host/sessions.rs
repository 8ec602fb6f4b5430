//! Saved sessions: every conversation appended, event by event, to a JSON Lines file under
//! `$XDG_STATE_HOME/hrns/sessions/`, so it can be listed, resumed and exported.
//!
//! A file is a header line, then one line per event (`{"event": …}`). The history of a session
//! is the sequence of its `message` events; a run that was killed mid-turn is repaired on load
//! the way cancellation repairs it. Each line is written with one `write` call and flushed, so
//! a crash loses at most the line being written, and a torn last line is skipped on load.
//!
//! One writer per session: the run that writes a session holds an exclusive advisory lock
//! (`flock`) on its file for as long as it runs. The kernel drops the lock when that process
//! ends, however it ends (`kill -9` included), so a lock is never stale. A second run that
//! wants to continue the session ([`claim`]) waits a little for the first one, then starts a
//! new session instead; the two never interleave their turns in one file.

use hrns_blocking::SafeReadError;
use hrns_core::checkpoint::timeline::Restore;
use hrns_core::file_refusal::{FileRefusal, SESSION_CAP};
use hrns_core::history;
use hrns_core::session::{CompactMethod, Event};
use hrns_core::wire::{Message, Role};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// The version of the session file format.
pub(crate) const SESSION_VERSION: u32 = 1;

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SessionHeader {
    /// Always [`SESSION_VERSION`].
    pub(crate) hrns_session: u32,
    /// The short id used to resume it.
    pub(crate) id: String,
    /// When it started (RFC 3339, UTC).
    pub(crate) started: String,
    /// The working directory.
    pub(crate) cwd: String,
    /// The provider's name.
    pub(crate) provider: String,
    /// The model.
    pub(crate) model: String,
    /// The agent.
    pub(crate) agent: String,
}

/// One line after the header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry {
    event: Event,
}

/// One line after the header, as written: borrows the event (a message can be large).
#[derive(Serialize)]
struct EntryRef<'a> {
    event: &'a Event,
}

/// A subagent's line: `{"child": {"parent_call_id", "agent", "event"}}`. A reader that does not
/// know it skips it (it has no `event` key at the top), so a child's messages never enter the
/// parent's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ChildLine {
    child: ChildRecord,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ChildRecord {
    parent_call_id: String,
    agent: String,
    event: Event,
}

/// An undo or redo: `{"restore": {…}}` (see [`Restore`]). A reader that does not know it
/// skips it, like a child's line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct RestoreLine {
    restore: Restore,
}

/// A rewind of the conversation: `{"rewind": {"turn": N}}`. From this line on, the history
/// is what it was just before turn N (counted as `hrns checkpoints` lists them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct RewindLine {
    rewind: Rewind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Rewind {
    turn: u64,
}

/// A line of the session file that is not an event: where it stands among the events, and
/// what it says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mark {
    /// The number of events read before it.
    pub(crate) at: usize,
    pub(crate) kind: MarkKind,
}

/// What a [`Mark`] records.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum MarkKind {
    /// An undo or redo of files.
    Restore(Restore),
    /// The conversation went back to just before this turn.
    Rewind(u64),
}

/// The conversation of one subagent, run by the parent's `task` call `parent_call_id`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChildTranscript {
    pub(crate) parent_call_id: String,
    pub(crate) agent: String,
    pub(crate) messages: Vec<Message>,
}

/// Appends a session's events to its file.
#[derive(Debug)]
pub(crate) struct SessionLog {
    file: File,
    path: PathBuf,
    id: String,
    origin: Origin,
}

/// Where a [`SessionLog`]'s file came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// Made by this run ([`SessionLog::create`]).
    Created,
    /// A saved session this run continues ([`SessionLog::append_to`]).
    Resumed,
}

impl SessionLog {
    /// Creates a new session file in `dir` (created if needed) and writes its header. The name
    /// is the start time and a short id; `create_new` keeps concurrent processes apart.
    pub(crate) fn create(dir: &Path, mut header: SessionHeader) -> io::Result<SessionLog> {
        crate::setup::paths::private_dir(dir)?;
        let now = SystemTime::now();
        let stamp = humantime::format_rfc3339_seconds(now).to_string();
        header.started = stamp.clone();
        let file_stamp = stamp.replace(':', "-").trim_end_matches('Z').to_owned();
        let mut seed = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0) as u64
            ^ (u64::from(std::process::id()) << 32);
        for _ in 0..16 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let id = format!("{:06x}", (seed >> 40) & 0xff_ffff);
            let path = dir.join(format!("{file_stamp}_{id}.jsonl"));
            match crate::setup::paths::private_file()
                .append(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => {
                    // Locked before the header is written: a run that finds this session
                    // (the header names its directory) always finds it locked while we run.
                    // A file system without locks (`ENOLCK`) leaves it unlocked.
                    let _ = try_lock(&file);
                    header.id = id.clone();
                    let mut log = SessionLog {
                        file,
                        path,
                        id,
                        origin: Origin::Created,
                    };
                    log.write_line(serde_json::to_string(&header).map_err(io::Error::other)?)?;
                    return Ok(log);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other("could not pick a free session file name"))
    }

    /// Continues a saved session, through the lock [`claim`] took on it.
    pub(crate) fn append_to(claimed: Claimed, id: &str) -> io::Result<SessionLog> {
        // A file saved by an older hrns may be 0644.
        claimed
            .file
            .set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        Ok(SessionLog {
            file: claimed.file,
            path: claimed.path,
            id: id.to_owned(),
            origin: Origin::Resumed,
        })
    }

    /// Closes the log of a conversation whose history is `history`: a session this run created
    /// that never got an answer (the provider failed on the first message, or nothing was
    /// asked) is deleted, so it does not crowd `hrns sessions` and `--continue`; returns the log
    /// when the file stays. `exec` and the TUI both close their logs this way.
    pub(crate) fn keep_if_answered(self, history: &[Message]) -> Option<SessionLog> {
        let answered = history.iter().any(|m| m.role == Role::Assistant);
        if self.origin == Origin::Created && !answered {
            let _ = std::fs::remove_file(&self.path);
            return None;
        }
        Some(self)
    }

    /// The session's id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The file (hooks read it as `transcript_path`).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends what an undo or redo did (so the next one, and `hrns checkpoints`, know it).
    pub(crate) fn record_restore(&mut self, restore: &Restore) -> io::Result<()> {
        line::write_redacted(
            &mut self.file,
            &RestoreLine {
                restore: restore.clone(),
            },
        )
    }

    /// Appends a rewind of the conversation to just before `turn`: a later load (and
    /// `--continue`) goes on from there.
    pub(crate) fn record_rewind(&mut self, turn: u64) -> io::Result<()> {
        let line = serde_json::to_string(&RewindLine {
            rewind: Rewind { turn },
        })
        .map_err(io::Error::other)?;
        self.write_line(line)
    }

    /// Appends one event and flushes it. Deltas ([`Event::is_delta`]) are not saved: the
    /// messages carry their text.
    pub(crate) fn record(&mut self, event: &Event) -> io::Result<()> {
        if event.is_delta() {
            return Ok(());
        }
        // A subagent's event keeps the file's line for children.
        if let Event::Child(child) = event {
            return self.record_child(child);
        }
        line::write_redacted(&mut self.file, &EntryRef { event })
    }

    /// Appends a subagent's event (its messages and how it ended; deltas are left out).
    pub(crate) fn record_child(&mut self, child: &hrns_core::task::ChildEvent) -> io::Result<()> {
        if child.event.is_delta() {
            return Ok(());
        }
        line::write_redacted(
            &mut self.file,
            &ChildLine {
                child: ChildRecord {
                    parent_call_id: child.parent_call_id.clone(),
                    agent: child.agent.clone(),
                    event: child.event.clone(),
                },
            },
        )
    }

    /// Appends `line` (one that cannot hold a secret: the header, a rewind) and its newline in
    /// one write. Events go through [`line::write_redacted`].
    fn write_line(&mut self, mut line: String) -> io::Result<()> {
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.flush()
    }
}

/// A saved session this run may append to: its file, opened for appending, under an exclusive
/// lock that lasts as long as the file stays open (see the module's documentation).
#[derive(Debug)]
pub(crate) struct Claimed {
    file: File,
    path: PathBuf,
    /// Set when the file system refused the lock (`ENOLCK` on some network file systems): the
    /// session is continued unlocked, and the caller says so.
    pub(crate) unlocked: Option<io::Error>,
}

impl Claimed {
    /// The session file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// What [`claim`] found.
#[derive(Debug)]
pub(crate) enum Claim {
    /// This run is now the session's only writer.
    Claimed(Claimed),
    /// Another hrns still writes the session after the wait.
    Busy,
    /// The run that held the session deleted it as it ended (it never got an answer).
    Removed,
}

/// How long a second run waits for the one writing a session: `HRNS_SESSION_WAIT` seconds,
/// else 10. `0` does not wait.
pub(crate) fn wait_for_writer() -> Result<Duration, String> {
    const DEFAULT: Duration = Duration::from_secs(10);
    match std::env::var("HRNS_SESSION_WAIT") {
        Err(_) => Ok(DEFAULT),
        Ok(v) => v
            .trim()
            .parse::<u64>()
            .map(Duration::from_secs)
            .map_err(|_| {
                format!(
                    "HRNS_SESSION_WAIT is `{v}`, not a number of seconds; waiting {} s",
                    DEFAULT.as_secs()
                )
            }),
    }
}

/// The short id in a session file's name (`…_1a2b3c.jsonl`), for messages written before the
/// file is read.
pub(crate) fn short_id(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    stem.rsplit('_').next().unwrap_or(&stem).to_owned()
}

/// How long a claim that does not wait for another hrns still waits: a session this process
/// just closed stays locked while a process it started at that moment has not yet reached
/// `exec` (its copy of the open file, taken at the fork, holds the lock until then), which
/// takes milliseconds. Long enough for that, short enough not to be felt as a wait.
pub(crate) const FORK_GRACE: Duration = Duration::from_millis(500);

/// Takes the session at `path` for this run: opens it for appending and locks it. When another
/// hrns holds it, calls `on_wait` once and retries until `wait` has passed; a process that dies
/// releases its lock, so only a live writer makes this wait. Errors are those of opening the
/// file.
pub(crate) fn claim(path: &Path, wait: Duration, on_wait: impl FnOnce()) -> io::Result<Claim> {
    let file = OpenOptions::new().append(true).open(path)?;
    let mut on_wait = Some(on_wait);
    let deadline = Instant::now() + wait;
    let unlocked = loop {
        match try_lock(&file) {
            Ok(()) => break None,
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                if Instant::now() >= deadline {
                    return Ok(Claim::Busy);
                }
                if let Some(f) = on_wait.take() {
                    f();
                }
                std::thread::sleep(Duration::from_millis(50).min(wait));
            }
            Err(e) => break Some(e.into()),
        }
    };
    // The writer we waited for may have deleted the file (a session that never got an
    // answer is not kept); the name would then lead nowhere.
    if std::os::unix::fs::MetadataExt::nlink(&file.metadata()?) == 0 {
        return Ok(Claim::Removed);
    }
    Ok(Claim::Claimed(Claimed {
        file,
        path: path.to_owned(),
        unlocked,
    }))
}

/// Takes the exclusive advisory lock on `file` without waiting (`flock(LOCK_EX | LOCK_NB)`):
/// `WOULDBLOCK` when another open file holds it.
fn try_lock(file: &File) -> rustix::io::Result<()> {
    rustix::fs::flock(file, rustix::fs::FlockOperation::NonBlockingLockExclusive)
}

/// [`claim`] for `exec --continue` and the TUI's `--continue`/`--resume`, before the TUI takes
/// the terminal: waits for another writer ([`wait_for_writer`]) and says on stderr what it
/// does. `Some` to continue the session, `None` to start a new one. Errors say why the file
/// cannot be opened.
pub(crate) fn claim_on_stderr(path: &Path) -> Result<Option<Claimed>, String> {
    let id = short_id(path);
    let wait = wait_for_writer().unwrap_or_else(|warning| {
        eprintln!("hrns: warning: {warning}");
        Duration::from_secs(10)
    });
    let mut waited = false;
    let claim = claim(path, wait, || {
        waited = true;
        eprintln!(
            "hrns: session {id} is being written by another hrns; waiting up to {} s for it to finish…",
            wait.as_secs()
        );
    })
    .map_err(|e| format!("cannot open the session {}: {e}", path.display()))?;
    match claim {
        Claim::Claimed(claimed) => {
            if let Some(e) = &claimed.unlocked {
                eprintln!(
                    "hrns: warning: cannot lock {} ({e}); another hrns continuing it at the same time would mix its turns in",
                    path.display()
                );
            }
            if waited {
                eprintln!("hrns: the other hrns finished; continuing session {id}");
            }
            Ok(Some(claimed))
        }
        Claim::Busy => {
            eprintln!(
                "hrns: session {id} is being written by another hrns; starting a new session instead, without its history"
            );
            Ok(None)
        }
        Claim::Removed => {
            eprintln!(
                "hrns: session {id} was removed by the hrns that wrote it (it got no answer); starting a new session"
            );
            Ok(None)
        }
    }
}

/// A session read back.
#[derive(Debug, Clone)]
pub(crate) struct LoadedSession {
    pub(crate) header: SessionHeader,
    /// Every saved event, in order (the TUI shows a resumed conversation from them).
    pub(crate) events: Vec<Event>,
    /// The history, repaired so it can be sent again.
    pub(crate) messages: Vec<Message>,
    /// The subagents' conversations, in the order they started.
    pub(crate) children: Vec<ChildTranscript>,
    /// The undos, redos and rewinds, each where it came among the events.
    pub(crate) marks: Vec<Mark>,
    /// Problems met while loading (a torn last line), for a warning.
    pub(crate) warnings: Vec<String>,
}

/// Why a session file could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: io::Error },
    #[error("{path}: not an hrns session file ({message})")]
    NotASession { path: String, message: String },
    /// Not a regular file, a kernel file, too large, or unreadable (the message names it).
    #[error("cannot read the session {0}")]
    Unsafe(String),
}

/// Opens a session file safely (see [`hrns_blocking::safe_file`]): a regular file of at most
/// [`SESSION_CAP`] bytes, read no further than that even if it grows.
fn open_session(path: &Path) -> Result<io::Take<File>, SafeReadError> {
    let (file, len) = hrns_blocking::open_regular(path)?;
    if len > SESSION_CAP {
        return Err(SafeReadError::Refused {
            path: path.to_owned(),
            refusal: FileRefusal::TooLarge {
                size: len,
                cap: SESSION_CAP,
            },
        });
    }
    Ok(io::Read::take(file, SESSION_CAP))
}

/// Reads a session file. Lines that do not parse are skipped with a warning (a torn last line
/// after a crash); complete lines are never lost.
pub(crate) fn load(path: &Path) -> Result<LoadedSession, LoadError> {
    let mut events: Vec<Event> = Vec::new();
    let read = read_session(path, &mut events)?;
    let shapes: Vec<Shape> = events.iter().map(Shape::of).collect();
    let mut messages: Vec<Message> = history_indices(&shapes, &read.marks, events.len())
        .into_iter()
        .filter_map(|i| match &events[i] {
            Event::Message { message } => Some(Message::clone(message)),
            _ => None,
        })
        .collect();
    history::repair(&mut messages);
    Ok(LoadedSession {
        header: read.header,
        events,
        messages,
        children: read.children,
        marks: read.marks,
        warnings: read.warnings,
    })
}

/// A session read back for sending its history again (`hrns exec --continue`/`--resume`):
/// what [`load`] gives without the events, the subagents' conversations or the marks.
#[derive(Debug)]
pub(crate) struct ResumedHistory {
    pub(crate) header: SessionHeader,
    /// The history, repaired so it can be sent again (the same as [`LoadedSession::messages`]).
    pub(crate) messages: Vec<Message>,
    /// Problems met while loading, for a warning.
    pub(crate) warnings: Vec<String>,
}

/// Reads a session file for its history alone, in about half the time and memory of [`load`]:
/// messages are moved into the history as they are read (not kept as events and cloned), and a
/// `tool_result` event (half of a long session's bytes, never part of the history) is checked
/// for being well-formed JSON with its fields present, without building its output. A line
/// that does not parse is warned about as [`load`] warns; the history is the same, rewinds and
/// compactions included (a test compares the two).
pub(crate) fn load_history(path: &Path) -> Result<ResumedHistory, LoadError> {
    let mut sink = HistorySink::default();
    let read = read_session(path, &mut sink)?;
    let keep = history_indices(&sink.shapes, &read.marks, sink.shapes.len());
    // The indices of `keep` grow; `slots` maps an event's index to its message's.
    let mut keep = keep.into_iter().map(|i| sink.slots[i]).peekable();
    let mut messages: Vec<Message> = sink
        .messages
        .into_iter()
        .enumerate()
        .filter_map(|(slot, m)| keep.next_if_eq(&slot).map(|_| m))
        .collect();
    history::repair(&mut messages);
    Ok(ResumedHistory {
        header: read.header,
        messages,
        warnings: read.warnings,
    })
}

/// What reading a session file gives beside its events.
struct SessionRead {
    header: SessionHeader,
    children: Vec<ChildTranscript>,
    marks: Vec<Mark>,
    warnings: Vec<String>,
}

/// Where [`read_session`] puts the events it reads.
trait EventSink {
    /// Takes the line of one event (`{"event": …}`); an error if it is not one.
    fn take(&mut self, line: &[u8]) -> Result<(), serde_json::Error>;
    /// How many events were taken: a mark is placed after them.
    fn taken(&self) -> usize;
}

impl EventSink for Vec<Event> {
    fn take(&mut self, line: &[u8]) -> Result<(), serde_json::Error> {
        self.push(serde_json::from_slice::<Entry>(line)?.event);
        Ok(())
    }

    fn taken(&self) -> usize {
        self.len()
    }
}

/// The events of [`load_history`]: each one's [`Shape`], and the messages moved out of them.
#[derive(Default)]
struct HistorySink {
    shapes: Vec<Shape>,
    /// For each event, the index its message has (or would have) in `messages`.
    slots: Vec<usize>,
    messages: Vec<Message>,
}

/// A `message` event's line, read without going through [`Event`] (its internal tag makes
/// serde buffer the whole line before building the message).
#[derive(Deserialize)]
struct MessageLine {
    event: MessageEvent,
}

#[derive(Deserialize)]
struct MessageEvent {
    message: Message,
}

/// A `tool_result` event's line, checked but not built: its fields must be there, the output
/// is skipped.
#[derive(Deserialize)]
struct ToolResultLine {
    #[serde(rename = "event")]
    _event: ToolResultEvent,
}

#[derive(Deserialize)]
struct ToolResultEvent {
    #[serde(rename = "id")]
    _id: serde::de::IgnoredAny,
    #[serde(rename = "name")]
    _name: serde::de::IgnoredAny,
    #[serde(rename = "status")]
    _status: hrns_core::session::ToolStatus,
    #[serde(rename = "output")]
    _output: serde::de::IgnoredAny,
}

impl EventSink for HistorySink {
    fn take(&mut self, line: &[u8]) -> Result<(), serde_json::Error> {
        // The lines are written by `EntryRef`, the tag first; a line written otherwise takes
        // the general path below and reads the same.
        const MESSAGE: &[u8] = br#"{"event":{"type":"message","#;
        const TOOL_RESULT: &[u8] = br#"{"event":{"type":"tool_result","#;
        // A line the fast paths refuse takes the general path too, so that its warning says
        // what `load`'s says.
        let message = if line.starts_with(MESSAGE)
            && let Ok(read) = serde_json::from_slice::<MessageLine>(line)
        {
            Some(read.event.message)
        } else if line.starts_with(TOOL_RESULT)
            && serde_json::from_slice::<ToolResultLine>(line).is_ok()
        {
            None
        } else {
            let event = serde_json::from_slice::<Entry>(line)?.event;
            self.shapes.push(Shape::of(&event));
            self.slots.push(self.messages.len());
            if let Event::Message { message } = event {
                self.messages.push(*message);
            }
            return Ok(());
        };
        self.slots.push(self.messages.len());
        match message {
            Some(message) => {
                self.shapes.push(Shape::Message {
                    by_user: message.role == Role::User,
                });
                self.messages.push(message);
            }
            None => self.shapes.push(Shape::Other),
        }
        Ok(())
    }

    fn taken(&self) -> usize {
        self.shapes.len()
    }
}

/// Reads a session file's header and lines, the events into `sink`.
fn read_session(path: &Path, sink: &mut impl EventSink) -> Result<SessionRead, LoadError> {
    let shown = path.display().to_string();
    let file = open_session(path).map_err(|e| LoadError::Unsafe(e.to_string()))?;
    let mut lines = BufReader::new(file).split(b'\n');
    let first = match lines.next() {
        Some(Ok(l)) => l,
        Some(Err(source)) => {
            return Err(LoadError::Io {
                path: shown,
                source,
            });
        }
        None => {
            return Err(LoadError::NotASession {
                path: shown,
                message: "the file is empty".into(),
            });
        }
    };
    let header: SessionHeader =
        serde_json::from_slice(&first).map_err(|e| LoadError::NotASession {
            path: shown.clone(),
            message: e.to_string(),
        })?;
    let mut warnings = Vec::new();
    let mut children: Vec<ChildTranscript> = Vec::new();
    let mut marks = Vec::new();
    for (n, line) in lines.enumerate() {
        let line = line.map_err(|source| LoadError::Io {
            path: shown.clone(),
            source,
        })?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match sink.take(&line) {
            Ok(()) => {}
            Err(_) if serde_json::from_slice::<ChildLine>(&line).is_ok() => {
                let ChildLine { child } = serde_json::from_slice(&line).expect("checked");
                if let Event::Message { message } = child.event {
                    match children
                        .iter_mut()
                        .find(|c| c.parent_call_id == child.parent_call_id)
                    {
                        Some(c) => c.messages.push(*message),
                        None => children.push(ChildTranscript {
                            parent_call_id: child.parent_call_id,
                            agent: child.agent,
                            messages: vec![*message],
                        }),
                    }
                }
            }
            Err(_) if serde_json::from_slice::<RestoreLine>(&line).is_ok() => {
                let RestoreLine { restore } = serde_json::from_slice(&line).expect("checked");
                marks.push(Mark {
                    at: sink.taken(),
                    kind: MarkKind::Restore(restore),
                });
            }
            Err(_) if serde_json::from_slice::<RewindLine>(&line).is_ok() => {
                let RewindLine { rewind } = serde_json::from_slice(&line).expect("checked");
                marks.push(Mark {
                    at: sink.taken(),
                    kind: MarkKind::Rewind(rewind.turn),
                });
            }
            Err(e) => warnings.push(format!(
                "{shown}:{}: skipped an unreadable line ({e})",
                n + 2
            )),
        }
    }
    Ok(SessionRead {
        header,
        children,
        marks,
        warnings,
    })
}

/// Where each turn starts among `events`: the `turn_started` events followed by the user's
/// message (a `/compact` runs as a turn too, without one). Turn N of `hrns checkpoints` is the
/// N-th.
pub(crate) fn turn_starts(events: &[Event]) -> Vec<usize> {
    let shapes: Vec<Shape> = events.iter().map(Shape::of).collect();
    shape_turn_starts(&shapes)
}

/// [`turn_starts`] from the events' shapes.
fn shape_turn_starts(shapes: &[Shape]) -> Vec<usize> {
    shapes
        .windows(2)
        .enumerate()
        .filter_map(|(i, pair)| match pair {
            [Shape::TurnStarted, Shape::Message { by_user: true }] => Some(i),
            _ => None,
        })
        .collect()
}

/// What the history needs to know of one saved event.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    /// A message of the history.
    Message { by_user: bool },
    /// A turn started.
    TurnStarted,
    /// A summarising compaction: the history starts again after it.
    Summarized,
    /// Anything else.
    Other,
}

impl Shape {
    fn of(event: &Event) -> Shape {
        match event {
            Event::Message { message } => Shape::Message {
                by_user: message.role == Role::User,
            },
            Event::TurnStarted { .. } => Shape::TurnStarted,
            Event::ContextCompacted {
                method: CompactMethod::Summarized,
                ..
            } => Shape::Summarized,
            Event::RequestStarted { .. }
            | Event::TextDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::RefusalDelta { .. }
            | Event::ToolCallStreaming { .. }
            | Event::ToolCall { .. }
            | Event::ApprovalRequested { .. }
            | Event::ToolResult { .. }
            | Event::Usage { .. }
            | Event::Retry { .. }
            | Event::OptionDropped { .. }
            | Event::ToolsChanged { .. }
            | Event::ContextCompacted { .. }
            | Event::PlanUpdated { .. }
            | Event::Checkpoint { .. }
            | Event::CheckpointFailed { .. }
            | Event::Hook { .. }
            | Event::TurnFinished { .. }
            | Event::TurnFailed { .. }
            | Event::TurnCancelled
            | Event::Child(_) => Shape::Other,
        }
    }
}

/// The history as it stood after the first `end` events, as the indices of its messages among
/// the events (growing): the messages, after a summarising compaction only those after it (the
/// new history), and after a rewind to turn N the history as it stood just before turn N.
fn history_indices(shapes: &[Shape], marks: &[Mark], end: usize) -> Vec<usize> {
    let starts = shape_turn_starts(shapes);
    let mut messages: Vec<usize> = Vec::new();
    let mut pending = marks.iter().filter(|m| m.at <= end).peekable();
    for i in 0..=end {
        while let Some(mark) = pending.next_if(|m| m.at == i) {
            match mark.kind {
                MarkKind::Rewind(turn) => {
                    let start = usize::try_from(turn)
                        .ok()
                        .and_then(|t| t.checked_sub(1))
                        .and_then(|t| starts.get(t).copied());
                    // A rewind only goes back (a hostile line naming a later turn is ignored).
                    if let Some(start) = start.filter(|s| *s < mark.at) {
                        messages = history_indices(shapes, marks, start);
                    }
                }
                MarkKind::Restore(_) => {}
            }
        }
        match shapes.get(i).filter(|_| i < end) {
            Some(Shape::Message { .. }) => messages.push(i),
            Some(Shape::Summarized) => messages.clear(),
            Some(Shape::TurnStarted | Shape::Other) | None => {}
        }
    }
    messages
}

/// One row of `hrns sessions`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Summary {
    pub(crate) header: SessionHeader,
    pub(crate) path: PathBuf,
    pub(crate) first_user_message: Option<String>,
    pub(crate) messages: usize,
}

/// Summarises a session file without keeping its events: the header, the first user message
/// and the number of messages. Reads the whole file; `hrns sessions` uses [`Summaries`],
/// which reads only what was appended since its last listing.
pub(crate) fn summarize(path: &Path) -> Option<Summary> {
    summaries::summarize_whole(path)
}

/// The session files in `dir`, newest first. Names start with the start time to the second;
/// sessions started within the same second (two scripted runs, say) are ordered by when their
/// file was made, since the random id after the time says nothing about order.
pub(crate) fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files.reverse();
    // Only files that share their second are looked at again, so listing stays one
    // `read_dir` and a sort for the usual directory.
    let mut start = 0;
    while start < files.len() {
        let second = started_second(&files[start]);
        let end = start
            + files[start..]
                .iter()
                .take_while(|p| started_second(p) == second)
                .count();
        if end - start > 1 {
            files[start..end].sort_by_cached_key(|p| std::cmp::Reverse(made_at(p)));
        }
        start = end;
    }
    files
}

/// The start time in a session file's name (`2026-12-04T22-57-30_1a2b3c.jsonl`), to the second.
fn started_second(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_string_lossy();
    stem.rsplit_once('_').map(|(stamp, _)| stamp.to_owned())
}

/// When a session file was made: its birth time where the file system keeps one, else its
/// last change (a session file is only ever appended to).
fn made_at(path: &Path) -> Option<SystemTime> {
    let meta = std::fs::metadata(path).ok()?;
    meta.created().or_else(|_| meta.modified()).ok()
}

/// Finds a session by id (or a unique prefix of it, or its file name).
pub(crate) fn find(dir: &Path, id: &str) -> Result<PathBuf, String> {
    let id = id.trim();
    if id.is_empty() {
        return Err("give a session id (see `hrns sessions`)".into());
    }
    let matches: Vec<PathBuf> = files(dir)
        .into_iter()
        .filter(|p| {
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let short = name.rsplit('_').next().unwrap_or("");
            short.starts_with(id) || name == id
        })
        .collect();
    match matches.len() {
        0 => Err(format!(
            "no session `{id}` in {}; `hrns sessions` lists them",
            dir.display()
        )),
        1 => Ok(matches.into_iter().next().expect("one match")),
        n => Err(format!("`{id}` matches {n} sessions; give more of the id")),
    }
}

/// The most recent session started in `cwd`.
pub(crate) fn latest_in(dir: &Path, cwd: &str) -> Option<PathBuf> {
    files(dir).into_iter().find(|p| {
        open_session(p)
            .ok()
            .and_then(|f| BufReader::new(f).split(b'\n').next()?.ok())
            .and_then(|l| serde_json::from_slice::<SessionHeader>(&l).ok())
            .is_some_and(|h| h.cwd == cwd)
    })
}

/// One item of an exported transcript.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TranscriptItem {
    /// A message as it entered the history.
    Message(Message),
    /// A compaction; after a summarising one, the summary is the next message.
    Compacted(Event),
}

/// The conversation as it happened: every message once, and the compactions where they
/// happened. The messages a summarising compaction re-states (the new history) are not
/// repeated, except the summary itself.
pub(crate) fn transcript(s: &LoadedSession) -> Vec<TranscriptItem> {
    let mut items = Vec::new();
    // After a summarising compaction: `Some(n)` while its re-stated messages are read.
    let mut restated: Option<usize> = None;
    for e in &s.events {
        match e {
            Event::Message { message } => {
                match restated {
                    Some(0) => items.push(TranscriptItem::Message(Message::clone(message))),
                    Some(_) => {}
                    None => items.push(TranscriptItem::Message(Message::clone(message))),
                }
                restated = restated.map(|n| n + 1);
            }
            Event::ContextCompacted { method, .. } => {
                items.push(TranscriptItem::Compacted(e.clone()));
                restated = (*method == CompactMethod::Summarized).then_some(0);
            }
            _ => restated = None,
        }
    }
    items
}

/// A readable Markdown transcript.
pub(crate) fn to_markdown(s: &LoadedSession) -> String {
    let h = &s.header;
    let mut out = format!(
        "# hrns session {}\n\n- started: {}\n- directory: `{}`\n- provider: {}, model: {}, agent: {}\n",
        h.id, h.started, h.cwd, h.provider, h.model, h.agent
    );
    for item in transcript(s) {
        let m = match item {
            TranscriptItem::Message(m) => m,
            TranscriptItem::Compacted(e) => {
                let line = crate::exec::output::compaction_text(&e).unwrap_or_default();
                out.push_str(&format!("\n---\n\n*{line}*\n\n---\n"));
                continue;
            }
        };
        out.push_str(&message_markdown(&m, "##"));
        if let Some(id) = m.tool_call_id.as_deref() {
            for child in s.children.iter().filter(|c| c.parent_call_id == id) {
                let mut nested = format!("\n#### Subagent {} (task `{id}`)\n", child.agent);
                for cm in &child.messages {
                    nested.push_str(&message_markdown(cm, "#####"));
                }
                for line in nested.lines() {
                    out.push_str(if line.is_empty() { ">" } else { "> " });
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// One message as Markdown, its heading at `level` (`##`).
fn message_markdown(m: &Message, level: &str) -> String {
    let mut out = String::new();
    {
        match m.role {
            Role::User => match hrns_core::session::tool_images(m) {
                Some(calls) => out.push_str(&format!(
                    "\n*{}*\n",
                    crate::exec::output::tool_images_text(&calls)
                )),
                // A pruned image message: the stub says what it was.
                None if hrns_core::session::is_tool_images(m) => {
                    out.push_str(&format!("\n*{}*\n", m.text()));
                }
                None => out.push_str(&format!("\n{level} User\n\n{}\n", m.text())),
            },
            Role::Assistant => {
                out.push_str(&format!("\n{level} Assistant\n\n"));
                if let Some(r) = m.reasoning_content.as_deref().filter(|r| !r.is_empty()) {
                    out.push_str(&format!("> {}\n\n", r.replace('\n', "\n> ")));
                }
                let text = m.text();
                if !text.is_empty() {
                    out.push_str(&format!("{text}\n"));
                }
                for c in &m.tool_calls {
                    out.push_str(&format!(
                        "\n**Tool call** `{}`\n\n```json\n{}\n```\n",
                        c.function.name, c.function.arguments
                    ));
                }
            }
            Role::Tool => {
                let text = m.text();
                let fence = fence_for(&text);
                out.push_str(&format!("\n**Tool result**\n\n{fence}\n{text}\n{fence}\n"));
            }
            Role::System | Role::Developer | Role::Function => {}
        }
    }
    out
}

/// A code fence longer than any run of backticks in `text`, so the text cannot close it.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// A JSON transcript: the header, the messages as they happened and the compactions (each
/// with the index of the message it came before).
pub(crate) fn to_json(s: &LoadedSession) -> serde_json::Value {
    let mut messages = Vec::new();
    let mut compactions = Vec::new();
    for item in transcript(s) {
        match item {
            TranscriptItem::Message(m) => messages.push(m),
            TranscriptItem::Compacted(e) => {
                compactions.push(serde_json::json!({"before_message": messages.len(), "event": e}));
            }
        }
    }
    let children: Vec<serde_json::Value> = s
        .children
        .iter()
        .map(|c| {
            serde_json::json!({"parent_call_id": c.parent_call_id, "agent": c.agent, "messages": c.messages})
        })
        .collect();
    serde_json::json!({"header": s.header, "messages": messages, "compactions": compactions, "children": children})
}

mod line;
mod summaries;
pub(crate) use summaries::Summaries;
#[cfg(test)]
mod tests;
