use super::*;
use std::os::unix::fs::symlink;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn texts(found: &Found) -> Vec<&str> {
    found.files.iter().map(|f| f.text.as_str()).collect()
}

fn settings(fallbacks: &[&str]) -> InstructionSettings {
    InstructionSettings {
        fallback_names: fallbacks.iter().map(|s| (*s).to_owned()).collect(),
        ..InstructionSettings::default()
    }
}

/// A temporary tree, canonical (the CLI hands in a canonical working directory).
fn tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

#[test]
fn global_then_root_down_to_the_working_directory() {
    let (_d, t) = tree();
    write(&t.join("global/AGENTS.md"), "global");
    std::fs::create_dir_all(t.join("repo/.git")).unwrap();
    write(&t.join("AGENTS.md"), "above the repository");
    write(&t.join("repo/AGENTS.md"), "root");
    write(&t.join("repo/a/b/AGENTS.md"), "deep");
    write(
        &t.join("repo/a/b/c/AGENTS.md"),
        "below the working directory",
    );
    let cwd = t.join("repo/a/b");
    let found = discover(&cwd, Some(&t.join("global")), &settings(&[]));
    assert_eq!(texts(&found), ["global", "root", "deep"]);
    assert_eq!(
        found.files[2].path,
        t.join("repo/a/b/AGENTS.md").display().to_string()
    );
    assert!(found.warnings.is_empty(), "{:?}", found.warnings);
}

#[test]
fn a_nested_repository_stops_the_walk() {
    let (_d, t) = tree();
    std::fs::create_dir_all(t.join("outer/.git")).unwrap();
    write(&t.join("outer/AGENTS.md"), "outer");
    // A submodule or worktree has a `.git` file, not a directory.
    write(
        &t.join("outer/vendor/inner/.git"),
        "gitdir: ../../.git/modules/inner",
    );
    write(&t.join("outer/vendor/AGENTS.md"), "between");
    write(&t.join("outer/vendor/inner/AGENTS.md"), "inner");
    let found = discover(&t.join("outer/vendor/inner/src"), None, &settings(&[]));
    assert_eq!(texts(&found), ["inner"]);
    assert_eq!(
        repository_root(&t.join("outer/vendor")),
        Some(t.join("outer"))
    );
}

#[test]
fn without_a_repository_only_the_working_directory() {
    let (_d, t) = tree();
    write(&t.join("AGENTS.md"), "parent");
    write(&t.join("w/AGENTS.md"), "here");
    let found = discover(&t.join("w"), None, &settings(&[]));
    // The temporary directory may itself sit inside a repository; only when it does not is
    // the parent left out.
    if repository_root(&t.join("w")).is_none() {
        assert_eq!(texts(&found), ["here"]);
    } else {
        assert_eq!(texts(&found).last(), Some(&"here"));
    }
}

#[test]
fn fallback_names_only_where_there_is_no_agents_md() {
    let (_d, t) = tree();
    std::fs::create_dir_all(t.join(".git")).unwrap();
    write(&t.join("CLAUDE.md"), "claude at the root");
    write(&t.join("sub/AGENTS.md"), "agents in sub");
    write(&t.join("sub/CLAUDE.md"), "claude in sub");
    // A directory named AGENTS.md is not a file: the fallback is used.
    std::fs::create_dir_all(t.join("sub/deeper/AGENTS.md")).unwrap();
    write(&t.join("sub/deeper/CLAUDE.md"), "claude deeper");
    let cwd = t.join("sub/deeper");
    assert_eq!(
        texts(&discover(&cwd, None, &settings(&[]))),
        ["agents in sub"]
    );
    assert_eq!(
        texts(&discover(&cwd, None, &settings(&["CLAUDE.md"]))),
        ["claude at the root", "agents in sub", "claude deeper"]
    );
}

#[test]
fn links_are_followed_once_and_broken_ones_reported() {
    let (_d, t) = tree();
    std::fs::create_dir_all(t.join("repo/.git")).unwrap();
    write(&t.join("elsewhere/shared.md"), "shared rules");
    symlink(t.join("elsewhere/shared.md"), t.join("repo/AGENTS.md")).unwrap();
    // The same file again through a second link: used once.
    std::fs::create_dir_all(t.join("repo/a")).unwrap();
    symlink("../AGENTS.md", t.join("repo/a/AGENTS.md")).unwrap();
    std::fs::create_dir_all(t.join("repo/a/b")).unwrap();
    symlink(t.join("nothing.md"), t.join("repo/a/b/AGENTS.md")).unwrap();
    write(
        &t.join("repo/a/b/CLAUDE.md"),
        "fallback after a broken link",
    );
    let found = discover(&t.join("repo/a/b"), None, &settings(&["CLAUDE.md"]));
    assert_eq!(
        texts(&found),
        ["shared rules", "fallback after a broken link"]
    );
    assert_eq!(found.warnings.len(), 1, "{:?}", found.warnings);
    assert!(found.warnings[0].ends_with("a/b/AGENTS.md: skipped, a link to nothing"));
}

#[test]
fn a_symlinked_working_directory_is_walked_as_its_target() {
    // The CLI canonicalises the working directory; this checks a link into a repository
    // finds the repository's files once canonicalised.
    let (_d, t) = tree();
    std::fs::create_dir_all(t.join("repo/.git")).unwrap();
    write(&t.join("repo/AGENTS.md"), "root");
    write(&t.join("repo/src/AGENTS.md"), "src");
    symlink(t.join("repo/src"), t.join("link")).unwrap();
    let cwd = t.join("link").canonicalize().unwrap();
    assert_eq!(
        texts(&discover(&cwd, None, &settings(&[]))),
        ["root", "src"]
    );
}

#[test]
fn large_and_binary_files() {
    let (_d, t) = tree();
    std::fs::create_dir_all(t.join(".git")).unwrap();
    write(&t.join("AGENTS.md"), &"x".repeat(100));
    std::fs::create_dir_all(t.join("bin")).unwrap();
    std::fs::write(t.join("bin/AGENTS.md"), b"\x00\xff\xfe binary").unwrap();
    write(&t.join("empty/AGENTS.md"), "  \n");
    let small = InstructionSettings {
        max_bytes: 10,
        ..InstructionSettings::default()
    };
    let found = discover(&t.join("bin"), None, &small);
    assert_eq!(texts(&found), ["x".repeat(10)]);
    assert_eq!(found.warnings.len(), 2, "{:?}", found.warnings);
    assert!(found.warnings[0].contains("larger than 10 bytes"));
    assert!(found.warnings[0].contains("of 100 bytes"));
    assert!(found.warnings[1].ends_with("bin/AGENTS.md: skipped, not UTF-8 text"));
    // An empty file adds nothing and is not a problem.
    let found = discover(&t.join("empty"), None, &small);
    assert_eq!(found.files.len(), 1);
}
