//! A workspace at `$HOME` or at `/`: warned about, and read-only unless the user says so.
//!
//! `workspace-write` lets commands write in the workspace. At `$HOME` that is the user's
//! dotfiles (`.bashrc` runs at the next shell), keys and hrns's own config; at `/` it is
//! everything the user may write. So there the policy is held back to `read-only` unless
//! the user asked for `workspace-write` on purpose: `--sandbox workspace-write` on the
//! command line, or a yes to the TUI's question at start. A `"sandbox"` in the config does
//! not count, since it was written for every directory, not for this one.

use super::SandboxMode;
use std::path::Path;

/// Which too-broad directory the workspace is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BroadWorkspace {
    /// The user's home directory.
    Home,
    /// The root of the file system.
    Root,
}

impl BroadWorkspace {
    /// Which one `workspace` is, given the `home` directory (both absolute and canonical);
    /// `None` for any other directory, below or above home alike.
    pub fn of(workspace: &Path, home: Option<&Path>) -> Option<BroadWorkspace> {
        if workspace.parent().is_none() && workspace.has_root() {
            Some(BroadWorkspace::Root)
        } else if home.is_some_and(|h| h == workspace) {
            Some(BroadWorkspace::Home)
        } else {
            None
        }
    }
}

/// Where the requested sandbox mode came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModeOrigin {
    /// `--sandbox` on the command line (or the user's yes in the TUI): on purpose.
    Flag,
    /// `"sandbox"` in the config file.
    Config,
    /// Nothing said: the default, `workspace-write`.
    Default,
}

/// Whether `workspace-write` was held back to `read-only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hold {
    /// The requested mode applies.
    Kept,
    /// `workspace-write` was asked for without `--sandbox`: commands run `read-only`.
    HeldBack,
}

/// The decision about a broad workspace: which one, what was asked for, and what applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WorkspaceCheck {
    /// Home or root.
    pub broad: BroadWorkspace,
    /// The mode asked for.
    pub requested: SandboxMode,
    /// Whether it was held back.
    pub hold: Hold,
}

impl WorkspaceCheck {
    /// The check for `workspace` (with `home`) when `requested` came from `origin`; `None`
    /// when the workspace is not broad.
    pub fn new(
        workspace: &Path,
        home: Option<&Path>,
        requested: SandboxMode,
        origin: ModeOrigin,
    ) -> Option<WorkspaceCheck> {
        let broad = BroadWorkspace::of(workspace, home)?;
        let hold = match (requested, origin) {
            (SandboxMode::WorkspaceWrite, ModeOrigin::Config | ModeOrigin::Default) => {
                Hold::HeldBack
            }
            (SandboxMode::WorkspaceWrite, ModeOrigin::Flag)
            | (SandboxMode::ReadOnly | SandboxMode::DangerFullAccess, _) => Hold::Kept,
        };
        Some(WorkspaceCheck {
            broad,
            requested,
            hold,
        })
    }

    /// The mode that applies: `read-only` when held back, else the one requested.
    pub fn mode(&self) -> SandboxMode {
        match self.hold {
            Hold::HeldBack => SandboxMode::ReadOnly,
            Hold::Kept => self.requested,
        }
    }

    fn place(&self, workspace: &Path) -> String {
        match self.broad {
            BroadWorkspace::Home => format!("your home directory ({})", workspace.display()),
            BroadWorkspace::Root => "the root directory (/)".to_owned(),
        }
    }

    /// The warning for the user (without a `hrns: warning:` prefix), one sentence per fact.
    pub fn warning(&self, workspace: &Path) -> String {
        let place = self.place(workspace);
        let what = match (self.hold, self.mode()) {
            (Hold::HeldBack, _) => {
                "it holds your dotfiles, your keys and hrns's own config, so commands run \
                 read-only here instead of workspace-write. To let them write, answer yes to \
                 the question at start in the interactive UI, or pass --sandbox \
                 workspace-write; better, start hrns in a project directory."
            }
            (Hold::Kept, SandboxMode::WorkspaceWrite) => {
                "commands may change any file in it but .git and hrns's own files \
                 (--sandbox workspace-write); start hrns in a project directory to keep \
                 them to it."
            }
            (Hold::Kept, SandboxMode::ReadOnly) => {
                "commands run read-only; start hrns in a project directory to let them write \
                 there."
            }
            (Hold::Kept, SandboxMode::DangerFullAccess) => {
                "and there is no sandbox (danger-full-access): commands may change anything \
                 you may."
            }
        };
        format!("the workspace is {place}: {what}")
    }

    /// The one-line question the interactive UI asks at start when the mode was held back.
    pub fn question(&self, workspace: &Path) -> String {
        format!(
            "Let commands write anywhere in {} (workspace-write)? [y/N] ",
            self.place(workspace)
        )
    }

    /// The check after the user said yes to [`WorkspaceCheck::question`]: `workspace-write`,
    /// on purpose.
    pub fn confirmed(&self) -> WorkspaceCheck {
        WorkspaceCheck {
            requested: SandboxMode::WorkspaceWrite,
            hold: Hold::Kept,
            ..*self
        }
    }
}

/// Whether an answer to [`WorkspaceCheck::question`] is a yes (`y` or `yes`, any case);
/// anything else, an empty line included, is a no.
pub fn is_yes(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use SandboxMode::{DangerFullAccess, ReadOnly, WorkspaceWrite};

    #[test]
    fn home_and_root_are_broad_nothing_else() {
        let home = Some(Path::new("/home/u"));
        assert_eq!(
            BroadWorkspace::of(Path::new("/home/u"), home),
            Some(BroadWorkspace::Home)
        );
        assert_eq!(
            BroadWorkspace::of(Path::new("/"), home),
            Some(BroadWorkspace::Root)
        );
        assert_eq!(
            BroadWorkspace::of(Path::new("/"), None),
            Some(BroadWorkspace::Root)
        );
        for ws in ["/home/u/src", "/home", "/home/u2", "/tmp"] {
            assert_eq!(BroadWorkspace::of(Path::new(ws), home), None, "{ws}");
        }
        assert_eq!(BroadWorkspace::of(Path::new("/home/u"), None), None);
    }

    #[test]
    fn workspace_write_is_held_back_unless_asked_for_on_purpose() {
        let home = Some(Path::new("/home/u"));
        let ws = Path::new("/home/u");
        let table = [
            (
                WorkspaceWrite,
                ModeOrigin::Default,
                Hold::HeldBack,
                ReadOnly,
            ),
            (WorkspaceWrite, ModeOrigin::Config, Hold::HeldBack, ReadOnly),
            (WorkspaceWrite, ModeOrigin::Flag, Hold::Kept, WorkspaceWrite),
            (ReadOnly, ModeOrigin::Config, Hold::Kept, ReadOnly),
            (
                DangerFullAccess,
                ModeOrigin::Config,
                Hold::Kept,
                DangerFullAccess,
            ),
            (
                DangerFullAccess,
                ModeOrigin::Flag,
                Hold::Kept,
                DangerFullAccess,
            ),
        ];
        for (requested, origin, hold, mode) in table {
            let check = WorkspaceCheck::new(ws, home, requested, origin).unwrap();
            assert_eq!(check.hold, hold, "{requested} {origin:?}");
            assert_eq!(check.mode(), mode, "{requested} {origin:?}");
        }
        assert_eq!(
            WorkspaceCheck::new(
                Path::new("/home/u/p"),
                home,
                WorkspaceWrite,
                ModeOrigin::Default
            ),
            None
        );
        let held =
            WorkspaceCheck::new(Path::new("/"), home, WorkspaceWrite, ModeOrigin::Default).unwrap();
        assert_eq!(held.mode(), ReadOnly);
        assert_eq!(held.confirmed().mode(), WorkspaceWrite);
        assert_eq!(held.confirmed().broad, BroadWorkspace::Root);
    }

    #[test]
    fn warnings_and_the_question_name_the_place_and_the_way() {
        let ws = Path::new("/home/u");
        let home = Some(ws);
        let held = WorkspaceCheck::new(ws, home, WorkspaceWrite, ModeOrigin::Default).unwrap();
        let text = held.warning(ws);
        assert!(
            text.starts_with("the workspace is your home directory (/home/u): "),
            "{text}"
        );
        assert!(text.contains("read-only here"), "{text}");
        assert!(text.contains("--sandbox workspace-write"), "{text}");
        assert_eq!(
            held.question(ws),
            "Let commands write anywhere in your home directory (/home/u) (workspace-write)? [y/N] "
        );
        let root =
            WorkspaceCheck::new(Path::new("/"), home, DangerFullAccess, ModeOrigin::Flag).unwrap();
        let text = root.warning(Path::new("/"));
        assert!(
            text.starts_with("the workspace is the root directory (/)"),
            "{text}"
        );
        assert!(text.contains("danger-full-access"), "{text}");
        for mode in SandboxMode::ALL {
            let check = WorkspaceCheck::new(ws, home, mode, ModeOrigin::Flag).unwrap();
            assert!(!check.warning(ws).is_empty());
        }
    }

    #[test]
    fn only_yes_is_yes() {
        for a in ["y", "Y", "yes", " YES \n", "y\r\n"] {
            assert!(is_yes(a), "{a:?}");
        }
        for a in ["", "\n", "n", "no", "yep", "sure", "y y", "\u{1b}[A"] {
            assert!(!is_yes(a), "{a:?}");
        }
    }
}
