//! The store against the real `git` program, on real directories.

use super::*;
use hrns_core::checkpoint::KeptReason;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::process::Command;

/// What a tree holds, as a checkpoint restores it: each file's kind and bytes (a link's
/// target), by relative path; `.git` and ignored paths left out.
type Tree = BTreeMap<String, (EntryKind, Vec<u8>)>;

fn read_tree(root: &Path, ignored: &[&str]) -> Tree {
    let mut tree = Tree::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".git" || ignored.iter().any(|i| rel.starts_with(i)) {
                continue;
            }
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
                continue;
            }
            let kind = kind_of(&meta).unwrap();
            let bytes = match kind {
                EntryKind::Symlink => {
                    use std::os::unix::ffi::OsStrExt as _;
                    fs::read_link(&path)
                        .unwrap()
                        .as_os_str()
                        .as_bytes()
                        .to_vec()
                }
                _ => fs::read(&path).unwrap(),
            };
            tree.insert(rel, (kind, bytes));
        }
    }
    tree
}

struct Fixture {
    _dirs: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
}

fn fixture() -> Fixture {
    let dirs = tempfile::tempdir().unwrap();
    let root = dirs.path().join("state");
    let ws = dirs.path().join("ws");
    fs::create_dir_all(&ws).unwrap();
    Fixture {
        root,
        ws: fs::canonicalize(&ws).unwrap(),
        _dirs: dirs,
    }
}

fn store(f: &Fixture) -> CheckpointStore {
    CheckpointStore::open(&f.root, &f.ws, CheckpointLimits::default()).unwrap()
}

fn user_git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=u",
            "-c",
            "user.email=u@x",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[derive(Debug, Clone)]
enum Op {
    Create(u8, Vec<u8>),
    Edit(u8, Vec<u8>),
    Delete(u8),
    Rename(u8, u8),
    Binary(u8),
    Symlink(u8, u8),
    Chmod(u8),
    NewDir(u8),
    Ignored(u8),
    Command(u8),
}

fn name(n: u8) -> String {
    match n % 3 {
        0 => format!("f{}", n % 6),
        1 => format!("d{}/f{}", n % 2, n % 5),
        _ => format!("d{}/e/f{}", n % 2, n % 4),
    }
}

fn apply(ws: &Path, op: &Op) {
    let path = |n: u8| ws.join(name(n));
    let ensure_parent = |p: &Path| fs::create_dir_all(p.parent().unwrap()).unwrap();
    let is_file = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.is_file());
    let free = |p: &Path| {
        // A name whose parent is a file cannot be created: skip, as a real tool would fail.
        p.ancestors()
            .skip(1)
            .take_while(|a| *a != ws)
            .all(|a| !fs::symlink_metadata(a).is_ok_and(|m| !m.is_dir()))
            && !fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
    };
    match op {
        Op::Create(n, bytes) | Op::Edit(n, bytes) => {
            let p = path(*n);
            if free(&p) {
                ensure_parent(&p);
                if fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
                    fs::remove_file(&p).unwrap();
                }
                fs::write(&p, bytes).unwrap();
            }
        }
        Op::Delete(n) => {
            let _ = fs::remove_file(path(*n));
        }
        Op::Rename(a, b) => {
            let (from, to) = (path(*a), path(*b));
            if fs::symlink_metadata(&from).is_ok() && free(&to) && from != to {
                ensure_parent(&to);
                fs::rename(&from, &to).unwrap();
            }
        }
        Op::Binary(n) => {
            let p = path(*n);
            if free(&p) {
                ensure_parent(&p);
                let bytes: Vec<u8> = (0..=255u8).chain([0, 0, 13, 10, 13]).collect();
                let _ = fs::remove_file(&p);
                fs::write(&p, bytes).unwrap();
            }
        }
        Op::Symlink(n, target) => {
            let p = path(*n);
            if free(&p) {
                ensure_parent(&p);
                let _ = fs::remove_file(&p);
                std::os::unix::fs::symlink(name(*target), &p).unwrap();
            }
        }
        Op::Chmod(n) => {
            let p = path(*n);
            if is_file(&p) {
                let mode = fs::metadata(&p).unwrap().permissions().mode();
                fs::set_permissions(&p, fs::Permissions::from_mode(mode ^ 0o111)).unwrap();
            }
        }
        Op::NewDir(n) => {
            let p = ws.join(format!("new{}/deep", n % 3)).join("file.txt");
            ensure_parent(&p);
            fs::write(p, format!("made {n}")).unwrap();
        }
        Op::Ignored(n) => fs::write(ws.join("build.log"), format!("log {n}")).unwrap(),
        Op::Command(n) => {
            let status = Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "mkdir -p cmd && printf 'line %s\\r\\n' {n} >> cmd/out.txt && rm -f f{}",
                    n % 6
                ))
                .current_dir(ws)
                .status()
                .unwrap();
            assert!(status.success());
        }
    }
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    let bytes = proptest::collection::vec(any::<u8>(), 0..40);
    prop_oneof![
        (any::<u8>(), bytes.clone()).prop_map(|(n, b)| Op::Create(n, b)),
        (any::<u8>(), bytes).prop_map(|(n, b)| Op::Edit(n, b)),
        any::<u8>().prop_map(Op::Delete),
        (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Op::Rename(a, b)),
        any::<u8>().prop_map(Op::Binary),
        (any::<u8>(), any::<u8>()).prop_map(|(n, t)| Op::Symlink(n, t)),
        any::<u8>().prop_map(Op::Chmod),
        any::<u8>().prop_map(Op::NewDir),
        any::<u8>().prop_map(Op::Ignored),
        any::<u8>().prop_map(Op::Command),
    ]
}

proptest::proptest! {
    // Each case runs git a dozen times: few cases, and a failure prints its seed rather than
    // writing a file beside the source.
    #![proptest_config(proptest::test_runner::Config {
        cases: 12,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    })]
    /// After any sequence of changes (the file tools' and a command's), undoing back to any
    /// checkpoint gives that checkpoint's tree byte for byte, kinds and modes included, and
    /// leaves ignored files alone.
    #[test]
    fn undo_restores_every_checkpoint_exactly(
        steps in proptest::collection::vec(proptest::collection::vec(op(), 1..4), 1..6),
        pick in proptest::prelude::any::<proptest::sample::Index>(),
    ) {
        let f = fixture();
        fs::write(f.ws.join(".gitignore"), "build.log\n").unwrap();
        fs::write(f.ws.join("f0"), "start").unwrap();
        let store = store(&f);
        let mut checkpoints = vec![(store.snapshot("s", "start").unwrap().id, read_tree(&f.ws, &["build.log"]))];
        for ops in &steps {
            for op in ops {
                apply(&f.ws, op);
            }
            let snapshot = store.snapshot("s", "step").unwrap();
            // The paths a step reports (taken from what it staged, when the index was the
            // last checkpoint) are exactly those git finds between the two trees.
            let previous = &checkpoints.last().unwrap().0;
            let between: Vec<String> = match snapshot.id == *previous {
                true => Vec::new(),
                false => store.changes(previous, &snapshot.id).unwrap().into_iter().map(|c| c.path).collect(),
            };
            proptest::prop_assert_eq!(&snapshot.changed, &between);
            checkpoints.push((snapshot.id, read_tree(&f.ws, &["build.log"])));
        }
        let ignored_before = fs::read(f.ws.join("build.log")).ok();
        let (target, expected) = &checkpoints[pick.index(checkpoints.len())];
        let latest = &checkpoints.last().unwrap().0;
        let restored = store.restore("s", target, latest, Overwrite::Never).unwrap();
        proptest::prop_assert!(restored.kept.is_empty(), "{:?}", restored.kept);
        proptest::prop_assert_eq!(&read_tree(&f.ws, &["build.log"]), expected);
        proptest::prop_assert_eq!(fs::read(f.ws.join("build.log")).ok(), ignored_before);
        // And the restore can be taken back.
        let after = store.snapshot("s", "after").unwrap().id;
        store.restore("s", &restored.before, &after, Overwrite::Never).unwrap();
        proptest::prop_assert_eq!(&read_tree(&f.ws, &["build.log"]), &checkpoints.last().unwrap().1);
    }
}

#[test]
fn an_edit_made_after_the_agent_is_kept_and_named_unless_forced() {
    let f = fixture();
    fs::write(f.ws.join("a.txt"), "one").unwrap();
    fs::write(f.ws.join("b.txt"), "one").unwrap();
    let store = store(&f);
    let start = store.snapshot("s", "start").unwrap().id;
    fs::write(f.ws.join("a.txt"), "agent").unwrap();
    fs::write(f.ws.join("b.txt"), "agent").unwrap();
    let after = store.snapshot("s", "step").unwrap();
    assert_eq!(after.changed, ["a.txt", "b.txt"]);
    fs::write(f.ws.join("b.txt"), "user").unwrap();
    let restored = store
        .restore("s", &start, &after.id, Overwrite::Never)
        .unwrap();
    assert_eq!(fs::read_to_string(f.ws.join("a.txt")).unwrap(), "one");
    assert_eq!(fs::read_to_string(f.ws.join("b.txt")).unwrap(), "user");
    assert_eq!(
        restored.kept,
        [Kept {
            path: "b.txt".into(),
            reason: KeptReason::ChangedSince
        }]
    );
    let forced = store
        .restore("s", &start, &after.id, Overwrite::Force)
        .unwrap();
    assert!(forced.kept.is_empty());
    assert_eq!(fs::read_to_string(f.ws.join("b.txt")).unwrap(), "one");
}

#[test]
fn the_users_repository_index_stash_and_refs_are_untouched() {
    let f = fixture();
    user_git(&f.ws, &["init", "-q"]);
    fs::write(f.ws.join("tracked.txt"), "v1").unwrap();
    user_git(&f.ws, &["add", "tracked.txt"]);
    user_git(&f.ws, &["commit", "-qm", "one"]);
    fs::write(f.ws.join("tracked.txt"), "stashed").unwrap();
    user_git(&f.ws, &["stash", "-q"]);
    fs::write(f.ws.join("tracked.txt"), "staged").unwrap();
    user_git(&f.ws, &["add", "tracked.txt"]);
    fs::write(f.ws.join("tracked.txt"), "dirty").unwrap();
    let look = |ws: &Path| {
        (
            user_git(ws, &["status", "--porcelain=v1", "-uall"]),
            user_git(ws, &["stash", "list"]),
            user_git(ws, &["for-each-ref"]),
            user_git(ws, &["diff", "--cached"]),
            fs::read(ws.join(".git/config")).unwrap(),
        )
    };
    let before = look(&f.ws);
    let store = store(&f);
    let start = store.snapshot("s", "start").unwrap().id;
    fs::write(f.ws.join("tracked.txt"), "agent").unwrap();
    fs::write(f.ws.join("new.txt"), "agent").unwrap();
    let latest = store.snapshot("s", "step").unwrap().id;
    store
        .restore("s", &start, &latest, Overwrite::Never)
        .unwrap();
    assert_eq!(look(&f.ws), before);
    assert_eq!(
        fs::read_to_string(f.ws.join("tracked.txt")).unwrap(),
        "dirty"
    );
    assert!(!f.ws.join("new.txt").exists());
    // The user's objects are borrowed, not copied.
    let alternates = store.git_dir().join("objects/info/alternates");
    assert!(
        fs::read_to_string(alternates)
            .unwrap()
            .contains(".git/objects")
    );
}

#[test]
fn a_subdirectory_of_a_repository_is_its_own_workspace() {
    let f = fixture();
    user_git(&f.ws, &["init", "-q"]);
    fs::create_dir_all(f.ws.join("pkg/src")).unwrap();
    fs::write(f.ws.join("pkg/src/lib.rs"), "fn a() {}").unwrap();
    fs::write(f.ws.join("outside.txt"), "keep").unwrap();
    user_git(&f.ws, &["add", "."]);
    user_git(&f.ws, &["commit", "-qm", "one"]);
    let sub = f.ws.join("pkg");
    let store = CheckpointStore::open(&f.root, &sub, CheckpointLimits::default()).unwrap();
    let start = store.snapshot("s", "start").unwrap().id;
    fs::write(sub.join("src/lib.rs"), "fn b() {}").unwrap();
    fs::write(f.ws.join("outside.txt"), "changed by someone else").unwrap();
    let latest = store.snapshot("s", "step").unwrap();
    assert_eq!(latest.changed, ["src/lib.rs"]);
    store
        .restore("s", &start, &latest.id, Overwrite::Never)
        .unwrap();
    assert_eq!(
        fs::read_to_string(sub.join("src/lib.rs")).unwrap(),
        "fn a() {}"
    );
    assert_eq!(
        fs::read_to_string(f.ws.join("outside.txt")).unwrap(),
        "changed by someone else"
    );
}

#[test]
fn hooks_filters_and_line_end_conversion_of_the_workspace_do_not_run() {
    let f = fixture();
    user_git(&f.ws, &["init", "-q"]);
    let marker = f.ws.join("hook-ran");
    let hook = f.ws.join(".git/hooks/pre-commit");
    fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    user_git(
        &f.ws,
        &[
            "config",
            "core.fsmonitor",
            &format!("touch {}", marker.display()),
        ],
    );
    user_git(
        &f.ws,
        &[
            "config",
            "filter.evil.clean",
            &format!("touch {}; cat", marker.display()),
        ],
    );
    fs::write(f.ws.join(".gitattributes"), "* filter=evil text eol=crlf\n").unwrap();
    fs::write(f.ws.join("crlf.txt"), "a\r\nb\n").unwrap();
    let store = store(&f);
    let start = store.snapshot("s", "start").unwrap().id;
    fs::write(f.ws.join("crlf.txt"), "changed").unwrap();
    let latest = store.snapshot("s", "step").unwrap().id;
    store
        .restore("s", &start, &latest, Overwrite::Never)
        .unwrap();
    assert_eq!(fs::read(f.ws.join("crlf.txt")).unwrap(), b"a\r\nb\n");
    assert!(!marker.exists(), "something of the user's git setup ran");
}

#[test]
fn large_files_and_huge_untracked_directories_are_skipped_and_named() {
    let f = fixture();
    let limits = CheckpointLimits {
        max_file_bytes: 1000,
        max_dir_files: 50,
        ..CheckpointLimits::default()
    };
    fs::write(f.ws.join("big.bin"), vec![7u8; 1001]).unwrap();
    fs::write(f.ws.join("small.txt"), "s").unwrap();
    fs::create_dir_all(f.ws.join("node_modules/pkg")).unwrap();
    for i in 0..60 {
        fs::write(f.ws.join(format!("node_modules/pkg/{i}.js")), "x").unwrap();
    }
    let store = CheckpointStore::open(&f.root, &f.ws, limits).unwrap();
    let snap = store.snapshot("s", "start").unwrap();
    let mut skipped: Vec<&str> = snap.skipped.iter().map(|s| s.path.as_str()).collect();
    skipped.sort();
    assert_eq!(skipped, ["big.bin", "node_modules/"]);
    let listed = store
        .git
        .run(
            &["ls-tree", "-r", "--name-only", &snap.id.0].map(OsStr::new),
            None,
            store.deadline(),
        )
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&listed), "small.txt\n");
}

#[test]
fn an_unchanged_workspace_adds_no_checkpoint() {
    let f = fixture();
    fs::write(f.ws.join("a"), "a").unwrap();
    let store = store(&f);
    let first = store.snapshot("s", "one").unwrap();
    let disk = store.disk_use();
    let second = store.snapshot("s", "two").unwrap();
    assert_eq!(first.id, second.id);
    assert!(second.changed.is_empty());
    assert!(
        store.disk_use() <= disk + 4096,
        "{} > {disk}",
        store.disk_use()
    );
}

#[test]
fn a_lock_left_by_a_killed_snapshot_does_not_block_the_next() {
    let f = fixture();
    fs::write(f.ws.join("a"), "a").unwrap();
    let store = store(&f);
    let first = store.snapshot("s", "one").unwrap().id;
    // What `kill -9` in the middle of `git add` leaves behind.
    fs::write(store.git_dir().join("index.lock"), "").unwrap();
    fs::write(f.ws.join("a"), "b").unwrap();
    let second = store.snapshot("s", "two").unwrap();
    assert_eq!(second.changed, ["a"]);
    store
        .restore("s", &first, &second.id, Overwrite::Never)
        .unwrap();
    assert_eq!(fs::read_to_string(f.ws.join("a")).unwrap(), "a");
}

#[test]
fn without_git_checkpoints_are_off_with_a_clear_reason() {
    let f = fixture();
    let err =
        CheckpointStore::open_with(None, &f.root, &f.ws, CheckpointLimits::default()).unwrap_err();
    assert!(matches!(err, CheckpointError::GitMissing));
    assert!(err.to_string().contains("install git"), "{err}");
}

#[test]
fn unknown_or_hostile_ids_are_refused() {
    let f = fixture();
    fs::write(f.ws.join("a"), "a").unwrap();
    let store = store(&f);
    let id = store.snapshot("s", "one").unwrap().id;
    for bad in [
        "--help",
        "HEAD",
        "0000000000000000000000000000000000000000",
        "",
        "a b",
    ] {
        let err = store
            .restore("s", &CheckpointId(bad.into()), &id, Overwrite::Never)
            .unwrap_err();
        assert!(matches!(err, CheckpointError::Unknown(_)), "{bad}: {err}");
    }
}

#[test]
fn raw_diff_records_parse() {
    let out = b":100644 100755 aaaa bbbb M\0run.sh\0:000000 120000 0000 cccc A\0link\0:160000 160000 1 2 M\0sub\0";
    let changes = paths::parse_raw_diff(out);
    assert_eq!(changes.len(), 2);
    assert_eq!(changes[0].path, "run.sh");
    assert_eq!(
        changes[0].at_latest.as_ref().unwrap().kind,
        EntryKind::Executable
    );
    assert_eq!(changes[1].at_checkpoint, None);
    // Truncated and malformed records are dropped, not misread.
    assert!(paths::parse_raw_diff(b":100644 100644 a").is_empty());
    assert!(paths::parse_raw_diff(b"garbage\0path\0").is_empty());
}

#[test]
fn blob_ids_are_gits() {
    assert_eq!(
        paths::blob_id(b""),
        "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    );
    assert_eq!(
        paths::blob_id(b"hello\n"),
        "ce013625030ba8dba906f756967f9e9ca394464a"
    );
}

#[test]
fn exclude_lines_match_exactly_the_path() {
    assert_eq!(paths::exclude_line("a b/[x]*.js"), "/a\\ b/\\[x\\]\\*.js\n");
    assert_eq!(paths::exclude_line("!#d/"), "/\\!\\#d/\n");
}

#[test]
fn status_records_parse() {
    let out = b"# branch.oid 0123abcd\0# branch.head (detached)\0\
1 .M N... 100644 100644 100644 aa bb src/a b.rs\0\
1 M. N... 100644 100644 100644 aa bb staged-only\0\
2 .D N... 100644 100644 100644 aa bb R100 new\0old\0\
u UU N... 100644 100644 100644 100644 a b c both\0\
? dir/\0? file\0! ignored\0";
    let scan = paths::parse_status(out);
    assert_eq!(scan.head.as_deref(), Some("0123abcd"));
    assert!(!scan.nothing);
    let changed: Vec<&[u8]> = scan.changed.iter().map(Vec::as_slice).collect();
    assert_eq!(
        changed,
        [&b"src/a b.rs"[..], b"new", b"old", b"both"],
        "the index side alone (staged-only) is not a work-tree change"
    );
    assert_eq!(scan.untracked, [b"dir/".to_vec(), b"file".to_vec()]);
    let unborn = paths::parse_status(b"# branch.oid (initial)\0# branch.head main\0");
    assert_eq!(unborn.head, None);
    assert!(unborn.nothing);
    // Truncated and malformed records are dropped, not misread.
    let bad = paths::parse_status(b"1 .M N... 100644\0garbage\0? ");
    assert!(bad.changed.is_empty(), "{bad:?}");
}

#[test]
fn a_skipped_directory_that_shrinks_is_taken_again() {
    let f = fixture();
    let limits = CheckpointLimits {
        max_dir_files: 10,
        max_file_bytes: 100,
        ..CheckpointLimits::default()
    };
    fs::create_dir_all(f.ws.join("deps")).unwrap();
    for i in 0..20 {
        fs::write(f.ws.join(format!("deps/{i}.js")), "x").unwrap();
    }
    fs::write(f.ws.join("big.bin"), vec![1u8; 200]).unwrap();
    fs::write(f.ws.join("a.txt"), "a").unwrap();
    let store = CheckpointStore::open(&f.root, &f.ws, limits).unwrap();
    let first = store.snapshot("s", "one").unwrap();
    let mut skipped: Vec<&str> = first.skipped.iter().map(|s| s.path.as_str()).collect();
    skipped.sort();
    assert_eq!(skipped, ["big.bin", "deps/"]);
    // Still over the limits: still named on the next step, though git no longer lists them.
    fs::write(f.ws.join("a.txt"), "b").unwrap();
    let second = store.snapshot("s", "two").unwrap();
    assert_eq!(second.changed, ["a.txt"]);
    assert_eq!(second.skipped.len(), 2, "{:?}", second.skipped);
    // Shrunk: taken again.
    for i in 5..20 {
        fs::remove_file(f.ws.join(format!("deps/{i}.js"))).unwrap();
    }
    fs::write(f.ws.join("big.bin"), "small now").unwrap();
    let third = store.snapshot("s", "three").unwrap();
    assert!(third.skipped.is_empty(), "{:?}", third.skipped);
    let mut changed = third.changed.clone();
    changed.sort();
    assert_eq!(
        changed,
        [
            "big.bin",
            "deps/0.js",
            "deps/1.js",
            "deps/2.js",
            "deps/3.js",
            "deps/4.js"
        ]
    );
}

#[test]
fn the_disk_cap_prunes_older_sessions_though_it_is_not_measured_every_step() {
    let f = fixture();
    let limits = CheckpointLimits {
        max_disk_bytes: 1,
        ..CheckpointLimits::default()
    };
    fs::write(f.ws.join("a.txt"), "a").unwrap();
    let store = CheckpointStore::open(&f.root, &f.ws, limits).unwrap();
    let old = store.snapshot("old", "one").unwrap().id;
    fs::write(f.ws.join("a.txt"), "b").unwrap();
    store.snapshot("new", "one").unwrap();
    fs::write(f.ws.join("a.txt"), "c").unwrap();
    let latest = store.snapshot("new", "two").unwrap().id;
    let err = store
        .restore("new", &old, &latest, Overwrite::Never)
        .unwrap_err();
    assert!(matches!(err, CheckpointError::Unknown(_)), "{err}");
    assert!(
        store
            .tip(&paths::session_ref("old"), store.deadline())
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_first_snapshot_of_many_files_is_one_pack_and_restores_exactly() {
    let f = fixture();
    for i in 0..300 {
        fs::write(f.ws.join(format!("f{i}.txt")), format!("file {i}")).unwrap();
    }
    let store = store(&f);
    let start = store.snapshot("s", "start").unwrap().id;
    let packs: Vec<_> = fs::read_dir(store.git_dir().join("objects/pack"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
        .collect();
    assert_eq!(packs.len(), 1);
    let before = read_tree(&f.ws, &[]);
    for i in 0..300 {
        fs::write(f.ws.join(format!("f{i}.txt")), "changed").unwrap();
    }
    let latest = store.snapshot("s", "all changed").unwrap();
    assert_eq!(latest.changed.len(), 300);
    store
        .restore("s", &start, &latest.id, Overwrite::Never)
        .unwrap();
    assert_eq!(read_tree(&f.ws, &[]), before);
}

#[test]
fn opening_a_store_makes_nothing_until_the_first_snapshot() {
    let f = fixture();
    fs::write(f.ws.join("a"), "a").unwrap();
    let store = store(&f);
    assert!(!store.git_dir().exists(), "open made the shadow repository");
    // What a front end may ask of a store no snapshot was taken in: nothing is made.
    let id = CheckpointId("0123456789abcdef0123456789abcdef01234567".into());
    assert!(matches!(
        store.changes(&id, &id),
        Err(CheckpointError::Unknown(_))
    ));
    assert!(matches!(
        store.restore("s", &id, &id, Overwrite::Never),
        Err(CheckpointError::Unknown(_))
    ));
    assert_eq!(store.prune(&["s"]).unwrap(), 0);
    assert_eq!(store.disk_use(), 0);
    assert!(
        !store.git_dir().exists(),
        "a query made the shadow repository"
    );
    let root_entries = || fs::read_dir(&f.root).map_or(0, |d| d.count());
    assert_eq!(root_entries(), 0);

    let first = store.snapshot("s", "one").unwrap();
    assert!(store.git_dir().join("HEAD").is_file());
    // The repository was built beside its place and renamed: nothing else is left there.
    assert_eq!(root_entries(), 1);
    fs::write(f.ws.join("a"), "b").unwrap();
    let second = store.snapshot("s", "two").unwrap();
    assert_eq!(second.changed, ["a"]);
    // A second store of the same workspace (another hrns) uses the repository made.
    let again = CheckpointStore::open(&f.root, &f.ws, CheckpointLimits::default()).unwrap();
    again
        .restore("s", &first.id, &second.id, Overwrite::Never)
        .unwrap();
    assert_eq!(fs::read_to_string(f.ws.join("a")).unwrap(), "a");
}

#[test]
fn two_stores_making_the_repository_at_once_both_snapshot() {
    let f = fixture();
    fs::write(f.ws.join("a"), "a").unwrap();
    let stores = [store(&f), store(&f)];
    let ids: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = stores
            .iter()
            .enumerate()
            .map(|(i, st)| s.spawn(move || st.snapshot(&format!("s{i}"), "first")))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for id in &ids {
        assert!(id.is_ok(), "{id:?}");
    }
    assert_eq!(fs::read_dir(&f.root).unwrap().count(), 1);
}

/// What a hostile repository can put where the store looks for the user's git dir.
#[derive(Debug, Clone, Copy)]
enum Hostile {
    Fifo,
    /// A link out of the repository, to a device that never ends.
    LinkToDevZero,
    /// A regular file of 1 GiB (sparse).
    Huge,
}

fn plant(path: &Path, hostile: Hostile) {
    match hostile {
        Hostile::Fifo => rustix::fs::mkfifoat(
            rustix::fs::CWD,
            path,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap(),
        Hostile::LinkToDevZero => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
        Hostile::Huge => fs::File::create(path)
            .unwrap()
            .set_len(1024 * 1024 * 1024)
            .unwrap(),
    }
}

#[test]
fn a_hostile_git_dir_neither_hangs_nor_balloons_a_snapshot() {
    // Where: the `.git` entry itself, its `commondir`, its `config`.
    let places = [".git", ".git/commondir", ".git/config"];
    for place in places {
        for hostile in [Hostile::Fifo, Hostile::LinkToDevZero, Hostile::Huge] {
            let f = fixture();
            fs::write(f.ws.join("a"), "a").unwrap();
            if place != ".git" {
                fs::create_dir(f.ws.join(".git")).unwrap();
                fs::write(f.ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
                fs::create_dir(f.ws.join(".git/objects")).unwrap();
            }
            plant(&f.ws.join(place), hostile);
            // On a thread, so a regression fails the test instead of hanging the suite.
            let (tx, rx) = std::sync::mpsc::channel();
            let (root, ws) = (f.root.clone(), f.ws.clone());
            std::thread::spawn(move || {
                let got = CheckpointStore::open(&root, &ws, CheckpointLimits::default()).and_then(
                    |store| {
                        let snap = store.snapshot("s", "one")?;
                        let alternates = store.git_dir().join("objects/info/alternates");
                        Ok((snap.changed, snap.id, alternates.exists()))
                    },
                );
                let _ = tx.send(got.map_err(|e| e.to_string()));
            });
            let got = rx
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("{place} as {hostile:?}: the snapshot hung"));
            let (_, _, borrowed) = got.unwrap_or_else(|e| panic!("{place} as {hostile:?}: {e}"));
            assert!(!borrowed, "{place} as {hostile:?}: borrowed its objects");
        }
    }
}

#[test]
fn a_file_is_hashed_as_read_and_a_fifo_is_refused_without_waiting() {
    let f = fixture();
    let big: Vec<u8> = (0..3 * 1024 * 1024 + 7).map(|i| (i % 251) as u8).collect();
    fs::write(f.ws.join("big"), &big).unwrap();
    assert_eq!(
        paths::file_blob_id(&f.ws.join("big")).unwrap(),
        paths::blob_id(&big)
    );
    let hashed = user_git(&f.ws, &["hash-object", "big"]);
    assert_eq!(
        paths::file_blob_id(&f.ws.join("big")).unwrap(),
        hashed.trim()
    );
    // A FIFO put where a file was (after the `lstat` of `current`): refused, never waited on.
    plant(&f.ws.join("fifo"), Hostile::Fifo);
    let (tx, rx) = std::sync::mpsc::channel();
    let fifo = f.ws.join("fifo");
    std::thread::spawn(move || tx.send(paths::file_blob_id(&fifo)));
    assert_eq!(rx.recv_timeout(Duration::from_secs(60)), Ok(None));
    plant(&f.ws.join("zero"), Hostile::LinkToDevZero);
    assert_eq!(paths::file_blob_id(&f.ws.join("zero")), None);
}

#[test]
fn a_first_snapshot_of_many_files_keeps_ignores_links_modes_and_nested_repositories() {
    for nested in [false, true] {
        let f = fixture();
        for i in 0..150 {
            fs::create_dir_all(f.ws.join(format!("d{}", i % 7))).unwrap();
            fs::write(f.ws.join(format!("d{}/f{i}.txt", i % 7)), format!("{i}")).unwrap();
        }
        fs::write(f.ws.join(".gitignore"), "*.log\n").unwrap();
        fs::write(f.ws.join("d1/build.log"), "ignored").unwrap();
        fs::write(f.ws.join("run.sh"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(f.ws.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("d0/f0.txt", f.ws.join("link")).unwrap();
        if nested {
            fs::create_dir(f.ws.join("nested")).unwrap();
            user_git(&f.ws.join("nested"), &["init", "-q"]);
        }
        let store = store(&f);
        let first = store.snapshot("s", "first").unwrap().id;
        let listed = store
            .git
            .run(
                &["ls-tree", "-r", "--name-only", "-z", &first.0].map(OsStr::new),
                None,
                store.deadline(),
            )
            .unwrap();
        let listed: Vec<&[u8]> = listed
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .collect();
        assert!(!listed.contains(&&b"d1/build.log"[..]), "nested {nested}");
        assert!(listed.contains(&&b"link"[..]), "nested {nested}");
        assert_eq!(listed.len(), 150 + 3, "nested {nested}");
        let before = read_tree(&f.ws, &["d1/build.log"]);
        for i in 0..150 {
            fs::remove_file(f.ws.join(format!("d{}/f{i}.txt", i % 7))).unwrap();
        }
        fs::set_permissions(f.ws.join("run.sh"), fs::Permissions::from_mode(0o644)).unwrap();
        fs::remove_file(f.ws.join("link")).unwrap();
        let latest = store.snapshot("s", "gone").unwrap();
        store
            .restore("s", &first, &latest.id, Overwrite::Never)
            .unwrap();
        assert_eq!(
            read_tree(&f.ws, &["d1/build.log"]),
            before,
            "nested {nested}"
        );
    }
}

/// The paths a step's snapshot reports, checked against git's own diff of the two trees.
fn changed_between(store: &CheckpointStore, from: &CheckpointId, to: &CheckpointId) -> Vec<String> {
    let mut paths: Vec<String> = store
        .changes(from, to)
        .unwrap()
        .into_iter()
        .map(|c| c.path)
        .collect();
    paths.sort();
    paths
}

#[test]
fn hostile_file_names_are_staged_reported_and_restored_exactly() {
    let f = fixture();
    // Names that a line-based, quoted or pathspec-reading path would misread.
    let names = [
        "new\nline",
        "tab\there",
        "quote\"d",
        "back\\slash",
        "-n",
        "--all",
        ":(glob)**",
        ":!magic",
        "*star",
        "[br]acket",
        "sp ace ",
        "ünïcödé",
        " lead",
    ];
    for name in &names[..6] {
        fs::write(f.ws.join(name), "start").unwrap();
    }
    let store = store(&f);
    let start = store.snapshot("s", "start").unwrap();
    let before = read_tree(&f.ws, &[]);
    // A step: the tracked ones edited, the others new.
    for name in &names {
        fs::write(f.ws.join(name), format!("step {name}")).unwrap();
    }
    let step = store.snapshot("s", "step").unwrap();
    let mut expected: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    expected.sort();
    assert_eq!(step.changed, expected);
    assert_eq!(changed_between(&store, &start.id, &step.id), expected);
    let after = read_tree(&f.ws, &[]);
    store
        .restore("s", &start.id, &step.id, Overwrite::Never)
        .unwrap();
    assert_eq!(read_tree(&f.ws, &[]), before);
    // And a step that only deletes them.
    let undone = store.snapshot("s", "undone").unwrap();
    store
        .restore("s", &step.id, &undone.id, Overwrite::Never)
        .unwrap();
    assert_eq!(read_tree(&f.ws, &[]), after);
    let redone = store.snapshot("s", "redone").unwrap();
    for name in &names {
        fs::remove_file(f.ws.join(name)).unwrap();
    }
    let gone = store.snapshot("s", "gone").unwrap();
    assert_eq!(gone.changed, expected);
    assert_eq!(changed_between(&store, &redone.id, &gone.id), expected);
}

#[test]
fn a_nested_repository_made_in_a_step_is_left_out_and_the_step_reports_the_rest() {
    let f = fixture();
    fs::write(f.ws.join("a.txt"), "a").unwrap();
    let store = store(&f);
    let start = store.snapshot("s", "start").unwrap();
    let inner = f.ws.join("inner");
    fs::create_dir_all(&inner).unwrap();
    user_git(&inner, &["init", "-q"]);
    fs::write(inner.join("x"), "inside").unwrap();
    fs::write(f.ws.join("a.txt"), "changed").unwrap();
    let step = store.snapshot("s", "step").unwrap();
    assert_eq!(step.changed, ["a.txt"]);
    assert_eq!(changed_between(&store, &start.id, &step.id), ["a.txt"]);
    // The nested repository alone changing is no change at all.
    fs::write(inner.join("x"), "inside, changed").unwrap();
    let again = store.snapshot("s", "again").unwrap();
    assert_eq!(again.id, step.id);
    assert!(again.changed.is_empty());
}

#[test]
fn an_untracked_file_that_vanishes_before_it_is_staged_is_not_reported() {
    let f = fixture();
    fs::write(f.ws.join("a.txt"), "a").unwrap();
    let store = store(&f);
    let start = store.snapshot("s", "start").unwrap();
    // `git status` listed `gone.txt` and `a.txt`; `gone.txt` vanished before it was staged.
    fs::write(f.ws.join("a.txt"), "changed").unwrap();
    let deadline = store.deadline();
    let staged = store
        .stage_files(
            &[b"a.txt".as_slice(), b"gone.txt".as_slice()],
            &[b"gone.txt".to_vec()],
            deadline,
        )
        .unwrap();
    assert_eq!(
        staged, None,
        "a vanished path must send the step to git's diff"
    );
    let step = store.snapshot("s", "step").unwrap();
    assert_eq!(step.changed, ["a.txt"]);
    assert_eq!(changed_between(&store, &start.id, &step.id), ["a.txt"]);
}

#[test]
fn a_file_that_became_a_directory_is_snapshotted_with_the_files_inside() {
    let f = fixture();
    fs::write(f.ws.join("a"), "a file").unwrap();
    fs::write(f.ws.join("b"), "b").unwrap();
    let store = store(&f);
    let start = store.snapshot("s", "start").unwrap();
    fs::remove_file(f.ws.join("a")).unwrap();
    fs::create_dir(f.ws.join("a")).unwrap();
    fs::write(f.ws.join("a/inside"), "now a directory").unwrap();
    fs::write(f.ws.join("b"), "b changed").unwrap();
    let step = store.snapshot("s", "step").unwrap();
    assert_eq!(step.changed, ["a", "a/inside", "b"]);
    assert_eq!(
        changed_between(&store, &start.id, &step.id),
        ["a", "a/inside", "b"]
    );
}

/// Undoing a step that replaced a file by a directory puts the file back and the directory
/// goes; had someone put a file of their own in that directory since, the restore fails on
/// it, naming it, and their file is still there.
#[test]
fn a_file_that_became_a_directory_is_restored_as_the_file() {
    let f = fixture();
    fs::write(f.ws.join("a"), "a file").unwrap();
    let store = store(&f);
    let start = store.snapshot("s", "start").unwrap();
    fs::remove_file(f.ws.join("a")).unwrap();
    fs::create_dir(f.ws.join("a")).unwrap();
    fs::write(f.ws.join("a/inside"), "now a directory").unwrap();
    let step = store.snapshot("s", "step").unwrap();
    let restored = store
        .restore("s", &start.id, &step.id, Overwrite::Never)
        .unwrap();
    assert!(restored.kept.is_empty(), "{:?}", restored.kept);
    assert_eq!(fs::read_to_string(f.ws.join("a")).unwrap(), "a file");

    // Again, but with a file of someone else's in the directory after the step.
    let redo = store
        .restore("s", &restored.before, &start.id, Overwrite::Never)
        .unwrap();
    assert!(redo.kept.is_empty(), "{:?}", redo.kept);
    assert!(f.ws.join("a/inside").is_file());
    let latest = store.snapshot("s", "after redo").unwrap();
    fs::write(f.ws.join("a/theirs"), "mine").unwrap();
    let err = store
        .restore("s", &start.id, &latest.id, Overwrite::Never)
        .unwrap_err()
        .to_string();
    assert!(err.contains("/a"), "{err}");
    assert_eq!(fs::read_to_string(f.ws.join("a/theirs")).unwrap(), "mine");
}

#[test]
fn a_new_shared_index_replaces_the_old_one_at_once() {
    let f = fixture();
    for i in 0..20 {
        fs::write(f.ws.join(format!("f{i}")), "start").unwrap();
    }
    let store = store(&f);
    store.snapshot("s", "start").unwrap();
    // Over a fifth of the entries are new, twice: git writes a new shared index each time.
    for i in 20..35 {
        fs::write(f.ws.join(format!("f{i}")), "new").unwrap();
    }
    store.snapshot("s", "step").unwrap();
    for i in 35..60 {
        fs::write(f.ws.join(format!("f{i}")), "new").unwrap();
    }
    store.snapshot("s", "step").unwrap();
    let shared: Vec<String> = fs::read_dir(store.git_dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sharedindex."))
        .collect();
    assert_eq!(shared.len(), 1, "{shared:?}");
}
