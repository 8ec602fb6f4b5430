//! Turning the paths the model names into paths to use, with hrns-core's checks.

use crate::tool::ToolContext;
use hrns_core::tool::ToolOutput;
use hrns_core::tool::files::{FileAction, display_path, io_failure};
use hrns_core::tool::path::{check_resolved, confine, resolve};
use std::ffi::OsString;
use std::io::ErrorKind;
use std::path::PathBuf;

/// A path to read or list: `requested` resolved against the workspace (reads may look
/// outside it), and how to show it to the model.
pub(super) fn readable(
    ctx: &ToolContext,
    requested: &str,
) -> Result<(PathBuf, String), ToolOutput> {
    let path = resolve(&ctx.workspace, requested).map_err(|e| ToolOutput::error(e.to_string()))?;
    let shown = display_path(&ctx.workspace, &path);
    Ok((path, shown))
}

/// A path to write: `requested` confined to the workspace by name, then with symbolic links
/// resolved — the deepest existing ancestor canonicalised and the rest joined — and checked
/// again, so no link leads the write outside. Returns the resolved path and how to show it.
pub(super) async fn writable(
    ctx: &ToolContext,
    requested: &str,
) -> Result<(PathBuf, String), ToolOutput> {
    let refused = |e: hrns_core::tool::path::PathError| ToolOutput::error(e.to_string());
    let lexical = confine(&ctx.workspace, requested).map_err(refused)?;
    let shown = display_path(&ctx.workspace, &lexical);
    let mut existing = lexical.as_path();
    let mut missing: Vec<OsString> = Vec::new();
    let real = loop {
        match tokio::fs::canonicalize(existing).await {
            Ok(real) => break real,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                match (existing.file_name(), existing.parent()) {
                    (Some(name), Some(parent)) => {
                        missing.push(name.to_owned());
                        existing = parent;
                    }
                    _ => return Err(io_failure(FileAction::Write, &shown, &e)),
                }
            }
            Err(e) => return Err(io_failure(FileAction::Write, &shown, &e)),
        }
    };
    let resolved = missing
        .iter()
        .rev()
        .fold(real, |path, name| path.join(name));
    check_resolved(&ctx.workspace, &resolved).map_err(refused)?;
    Ok((resolved, shown))
}
