use super::*;
use std::ffi::OsString;

#[test]
fn git_dirs_are_the_nearest_repository_s() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    assert!(git_dirs(&root.join("none")).is_empty());
    std::fs::create_dir_all(root.join("repo/.git")).unwrap();
    std::fs::create_dir_all(root.join("repo/a/b")).unwrap();
    assert_eq!(git_dirs(&root.join("repo")), [root.join("repo/.git")]);
    assert_eq!(git_dirs(&root.join("repo/a/b")), [root.join("repo/.git")]);
}

#[test]
fn a_git_file_brings_the_directory_it_points_to_and_its_common_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let gitdir = root.join("main/.git/worktrees/wt");
    std::fs::create_dir_all(&gitdir).unwrap();
    std::fs::write(gitdir.join("commondir"), "../..\n").unwrap();
    std::fs::create_dir_all(root.join("wt")).unwrap();
    std::fs::write(
        root.join("wt/.git"),
        format!("gitdir: {}\n", gitdir.display()),
    )
    .unwrap();
    assert_eq!(
        git_dirs(&root.join("wt")),
        [root.join("wt/.git"), gitdir, root.join("main/.git")]
    );
    // A relative pointer, no common directory (a submodule), and garbage.
    std::fs::create_dir_all(root.join("sub/mod")).unwrap();
    std::fs::create_dir_all(root.join("sub/.git/modules/m")).unwrap();
    std::fs::write(root.join("sub/mod/.git"), "gitdir: ../.git/modules/m").unwrap();
    assert_eq!(
        git_dirs(&root.join("sub/mod")),
        [root.join("sub/mod/.git"), root.join("sub/.git/modules/m")]
    );
    std::fs::create_dir_all(root.join("bad")).unwrap();
    std::fs::write(root.join("bad/.git"), "\u{0}\u{1}not a pointer").unwrap();
    assert_eq!(git_dirs(&root.join("bad")), [root.join("bad/.git")]);
}

#[test]
fn the_launcher_takes_its_guards_before_the_policy() {
    let guards = Guards {
        hidden: vec!["/c/config.json".into()],
        read_only: vec!["/w/.git".into()],
        unix_sockets: vec!["/run/a.sock".into()],
    };
    let Launcher::Program { args, .. } = launcher(&guards).unwrap() else {
        panic!("not a program");
    };
    let mut all: Vec<OsString> = args[1..].to_vec();
    all.extend(["--mode", "workspace-write", "--writable", "/w", "--", "sh"].map(OsString::from));
    let launch = launch::parse(&all).unwrap();
    assert_eq!(launch.hidden, [PathBuf::from("/c/config.json")]);
    assert_eq!(launch.read_only, [PathBuf::from("/w/.git")]);
    assert_eq!(launch.unix_sockets, [PathBuf::from("/run/a.sock")]);
    assert_eq!(launch.writable, [PathBuf::from("/w")]);
    let missing = ["--hide"].map(OsString::from);
    assert!(
        launch::parse(&missing)
            .unwrap_err()
            .contains("--hide needs a value")
    );
}
