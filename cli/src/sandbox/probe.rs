//! `hrns __probe KIND [ARG]`: one thing a command might try, run inside the sandbox by
//! `hrns sandbox --check` (and `namespaces` outside it, at startup). Exits 0 when the thing
//! worked — for every kind but `namespaces`, a hole in the sandbox.

use std::ffi::OsString;

/// The hidden subcommand.
pub(crate) const PROBE_COMMAND: &str = "__probe";

/// What a probe tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Probe {
    /// Opens a UDP socket.
    Network,
    /// Connects to the pathname Unix socket ARG.
    UnixPath,
    /// Connects to the abstract Unix socket named ARG.
    UnixAbstract,
    /// Sends signal 0 (a permission check, nothing delivered) to the process ARG.
    Signal,
    /// Opens `/dev/tty` for writing, or finds itself in a session it does not lead (one with
    /// the caller's terminal).
    Terminal,
    /// Makes the launcher's user and mount namespace.
    Namespaces,
}

impl Probe {
    /// The name on the command line.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Probe::Network => "network",
            Probe::UnixPath => "unix",
            Probe::UnixAbstract => "abstract",
            Probe::Signal => "signal",
            Probe::Terminal => "terminal",
            Probe::Namespaces => "namespaces",
        }
    }

    const ALL: [Probe; 6] = [
        Probe::Network,
        Probe::UnixPath,
        Probe::UnixAbstract,
        Probe::Signal,
        Probe::Terminal,
        Probe::Namespaces,
    ];
}

/// Runs the probe named by `args` (those after `__probe`): 0 when the thing worked, 1 when
/// it did not (the reason on stderr), 2 for arguments it does not know.
pub(crate) fn probe(args: &[OsString]) -> u8 {
    let kind = args.first().and_then(|a| a.to_str());
    let arg = args.get(1).map(|a| a.to_string_lossy().into_owned());
    let Some(probe) = Probe::ALL.into_iter().find(|p| Some(p.as_str()) == kind) else {
        eprintln!("hrns probe: unknown probe {kind:?}");
        return crate::exit::USAGE;
    };
    match attempt(probe, arg.as_deref().unwrap_or_default()) {
        Ok(()) => 0,
        Err(reason) => {
            eprintln!("{reason}");
            crate::exit::FAILURE
        }
    }
}

#[cfg(target_os = "linux")]
fn attempt(probe: Probe, arg: &str) -> Result<(), String> {
    use std::os::linux::net::SocketAddrExt as _;
    use std::os::unix::net::{SocketAddr, UnixStream};
    match probe {
        Probe::Network => std::net::UdpSocket::bind("127.0.0.1:0")
            .map(drop)
            .map_err(|e| e.to_string()),
        Probe::UnixPath => UnixStream::connect(arg)
            .map(drop)
            .map_err(|e| e.to_string()),
        Probe::UnixAbstract => SocketAddr::from_abstract_name(arg)
            .and_then(|a| UnixStream::connect_addr(&a))
            .map(drop)
            .map_err(|e| e.to_string()),
        Probe::Signal => {
            let pid = arg.parse().map_err(|_| format!("`{arg}` is not a pid"))?;
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).map_err(|e| e.to_string())
        }
        Probe::Terminal => {
            let pid = nix::unistd::getpid();
            let leads = nix::unistd::getsid(None).is_ok_and(|sid| sid == pid);
            let tty = std::fs::OpenOptions::new().write(true).open("/dev/tty");
            match (leads, tty) {
                (_, Ok(_)) => Ok(()),
                (false, Err(_)) => Ok(()),
                (true, Err(e)) => Err(format!("a session of its own; /dev/tty: {e}")),
            }
        }
        Probe::Namespaces => super::mounts::probe(),
    }
}

#[cfg(not(target_os = "linux"))]
fn attempt(_: Probe, _: &str) -> Result<(), String> {
    Err("hrns's sandbox needs Linux".into())
}

/// Whether the launcher can make its namespace here: tried in a child process, since
/// entering one changes the process for good. The reason when it cannot.
pub(crate) fn namespaces() -> Result<(), String> {
    let hrns = std::env::current_exe().map_err(|e| format!("cannot find hrns: {e}"))?;
    let out = std::process::Command::new(hrns)
        .args([PROBE_COMMAND, Probe::Namespaces.as_str()])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run the namespace probe: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}
