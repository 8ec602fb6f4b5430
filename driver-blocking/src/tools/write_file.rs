//! `write_file`: an atomic write confined to the workspace, symbolic links included.

use crate::tool::{Files, ToolContext};
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{WRITE_FILE, WriteFileArgs};
use hrns_core::tool::files::{FsOp, editor_error, fs_error, require_file, wrote_file};
use hrns_core::tool::path::WriteTarget;
use std::fs::Permissions;
use std::io::{ErrorKind, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// The `write_file` tool.
///
/// The path must lead inside the workspace, also after following symbolic links
/// ([`WriteTarget`]). Missing parent directories are created; the content goes to a
/// temporary file in the target's directory, which is synced and renamed over the target, so
/// readers see the old file or the new one, never half of it. Only regular files are replaced
/// (a directory, device, pipe or socket in the way is refused). An overwritten file keeps its
/// permissions; a new one gets the usual `0o666` less the umask. With [`Files::Editor`] the
/// same checks run, then the editor writes the text.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFile;

builtin_tool!(WriteFile: WRITE_FILE, WriteFileArgs => write);

fn write(_: &WriteFile, args: WriteFileArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolOutput> {
    let shown = args.path.as_str();
    let real = resolve_for_write(ctx, shown)?;
    ctx.sandbox.check_real(
        WRITE_FILE,
        hrns_core::tool::protect::FileAccess::Write,
        shown,
        &real,
    )?;
    let permissions = match std::fs::metadata(&real) {
        Ok(metadata) => {
            require_file(FsOp::Write, shown, metadata.file_type().into())?;
            Some(metadata.permissions())
        }
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => return Err(fs_error(FsOp::Write, shown, &e)),
    };
    let created = permissions.is_none();
    if let Files::Editor(editor) = &ctx.files {
        // The editor writes (and creates) the file; its undo records the change.
        editor
            .write_text(&real, &args.content)
            .map_err(|reason| editor_error(FsOp::Write, shown, &reason))?;
        return Ok(wrote_file(shown, args.content.len(), created));
    }
    if let Some(parent) = real.parent() {
        std::fs::create_dir_all(parent).map_err(|e| fs_error(FsOp::CreateDirs, shown, &e))?;
    }
    write_atomically(&real, args.content.as_bytes(), permissions)
        .map_err(|e| fs_error(FsOp::Write, shown, &e))?;
    Ok(wrote_file(shown, args.content.len(), created))
}

/// Returns the real path to write for `requested`: confined to the workspace, with symbolic
/// links on the way resolved and checked ([`WriteTarget`]), or the error result to return.
pub(super) fn resolve_for_write(ctx: &ToolContext, requested: &str) -> Result<PathBuf, ToolOutput> {
    let mut target = WriteTarget::new(&ctx.workspace, requested)?;
    loop {
        match std::fs::canonicalize(target.probe()) {
            Ok(canonical) => return target.resolve(&canonical).map_err(ToolOutput::from),
            Err(e) if e.kind() == ErrorKind::NotFound && target.handle_missing() => {}
            Err(e) => return Err(fs_error(FsOp::Resolve, requested, &e)),
        }
    }
}

/// Replaces `path` with `bytes` atomically: a temporary file in the same directory, synced,
/// given `permissions` (or `0o666` less the umask), then renamed over `path`.
pub(super) fn write_atomically(
    path: &Path,
    bytes: &[u8],
    permissions: Option<Permissions>,
) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(".hrns-write-").suffix(".tmp");
    if permissions.is_none() {
        builder.permissions(Permissions::from_mode(0o666));
    }
    let mut temp = builder.tempfile_in(dir)?;
    temp.write_all(bytes)?;
    if let Some(permissions) = permissions {
        temp.as_file().set_permissions(permissions)?;
    }
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_util::{call, workspace};
    use serde_json::json;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn creates_with_parents_and_overwrites() {
        let (dir, ctx) = workspace();
        let out = call(
            &WriteFile,
            &ctx,
            json!({"path": "a/b/c.txt", "content": "hello\n"}),
        );
        assert_eq!(out, ToolOutput::ok("created 'a/b/c.txt' (6 bytes)"));
        assert_eq!(
            fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
            "hello\n"
        );
        let mode = fs::metadata(dir.path().join("a/b/c.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_ne!(mode & 0o044, 0, "not the 0600 of a temp file: {mode:o}");

        let out = call(
            &WriteFile,
            &ctx,
            json!({"path": "a/b/c.txt", "content": ""}),
        );
        assert_eq!(out, ToolOutput::ok("overwrote 'a/b/c.txt' (0 bytes)"));
        assert_eq!(fs::read(dir.path().join("a/b/c.txt")).unwrap(), b"");
        assert_eq!(
            entries(&dir.path().join("a/b")),
            ["c.txt"],
            "no temp files left"
        );
        let abs = ctx.workspace.join("abs.txt");
        let out = call(
            &WriteFile,
            &ctx,
            json!({"path": abs.to_str().unwrap(), "content": "x"}),
        );
        assert!(!out.is_error, "{}", out.content);
    }

    #[test]
    fn overwrite_keeps_permissions() {
        let (dir, ctx) = workspace();
        let script = dir.path().join("run.sh");
        fs::write(&script, "old").unwrap();
        fs::set_permissions(&script, Permissions::from_mode(0o750)).unwrap();
        let out = call(
            &WriteFile,
            &ctx,
            json!({"path": "run.sh", "content": "#!/bin/sh\n"}),
        );
        assert!(!out.is_error);
        let mode = fs::metadata(&script).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o750);
    }

    #[test]
    fn refuses_paths_outside_the_workspace() {
        let (dir, ctx) = workspace();
        let outside = tempfile::tempdir().unwrap();
        let outside_file = outside.path().join("x.txt");
        let cases = [
            json!({"path": "../escape.txt", "content": "x"}),
            json!({"path": "a/../../escape.txt", "content": "x"}),
            json!({"path": outside_file.to_str().unwrap(), "content": "x"}),
            json!({"path": "/etc/passwd", "content": "x"}),
        ];
        for args in cases {
            let out = call(&WriteFile, &ctx, args.clone());
            assert!(out.is_error, "{args}");
            assert!(
                out.content.contains("outside the workspace"),
                "{args}: {}",
                out.content
            );
        }
        assert!(!outside_file.exists());
        assert!(!dir.path().parent().unwrap().join("escape.txt").exists());
    }

    #[test]
    fn refuses_symlink_escapes() {
        let (dir, ctx) = workspace();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.txt");
        fs::write(&secret, "keep").unwrap();
        // A directory link leading out, a file link leading out, and a link in a link.
        symlink(outside.path(), dir.path().join("out")).unwrap();
        symlink(&secret, dir.path().join("secret-link")).unwrap();
        fs::create_dir(dir.path().join("inner")).unwrap();
        symlink("../out", dir.path().join("inner/up")).unwrap();
        for path in [
            "out/new.txt",
            "out/secret.txt",
            "out/deeper/new.txt",
            "secret-link",
            "inner/up/new.txt",
        ] {
            let out = call(&WriteFile, &ctx, json!({"path": path, "content": "pwned"}));
            assert!(out.is_error, "{path}");
            assert!(
                out.content.contains("symbolic link"),
                "{path}: {}",
                out.content
            );
        }
        assert_eq!(fs::read_to_string(&secret).unwrap(), "keep");
        assert_eq!(entries(outside.path()), ["secret.txt"]);
    }

    #[test]
    fn links_inside_the_workspace_are_followed() {
        let (dir, ctx) = workspace();
        fs::create_dir(dir.path().join("real")).unwrap();
        fs::write(dir.path().join("real/f.txt"), "old").unwrap();
        symlink("real", dir.path().join("alias")).unwrap();
        symlink("real/f.txt", dir.path().join("f-link")).unwrap();
        let out = call(
            &WriteFile,
            &ctx,
            json!({"path": "alias/new.txt", "content": "n"}),
        );
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(
            fs::read_to_string(dir.path().join("real/new.txt")).unwrap(),
            "n"
        );
        let out = call(
            &WriteFile,
            &ctx,
            json!({"path": "f-link", "content": "new"}),
        );
        assert_eq!(out.content, "overwrote 'f-link' (3 bytes)");
        assert_eq!(
            fs::read_to_string(dir.path().join("real/f.txt")).unwrap(),
            "new"
        );
        assert!(
            fs::symlink_metadata(dir.path().join("f-link"))
                .unwrap()
                .is_symlink()
        );
    }

    #[test]
    fn a_dangling_link_leading_out_is_replaced_not_followed() {
        let (dir, ctx) = workspace();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("created-outside.txt");
        symlink(&target, dir.path().join("dangling")).unwrap();
        let out = call(
            &WriteFile,
            &ctx,
            json!({"path": "dangling", "content": "x"}),
        );
        assert!(!out.is_error, "{}", out.content);
        assert!(!target.exists(), "nothing written outside");
        let meta = fs::symlink_metadata(dir.path().join("dangling")).unwrap();
        assert!(meta.is_file());
    }

    #[test]
    fn refuses_directories_nul_and_files_in_the_way() {
        let (dir, ctx) = workspace();
        fs::create_dir(dir.path().join("d")).unwrap();
        fs::write(dir.path().join("file"), "x").unwrap();
        let cases = [
            (json!({"path": "d", "content": "x"}), "is a directory"),
            (json!({"path": ".", "content": "x"}), "is a directory"),
            (json!({"path": "a\u{0}b", "content": "x"}), "NUL byte"),
            (json!({"path": "", "content": "x"}), "empty"),
            (
                json!({"path": "file/sub.txt", "content": "x"}),
                "not a directory",
            ),
            (json!({"path": "x"}), "missing required argument `content`"),
        ];
        for (args, expected) in cases {
            let out = call(&WriteFile, &ctx, args.clone());
            assert!(out.is_error, "{args}");
            assert!(out.content.contains(expected), "{args}: {}", out.content);
        }
    }
}
