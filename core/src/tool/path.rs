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
//! calls [`check_resolved`] with the result. [`WriteTarget`] holds the bookkeeping of that walk,
//! so the driver only does the lookups.

use std::ffi::OsString;
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
/// path, a `..` with nothing left to remove is kept at the front (`../a` stays `../a`), since only the base it will be joined to can say where it
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

/// Resolves a path the model wants to write, symbolic links included, with the driver doing
/// the file-system lookups.
///
/// [`WriteTarget::new`] confines the path lexically ([`confine`]). Then the driver
/// canonicalises [`WriteTarget::probe`] (following every link on the way):
/// - when that succeeds, [`WriteTarget::resolve`] joins the canonical probe with the
///   components that did not exist and checks the result with [`check_resolved`], giving the
///   real path to write;
/// - when the probe does not exist, the driver calls [`WriteTarget::handle_missing`] and tries
///   again with the parent;
/// - any other failure is the driver's to report.
///
/// ```
/// # use hrns_core::tool::path::WriteTarget;
/// # use std::path::{Path, PathBuf};
/// # fn canonicalize(p: &Path) -> std::io::Result<PathBuf> {
/// #     if p == Path::new("/w") { Ok(p.into()) } else { Err(std::io::ErrorKind::NotFound.into()) }
/// # }
/// let mut target = WriteTarget::new(Path::new("/w"), "new/dir/file.txt")?;
/// let real = loop {
///     match canonicalize(target.probe()) {
///         Ok(canonical) => break target.resolve(&canonical)?,
///         Err(e) if e.kind() == std::io::ErrorKind::NotFound && target.handle_missing() => {}
///         Err(e) => panic!("report {e} for {}", target.probe().display()),
///     }
/// };
/// assert_eq!(real, Path::new("/w/new/dir/file.txt"));
/// # Ok::<(), hrns_core::tool::path::PathError>(())
/// ```
///
/// A final component that is a dangling symbolic link does not exist for this walk, so the
/// real path is the link itself; an atomic write (rename over it) then replaces the link
/// rather than writing through it, and never leaves the workspace. The check is only as good
/// as the moment it is made: a link created between the check and the write is not seen.
#[derive(Debug, Clone)]
pub struct WriteTarget {
    root: PathBuf,
    probe: PathBuf,
    /// Names below `probe` that do not exist, the deepest first.
    missing: Vec<OsString>,
}

impl WriteTarget {
    /// Confines `requested` to the workspace `root` (absolute and canonical); see [`confine`].
    pub fn new(root: &Path, requested: &str) -> Result<WriteTarget, PathError> {
        let confined = confine(root, requested)?;
        Ok(WriteTarget {
            root: root.to_path_buf(),
            probe: confined,
            missing: Vec::new(),
        })
    }

    /// Returns the path the driver should canonicalise next: the confined path first, then its
    /// ancestors as they turn out not to exist.
    pub fn probe(&self) -> &Path {
        &self.probe
    }

    /// Records that the probe does not exist and moves to its parent. Returns `false`, leaving
    /// the probe alone, when the probe is the workspace root itself (which must exist).
    pub fn handle_missing(&mut self) -> bool {
        if self.probe == normalize_lexically(&self.root) {
            return false;
        }
        match (self.probe.file_name(), self.probe.parent()) {
            (Some(name), Some(parent)) => {
                self.missing.push(name.to_os_string());
                self.probe = parent.to_path_buf();
                true
            }
            _ => false,
        }
    }

    /// Returns the real path to write: `canonical_probe` (the canonical form of
    /// [`WriteTarget::probe`]) joined with the components that did not exist, after checking
    /// that it is inside the workspace ([`PathError::SymlinkEscape`] otherwise).
    pub fn resolve(&self, canonical_probe: &Path) -> Result<PathBuf, PathError> {
        let mut real = canonical_probe.to_path_buf();
        for name in self.missing.iter().rev() {
            real.push(name);
        }
        check_resolved(&self.root, &real)?;
        Ok(real)
    }
}

/// Returns a relative path with `/` between its components, lossily decoded.
///
/// `.`, `..` and root components are written as they are (`a/../b` stays so).
pub fn slash_path(path: &Path) -> String {
    let mut out = String::new();
    for component in path.components() {
        let part = component.as_os_str().to_string_lossy();
        if !out.is_empty() && !out.ends_with('/') {
            out.push('/');
        }
        out.push_str(&part);
    }
    out
}

/// Returns how to show `path` to the model: relative to the workspace `root` when it is
/// inside it (`src/main.rs`, or `.` for the root itself), absolute otherwise.
pub fn display_path(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => slash_path(rel),
        Err(_) => slash_path(path),
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

    #[test]
    fn write_target_walks_up_to_an_existing_ancestor() {
        let root = Path::new("/w");
        let mut target = WriteTarget::new(root, "a/b/c.txt").unwrap();
        assert_eq!(target.probe(), Path::new("/w/a/b/c.txt"));
        assert!(target.handle_missing());
        assert_eq!(target.probe(), Path::new("/w/a/b"));
        assert!(target.handle_missing());
        assert!(target.handle_missing());
        assert_eq!(target.probe(), root);
        assert!(!target.handle_missing(), "the root is the end of the walk");
        assert_eq!(target.probe(), root);
        assert_eq!(target.resolve(root), Ok(PathBuf::from("/w/a/b/c.txt")));

        // `a` is a link inside the workspace, `b` one leading out of it.
        let mut target = WriteTarget::new(root, "a/new.txt").unwrap();
        assert!(target.handle_missing());
        assert_eq!(
            target.resolve(Path::new("/w/real")),
            Ok(PathBuf::from("/w/real/new.txt"))
        );
        assert!(matches!(
            target.resolve(Path::new("/etc")),
            Err(PathError::SymlinkEscape { ref resolved, .. }) if resolved == Path::new("/etc/new.txt")
        ));
        // The file itself is a link leading out.
        let target = WriteTarget::new(root, "link").unwrap();
        assert!(target.resolve(Path::new("/etc/passwd")).is_err());
        assert!(matches!(
            WriteTarget::new(root, "../x"),
            Err(PathError::OutsideWorkspace { .. })
        ));
    }

    #[test]
    fn paths_for_the_model() {
        let root = Path::new("/w");
        assert_eq!(display_path(root, Path::new("/w/src/a.rs")), "src/a.rs");
        assert_eq!(display_path(root, Path::new("/w")), ".");
        assert_eq!(display_path(root, Path::new("/etc/passwd")), "/etc/passwd");
        assert_eq!(display_path(root, Path::new("/w2/x")), "/w2/x");
        assert_eq!(slash_path(Path::new("a/./b/../c")), "a/b/../c");
        assert_eq!(slash_path(Path::new("")), "");
    }

    proptest! {
        #![proptest_config(crate::proptest_seeds::config())]
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
