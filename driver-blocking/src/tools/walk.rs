//! The directory walk `list_files` and `grep` share, so both see the same entries.

use crate::tool::ToolContext;
use hrns_core::tool::files::is_skipped_dir;
use ignore::{DirEntry, WalkBuilder};
use std::path::Path;

/// The order a walk yields the entries of a directory in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// By file name, so the same tree gives the same result in the same order.
    ByName,
    /// As the file system lists them (the caller sorts what it keeps).
    AsListed,
}

/// The entries below `root` that a file tool looks at: `.gitignore`, `.ignore` and git's
/// exclude files honoured even outside a git repository, hidden files included,
/// version-control directories and the sandbox's protected paths (hrns's config and state)
/// skipped, links not followed. Entries that cannot be read are passed over; the walk ends
/// when the call is cancelled.
pub(crate) fn walk<'a>(
    root: &Path,
    ctx: &'a ToolContext,
    order: Order,
) -> impl Iterator<Item = DirEntry> + 'a {
    let hidden = ctx.sandbox.protected_below(root);
    let mut builder = WalkBuilder::new(root);
    if order == Order::ByName {
        builder.sort_by_file_name(|a, b| a.cmp(b));
    }
    builder
        .hidden(false)
        .require_git(false)
        .filter_entry(move |e| {
            !is_skipped_dir(e.file_name()) && !hidden.iter().any(|h| e.path().starts_with(h))
        })
        .build()
        .take_while(|_| !ctx.cancel.is_cancelled())
        .filter_map(Result::ok)
}
