//! The launcher's confinement on Linux: the namespace ([`super::mounts`]), the capability
//! bounding set, Landlock and seccomp, in that order (Landlock forbids mounting afterwards).

use super::launch::Launch;
use super::mounts::{self, NotIsolated};
use hrns_core::sandbox::NetworkAccess;
use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The Landlock ABI whose file-system rights hrns handles (kernels without them get what
/// they support; a kernel without Landlock at all is refused).
const FS_ABI: ABI = ABI::V5;

/// Devices any command may read and write: discarding output and reading zeros are not
/// escapes. `/dev/tty` is not one: a command has no terminal.
const WRITABLE_DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// Devices a command may read besides those. The rest of `/dev` (disks, which root could
/// read hrns's files from, terminals, `/dev/mem`) is closed; `/dev/fd` and `/dev/stdin` are
/// links into `/proc`, which stays readable.
const READABLE_DEVICES: [&str; 3] = ["/dev/random", "/dev/urandom", "/dev/shm"];

pub(super) fn support() -> Result<String, String> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(|r| r.create())
        .map(|_| "Landlock (file system) and seccomp (sockets)".to_owned())
        .map_err(|e| format!("Landlock is not available on this kernel: {e}"))
}

/// Whether the kernel has Landlock ABI 9, which controls connections to pathname Unix
/// sockets (`LANDLOCK_ACCESS_FS_RESOLVE_UNIX`).
pub(crate) fn controls_pathname_sockets() -> bool {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::ResolveUnix)
        .and_then(|r| r.create())
        .is_ok()
}

/// Whether the kernel has Landlock ABI 6, whose scopes keep signals and abstract Unix
/// sockets inside the sandbox.
pub(crate) fn has_scopes() -> bool {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .scope(Scope::AbstractUnixSocket | Scope::Signal)
        .and_then(|r| r.create())
        .is_ok()
}

pub(super) fn confine(launch: &Launch) -> Result<(), String> {
    match mounts::isolate(launch) {
        Ok(()) => {}
        // No namespace here: what Landlock and seccomp give still holds, and
        // `hrns sandbox --check` says what does not.
        Err(NotIsolated::Unavailable) => {}
        Err(NotIsolated::Failed(reason)) => return Err(reason),
    }
    drop_capabilities();
    let pathname_sockets = controls_pathname_sockets();
    landlock(launch, pathname_sockets)?;
    let unix = if pathname_sockets || !launch.unix_sockets.is_empty() {
        UnixSockets::Allowed
    } else {
        UnixSockets::Denied
    };
    seccomp(launch.network, unix)
}

/// Empties the capability bounding set, so that a command run as root keeps no capability
/// after `exec` (none to read a disk with, clone a mount, or trace a process). Fails quietly
/// for a user who has no capabilities to lose.
fn drop_capabilities() {
    for capability in rustix::thread::CapabilitySet::all().iter() {
        let _ = rustix::thread::remove_capability_from_bounding_set(capability);
    }
}

fn landlock(launch: &Launch, pathname_sockets: bool) -> Result<(), String> {
    let fail = |e: landlock::RulesetError| format!("Landlock failed: {e}");
    let mut handled = AccessFs::from_all(FS_ABI);
    if pathname_sockets {
        handled |= AccessFs::ResolveUnix;
    }
    let mut ruleset = Ruleset::default()
        .handle_access(handled)
        .map_err(fail)?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)
        .map_err(fail)?
        .create()
        .map_err(fail)?;
    let mut closed: Vec<PathBuf> = vec![PathBuf::from("/dev")];
    closed.extend(launch.hidden.iter().cloned());
    let mut listed = Vec::new();
    let mut readable = Vec::new();
    open_around(Path::new("/"), &closed, &mut listed, &mut readable);
    let rights = [
        (listed, AccessFs::ReadDir.into()),
        (readable, AccessFs::from_read(FS_ABI)),
        (
            READABLE_DEVICES.iter().map(PathBuf::from).collect(),
            AccessFs::from_read(FS_ABI),
        ),
        (
            WRITABLE_DEVICES.iter().map(PathBuf::from).collect(),
            AccessFs::WriteFile | AccessFs::ReadFile,
        ),
        (launch.writable.clone(), AccessFs::from_all(FS_ABI)),
        (
            launch.unix_sockets.clone(),
            if pathname_sockets {
                AccessFs::ResolveUnix.into()
            } else {
                landlock::BitFlags::empty()
            },
        ),
    ];
    for (paths, access) in rights {
        if access.is_empty() {
            continue;
        }
        for path in paths {
            // A path that does not exist (an unset cache directory, a device this machine
            // lacks) is given nothing.
            if let Ok(fd) = PathFd::new(&path) {
                ruleset = ruleset
                    .add_rule(PathBeneath::new(fd, access))
                    .map_err(fail)?;
            }
        }
    }
    let status = ruleset.restrict_self().map_err(fail)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err("Landlock is not enforced by this kernel".into());
    }
    Ok(())
}

/// Splits "everything below `dir`" around `closed`: the directories on the way to a closed
/// path may be listed (`listed`), and everything beside that way read (`readable`).
fn open_around(
    dir: &Path,
    closed: &[PathBuf],
    listed: &mut Vec<PathBuf>,
    readable: &mut Vec<PathBuf>,
) {
    listed.push(dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if closed.contains(&path) {
            continue;
        }
        let on_the_way = closed.iter().any(|c| c.starts_with(&path));
        if on_the_way && entry.file_type().is_ok_and(|t| t.is_dir()) {
            open_around(&path, closed, listed, readable);
        } else {
            readable.push(path);
        }
    }
}

/// Whether a command may make Unix sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UnixSockets {
    /// It may (Landlock controls connections, or `sandboxUnixSockets` asks for them).
    Allowed,
    /// It may not: `socket(AF_UNIX)` and datagram `socketpair` are refused.
    Denied,
}

/// Denies with `EPERM`: `socket` for every family but `AF_UNIX` when the network is denied,
/// `AF_UNIX` too unless allowed, datagram `socketpair` (a datagram socket can send to any
/// path) with it, and io_uring (which could open sockets without the `socket` call).
fn seccomp(network: NetworkAccess, unix: UnixSockets) -> Result<(), String> {
    let fail = |e: seccompiler::Error| format!("seccomp failed: {e}");
    let condition = |arg: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(|e| fail(e.into()))
    };
    let family = libc::AF_UNIX as u64;
    let socket = match (network, unix) {
        (NetworkAccess::Allowed, UnixSockets::Allowed) => None,
        (NetworkAccess::Allowed, UnixSockets::Denied) => {
            Some(vec![condition(0, SeccompCmpOp::Eq, family)?])
        }
        (NetworkAccess::Denied, UnixSockets::Allowed) => {
            Some(vec![condition(0, SeccompCmpOp::Ne, family)?])
        }
        // Every socket: an empty rule list matches every call.
        (NetworkAccess::Denied, UnixSockets::Denied) => Some(Vec::new()),
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    if let Some(socket) = socket {
        rules.insert(libc::SYS_socket, socket);
        rules.insert(libc::SYS_io_uring_setup, Vec::new());
    }
    if unix == UnixSockets::Denied {
        let datagram = condition(1, SeccompCmpOp::MaskedEq(0xf), libc::SOCK_DGRAM as u64)?;
        rules.insert(libc::SYS_socketpair, vec![datagram]);
    }
    if rules.is_empty() {
        return Ok(());
    }
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
