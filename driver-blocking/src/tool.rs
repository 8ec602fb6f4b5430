//! The `Tool` trait and the toolbox the runner dispatches calls to.

use crate::sandbox::Sandbox;
use hrns_core::session::Approval;
use hrns_core::task::ChildEvent;
use hrns_core::tool::{Registry, ToolObject, ToolOutput, ToolSpec};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// A cancellation flag shared between the caller and running work. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// A flag that is not set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the flag: running tools stop (commands are killed) and the runner cancels the turn.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether the flag is set.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Clears the flag for the next turn.
    pub fn reset(&self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// What a tool may use while it runs.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The workspace root, absolute and canonical; writes are confined to it.
    pub workspace: PathBuf,
    /// Set when the user cancels; long-running tools check it and stop.
    pub cancel: CancelFlag,
    /// How commands are confined and which environment they see. [`ToolContext::new`] gives
    /// [`Sandbox::unconfined`]; the `hrns` program sets its `--sandbox` policy here.
    pub sandbox: Sandbox,
    /// Where `read_file`, `write_file` and `edit_file` move their text: the local file system,
    /// or an editor that holds the files ([`Files::Editor`]). [`ToolContext::new`] gives
    /// [`Files::Local`].
    pub files: Files,
    /// Where a `task` tool hands its child's events (usage among them): the
    /// [`Runner`](crate::Runner) that runs the call sets it to its own channel, and gives
    /// them to its session ([`Ledger::child_event`](hrns_core::session::Ledger::child_event)),
    /// out of whose poll they come as [`Event::Child`](hrns_core::session::Event::Child).
    /// [`ToolContext::new`] gives a link to nowhere.
    pub children: ChildLink,
}

/// Where the file tools' text is read and written.
///
/// Either way the tool resolves, confines and checks the path itself (workspace confinement,
/// symbolic links, the sandbox's protected files, regular files only, the edit size cap): only
/// the bytes go elsewhere.
#[derive(Clone, Default)]
pub enum Files {
    /// `std::fs` on this machine.
    #[default]
    Local,
    /// An editor's buffers (an ACP client's `fs/read_text_file` and `fs/write_text_file`): it
    /// sees unsaved changes, and its undo records the tools' writes.
    Editor(Arc<dyn TextFiles>),
}

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Files::Local => f.write_str("Local"),
            Files::Editor(_) => f.write_str("Editor"),
        }
    }
}

/// Text files held by someone else (an editor). Called on a blocking thread; each call may
/// wait for the other side, and fails with a sentence saying why (its error, a timeout, a
/// closed connection).
pub trait TextFiles: Send + Sync {
    /// The whole text of the file at `path` (absolute, already checked by the tool).
    fn read_text(&self, path: &Path) -> Result<String, String>;
    /// Replaces the text of the file at `path` (absolute, confined and checked) with `content`.
    fn write_text(&self, path: &Path, content: &str) -> Result<(), String>;
}

/// Where a tool that runs a child session (`task`) hands the child's events: the channel of
/// the [`Runner`](crate::Runner) running the call, which feeds them to the parent session in
/// the order they were sent and before the call's end. The answers to a child's questions come
/// back the other way: the runner hands the parent session's
/// [`Work::AnswerChild`](hrns_core::session::Work::AnswerChild) to the call's
/// [`ChildLink::listen`] inbox. Cheap to clone; the default leads nowhere (events are dropped,
/// and no answer comes), and so does every link without the `http` feature, which has no
/// runner.
#[derive(Debug, Clone, Default)]
pub struct ChildLink {
    #[cfg(feature = "http")]
    tx: Option<crate::inbox::Sender<crate::runner::Io>>,
    /// The inboxes of the running `task` calls' children, by parent call id.
    answers: Arc<Mutex<HashMap<String, std::sync::mpsc::Sender<ChildAnswer>>>>,
}

/// The answer to a child's question: the child's call id and the owner's answer.
pub type ChildAnswer = (String, Approval);

/// Where the answers to one `task` call's child come in ([`ChildLink::listen`]); stops
/// listening when dropped.
#[derive(Debug)]
pub struct AnswerInbox {
    rx: std::sync::mpsc::Receiver<ChildAnswer>,
    parent_call_id: String,
    answers: Arc<Mutex<HashMap<String, std::sync::mpsc::Sender<ChildAnswer>>>>,
}

impl AnswerInbox {
    /// Waits up to `timeout` for the answer about the child's call `call_id` (answers about
    /// other calls, which are not asked any more, are dropped). `Err` when nothing came.
    pub fn wait(
        &self,
        call_id: &str,
        timeout: std::time::Duration,
    ) -> Result<Approval, std::sync::mpsc::RecvTimeoutError> {
        loop {
            let (id, approval) = self.rx.recv_timeout(timeout)?;
            if id == call_id {
                return Ok(approval);
            }
        }
    }
}

impl Drop for AnswerInbox {
    fn drop(&mut self) {
        self.answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.parent_call_id);
    }
}

impl ChildLink {
    /// A link to a runner's channel.
    #[cfg(feature = "http")]
    pub(crate) fn to(tx: crate::inbox::Sender<crate::runner::Io>) -> Self {
        ChildLink {
            tx: Some(tx),
            answers: Arc::default(),
        }
    }

    /// Hands `child` to the runner; waits while the runner's channel is full. Dropped when
    /// the runner is gone.
    pub fn send(&self, child: ChildEvent) {
        #[cfg(feature = "http")]
        if let Some(tx) = &self.tx {
            tx.send(crate::runner::Io::Child(Box::new(child))).ok();
        }
        #[cfg(not(feature = "http"))]
        drop(child);
    }

    /// Listens for the answers to the questions of the child of the `task` call
    /// `parent_call_id`, until the inbox is dropped.
    pub fn listen(&self, parent_call_id: &str) -> AnswerInbox {
        let (tx, rx) = std::sync::mpsc::channel();
        self.answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(parent_call_id.to_owned(), tx);
        AnswerInbox {
            rx,
            parent_call_id: parent_call_id.to_owned(),
            answers: Arc::clone(&self.answers),
        }
    }

    /// Hands `approval` about the child's call `call_id` to the child of `parent_call_id`;
    /// dropped when that child is gone.
    pub fn answer(&self, parent_call_id: &str, call_id: String, approval: Approval) {
        let answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = answers.get(parent_call_id) {
            tx.send((call_id, approval)).ok();
        }
    }
}

impl ToolContext {
    /// Returns a context for `workspace`, made absolute and canonical (symbolic links resolved),
    /// with a fresh cancellation flag. Fails when the workspace does not exist.
    ///
    /// The built-in tools rely on the root being canonical: a root that is itself reached
    /// through a symbolic link would make every write look like an escape.
    pub fn new(workspace: impl AsRef<Path>) -> std::io::Result<Self> {
        Ok(ToolContext {
            workspace: std::fs::canonicalize(workspace)?,
            cancel: CancelFlag::new(),
            sandbox: Sandbox::unconfined(),
            files: Files::Local,
            children: ChildLink::default(),
        })
    }
}

/// A tool the model can call. Implement it to add your own; the built-ins are in
/// [`crate::tools`].
pub trait Tool: Send + Sync {
    /// The spec sent to the model (name, description, JSON Schema, effect).
    fn spec(&self) -> ToolSpec;
    /// Runs one call. `arguments` is the model's JSON object text; decode it with
    /// [`hrns_core::tool::args::decode_args`] so that mistakes come back as results the model
    /// can act on. Failures are results (`ToolOutput::error`), never panics.
    fn run(&self, arguments: &str, ctx: &ToolContext) -> ToolOutput;
    /// Runs one call knowing its id; a tool that reports progress (`task` tags its child's
    /// events with it) overrides this. Runners call this one; it defaults to [`Tool::run`].
    fn run_call(&self, call_id: &str, arguments: &str, ctx: &ToolContext) -> ToolOutput {
        let _ = call_id;
        self.run(arguments, ctx)
    }
}

impl<T: Tool + ?Sized> Tool for std::sync::Arc<T> {
    fn spec(&self) -> ToolSpec {
        (**self).spec()
    }

    fn run(&self, arguments: &str, ctx: &ToolContext) -> ToolOutput {
        (**self).run(arguments, ctx)
    }

    fn run_call(&self, call_id: &str, arguments: &str, ctx: &ToolContext) -> ToolOutput {
        (**self).run_call(call_id, arguments, ctx)
    }
}

/// The tools of a session, looked up by name: a [`Registry`] of [`Tool`]s (`add`, `specs`,
/// `get`, `retain` come from it). Cheap to clone (tools are shared).
pub type Toolbox = Registry<dyn Tool>;

impl ToolObject for dyn Tool {
    fn tool_spec(&self) -> ToolSpec {
        self.spec()
    }
}

impl<T: Tool + 'static> From<T> for Box<dyn Tool> {
    fn from(tool: T) -> Self {
        Box::new(tool)
    }
}
