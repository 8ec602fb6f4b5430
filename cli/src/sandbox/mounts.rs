//! The launcher's user and mount namespace: the view of the file system a confined command
//! gets, made before Landlock (which forbids changing it afterwards).
//!
//! - hrns's own files (`--hide`: the config file, the state directory) are covered: a
//!   directory by an empty read-only tmpfs, a file by `/dev/null`, so a command reads nothing
//!   there, as root too, and cannot write there even when a writable root contains them.
//! - `.git` directories (`--read-only`) are bound read-only over themselves, although they
//!   lie in a writable root.
//! - Every other mount outside the writable roots is remounted read-only, so `chmod`,
//!   `chown`, `utime` and `setxattr` fail there with `EROFS` (Landlock does not cover
//!   metadata).
//!
//! The mounts are made in a new user namespace that maps the user to itself (root to root),
//! so a command sees its own files as its own. A command cannot undo them: Landlock denies
//! `mount`, `umount` and `move_mount` to a confined process, and the launcher empties its
//! capability bounding set, so a root command has no capability left to clone a mount with.

use super::launch::Launch;
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use std::path::{Path, PathBuf};

/// Why the namespace was not made.
#[derive(Debug)]
pub(super) enum NotIsolated {
    /// The machine does not allow it (a container without user namespaces): the command
    /// runs without the guarantees above, which `hrns sandbox --check` reports (and
    /// [`probe`] says why).
    Unavailable,
    /// A step failed after the namespace was made: the command must not run.
    Failed(String),
}

/// Enters a new user and mount namespace and arranges the mounts for `launch`.
pub(super) fn isolate(launch: &Launch) -> Result<(), NotIsolated> {
    enter().map_err(|_| NotIsolated::Unavailable)?;
    arrange(launch).map_err(NotIsolated::Failed)
}

/// Whether this machine lets the launcher make its namespace: enters one in a throwaway
/// process (`hrns __probe namespaces`).
pub(crate) fn probe() -> Result<(), String> {
    enter()
}

/// The environment variable that makes namespaces look unavailable, to test the fallback
/// (any non-empty value).
pub(crate) const SIMULATE_NO_NAMESPACES: &str = "HRNS_SANDBOX_NO_NAMESPACES";

fn enter() -> Result<(), String> {
    if std::env::var_os(SIMULATE_NO_NAMESPACES).is_some_and(|v| !v.is_empty()) {
        return Err(format!(
            "no namespaces (simulated by {SIMULATE_NO_NAMESPACES})"
        ));
    }
    let uid = nix::unistd::getuid().as_raw();
    let gid = nix::unistd::getgid().as_raw();
    match unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS) {
        Ok(()) => {
            // A process may map only its own ids into the namespace it entered (files of
            // other owners show as `nobody`).
            let (uids, gids) = (format!("{uid} {uid} 1"), format!("{gid} {gid} 1"));
            let write = |file: &str, text: &str| {
                std::fs::write(file, text)
                    .map_err(|e| format!("cannot write {file} of the user namespace: {e}"))
            };
            write("/proc/self/setgroups", "deny")?;
            write("/proc/self/uid_map", &uids)?;
            write("/proc/self/gid_map", &gids)
        }
        // Root in a container that forbids user namespaces may still make a mount namespace.
        Err(user_ns) if uid == 0 => unshare(CloneFlags::CLONE_NEWNS).map_err(|e| {
            format!("no user namespace ({user_ns}) and no mount namespace ({e}) here")
        }),
        Err(e) => Err(format!("no user namespace here ({e})")),
    }
}

fn arrange(launch: &Launch) -> Result<(), String> {
    let none: Option<&str> = None;
    let fail = |what: &str, path: &Path, e: nix::Error| {
        format!("cannot {what} {} in the sandbox: {e}", path.display())
    };
    mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none)
        .map_err(|e| fail("make private", Path::new("/"), e))?;
    let writable: Vec<&PathBuf> = launch.writable.iter().filter(|r| r.exists()).collect();
    // The writable roots become mounts of their own, so that remounting their parents
    // read-only leaves them writable.
    for root in &writable {
        mount(
            Some(root.as_path()),
            root.as_path(),
            none,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            none,
        )
        .map_err(|e| fail("bind", root, e))?;
    }
    for path in launch.read_only.iter().filter(|p| p.exists()) {
        mount(
            Some(path.as_path()),
            path.as_path(),
            none,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            none,
        )
        .map_err(|e| fail("bind", path, e))?;
        remount_read_only(path, &MountFlags::of(path)).map_err(|e| fail("protect", path, e))?;
    }
    for path in &launch.hidden {
        hide(path).map_err(|e| fail("hide", path, e))?;
    }
    let done: Vec<&PathBuf> = launch.read_only.iter().chain(&launch.hidden).collect();
    for (point, flags) in mount_points() {
        let kept = writable.iter().any(|r| point.starts_with(r))
            || done.iter().any(|d| point.starts_with(d));
        if !kept && !flags.read_only {
            // A mount that refuses (a special file system) keeps its state; Landlock still
            // denies writes there, and `hrns sandbox --check` tests the metadata of real files.
            let _ = remount_read_only(&point, &flags);
        }
    }
    // The working directory still points below the old mounts: enter it again by its name,
    // through the new ones.
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot find the working directory: {e}"))?;
    std::env::set_current_dir(&cwd)
        .map_err(|e| format!("cannot enter {} in the sandbox: {e}", cwd.display()))
}

/// Covers `path`: a directory with an empty read-only tmpfs, anything else with `/dev/null`.
fn hide(path: &Path) -> nix::Result<()> {
    let none: Option<&str> = None;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => mount(
            Some("tmpfs"),
            path,
            Some("tmpfs"),
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some("size=4k,mode=0555"),
        ),
        Ok(_) => {
            mount(Some("/dev/null"), path, none, MsFlags::MS_BIND, none)?;
            remount_read_only(path, &MountFlags::of(path))
        }
        // Nothing there to read; its parent is hidden or read-only where it matters.
        Err(_) => Ok(()),
    }
}

fn remount_read_only(path: &Path, flags: &MountFlags) -> nix::Result<()> {
    let none: Option<&str> = None;
    mount(
        none,
        path,
        none,
        MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | flags.kept,
        none,
    )
}

/// The flags of a mount that a remount in a user namespace must keep (the kernel locks
/// them), and whether it is read-only already.
#[derive(Debug)]
struct MountFlags {
    kept: MsFlags,
    read_only: bool,
}

impl Default for MountFlags {
    fn default() -> Self {
        MountFlags {
            kept: MsFlags::empty(),
            read_only: false,
        }
    }
}

impl MountFlags {
    /// The flags from a mount's options in `/proc/self/mountinfo` (`rw,nosuid,relatime`).
    fn parse(options: &str) -> MountFlags {
        let mut flags = MountFlags::default();
        let mut atime = MsFlags::MS_STRICTATIME;
        for option in options.split(',') {
            match option {
                "ro" => flags.read_only = true,
                "nosuid" => flags.kept |= MsFlags::MS_NOSUID,
                "nodev" => flags.kept |= MsFlags::MS_NODEV,
                "noexec" => flags.kept |= MsFlags::MS_NOEXEC,
                "noatime" => atime = MsFlags::MS_NOATIME,
                "relatime" => atime = MsFlags::MS_RELATIME,
                "nodiratime" => flags.kept |= MsFlags::MS_NODIRATIME,
                _ => {}
            }
        }
        flags.kept |= atime;
        flags
    }

    /// The flags of the mount `path` is on (the last listed mount containing it).
    fn of(path: &Path) -> MountFlags {
        mount_points()
            .into_iter()
            .filter(|(point, _)| path.starts_with(point))
            .max_by_key(|(point, _)| point.as_os_str().len())
            .map(|(_, flags)| flags)
            .unwrap_or_default()
    }
}

/// Every mount point of this namespace with its flags, parents first.
fn mount_points() -> Vec<(PathBuf, MountFlags)> {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let point = fields.nth(4)?;
            let options = fields.next()?;
            Some((PathBuf::from(unescape(point)), MountFlags::parse(options)))
        })
        .collect()
}

/// A path as mountinfo writes it, with `\040` for a space (octal escapes for space, tab,
/// newline and backslash).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                out.push(d.iter().fold(0u8, |n, b| n.wrapping_mul(8) + (b - b'0')));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_paths_are_unescaped() {
        assert_eq!(unescape(r"/a\040b\134c"), r"/a b\c");
        assert_eq!(unescape(r"/plain"), "/plain");
        assert_eq!(unescape(r"/trailing\04"), r"/trailing\04");
        assert_eq!(unescape(r"\"), r"\");
    }

    #[test]
    fn the_locked_flags_are_kept() {
        let f = MountFlags::parse("rw,nosuid,nodev,noexec,relatime");
        assert!(!f.read_only);
        assert_eq!(
            f.kept,
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC | MsFlags::MS_RELATIME
        );
        let f = MountFlags::parse("ro,noatime");
        assert!(f.read_only);
        assert_eq!(f.kept, MsFlags::MS_NOATIME);
        assert_eq!(MountFlags::parse("rw").kept, MsFlags::MS_STRICTATIME);
    }
}
