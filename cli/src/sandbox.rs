//! The sandbox of commands in the `hrns` program: the policy of a run (flag, config, default),
//! the launcher (`hrns __sandbox`, see [`launch`]) and `hrns sandbox --check`.

pub(crate) mod escalate;
pub(crate) mod launch;

use crate::setup::CliError;
use crate::term::style::Style;
use hrns_blocking::{Launcher, Sandbox};
use hrns_core::config::Config;
use hrns_core::sandbox::{EnvPolicy, Places, SafetySettings, SandboxMode, SandboxPolicy};
use hrns_core::tool::fetch::PrivateAddresses;
use std::path::{Path, PathBuf};

/// The hidden subcommand that is the launcher.
pub(crate) const LAUNCHER_COMMAND: &str = "__sandbox";

/// The hidden subcommand `hrns sandbox --check` runs inside the sandbox: exits 0 when it can
/// open a UDP socket.
pub(crate) const SOCKET_PROBE_COMMAND: &str = "__socket-probe";

/// The socket probe: 0 when a UDP socket opens.
pub(crate) fn socket_probe() -> u8 {
    match std::net::UdpSocket::bind("127.0.0.1:0") {
        Ok(_) => 0,
        Err(_) => crate::exit::FAILURE,
    }
}

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
    let launcher = if policy.is_confined() {
        match launch::support().and_then(|_| launcher()) {
            Ok(launcher) => launcher,
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
    // hrns's own files: the config (keys) and the state directory (sessions, records).
    let protected = std::iter::once(config_file.to_path_buf())
        .chain(crate::setup::paths::state_dir().ok())
        .map(|p| p.canonicalize().unwrap_or(p))
        .collect();
    Ok(Sandbox {
        policy,
        launcher,
        env,
        web_fetch,
        protected,
    })
}

/// The launcher: this very binary with its hidden subcommand.
fn launcher() -> Result<Launcher, String> {
    let program = std::env::current_exe()
        .map_err(|e| format!("cannot find the hrns binary to launch commands with: {e}"))?;
    Ok(Launcher::Program {
        program,
        args: vec![LAUNCHER_COMMAND.into()],
    })
}

/// `hrns sandbox --check`: what this machine supports, proven by running the launcher.
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
    let dir = tempfile::tempdir()
        .map_err(|e| CliError::failure(format!("cannot make a test directory: {e}")))?;
    let workspace = dir
        .path()
        .canonicalize()
        .unwrap_or(dir.path().to_path_buf());
    let places = Places {
        workspace: workspace.clone(),
        system_temp: workspace.clone(),
        ..Places::default()
    };
    let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, &places, Default::default());
    let sandbox = Sandbox {
        policy,
        launcher: launcher().map_err(CliError::failure)?,
        env: EnvPolicy::default(),
        web_fetch: PrivateAddresses::Refused,
        protected: Vec::new(),
    };
    let probe = |script: &str| {
        sandbox
            .command("sh", &["-c".into(), script.into()])
            .ok()
            .and_then(|mut c| c.current_dir(&workspace).output().ok())
            .is_some_and(|o| o.status.success())
    };
    let inside = probe("echo ok > inside");
    let outside = probe(&format!(
        "echo no > {}",
        workspace
            .parent()
            .unwrap_or(Path::new("/"))
            .join(".hrns-sandbox-probe")
            .display()
    ));
    let mut all = inside && !outside;
    println!(
        "workspace-write: writes inside the workspace {}, outside {}",
        if inside { "work" } else { "FAIL" },
        if outside {
            "NOT BLOCKED"
        } else {
            "are blocked"
        }
    );
    let socket = std::env::current_exe().ok().is_some_and(|hrns| {
        sandbox
            .command(hrns, &[SOCKET_PROBE_COMMAND.into()])
            .ok()
            .and_then(|mut c| c.output().ok())
            .is_some_and(|o| o.status.success())
    });
    all &= !socket;
    println!(
        "network: sockets {}",
        if socket {
            "NOT BLOCKED"
        } else {
            "are blocked (Unix sockets allowed)"
        }
    );
    println!("policies: read-only, workspace-write (default), danger-full-access");
    Ok(if all { 0 } else { crate::exit::FAILURE })
}
