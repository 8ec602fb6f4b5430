//! `list_files`: a directory walk honouring .gitignore, collected by hrns-core's [`Listing`].

use crate::tool::ToolContext;
use crate::tools::walk::{Order, Skipped, walk};
use hrns_core::file_refusal::is_kernel_tree;
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{LIST_FILES, ListFilesArgs};
use hrns_core::tool::files::{FsOp, Listing, fs_error, kernel_tree_refused, require_dir};
use hrns_core::tool::path::resolve;
use std::sync::PoisonError;

/// The `list_files` tool.
///
/// Walks `dir` (default the workspace root; listing is read-only, so any directory the user
/// can read is allowed) with the `ignore` crate as [`Listing`] describes: `.gitignore`,
/// `.ignore` and git's exclude files honoured even outside a git repository, hidden files
/// listed, version-control directories skipped, symbolic links listed and not followed.
/// Entries that cannot be read are skipped; the walk stops early when the call is cancelled.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListFiles;

builtin_tool!(ListFiles: LIST_FILES, ListFilesArgs => list);

fn list(_: &ListFiles, args: ListFilesArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolOutput> {
    let shown = args.dir.as_deref().unwrap_or(".");
    let dir = resolve(&ctx.workspace, shown)?;
    ctx.sandbox.check_file(LIST_FILES, shown, &dir)?;
    let mut listing = Listing::new(&ctx.workspace, &dir, args.pattern.as_deref())?;
    let metadata = std::fs::metadata(&dir).map_err(|e| fs_error(FsOp::List, shown, &e))?;
    require_dir(shown, metadata.file_type().into())?;
    if std::fs::canonicalize(&dir).is_ok_and(|real| is_kernel_tree(&real)) {
        return Err(kernel_tree_refused(LIST_FILES, shown));
    }
    let skipped = Skipped::default();
    for entry in walk(&dir, ctx, Order::AsListed, &skipped) {
        if entry.file_type().is_some_and(|t| !t.is_dir()) {
            listing.add(entry.path());
        }
    }
    for (path, refusal) in skipped
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        listing.unread_ignore_file(path, refusal);
    }
    Ok(listing.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_util::{call, workspace};
    use hrns_core::tool::builtin::LIST_FILES_CAP;
    use serde_json::json;
    use std::fs;
    use std::path::Path;

    fn touch(root: &Path, path: &str) {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "x").unwrap();
    }

    #[test]
    fn lists_hidden_files_honouring_gitignore_but_not_git_internals() {
        let (dir, ctx) = workspace();
        let root = dir.path();
        for path in [
            "b.rs",
            "a.txt",
            "src/main.rs",
            "src/lib/mod.rs",
            "target/debug/out",
            "logs/x.log",
            "keep.log",
            ".hidden/secret",
            ".env",
            ".git/HEAD",
            "vendor/dep/.git",
        ] {
            touch(root, path);
        }
        fs::write(root.join(".gitignore"), "target/\n*.log\n!keep.log\n").unwrap();
        let out = call(&ListFiles, &ctx, json!({}));
        assert_eq!(
            out,
            ToolOutput::ok(
                ".env\n.gitignore\n.hidden/secret\na.txt\nb.rs\nkeep.log\nsrc/lib/mod.rs\n\
                 src/main.rs\n"
            )
        );
    }

    #[test]
    fn filters_by_glob_relative_to_dir() {
        let (dir, ctx) = workspace();
        for path in [
            "b.rs",
            "Cargo.toml",
            "src/main.rs",
            "src/lib/mod.rs",
            "src/x.md",
        ] {
            touch(dir.path(), path);
        }
        let cases = [
            (
                json!({"pattern": "**/*.rs"}),
                "b.rs\nsrc/lib/mod.rs\nsrc/main.rs\n",
            ),
            (json!({"pattern": "*.rs"}), "b.rs\n"),
            (json!({"pattern": "*.{rs,toml}"}), "Cargo.toml\nb.rs\n"),
            (json!({"dir": "src", "pattern": "*.rs"}), "src/main.rs\n"),
            (
                json!({"dir": "src/", "pattern": "**"}),
                "src/lib/mod.rs\nsrc/main.rs\nsrc/x.md\n",
            ),
            (json!({"dir": "./src/lib"}), "src/lib/mod.rs\n"),
            (json!({"pattern": "*.py"}), "no files matched"),
        ];
        for (args, expected) in cases {
            let out = call(&ListFiles, &ctx, args.clone());
            assert_eq!(out, ToolOutput::ok(expected), "{args}");
        }
        let out = call(&ListFiles, &ctx, json!({"pattern": "src/[ab"}));
        assert!(out.is_error && out.content.contains("no closing ']'"));
    }

    #[test]
    fn lists_outside_the_workspace_with_absolute_paths() {
        let (_dir, ctx) = workspace();
        let other = tempfile::tempdir().unwrap();
        touch(other.path(), "o.txt");
        let other_dir = fs::canonicalize(other.path()).unwrap();
        let out = call(
            &ListFiles,
            &ctx,
            json!({"dir": other_dir.to_str().unwrap()}),
        );
        assert_eq!(
            out.content,
            format!("{}\n", other_dir.join("o.txt").display())
        );
    }

    #[test]
    fn refuses_files_missing_dirs_and_bad_paths() {
        let (dir, ctx) = workspace();
        touch(dir.path(), "f.txt");
        let cases = [
            (json!({"dir": "f.txt"}), "is a file, not a directory"),
            (json!({"dir": "nope"}), "does not exist"),
            (json!({"dir": "a\u{0}"}), "NUL byte"),
            (json!({"dir": ""}), "empty"),
        ];
        for (args, expected) in cases {
            let out = call(&ListFiles, &ctx, args.clone());
            assert!(out.is_error, "{args}");
            assert!(out.content.contains(expected), "{args}: {}", out.content);
        }
    }

    #[test]
    fn symlinks_are_listed_not_followed() {
        let (dir, ctx) = workspace();
        let other = tempfile::tempdir().unwrap();
        touch(other.path(), "deep/secret.txt");
        std::os::unix::fs::symlink(other.path(), dir.path().join("link")).unwrap();
        let out = call(&ListFiles, &ctx, json!({}));
        assert_eq!(out.content, "link\n");
    }

    #[test]
    fn long_listings_are_capped() {
        let (dir, ctx) = workspace();
        for i in 0..LIST_FILES_CAP + 5 {
            fs::write(dir.path().join(format!("f{i:05}")), "").unwrap();
        }
        let out = call(&ListFiles, &ctx, json!({}));
        assert!(!out.is_error);
        assert_eq!(out.content.lines().count(), LIST_FILES_CAP + 1);
        assert!(
            out.content.contains("[5 more paths not shown"),
            "{}",
            out.content
        );
    }
}
