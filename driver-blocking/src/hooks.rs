//! Runs hooks ([`hrns_core::hooks`]): each command under `sh -c` in the workspace, its input
//! JSON on stdin, killed with its whole process group past its timeout, stdout and stderr kept
//! up to [`MAX_HOOK_OUTPUT`] bytes each. Nothing is decided here: the session reads the
//! [`HookRun`]s. The async driver runs the same code on a blocking thread.
//!
//! Hooks are the user's own programs, so they run outside the command sandbox, but with the
//! same environment rules as commands: variables that look secret (and the provider's
//! `keyEnv`) are withheld, and so is any variable holding one of the session's secrets.
//! `HRNS_PROJECT_DIR` (and `CLAUDE_PROJECT_DIR`, its alias for Claude Code's scripts) name the
//! workspace.

use hrns_core::hooks::{HookCommand, HookDue, HookExit, HookRun, MAX_HOOK_OUTPUT};
use hrns_core::sandbox::EnvPolicy;
use hrns_core::secrets::Secrets;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Where and with what environment hooks run.
#[derive(Clone)]
pub struct HookEnv {
    workspace: PathBuf,
    vars: Vec<(OsString, OsString)>,
}

impl std::fmt::Debug for HookEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Variable values are the user's; the names are enough to debug with.
        f.debug_struct("HookEnv")
            .field("workspace", &self.workspace)
            .field("vars", &self.vars.len())
            .finish()
    }
}

impl HookEnv {
    /// This process's environment less what `policy` withholds and any variable whose value
    /// holds one of `secrets`, plus `HRNS_PROJECT_DIR` and `CLAUDE_PROJECT_DIR`.
    pub fn new(workspace: &Path, policy: &EnvPolicy, secrets: &Secrets) -> HookEnv {
        let mut vars: Vec<(OsString, OsString)> = crate::sandbox::scrubbed_env(policy)
            .into_iter()
            .filter(|(_, value)| {
                let value = value.to_string_lossy();
                secrets.redact(&value) == value
            })
            .collect();
        for name in ["HRNS_PROJECT_DIR", "CLAUDE_PROJECT_DIR"] {
            vars.retain(|(n, _)| n != name);
            vars.push((name.into(), workspace.as_os_str().to_owned()));
        }
        HookEnv {
            workspace: workspace.to_path_buf(),
            vars,
        }
    }
}

/// Runs every command of `due` at once; the results come in the commands' order.
pub fn run_hooks(due: &HookDue, env: &HookEnv) -> Vec<HookRun> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = due
            .commands
            .iter()
            .map(|command| scope.spawn(|| run_hook(command, &due.input, env)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| HookRun {
                    exit: HookExit::NotStarted("the thread running it panicked".into()),
                    stdout: Vec::new(),
                    stderr: Vec::new(),
                    truncated: false,
                    duration_ms: 0,
                })
            })
            .collect()
    })
}

/// Runs one hook command to its end or its timeout.
pub fn run_hook(command: &HookCommand, input: &str, env: &HookEnv) -> HookRun {
    let started = Instant::now();
    let deadline = started + command.timeout;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(&command.command)
        .current_dir(&env.workspace)
        .env_clear()
        .envs(env.vars.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    {
        use std::os::unix::process::CommandExt as _;
        cmd.process_group(0);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return HookRun {
                exit: HookExit::NotStarted(format!("sh -c {:?}: {e}", command.command)),
                stdout: Vec::new(),
                stderr: Vec::new(),
                truncated: false,
                duration_ms: millis(started),
            };
        }
    };
    let leader = rustix::process::Pid::from_child(&child);
    // A hook that never reads its input must not hold us: the writer is a thread of its own,
    // and a closed pipe only ends it.
    if let Some(mut stdin) = child.stdin.take() {
        let input = input.as_bytes().to_vec();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let (tx, rx) = mpsc::channel();
    let readers = [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ];
    for (i, pipe) in readers.into_iter().enumerate() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let read = pipe.map(read_capped).unwrap_or_default();
            let _ = tx.send((i, read));
        });
    }
    drop(tx);
    let exit = wait(&mut child, leader, deadline);
    // The hook may have left children that hold its pipes open: they get until the
    // deadline (at least a moment), then the group is killed and what was read is kept.
    let mut outputs: [(Vec<u8>, bool); 2] = Default::default();
    let mut exit = exit;
    for _ in 0..2 {
        let wait_for = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(200));
        match rx.recv_timeout(wait_for) {
            Ok((i, read)) => outputs[i] = read,
            Err(_) => {
                let _ = rustix::process::kill_process_group(leader, rustix::process::Signal::KILL);
                if exit == HookExit::Code(0) && Instant::now() >= deadline {
                    exit = HookExit::TimedOut;
                }
                while let Ok((i, read)) = rx.recv() {
                    outputs[i] = read;
                }
                break;
            }
        }
    }
    let [(stdout, out_cut), (stderr, err_cut)] = outputs;
    HookRun {
        exit,
        stdout,
        stderr,
        truncated: out_cut || err_cut,
        duration_ms: millis(started),
    }
}

/// Waits for the hook until `deadline`; past it its process group is killed.
fn wait(child: &mut Child, leader: rustix::process::Pid, deadline: Instant) -> HookExit {
    use std::os::unix::process::ExitStatusExt as _;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return match (status.code(), status.signal()) {
                    (Some(code), _) => HookExit::Code(code),
                    (None, Some(signal)) => HookExit::Signal(signal),
                    (None, None) => HookExit::NotStarted("it ended without a status".into()),
                };
            }
            Ok(None) => {}
            Err(e) => return HookExit::NotStarted(format!("waiting for it failed: {e}")),
        }
        if Instant::now() >= deadline {
            crate::sandbox::kill_group(leader);
            let _ = child.wait();
            return HookExit::TimedOut;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Reads a pipe to its end, keeping the first [`MAX_HOOK_OUTPUT`] bytes; returns them and
/// whether there was more.
fn read_capped(mut pipe: Box<dyn Read + Send>) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let mut cut = false;
    loop {
        match pipe.read(&mut buf) {
            Ok(0) | Err(_) => return (kept, cut),
            Ok(n) => {
                let room = MAX_HOOK_OUTPUT - kept.len();
                if n > room {
                    cut = true;
                }
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

fn millis(since: Instant) -> u64 {
    since.elapsed().as_millis().min(u128::from(u64::MAX)) as u64
}
