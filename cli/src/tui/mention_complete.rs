//! Tab completion of `@path` mentions from the files of the workspace.

use super::commands::Completion;
use std::path::{Component, Path};

/// One directory entry offered for completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) is_dir: bool,
}

/// Completes the `@partial` word that ends at `cursor` (a byte offset). `list(dir)` gives the
/// entries of `dir` (relative to the workspace, `""` for its root, else ending in `/`).
/// Directories complete with a `/`, a single file with a space after it. Hidden entries are
/// offered only when the typed name starts with a dot. `None` when the cursor is not at the end
/// of an `@` word or nothing matches.
pub(crate) fn complete(
    input: &str,
    cursor: usize,
    list: impl FnOnce(&str) -> Vec<Entry>,
) -> Option<Completion> {
    let head = input.get(..cursor)?;
    if input[cursor..].starts_with(|c: char| !c.is_whitespace()) {
        return None;
    }
    let start = head
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let partial = head[start..].strip_prefix('@')?;
    let (dir, prefix) = match partial.rfind('/') {
        Some(slash) => partial.split_at(slash + 1),
        None => ("", partial),
    };
    let mut options: Vec<String> = list(dir)
        .into_iter()
        .filter(|e| e.name.starts_with(prefix))
        .filter(|e| prefix.starts_with('.') || !e.name.starts_with('.'))
        .map(|e| {
            let slash = if e.is_dir { "/" } else { "" };
            format!("{dir}{}{slash}", e.name)
        })
        .collect();
    options.sort();
    let insert = match options.as_slice() {
        [] => return None,
        [one] if one.ends_with('/') || !input[cursor..].is_empty() => format!("@{one}"),
        [one] => format!("@{one} "),
        many => format!("@{}", common_prefix(many)),
    };
    Some(Completion {
        range: start..cursor,
        insert,
        options,
    })
}

/// The entries of `dir` under `workspace`, at most `max`, without `.git`; nothing for a
/// directory outside the workspace (an absolute path or one with `..`).
pub(crate) fn list_dir(workspace: &Path, dir: &str, max: usize) -> Vec<Entry> {
    let rel = Path::new(dir);
    if rel
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Vec::new();
    }
    let Ok(read) = std::fs::read_dir(workspace.join(rel)) else {
        return Vec::new();
    };
    read.filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let is_dir = e.path().is_dir();
            (name != ".git").then_some(Entry { name, is_dir })
        })
        .take(max)
        .collect()
}

/// The longest common prefix of `items`, on character boundaries.
fn common_prefix(items: &[String]) -> String {
    let Some((first, rest)) = items.split_first() else {
        return String::new();
    };
    let mut len = first.len();
    for item in rest {
        len = first
            .char_indices()
            .zip(item.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map_or(0, |((i, a), _)| i + a.len_utf8())
            .min(len);
    }
    first[..len].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(names: &[&str]) -> Vec<Entry> {
        names
            .iter()
            .map(|n| Entry {
                name: n.trim_end_matches('/').to_owned(),
                is_dir: n.ends_with('/'),
            })
            .collect()
    }

    fn tab(input: &str, listing: &[&str]) -> Option<(String, Vec<String>)> {
        let c = complete(input, input.len(), |_| entries(listing))?;
        let mut out = input.to_owned();
        out.replace_range(c.range, &c.insert);
        Some((out, c.options))
    }

    #[test]
    fn completes_files_and_directories() {
        let files = ["src/", "README.md", "Cargo.toml", ".hidden", "Cargo.lock"];
        assert_eq!(
            tab("read @REA", &files).unwrap().0,
            "read @README.md ",
            "a single file ends the word"
        );
        assert_eq!(tab("read @sr", &files).unwrap().0, "read @src/");
        let (out, options) = tab("@Car", &files).unwrap();
        assert_eq!(out, "@Cargo.");
        assert_eq!(options, ["Cargo.lock", "Cargo.toml"]);
        assert_eq!(tab("@.h", &files).unwrap().0, "@.hidden ");
        let (_, all) = tab("@", &files).unwrap();
        assert!(!all.contains(&".hidden".to_owned()));
        assert_eq!(tab("@zzz", &files), None);
    }

    #[test]
    fn completes_inside_a_directory() {
        let c = complete("see @src/ma", 11, |dir| {
            assert_eq!(dir, "src/");
            entries(&["main.rs", "lib.rs"])
        })
        .unwrap();
        assert_eq!(c.insert, "@src/main.rs ");
        assert_eq!(c.range, 4..11);
    }

    #[test]
    fn only_at_the_end_of_an_at_word() {
        let files = ["README.md"];
        assert_eq!(tab("me@RE", &files), None);
        assert_eq!(tab("plain", &files), None);
        // The cursor inside a word completes nothing.
        assert_eq!(complete("@REx", 3, |_| entries(&files)), None);
        // Text after the cursor: no space added.
        let c = complete("@RE more", 3, |_| entries(&files)).unwrap();
        assert_eq!(c.insert, "@README.md");
    }

    #[test]
    fn lists_stay_inside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws/sub")).unwrap();
        std::fs::create_dir_all(dir.path().join("ws/.git")).unwrap();
        std::fs::write(dir.path().join("ws/a.txt"), "").unwrap();
        let ws = dir.path().join("ws");
        let mut names: Vec<(String, bool)> = list_dir(&ws, "", 100)
            .into_iter()
            .map(|e| (e.name, e.is_dir))
            .collect();
        names.sort();
        assert_eq!(names, [("a.txt".into(), false), ("sub".into(), true)]);
        assert!(list_dir(&ws, "../", 100).is_empty());
        assert!(list_dir(&ws, "/", 100).is_empty());
        assert_eq!(list_dir(&ws, "", 1).len(), 1);
    }
}
