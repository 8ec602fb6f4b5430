//! The built-in tools against hostile inputs: escapes, symbolic links, binary files, devices,
//! never-ending commands, huge output, other URL schemes. Each case is quick.

use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::LIST_FILES_CAP;
use hrns_tokio::tools::{
    EditFile, ListFiles, LoadSkill, ReadFile, RunCommand, WebFetch, WriteFile,
};
use hrns_tokio::{Tool, ToolContext};
use serde_json::{Value, json};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Ws {
    _dir: tempfile::TempDir,
    root: PathBuf,
    ctx: ToolContext,
}

fn workspace() -> Ws {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    Ws {
        ctx: ToolContext::new(root.clone()),
        root,
        _dir: dir,
    }
}

impl Ws {
    async fn call(&self, tool: &dyn Tool, args: Value) -> ToolOutput {
        tool.run(&args.to_string(), &self.ctx).await
    }

    fn put(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        path
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

// ----- read_file -----

#[tokio::test]
async fn read_file_pages_text_and_refuses_the_rest() {
    let ws = workspace();
    ws.put("a.txt", "one\ntwo\nthree\n");
    let out = ws
        .call(&ReadFile, json!({"path": "a.txt", "offset": 2, "limit": 1}))
        .await;
    assert_eq!(
        ok(&out),
        "     2\ttwo\n[lines 2-2 of 3; call read_file with offset=3 to continue]\n"
    );

    refused(
        &ws.call(&ReadFile, json!({"path": "missing.txt"})).await,
        "does not exist",
    );
    std::fs::create_dir(ws.root.join("sub")).unwrap();
    refused(
        &ws.call(&ReadFile, json!({"path": "sub"})).await,
        "is a directory",
    );
    ws.put("img.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    refused(
        &ws.call(&ReadFile, json!({"path": "img.png"})).await,
        "binary",
    );
    refused(
        &ws.call(&ReadFile, json!({"path": "/dev/zero"})).await,
        "not a regular file",
    );
    let big = std::fs::File::create(ws.root.join("big.log")).unwrap();
    big.set_len(65 * 1024 * 1024).unwrap(); // sparse: no time spent writing it
    refused(
        &ws.call(&ReadFile, json!({"path": "big.log"})).await,
        "run_command",
    );
    refused(&ws.call(&ReadFile, json!({"path": "a\0b"})).await, "NUL");
}

#[tokio::test]
async fn bad_arguments_come_back_as_results() {
    let ws = workspace();
    let out = ReadFile.run("{not json", &ws.ctx).await;
    refused(&out, "not valid JSON");
    refused(
        &ws.call(&ReadFile, json!({"file": "a"})).await,
        "unknown argument `file`",
    );
    refused(
        &ws.call(&WriteFile, json!({"path": "a"})).await,
        "missing required argument `content`",
    );
    refused(
        &ws.call(&RunCommand, json!({"command": 5})).await,
        "`command` is invalid",
    );
}

// ----- list_files -----

#[tokio::test]
async fn list_files_honours_gitignore_and_globs() {
    let ws = workspace();
    ws.put(".gitignore", "target/\n*.log\n");
    ws.put("Cargo.toml", "");
    ws.put("src/main.rs", "");
    ws.put("src/deep/mod.rs", "");
    ws.put("target/debug/out", "");
    ws.put("debug.log", "");
    ws.put(".git/HEAD", "");
    ws.put(".github/ci.yml", "");
    let all = ws.call(&ListFiles, json!({})).await;
    assert_eq!(
        ok(&all),
        ".github/ci.yml\n.gitignore\nCargo.toml\nsrc/deep/mod.rs\nsrc/main.rs\n"
    );
    let rs = ws.call(&ListFiles, json!({"pattern": "**/*.rs"})).await;
    assert_eq!(ok(&rs), "src/deep/mod.rs\nsrc/main.rs\n");
    let top = ws
        .call(&ListFiles, json!({"dir": "src", "pattern": "*.rs"}))
        .await;
    assert_eq!(ok(&top), "src/main.rs\n", "`*` stays within one segment");
    refused(
        &ws.call(&ListFiles, json!({"pattern": "[a"})).await,
        "not a valid glob",
    );
    refused(
        &ws.call(&ListFiles, json!({"dir": "Cargo.toml"})).await,
        "not a directory",
    );
    refused(
        &ws.call(&ListFiles, json!({"dir": "nope"})).await,
        "does not exist",
    );
}

#[tokio::test]
async fn list_files_caps_long_listings() {
    let ws = workspace();
    for i in 0..LIST_FILES_CAP + 5 {
        ws.put(&format!("f/{i:05}"), "");
    }
    let out = ws.call(&ListFiles, json!({"dir": "f"})).await;
    let text = ok(&out);
    assert_eq!(text.lines().count(), LIST_FILES_CAP + 1);
    assert!(
        text.contains("5 more paths not shown"),
        "{}",
        text.lines().last().unwrap()
    );
}

// ----- write_file and edit_file -----

#[tokio::test]
async fn write_file_creates_replaces_and_keeps_permissions() {
    let ws = workspace();
    let out = ws
        .call(
            &WriteFile,
            json!({"path": "new/dir/a.txt", "content": "hi"}),
        )
        .await;
    assert_eq!(ok(&out), "wrote 2 bytes to new/dir/a.txt (created)");
    let script = ws.put("run.sh", "old");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = ws
        .call(&WriteFile, json!({"path": "run.sh", "content": "new"}))
        .await;
    assert!(ok(&out).ends_with("(replaced)"));
    assert_eq!(std::fs::read_to_string(&script).unwrap(), "new");
    let mode = std::fs::metadata(&script).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    refused(
        &ws.call(&WriteFile, json!({"path": "new", "content": "x"}))
            .await,
        "is a directory",
    );
    // Nothing but the files themselves is left behind.
    let names: Vec<String> = std::fs::read_dir(&ws.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
}

#[tokio::test]
async fn writes_cannot_escape_the_workspace() {
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    let outside_path = outside.path().canonicalize().unwrap();
    symlink(&outside_path, ws.root.join("link")).unwrap();
    let victim = outside_path.join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let target = victim.display().to_string();
    for path in [
        "../escape.txt",
        "a/../../escape.txt",
        target.as_str(),
        "/etc/passwd",
    ] {
        let out = ws
            .call(&WriteFile, json!({"path": path, "content": "x"}))
            .await;
        refused(&out, "outside the workspace");
    }
    for path in ["link/victim.txt", "link/new/file.txt"] {
        let out = ws
            .call(&WriteFile, json!({"path": path, "content": "x"}))
            .await;
        refused(&out, "symbolic link");
        let args = json!({"path": path, "old_string": "precious", "new_string": "gone"});
        refused(&ws.call(&EditFile, args).await, "symbolic link");
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!outside_path.join("new").exists());
    // A link inside the workspace that stays inside is fine, and is written through.
    ws.put("real/t.txt", "a");
    symlink(ws.root.join("real"), ws.root.join("inner")).unwrap();
    ok(&ws
        .call(&WriteFile, json!({"path": "inner/t.txt", "content": "b"}))
        .await);
    assert_eq!(
        std::fs::read_to_string(ws.root.join("real/t.txt")).unwrap(),
        "b"
    );
}

#[tokio::test]
async fn edit_file_replaces_exact_text_only() {
    let ws = workspace();
    let file = ws.put("a.rs", "fn a() {}\nfn b() {}\nfn b() {}\n");
    let edit = |old: &str, new: &str, all: bool| json!({"path": "a.rs", "old_string": old, "new_string": new, "replace_all": all});
    let out = ws.call(&EditFile, edit("fn a", "fn z", false)).await;
    assert_eq!(ok(&out), "edited a.rs: replaced 1 occurrence");
    refused(
        &ws.call(&EditFile, edit("fn b", "fn y", false)).await,
        "found 2 times",
    );
    refused(
        &ws.call(&EditFile, edit("fn q", "fn y", false)).await,
        "not found",
    );
    ok(&ws.call(&EditFile, edit("fn b", "fn y", true)).await);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "fn z() {}\nfn y() {}\nfn y() {}\n"
    );
    ws.put("bin", b"\0\x01\x02");
    let args = json!({"path": "bin", "old_string": "a", "new_string": "b"});
    refused(&ws.call(&EditFile, args).await, "binary");
    let args = json!({"path": "gone.rs", "old_string": "a", "new_string": "b"});
    refused(&ws.call(&EditFile, args).await, "does not exist");
}

// ----- run_command -----

#[tokio::test]
async fn run_command_reports_status_and_both_streams() {
    let ws = workspace();
    let out = ws
        .call(
            &RunCommand,
            json!({"command": "pwd; echo oops >&2; exit 3"}),
        )
        .await;
    let text = refused(&out, "exit code: 3");
    assert!(
        text.contains(&ws.root.display().to_string()),
        "runs in the workspace: {text}"
    );
    assert!(text.contains("oops"));
    let out = ws
        .call(&RunCommand, json!({"command": "cat; echo done"}))
        .await;
    assert!(ok(&out).contains("done"), "stdin is empty, not inherited");
}

#[tokio::test]
async fn a_never_ending_command_is_killed_at_its_timeout() {
    let ws = workspace();
    let start = Instant::now();
    let command = "echo started; sleep 30 & echo $! > bg.pid; sleep 30";
    let out = ws
        .call(&RunCommand, json!({"command": command, "timeout_secs": 1}))
        .await;
    let took = start.elapsed();
    let text = refused(&out, "1 s");
    assert!(
        text.contains("started"),
        "output before the kill is kept: {text}"
    );
    assert!(took < Duration::from_secs(3), "{took:?}");
    let bg: i32 = std::fs::read_to_string(ws.root.join("bg.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let stat = std::fs::read_to_string(format!("/proc/{bg}/stat")).unwrap_or_default();
    assert!(
        stat.is_empty() || stat.rsplit_once(") ").unwrap().1.starts_with('Z'),
        "the background child was killed with the group: {stat}"
    );
}

#[tokio::test]
async fn a_hundred_megabytes_of_output_are_cut_to_head_and_tail() {
    let ws = workspace();
    let start = Instant::now();
    let command = "echo FIRST; head -c 100000000 /dev/zero | tr '\\0' x; echo; echo LAST";
    let out = ws.call(&RunCommand, json!({"command": command})).await;
    let text = ok(&out);
    assert!(text.contains("FIRST") && text.contains("LAST"));
    assert!(text.len() < 100_000, "{} bytes kept", text.len());
    assert!(text.contains("omitted"), "the cut is marked");
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn a_background_process_does_not_hold_the_result() {
    let ws = workspace();
    let start = Instant::now();
    let out = ws
        .call(&RunCommand, json!({"command": "sleep 3 & echo quick"}))
        .await;
    assert!(ok(&out).contains("quick"));
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

// ----- web_fetch -----

/// A tiny HTTP/1.1 server: `/text`, `/png`, `/big` (6 MiB), `/to-file` (redirects to a file
/// URL), `/loop` (redirects to itself), `/moved` (redirects to `/text`).
async fn web_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tcp.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head);
                let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
                let (status, headers, body): (&str, &str, Vec<u8>) = match path.as_str() {
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
                    _ => ("404 Not Found", "", b"no".to_vec()),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\n{headers}content-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = tcp.write_all(head.as_bytes()).await;
                let _ = tcp.write_all(&body).await;
            });
        }
    });
    base
}

#[tokio::test]
async fn web_fetch_gets_text_and_refuses_other_schemes() {
    let ws = workspace();
    let base = web_server().await;
    let fetch = WebFetch::default();
    let out = ws
        .call(&fetch, json!({"url": format!("{base}/text")}))
        .await;
    assert!(
        ok(&out).starts_with("HTTP 200, text/plain"),
        "{}",
        out.content
    );
    assert!(out.content.contains("hello web"));
    let out = ws
        .call(&fetch, json!({"url": format!("{base}/moved")}))
        .await;
    assert!(ok(&out).contains("hello web"), "redirect followed");
    refused(
        &ws.call(&fetch, json!({"url": format!("{base}/png")})).await,
        "binary",
    );
    refused(
        &ws.call(&fetch, json!({"url": format!("{base}/nothing")}))
            .await,
        "HTTP 404",
    );
    let out = ws.call(&fetch, json!({"url": format!("{base}/big")})).await;
    assert!(
        ok(&out).contains("the body was cut at 5242880 bytes"),
        "size cap"
    );
    refused(
        &ws.call(&fetch, json!({"url": format!("{base}/to-file")}))
            .await,
        "scheme 'file'",
    );
    refused(
        &ws.call(&fetch, json!({"url": format!("{base}/loop")}))
            .await,
        "redirects",
    );
    for url in [
        "file:///etc/passwd",
        "ftp://example.com/",
        "example.com",
        "gopher://x",
    ] {
        refused(
            &ws.call(&fetch, json!({ "url": url })).await,
            url.split(':').next().unwrap(),
        );
    }
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", closed.local_addr().unwrap());
    drop(closed);
    refused(
        &ws.call(&fetch, json!({ "url": url })).await,
        "could not fetch",
    );
}

// ----- load_skill -----

#[tokio::test]
async fn load_skill_returns_the_body_of_known_skills() {
    let ws = workspace();
    let file = ws.put(
        "skills/git/SKILL.md",
        "---\nname: git\ndescription: d\n---\nCommit often.\n",
    );
    let tool = LoadSkill::new(vec![("git".into(), file)]);
    let out = ws.call(&tool, json!({"name": "git"})).await;
    assert_eq!(ok(&out), "<skill name=\"git\">\nCommit often.\n</skill>");
    refused(
        &ws.call(&tool, json!({"name": "rust"})).await,
        "available skills are: git",
    );
    let missing = LoadSkill::new(vec![(
        "gone".into(),
        Path::new("/nonexistent/SKILL.md").into(),
    )]);
    refused(
        &ws.call(&missing, json!({"name": "gone"})).await,
        "does not exist",
    );
}
