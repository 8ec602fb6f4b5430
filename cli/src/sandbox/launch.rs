//! The launcher: `hrns __sandbox --mode MODE [--writable ROOT]... --network N -- PROGRAM ARGS`.
//!
//! It confines itself — Landlock for the file system (read everywhere, write only below the
//! writable roots and to a few devices such as `/dev/null`), seccomp for sockets (only Unix
//! sockets when the network is denied) — and then `exec`s the program, which inherits the
//! restrictions with all its children. Both are applied by safe library calls; no `unsafe`.

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
}

/// Parses the launcher's arguments (those after `__sandbox`).
pub(crate) fn parse(args: &[OsString]) -> Result<Launch, String> {
    let mut mode = None;
    let mut writable = Vec::new();
    let mut network = NetworkAccess::Denied;
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
                });
            }
            "--mode" => {
                let v = value()?.to_string_lossy().into_owned();
                mode = Some(v.parse::<SandboxMode>().map_err(|e| e.to_string())?);
            }
            "--writable" => writable.push(PathBuf::from(value()?)),
            "--network" => network = value()?.to_string_lossy().parse()?,
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
mod imp {
    use super::Launch;
    use hrns_core::sandbox::NetworkAccess;
    use landlock::{
        ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
        RulesetCreatedAttr, RulesetStatus,
    };
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule,
    };
    use std::collections::BTreeMap;

    /// The Landlock ABI whose file-system rights hrns handles (kernels without them get what
    /// they support; a kernel without Landlock at all is refused).
    const FS_ABI: ABI = ABI::V5;

    /// Devices any command may write: discarding output and reading zeros are not escapes.
    const WRITABLE_DEVICES: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

    pub(super) fn support() -> Result<String, String> {
        Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(ABI::V1))
            .and_then(|r| r.create())
            .map(|_| "Landlock (file system) and seccomp (sockets)".to_owned())
            .map_err(|e| format!("Landlock is not available on this kernel: {e}"))
    }

    pub(super) fn confine(launch: &Launch) -> Result<(), String> {
        landlock(launch)?;
        if launch.network == NetworkAccess::Denied {
            seccomp()?;
        }
        Ok(())
    }

    fn landlock(launch: &Launch) -> Result<(), String> {
        let fail = |e: landlock::RulesetError| format!("Landlock failed: {e}");
        let mut ruleset = Ruleset::default()
            .handle_access(AccessFs::from_all(FS_ABI))
            .map_err(fail)?
            .create()
            .map_err(fail)?
            .add_rule(PathBeneath::new(
                PathFd::new("/").map_err(|e| format!("cannot open /: {e}"))?,
                AccessFs::from_read(FS_ABI),
            ))
            .map_err(fail)?;
        for device in WRITABLE_DEVICES {
            if let Ok(fd) = PathFd::new(device) {
                ruleset = ruleset
                    .add_rule(PathBeneath::new(
                        fd,
                        AccessFs::WriteFile | AccessFs::ReadFile,
                    ))
                    .map_err(fail)?;
            }
        }
        for root in &launch.writable {
            // A root that does not exist (an unset cache directory) confines nothing.
            if let Ok(fd) = PathFd::new(root) {
                ruleset = ruleset
                    .add_rule(PathBeneath::new(fd, AccessFs::from_all(FS_ABI)))
                    .map_err(fail)?;
            }
        }
        let status = ruleset.restrict_self().map_err(fail)?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err("Landlock is not enforced by this kernel".into());
        }
        Ok(())
    }

    /// Denies `socket` for every family but `AF_UNIX` (and io_uring, which could open sockets
    /// without the `socket` call) with `EPERM`.
    fn seccomp() -> Result<(), String> {
        let fail = |e: seccompiler::Error| format!("seccomp failed: {e}");
        let not_unix = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )
        .map_err(|e| fail(e.into()))?;
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        rules.insert(
            libc::SYS_socket,
            vec![SeccompRule::new(vec![not_unix]).map_err(|e| fail(e.into()))?],
        );
        rules.insert(libc::SYS_io_uring_setup, Vec::new());
        let arch = std::env::consts::ARCH
            .try_into()
            .map_err(|e: seccompiler::BackendError| fail(e.into()))?;
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )
        .map_err(|e| fail(e.into()))?;
        let program: BpfProgram = filter
            .try_into()
            .map_err(|e: seccompiler::BackendError| fail(e.into()))?;
        seccompiler::apply_filter(&program).map_err(fail)
    }
}

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
