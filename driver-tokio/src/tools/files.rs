//! `read_file`, `list_files`, `write_file` and `edit_file` on `tokio::fs`.

use crate::tool::ToolContext;
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{
    EDIT_FILE, EditFileArgs, LIST_FILES, ListFilesArgs, READ_FILE, ReadFileArgs, WRITE_FILE,
    WriteFileArgs,
};
use hrns_core::tool::files::{
    FsOp, Listing, check_edit_size, edit_missing_file, edit_text, edited_file, fs_error,
    is_skipped_dir, require_dir, require_file, wrote_file,
};
use hrns_core::tool::page::TextPager;
use hrns_core::tool::path::{WriteTarget, resolve};
use std::fs::Permissions;
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Bytes read from a file at a time.
const CHUNK_BYTES: usize = 64 * 1024;

/// `read_file`: a page of a text file, lines numbered, streamed through hrns-core's
/// [`TextPager`] so that memory is bounded by the page.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFile;

builtin_tool!(ReadFile: READ_FILE, ReadFileArgs => read_file);

async fn read_file(
    _: &ReadFile,
    a: ReadFileArgs,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolOutput> {
    let path = resolve(&ctx.workspace, &a.path)?;
    let shown = a.path.as_str();
    let failed = |e: io::Error| fs_error(FsOp::Read, shown, &e);
    // Look before opening: opening a pipe would block until a writer appears.
    let meta = tokio::fs::metadata(&path).await.map_err(failed)?;
    require_file(FsOp::Read, shown, meta.file_type().into())?;
    let mut file = tokio::fs::File::open(&path).await.map_err(failed)?;
    let mut pager = TextPager::new(a.offset, a.limit);
    let mut chunk = vec![0u8; CHUNK_BYTES];
    loop {
        match file.read(&mut chunk).await {
            Ok(0) => break,
            Ok(n) => {
                pager.feed(&chunk[..n]);
                if pager.is_binary() {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(failed(e)),
        }
    }
    Ok(pager.finish())
}

/// `list_files`: the files under a directory, collected by hrns-core's [`Listing`] from a
/// `.gitignore`-aware walk on a blocking thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListFiles;

builtin_tool!(ListFiles: LIST_FILES, ListFilesArgs => list_files);

async fn list_files(
    _: &ListFiles,
    a: ListFilesArgs,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolOutput> {
    let shown = a.dir.as_deref().unwrap_or(".");
    let dir = resolve(&ctx.workspace, shown)?;
    let listing = Listing::new(&ctx.workspace, &dir, a.pattern.as_deref())?;
    let meta = tokio::fs::metadata(&dir)
        .await
        .map_err(|e| fs_error(FsOp::List, shown, &e))?;
    require_dir(shown, meta.file_type().into())?;
    // The walk blocks; it stops early when the call is cancelled or dropped.
    let stop = ctx.cancel.child_token();
    let _stop_on_drop = stop.clone().drop_guard();
    tokio::task::spawn_blocking(move || walk(&dir, listing, &stop))
        .await
        .map_err(|_| ToolOutput::error("list_files: the directory walk failed"))
}

/// Walks `dir` as [`Listing`] describes and returns the listing's result.
fn walk(dir: &Path, mut listing: Listing, stop: &CancellationToken) -> ToolOutput {
    let walk = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| !is_skipped_dir(e.file_name()))
        .build();
    for entry in walk {
        if stop.is_cancelled() {
            break;
        }
        let Ok(entry) = entry else { continue };
        if entry.file_type().is_some_and(|t| !t.is_dir()) {
            listing.add(entry.path());
        }
    }
    listing.finish()
}

/// `write_file`: creates or replaces a regular file atomically, inside the workspace.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFile;

builtin_tool!(WriteFile: WRITE_FILE, WriteFileArgs => write_file);

async fn write_file(
    _: &WriteFile,
    a: WriteFileArgs,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolOutput> {
    let shown = a.path.as_str();
    let real = resolve_for_write(ctx, shown).await?;
    let permissions = match tokio::fs::metadata(&real).await {
        Ok(meta) => {
            require_file(FsOp::Write, shown, meta.file_type().into())?;
            Some(meta.permissions())
        }
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => return Err(fs_error(FsOp::Write, shown, &e)),
    };
    if let Some(parent) = real.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| fs_error(FsOp::CreateDirs, shown, &e))?;
    }
    let created = permissions.is_none();
    write_atomically(&real, a.content.as_bytes(), permissions)
        .await
        .map_err(|e| fs_error(FsOp::Write, shown, &e))?;
    Ok(wrote_file(shown, a.content.len(), created))
}

/// `edit_file`: hrns-core's exact-match edit of a file inside the workspace, written back
/// atomically.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditFile;

builtin_tool!(EditFile: EDIT_FILE, EditFileArgs => edit_file);

async fn edit_file(
    _: &EditFile,
    a: EditFileArgs,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolOutput> {
    let shown = a.path.as_str();
    let real = resolve_for_write(ctx, shown).await?;
    let meta = match tokio::fs::metadata(&real).await {
        Ok(meta) => meta,
        Err(e) if e.kind() == ErrorKind::NotFound => return Err(edit_missing_file(shown)),
        Err(e) => return Err(fs_error(FsOp::Read, shown, &e)),
    };
    require_file(FsOp::Write, shown, meta.file_type().into())?;
    check_edit_size(shown, meta.len())?;
    let bytes = tokio::fs::read(&real)
        .await
        .map_err(|e| fs_error(FsOp::Read, shown, &e))?;
    let edited = edit_text(shown, bytes, &a)?;
    write_atomically(&real, edited.content.as_bytes(), Some(meta.permissions()))
        .await
        .map_err(|e| fs_error(FsOp::Write, shown, &e))?;
    Ok(edited_file(shown, edited.replacements))
}

/// Returns the real path to write for `requested`: confined to the workspace, with symbolic
/// links on the way resolved and checked ([`WriteTarget`]), or the error result to return.
async fn resolve_for_write(ctx: &ToolContext, requested: &str) -> Result<PathBuf, ToolOutput> {
    let mut target = WriteTarget::new(&ctx.workspace, requested)?;
    loop {
        match tokio::fs::canonicalize(target.probe()).await {
            Ok(canonical) => return target.resolve(&canonical).map_err(ToolOutput::from),
            Err(e) if e.kind() == ErrorKind::NotFound && target.handle_missing() => {}
            Err(e) => return Err(fs_error(FsOp::Resolve, requested, &e)),
        }
    }
}

/// Replaces `path` with `content` atomically: a temporary file in the same directory is
/// written, synced, given `permissions` (a new file keeps the usual `0o666` less the umask)
/// and renamed over `path`. A write that fails or is dropped removes its temporary file.
async fn write_atomically(
    path: &Path,
    content: &[u8],
    permissions: Option<Permissions>,
) -> io::Result<()> {
    let (mut file, temp) = create_temp(path).await?;
    file.write_all(content).await?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions).await?;
    }
    file.sync_all().await?;
    drop(file);
    tokio::fs::rename(temp.path(), path).await?;
    temp.keep();
    Ok(())
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
            Err(e) if e.kind() == ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
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
