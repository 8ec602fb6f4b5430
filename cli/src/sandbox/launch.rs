//! The launcher: `hrns __sandbox [--hide PATH]... [--read-only PATH]... [--unix-socket PATH]...
//! --mode MODE [--writable ROOT]... --network N -- PROGRAM ARGS`.
//!
//! It starts a new session (no controlling terminal), confines itself and then `exec`s the
//! program, which inherits every restriction with all its children:
//!
//! - a user and mount namespace ([`super::mounts`]): hrns's files hidden, `.git` read-only,
//!   everything outside the writable roots mounted read-only (metadata included);
//! - Landlock for the file system (read everywhere but in `/dev` and hrns's files, write only
//!   below the writable roots and to `/dev/null` and its like), and its scopes (ABI 6): no
//!   signal to a process outside the sandbox, no connection to an abstract Unix socket made
//!   outside; on kernels with ABI 9, no connection to a pathname Unix socket but those listed;
//! - seccomp for sockets: no TCP or UDP when the network is denied, and on kernels without
//!   Landlock ABI 9 no Unix socket at all (`socketpair` of streams still works) unless
//!   `sandboxUnixSockets` lists some.
//!
//! All of it is applied by safe library calls; no `unsafe`.

use hrns_core::sandbox::{NetworkAccess, SandboxMode};
use std::ffi::OsString;
use std::path::PathBuf;

/// The exit status of a launcher that could not confine itself (as a shell's "cannot run").
pub(crate) const REFUSED: u8 = 126;

/// The environment variable that makes the sandbox look unavailable, to test the refusal
/// (any non-empty value).
pub(crate) const SIMULATE_UNAVAILABLE: &str = "HRNS_SANDBOX_UNAVAILABLE";

/// The parsed launcher arguments.
#[derive(Debug)]
pub(crate) struct Launch {
    pub(crate) mode: SandboxMode,
    pub(crate) writable: Vec<PathBuf>,
    pub(crate) network: NetworkAccess,
    pub(crate) program: Vec<OsString>,
    /// Neither readable nor writable by the command (hrns's config file and state directory).
    pub(crate) hidden: Vec<PathBuf>,
    /// Read-only although below a writable root (`.git` directories).
    pub(crate) read_only: Vec<PathBuf>,
    /// Unix sockets made outside the sandbox that the command may connect to
    /// (`sandboxUnixSockets`).
    pub(crate) unix_sockets: Vec<PathBuf>,
}

/// Parses the launcher's arguments (those after `__sandbox`).
pub(crate) fn parse(args: &[OsString]) -> Result<Launch, String> {
    let mut mode = None;
    let mut writable = Vec::new();
    let mut network = NetworkAccess::Denied;
    let (mut hidden, mut read_only, mut unix_sockets) = (Vec::new(), Vec::new(), Vec::new());
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].to_str().unwrap_or_default();
        let value = || args.get(i + 1).ok_or(format!("{arg} needs a value"));
        match arg {
            "--" => {
                let program = args[i + 1..].to_vec();
                if program.is_empty() {
                    return Err("no program after --".into());
                }
                let mode = mode.ok_or("--mode is missing")?;
                return Ok(Launch {
                    mode,
                    writable,
                    network,
                    program,
                    hidden,
                    read_only,
                    unix_sockets,
                });
            }
            "--mode" => {
                let v = value()?.to_string_lossy().into_owned();
                mode = Some(v.parse::<SandboxMode>().map_err(|e| e.to_string())?);
            }
            "--writable" => writable.push(PathBuf::from(value()?)),
            "--network" => network = value()?.to_string_lossy().parse()?,
            "--hide" => hidden.push(PathBuf::from(value()?)),
            "--read-only" => read_only.push(PathBuf::from(value()?)),
            "--unix-socket" => unix_sockets.push(PathBuf::from(value()?)),
            other => return Err(format!("unknown launcher argument `{other}`")),
        }
        i += 2;
    }
    Err("missing -- before the program".into())
}

/// Runs the launcher: confines this process and `exec`s the program. Returns only on failure,
/// with the exit status.
pub(crate) fn main(args: &[OsString]) -> u8 {
    let launch = match parse(args) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("hrns sandbox launcher: {e}");
            return crate::exit::USAGE;
        }
    };
    // A new session has no controlling terminal: the command cannot write to the user's
    // terminal through `/dev/tty`, nor read its keys. It fails only when the caller made
    // this process a group leader; Landlock keeps `/dev/tty` closed to confined commands.
    #[cfg(target_os = "linux")]
    let _ = nix::unistd::setsid();
    if launch.mode != SandboxMode::DangerFullAccess {
        if let Err(reason) = confine(&launch) {
            eprintln!(
                "hrns: {}",
                hrns_core::sandbox::unavailable_refusal(launch.mode, &reason)
            );
            return REFUSED;
        }
    }
    let err = exec(&launch.program);
    eprintln!(
        "hrns sandbox launcher: cannot run {}: {err}",
        launch.program[0].to_string_lossy()
    );
    127
}

#[cfg(unix)]
fn exec(program: &[OsString]) -> std::io::Error {
    use std::os::unix::process::CommandExt as _;
    std::process::Command::new(&program[0])
        .args(&program[1..])
        .exec()
}

#[cfg(not(unix))]
fn exec(_: &[OsString]) -> std::io::Error {
    std::io::Error::other("the launcher runs on Unix only")
}

/// Whether this machine can confine commands, without confining this process; the reason
/// when it cannot.
pub(crate) fn support() -> Result<String, String> {
    if std::env::var_os(SIMULATE_UNAVAILABLE).is_some_and(|v| !v.is_empty()) {
        return Err(format!("simulated by {SIMULATE_UNAVAILABLE}"));
    }
    imp::support()
}

fn confine(launch: &Launch) -> Result<(), String> {
    if std::env::var_os(SIMULATE_UNAVAILABLE).is_some_and(|v| !v.is_empty()) {
        return Err(format!("simulated by {SIMULATE_UNAVAILABLE}"));
    }
    imp::confine(launch)
}

#[cfg(target_os = "linux")]
use super::confine as imp;

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::Launch;

    pub(super) fn support() -> Result<String, String> {
        Err("hrns's sandbox needs Linux (Landlock and seccomp)".into())
    }

    pub(super) fn confine(_: &Launch) -> Result<(), String> {
        support().map(|_| ())
    }
}
