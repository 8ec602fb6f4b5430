//! The async `Tool` trait and the toolbox the runner dispatches calls to.

use hrns_blocking::{CancelFlag, Files, Sandbox};
use hrns_core::session::Approval;
use hrns_core::task::ChildEvent;
use hrns_core::tool::render::tool_failed;
use hrns_core::tool::{Registry, ToolObject, ToolOutput, ToolSpec};
use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The future a [`Tool`] returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolOutput> + Send + 'a>>;

/// What a tool may use while it runs.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The workspace root, absolute and canonical; writes are confined to it.
    pub workspace: PathBuf,
    /// Cancelled when the turn is cancelled. A tool future may also simply be dropped (on
    /// cancellation or its timeout), so tools must clean up on drop too; the token lets a
    /// tool stop in an orderly way first (a command is killed and reaped).
    pub cancel: CancellationToken,
    /// How commands are confined and which environment they see (the std tools take it as it
    /// is). [`ToolContext::new`] gives [`Sandbox::unconfined`].
    pub sandbox: Sandbox,
    /// Where the std file tools move their text ([`Files`]); [`ToolContext::new`] gives
    /// [`Files::Local`].
    pub files: Files,
    /// Where a `task` tool hands its child's events (usage among them): the runner that runs
    /// the call sets it to its own channel, and gives them to its session
    /// ([`Ledger::child_event`](hrns_core::session::Ledger::child_event)), out of whose poll
    /// they come as [`Event::Child`](hrns_core::session::Event::Child).
    /// [`ToolContext::new`] gives a link to nowhere.
    pub children: ChildLink,
}

/// Where a tool that runs a child session (`task`) hands the child's events: the channel of
/// the [`Runner`](crate::Runner) running the call, which feeds them to the parent session in
/// the order they were sent and before the call's end. The answers to a child's questions come
/// back the other way: the runner hands the parent session's
/// [`Work::AnswerChild`](hrns_core::session::Work::AnswerChild) to the call's
/// [`ChildLink::listen`] inbox. Cheap to clone; the default leads nowhere (events are dropped,
/// and no answer comes).
#[derive(Debug, Clone, Default)]
pub struct ChildLink {
    tx: Option<mpsc::UnboundedSender<ChildEvent>>,
    /// The inboxes of the running `task` calls' children, by parent call id.
    answers: Inboxes,
}

type Inboxes = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<ChildAnswer>>>>;

/// The answer to a child's question: the child's call id and the owner's answer.
pub type ChildAnswer = (String, Approval);

/// Where the answers to one `task` call's child come in ([`ChildLink::listen`]); stops
/// listening when dropped.
#[derive(Debug)]
pub struct AnswerInbox {
    rx: mpsc::UnboundedReceiver<ChildAnswer>,
    parent_call_id: String,
    answers: Inboxes,
}

impl AnswerInbox {
    /// The answer about the child's call `call_id` (answers about other calls, which are
    /// not asked any more, are dropped); `None` when no answer can come any more.
    pub async fn wait(&mut self, call_id: &str) -> Option<Approval> {
        loop {
            let (id, approval) = self.rx.recv().await?;
            if id == call_id {
                return Some(approval);
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
    pub(crate) fn to(tx: mpsc::UnboundedSender<ChildEvent>) -> Self {
        ChildLink {
            tx: Some(tx),
            answers: Inboxes::default(),
        }
    }

    /// Hands `child` to the runner; dropped when the runner is gone.
    pub fn send(&self, child: ChildEvent) {
        if let Some(tx) = &self.tx {
            tx.send(child).ok();
        }
    }

    /// Listens for the answers to the questions of the child of the `task` call
    /// `parent_call_id`, until the inbox is dropped.
    pub fn listen(&self, parent_call_id: &str) -> AnswerInbox {
        let (tx, rx) = mpsc::unbounded_channel();
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
    /// Returns a context for `workspace`, made absolute and canonical (symbolic links
    /// resolved), with a fresh cancellation token. Fails when the workspace does not exist.
    ///
    /// The built-in tools rely on the root being canonical: a root that is itself reached
    /// through a symbolic link would make every write look like an escape.
    pub fn new(workspace: impl AsRef<Path>) -> std::io::Result<Self> {
        Ok(ToolContext {
            workspace: std::fs::canonicalize(workspace)?,
            cancel: CancellationToken::new(),
            sandbox: Sandbox::unconfined(),
            files: Files::Local,
            children: ChildLink::default(),
        })
    }
}

/// A tool the model can call. Implement it to add your own; the built-ins are in
/// [`crate::tools`].
///
/// ```
/// use hrns_core::tool::{Effect, ToolOutput, ToolSpec};
/// use hrns_tokio::{Tool, ToolContext, ToolFuture};
///
/// struct Clock;
///
/// impl Tool for Clock {
///     fn spec(&self) -> ToolSpec {
///         ToolSpec {
///             name: "clock".into(),
///             description: "Returns the seconds since the Unix epoch.".into(),
///             parameters: serde_json::json!({"type": "object", "properties": {}}),
///             effect: Effect::ReadOnly,
///         }
///     }
///
///     fn run<'a>(&'a self, _arguments: &'a str, _ctx: &'a ToolContext) -> ToolFuture<'a> {
///         Box::pin(async {
///             let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
///             ToolOutput::ok(now.map(|d| d.as_secs()).unwrap_or(0).to_string())
///         })
///     }
/// }
/// ```
pub trait Tool: Send + Sync {
    /// The spec sent to the model (name, description, JSON Schema, effect).
    fn spec(&self) -> ToolSpec;
    /// Runs one call. `arguments` is the model's JSON object text; decode it with
    /// [`hrns_core::tool::args::decode_args`] so that mistakes come back as results the model
    /// can act on. Failures are results (`ToolOutput::error`), never panics. The future may
    /// be dropped at any await point.
    fn run<'a>(&'a self, arguments: &'a str, ctx: &'a ToolContext) -> ToolFuture<'a>;
    /// Runs one call knowing its id; a tool that reports progress (`task` tags its child's
    /// events with it) overrides this. The runner calls this one; it defaults to
    /// [`Tool::run`].
    fn run_call<'a>(
        &'a self,
        call_id: &'a str,
        arguments: &'a str,
        ctx: &'a ToolContext,
    ) -> ToolFuture<'a> {
        let _ = call_id;
        self.run(arguments, ctx)
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

/// Every tool of the blocking driver (std IO) is a tool here too: each call runs on one of
/// tokio's blocking threads (`spawn_blocking`), so the built-in file and command tools — and
/// yours written for [`hrns_blocking::Tool`] — exist once.
///
/// The tool gets a [`hrns_blocking::ToolContext`] for the same workspace whose cancellation
/// flag is set when this call's token is cancelled or its future is dropped (a command is then
/// killed with its process group by the blocking thread). The future waits for the thread to
/// finish after a cancel, so the tool's own cleanup is done when it resolves.
impl<T> Tool for T
where
    T: hrns_blocking::Tool + Clone + 'static,
{
    fn spec(&self) -> ToolSpec {
        hrns_blocking::Tool::spec(self)
    }

    fn run<'a>(&'a self, arguments: &'a str, ctx: &'a ToolContext) -> ToolFuture<'a> {
        on_blocking_thread(self.clone(), None, arguments, ctx)
    }

    fn run_call<'a>(
        &'a self,
        call_id: &'a str,
        arguments: &'a str,
        ctx: &'a ToolContext,
    ) -> ToolFuture<'a> {
        on_blocking_thread(self.clone(), Some(call_id.to_owned()), arguments, ctx)
    }
}

/// Runs a blocking tool's call (with its id when known) on one of tokio's blocking threads.
fn on_blocking_thread<'a, T>(
    tool: T,
    call_id: Option<String>,
    arguments: &str,
    ctx: &'a ToolContext,
) -> ToolFuture<'a>
where
    T: hrns_blocking::Tool + 'static,
{
    let arguments = arguments.to_owned();
    let flag = CancelFlag::new();
    let std_ctx = hrns_blocking::ToolContext {
        workspace: ctx.workspace.clone(),
        cancel: flag.clone(),
        sandbox: ctx.sandbox.clone(),
        files: ctx.files.clone(),
        // A blocking tool runs no child of this driver's.
        children: hrns_blocking::ChildLink::default(),
    };
    Box::pin(async move {
        let _cancel_on_drop = CancelOnDrop(flag.clone());
        let name = tool.spec().name;
        let mut task = tokio::task::spawn_blocking(move || match call_id {
            Some(id) => tool.run_call(&id, &arguments, &std_ctx),
            None => tool.run(&arguments, &std_ctx),
        });
        let joined = tokio::select! {
            joined = &mut task => joined,
            () = ctx.cancel.cancelled() => {
                flag.cancel();
                task.await
            }
        };
        joined.unwrap_or_else(|_| tool_failed(&name))
    })
}

/// Sets a blocking tool's cancellation flag when the future running it is dropped.
struct CancelOnDrop(CancelFlag);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}
