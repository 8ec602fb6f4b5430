//! The stdio transport: the server as a child process speaking newline-delimited JSON-RPC.
//!
//! The child runs under the sandbox, through its launcher, as commands do
//! ([`Sandbox::command`]), in a process group of its own, with this process's environment
//! less what the sandbox's environment rules withhold plus its own `env`, stdin and stdout
//! piped, and stderr piped too: a thread of its own appends it to the server's log line by
//! line, without the server's secrets and with long lines cut
//! ([`hrns_core::mcp::stderr::StderrLines`]). Shutting down closes stdin (the specification's
//! polite request), waits briefly, then kills the whole group, and waits (briefly) for the
//! last of its stderr to reach the log.

use super::connection::Outgoing;
use super::log::ServerLog;
use crate::sandbox::Sandbox;
use hrns_core::mcp::jsonrpc::Message;
use hrns_core::mcp::stderr::StderrLines;
use hrns_core::secrets::Secrets;
use rustix::process::{Pid, Signal, kill_process_group};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a server may take to exit after its stdin closed, before its group is killed.
const EXIT_GRACE: Duration = Duration::from_millis(300);

/// How long the end of a server (its exit, or its shutting down) waits for the rest of its
/// stderr to reach the log. A helper that left the group may hold the pipe open for longer;
/// its thread then writes on, and nothing waits for it.
const STDERR_DRAIN: Duration = Duration::from_secs(1);

/// Set when the thread copying a server's stderr to its log has written the last line.
#[derive(Debug, Default)]
struct Drained {
    done: Mutex<bool>,
    signal: Condvar,
}

impl Drained {
    fn finish(&self) {
        *self.done.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.signal.notify_all();
    }

    /// Waits until it is set, at most `timeout`.
    fn wait(&self, timeout: Duration) {
        let done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self
            .signal
            .wait_timeout_while(done, timeout, |done| !*done)
            .unwrap_or_else(|p| p.into_inner());
    }
}

/// Copies the server's stderr to its `log`, line by line, redacted and cut; runs on a
/// thread of its own until the pipe ends.
fn copy_stderr(mut pipe: ChildStderr, log: ServerLog, secrets: Secrets, drained: &Drained) {
    let mut lines = StderrLines::new(secrets);
    // One write per line, through the handle the `[hrns]` lines use too, so that the log is
    // rotated past its limit whoever writes.
    let write = |line: String| log.line(&line);
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => lines.feed(&buf[..n], write),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    if let Some(last) = lines.finish() {
        write(last);
    }
    drained.finish();
}

/// Writes each message as one line to the child's stdin.
pub(crate) struct StdinWriter(pub(crate) Option<ChildStdin>);

impl Outgoing for StdinWriter {
    fn send(&mut self, message: &Message) -> std::io::Result<()> {
        let Some(stdin) = self.0.as_mut() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "stdin is closed",
            ));
        };
        let mut line = message.to_bytes();
        line.push(b'\n');
        stdin.write_all(&line)?;
        stdin.flush()
    }

    fn close(&mut self) {
        self.0 = None;
    }
}

/// The running child; killed with its group when shut down or dropped.
#[derive(Debug)]
pub(crate) struct ChildProcess {
    child: Arc<Mutex<Child>>,
    group: Option<Pid>,
    /// Set once its stderr is all in the log.
    stderr: Arc<Drained>,
}

/// What [`spawn`] gives: the process, its pipes.
pub(crate) struct Spawned {
    pub(crate) process: ChildProcess,
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
}

/// Starts `command` with `args` under `sandbox` in `cwd`, with `env` added, its stderr
/// appended to `log` without `secrets`. The error says why, for the user (a refusal of the
/// sandbox included).
pub(crate) fn spawn(
    command: &str,
    args: &[String],
    sandbox: &Sandbox,
    env: &BTreeMap<String, String>,
    cwd: &Path,
    log: ServerLog,
    secrets: Secrets,
) -> Result<Spawned, String> {
    // A launcher starts even when the program is missing and fails only after: look first,
    // so the reason names the program rather than a launcher's exit status.
    if !program_exists(command, cwd, env.get("PATH").map(String::as_str)) {
        return Err(format!(
            "cannot run {command:?}: no such program (not found on PATH or not executable)"
        ));
    }
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    let mut program = sandbox
        .command(command, &args)
        .map_err(|refusal| format!("cannot run {command:?}: {refusal}"))?;
    sandbox.lead_own_group(&mut program);
    let mut child = program
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    let group = i32::try_from(child.id()).ok().and_then(Pid::from_raw);
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        if let Some(pid) = group {
            crate::sandbox::kill_group(pid);
        }
        let _ = child.wait();
        return Err(format!(
            "cannot run {command:?}: the child's pipes were not created"
        ));
    };
    let drained = Arc::new(Drained::default());
    let copier = Arc::clone(&drained);
    let copying = std::thread::Builder::new()
        .name("mcp-stderr".into())
        .spawn(move || copy_stderr(stderr, log, secrets, &copier));
    let process = ChildProcess {
        child: Arc::new(Mutex::new(child)),
        group,
        stderr: drained,
    };
    if let Err(e) = copying {
        // Dropped: the group is killed.
        drop(process);
        return Err(format!("cannot start the thread that logs its stderr: {e}"));
    }
    Ok(Spawned {
        process,
        stdin,
        stdout,
    })
}

/// Whether `command` names an executable file: a path (relative to `cwd`) when it holds a
/// `/`, else a name found in a directory of `PATH`, as `execvp` looks it up. `server_path` is
/// the `PATH` of the server's own `env`, which the child searches instead of hrns's.
fn program_exists(command: &str, cwd: &Path, server_path: Option<&str>) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let executable = |path: &Path| {
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if command.contains('/') {
        return executable(&cwd.join(command));
    }
    let path = server_path
        .map(OsString::from)
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path).any(|dir| executable(&cwd.join(dir).join(command)))
}

impl ChildProcess {
    /// How the process ended, if it has ("exited with status 1", "killed by signal 9").
    pub(crate) fn exit_description(&self) -> Option<String> {
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        match child.try_wait() {
            Ok(Some(status)) => Some(describe(status)),
            Ok(None) | Err(_) => None,
        }
    }

    /// A handle that can describe the exit from another thread.
    pub(crate) fn watcher(&self) -> ChildProcess {
        ChildProcess {
            child: Arc::clone(&self.child),
            group: None,
            stderr: Arc::clone(&self.stderr),
        }
    }

    /// Waits (at most a moment) until everything the process wrote to its stderr is in its
    /// log: its last words come before the news of its end.
    pub(crate) fn wait_for_stderr(&self) {
        self.stderr.wait(STDERR_DRAIN);
    }

    /// Waits up to `grace` for the process to exit on its own, then kills its group.
    pub(crate) fn shut_down(&mut self, grace: Duration) {
        let Some(group) = self.group.take() else {
            return;
        };
        let deadline = Instant::now() + grace;
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // The group may hold helpers of the server even when the server itself exited.
        let _ = kill_process_group(group, Signal::KILL);
        let _ = child.wait();
        drop(child);
        self.wait_for_stderr();
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        self.shut_down(EXIT_GRACE);
    }
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("the server process exited with status {code}"),
        (None, Some(signal)) => format!("the server process was killed by signal {signal}"),
        (None, None) => "the server process ended".into(),
    }
}

#[cfg(test)]
#[path = "stdio_tests.rs"]
mod tests;
