//! The sandbox of commands in the `hrns` program: the policy of a run (flag, config, default),
//! the launcher (`hrns __sandbox`, see [`launch`]) and `hrns sandbox --check`.

#[cfg(target_os = "linux")]
mod check;
#[cfg(target_os = "linux")]
mod confine;
pub(crate) mod early;
pub(crate) mod escalate;
pub(crate) mod launch;
#[cfg(target_os = "linux")]
mod mounts;
mod probe;

#[cfg(target_os = "linux")]
pub(crate) use check::check;
pub(crate) use probe::{PROBE_COMMAND, probe};

use crate::setup::CliError;
use crate::term::style::Style;
use hrns_blocking::{Launcher, Sandbox};
use hrns_core::config::Config;
use hrns_core::sandbox::{
    EnvPolicy, Places, SafetySettings, SandboxMode, SandboxPolicy, WebFetchNetwork, WebFetchPolicy,
};
use hrns_core::tool::fetch::PrivateAddresses;
use hrns_core::tool::protect::GitWrites;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The hidden subcommand that is the launcher.
pub(crate) const LAUNCHER_COMMAND: &str = "__sandbox";

/// The sandbox of a run: `flag` (`--sandbox`) over the config (`sandbox`, per project first)
/// over `workspace-write`; secret variables and `key_env` withheld, `envAllow` passed; the
/// config file and the state directory out of the file tools' reach.
///
/// Says on stderr once when the run is unconfined on purpose, or when the machine cannot
/// confine it (then confined commands are refused, never run unconfined).
pub(crate) fn for_run(
    flag: Option<SandboxMode>,
    config_file: &Path,
    config: &Config,
    workspace: &Path,
    key_env: Option<&str>,
) -> Result<Sandbox, CliError> {
    let settings = SafetySettings::from_config(&config.extra, workspace)
        .map_err(|e| CliError::usage(format!("{}: {e}", config_file.display())))?;
    let mode = flag.or(settings.sandbox).unwrap_or_default();
    // A workspace at $HOME or /: warned about, and workspace-write held back to read-only
    // unless asked for with --sandbox (the TUI asks, and calls this again with the flag).
    let broad = crate::setup::guard::workspace_check(flag, &settings, workspace);
    if let Some(check) = &broad {
        eprintln!(
            "{} {}",
            Style::stderr().harness("hrns: warning:"),
            check.warning(workspace)
        );
    }
    let mode = broad.map_or(mode, |check| check.mode());
    let places = Places {
        workspace: workspace.to_path_buf(),
        tmpdir: std::env::var_os("TMPDIR").map(PathBuf::from),
        system_temp: PathBuf::from("/tmp"),
        extra_roots: settings.writable_roots.clone(),
    };
    let policy = SandboxPolicy::new(mode, &places, settings.network);
    let env = EnvPolicy {
        withheld: key_env.map(str::to_owned).into_iter().collect(),
        allowed: settings.env_allow.clone(),
    };
    let s = Style::stderr();
    let guards = guards(config_file, workspace, &settings, &policy);
    let launcher = if policy.is_confined() {
        match launch::support().and_then(|_| launcher(&guards)) {
            Ok(launcher) => {
                warn_unprotected(&s, &guards);
                launcher
            }
            Err(reason) => {
                eprintln!(
                    "{} the sandbox {mode} cannot be applied here ({reason}): commands will be \
                     refused; run with --sandbox danger-full-access to run them unconfined",
                    s.harness("hrns: warning:")
                );
                Launcher::Unavailable { reason }
            }
        }
    } else {
        eprintln!(
            "{} sandbox danger-full-access: commands run unconfined, with your permissions",
            s.harness("hrns:")
        );
        Launcher::Unavailable {
            reason: "not needed".into(),
        }
    };
    let web_fetch = if settings.web_fetch_private {
        PrivateAddresses::Allowed
    } else {
        PrivateAddresses::Refused
    };
    // hrns's own files (keys, sessions, records) and the repository's git directories.
    let protected =
        crate::setup::guard::protected_paths(config_file, workspace, settings.writable_git);
    let fetch_policy = WebFetchPolicy {
        network: WebFetchNetwork::for_sandbox(policy.mode(), policy.network()),
        allow: settings.web_fetch_allow.clone(),
    };
    Ok(Sandbox {
        policy,
        launcher,
        env,
        web_fetch,
        fetch_policy,
        protected,
    })
}

/// What the launcher guards besides the policy's roots: its `--hide`, `--read-only` and
/// `--unix-socket` arguments.
#[derive(Debug, Clone, Default)]
pub(crate) struct Guards {
    /// hrns's config file and state directory.
    pub(crate) hidden: Vec<PathBuf>,
    /// The git directories of the workspace.
    pub(crate) read_only: Vec<PathBuf>,
    /// `sandboxUnixSockets`.
    pub(crate) unix_sockets: Vec<PathBuf>,
}

/// The guards of a run: hidden, hrns's config directory and file and its state directory
/// (keys, sessions, records, MCP approvals; the whole config directory, so that a command in
/// a workspace at $HOME cannot create a config there either); read-only, the git
/// directories unless `sandboxWritableGit`; the sockets of `sandboxUnixSockets`. Missing
/// hrns directories are made for a confined run, so that there is something to hide.
fn guards(
    config_file: &Path,
    workspace: &Path,
    settings: &SafetySettings,
    policy: &SandboxPolicy,
) -> Guards {
    let state_dir = crate::setup::paths::state_dir().ok();
    let config_dir = crate::setup::paths::config_dir().ok();
    if policy.is_confined() {
        for dir in config_dir.iter().chain(&state_dir) {
            if !dir.exists() {
                let _ = crate::setup::paths::private_dir(dir);
            }
        }
    }
    Guards {
        hidden: std::iter::once(config_file.to_path_buf())
            .chain(state_dir)
            .chain(config_dir)
            .map(|p| p.canonicalize().unwrap_or(p))
            .collect(),
        read_only: match settings.writable_git {
            GitWrites::Refused => git_dirs(workspace),
            GitWrites::Allowed => Vec::new(),
        },
        unix_sockets: settings.unix_sockets.clone(),
    }
}

/// The launcher: this very binary with its hidden subcommand and the guards.
pub(crate) fn launcher(guards: &Guards) -> Result<Launcher, String> {
    let program = std::env::current_exe()
        .map_err(|e| format!("cannot find the hrns binary to launch commands with: {e}"))?;
    let mut args: Vec<OsString> = vec![LAUNCHER_COMMAND.into()];
    for (flag, paths) in [
        ("--hide", &guards.hidden),
        ("--read-only", &guards.read_only),
        ("--unix-socket", &guards.unix_sockets),
    ] {
        for path in paths {
            args.push(flag.into());
            args.push(path.clone().into_os_string());
        }
    }
    Ok(Launcher::Program { program, args })
}

/// Says once on stderr when this machine cannot give the namespace's guarantees (a
/// container without user namespaces): commands still run, confined by Landlock and seccomp.
///
/// Says too when `sandboxUnixSockets` lists sockets on a kernel that cannot limit
/// connections to them: then every pathname socket is open to commands.
///
/// The namespace probe runs in the background for a front end that asked for it
/// ([`early::start_in_background`]); that front end says its warning later.
fn warn_unprotected(s: &Style, guards: &Guards) {
    if let Some(Err(reason)) = early::probe() {
        warn_no_namespaces(s, &reason);
    }
    #[cfg(target_os = "linux")]
    if !guards.unix_sockets.is_empty() && !confine::controls_pathname_sockets() {
        eprintln!(
            "{} sandboxUnixSockets is set, and this kernel cannot limit connections to the \
             sockets listed (that needs Landlock ABI 9, Linux 7.1): commands may connect to \
             every pathname Unix socket",
            s.harness("hrns: warning:")
        );
    }
}

/// The warning of a machine where the launcher cannot make its namespace, for `reason`.
fn warn_no_namespaces(s: &Style, reason: &str) {
    eprintln!(
        "{} {reason}: commands cannot be kept from .git, hrns's own files or the metadata of \
         files outside the writable roots here; `hrns sandbox --check` tells what holds",
        s.harness("hrns: warning:")
    );
}

/// The git directories a command in `workspace` must not change: the `.git` of the
/// workspace or of the repository that encloses it (the nearest one up), and for a `.git`
/// file (a worktree, a submodule) the file itself, the directory it points to and that
/// directory's common directory, where the config and hooks are.
pub(crate) fn git_dirs(workspace: &Path) -> Vec<PathBuf> {
    let Some(dot_git) = workspace
        .ancestors()
        .map(|dir| dir.join(".git"))
        .find(|p| p.symlink_metadata().is_ok())
    else {
        return Vec::new();
    };
    let mut dirs = vec![dot_git.clone()];
    if dot_git.is_file() {
        let base = dot_git.parent().unwrap_or(Path::new("/"));
        let pointed = std::fs::read_to_string(&dot_git)
            .ok()
            .and_then(|text| text.strip_prefix("gitdir:").map(|p| base.join(p.trim())));
        if let Some(gitdir) = pointed {
            let common = std::fs::read_to_string(gitdir.join("commondir"))
                .ok()
                .map(|c| gitdir.join(c.trim()));
            dirs.push(gitdir);
            dirs.extend(common);
        }
    }
    dirs.into_iter()
        .map(|d| d.canonicalize().unwrap_or(d))
        .fold(Vec::new(), |mut seen, d| {
            if !seen.contains(&d) {
                seen.push(d);
            }
            seen
        })
}

/// `hrns sandbox --check` where there is no sandbox.
#[cfg(not(target_os = "linux"))]
pub(crate) fn check() -> Result<u8, CliError> {
    println!("sandbox: not available: hrns's sandbox needs Linux (Landlock and seccomp)");
    Ok(crate::exit::FAILURE)
}

#[cfg(test)]
mod tests;
