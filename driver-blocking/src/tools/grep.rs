//! `grep`: ripgrep's searcher over an `ignore` walk, collected by hrns-core's [`GrepResults`].

use crate::safe_file::open_regular;
use crate::tool::ToolContext;
use crate::tools::walk::{Order, Skipped, walk};
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use hrns_core::file_refusal::is_kernel_tree;
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{GREP, GrepArgs};
use hrns_core::tool::files::{FsOp, fs_error, kernel_tree_refused};
use hrns_core::tool::grep::{GrepResults, LineKind, invalid_pattern};
use hrns_core::tool::path::resolve;
use std::path::Path;
use std::sync::PoisonError;

/// The `grep` tool.
///
/// Searches `path` (default the workspace root; searching is read-only, so any file or
/// directory the user can read is allowed) with `grep-regex` and `grep-searcher`, walking
/// directories as `list_files` does (`.gitignore` honoured, hidden files searched, `.git`
/// skipped, links not followed), in file-name order so the same tree gives the same result. A file holding a NUL byte is
/// binary and skipped; the search stops early when the call is cancelled.
#[derive(Debug, Clone, Copy, Default)]
pub struct Grep;

builtin_tool!(Grep: GREP, GrepArgs => grep);

fn grep(_: &Grep, args: GrepArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolOutput> {
    let shown = args.path.as_deref().unwrap_or(".");
    let target = resolve(&ctx.workspace, shown)?;
    ctx.sandbox.check_file(GREP, shown, &target)?;
    std::fs::metadata(&target).map_err(|e| fs_error(FsOp::Read, shown, &e))?;
    if std::fs::canonicalize(&target).is_ok_and(|real| is_kernel_tree(&real)) {
        return Err(kernel_tree_refused(GREP, shown));
    }
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(args.case_insensitive.unwrap_or(false))
        .line_terminator(Some(b'\n'))
        .build(&args.pattern)
        .map_err(|e| invalid_pattern(&args.pattern, &e.to_string()))?;
    let context = args.context_lines();
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .before_context(context)
        .after_context(context)
        .build();
    let mut results = GrepResults::new(&ctx.workspace, &target, &args)?;
    let skipped = Skipped::default();
    for entry in walk(&target, ctx, Order::ByName, &skipped) {
        if !entry.file_type().is_some_and(|t| t.is_file()) || !results.wants(entry.path()) {
            continue;
        }
        // Opened without blocking and searched only if still a regular file: the entry's
        // type was seen before, and the file may have been swapped for a FIFO since.
        let Ok((file, _)) = open_regular(entry.path()) else {
            continue;
        };
        let mut sink = Lines {
            path: entry.path(),
            results: &mut results,
            binary: false,
            ctx,
        };
        // An unreadable file is skipped, as ripgrep does.
        let _ = searcher.search_file(&matcher, &file, &mut sink);
        if sink.binary {
            results.skip_binary();
        }
    }
    for (path, refusal) in skipped
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        results.unread_ignore_file(path, refusal);
    }
    Ok(results.finish())
}

/// Hands the lines of one file to the results.
struct Lines<'a> {
    path: &'a Path,
    results: &'a mut GrepResults,
    binary: bool,
    ctx: &'a ToolContext,
}

impl Sink for Lines<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let first = mat.line_number().unwrap_or(0);
        for (i, line) in mat.lines().enumerate() {
            self.results
                .add(self.path, first + i as u64, line, LineKind::Match);
        }
        Ok(!self.ctx.cancel.is_cancelled())
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        let number = ctx.line_number().unwrap_or(0);
        self.results
            .add(self.path, number, ctx.bytes(), LineKind::Context);
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_util::{call, workspace};
    use serde_json::json;
    use std::fs;

    fn put(root: &Path, path: &str, bytes: &[u8]) {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }

    #[test]
    fn searches_the_tree_honouring_gitignore_and_skipping_binaries() {
        let (dir, ctx) = workspace();
        let root = dir.path();
        put(root, "src/main.rs", b"fn main() {\n    needle();\n}\n");
        put(
            root,
            "src/lib.rs",
            b"// Needle in caps\npub fn needle() {}\n",
        );
        put(root, "target/out.rs", b"needle in a build artefact\n");
        put(root, ".gitignore", b"target/\n");
        put(root, ".git/config", b"needle\n");
        put(root, "blob.bin", b"needle\0binary\n");
        let out = call(&Grep, &ctx, json!({"pattern": "needle"}));
        assert_eq!(
            out,
            ToolOutput::ok(
                "src/lib.rs:2: pub fn needle() {}\nsrc/main.rs:2:     needle();\n\
                 (1 binary files skipped)\n"
            )
        );
    }

    #[test]
    fn options_path_glob_case_and_context() {
        let (dir, ctx) = workspace();
        let root = dir.path();
        put(root, "a.txt", b"one\ntwo\nTarget\nfour\nfive\n");
        put(root, "b.md", b"target\n");
        let cases = [
            (
                json!({"pattern": "target", "path": "a.txt"}),
                "no matches\n",
            ),
            (
                json!({"pattern": "target", "path": "a.txt", "case_insensitive": true}),
                "a.txt:3: Target\n",
            ),
            (
                json!({"pattern": "(?i)target", "glob": "*.md"}),
                "b.md:1: target\n",
            ),
            (
                json!({"pattern": "Target", "context": 1}),
                "a.txt-2- two\na.txt:3: Target\na.txt-4- four\n",
            ),
        ];
        for (args, expected) in cases {
            assert_eq!(
                call(&Grep, &ctx, args.clone()),
                ToolOutput::ok(expected),
                "{args}"
            );
        }
    }

    #[test]
    fn bad_input_is_refused_clearly() {
        let (_dir, ctx) = workspace();
        let out = call(&Grep, &ctx, json!({"pattern": "fn("}));
        assert!(out.is_error);
        assert!(
            out.content.contains("invalid regular expression"),
            "{}",
            out.content
        );
        let out = call(&Grep, &ctx, json!({"pattern": "x", "path": "nope"}));
        assert!(out.is_error);
        assert!(out.content.contains("does not exist"), "{}", out.content);
        let out = call(&Grep, &ctx, json!({"pattern": "x", "glob": "[a"}));
        assert!(out.is_error);
        let out = call(&Grep, &ctx, json!({"path": "."}));
        assert!(out.is_error, "pattern is required");
    }

    #[test]
    fn very_long_lines_are_cut() {
        let (dir, ctx) = workspace();
        let mut line = "x".repeat(1_000_000);
        line.push_str("needle\n");
        put(dir.path(), "min.js", line.as_bytes());
        let out = call(&Grep, &ctx, json!({"pattern": "needle"}));
        assert!(!out.is_error);
        assert!(out.content.len() < 1000, "{}", out.content.len());
        assert!(out.content.contains("more characters)"));
    }
}
