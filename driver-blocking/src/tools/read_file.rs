//! `read_file`: a page of a text file, streamed through hrns-core's pager.

use crate::tool::{Files, ToolContext};
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{READ_FILE, ReadFileArgs};
use hrns_core::tool::files::{FsOp, editor_error, fs_error, require_file};
use hrns_core::tool::page::TextPager;
use hrns_core::tool::path::resolve;
use std::fs::File;
use std::io::{ErrorKind, Read};

/// Bytes read from the file at a time.
const CHUNK_BYTES: usize = 64 * 1024;

/// The `read_file` tool.
///
/// Reads any regular file the user can read (reads are not confined to the workspace; relative
/// paths start there). The file is streamed through [`TextPager`] in chunks, so memory is
/// bounded by the page even for a file of gigabytes, though the whole file is read to count
/// its lines. Binary files, directories and special files (devices, pipes, sockets) are
/// refused with a message. With [`Files::Editor`] the text is the editor's (its unsaved
/// buffer), paged the same way.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFile;

builtin_tool!(ReadFile: READ_FILE, ReadFileArgs => read);

fn read(_: &ReadFile, args: ReadFileArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolOutput> {
    let path = resolve(&ctx.workspace, &args.path)?;
    let shown = args.path.as_str();
    ctx.sandbox.check_file(READ_FILE, shown, &path)?;
    if let Files::Editor(editor) = &ctx.files {
        // The editor's buffer, unsaved changes included; a file it has but the disk does not
        // yet (a new buffer) is the editor's to answer for.
        match std::fs::metadata(&path) {
            Ok(metadata) => require_file(FsOp::Read, shown, metadata.file_type().into())?,
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(fs_error(FsOp::Read, shown, &e)),
        }
        let text = editor
            .read_text(&path)
            .map_err(|reason| editor_error(FsOp::Read, shown, &reason))?;
        let mut pager = TextPager::new(args.offset, args.limit);
        pager.feed(text.as_bytes());
        return Ok(pager.finish());
    }
    // Look before opening: opening a pipe would block until a writer appears.
    let metadata = std::fs::metadata(&path).map_err(|e| fs_error(FsOp::Read, shown, &e))?;
    require_file(FsOp::Read, shown, metadata.file_type().into())?;
    let mut file = File::open(&path).map_err(|e| fs_error(FsOp::Read, shown, &e))?;
    let mut pager = TextPager::new(args.offset, args.limit);
    let mut chunk = vec![0u8; CHUNK_BYTES];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                pager.feed(&chunk[..n]);
                if pager.is_binary() {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(fs_error(FsOp::Read, shown, &e)),
        }
    }
    Ok(pager.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_util::{call, workspace};
    use serde_json::json;
    use std::io::Write as _;
    use std::time::{Duration, Instant};

    #[test]
    fn reads_a_page_with_line_numbers() {
        let (dir, ctx) = workspace();
        let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.txt"), &text).unwrap();
        let out = call(&ReadFile, &ctx, json!({"path": "src/a.txt"}));
        assert!(!out.is_error);
        assert!(
            out.content.starts_with("     1\tline 1\n"),
            "{}",
            out.content
        );
        let out = call(
            &ReadFile,
            &ctx,
            json!({"path": "./src/../src/a.txt", "offset": 9, "limit": 1}),
        );
        assert_eq!(
            out.content,
            "     9\tline 9\n[lines 9-9 of 10; call read_file with offset=10 to continue]\n"
        );
        let out = call(&ReadFile, &ctx, json!({"path": "src/a.txt", "offset": 11}));
        assert!(out.is_error);
        assert!(out.content.contains("past the end"), "{}", out.content);
    }

    #[test]
    fn reads_outside_the_workspace_are_allowed() {
        let (dir, ctx) = workspace();
        let other = tempfile::tempdir().unwrap();
        let file = other.path().join("notes.md");
        std::fs::write(&file, "outside\n").unwrap();
        let out = call(&ReadFile, &ctx, json!({"path": file.to_str().unwrap()}));
        assert_eq!(out, ToolOutput::ok("     1\toutside\n"));
        // A relative path that climbs out starts at the workspace.
        std::fs::write(dir.path().join("x.txt"), "inside\n").unwrap();
        let name = dir.path().file_name().unwrap().to_str().unwrap();
        let climbing = format!("../{name}/x.txt");
        let out = call(&ReadFile, &ctx, json!({ "path": climbing }));
        assert_eq!(out.content, "     1\tinside\n");
    }

    #[test]
    fn refuses_bad_paths_directories_and_special_files() {
        let (dir, ctx) = workspace();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        let cases = [
            (json!({"path": ""}), "the path is empty"),
            (json!({"path": "a\u{0}b"}), "NUL byte"),
            (json!({"path": "missing.txt"}), "it does not exist"),
            (json!({"path": "d"}), "is a directory"),
            (json!({"path": "/dev/zero"}), "not a regular file"),
            (json!({"path": "/dev/null"}), "not a regular file"),
            (json!({"path": 7}), "expected a string"),
        ];
        for (args, expected) in cases {
            let out = call(&ReadFile, &ctx, args.clone());
            assert!(out.is_error, "{args}");
            assert!(out.content.contains(expected), "{args}: {}", out.content);
        }
    }

    #[test]
    fn refuses_binary_files() {
        let (dir, ctx) = workspace();
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend(std::iter::repeat_n(0u8, 100_000));
        std::fs::write(dir.path().join("image.png"), &png).unwrap();
        let out = call(&ReadFile, &ctx, json!({"path": "image.png"}));
        assert!(out.is_error);
        assert!(out.content.contains("binary"), "{}", out.content);
        std::fs::write(dir.path().join("latin1.txt"), b"caf\xe9\n").unwrap();
        let out = call(&ReadFile, &ctx, json!({"path": "latin1.txt"}));
        assert!(out.is_error && out.content.contains("binary"));
        std::fs::write(dir.path().join("empty.txt"), b"").unwrap();
        let out = call(&ReadFile, &ctx, json!({"path": "empty.txt"}));
        assert_eq!(out, ToolOutput::ok("(the file is empty)"));
    }

    #[test]
    fn a_page_of_a_50_mb_file_is_quick_and_small() {
        let (dir, ctx) = workspace();
        let block: String = (0..16_384).map(|i| format!("{i:>63}\n")).collect();
        assert_eq!(block.len(), 1 << 20);
        let path = dir.path().join("big.log");
        let mut file = std::io::BufWriter::new(File::create(&path).unwrap());
        for _ in 0..50 {
            file.write_all(block.as_bytes()).unwrap();
        }
        file.into_inner().unwrap().sync_all().unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 50 << 20);

        let started = Instant::now();
        let out = call(
            &ReadFile,
            &ctx,
            json!({"path": "big.log", "offset": 16_385, "limit": 3}),
        );
        let took = started.elapsed();
        assert!(!out.is_error, "{}", out.content);
        assert!(out.content.starts_with(" 16385\t"), "{}", out.content);
        assert!(
            out.content
                .contains("of 819200; call read_file with offset=16388"),
            "{}",
            out.content
        );
        assert!(out.content.len() < 1000);
        assert!(took < Duration::from_secs(10), "took {took:?}");

        let out = call(&ReadFile, &ctx, json!({"path": "big.log"}));
        assert!(out.content.len() < 200_000);
        assert!(
            out.content.contains("[lines 1-"),
            "a default page, with a note"
        );
    }
}
