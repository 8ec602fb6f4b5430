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
    // A plain program with plain arguments starts without a shell (a shell costs about as
    // much again as a no-op hook); one that cannot start that way goes through `sh -c`,
    // which then says why as it always would (127 for a missing program).
    let direct = plain_words(&command.command).and_then(|words| {
        let mut cmd = Command::new(words[0]);
        cmd.args(&words[1..]);
        spawn(cmd, env).ok()
    });
    let spawned = match direct {
        Some(child) => Ok(child),
        None => {
            let mut cmd = Command::new("sh");
            cmd.arg("-c").arg(&command.command);
            spawn(cmd, env)
        }
    };
    let mut child = match spawned {
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
            let _ = tx.send(Ended::Pipe(i, read));
        });
    }
    // The exit comes on the same channel as the pipes' ends: whichever is first is seen at
    // once, without polling.
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let _ = tx.send(Ended::Exit(child.wait()));
        });
    }
    drop(tx);
    let mut outputs: [(Vec<u8>, bool); 2] = Default::default();
    let mut exit = None;
    let mut pipes_open = 2;
    let mut killed = false;
    while exit.is_none() || pipes_open > 0 {
        // The hook gets until its deadline; pipes its children hold open after it exited get
        // until the deadline too (at least a moment); then the group is killed and what was
        // read is kept.
        let wait_for = match exit {
            None => deadline.saturating_duration_since(Instant::now()),
            Some(_) => deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(200)),
        };
        let message = if killed {
            rx.recv().ok()
        } else {
            match rx.recv_timeout(wait_for) {
                Ok(m) => Some(m),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    crate::sandbox::kill_group(leader);
                    // Past the deadline, a hook whose children still held its output has
                    // not finished its work either.
                    let past = Instant::now() >= deadline;
                    if exit.is_none() || (past && exit == Some(HookExit::Code(0))) {
                        exit = Some(HookExit::TimedOut);
                    }
                    killed = true;
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => None,
            }
        };
        match message {
            Some(Ended::Pipe(i, read)) => {
                outputs[i] = read;
                pipes_open -= 1;
            }
            Some(Ended::Exit(status)) => {
                // A timed-out hook stays timed out, whatever the kill made of its status.
                if exit.is_none() {
                    exit = Some(exit_of(status));
                }
            }
            None => break,
        }
    }
    let exit = exit.unwrap_or_else(|| HookExit::NotStarted("it ended without a status".into()));
    let [(stdout, out_cut), (stderr, err_cut)] = outputs;
    HookRun {
        exit,
        stdout,
        stderr,
        truncated: out_cut || err_cut,
        duration_ms: millis(started),
    }
}

/// What the threads watching a hook report.
enum Ended {
    /// Pipe `i` (0 stdout, 1 stderr) reached its end: what was kept, and whether there was more.
    Pipe(usize, (Vec<u8>, bool)),
    /// The process ended.
    Exit(std::io::Result<std::process::ExitStatus>),
}

/// The hook's exit as the session reads it.
fn exit_of(status: std::io::Result<std::process::ExitStatus>) -> HookExit {
    use std::os::unix::process::ExitStatusExt as _;
    match status {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => HookExit::Code(code),
            (None, Some(signal)) => HookExit::Signal(signal),
            (None, None) => HookExit::NotStarted("it ended without a status".into()),
        },
        Err(e) => HookExit::NotStarted(format!("waiting for it failed: {e}")),
    }
}

/// Starts `cmd` as a hook: in the workspace, with the hook environment, piped, as the leader
/// of a process group of its own (so that a timeout kills what it started too).
fn spawn(mut cmd: Command, env: &HookEnv) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt as _;
    cmd.current_dir(&env.workspace)
        .env_clear()
        .envs(env.vars.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    cmd.spawn()
}

/// The words of `command` when a shell would read it as a plain program with plain
/// arguments: only letters, digits, spaces and `_ . / , : @ % + = -` (no quotes, variables,
/// globs, redirections, `~` or operators), and no variable assignment in front. `None`
/// otherwise.
fn plain_words(command: &str) -> Option<Vec<&str>> {
    let plain = command
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == ' ' || "_./,:@%+=-".contains(c));
    let words: Vec<&str> = command.split(' ').filter(|w| !w.is_empty()).collect();
    (plain && !words.is_empty() && !words[0].contains('=')).then_some(words)
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

#[cfg(test)]
mod tests {
    use super::plain_words;

    #[test]
    fn only_what_a_shell_would_read_as_plain_words_skips_the_shell() {
        assert_eq!(plain_words("true"), Some(vec!["true"]));
        assert_eq!(
            plain_words("/usr/bin/audit --log=a.log  -v"),
            Some(vec!["/usr/bin/audit", "--log=a.log", "-v"])
        );
        for shell in [
            "",
            "   ",
            "echo $HOME",
            "a | b",
            "a; b",
            "a && b",
            "cat > f",
            "echo 'x'",
            "echo \"x\"",
            "ls *.rs",
            "~/bin/hook",
            "FOO=1 hook",
            "echo a\tb",
            "hook\nrm -rf x",
            "echo `id`",
            "(a)",
            "a\\ b",
        ] {
            assert_eq!(plain_words(shell), None, "{shell:?}");
        }
    }
}
