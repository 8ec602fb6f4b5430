//! The async `Tool` trait and the toolbox the runner dispatches calls to.

use hrns_core::tool::{Registry, ToolOutput, ToolSpec};
use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
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
}

/// The tools of a session, looked up by name: a [`Registry`] of [`Tool`]s (`specs`, `get`,
/// `retain` come from it) that takes tools by value. Cheap to clone (tools are shared).
#[derive(Debug, Clone, Default)]
pub struct Toolbox(Registry<dyn Tool>);

impl Toolbox {
    /// An empty toolbox.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool; a tool of the same name is replaced.
    pub fn add(&mut self, tool: impl Tool + 'static) -> &mut Self {
        self.add_arc(Arc::new(tool))
    }

    /// Adds a shared tool; a tool of the same name is replaced.
    pub fn add_arc(&mut self, tool: Arc<dyn Tool>) -> &mut Self {
        self.0.insert(tool.spec(), tool);
        self
    }
}

impl Deref for Toolbox {
    type Target = Registry<dyn Tool>;

    fn deref(&self) -> &Registry<dyn Tool> {
        &self.0
    }
}

impl DerefMut for Toolbox {
    fn deref_mut(&mut self) -> &mut Registry<dyn Tool> {
        &mut self.0
    }
}
