//! The directory walk `list_files` and `grep` share, so both see the same entries.
//!
//! The `ignore` crate would read `.gitignore`, `.ignore` and `.git/info/exclude` itself with a
//! plain `File::open` and an unbounded line reader, even in directories it was told to skip:
//! a FIFO `.gitignore` hangs the walk and a link to `/dev/zero` eats all memory. So its own
//! reading of those files is turned off and [`IgnoreRules`] reads them through
//! [`crate::safe_file`] (non-blocking, regular files only, [`IGNORE_FILE_CAP`]) and matches
//! with the crate's own [`Gitignore`] matcher, in the crate's order of precedence.

use crate::safe_file::{SafeReadError, read_capped};
use crate::tool::ToolContext;
use hrns_core::file_refusal::{FileRefusal, IGNORE_FILE_CAP, is_kernel_tree};
use hrns_core::tool::files::is_skipped_dir;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{DirEntry, Match, WalkBuilder};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// The order a walk yields the entries of a directory in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// By file name, so the same tree gives the same result in the same order.
    ByName,
    /// As the file system lists them (the caller sorts what it keeps).
    AsListed,
}

/// Ignore files that were left unread, each with why; the tool reports them to the model.
pub(crate) type Skipped = Arc<Mutex<Vec<(PathBuf, FileRefusal)>>>;

/// The entries below `root` that a file tool looks at: `.gitignore`, `.ignore` and git's
/// exclude files honoured even outside a git repository (read safely, see the module docs;
/// a hostile one is recorded in `skipped` and not honoured), hidden files included,
/// version-control directories, the sandbox's protected paths (hrns's config and state),
/// special files (FIFOs, sockets, devices) and `/proc`, `/sys` and `/dev` skipped, links not
/// followed. Entries that cannot be read are passed over; the walk ends when the call is
/// cancelled.
pub(crate) fn walk<'a>(
    root: &Path,
    ctx: &'a ToolContext,
    order: Order,
    skipped: &Skipped,
) -> impl Iterator<Item = DirEntry> + 'a {
    let hidden = ctx.sandbox.protected_below(root);
    let rules = IgnoreRules::new(Arc::clone(skipped));
    let mut builder = WalkBuilder::new(root);
    if order == Order::ByName {
        builder.sort_by_file_name(|a, b| a.cmp(b));
    }
    builder
        .hidden(false)
        .require_git(false)
        .ignore(false)
        .git_ignore(false)
        .git_exclude(false)
        .filter_entry(move |e| {
            !is_skipped_dir(e.file_name())
                && !is_special(e)
                && !is_kernel_tree(e.path())
                && !hidden.iter().any(|h| e.path().starts_with(h))
                && !rules.is_ignored(e.path(), e.file_type().is_some_and(|t| t.is_dir()))
        })
        .build()
        .take_while(|_| !ctx.cancel.is_cancelled())
        .filter_map(Result::ok)
}

/// FIFOs, sockets and devices: opening one can block, reading one may never end.
fn is_special(entry: &DirEntry) -> bool {
    use std::os::unix::fs::FileTypeExt;
    entry
        .file_type()
        .is_some_and(|t| t.is_fifo() || t.is_socket() || t.is_block_device() || t.is_char_device())
}

/// The ignore files of one directory, as read.
#[derive(Default)]
struct DirRules {
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
}

/// The rules in force in one directory: its own, then its parent's, and so on up.
struct Chain {
    here: DirRules,
    parent: Option<Arc<Chain>>,
}

impl Chain {
    fn iter(&self) -> impl Iterator<Item = &DirRules> {
        std::iter::successors(Some(self), |c| c.parent.as_deref()).map(|c| &c.here)
    }
}

/// `.ignore`, `.gitignore` and `.git/info/exclude` of every directory a walk meets (and of
/// the root's ancestors), each read once and kept per directory.
struct IgnoreRules {
    chains: Mutex<HashMap<PathBuf, Arc<Chain>>>,
    skipped: Skipped,
}

impl IgnoreRules {
    fn new(skipped: Skipped) -> IgnoreRules {
        IgnoreRules {
            chains: Mutex::new(HashMap::new()),
            skipped,
        }
    }

    /// Whether `path` is ignored, with the precedence of the `ignore` crate: the nearest
    /// `.ignore` that has an opinion wins, then the nearest `.gitignore`, then git's exclude
    /// file; a whitelist (`!pattern`) keeps the entry.
    fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        let Some(parent) = path.parent() else {
            return false;
        };
        let chain = self.chain(parent);
        let kinds: [fn(&DirRules) -> Option<&Gitignore>; 3] = [
            |r| r.ignore.as_ref(),
            |r| r.gitignore.as_ref(),
            |r| r.exclude.as_ref(),
        ];
        for kind in kinds {
            for rules in chain.iter() {
                match kind(rules).map(|g| g.matched(path, is_dir)) {
                    Some(Match::Ignore(_)) => return true,
                    Some(Match::Whitelist(_)) => return false,
                    Some(Match::None) | None => {}
                }
            }
        }
        false
    }

    fn chain(&self, dir: &Path) -> Arc<Chain> {
        if let Some(chain) = self.lock().get(dir) {
            return Arc::clone(chain);
        }
        let parent = dir.parent().map(|p| self.chain(p));
        let chain = Arc::new(Chain {
            here: self.read_dir_rules(dir),
            parent,
        });
        self.lock().insert(dir.to_owned(), Arc::clone(&chain));
        chain
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Arc<Chain>>> {
        self.chains.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn read_dir_rules(&self, dir: &Path) -> DirRules {
        if is_kernel_tree(dir) {
            return DirRules::default();
        }
        let exclude = dir
            .join(".git")
            .is_dir()
            .then(|| self.read_one(dir, &dir.join(".git/info/exclude")))
            .flatten();
        DirRules {
            ignore: self.read_one(dir, &dir.join(".ignore")),
            gitignore: self.read_one(dir, &dir.join(".gitignore")),
            exclude,
        }
    }

    /// Reads one ignore file safely; a hostile one is recorded and ignored itself.
    fn read_one(&self, dir: &Path, path: &Path) -> Option<Gitignore> {
        let bytes = match read_capped(path, IGNORE_FILE_CAP) {
            Ok(bytes) => bytes,
            Err(SafeReadError::Refused { path, refusal }) => {
                self.skipped
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((path, refusal));
                return None;
            }
            // Missing, unreadable or not text: as ripgrep, go on without it.
            Err(
                SafeReadError::Missing { .. }
                | SafeReadError::NotText { .. }
                | SafeReadError::Io { .. },
            ) => return None,
        };
        let text = String::from_utf8_lossy(&bytes);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let mut builder = GitignoreBuilder::new(dir);
        for line in text.lines() {
            // A bad glob spoils its own line only, as in git.
            let _ = builder.add_line(Some(path.to_owned()), line);
        }
        builder.build().ok()
    }
}
