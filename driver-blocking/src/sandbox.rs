//! Spawning a program under a [`SandboxPolicy`]: the launcher setting of the drivers.
//!
//! hrns-core decides the policy; this module builds the [`std::process::Command`] that runs a
//! program under it, through a [`Launcher`] — the `hrns` binary's hidden launcher subcommand
//! (Landlock and seccomp), or one of your own (bubblewrap, a container runtime). The same
//! [`Sandbox::command`] serves `run_command` and MCP stdio servers; the async driver turns its
//! result into a `tokio::process::Command` with `From`. The environment is filtered by the
//! sandbox's [`EnvPolicy`] whatever the policy.

use hrns_core::sandbox::{
    EnvPolicy, SandboxMode, SandboxPolicy, WebFetchPolicy, unavailable_refusal,
};
use hrns_core::tool::ToolOutput;
use hrns_core::tool::fetch::PrivateAddresses;
use hrns_core::tool::protect::{FileAccess, ProtectedPaths};
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// Builds the command that runs a program under a policy. Implement it to plug in your own
/// confinement; [`Launcher::Program`] covers launchers that take hrns's arguments.
pub trait Launch: Send + Sync + fmt::Debug {
    /// Returns a command that runs `program` with `args` confined by `policy`, or why it
    /// cannot (the text becomes part of the refusal the model and the user read). The caller
    /// sets the directory, stdio, process group and environment on the returned command.
    fn command(
        &self,
        policy: &SandboxPolicy,
        program: &OsStr,
        args: &[OsString],
    ) -> Result<Command, String>;
}

/// How confined runs are started.
#[derive(Debug, Clone)]
pub enum Launcher {
    /// No launcher here: confined runs are refused with this reason (an old kernel, another
    /// OS, or the library default); only `danger-full-access` runs.
    Unavailable {
        /// Why, for the refusal.
        reason: String,
    },
    /// A program that takes `ARGS... --mode MODE [--writable ROOT]... --network N -- PROGRAM
    /// ARGS...` ([`SandboxPolicy::launcher_args`]), starts a new session (`setsid`, which
    /// also makes it a process group leader and drops the controlling terminal), confines
    /// itself and then `exec`s the program — such as `hrns __sandbox` (with `args` =
    /// `["__sandbox"]`). The drivers do not put it in a process group of its own: a session
    /// leader cannot be a group leader first.
    Program {
        /// The launcher binary.
        program: PathBuf,
        /// Its arguments before the policy's.
        args: Vec<OsString>,
    },
    /// Your own.
    Custom(Arc<dyn Launch>),
}

/// Why a program was not started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SandboxRefusal(pub String);

/// The sandbox setting of a driver: the policy, the launcher that applies it, and the rules
/// for the environment.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// What commands may do.
    pub policy: SandboxPolicy,
    /// How confined commands are started.
    pub launcher: Launcher,
    /// Which environment variables commands never see.
    pub env: EnvPolicy,
    /// Whether `web_fetch` may reach loopback, private and link-local addresses (refused by
    /// default, in the library too; tests that fetch from loopback opt in).
    pub web_fetch: PrivateAddresses,
    /// Where `web_fetch` may go: the session decides on each call's URL with the same policy
    /// (`SessionConfig::web_fetch`); the tool holds redirects to it. Default: open.
    pub fetch_policy: WebFetchPolicy,
    /// The paths the file tools leave alone: hrns's own config and state (keys, sessions,
    /// records), neither read, listed nor written, and git directories, not written unless
    /// the user allows it. The default protects every `.git` from writes.
    pub protected: ProtectedPaths,
}

impl Sandbox {
    /// No confinement and no launcher — `danger-full-access`, the library's default (the
    /// `hrns` program defaults to `workspace-write`) — with secret variables withheld.
    pub fn unconfined() -> Self {
        Sandbox {
            policy: SandboxPolicy::unconfined(),
            launcher: Launcher::Unavailable {
                reason: "no sandbox launcher is configured".to_owned(),
            },
            env: EnvPolicy::default(),
            web_fetch: PrivateAddresses::Refused,
            fetch_policy: WebFetchPolicy::default(),
            protected: ProtectedPaths::default(),
        }
    }

    /// The command that runs `program` with `args` under the policy, with the environment of
    /// this process filtered by [`EnvPolicy`]. Unconfined runs start the program directly;
    /// confined runs go through the launcher, or are refused (never run unconfined) when
    /// there is none.
    pub fn command(
        &self,
        program: impl AsRef<OsStr>,
        args: &[OsString],
    ) -> Result<Command, SandboxRefusal> {
        let program = program.as_ref();
        let mut command = if self.policy.is_confined() {
            match &self.launcher {
                Launcher::Unavailable { reason } => {
                    return Err(self.refusal(reason));
                }
                Launcher::Program {
                    program: launcher,
                    args: launcher_args,
                } => {
                    let mut c = Command::new(launcher);
                    c.args(launcher_args)
                        .args(self.policy.launcher_args())
                        .arg("--")
                        .arg(program)
                        .args(args);
                    c
                }
                Launcher::Custom(launch) => launch
                    .command(&self.policy, program, args)
                    .map_err(|reason| self.refusal(&reason))?,
            }
        } else {
            let mut c = Command::new(program);
            c.args(args);
            c
        };
        self.apply_env(&mut command);
        Ok(command)
    }

    /// Replaces the environment of `command` with this process's, less the withheld
    /// variables. For programs started some other way (an MCP server's own command).
    pub fn apply_env(&self, command: &mut Command) {
        command.env_clear();
        command.envs(scrubbed_env(&self.env));
    }

    fn refusal(&self, reason: &str) -> SandboxRefusal {
        SandboxRefusal(unavailable_refusal(self.policy.mode(), reason))
    }

    /// Refuses `real` (a path with its links resolved) for `tool` to `access`, as
    /// [`ProtectedPaths::check`] decides; `shown` is the path as the model wrote it.
    pub fn check_real(
        &self,
        tool: &str,
        access: FileAccess,
        shown: &str,
        real: &Path,
    ) -> Result<(), ToolOutput> {
        self.protected
            .check(access, real)
            .map_err(|why| why.refusal(tool, shown))
    }

    /// hrns's protected directories below `root`, spelled under `root` as a directory walk
    /// from it produces them, so a walking tool can skip them.
    pub fn protected_below(&self, root: &Path) -> Vec<PathBuf> {
        let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        self.protected
            .hrns_below(&canonical)
            .into_iter()
            .filter_map(|p| p.strip_prefix(&canonical).ok())
            .map(|rest| root.join(rest))
            .collect()
    }

    /// Refuses reading `requested` for `tool` when its real path is protected; a path that
    /// cannot be resolved (it does not exist) is checked as written, and otherwise left to
    /// the tool's own checks.
    pub fn check_file(&self, tool: &str, requested: &str, path: &Path) -> Result<(), ToolOutput> {
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.check_real(tool, FileAccess::Read, requested, &real)
    }

    /// Makes `command` (from [`Sandbox::command`]) the leader of a process group of its own,
    /// whose id is its pid, so that killing the group ends everything it started: the
    /// launcher of a confined run does it with a new session, anything else gets a new group
    /// at spawn.
    pub fn lead_own_group(&self, command: &mut Command) {
        use std::os::unix::process::CommandExt as _;
        if !self.starts_session() {
            command.process_group(0);
        }
    }

    /// Whether the program starts its own session: a confined run through
    /// [`Launcher::Program`].
    pub fn starts_session(&self) -> bool {
        self.policy.is_confined() && matches!(self.launcher, Launcher::Program { .. })
    }

    /// The mode of the policy.
    pub fn mode(&self) -> SandboxMode {
        self.policy.mode()
    }
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::unconfined()
    }
}

/// Kills the process group `leader` leads with `SIGKILL`. A launcher that has not yet made
/// its session (it was killed the moment it started) has no group and no children yet: it
/// is killed alone. Call it only while `leader` is not reaped, so that its pid is not reused.
pub(crate) fn kill_group(leader: rustix::process::Pid) {
    use rustix::process::{Signal, kill_process, kill_process_group};
    if kill_process_group(leader, Signal::KILL) == Err(rustix::io::Errno::SRCH) {
        let _ = kill_process(leader, Signal::KILL);
    }
}

/// This process's environment less what `policy` withholds (names that are not UTF-8 are
/// kept: they cannot be checked, and secrets are named in ASCII; values are checked as
/// lossy UTF-8, which keeps every URL's ASCII).
pub fn scrubbed_env(policy: &EnvPolicy) -> Vec<(OsString, OsString)> {
    std::env::vars_os()
        .filter(|(name, value)| {
            name.to_str()
                .is_none_or(|n| policy.passes(n, &value.to_string_lossy()))
        })
        .collect()
}
