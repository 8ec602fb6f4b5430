//! Lexical path normalisation and workspace confinement.
//!
//! The model names files with paths it makes up, so they may be relative, absolute, full of
//! `..`, or simply wrong. [`resolve`] turns such a path into a normalised absolute one and
//! [`confine`] also checks that it stays inside the workspace — all without touching the file
//! system, so the checks are the same in both drivers and testable anywhere.
//!
//! Symbolic links are the one thing a lexical check cannot see: `ws/link/secret` is inside
//! the workspace by its name but may point anywhere. That check needs the file system and so
//! belongs to the driver: after [`confine`] succeeds, the driver canonicalises the deepest
//! ancestor of the path that exists, joins the remaining (not yet existing) components, and
//! calls [`check_resolved`] with the result.

use std::path::{Component, Path, PathBuf};

/// Why a path was refused; the `Display` text is written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The model sent an empty path.
    #[error("the path is empty; give a file path relative to the workspace root")]
    Empty,
    /// The model sent a path containing a NUL byte, which no file system accepts.
    #[error("the path '{}' contains a NUL byte, which is not allowed in paths", .requested.escape_debug())]
    ContainsNul {
        /// The path as the model sent it.
        requested: String,
    },
    /// The model asked for a path outside the workspace.
    #[error(
        "path '{requested}' is outside the workspace {}; use a path inside it",
        .root.display()
    )]
    OutsideWorkspace {
        /// The path as the model sent it.
        requested: String,
        /// The workspace root.
        root: PathBuf,
    },
    /// The path is inside the workspace by name but a symbolic link takes it outside; found by
    /// the driver's [`check_resolved`].
    #[error(
        "the path leads through a symbolic link to {}, which is outside the workspace {}; \
         use a path inside it",
        .resolved.display(),
        .root.display()
    )]
    SymlinkEscape {
        /// Where the path really leads.
        resolved: PathBuf,
        /// The workspace root.
        root: PathBuf,
    },
    /// The caller passed a workspace root that is not absolute (a bug in the driver, not the
    /// model's fault).
    #[error("internal error: the workspace root {} is not an absolute path", .root.display())]
    RootNotAbsolute {
        /// The root that was passed.
        root: PathBuf,
    },
}

/// Normalises a path without touching the file system.
///
/// Drops `.` components and resolves `..` against the component before it. For an absolute
/// path, `..` at the root stays at the root (as the kernel does: `/..` is `/`). For a relative
/// path, a `..` with nothing left to remove is kept at the front (`../a` stays `../a`, which
/// [`escapes_upwards`] reports), since only the base it will be joined to can say where it
/// leads. An empty result is `.`. This is lexical: `a/link/..` becomes `a` even when `link` is
/// a symbolic link, which is why drivers also call [`check_resolved`]. Idempotent.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    // How many Normal components `out` ends with, i.e. how many `..` can still remove.
    let mut depth = 0usize;
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if depth > 0 {
                    out.pop();
                    depth -= 1;
                } else if !out.has_root() {
                    out.push("..");
                }
            }
            Component::Normal(name) => {
                out.push(name);
                depth += 1;
            }
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Returns whether a relative path, once normalised, climbs above its starting point.
pub fn escapes_upwards(path: &Path) -> bool {
    normalize_lexically(path)
        .components()
        .next()
        .is_some_and(|c| c == Component::ParentDir)
}

/// Turns a path the model sent into a normalised absolute path, without confining it.
///
/// A relative `requested` is joined to `root`; an absolute one is taken as is; the result is
/// normalised with [`normalize_lexically`]. Empty paths and paths with NUL bytes are refused.
/// For tools that may look outside the workspace (reads, when the user allows it); writes use
/// [`confine`].
pub fn resolve(root: &Path, requested: &str) -> Result<PathBuf, PathError> {
    if requested.is_empty() {
        return Err(PathError::Empty);
    }
    if requested.contains('\0') {
        return Err(PathError::ContainsNul {
            requested: requested.to_owned(),
        });
    }
    if !root.is_absolute() {
        return Err(PathError::RootNotAbsolute {
            root: root.to_path_buf(),
        });
    }
    Ok(normalize_lexically(&root.join(requested)))
}

/// Turns a path the model sent into a normalised absolute path inside the workspace.
///
/// `root` is the workspace root: absolute and already canonical (the driver canonicalises it
/// once). A relative `requested` is joined to `root`; an absolute one must itself lead inside
/// `root`. The normalised result is `root` or below it, or the call fails with
/// [`PathError::OutsideWorkspace`] — so `../x`, `a/../../x` and `/etc/passwd` are refused while
/// `a/../b` and `/root-of-workspace/b` are fine. Empty paths and NUL bytes are refused too.
/// Symbolic links are not followed; see the module docs and [`check_resolved`].
pub fn confine(root: &Path, requested: &str) -> Result<PathBuf, PathError> {
    let resolved = resolve(root, requested)?;
    if resolved.starts_with(normalize_lexically(root)) {
        Ok(resolved)
    } else {
        Err(PathError::OutsideWorkspace {
            requested: requested.to_owned(),
            root: root.to_path_buf(),
        })
    }
}

/// Checks that a path the driver resolved on the file system is still inside the workspace.
///
/// `resolved` is what the driver got by canonicalising the deepest existing ancestor of a
/// path that [`confine`] accepted and joining the rest; if a symbolic link on the way leads
/// out of `root`, this fails with [`PathError::SymlinkEscape`]. `root` must be canonical too.
pub fn check_resolved(root: &Path, resolved: &Path) -> Result<(), PathError> {
    let resolved = normalize_lexically(resolved);
    if resolved.is_absolute() && resolved.starts_with(normalize_lexically(root)) {
        Ok(())
    } else {
        Err(PathError::SymlinkEscape {
            resolved,
            root: root.to_path_buf(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn norm(p: &str) -> String {
        normalize_lexically(Path::new(p)).display().to_string()
    }

    #[test]
    fn normalisation_table() {
        let table = [
            ("", "."),
            (".", "."),
            ("./", "."),
            ("a", "a"),
            ("a/./b/", "a/b"),
            ("a//b", "a/b"),
            ("a/b/..", "a"),
            ("a/..", "."),
            ("a/../..", ".."),
            ("../a", "../a"),
            ("../../a/../b", "../../b"),
            ("a/../../b", "../b"),
            ("/", "/"),
            ("/..", "/"),
            ("/../../etc", "/etc"),
            ("/a/b/../../../c", "/c"),
            ("/a/./b/../c/", "/a/c"),
            ("//a", "/a"),
            ("/a/.../b", "/a/.../b"),
        ];
        for (input, expected) in table {
            assert_eq!(norm(input), expected, "input {input:?}");
        }
    }

    #[test]
    fn escapes_upwards_flags_leading_parent_dirs() {
        assert!(escapes_upwards(Path::new("..")));
        assert!(escapes_upwards(Path::new("a/../../b")));
        assert!(!escapes_upwards(Path::new("a/../b")));
        assert!(!escapes_upwards(Path::new("/../a")));
        assert!(!escapes_upwards(Path::new("")));
    }

    #[test]
    fn confine_accepts_paths_inside_the_root() {
        let root = Path::new("/w");
        let ok = [
            ("a.txt", "/w/a.txt"),
            ("./src/../lib.rs", "/w/lib.rs"),
            (".", "/w"),
            ("a/..", "/w"),
            ("/w", "/w"),
            ("/w/x/./y", "/w/x/y"),
            ("/w/../w/z", "/w/z"),
            ("~/x", "/w/~/x"),
            ("a\\..\\..\\b", "/w/a\\..\\..\\b"),
            (" ", "/w/ "),
        ];
        for (requested, expected) in ok {
            assert_eq!(
                confine(root, requested),
                Ok(PathBuf::from(expected)),
                "requested {requested:?}"
            );
        }
    }

    #[test]
    fn confine_refuses_paths_outside_the_root() {
        let root = Path::new("/w");
        for requested in [
            "..",
            "../x",
            "a/../../x",
            "../../../../../../etc/passwd",
            "/etc/passwd",
            "/",
            "/w2/a",
            "/w/../w2",
            "/w/..",
        ] {
            let err = confine(root, requested).unwrap_err();
            assert_eq!(
                err,
                PathError::OutsideWorkspace {
                    requested: requested.into(),
                    root: root.into()
                }
            );
        }
        let text = confine(root, "../x").unwrap_err().to_string();
        assert_eq!(
            text,
            "path '../x' is outside the workspace /w; use a path inside it"
        );
    }

    #[test]
    fn confine_refuses_empty_nul_and_relative_roots() {
        let root = Path::new("/w");
        assert_eq!(confine(root, ""), Err(PathError::Empty));
        let err = confine(root, "a\0b").unwrap_err();
        assert!(matches!(err, PathError::ContainsNul { .. }));
        assert!(err.to_string().contains("a\\0b"), "{err}");
        assert!(matches!(
            confine(Path::new("w"), "a"),
            Err(PathError::RootNotAbsolute { .. })
        ));
    }

    #[test]
    fn confine_handles_very_long_paths() {
        let root = Path::new("/w");
        let deep = "a/".repeat(10_000) + &"../".repeat(10_000) + "f";
        assert_eq!(confine(root, &deep), Ok(PathBuf::from("/w/f")));
        let climb = "a/".repeat(10_000) + &"../".repeat(10_001) + "f";
        assert!(confine(root, &climb).is_err());
        let long_name = "x".repeat(100_000);
        assert_eq!(
            confine(root, &long_name).unwrap().as_os_str().len(),
            100_003
        );
    }

    #[test]
    fn resolve_allows_outside_paths_but_normalises() {
        let root = Path::new("/w/p");
        assert_eq!(resolve(root, "../q"), Ok(PathBuf::from("/w/q")));
        assert_eq!(resolve(root, "/etc/./x"), Ok(PathBuf::from("/etc/x")));
        assert_eq!(resolve(root, ""), Err(PathError::Empty));
    }

    #[test]
    fn check_resolved_catches_symlink_escapes() {
        let root = Path::new("/w");
        assert_eq!(check_resolved(root, Path::new("/w/a/b")), Ok(()));
        assert_eq!(check_resolved(root, Path::new("/w")), Ok(()));
        let err = check_resolved(root, Path::new("/etc/passwd")).unwrap_err();
        assert!(matches!(err, PathError::SymlinkEscape { .. }));
        assert!(
            err.to_string().contains("symbolic link to /etc/passwd"),
            "{err}"
        );
        assert!(check_resolved(root, Path::new("/w/../etc")).is_err());
        assert!(check_resolved(root, Path::new("w/a")).is_err());
    }

    proptest! {
        #[test]
        fn normalisation_is_idempotent(
            parts in proptest::collection::vec(prop_oneof!["a", "bc", "\\.", "\\.\\.", "", "x y"], 0..12),
            absolute in any::<bool>(),
        ) {
            let path = format!("{}{}", if absolute { "/" } else { "" }, parts.join("/"));
            let once = normalize_lexically(Path::new(&path));
            let twice = normalize_lexically(&once);
            prop_assert_eq!(&once, &twice);
            prop_assert!(!once.components().any(|c| c == Component::CurDir) || once == Path::new("."));
            if absolute {
                prop_assert!(!once.components().any(|c| c == Component::ParentDir));
            }
        }

        #[test]
        fn confine_never_leaves_the_root(
            parts in proptest::collection::vec(prop_oneof!["a", "w", "\\.", "\\.\\.", ""], 0..12),
            absolute in any::<bool>(),
        ) {
            let root = Path::new("/w/r");
            let requested = format!("{}{}", if absolute { "/" } else { "" }, parts.join("/"));
            if let Ok(path) = confine(root, &requested) {
                prop_assert!(path.starts_with(root));
                prop_assert!(!path.components().any(|c| matches!(c, Component::ParentDir | Component::CurDir)));
                prop_assert_eq!(check_resolved(root, &path), Ok(()));
            }
        }
    }
}
