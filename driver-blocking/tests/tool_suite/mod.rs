//! The built-in tools' suite: written once, run against both drivers' tools, so that the two
//! decide the same things and word their results the same. Each driver's test file implements
//! [`ToolHarness`] (how to call one of its built-in tools) and expands `tool_tests!` for it,
//! which defines a test for every case. The cases are hostile inputs as much as happy paths:
//! escapes, symbolic links, binary files, devices, never-ending commands, huge output, other
//! URL schemes. Each is quick.
#![allow(dead_code, unreachable_pub)]

use hrns_core::skill::Skill;
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{LIST_FILES_CAP, WEB_FETCH_MAX_BYTES, builtin_specs};
use hrns_core::tool::files::MAX_EDIT_BYTES;
use serde_json::{Value, json};
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::os::unix::fs::{PermissionsExt as _, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

mod grep;
pub use grep::*;

/// Calls one driver's built-in tools.
pub trait ToolHarness {
    /// Runs the built-in tool `name` with the raw JSON `arguments` in a workspace rooted at
    /// `root` (absolute and canonical), under `sandbox`. `load_skill` serves [`skills`].
    fn call_in(
        &self,
        root: &Path,
        sandbox: hrns_blocking::Sandbox,
        name: &str,
        arguments: &str,
    ) -> ToolOutput;

    /// [`ToolHarness::call_in`] under the library's default sandbox, with loopback allowed to
    /// `web_fetch` (the suite's web server is on loopback).
    fn call_raw(&self, root: &Path, name: &str, arguments: &str) -> ToolOutput {
        let mut sandbox = hrns_blocking::Sandbox::unconfined();
        sandbox.web_fetch = hrns_core::tool::fetch::PrivateAddresses::Allowed;
        self.call_in(root, sandbox, name, arguments)
    }
}

/// The skills `load_skill` serves in these cases.
pub fn skills() -> Vec<Skill> {
    vec![
        Skill::new("git", "use git well", "Commit often.\n"),
        Skill::new("empty", "nothing", ""),
        Skill::new("GIT", "shadowed by the first git", "never shown"),
    ]
}

/// A workspace in a temporary directory.
struct Ws<'h, H: ?Sized> {
    _dir: tempfile::TempDir,
    root: PathBuf,
    harness: &'h H,
}

fn workspace<H: ToolHarness + ?Sized>(harness: &H) -> Ws<'_, H> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    Ws {
        _dir: dir,
        root,
        harness,
    }
}

impl<H: ToolHarness + ?Sized> Ws<'_, H> {
    fn call(&self, name: &str, args: Value) -> ToolOutput {
        self.harness.call_raw(&self.root, name, &args.to_string())
    }

    fn put(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        path
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }
}

#[track_caller]
fn ok(out: &ToolOutput) -> &str {
    assert!(!out.is_error, "expected success: {}", out.content);
    &out.content
}

#[track_caller]
fn refused<'a>(out: &'a ToolOutput, says: &str) -> &'a str {
    assert!(out.is_error, "expected an error: {}", out.content);
    assert!(
        out.content.contains(says),
        "{:?} lacks {says:?}",
        out.content
    );
    &out.content
}

/// Whether the process `pid` exists and is not a zombie (a container's PID 1 may not reap).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| !s.trim_start().starts_with('Z'))
    })
}

/// Waits up to five seconds for the process `pid` to be gone.
fn gone(pid: &str) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    !alive(pid)
}

// ----- every tool -----

pub fn bad_arguments_are_results(h: &impl ToolHarness) {
    let ws = workspace(h);
    for spec in builtin_specs() {
        for raw in ["[]", "{\"nope\": 1}", "{", "\"x\""] {
            let out = h.call_raw(&ws.root, &spec.name, raw);
            assert!(out.is_error, "{} {raw}: {}", spec.name, out.content);
            assert!(out.content.starts_with(&spec.name), "{}", out.content);
        }
    }
    refused(
        &ws.call("read_file", json!({"file": "a"})),
        "unknown argument `file`",
    );
    refused(
        &ws.call("write_file", json!({"path": "a"})),
        "missing required argument `content`",
    );
    refused(
        &ws.call("run_command", json!({"command": 5})),
        "`command` is invalid",
    );
}

// ----- read_file -----

pub fn read_file_pages_text_and_refuses_the_rest(h: &impl ToolHarness) {
    let ws = workspace(h);
    ws.put("a.txt", "one\ntwo\nthree\n");
    let out = ws.call(
        "read_file",
        json!({"path": "a.txt", "offset": 2, "limit": 1}),
    );
    assert_eq!(
        ok(&out),
        "     2\ttwo\n[lines 2-2 of 3; call read_file with offset=3 to continue]\n"
    );
    let out = ws.call("read_file", json!({"path": "./x/../a.txt", "offset": 4}));
    assert_eq!(
        out,
        ToolOutput::error("offset 4 is past the end of the file, which has 3 lines")
    );
    ws.put("empty.txt", "");
    assert_eq!(
        ws.call("read_file", json!({"path": "empty.txt"})),
        ToolOutput::ok("(the file is empty)")
    );
    assert_eq!(
        ws.call("read_file", json!({"path": "missing.txt"})),
        ToolOutput::error(
            "cannot read 'missing.txt': it does not exist; list_files shows which files there are"
        )
    );
    std::fs::create_dir(ws.root.join("sub")).unwrap();
    assert_eq!(
        ws.call("read_file", json!({"path": "sub"})),
        ToolOutput::error("'sub' is a directory, not a file; list_files shows what is in it")
    );
    assert_eq!(
        ws.call("read_file", json!({"path": "/dev/zero"})),
        ToolOutput::error(
            "'/dev/zero' is not a regular file (it is a device, pipe or socket); only regular \
             files can be read"
        )
    );
    ws.put("img.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    refused(&ws.call("read_file", json!({"path": "img.png"})), "binary");
    ws.put("latin1.txt", b"caf\xe9\n");
    refused(
        &ws.call("read_file", json!({"path": "latin1.txt"})),
        "binary",
    );
    refused(&ws.call("read_file", json!({"path": "a\0b"})), "NUL");
    refused(
        &ws.call("read_file", json!({"path": ""})),
        "the path is empty",
    );
}

pub fn read_file_streams_files_of_any_size(h: &impl ToolHarness) {
    let ws = workspace(h);
    // A sparse file of zeros: refused as binary from its first bytes, not for its size.
    let big = std::fs::File::create(ws.root.join("big.bin")).unwrap();
    big.set_len(MAX_EDIT_BYTES + 1).unwrap();
    let started = Instant::now();
    refused(&ws.call("read_file", json!({"path": "big.bin"})), "binary");
    assert!(started.elapsed() < Duration::from_secs(5));
    // Four MiB of text: any page, with the number of lines, in bounded output.
    let block: String = (0..16_384).map(|i| format!("{i:>63}\n")).collect();
    ws.put("big.log", block.repeat(4));
    let out = ws.call(
        "read_file",
        json!({"path": "big.log", "offset": 16_385, "limit": 2}),
    );
    let expected = format!(
        "{:>6}\t{:>63}\n{:>6}\t{:>63}\n[lines 16385-16386 of 65536; call read_file with \
         offset=16387 to continue]\n",
        16_385, 0, 16_386, 1
    );
    assert_eq!(ok(&out), expected);
    let out = ws.call("read_file", json!({"path": "big.log"}));
    assert!(ok(&out).len() < 200_000);
    // Reads are not confined to the workspace.
    let other = tempfile::tempdir().unwrap();
    let notes = other.path().join("notes.md");
    std::fs::write(&notes, "outside\n").unwrap();
    let out = ws.call("read_file", json!({"path": notes.to_str().unwrap()}));
    assert_eq!(out, ToolOutput::ok("     1\toutside\n"));
}

// ----- list_files -----

pub fn list_files_honours_gitignore_and_lists_hidden_files(h: &impl ToolHarness) {
    let ws = workspace(h);
    ws.put(".gitignore", "target/\n*.log\n!keep.log\n");
    for path in [
        "Cargo.toml",
        "src/main.rs",
        "src/deep/mod.rs",
        "target/debug/out",
        "debug.log",
        "keep.log",
        ".git/HEAD",
        ".github/ci.yml",
        ".env",
        "vendor/dep/.git",
    ] {
        ws.put(path, "");
    }
    assert_eq!(
        ws.call("list_files", json!({})),
        ToolOutput::ok(
            ".env\n.github/ci.yml\n.gitignore\nCargo.toml\nkeep.log\nsrc/deep/mod.rs\n\
             src/main.rs\n"
        )
    );
    let cases = [
        (
            json!({"pattern": "**/*.rs"}),
            "src/deep/mod.rs\nsrc/main.rs\n",
        ),
        (json!({"pattern": "*.{rs,toml}"}), "Cargo.toml\n"),
        (json!({"dir": "src", "pattern": "*.rs"}), "src/main.rs\n"),
        (json!({"dir": "./src/deep/"}), "src/deep/mod.rs\n"),
        (json!({"pattern": "*.py"}), "no files matched"),
    ];
    for (args, expected) in cases {
        assert_eq!(
            ws.call("list_files", args.clone()),
            ToolOutput::ok(expected),
            "{args}"
        );
    }
    refused(
        &ws.call("list_files", json!({"pattern": "src/[ab"})),
        "invalid glob pattern 'src/[ab': a '[' has no closing ']'",
    );
    assert_eq!(
        ws.call("list_files", json!({"dir": "Cargo.toml"})),
        ToolOutput::error(
            "'Cargo.toml' is a file, not a directory; read it with read_file, or list its \
             directory"
        )
    );
    assert_eq!(
        ws.call("list_files", json!({"dir": "nope"})),
        ToolOutput::error(
            "cannot list 'nope': it does not exist; list_files shows which files there are"
        )
    );
}

pub fn list_files_lists_links_without_following_them(h: &impl ToolHarness) {
    let ws = workspace(h);
    let other = tempfile::tempdir().unwrap();
    std::fs::create_dir(other.path().join("deep")).unwrap();
    std::fs::write(other.path().join("deep/secret.txt"), "x").unwrap();
    symlink(other.path(), ws.root.join("link")).unwrap();
    assert_eq!(ws.call("list_files", json!({})), ToolOutput::ok("link\n"));
    // Outside the workspace, paths are absolute.
    let other_dir = other.path().canonicalize().unwrap();
    let out = ws.call("list_files", json!({"dir": other_dir.to_str().unwrap()}));
    assert_eq!(
        ok(&out),
        format!("{}\n", other_dir.join("deep/secret.txt").display())
    );
}

pub fn list_files_caps_long_listings(h: &impl ToolHarness) {
    let ws = workspace(h);
    for i in 0..LIST_FILES_CAP + 5 {
        ws.put(&format!("f/{i:05}"), "");
    }
    let out = ws.call("list_files", json!({"dir": "f"}));
    let text = ok(&out);
    assert_eq!(text.lines().count(), LIST_FILES_CAP + 1);
    assert_eq!(
        text.lines().last().unwrap(),
        "[5 more paths not shown; showing 1000 of 1005; narrow the listing with dir or pattern]"
    );
}

// ----- write_file and edit_file -----

pub fn write_file_creates_replaces_and_keeps_permissions(h: &impl ToolHarness) {
    let ws = workspace(h);
    let out = ws.call(
        "write_file",
        json!({"path": "new/dir/a.txt", "content": "hi"}),
    );
    assert_eq!(out, ToolOutput::ok("created 'new/dir/a.txt' (2 bytes)"));
    assert_eq!(ws.read("new/dir/a.txt"), "hi");
    let mode = std::fs::metadata(ws.root.join("new/dir/a.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_ne!(mode & 0o044, 0, "not the 0600 of a temp file: {mode:o}");
    let script = ws.put("run.sh", "old");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    let out = ws.call("write_file", json!({"path": "run.sh", "content": "new"}));
    assert_eq!(out, ToolOutput::ok("overwrote 'run.sh' (3 bytes)"));
    assert_eq!(ws.read("run.sh"), "new");
    let mode = std::fs::metadata(&script).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o750);
    let out = ws.call("write_file", json!({"path": "run.sh", "content": "x"}));
    assert_eq!(out.content, "overwrote 'run.sh' (1 byte)");
    // Nothing but the files themselves is left behind.
    for dir in [ws.root.clone(), ws.root.join("new/dir")] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let name = entry.unwrap().file_name();
            assert!(!name.to_string_lossy().contains("tmp"), "{name:?}");
        }
    }
}

pub fn write_file_replaces_only_regular_files(h: &impl ToolHarness) {
    let ws = workspace(h);
    std::fs::create_dir(ws.root.join("d")).unwrap();
    ws.put("file", "x");
    assert_eq!(
        ws.call("write_file", json!({"path": "d", "content": "x"})),
        ToolOutput::error("'d' is a directory, not a file; list_files shows what is in it")
    );
    refused(
        &ws.call("write_file", json!({"path": ".", "content": "x"})),
        "is a directory",
    );
    assert_eq!(
        ws.call(
            "write_file",
            json!({"path": "file/sub.txt", "content": "x"})
        ),
        ToolOutput::error(
            "cannot resolve 'file/sub.txt': a component of the path is a file, not a directory"
        )
    );
    let made_fifo = Command::new("mkfifo")
        .arg(ws.root.join("pipe"))
        .status()
        .is_ok_and(|s| s.success());
    if made_fifo {
        assert_eq!(
            ws.call("write_file", json!({"path": "pipe", "content": "x"})),
            ToolOutput::error(
                "'pipe' is not a regular file (it is a device, pipe or socket); only regular \
                 files can be written"
            )
        );
    }
}

pub fn writes_cannot_escape_the_workspace(h: &impl ToolHarness) {
    let ws = workspace(h);
    let outside = tempfile::tempdir().unwrap();
    let outside_path = outside.path().canonicalize().unwrap();
    symlink(&outside_path, ws.root.join("link")).unwrap();
    let victim = outside_path.join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    symlink(&victim, ws.root.join("victim-link")).unwrap();
    std::fs::create_dir(ws.root.join("inner")).unwrap();
    symlink("../link", ws.root.join("inner/up")).unwrap();
    let target = victim.display().to_string();
    for path in [
        "../escape.txt",
        "a/../../escape.txt",
        &target,
        "/etc/passwd",
    ] {
        let out = ws.call("write_file", json!({"path": path, "content": "x"}));
        refused(&out, "outside the workspace");
        let args = json!({"path": path, "old_string": "precious", "new_string": "gone"});
        refused(&ws.call("edit_file", args), "outside the workspace");
    }
    for path in [
        "link/victim.txt",
        "link/new/file.txt",
        "victim-link",
        "inner/up/new.txt",
    ] {
        let out = ws.call("write_file", json!({"path": path, "content": "x"}));
        refused(&out, "leads through a symbolic link to");
        let args = json!({"path": path, "old_string": "precious", "new_string": "gone"});
        refused(&ws.call("edit_file", args), "symbolic link");
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let names: Vec<_> = std::fs::read_dir(&outside_path).unwrap().collect();
    assert_eq!(names.len(), 1, "nothing created outside");
}

pub fn links_inside_the_workspace_are_written_through(h: &impl ToolHarness) {
    let ws = workspace(h);
    ws.put("real/t.txt", "a");
    symlink("real", ws.root.join("alias")).unwrap();
    symlink("real/t.txt", ws.root.join("t-link")).unwrap();
    let out = ws.call(
        "write_file",
        json!({"path": "alias/new.txt", "content": "n"}),
    );
    assert_eq!(out, ToolOutput::ok("created 'alias/new.txt' (1 byte)"));
    assert_eq!(ws.read("real/new.txt"), "n");
    let out = ws.call("write_file", json!({"path": "t-link", "content": "b"}));
    assert_eq!(out, ToolOutput::ok("overwrote 't-link' (1 byte)"));
    assert_eq!(ws.read("real/t.txt"), "b");
    let edit = json!({"path": "t-link", "old_string": "b", "new_string": "c"});
    assert_eq!(
        ws.call("edit_file", edit),
        ToolOutput::ok("edited 't-link': replaced 1 occurrence")
    );
    assert_eq!(ws.read("real/t.txt"), "c");
    let link = std::fs::symlink_metadata(ws.root.join("t-link")).unwrap();
    assert!(link.is_symlink(), "the link is kept");
    // A dangling link leading out is replaced, not followed.
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("created-outside.txt");
    symlink(&target, ws.root.join("dangling")).unwrap();
    let out = ws.call("write_file", json!({"path": "dangling", "content": "x"}));
    assert_eq!(out, ToolOutput::ok("created 'dangling' (1 byte)"));
    assert!(!target.exists(), "nothing written outside");
    let meta = std::fs::symlink_metadata(ws.root.join("dangling")).unwrap();
    assert!(meta.is_file());
}

pub fn edit_file_replaces_exact_text_only(h: &impl ToolHarness) {
    let ws = workspace(h);
    let file = ws.put("a.rs", "fn a() {}\nfn b() {}\nfn b() {}\n");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let edit = |old: &str, new: &str, all: bool| json!({"path": "a.rs", "old_string": old, "new_string": new, "replace_all": all});
    let out = ws.call("edit_file", edit("fn a", "fn z", false));
    assert_eq!(out, ToolOutput::ok("edited 'a.rs': replaced 1 occurrence"));
    let out = ws.call("edit_file", edit("fn b", "fn y", false));
    refused(
        &out,
        "'a.rs' was not changed: old_string was found 2 times (at lines 2, 3)",
    );
    let out = ws.call("edit_file", edit("fn q", "fn y", false));
    refused(&out, "'a.rs' was not changed: old_string was not found");
    let out = ws.call("edit_file", edit("fn b", "fn y", true));
    assert_eq!(out, ToolOutput::ok("edited 'a.rs': replaced 2 occurrences"));
    assert_eq!(ws.read("a.rs"), "fn z() {}\nfn y() {}\nfn y() {}\n");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
}

pub fn edit_file_refuses_what_it_cannot_edit(h: &impl ToolHarness) {
    let ws = workspace(h);
    ws.put("bin", b"ab\0cd");
    let mut late = "a\n".repeat(10_000).into_bytes();
    late.extend_from_slice(b"caf\xe9\n");
    ws.put("latin1.txt", &late);
    std::fs::create_dir(ws.root.join("d")).unwrap();
    let big = std::fs::File::create(ws.root.join("big.txt")).unwrap();
    big.set_len(MAX_EDIT_BYTES + 1).unwrap();
    let edit = |path: &str| json!({"path": path, "old_string": "a", "new_string": "b"});
    assert_eq!(
        ws.call("edit_file", edit("bin")),
        ToolOutput::error(
            "'bin' is not a text file (it has NUL bytes or is not valid UTF-8); edit_file only \
             edits text files"
        )
    );
    refused(&ws.call("edit_file", edit("latin1.txt")), "not a text file");
    assert_eq!(
        ws.call("edit_file", edit("gone.rs")),
        ToolOutput::error("'gone.rs' does not exist; to create a file, use write_file")
    );
    refused(&ws.call("edit_file", edit("d")), "'d' is a directory");
    refused(
        &ws.call("edit_file", edit("big.txt")),
        "more than the 64 MiB edit_file loads",
    );
    assert_eq!(std::fs::read(ws.root.join("bin")).unwrap(), b"ab\0cd");
}

// ----- run_command -----

pub fn run_command_reports_status_and_both_streams(h: &impl ToolHarness) {
    let ws = workspace(h);
    let out = ws.call(
        "run_command",
        json!({"command": "echo out; echo err >&2; exit 3"}),
    );
    assert_eq!(
        out,
        ToolOutput::error("exit code: 3\n--- stdout ---\nout\n--- stderr ---\nerr\n")
    );
    ws.put("marker", "");
    let out = ws.call("run_command", json!({"command": "pwd; ls; cat; echo done"}));
    let expected = format!(
        "exit code: 0\n--- stdout ---\n{}\nmarker\ndone\n--- stderr (empty) ---\n",
        ws.root.display()
    );
    assert_eq!(
        out,
        ToolOutput::ok(expected),
        "in the workspace, stdin empty"
    );
    let out = ws.call("run_command", json!({"command": "kill -TERM $$"}));
    refused(&out, "killed by signal 15 (SIGTERM)");
    let out = ws.call(
        "run_command",
        json!({"command": "definitely-not-a-command-hrns"}),
    );
    refused(&out, "exit code: 127");
}

pub fn a_never_ending_command_is_killed_with_its_group(h: &impl ToolHarness) {
    let ws = workspace(h);
    let started = Instant::now();
    let command = "sleep 1000 & echo $! > bg.pid; echo started; sleep 1000";
    let out = ws.call(
        "run_command",
        json!({"command": command, "timeout_secs": 1}),
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let text = refused(&out, "killed after timeout of 1 s");
    assert!(text.contains("--- stdout ---\nstarted\n"), "{text}");
    assert!(
        gone(&ws.read("bg.pid")),
        "the background sleep was killed with the group"
    );
}

pub fn background_processes_holding_the_output_are_killed(h: &impl ToolHarness) {
    let ws = workspace(h);
    let started = Instant::now();
    let command = "sleep 1000 & echo $! > bg.pid; echo done";
    let out = ws.call(
        "run_command",
        json!({"command": command, "timeout_secs": 60}),
    );
    assert_eq!(
        out,
        ToolOutput::ok("exit code: 0\n--- stdout ---\ndone\n--- stderr (empty) ---\n")
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        gone(&ws.read("bg.pid")),
        "it held the pipes, so it was killed"
    );
    // With its output redirected, a background process outlives the call.
    let command = "sleep 30 > /dev/null 2>&1 & echo $! > kept.pid; echo ok";
    let out = ws.call("run_command", json!({"command": command}));
    assert!(ok(&out).contains("ok"));
    let kept = ws.read("kept.pid");
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        alive(&kept),
        "a process that let go of the pipes keeps running"
    );
    let _ = Command::new("kill").args(["-9", kept.trim()]).status();
}

pub fn a_flood_of_output_is_cut_to_head_and_tail(h: &impl ToolHarness) {
    let ws = workspace(h);
    let started = Instant::now();
    let command = "echo FIRST; head -c 100000000 /dev/zero | tr '\\0' x; echo; echo LAST";
    let out = ws.call("run_command", json!({"command": command}));
    let text = ok(&out);
    assert!(text.starts_with("exit code: 0\n--- stdout ---\nFIRST\n"));
    assert!(
        text.ends_with("LAST\n--- stderr (empty) ---\n"),
        "keeps the tail"
    );
    assert!(text.len() < 31_000, "{} bytes kept", text.len());
    assert!(text.contains("bytes omitted ...]"), "the cut is marked");
    assert!(started.elapsed() < Duration::from_secs(30));
}

// ----- web_fetch -----

/// A tiny HTTP/1.1 server on 127.0.0.1: `/text`, `/png`, `/big` (6 MiB), `/to-file`
/// (redirects to a file URL), `/loop` (redirects to itself), `/moved` (redirects to `text`),
/// and 404 for the rest. Returns its base URL.
fn web_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).is_err() {
                    return;
                }
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let path = request_line.split(' ').nth(1).unwrap_or("/");
                let (status, headers, body): (&str, &str, Vec<u8>) = match path {
                    "/text" => (
                        "200 OK",
                        "content-type: text/plain\r\n",
                        b"hello web".to_vec(),
                    ),
                    "/png" => (
                        "200 OK",
                        "content-type: image/png\r\n",
                        b"\x89PNG\0\0".to_vec(),
                    ),
                    "/big" => (
                        "200 OK",
                        "content-type: text/plain\r\n",
                        vec![b'a'; 6 << 20],
                    ),
                    "/to-file" => ("302 Found", "location: file:///etc/passwd\r\n", Vec::new()),
                    "/loop" => ("302 Found", "location: /loop\r\n", Vec::new()),
                    "/moved" => ("301 Moved", "location: text\r\n", Vec::new()),
                    "/away" => (
                        "302 Found",
                        "location: http://elsewhere.invalid/?k=1\r\n",
                        Vec::new(),
                    ),
                    _ => (
                        "404 Not Found",
                        "content-type: text/plain\r\n",
                        b"no".to_vec(),
                    ),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\n{headers}content-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                // The client may stop reading a large body; a failed write is expected then.
                let stream = reader.get_mut();
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&body);
            });
        }
    });
    base
}

pub fn web_fetch_gets_text_and_follows_checked_redirects(h: &impl ToolHarness) {
    let ws = workspace(h);
    let base = web_server();
    let fetch = |path: &str| ws.call("web_fetch", json!({"url": format!("{base}{path}")}));
    assert_eq!(
        fetch("/text"),
        ToolOutput::ok("HTTP 200, text/plain, 9 bytes\n\nhello web")
    );
    assert_eq!(
        fetch("/moved"),
        ToolOutput::ok("HTTP 200, text/plain, 9 bytes\n\nhello web")
    );
    assert_eq!(
        fetch("/nothing"),
        ToolOutput::error("HTTP 404, text/plain, 2 bytes\n\nno")
    );
    refused(&fetch("/png"), "the response is binary (image/png)");
    let out = fetch("/big");
    let text = ok(&out);
    assert!(text.starts_with(&format!(
        "HTTP 200, text/plain, {WEB_FETCH_MAX_BYTES} bytes (body cut)"
    )));
    assert!(text.ends_with(&format!(
        "[the body was cut at {WEB_FETCH_MAX_BYTES} bytes]"
    )));
    assert_eq!(
        fetch("/to-file"),
        ToolOutput::error(format!(
            "fetching {base}/to-file failed: it redirects to 'file:///etc/passwd', which \
             web_fetch does not follow: the url scheme 'file' is not supported; web_fetch only \
             fetches http and https URLs"
        ))
    );
    assert_eq!(
        fetch("/loop"),
        ToolOutput::error(format!(
            "fetching {base}/loop failed: gave up after 5 redirects; the server may redirect \
             in a loop"
        ))
    );
}

pub fn web_fetch_without_network_follows_redirects_to_listed_hosts_only(h: &impl ToolHarness) {
    use hrns_core::sandbox::{WebFetchNetwork, WebFetchPolicy};
    let ws = workspace(h);
    let base = web_server();
    let fetch = |path: &str, network: WebFetchNetwork| {
        let mut sandbox = hrns_blocking::Sandbox::unconfined();
        sandbox.web_fetch = hrns_core::tool::fetch::PrivateAddresses::Allowed;
        sandbox.fetch_policy = WebFetchPolicy {
            network,
            allow: vec!["127.0.0.1".into()],
        };
        let args = json!({"url": format!("{base}{path}")}).to_string();
        h.call_in(&ws.root, sandbox, "web_fetch", &args)
    };
    assert_eq!(
        fetch("/moved", WebFetchNetwork::Closed),
        ToolOutput::ok("HTTP 200, text/plain, 9 bytes\n\nhello web"),
        "a redirect on the listed host is followed"
    );
    assert_eq!(
        fetch("/away", WebFetchNetwork::Closed),
        ToolOutput::error(format!(
            "web_fetch: {base}/away redirects to http://elsewhere.invalid/?k=1, which is not on \
             \"webFetchAllow\"; not followed, since the sandbox keeps commands off the network. \
             Call web_fetch with that URL if you need it (it is decided like any other)."
        ))
    );
}

pub fn the_file_tools_leave_git_and_hrns_files_alone(h: &impl ToolHarness) {
    use hrns_core::tool::protect::{GitWrites, ProtectedPaths};
    let ws = workspace(h);
    ws.put(".git/HEAD", "ref: refs/heads/main\n");
    ws.put(".git/config", "[core]\n");
    ws.put("hrns/config.json", "{\"key\": \"HRNS-OWN-MARKER\"}");
    ws.put("src/a.rs", "fn a() {}\n");
    let call = |git: GitWrites, name: &str, args: Value| {
        let mut sandbox = hrns_blocking::Sandbox::unconfined();
        sandbox.protected = ProtectedPaths::new(vec![ws.root.join("hrns")], Vec::new(), git);
        h.call_in(&ws.root, sandbox, name, &args.to_string())
    };
    let refused_git = GitWrites::Refused;
    let hook = json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"});
    refused(
        &call(refused_git, "write_file", hook.clone()),
        "write_file: refused .git/hooks/pre-commit: it is inside a git directory",
    );
    assert!(!ws.root.join(".git/hooks").exists());
    refused(
        &call(
            refused_git,
            "edit_file",
            json!({"path": ".git/config", "old_string": "[core]", "new_string": "[x]"}),
        ),
        "edit_file: refused .git/config: it is inside a git directory",
    );
    assert_eq!(ws.read(".git/config"), "[core]\n");
    assert_eq!(
        ok(&call(
            refused_git,
            "read_file",
            json!({"path": ".git/HEAD"})
        )),
        "     1\tref: refs/heads/main\n",
        "reading .git is fine"
    );
    for (name, args) in [
        ("read_file", json!({"path": "hrns/config.json"})),
        ("read_file", json!({"path": "src/../hrns/config.json"})),
        ("list_files", json!({"dir": "hrns"})),
        ("grep", json!({"pattern": "x", "path": "hrns"})),
        (
            "write_file",
            json!({"path": "hrns/config.json", "content": "{}"}),
        ),
    ] {
        refused(
            &call(GitWrites::Allowed, name, args.clone()),
            "it is part of hrns's own configuration or state",
        );
    }
    let listed = call(refused_git, "list_files", json!({}));
    assert!(!ok(&listed).contains("hrns/"), "{}", listed.content);
    let found = call(refused_git, "grep", json!({"pattern": "HRNS-OWN-MARKER"}));
    assert!(!found.content.contains("config.json"), "{}", found.content);
    assert!(
        ok(&call(GitWrites::Allowed, "write_file", hook)).starts_with("created"),
        "sandboxWritableGit allows it"
    );
}

pub fn web_fetch_refuses_other_schemes_before_any_io(h: &impl ToolHarness) {
    let ws = workspace(h);
    let cases = [
        (
            "file:///etc/passwd",
            "the url scheme 'file' is not supported",
        ),
        (
            "ftp://example.com/x",
            "the url scheme 'ftp' is not supported",
        ),
        (
            "javascript:alert(1)",
            "the url scheme 'javascript' is not supported",
        ),
        ("http:///etc/passwd", "has no host"),
        ("example.com", "the url 'example.com' has no scheme"),
        ("", "the url is empty"),
    ];
    for (url, expected) in cases {
        let out = ws.call("web_fetch", json!({ "url": url }));
        refused(&out, expected);
        assert!(!out.content.contains("root:"), "nothing was read");
    }
    // A port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    refused(
        &ws.call("web_fetch", json!({ "url": url })),
        &format!("fetching {url} failed: "),
    );
}

// ----- load_skill -----

pub fn load_skill_returns_the_body_of_known_skills(h: &impl ToolHarness) {
    let ws = workspace(h);
    for name in ["git", "GIT", " git "] {
        assert_eq!(
            ws.call("load_skill", json!({ "name": name })),
            ToolOutput::ok("Commit often.\n"),
            "{name:?}"
        );
    }
    let out = ws.call("load_skill", json!({"name": "empty"}));
    assert_eq!(
        ok(&out),
        "The skill `empty` has no instructions beyond its description."
    );
    assert_eq!(
        ws.call("load_skill", json!({"name": "rust"})),
        ToolOutput::error("There is no skill named `rust`. Available skills: git, empty.")
    );
}

/// Defines a `#[test]` for every case of the suite, each with a fresh harness from `$harness`.
macro_rules! tool_tests {
    ($harness:expr) => {
        tool_tests!(@each $harness;
            bad_arguments_are_results,
            read_file_pages_text_and_refuses_the_rest,
            read_file_streams_files_of_any_size,
            list_files_honours_gitignore_and_lists_hidden_files,
            list_files_lists_links_without_following_them,
            list_files_caps_long_listings,
            write_file_creates_replaces_and_keeps_permissions,
            write_file_replaces_only_regular_files,
            writes_cannot_escape_the_workspace,
            links_inside_the_workspace_are_written_through,
            edit_file_replaces_exact_text_only,
            edit_file_refuses_what_it_cannot_edit,
            run_command_reports_status_and_both_streams,
            a_never_ending_command_is_killed_with_its_group,
            background_processes_holding_the_output_are_killed,
            a_flood_of_output_is_cut_to_head_and_tail,
            web_fetch_gets_text_and_follows_checked_redirects,
            web_fetch_refuses_other_schemes_before_any_io,
            web_fetch_without_network_follows_redirects_to_listed_hosts_only,
            the_file_tools_leave_git_and_hrns_files_alone,
            load_skill_returns_the_body_of_known_skills,
            grep_searches_the_tree_as_git_sees_it,
            grep_caps_results_and_cuts_long_lines,
            grep_refuses_bad_input,
        );
    };
    (@each $harness:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                $crate::tool_suite::$case(&$harness);
            }
        )*
    };
}
