//! Running the `git` program for the shadow repository: isolated from the user's git setup and
//! bounded in time.

use super::CheckpointError;
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The settings every call passes on the command line, so that nothing of the user's (hooks,
/// `fsmonitor`, line-end conversion, maintenance, signing) runs or changes the bytes.
///
/// The untracked cache is on: `git status` then re-reads only the directories whose `stat`
/// changed since the last snapshot, so a step costs what changed plus one `lstat` per file.
/// The index is split: each of the step's index writes (`status`, `update-index` or `add`,
/// `write-tree`) writes only the entries that changed, not the whole index again. When git does
/// write a new shared index (once over a fifth of the entries are new to it, as after each
/// batch of a first snapshot), the
/// one it replaces is removed at once rather than kept for two weeks: every `git` call that
/// reads the shadow index runs under the store's lock, so none can be reading the old one.
const ISOLATION: [&str; 15] = [
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=true",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.fileMode=true",
    "core.quotePath=false",
    "core.splitIndex=true",
    "splitIndex.sharedIndexExpire=now",
    "gc.auto=0",
    // No reflog: HEAD moves with every snapshot, and a log would keep pruned ones alive.
    "core.logAllRefUpdates=false",
    "maintenance.auto=false",
    "commit.gpgSign=false",
    "advice.addEmbeddedRepo=false",
];

/// One way to run `git` against the shadow repository.
#[derive(Debug, Clone)]
pub(super) struct Git {
    pub(super) program: PathBuf,
    pub(super) git_dir: PathBuf,
    pub(super) work_tree: PathBuf,
}

impl Git {
    /// The global config file the calls read instead of the user's: it only trusts the
    /// workspace whoever owns it.
    pub(super) fn global_config(&self) -> PathBuf {
        self.git_dir.join("hrns.gitconfig")
    }

    fn command(&self, args: &[&OsStr], env: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            cmd.env("PATH", path);
        }
        cmd.env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_INDEX_FILE", self.git_dir.join("index"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.global_config())
            .env("GIT_ATTR_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("HOME", &self.git_dir)
            .env("LC_ALL", "C")
            .env("GIT_AUTHOR_NAME", "hrns")
            .env("GIT_AUTHOR_EMAIL", "hrns@localhost")
            .env("GIT_COMMITTER_NAME", "hrns")
            .env("GIT_COMMITTER_EMAIL", "hrns@localhost")
            .current_dir(&self.work_tree);
        if args.first() == Some(&OsStr::new("init")) {
            // `init` takes no work tree; the shadow repository is told of it by its config.
            cmd.env_remove("GIT_WORK_TREE");
        }
        for (key, value) in env {
            cmd.env(key, value);
        }
        for setting in ISOLATION {
            cmd.arg("-c").arg(setting);
        }
        cmd.args(args);
        cmd
    }

    /// Runs `git ARGS`, feeding `input`, and returns its standard output; fails on a non-zero
    /// exit or when `deadline` passes (the process is killed).
    pub(super) fn run(
        &self,
        args: &[&OsStr],
        input: Option<&[u8]>,
        deadline: Instant,
    ) -> Result<Vec<u8>, CheckpointError> {
        self.run_with(args, input, &[], deadline)
    }

    /// [`run`](Self::run) with extra environment variables (over the isolating ones).
    pub(super) fn run_with(
        &self,
        args: &[&OsStr],
        input: Option<&[u8]>,
        env: &[(&str, &str)],
        deadline: Instant,
    ) -> Result<Vec<u8>, CheckpointError> {
        let what = || {
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut child = self
            .command(args, env)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => CheckpointError::GitMissing,
                _ => CheckpointError::Io {
                    path: self.program.clone(),
                    source: e,
                },
            })?;
        let stdout = drain(child.stdout.take());
        let stderr = drain(child.stderr.take());
        let feeder = match (input, child.stdin.take()) {
            (Some(bytes), Some(mut pipe)) => {
                let bytes = bytes.to_vec();
                Some(std::thread::spawn(move || {
                    let _ = pipe.write_all(&bytes);
                }))
            }
            _ => None,
        };
        let status = match wait_until(&mut child, deadline) {
            Ok(Some(status)) => status,
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CheckpointError::TimedOut { command: what() });
            }
            Err(e) => {
                return Err(CheckpointError::Io {
                    path: self.program.clone(),
                    source: e,
                });
            }
        };
        if let Some(feeder) = feeder {
            let _ = feeder.join();
        }
        let out = stdout.join().unwrap_or_default();
        let err = stderr.join().unwrap_or_default();
        if !status.success() {
            let stderr = String::from_utf8_lossy(&err);
            return Err(CheckpointError::Git {
                command: what(),
                status: status.code(),
                stderr: stderr.trim().chars().take(2000).collect(),
            });
        }
        Ok(out)
    }
}

/// Waits for `child` to exit, until `deadline` (`None` then: the caller kills it).
///
/// The exit is seen the moment it happens: the wait sleeps in `poll` on a pidfd of the child,
/// which becomes readable when it exits. A step runs several short `git` calls one after the
/// other, and a poll of `try_wait` with growing pauses noticed each exit up to several
/// milliseconds late, a latency that added up on every step. Where pidfds are not available
/// (Linux before 5.3), it falls back to that poll.
fn wait_until(child: &mut Child, deadline: Instant) -> std::io::Result<Option<ExitStatus>> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use rustix::process::{Pid, PidfdFlags, pidfd_open};
    let mut pidfd = pidfd_open(Pid::from_child(child), PidfdFlags::empty()).ok();
    let mut pause = Duration::from_micros(200);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        match &pidfd {
            Some(fd) => {
                let timeout = Timespec::try_from(left).unwrap_or(Timespec {
                    tv_sec: i64::MAX,
                    tv_nsec: 0,
                });
                let mut fds = [PollFd::new(fd, PollFlags::IN)];
                match poll(&mut fds, Some(&timeout)) {
                    // Readable (exited), timed out, or interrupted: the exit and the deadline
                    // are checked again first.
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(_) => pidfd = None,
                }
            }
            None => {
                std::thread::sleep(pause.min(left));
                pause = (pause * 2).min(Duration::from_millis(10));
            }
        }
    }
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut out);
        }
        out
    })
}

/// Finds the `git` program on `PATH`.
pub(super) fn find_program() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("git"))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::wait_until;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    #[test]
    fn a_wait_gives_the_exit_or_stops_at_the_deadline() {
        let mut quick = Command::new("sh")
            .args(["-c", "exit 3"])
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let far = Instant::now() + Duration::from_secs(600);
        let status = wait_until(&mut quick, far).unwrap().expect("it exited");
        assert_eq!(status.code(), Some(3));
        // A call still running at its deadline: no status, and the caller kills it.
        let mut slow = Command::new("sleep")
            .arg("600")
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let soon = Instant::now() + Duration::from_millis(50);
        assert_eq!(wait_until(&mut slow, soon).unwrap(), None);
        slow.kill().unwrap();
        slow.wait().unwrap();
        // A deadline already past still reports a child that has exited.
        let mut done = Command::new("true").stdin(Stdio::null()).spawn().unwrap();
        done.wait().unwrap();
        let past = Instant::now();
        assert!(wait_until(&mut done, past).unwrap().is_some());
    }
}
