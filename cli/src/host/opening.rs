//! Opening a conversation's session, once for every front end: its session log (a new file,
//! a saved session continued, or none under `--ephemeral`), its checkpoints and the facts its
//! hooks are told. `exec`, the TUI and `hrns acp` all open here, so the same config gives the
//! same session file, the same checkpoints and the same hooks whichever front end runs it;
//! each front end only says what it shows of the [`Note`]s, or refuses to go on without a file.
//!
//! A conversation is opened before it is built (by [`super::conversation::build`] on the
//! tokio driver, [`super::blocking::Prepared::build`] on the blocking one): the checkpoints
//! are named after the session's id, and the hooks read its id and path.

use crate::host::plan::Keep;
use crate::host::sessions::{self, Claimed, LoadError, SessionHeader, SessionLog};
use crate::setup::Setup;
use hrns_core::hooks::{SessionHooks, StartSource};
use hrns_core::wire::Message;
use std::path::PathBuf;
use std::sync::Arc;

/// Why a conversation's session is not saved.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotSaved {
    /// No state directory to save it in (no `HOME`, no `XDG_STATE_HOME`).
    #[error("{0}")]
    NoStateDir(String),
    /// Its file could not be made, or a continued one could not be written.
    #[error(transparent)]
    File(std::io::Error),
}

/// Something the front end tells the user about an opened session, each in its own way.
#[derive(Debug)]
pub(crate) enum Note {
    /// A line of the continued session's file could not be read (the rest was).
    History(String),
    /// The session is not saved: the conversation runs, and nothing of it is kept.
    NotSaved(NotSaved),
    /// Checkpoints are on but cannot be taken (no `git`): the text says so, once.
    CheckpointsOff(String),
}

/// A session opened for a conversation: what its builds are made with.
#[derive(Debug)]
pub(crate) struct Opened {
    /// Where its events are saved; `None` when the run keeps nothing or it cannot be saved.
    pub(crate) log: Option<SessionLog>,
    /// What every build of a conversation on it takes: its checkpoints and its hooks' facts.
    pub(crate) saved: Saved,
    /// The history to continue (empty for a new session).
    pub(crate) history: Vec<Message>,
    /// How its first conversation starts, for `SessionStart` hooks.
    pub(crate) start: StartSource,
    /// What the user should hear of the opening, in order.
    pub(crate) notes: Vec<Note>,
}

/// What every build of a conversation on an opened session takes from it (a front end keeps
/// it across rebuilds: `/model`, a mode switch): where its checkpoints go, and what its hooks
/// are told of it. The default is a session that is not saved.
#[derive(Debug, Clone, Default)]
pub(crate) struct Saved {
    /// Where its checkpoints go; `None` without a log (nothing to undo from), with
    /// `"checkpoints": false`, or without `git`.
    pub(crate) checkpointer: Option<Arc<hrns_blocking::Checkpointer>>,
    /// The session file's id and path, told to hooks: a continued session's even when it
    /// could not be written this time.
    named: Option<(String, PathBuf)>,
}

/// The header of a new session file for `setup`: the same for every front end, so a session
/// moves between them (`hrns --resume`, `hrns exec --resume`, an editor's `session/load`).
pub(crate) fn header(setup: &Setup) -> SessionHeader {
    SessionHeader {
        hrns_session: sessions::SESSION_VERSION,
        id: String::new(),
        started: String::new(),
        cwd: setup.workspace.display().to_string(),
        provider: setup.provider.name.clone(),
        model: setup.provider.model.clone(),
        agent: setup.agent.name.clone(),
    }
}

/// Opens a new session for `setup`'s conversation: a new file in the state directory, none
/// when the run keeps nothing (`--ephemeral`); checkpoints as the config says. A file that
/// cannot be made is a [`Note::NotSaved`], for the front end to warn of or refuse.
pub(crate) fn open_new(setup: &Setup, keep: Keep) -> Opened {
    let mut notes = Vec::new();
    let log = match keep {
        Keep::Session => create_log(setup)
            .map_err(|e| notes.push(Note::NotSaved(e)))
            .ok(),
        Keep::Nothing => None,
    };
    let named = log
        .as_ref()
        .map(|l| (l.id().to_owned(), l.path().to_owned()));
    finish(setup, log, named, Vec::new(), StartSource::Startup, notes)
}

/// Opens the saved session `claimed` (this run is its only writer, [`sessions::claim`]) to
/// continue it: its history, its file to append to, its checkpoints. Errors are those of
/// reading it; a file that cannot be written is a [`Note::NotSaved`].
pub(crate) fn open_saved(setup: &Setup, claimed: Claimed) -> Result<Opened, LoadError> {
    let path = claimed.path().to_owned();
    let loaded = sessions::load_history(&path)?;
    let mut notes: Vec<Note> = loaded.warnings.into_iter().map(Note::History).collect();
    let log = SessionLog::append_to(claimed, &loaded.header.id)
        .map_err(|e| notes.push(Note::NotSaved(NotSaved::File(e))))
        .ok();
    let named = Some((loaded.header.id, path));
    Ok(finish(
        setup,
        log,
        named,
        loaded.messages,
        StartSource::Resume,
        notes,
    ))
}

/// An opened session with its checkpoints: they are named after its log, and there are none
/// without one (nothing to undo from).
fn finish(
    setup: &Setup,
    log: Option<SessionLog>,
    named: Option<(String, PathBuf)>,
    history: Vec<Message>,
    start: StartSource,
    mut notes: Vec<Note>,
) -> Opened {
    let checkpointer = log.as_ref().and_then(|log| {
        let (checkpointer, warning) =
            crate::host::checkpoints::checkpointer(&setup.file.config, &setup.workspace, log.id());
        notes.extend(warning.map(Note::CheckpointsOff));
        checkpointer
    });
    Opened {
        log,
        saved: Saved {
            checkpointer,
            named,
        },
        history,
        start,
        notes,
    }
}

/// A new session's file in the state directory's `sessions/`.
fn create_log(setup: &Setup) -> Result<SessionLog, NotSaved> {
    let state = crate::setup::paths::state_dir().map_err(NotSaved::NoStateDir)?;
    SessionLog::create(&state.join("sessions"), header(setup)).map_err(NotSaved::File)
}

impl Saved {
    /// The session's id; `None` when it has no file.
    pub(crate) fn id(&self) -> Option<&str> {
        self.named.as_ref().map(|(id, _)| id.as_str())
    }

    /// The hooks of a conversation on this session, starting as `start` says (its first
    /// conversation as [`Opened::start`]; a rebuild of the same conversation as
    /// [`StartSource::Continued`]): `found`'s, told the session's id and file.
    pub(crate) fn hooks(
        &self,
        found: &crate::setup::hooks::Found,
        setup: &Setup,
        start: StartSource,
    ) -> SessionHooks {
        crate::setup::hooks::for_session(
            found,
            &setup.workspace,
            self.named
                .as_ref()
                .map(|(id, path)| (id.as_str(), path.as_path())),
            start,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrns_core::session::Event;

    /// A config whose checkpoints are off, so nothing here reaches the state directory.
    fn config() -> serde_json::Value {
        serde_json::json!({
            "providers": {"p": {"url": "http://127.0.0.1:1/v1", "key": "sk-x", "model": "m"}},
            "currentProvider": "p",
            "checkpoints": false
        })
    }

    /// A saved session of `setup`'s in `dir` with a question and its answer, and `tail`
    /// appended raw; claimed for this run.
    fn saved(setup: &Setup, dir: &std::path::Path, tail: &str) -> (String, PathBuf, Claimed) {
        let mut log = SessionLog::create(dir, header(setup)).unwrap();
        for message in [Message::user("hi"), Message::assistant("hello")] {
            let event = Event::Message {
                message: Box::new(message),
            };
            log.record(&event).unwrap();
        }
        let (id, path) = (log.id().to_owned(), log.path().to_owned());
        drop(log);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut file, tail.as_bytes()).unwrap();
        let Ok(sessions::Claim::Claimed(claimed)) =
            sessions::claim(&path, sessions::FORK_GRACE, || {})
        else {
            panic!("not claimed");
        };
        (id, path, claimed)
    }

    #[test]
    fn a_continued_session_gives_its_history_and_tells_its_hooks_the_file() {
        let (dir, setup) = crate::host::plan::tests::setup(&config(), "Builder");
        let (id, path, claimed) = saved(&setup, dir.path(), "");
        let opened = open_saved(&setup, claimed).unwrap();
        assert!(opened.notes.is_empty(), "{:?}", opened.notes);
        assert_eq!(opened.history.len(), 2);
        assert_eq!(opened.start, StartSource::Resume);
        assert_eq!(opened.log.as_ref().map(SessionLog::id), Some(id.as_str()));
        // `"checkpoints": false`: none, and nothing to warn of.
        assert!(opened.saved.checkpointer.is_none());
        let hooks = opened.saved.hooks(
            &crate::setup::hooks::Found::default(),
            &setup,
            StartSource::Continued,
        );
        assert_eq!(hooks.context.session_id, id);
        assert_eq!(hooks.context.transcript_path, path.display().to_string());
        assert_eq!(hooks.context.cwd, setup.workspace.display().to_string());
        assert_eq!(hooks.start, StartSource::Continued);
    }

    #[test]
    fn a_torn_last_line_is_a_note_and_the_history_before_it_is_kept() {
        let (dir, setup) = crate::host::plan::tests::setup(&config(), "Builder");
        let (_, _, claimed) = saved(&setup, dir.path(), "{\"event\": {\"type\": \"mess");
        let opened = open_saved(&setup, claimed).unwrap();
        assert_eq!(opened.history.len(), 2);
        assert!(
            matches!(opened.notes.as_slice(), [Note::History(_)]),
            "{:?}",
            opened.notes
        );
    }

    #[test]
    fn a_file_that_is_not_a_session_is_an_error() {
        let (dir, setup) = crate::host::plan::tests::setup(&config(), "Builder");
        let path = dir.path().join("x.jsonl");
        std::fs::write(&path, "not json at all\n").unwrap();
        let Ok(sessions::Claim::Claimed(claimed)) =
            sessions::claim(&path, sessions::FORK_GRACE, || {})
        else {
            panic!("not claimed");
        };
        assert!(open_saved(&setup, claimed).is_err());
    }

    #[test]
    fn a_run_that_keeps_nothing_has_no_file_no_checkpoints_and_tells_hooks_of_none() {
        let (_dir, setup) = crate::host::plan::tests::setup(&config(), "Builder");
        let opened = open_new(&setup, Keep::Nothing);
        assert!(opened.log.is_none());
        assert!(opened.notes.is_empty(), "{:?}", opened.notes);
        assert!(opened.history.is_empty());
        assert_eq!(opened.start, StartSource::Startup);
        assert!(opened.saved.checkpointer.is_none());
        assert_eq!(opened.saved.id(), None);
        let hooks =
            opened
                .saved
                .hooks(&crate::setup::hooks::Found::default(), &setup, opened.start);
        assert_eq!(hooks.context.session_id, "");
        assert_eq!(hooks.context.transcript_path, "");
    }

    #[test]
    fn every_front_end_writes_the_same_header_for_the_same_setup() {
        let (_dir, setup) = crate::host::plan::tests::setup(&config(), "Explorer");
        let h = header(&setup);
        assert_eq!(h.hrns_session, sessions::SESSION_VERSION);
        assert_eq!(
            (h.provider.as_str(), h.model.as_str(), h.agent.as_str()),
            ("p", "m", "Explorer")
        );
        assert_eq!(h.cwd, setup.workspace.display().to_string());
        // The id and the time are the file's, given when it is made.
        assert!(h.id.is_empty() && h.started.is_empty());
    }
}
