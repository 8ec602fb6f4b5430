//! `hrns sandbox --check`: each guarantee of the sandbox, proven by trying to break it from
//! inside the real launcher, one line each. Exits 1 when one of them does not hold here.

use super::probe::{PROBE_COMMAND, Probe};
use super::{Guards, launch, launcher};
use crate::setup::CliError;
use hrns_blocking::Sandbox;
use hrns_core::sandbox::{Places, SandboxMode, SandboxPolicy};
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// What the probes leave in the hidden files: found in a command's output, it leaked.
const SECRET: &str = "hrns-check-secret-0f9a";

/// One guarantee and whether it held.
struct Line {
    name: &'static str,
    held: bool,
    holds: String,
    fails: String,
}

/// `hrns sandbox --check`.
pub(crate) fn check() -> Result<u8, CliError> {
    let support = launch::support();
    match &support {
        Ok(what) => println!("sandbox: supported: {what}"),
        Err(reason) => println!("sandbox: not available: {reason}"),
    }
    if support.is_err() {
        println!(
            "policies: only danger-full-access runs commands here (--sandbox danger-full-access)"
        );
        return Ok(crate::exit::FAILURE);
    }
    let namespaces = super::probe::namespaces();
    let lab = Lab::new()?;
    let lines = lab.lines(&namespaces)?;
    let mut all = true;
    for line in &lines {
        all &= line.held;
        if line.held {
            println!("{}: {}", line.name, line.holds);
        } else {
            println!("{}: NOT PROTECTED: {}", line.name, line.fails);
        }
    }
    println!("policies: read-only, workspace-write (default), danger-full-access");
    Ok(if all { 0 } else { crate::exit::FAILURE })
}

/// A throwaway layout to attack: a workspace with a `.git`, hrns-like files to hide, a file
/// outside the writable roots, and listeners on Unix sockets outside.
struct Lab {
    _dir: tempfile::TempDir,
    root: PathBuf,
    workspace: PathBuf,
    sandbox: Sandbox,
    hrns: PathBuf,
}

impl Lab {
    fn new() -> Result<Lab, CliError> {
        let failure = |e: std::io::Error| {
            CliError::failure(format!("cannot make the test directory of the check: {e}"))
        };
        let dir = tempfile::tempdir().map_err(failure)?;
        let root = dir.path().canonicalize().map_err(failure)?;
        let workspace = root.join("workspace");
        let hooks = workspace.join(".git/hooks");
        let state = workspace.join("state");
        std::fs::create_dir_all(&hooks).map_err(failure)?;
        std::fs::create_dir_all(&state).map_err(failure)?;
        std::fs::write(workspace.join(".git/config"), "[core]\n").map_err(failure)?;
        std::fs::write(state.join("session.jsonl"), SECRET).map_err(failure)?;
        std::fs::write(root.join("config.json"), SECRET).map_err(failure)?;
        std::fs::write(root.join("outside.txt"), "x").map_err(failure)?;
        std::fs::set_permissions(
            root.join("outside.txt"),
            std::fs::Permissions::from_mode(0o644),
        )
        .map_err(failure)?;
        let places = Places {
            workspace: workspace.clone(),
            system_temp: workspace.clone(),
            ..Places::default()
        };
        let guards = Guards {
            // The state directory lies in the workspace, as it does for a workspace at $HOME.
            hidden: vec![root.join("config.json"), state],
            read_only: vec![workspace.join(".git")],
            unix_sockets: Vec::new(),
        };
        let sandbox = Sandbox {
            policy: SandboxPolicy::new(SandboxMode::WorkspaceWrite, &places, Default::default()),
            launcher: launcher(&guards).map_err(CliError::failure)?,
            ..Sandbox::unconfined()
        };
        let hrns = std::env::current_exe()
            .map_err(|e| CliError::failure(format!("cannot find the hrns binary: {e}")))?;
        Ok(Lab {
            _dir: dir,
            root,
            workspace,
            sandbox,
            hrns,
        })
    }

    /// Runs `program` with `args` in the sandbox: whether it succeeded, and its output.
    fn run(&self, program: &Path, args: &[OsString]) -> (bool, String) {
        let output = self
            .sandbox
            .command(program, args)
            .ok()
            .and_then(|mut c| c.current_dir(&self.workspace).output().ok());
        match output {
            Some(o) => (
                o.status.success(),
                format!(
                    "{}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                ),
            ),
            None => (false, String::new()),
        }
    }

    fn shell(&self, script: &str) -> (bool, String) {
        self.run(Path::new("sh"), &["-c".into(), script.into()])
    }

    /// Whether the probe worked inside the sandbox (a hole).
    fn probe(&self, probe: Probe, arg: &str) -> bool {
        let args = [PROBE_COMMAND.into(), probe.as_str().into(), arg.into()];
        self.run(&self.hrns, &args).0
    }

    fn lines(&self, namespaces: &Result<(), String>) -> Result<Vec<Line>, CliError> {
        let ns = match namespaces {
            Ok(()) => "mount namespace".to_owned(),
            Err(reason) => format!("no mount namespace here: {reason}"),
        };
        let me = std::process::id().to_string();
        let inside = self.shell("echo ok > inside").0;
        let outside = self
            .shell(&format!(
                "echo no > '{}'",
                self.root.join("escaped").display()
            ))
            .0;
        let network = self.probe(Probe::Network, "");
        let (path_reached, abstract_reached) = self.sockets()?;
        let pathname_by = if super::confine::controls_pathname_sockets() {
            "Landlock ABI 9"
        } else {
            "no Unix sockets but socketpair: this kernel lacks Landlock ABI 9"
        };
        let scopes = super::confine::has_scopes();
        let signal = self.probe(Probe::Signal, &me);
        let git_hook = self.shell("echo 'touch /pwned' > .git/hooks/pre-commit").0;
        let git_config = self.shell("echo '[core] fsmonitor = x' >> .git/config").0;
        let (_, leaked) = self.shell(&format!(
            "cat '{}' state/session.jsonl",
            self.root.join("config.json").display()
        ));
        let (environ_read, _) = self.shell(&format!("cat /proc/{me}/environ > /dev/null"));
        let outside_file = self.root.join("outside.txt");
        self.shell(&format!("chmod 600 '{}'", outside_file.display()));
        let mode = std::fs::metadata(&outside_file)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0);
        let terminal = self.probe(Probe::Terminal, "");
        let scope_note = |what: &str| {
            if scopes {
                format!("{what} (Landlock scope)")
            } else {
                format!("{what}: this kernel lacks Landlock ABI 6 scopes")
            }
        };
        Ok(vec![
            Line {
                name: "file system",
                held: inside && !outside,
                holds: "writes inside the workspace work, outside are blocked".into(),
                fails: format!(
                    "writes inside work: {inside}; writes outside blocked: {}",
                    !outside
                ),
            },
            Line {
                name: "network",
                held: !network,
                holds: "TCP and UDP sockets are blocked".into(),
                fails: "a UDP socket opened".into(),
            },
            Line {
                name: "sockets",
                held: !path_reached && !abstract_reached,
                holds: format!(
                    "Unix sockets made outside are refused (pathname: {pathname_by}; abstract: \
                     {}); sandboxUnixSockets lists exceptions",
                    if scopes {
                        "Landlock scope"
                    } else {
                        "no Unix sockets"
                    }
                ),
                fails: format!(
                    "a pathname socket outside was reached: {path_reached}; an abstract one: \
                     {abstract_reached}"
                ),
            },
            Line {
                name: "signals",
                held: !signal,
                holds: scope_note("commands signal only their own processes"),
                fails: scope_note("a command signalled hrns"),
            },
            Line {
                name: ".git",
                held: !git_hook && !git_config,
                holds: format!("read-only to commands unless sandboxWritableGit ({ns})"),
                fails: format!("a command wrote a hook or git's config ({ns})"),
            },
            Line {
                name: "hrns's files",
                held: !leaked.contains(SECRET),
                holds: format!("the config and state directories are hidden from commands ({ns})"),
                fails: format!("a command read them ({ns})"),
            },
            Line {
                name: "environment",
                held: !environ_read,
                holds: "hrns's own environment (/proc/PID/environ) is refused to commands".into(),
                fails: "a command read /proc/PID/environ of hrns".into(),
            },
            Line {
                name: "metadata",
                held: mode == 0o644,
                holds: format!(
                    "chmod, chown, utime and setxattr outside the writable roots are refused \
                     (read-only mounts, {ns})"
                ),
                fails: format!("chmod outside the writable roots went through ({ns})"),
            },
            Line {
                name: "terminal",
                held: !terminal,
                holds: "commands run without a controlling terminal and cannot open /dev/tty"
                    .into(),
                fails: "a command reached the terminal".into(),
            },
        ])
    }

    /// Listens on a pathname and an abstract Unix socket outside the sandbox and lets a
    /// command connect to each: whether each was reached.
    fn sockets(&self) -> Result<(bool, bool), CliError> {
        use std::os::linux::net::SocketAddrExt as _;
        use std::os::unix::net::{SocketAddr, UnixListener};
        let failure = |e: std::io::Error| {
            CliError::failure(format!("cannot listen on a Unix socket for the check: {e}"))
        };
        let path = self.root.join("outside.sock");
        let listener = UnixListener::bind(&path).map_err(failure)?;
        let name = format!("hrns-check-{}", std::process::id());
        let address = SocketAddr::from_abstract_name(name.as_bytes()).map_err(failure)?;
        let abstract_listener = UnixListener::bind_addr(&address).map_err(failure)?;
        let path_probe = self.probe(Probe::UnixPath, &path.to_string_lossy());
        let abstract_probe = self.probe(Probe::UnixAbstract, &name);
        listener.set_nonblocking(true).map_err(failure)?;
        abstract_listener.set_nonblocking(true).map_err(failure)?;
        // A connection waits in the backlog even after the prober exits.
        let path_reached = path_probe || listener.accept().is_ok();
        let abstract_reached = abstract_probe || abstract_listener.accept().is_ok();
        Ok((path_reached, abstract_reached))
    }
}
