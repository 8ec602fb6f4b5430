//! `run_command`: `sh -c` in its own process group, with a timeout that kills the group.

use super::escaped;
use crate::tool::{CancelFlag, ToolContext};
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{
    COMMAND_KILL_GRACE, COMMAND_PIPE_GRACE, DEFAULT_OUTPUT_CHARS, RUN_COMMAND, RunCommandArgs,
};
use hrns_core::tool::render::{CommandOutcome, render_command, spawn_failed};
use hrns_core::tool::truncate::HeadTail;
use rustix::process::Pid;
use std::io::{ErrorKind, Read};
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the wait loop looks at the child, the clock and the cancellation flag.
const POLL: Duration = Duration::from_millis(10);

/// The `run_command` tool.
///
/// Runs `sh -c COMMAND` in the workspace with stdin from `/dev/null`, in a new process group.
/// Stdout and stderr are read on two threads into [`HeadTail`] captures, so memory stays
/// bounded however much the command prints. The command is killed — its whole process group,
/// with `SIGKILL` — when its timeout passes or the call is cancelled. Once the shell has
/// exited, background processes still holding its output pipes get [`COMMAND_PIPE_GRACE`] and
/// are then killed too (redirect their output to keep them running). The result is rendered by
/// [`render_command`]: exit code or signal, timeout, and both streams, head+tail truncated.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunCommand;

builtin_tool!(RunCommand: RUN_COMMAND, RunCommandArgs => run);

fn run(_: &RunCommand, args: RunCommandArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolOutput> {
    let timeout = args.effective_timeout_secs();
    let shell = ctx
        .sandbox
        .command("sh", &["-c".into(), args.command.into()])
        .map_err(|refusal| ToolOutput::error(format!("{RUN_COMMAND}: {refusal}")))?;
    let mut shell = shell;
    ctx.sandbox.lead_own_group(&mut shell);
    let mut output = match execute(shell, &ctx.workspace, timeout, &ctx.cancel) {
        Ok(outcome) => render_command(&outcome, DEFAULT_OUTPUT_CHARS),
        Err(e) => spawn_failed(&e),
    };
    if output.is_error && ctx.sandbox.policy.is_confined() {
        output.content.push_str(&ctx.sandbox.policy.failure_note());
        output.content.push('\n');
    }
    Ok(output)
}

/// Runs the command (the shell, possibly through a sandbox launcher that `exec`s it) to its
/// end, its timeout or its cancellation.
fn execute(
    mut command: Command,
    dir: &Path,
    timeout_secs: u64,
    cancel: &CancelFlag,
) -> std::io::Result<CommandOutcome> {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(timeout_secs);
    let marker = escaped::new_marker();
    let mut child = command
        .env(escaped::MARKER_VAR, &marker)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let group = Group::of(&child);
    let captures = child
        .stdout
        .take()
        .map(Capture::start)
        .transpose()
        .and_then(|out| Ok((out, child.stderr.take().map(Capture::start).transpose()?)));
    let (stdout, stderr) = match captures {
        Ok(pair) => pair,
        Err(e) => {
            group.kill();
            let _ = child.wait();
            return Err(e);
        }
    };

    let (status, timed_out) = wait(&mut child, &group, deadline, cancel)?;
    let captures = [&stdout, &stderr];
    let pipes_closed = |until: Instant, cancel: Option<&CancelFlag>| {
        captures
            .iter()
            .all(|c| c.as_ref().is_none_or(|c| c.wait_until(until, cancel)))
    };
    if !pipes_closed(
        (Instant::now() + COMMAND_PIPE_GRACE).min(deadline),
        Some(cancel),
    ) {
        group.kill();
        pipes_closed(Instant::now() + COMMAND_KILL_GRACE, None);
    }
    escaped::end_escaped(&marker, group.0);
    Ok(CommandOutcome {
        exit_code: status.code(),
        signal: status.signal(),
        timed_out: timed_out.then_some(timeout_secs),
        stdout: stdout.map(Capture::finish).unwrap_or_default(),
        stderr: stderr.map(Capture::finish).unwrap_or_default(),
    })
}

/// Waits for the shell to exit; kills its group at the deadline or on cancellation. Returns
/// the exit status and whether the deadline killed it.
fn wait(
    child: &mut Child,
    group: &Group,
    deadline: Instant,
    cancel: &CancelFlag,
) -> std::io::Result<(ExitStatus, bool)> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok((status, false)),
            Ok(None) => {}
            Err(e) => {
                group.kill();
                let _ = child.wait();
                return Err(e);
            }
        }
        let timed_out = Instant::now() >= deadline;
        if timed_out || cancel.is_cancelled() {
            group.kill();
            return Ok((child.wait()?, timed_out));
        }
        std::thread::sleep(POLL);
    }
}

/// The process group the shell leads (its id is the shell's pid).
struct Group(Option<Pid>);

impl Group {
    fn of(child: &Child) -> Group {
        Group(i32::try_from(child.id()).ok().and_then(Pid::from_raw))
    }

    /// Sends `SIGKILL` to every process of the group; a group that is already gone is fine.
    fn kill(&self) {
        if let Some(pid) = self.0 {
            crate::sandbox::kill_group(pid);
        }
    }
}

/// One output pipe, read to its end on a thread into a bounded capture.
struct Capture {
    buffer: Arc<Mutex<HeadTail>>,
    reader: JoinHandle<()>,
}

impl Capture {
    fn start(mut pipe: impl Read + Send + 'static) -> std::io::Result<Capture> {
        let buffer = Arc::new(Mutex::new(HeadTail::new(DEFAULT_OUTPUT_CHARS)));
        let shared = Arc::clone(&buffer);
        let reader = std::thread::Builder::new()
            .name("hrns-command-output".into())
            .spawn(move || {
                let mut chunk = vec![0u8; 64 * 1024];
                loop {
                    match pipe.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => shared
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(&chunk[..n]),
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
            })?;
        Ok(Capture { buffer, reader })
    }

    /// Waits until the pipe is closed (returns `true`), `until` passes or the call is
    /// cancelled (returns `false`).
    fn wait_until(&self, until: Instant, cancel: Option<&CancelFlag>) -> bool {
        loop {
            if self.reader.is_finished() {
                return true;
            }
            if Instant::now() >= until || cancel.is_some_and(CancelFlag::is_cancelled) {
                return false;
            }
            std::thread::sleep(POLL);
        }
    }

    /// Returns what was captured. A reader still blocked on a pipe held open by a process
    /// outside the group is left to finish on its own; what it has read so far is kept.
    fn finish(self) -> String {
        if self.reader.is_finished() {
            let _ = self.reader.join();
        }
        let mut buffer = self.buffer.lock().unwrap_or_else(PoisonError::into_inner);
        std::mem::replace(&mut *buffer, HeadTail::new(0)).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_util::{call, workspace};
    use serde_json::json;

    fn run(ctx: &ToolContext, command: &str, timeout_secs: Option<u64>) -> ToolOutput {
        call(
            &RunCommand,
            ctx,
            json!({"command": command, "timeout_secs": timeout_secs}),
        )
    }

    /// Whether a process with this pid exists (`kill -0`) and is not a zombie waiting for a
    /// parent that does not reap (as PID 1 in some containers).
    fn alive(pid: i32) -> bool {
        let exists = rustix::process::test_kill_process(Pid::from_raw(pid).unwrap()).is_ok();
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|s| s.trim_start().starts_with('Z'))
        });
        exists && !zombie
    }

    /// The pid a command wrote to `file`.
    fn pid_in(file: &std::path::Path) -> i32 {
        std::fs::read_to_string(file)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// Fails unless `pid` is gone (or a zombie) within a few seconds.
    fn assert_ends(pid: i32, what: &str) {
        let gone = Instant::now() + Duration::from_secs(5);
        while alive(pid) && Instant::now() < gone {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(pid), "{what} {pid} survived");
    }

    #[test]
    fn success_in_the_workspace() {
        let (dir, ctx) = workspace();
        std::fs::write(dir.path().join("marker"), "").unwrap();
        let out = run(&ctx, "pwd; ls; read x || echo no-stdin >&2", None);
        let expected = format!(
            "exit code: 0\n--- stdout ---\n{}\nmarker\n--- stderr ---\nno-stdin\n",
            ctx.workspace.display()
        );
        assert_eq!(out, ToolOutput::ok(expected));
    }

    #[test]
    fn failure_returns_both_streams() {
        let (_dir, ctx) = workspace();
        let out = run(&ctx, "echo out; echo err >&2; exit 3", None);
        assert_eq!(
            out,
            ToolOutput::error("exit code: 3\n--- stdout ---\nout\n--- stderr ---\nerr\n")
        );
        let out = run(&ctx, "kill -TERM $$", None);
        assert!(out.is_error);
        assert!(
            out.content.starts_with("killed by signal 15 (SIGTERM)"),
            "{}",
            out.content
        );
        let out = run(&ctx, "definitely-not-a-command-hrns", None);
        assert!(out.content.starts_with("exit code: 127"), "{}", out.content);
    }

    #[test]
    fn a_command_that_never_ends_is_killed_with_its_group() {
        let (dir, ctx) = workspace();
        let started = Instant::now();
        let out = run(
            &ctx,
            "sleep 1000 & echo $! > bg.pid; echo started; sleep 1000",
            Some(1),
        );
        let took = started.elapsed();
        assert!(out.is_error);
        assert!(
            out.content.starts_with("killed after timeout of 1 s"),
            "{}",
            out.content
        );
        assert!(
            out.content.contains("--- stdout ---\nstarted\n"),
            "{}",
            out.content
        );
        assert!(took < Duration::from_secs(5), "took {took:?}");
        // The background sleep was in the group: killed, and reaped by init soon after.
        assert_ends(pid_in(&dir.path().join("bg.pid")), "background process");
    }

    #[test]
    fn background_jobs_holding_the_pipes_do_not_hang_the_call() {
        let (_dir, ctx) = workspace();
        let started = Instant::now();
        let out = run(&ctx, "sleep 1000 & echo done", Some(60));
        assert_eq!(
            out,
            ToolOutput::ok("exit code: 0\n--- stdout ---\ndone\n--- stderr (empty) ---\n")
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        // With its output redirected, a background job may outlive the call.
        let out = run(&ctx, "sleep 0.2 > /dev/null 2>&1 & echo ok", Some(60));
        assert!(!out.is_error);
    }

    #[test]
    fn a_process_that_leaves_the_group_cannot_hang_the_call_and_is_ended() {
        let (dir, ctx) = workspace();
        let started = Instant::now();
        let escape = "python3 -c 'import os, time; os.setsid(); \
            open(\"escaped.pid\", \"w\").write(str(os.getpid())); time.sleep(1000)'";
        let out = run(&ctx, &format!("{escape} & sleep 1000"), Some(3));
        assert!(
            out.content.starts_with("killed after timeout"),
            "{}",
            out.content
        );
        assert!(started.elapsed() < Duration::from_secs(8));
        let escaped = pid_in(&dir.path().join("escaped.pid"));
        assert_ends(escaped, "the process that left the group");

        // One that finishes on its own while the shell exits normally is ended too.
        std::fs::remove_file(dir.path().join("escaped.pid")).unwrap();
        let wait_for_pid = "while [ ! -s escaped.pid ]; do sleep 0.05; done";
        let out = run(
            &ctx,
            &format!("{escape} & {wait_for_pid}; echo done"),
            Some(60),
        );
        assert!(out.content.contains("done"), "{}", out.content);
        let escaped = pid_in(&dir.path().join("escaped.pid"));
        assert_ends(escaped, "the process that left the group");
    }

    #[test]
    fn a_flood_of_output_is_bounded() {
        let (_dir, ctx) = workspace();
        let started = Instant::now();
        let out = run(
            &ctx,
            "head -c 100000000 /dev/zero | tr '\\0' x; echo tail-end",
            None,
        );
        assert!(
            !out.is_error,
            "{}",
            &out.content[..200.min(out.content.len())]
        );
        assert!(
            out.content.len() < DEFAULT_OUTPUT_CHARS + 500,
            "{}",
            out.content.len()
        );
        assert!(
            out.content.contains("bytes omitted ...]"),
            "says what was cut"
        );
        assert!(out.content.contains("tail-end\n"), "keeps the tail");
        assert!(started.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn cancellation_kills_the_command_quickly() {
        let (_dir, ctx) = workspace();
        let cancel = ctx.cancel.clone();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            cancel.cancel();
        });
        let started = Instant::now();
        let out = run(&ctx, "echo before; sleep 1000", Some(600));
        canceller.join().unwrap();
        assert!(started.elapsed() < Duration::from_secs(3));
        assert!(out.is_error);
        assert!(
            out.content.starts_with("killed by signal 9 (SIGKILL)"),
            "{}",
            out.content
        );
        assert!(out.content.contains("before"));
    }

    #[test]
    fn a_missing_workspace_is_reported() {
        let (dir, mut ctx) = workspace();
        ctx.workspace = dir.path().join("gone");
        let out = run(&ctx, "true", None);
        assert!(out.is_error);
        assert!(
            out.content.starts_with("could not start"),
            "{}",
            out.content
        );
    }
}
