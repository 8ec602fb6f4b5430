//! `edit_file`: hrns-core's exact-match edit, written back atomically inside the workspace.

use super::write_file::{resolve_for_write, write_atomically};
use crate::tool::{Files, ToolContext};
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{EDIT_FILE, EditFileArgs};
use hrns_core::tool::files::{
    FsOp, check_edit_size, edit_missing_file, edit_text, edited_file, editor_error, fs_error,
    require_file,
};
use std::io::ErrorKind;

/// The `edit_file` tool.
///
/// Confined like [`WriteFile`](super::WriteFile), symbolic links included. A regular file of
/// at most [`MAX_EDIT_BYTES`](hrns_core::tool::files::MAX_EDIT_BYTES) is read whole and edited
/// by [`edit_text`] (UTF-8 text only; exactly one match unless `replace_all`; zero or several
/// matches are errors that say so, and leave the file alone), then written back atomically
/// with its permissions kept. With [`Files::Editor`] the editor's text is edited, under the
/// same checks and cap, and written back through the editor.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditFile;

builtin_tool!(EditFile: EDIT_FILE, EditFileArgs => edit);

fn edit(_: &EditFile, args: EditFileArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolOutput> {
    let shown = args.path.as_str();
    let real = resolve_for_write(ctx, shown)?;
    ctx.sandbox.check_real(
        EDIT_FILE,
        hrns_core::tool::protect::FileAccess::Write,
        shown,
        &real,
    )?;
    let metadata = match std::fs::metadata(&real) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == ErrorKind::NotFound => return Err(edit_missing_file(shown)),
        Err(e) => return Err(fs_error(FsOp::Read, shown, &e)),
    };
    require_file(FsOp::Write, shown, metadata.file_type().into())?;
    if let Files::Editor(editor) = &ctx.files {
        // The editor's buffer is edited (unsaved changes included) and handed back to it.
        let text = editor
            .read_text(&real)
            .map_err(|reason| editor_error(FsOp::Read, shown, &reason))?;
        check_edit_size(shown, text.len() as u64)?;
        let edited = edit_text(shown, text.into_bytes(), &args)?;
        editor
            .write_text(&real, &edited.content)
            .map_err(|reason| editor_error(FsOp::Write, shown, &reason))?;
        return Ok(edited_file(shown, edited.replacements));
    }
    check_edit_size(shown, metadata.len())?;
    let bytes = std::fs::read(&real).map_err(|e| fs_error(FsOp::Read, shown, &e))?;
    let edited = edit_text(shown, bytes, &args)?;
    write_atomically(
        &real,
        edited.content.as_bytes(),
        Some(metadata.permissions()),
    )
    .map_err(|e| fs_error(FsOp::Write, shown, &e))?;
    Ok(edited_file(shown, edited.replacements))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_util::{call, workspace};
    use serde_json::json;
    use std::fs;
    use std::os::unix::fs::{PermissionsExt as _, symlink};

    #[test]
    fn replaces_one_or_all_matches() {
        let (dir, ctx) = workspace();
        let file = dir.path().join("main.rs");
        fs::write(&file, "fn a() {}\nfn b() {}\n").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
        let out = call(
            &EditFile,
            &ctx,
            json!({"path": "main.rs", "old_string": "fn b", "new_string": "fn c"}),
        );
        assert_eq!(
            out,
            ToolOutput::ok("edited 'main.rs': replaced 1 occurrence")
        );
        assert_eq!(fs::read_to_string(&file).unwrap(), "fn a() {}\nfn c() {}\n");
        assert_eq!(
            fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o640
        );

        let out = call(
            &EditFile,
            &ctx,
            json!({"path": "main.rs", "old_string": "fn", "new_string": "pub fn", "replace_all": true}),
        );
        assert_eq!(out.content, "edited 'main.rs': replaced 2 occurrences");
        assert_eq!(
            fs::read_to_string(&file).unwrap(),
            "pub fn a() {}\npub fn c() {}\n"
        );
    }

    #[test]
    fn zero_or_several_matches_leave_the_file_alone() {
        let (dir, ctx) = workspace();
        let file = dir.path().join("f.txt");
        fs::write(&file, "x\nfoo\nfoo\n").unwrap();
        let out = call(
            &EditFile,
            &ctx,
            json!({"path": "f.txt", "old_string": "foo", "new_string": "bar"}),
        );
        assert!(out.is_error);
        assert!(
            out.content.contains("found 2 times (at lines 2, 3)"),
            "{}",
            out.content
        );
        let out = call(
            &EditFile,
            &ctx,
            json!({"path": "f.txt", "old_string": "nope", "new_string": "bar"}),
        );
        assert!(out.is_error);
        assert!(out.content.contains("was not found"), "{}", out.content);
        let out = call(
            &EditFile,
            &ctx,
            json!({"path": "f.txt", "old_string": "", "new_string": "bar"}),
        );
        assert!(out.is_error && out.content.contains("old_string is empty"));
        assert_eq!(fs::read_to_string(&file).unwrap(), "x\nfoo\nfoo\n");
    }

    #[test]
    fn refuses_binary_missing_directories_and_escapes() {
        let (dir, ctx) = workspace();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("s.txt");
        fs::write(&secret, "secret").unwrap();
        symlink(&secret, dir.path().join("link")).unwrap();
        symlink(outside.path(), dir.path().join("out")).unwrap();
        fs::write(dir.path().join("bin"), b"ab\0secret").unwrap();
        let mut late_latin1 = "a\n".repeat(10_000).into_bytes();
        late_latin1.extend_from_slice(b"secret caf\xe9\n");
        fs::write(dir.path().join("latin1.txt"), &late_latin1).unwrap();
        fs::create_dir(dir.path().join("d")).unwrap();
        let cases = [
            ("bin", "not a text file"),
            ("latin1.txt", "not a text file"),
            (
                "missing.txt",
                "does not exist; to create a file, use write_file",
            ),
            ("d", "is a directory"),
            ("link", "symbolic link"),
            ("out/s.txt", "symbolic link"),
            ("../s.txt", "outside the workspace"),
            (secret.to_str().unwrap(), "outside the workspace"),
            ("a\u{0}", "NUL byte"),
        ];
        for (path, expected) in cases {
            let out = call(
                &EditFile,
                &ctx,
                json!({"path": path, "old_string": "secret", "new_string": "pwned"}),
            );
            assert!(out.is_error, "{path}");
            assert!(out.content.contains(expected), "{path}: {}", out.content);
        }
        assert_eq!(fs::read_to_string(&secret).unwrap(), "secret");
        assert_eq!(fs::read(dir.path().join("bin")).unwrap(), b"ab\0secret");
    }
}
