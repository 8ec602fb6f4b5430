//! The sandbox of commands as plain data: which policy, which directories a command may write,
//! whether it may open network sockets, and which environment variables it never sees.
//!
//! The drivers spawn commands (and MCP stdio servers) through a launcher that applies a
//! [`SandboxPolicy`]; the policy itself is decided here, from facts the caller gathers (the
//! workspace, `$TMPDIR`, the system temporary directory, configured extra roots). The policy
//! names are Codex's, so users know them:
//!
//! | mode | writes | network |
//! | --- | --- | --- |
//! | [`SandboxMode::ReadOnly`] | nowhere | none |
//! | [`SandboxMode::WorkspaceWrite`] | the workspace, `$TMPDIR`, the system temp dir, extra roots | none unless allowed |
//! | [`SandboxMode::DangerFullAccess`] | anywhere the user can | any |
//!
//! "No network" means no TCP or UDP sockets (no socket of any family but Unix). Reading is
//! allowed everywhere under every policy.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

mod env;
mod settings;
mod web;
mod workspace;

pub use env::{
    EnvPolicy, EnvVerdict, SECRET_NAME_ENDINGS, SECRET_NAME_PARTS, SERVICE_HANDLES,
    has_url_password, is_secret_name, is_service_handle,
};
pub use settings::{SafetySettings, relative_project_dirs};
pub use web::{WebFetchNetwork, WebFetchPolicy, WebFetchVerdict};
pub use workspace::{BroadWorkspace, Hold, ModeOrigin, WorkspaceCheck, is_yes};

/// How much a command may do (Codex's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Reads anywhere, writes nowhere, no network.
    ReadOnly,
    /// Reads anywhere, writes in the workspace and the temporary directories, no network
    /// unless the config allows it. The default.
    #[default]
    WorkspaceWrite,
    /// No confinement at all: commands run as the user, as hrns did before it had a sandbox.
    DangerFullAccess,
}

impl SandboxMode {
    /// Every mode, in order of increasing freedom.
    pub const ALL: [SandboxMode; 3] = [
        SandboxMode::ReadOnly,
        SandboxMode::WorkspaceWrite,
        SandboxMode::DangerFullAccess,
    ];

    /// The name on the command line and in the config (`workspace-write`).
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::DangerFullAccess => "danger-full-access",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A sandbox mode name that is not one of the three.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a sandbox policy: use read-only, workspace-write or danger-full-access")]
pub struct UnknownSandboxMode(pub String);

impl FromStr for SandboxMode {
    type Err = UnknownSandboxMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SandboxMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s.trim())
            .ok_or_else(|| UnknownSandboxMode(s.to_owned()))
    }
}

/// Whether a command may open network sockets (TCP, UDP; Unix sockets always work).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NetworkAccess {
    /// Only Unix sockets.
    #[default]
    Denied,
    /// Any socket.
    Allowed,
}

impl NetworkAccess {
    /// `allowed` or `denied`, as the launcher takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkAccess::Denied => "denied",
            NetworkAccess::Allowed => "allowed",
        }
    }
}

impl FromStr for NetworkAccess {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "denied" => Ok(NetworkAccess::Denied),
            "allowed" => Ok(NetworkAccess::Allowed),
            other => Err(format!("`{other}` is not allowed or denied")),
        }
    }
}

/// The facts a policy is made from; the caller reads them from its environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Places {
    /// The workspace root (absolute).
    pub workspace: PathBuf,
    /// `$TMPDIR`, when set.
    pub tmpdir: Option<PathBuf>,
    /// The system temporary directory (`/tmp`).
    pub system_temp: PathBuf,
    /// Extra writable roots from the config (`workspace-write` only).
    pub extra_roots: Vec<PathBuf>,
}

/// What a command may do: the mode, the directories it may write, and the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    mode: SandboxMode,
    writable_roots: Vec<PathBuf>,
    network: NetworkAccess,
}

impl SandboxPolicy {
    /// The policy of `mode` for `places`. `network` counts for `workspace-write` only:
    /// `read-only` never has network and `danger-full-access` always has.
    ///
    /// Writable roots of `workspace-write`: the workspace, `$TMPDIR`, the system temporary
    /// directory and the extra roots, relative ones dropped (a root must be absolute to
    /// mean one place), duplicates once.
    pub fn new(mode: SandboxMode, places: &Places, network: NetworkAccess) -> Self {
        let (writable_roots, network) = match mode {
            SandboxMode::ReadOnly => (Vec::new(), NetworkAccess::Denied),
            SandboxMode::WorkspaceWrite => {
                let mut roots: Vec<PathBuf> = Vec::new();
                let candidates = std::iter::once(&places.workspace)
                    .chain(places.tmpdir.as_ref())
                    .chain(std::iter::once(&places.system_temp))
                    .chain(&places.extra_roots);
                for root in candidates {
                    if root.is_absolute() && !roots.contains(root) {
                        roots.push(root.clone());
                    }
                }
                (roots, network)
            }
            SandboxMode::DangerFullAccess => (Vec::new(), NetworkAccess::Allowed),
        };
        SandboxPolicy {
            mode,
            writable_roots,
            network,
        }
    }

    /// No confinement: today's behaviour, what `danger-full-access` means.
    pub fn unconfined() -> Self {
        SandboxPolicy::new(
            SandboxMode::DangerFullAccess,
            &Places::default(),
            NetworkAccess::Allowed,
        )
    }

    /// The mode.
    pub fn mode(&self) -> SandboxMode {
        self.mode
    }

    /// The directories a command may write below (empty for `read-only`; meaningless for
    /// `danger-full-access`, which writes anywhere).
    pub fn writable_roots(&self) -> &[PathBuf] {
        &self.writable_roots
    }

    /// Whether network sockets are allowed.
    pub fn network(&self) -> NetworkAccess {
        self.network
    }

    /// Whether anything is restricted (every mode but `danger-full-access`).
    pub fn is_confined(&self) -> bool {
        self.mode != SandboxMode::DangerFullAccess
    }

    /// The arguments a launcher takes for this policy, before `--` and the command:
    /// `--mode MODE [--writable ROOT]... --network allowed|denied`.
    pub fn launcher_args(&self) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = vec!["--mode".into(), self.mode.as_str().into()];
        for root in &self.writable_roots {
            args.push("--writable".into());
            args.push(root.clone().into_os_string());
        }
        args.push("--network".into());
        args.push(self.network.as_str().into());
        args
    }

    /// One line describing the policy for people and the model:
    /// `workspace-write (writes only in /ws, /tmp; no network)`.
    pub fn describe(&self) -> String {
        match self.mode {
            SandboxMode::ReadOnly => "read-only (no writes, no network)".to_owned(),
            SandboxMode::WorkspaceWrite => {
                let roots: Vec<String> = self
                    .writable_roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect();
                let network = match self.network {
                    NetworkAccess::Denied => "no network",
                    NetworkAccess::Allowed => "network allowed",
                };
                format!(
                    "workspace-write (writes only in {}; {network})",
                    roots.join(", ")
                )
            }
            SandboxMode::DangerFullAccess => {
                "danger-full-access (no sandbox: commands can write anywhere and use the network)"
                    .to_owned()
            }
        }
    }

    /// The line hrns adds to the result of a confined command that failed, so that the model
    /// knows a "Permission denied" or "Operation not permitted" may be the sandbox's doing.
    pub fn failure_note(&self) -> String {
        format!(
            "hrns: this command ran in the sandbox {}; a write outside those places or a \
             network connection is denied by it. Work within the policy, or ask the user to \
             approve running it without the sandbox.",
            self.describe()
        )
    }

    /// The policy for a program that asks for `mode` instead of this one (an MCP server's
    /// own `"sandbox"` key): the same policy for the same mode, no confinement for
    /// `danger-full-access`, no writes for `read-only`. `workspace-write` needs writable roots
    /// only a `workspace-write` policy knows, so asking for it under another mode is an error
    /// that says so.
    pub fn for_mode(&self, mode: SandboxMode) -> Result<SandboxPolicy, String> {
        match mode {
            _ if mode == self.mode => Ok(self.clone()),
            SandboxMode::DangerFullAccess => Ok(SandboxPolicy::unconfined()),
            SandboxMode::ReadOnly => Ok(SandboxPolicy::new(
                SandboxMode::ReadOnly,
                &Places::default(),
                NetworkAccess::Denied,
            )),
            SandboxMode::WorkspaceWrite => Err(format!(
                "the sandbox workspace-write applies only when the session runs under it (it \
                 runs under {})",
                self.mode
            )),
        }
    }
}

/// The line hrns adds to the result of a command the user let run once without the sandbox,
/// so that the model knows it ran unconfined by the user's leave, not by its own policy.
pub const UNSANDBOXED_NOTE: &str =
    "hrns: ran without the sandbox (danger-full-access), as the user allowed once\n";

/// The refusal of a confined run on a machine (or with a launcher) that cannot confine it.
/// Its text names `--sandbox danger-full-access`, the way to run unconfined on purpose.
pub fn unavailable_refusal(mode: SandboxMode, reason: &str) -> String {
    format!(
        "refused: the sandbox policy {mode} cannot be applied here ({reason}); hrns never runs \
         a command unconfined silently. To run commands without a sandbox, start hrns with \
         --sandbox danger-full-access (or set \"sandbox\": \"danger-full-access\" in the config)."
    )
}

#[cfg(test)]
mod tests;
