//! Unified diffs of what `write_file` and `edit_file` are about to change, for approvals,
//! `exec`'s stderr, `--json` tool events and the TUI. The diff itself is pure ([`unified`]);
//! [`proposed`] reads the file as it is before the tool runs; [`wrap_writes`] (blocking) and
//! [`wrap_async_writes`] (tokio) make the write tools take it just before they change the
//! file, and [`WriteDiffs`] hands it to the front end with the call's result.

use hrns_blocking::{Tool, ToolContext, Toolbox};
use hrns_core::tool::builtin::{EDIT_FILE, EditFileArgs, WRITE_FILE, WriteFileArgs};
use similar::{ChangeTag, TextDiff};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Lines of context around each change.
const CONTEXT: usize = 3;
/// Diff lines shown; the rest are folded into a count.
pub(crate) const MAX_LINES: usize = 80;
/// The largest file diffed (a larger one gets no diff, not a slow one).
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One line of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DiffLine {
    /// `--- a/path` and `+++ b/path`.
    Header(String),
    /// `@@ -1,3 +1,4 @@`.
    Hunk(String),
    /// A removed line (without its `-`).
    Removed(String),
    /// An added line (without its `+`).
    Added(String),
    /// An unchanged context line (without its space).
    Same(String),
    /// This many more diff lines, not shown.
    Folded(usize),
}

impl DiffLine {
    /// The line as plain unified-diff text.
    pub(crate) fn text(&self) -> String {
        match self {
            DiffLine::Header(t) | DiffLine::Hunk(t) => t.clone(),
            DiffLine::Removed(t) => format!("-{t}"),
            DiffLine::Added(t) => format!("+{t}"),
            DiffLine::Same(t) => format!(" {t}"),
            DiffLine::Folded(n) => format!("… {n} more diff lines"),
        }
    }
}

/// The unified diff from `old` to `new` for `path`, with [`CONTEXT`] lines of context, folded
/// after `max` lines. Empty when nothing changes.
pub(crate) fn unified(path: &str, old: &str, new: &str, max: usize) -> Vec<DiffLine> {
    let diff = TextDiff::from_lines(old, new);
    let mut lines = Vec::new();
    for group in diff.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        if lines.is_empty() {
            let from = if old.is_empty() {
                "/dev/null".to_owned()
            } else {
                format!("a/{path}")
            };
            lines.push(DiffLine::Header(format!("--- {from}")));
            lines.push(DiffLine::Header(format!("+++ b/{path}")));
        }
        let (o, n) = (first.old_range().start, first.new_range().start);
        let (o_len, n_len) = (last.old_range().end - o, last.new_range().end - n);
        lines.push(DiffLine::Hunk(format!(
            "@@ -{},{o_len} +{},{n_len} @@",
            o + usize::from(o_len > 0),
            n + usize::from(n_len > 0)
        )));
        for op in &group {
            for change in diff.iter_changes(op) {
                let text = change.value().trim_end_matches(['\n', '\r']).to_owned();
                lines.push(match change.tag() {
                    ChangeTag::Delete => DiffLine::Removed(text),
                    ChangeTag::Insert => DiffLine::Added(text),
                    ChangeTag::Equal => DiffLine::Same(text),
                });
            }
        }
    }
    if lines.len() > max {
        let rest = lines.len() - max;
        lines.truncate(max);
        lines.push(DiffLine::Folded(rest));
    }
    lines
}

/// The diff a `write_file` or `edit_file` call would make, reading the file under
/// `workspace` as it is now; `None` for other tools, arguments that do not parse, a file too
/// large or not text, or an edit that would fail (the tool says why).
pub(crate) fn proposed(workspace: &Path, tool: &str, arguments: &str) -> Option<Vec<DiffLine>> {
    let change = proposed_change(workspace, &hrns_blocking::Files::Local, tool, arguments)?;
    (!change.lines.is_empty()).then_some(change.lines)
}

/// What a write is about to change: the unified diff, and the file's whole text before and
/// after (ACP's `diff` content).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TakenDiff {
    pub(crate) lines: Vec<DiffLine>,
    pub(crate) change: hrns_core::acp::update::FileChange,
}

/// [`proposed`] with the whole texts: `None` for other tools, arguments that do not parse, a
/// file too large or not text, or an edit that would fail. With [`Files::Editor`] the old text
/// is the editor's buffer, which the tool will change (a file the editor cannot read and the
/// disk does not have is new).
///
/// [`Files::Editor`]: hrns_blocking::Files::Editor
pub(crate) fn proposed_change(
    workspace: &Path,
    files: &hrns_blocking::Files,
    tool: &str,
    arguments: &str,
) -> Option<TakenDiff> {
    let read = |path: &str| -> Option<(std::path::PathBuf, Option<String>)> {
        // Only files the tool may write: a diff never shows a file outside the workspace.
        let full = hrns_core::tool::path::confine(workspace, path).ok()?;
        let existed = std::fs::symlink_metadata(&full).is_ok();
        if let hrns_blocking::Files::Editor(editor) = files {
            return match editor.read_text(&full) {
                Ok(text) => Some((full, Some(text))),
                Err(_) if !existed => Some((full, None)),
                Err(_) => None,
            };
        }
        let text = read_regular(&full)?;
        Some((full, existed.then_some(text)))
    };
    let (path, full, old, new) = match tool {
        WRITE_FILE => {
            let args: WriteFileArgs = serde_json::from_str(arguments).ok()?;
            let (full, old) = read(&args.path)?;
            (args.path, full, old, args.content)
        }
        EDIT_FILE => {
            let args: EditFileArgs = serde_json::from_str(arguments).ok()?;
            let (full, old) = read(&args.path)?;
            let edited = hrns_core::tool::edit::apply_edit(
                old.as_deref().unwrap_or_default(),
                &args.old_string,
                &args.new_string,
                args.replace_all.unwrap_or(false),
            )
            .ok()?;
            (args.path, full, old, edited.content)
        }
        _ => return None,
    };
    let lines = unified(&path, old.as_deref().unwrap_or_default(), &new, MAX_LINES);
    Some(TakenDiff {
        lines,
        change: hrns_core::acp::update::FileChange {
            path: full.display().to_string(),
            old_text: old,
            new_text: new,
        },
    })
}

/// The text of the file at `full` as it is now: `Some("")` when there is none, `None` when it
/// is not a regular file (a FIFO or a device: reading one could wait forever, on the UI's
/// thread), larger than [`MAX_FILE_BYTES`] or not UTF-8.
///
/// The file is opened first, without waiting (opening a FIFO no one writes to waits too), and
/// its kind and size are read from the opened handle: checking the path and then opening it
/// would leave a window in which another file (a FIFO) could take its place.
fn read_regular(full: &Path) -> Option<String> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Only the open and reads of a FIFO or device are affected; a regular file reads
        // the same.
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = match options.open(full) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(String::new()),
        Err(_) => return None,
    };
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    // Bounded even if the file grows after the check.
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, MAX_FILE_BYTES + 1),
        &mut bytes,
    )
    .ok()?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// Diffs taken just before a write ran, keyed by the tool name and its arguments text.
pub(crate) type Taken = Arc<Mutex<HashMap<String, TakenDiff>>>;

/// The key of a call in [`Taken`].
pub(crate) fn key(tool: &str, arguments: &str) -> String {
    format!("{tool}\0{arguments}")
}

/// A `write_file` or `edit_file` that takes the diff of its change just before it runs (the
/// driver starts tools before their events reach the front end, so reading the file any later
/// could see the change already made).
struct Diffing {
    inner: Arc<dyn Tool>,
    taken: Taken,
}

/// Takes the diff of the call `name(arguments)` into `taken`, reading the file as it is now.
fn take(
    taken: &Taken,
    workspace: &Path,
    files: &hrns_blocking::Files,
    name: &str,
    arguments: &str,
) {
    if let Some(diff) = proposed_change(workspace, files, name, arguments) {
        if let Ok(mut taken) = taken.lock() {
            taken.insert(key(name, arguments), diff);
        }
    }
}

impl Tool for Diffing {
    fn spec(&self) -> hrns_core::tool::ToolSpec {
        self.inner.spec()
    }

    fn run(&self, arguments: &str, ctx: &ToolContext) -> hrns_core::tool::ToolOutput {
        take(
            &self.taken,
            &ctx.workspace,
            &ctx.files,
            &self.inner.spec().name,
            arguments,
        );
        self.inner.run(arguments, ctx)
    }
}

/// [`Diffing`] for the async driver (the TUI's tools): the file is read on a blocking thread,
/// then the wrapped tool runs.
struct AsyncDiffing {
    inner: Arc<dyn hrns_tokio::Tool>,
    taken: Taken,
}

impl hrns_tokio::Tool for AsyncDiffing {
    fn spec(&self) -> hrns_core::tool::ToolSpec {
        self.inner.spec()
    }

    fn run<'a>(
        &'a self,
        arguments: &'a str,
        ctx: &'a hrns_tokio::ToolContext,
    ) -> hrns_tokio::ToolFuture<'a> {
        Box::pin(async move {
            let taken = Arc::clone(&self.taken);
            let (workspace, args) = (ctx.workspace.clone(), arguments.to_owned());
            let files = ctx.files.clone();
            let name = self.inner.spec().name;
            // A failed read only costs the diff; the write itself still runs.
            let _ = tokio::task::spawn_blocking(move || {
                take(&taken, &workspace, &files, &name, &args);
            })
            .await;
            self.inner.run(arguments, ctx).await
        })
    }
}

/// Wraps the toolbox's `write_file` and `edit_file` so they take their diffs into the map
/// returned.
pub(crate) fn wrap_writes(toolbox: &mut Toolbox) -> Taken {
    let taken = Taken::default();
    for name in [WRITE_FILE, EDIT_FILE] {
        if let Some(inner) = toolbox.get(name).cloned() {
            toolbox.add_arc(Arc::new(Diffing {
                inner,
                taken: Arc::clone(&taken),
            }));
        }
    }
    taken
}

/// [`wrap_writes`] for the async driver's toolbox.
pub(crate) fn wrap_async_writes(toolbox: &mut hrns_tokio::Toolbox) -> Taken {
    let taken = Taken::default();
    for name in [WRITE_FILE, EDIT_FILE] {
        if let Some(inner) = toolbox.get(name).cloned() {
            toolbox.add_arc(Arc::new(AsyncDiffing {
                inner,
                taken: Arc::clone(&taken),
            }));
        }
    }
    taken
}

/// Matches the diffs a wrapped toolbox took to the results of their calls, from the turn's
/// events: a call's diff is handed out with its result, once.
#[derive(Debug, Default)]
pub(crate) struct WriteDiffs {
    taken: Taken,
    /// The key in `taken` of each call not yet finished, by call id.
    calls: HashMap<String, String>,
    /// Calls whose diff the front end showed already (in the approval), by call id.
    shown: std::collections::HashSet<String>,
}

impl WriteDiffs {
    /// Follows the diffs `taken` by a toolbox from [`wrap_writes`] or [`wrap_async_writes`].
    pub(crate) fn new(taken: Taken) -> WriteDiffs {
        WriteDiffs {
            taken,
            ..WriteDiffs::default()
        }
    }

    /// Notes that the call's diff was shown already: its result comes without it.
    pub(crate) fn shown(&mut self, call_id: &str) {
        self.shown.insert(call_id.to_owned());
    }

    /// Follows `event`; when it is the successful result of a write or edit, the diff taken
    /// just before it changed the file (unless [`WriteDiffs::shown`] already).
    pub(crate) fn on_event(&mut self, event: &hrns_core::session::Event) -> Option<Vec<DiffLine>> {
        self.on_event_whole(event)
            .map(|taken| taken.lines)
            .filter(|lines| !lines.is_empty())
    }

    /// [`WriteDiffs::on_event`] with the file's whole text before and after.
    pub(crate) fn on_event_whole(
        &mut self,
        event: &hrns_core::session::Event,
    ) -> Option<TakenDiff> {
        use hrns_core::session::Event;
        match event {
            Event::ToolCall {
                id,
                name,
                arguments,
            } if name == WRITE_FILE || name == EDIT_FILE => {
                self.calls.insert(id.clone(), key(name, arguments));
                None
            }
            Event::ToolResult { id, status, .. } => {
                let k = self.calls.remove(id)?;
                let diff = self.taken.lock().ok().and_then(|mut t| t.remove(&k));
                let shown = self.shown.remove(id);
                // A write that failed changed nothing.
                let changed = *status == hrns_core::session::ToolStatus::Ok;
                diff.filter(|_| changed && !shown)
            }
            Event::TurnStarted { .. }
            | Event::ToolCall { .. }
            | Event::RequestStarted { .. }
            | Event::TextDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::RefusalDelta { .. }
            | Event::ToolCallStreaming { .. }
            | Event::ApprovalRequested { .. }
            | Event::Usage { .. }
            | Event::Retry { .. }
            | Event::OptionDropped { .. }
            | Event::ToolsChanged { .. }
            | Event::ContextCompacted { .. }
            | Event::PlanUpdated { .. }
            | Event::Message { .. }
            | Event::Checkpoint { .. }
            | Event::CheckpointFailed { .. }
            | Event::Hook { .. }
            | Event::TurnFinished { .. }
            | Event::TurnFailed { .. }
            | Event::TurnCancelled
            // A child's writes are its own: its diffs are not the parent's.
            | Event::Child(_) => None,
        }
    }
}

/// The diff as plain text, one line each.
pub(crate) fn to_text(lines: &[DiffLine]) -> String {
    let mut out = String::new();
    for l in lines {
        out.push_str(&l.text());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let text = to_text(&unified("x.txt", old, new, 100));
        assert_eq!(
            text,
            "--- a/x.txt\n+++ b/x.txt\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
        );
    }

    #[test]
    fn a_new_file_an_unchanged_one_and_folding() {
        let text = to_text(&unified("n.rs", "", "one\ntwo\n", 100));
        assert_eq!(
            text,
            "--- /dev/null\n+++ b/n.rs\n@@ -0,0 +1,2 @@\n+one\n+two\n"
        );
        assert!(unified("same", "x\n", "x\n", 100).is_empty());
        let big: String = (0..200).map(|i| format!("{i}\n")).collect();
        let lines = unified("big", "", &big, 10);
        assert_eq!(lines.len(), 11);
        assert_eq!(lines[10], DiffLine::Folded(193));
        assert_eq!(lines[10].text(), "… 193 more diff lines");
    }

    #[test]
    fn write_diffs_come_with_successful_results_once_and_not_when_shown() {
        use hrns_core::session::{Event, ToolStatus};
        use hrns_core::tool::ToolOutput;
        let call = |id: &str, name: &str, args: &str| Event::ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        };
        let result = |id: &str, name: &str, status| Event::ToolResult {
            id: id.into(),
            name: name.into(),
            status,
            output: ToolOutput::ok("done"),
        };
        let dir = tempfile::tempdir().unwrap();
        let taken = Taken::default();
        let mut diffs = WriteDiffs::new(Arc::clone(&taken));
        let args = |n: u8| format!(r#"{{"path":"f{n}.txt","content":"new\n"}}"#);
        for n in 1..=4 {
            take(
                &taken,
                dir.path(),
                &hrns_blocking::Files::Local,
                WRITE_FILE,
                &args(n),
            );
        }
        // Ran without asking and succeeded: the diff comes with the result, once.
        assert_eq!(diffs.on_event(&call("c1", WRITE_FILE, &args(1))), None);
        let text = to_text(
            &diffs
                .on_event(&result("c1", WRITE_FILE, ToolStatus::Ok))
                .unwrap(),
        );
        assert_eq!(text, "--- /dev/null\n+++ b/f1.txt\n@@ -0,0 +1,1 @@\n+new\n");
        assert_eq!(
            diffs.on_event(&result("c1", WRITE_FILE, ToolStatus::Ok)),
            None
        );
        // Shown in its approval already.
        let _ = diffs.on_event(&call("c2", WRITE_FILE, &args(2)));
        diffs.shown("c2");
        assert_eq!(
            diffs.on_event(&result("c2", WRITE_FILE, ToolStatus::Ok)),
            None
        );
        // A write that failed changed nothing.
        let _ = diffs.on_event(&call("c3", WRITE_FILE, &args(3)));
        assert_eq!(
            diffs.on_event(&result("c3", WRITE_FILE, ToolStatus::Error)),
            None
        );
        // Other tools are not followed; every taken diff was handed out or dropped.
        let _ = diffs.on_event(&call("c4", "read_file", &args(4)));
        assert_eq!(
            diffs.on_event(&result("c4", "read_file", ToolStatus::Ok)),
            None
        );
        assert_eq!(
            taken.lock().unwrap().len(),
            1,
            "only the unmatched f4 diff is left"
        );
    }

    #[test]
    fn proposed_diffs_read_the_file_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "keep\nold\n").unwrap();
        let edit = r#"{"path":"a.txt","old_string":"old","new_string":"new"}"#;
        let text = to_text(&proposed(dir.path(), EDIT_FILE, edit).unwrap());
        assert!(text.contains("-old\n+new\n"), "{text}");
        let write = r#"{"path":"b.txt","content":"fresh\n"}"#;
        let text = to_text(&proposed(dir.path(), WRITE_FILE, write).unwrap());
        assert!(text.starts_with("--- /dev/null\n+++ b/b.txt\n"), "{text}");
        // An edit that would fail, bad arguments and other tools give no diff.
        let missing = r#"{"path":"a.txt","old_string":"zzz","new_string":"y"}"#;
        assert_eq!(proposed(dir.path(), EDIT_FILE, missing), None);
        assert_eq!(proposed(dir.path(), WRITE_FILE, "{not json"), None);
        assert_eq!(
            proposed(dir.path(), "read_file", r#"{"path":"a.txt"}"#),
            None
        );
        std::fs::write(dir.path().join("bin"), b"\xff\xfe").unwrap();
        let over_binary = r#"{"path":"bin","content":"text"}"#;
        assert_eq!(proposed(dir.path(), WRITE_FILE, over_binary), None);
    }

    /// A write over a FIFO no one writes to gets no diff, at once: reading it would wait
    /// forever, and the UI asks on its own thread.
    #[cfg(unix)]
    #[test]
    fn a_write_over_a_fifo_gets_no_diff_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join("pipe"))
            .status()
            .unwrap();
        assert!(made.success());
        let workspace = dir.path().to_owned();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let write = r#"{"path":"pipe","content":"x"}"#;
            let _ = tx.send(proposed(&workspace, WRITE_FILE, write));
        });
        let diff = rx.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(diff, Ok(None));
    }
}
