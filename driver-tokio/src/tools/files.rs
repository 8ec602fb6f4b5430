//! `read_file`, `list_files`, `write_file` and `edit_file` on `tokio::fs`.

use super::paths::{readable, writable};
use crate::tool::ToolContext;
use globset::{GlobBuilder, GlobMatcher};
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{
    EDIT_FILE, EditFileArgs, LIST_FILES, LIST_FILES_CAP, ListFilesArgs, READ_FILE, ReadFileArgs,
    WRITE_FILE, WriteFileArgs,
};
use hrns_core::tool::edit::apply_edit;
use hrns_core::tool::files::{
    self, FileAction, FileKind, MAX_FILE_BYTES, bad_pattern, display_path, io_failure, wrong_kind,
};
use hrns_core::tool::render::{looks_binary, render_file_list, render_read};
use std::io;
use std::path::{Path, PathBuf};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// `read_file`: a page of a text file, lines numbered.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFile;

builtin_tool!(ReadFile: READ_FILE, ReadFileArgs => read_file);

async fn read_file(
    _: &ReadFile,
    a: ReadFileArgs,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolOutput> {
    let (path, shown) = readable(ctx, &a.path)?;
    let text = load_text(&path, &shown, FileAction::Read).await?;
    Ok(render_read(&text, a.offset, a.limit))
}

/// `list_files`: the files under a directory, `.gitignore` honoured, optionally filtered by a
/// glob.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListFiles;

builtin_tool!(ListFiles: LIST_FILES, ListFilesArgs => list_files);

async fn list_files(
    _: &ListFiles,
    a: ListFilesArgs,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolOutput> {
    let (dir, shown) = readable(ctx, a.dir.as_deref().unwrap_or("."))?;
    let meta = tokio::fs::metadata(&dir)
        .await
        .map_err(|e| io_failure(FileAction::List, &shown, &e))?;
    if !meta.is_dir() {
        return Err(wrong_kind(FileAction::List, &shown, kind_of(&meta)));
    }
    let matcher = match a.pattern.as_deref() {
        None => None,
        Some(p) => Some(
            GlobBuilder::new(p)
                .literal_separator(true)
                .build()
                .map_err(|e| bad_pattern(p, &e.kind().to_string()))?
                .compile_matcher(),
        ),
    };
    // The walk blocks; it stops early when the call is cancelled or dropped.
    let stop = ctx.cancel.child_token();
    let _stop_on_drop = stop.clone().drop_guard();
    let root = ctx.workspace.clone();
    let paths = tokio::task::spawn_blocking(move || walk(&root, &dir, matcher.as_ref(), &stop))
        .await
        .map_err(|_| ToolOutput::error("list_files: the directory walk failed"))?;
    Ok(render_file_list(paths, LIST_FILES_CAP))
}

/// The files under `dir` (not directories), as shown to the model, that `matcher` accepts
/// by their path relative to `dir`. Ignored files and `.git` are skipped.
fn walk(
    root: &Path,
    dir: &Path,
    matcher: Option<&GlobMatcher>,
    stop: &CancellationToken,
) -> Vec<String> {
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let mut paths = Vec::new();
    for entry in walker {
        if stop.is_cancelled() {
            break;
        }
        let Ok(entry) = entry else { continue };
        if entry.file_type().is_none_or(|t| t.is_dir()) {
            continue;
        }
        let relative = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        if matcher.is_none_or(|m| m.is_match(relative)) {
            paths.push(display_path(root, entry.path()));
        }
    }
    paths
}

/// `write_file`: creates or replaces a file atomically, inside the workspace.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFile;

builtin_tool!(WriteFile: WRITE_FILE, WriteFileArgs => write_file);

async fn write_file(
    _: &WriteFile,
    a: WriteFileArgs,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolOutput> {
    let (path, shown) = writable(ctx, &a.path).await?;
    let replaced = replace_atomically(&path, a.content.as_bytes())
        .await
        .map_err(|e| e.report(FileAction::Write, &shown))?;
    Ok(files::written(&shown, a.content.len(), replaced))
}

/// `edit_file`: exact-match replacement in a file inside the workspace.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditFile;

builtin_tool!(EditFile: EDIT_FILE, EditFileArgs => edit_file);

async fn edit_file(
    _: &EditFile,
    a: EditFileArgs,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolOutput> {
    let (path, shown) = writable(ctx, &a.path).await?;
    let text = load_text(&path, &shown, FileAction::Edit).await?;
    let replace_all = a.replace_all.unwrap_or(false);
    let edited = match apply_edit(&text, &a.old_string, &a.new_string, replace_all) {
        Ok(edited) => edited,
        Err(e) => return Ok(files::edited(&shown, Err(e))),
    };
    replace_atomically(&path, edited.content.as_bytes())
        .await
        .map_err(|e| e.report(FileAction::Edit, &shown))?;
    Ok(files::edited(&shown, Ok(edited.replacements)))
}

fn kind_of(meta: &std::fs::Metadata) -> FileKind {
    if meta.is_dir() {
        FileKind::Directory
    } else if meta.is_file() {
        FileKind::File
    } else {
        FileKind::Special
    }
}

/// Loads a regular text file of at most [`MAX_FILE_BYTES`]. For reading, invalid UTF-8 after
/// the sniffed start is replaced; for editing it is refused, as writing back would change it.
async fn load_text(path: &Path, shown: &str, action: FileAction) -> Result<String, ToolOutput> {
    let failed = |e: io::Error| io_failure(action, shown, &e);
    let meta = tokio::fs::metadata(path).await.map_err(failed)?;
    match kind_of(&meta) {
        FileKind::File => {}
        other => return Err(wrong_kind(action, shown, other)),
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(files::too_large(shown, meta.len()));
    }
    let file = tokio::fs::File::open(path).await.map_err(failed)?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .await
        .map_err(failed)?;
    let size = bytes.len() as u64;
    if size > MAX_FILE_BYTES {
        return Err(files::too_large(shown, size));
    }
    if looks_binary(&bytes) {
        return Err(files::binary(shown, size));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(e) if action == FileAction::Read => {
            Ok(String::from_utf8_lossy(e.as_bytes()).into_owned())
        }
        Err(_) => Err(files::binary(shown, size)),
    }
}

enum WriteError {
    Io(io::Error),
    Kind(FileKind),
}

impl WriteError {
    fn report(self, action: FileAction, shown: &str) -> ToolOutput {
        match self {
            WriteError::Io(e) => io_failure(action, shown, &e),
            WriteError::Kind(kind) => wrong_kind(action, shown, kind),
        }
    }
}

impl From<io::Error> for WriteError {
    fn from(e: io::Error) -> Self {
        WriteError::Io(e)
    }
}

/// Replaces `path` with `content` atomically: a temporary file in the same directory is
/// written, synced, given the old file's permissions and renamed over it. Missing parents are
/// created. Returns whether a file was replaced (rather than created).
async fn replace_atomically(path: &Path, content: &[u8]) -> Result<bool, WriteError> {
    let existing = match tokio::fs::metadata(path).await {
        Ok(meta) if meta.is_file() => Some(meta),
        Ok(meta) => return Err(WriteError::Kind(kind_of(&meta))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    let dir = path.parent().unwrap_or(Path::new("/"));
    tokio::fs::create_dir_all(dir).await?;
    let (mut file, temp) = create_temp(path).await?;
    file.write_all(content).await?;
    if let Some(meta) = &existing {
        file.set_permissions(meta.permissions()).await?;
    }
    file.sync_all().await?;
    drop(file);
    tokio::fs::rename(temp.path(), path).await?;
    temp.keep();
    Ok(existing.is_some())
}

/// A temporary file beside `path`, removed when dropped unless kept (so a failed or
/// cancelled write leaves nothing behind).
async fn create_temp(path: &Path) -> io::Result<(tokio::fs::File, TempFile)> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pid = std::process::id();
    let mut attempt = 0u32;
    loop {
        let temp = path.with_file_name(format!(".{name}.hrns-{pid}-{attempt}.tmp"));
        match tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .await
        {
            Ok(file) => return Ok((file, TempFile(Some(temp)))),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

struct TempFile(Option<PathBuf>);

impl TempFile {
    fn path(&self) -> &Path {
        self.0
            .as_deref()
            .expect("a temporary file has a path until kept")
    }

    fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}
