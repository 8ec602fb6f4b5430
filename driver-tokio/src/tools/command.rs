//! `run_command` on `tokio::process`: `sh -c` in its own process group, output captured in
//! bounded memory, the whole group killed on timeout, cancellation or drop.

use crate::tool::ToolContext;
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{
    COMMAND_KILL_GRACE, COMMAND_PIPE_GRACE, DEFAULT_OUTPUT_CHARS, RUN_COMMAND, RunCommandArgs,
};
use hrns_core::tool::render::{CommandOutcome, render_command, spawn_failed};
use hrns_core::tool::truncate::HeadTail;
use rustix::process::{Pid, Signal, kill_process_group};
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::time::{Instant, sleep_until};

/// `run_command`: `sh -c COMMAND` in the workspace with a timeout.
///
/// Runs with stdin from `/dev/null` in a new process group; stdout and stderr are captured
/// into [`HeadTail`]s. The whole group is killed with `SIGKILL` at the timeout, on
/// cancellation, or when the future is dropped. Once the shell has exited, background
/// processes still holding its output pipes get [`COMMAND_PIPE_GRACE`] and are then killed
/// too (redirect their output to keep them running). The result is [`render_command`]'s.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunCommand;

builtin_tool!(RunCommand: RUN_COMMAND, RunCommandArgs => run_command);

async fn run_command(
    _: &RunCommand,
    a: RunCommandArgs,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolOutput> {
    Ok(run(&a, ctx).await)
}

async fn run(a: &RunCommandArgs, ctx: &ToolContext) -> ToolOutput {
    let secs = a.effective_timeout_secs();
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut child = match Command::new("sh")
        .arg("-c")
        .arg(&a.command)
        .current_dir(&ctx.workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return spawn_failed(&e),
    };
    // The shell leads a new group whose id is its pid: killing the group kills everything the
    // command started, and the guard does so if this future is dropped mid-run.
    let mut group = GroupGuard(child.id().and_then(|id| Pid::from_raw(id as i32)));
    let (out_pipe, err_pipe) = (child.stdout.take(), child.stderr.take());
    let mut stdout = HeadTail::new(DEFAULT_OUTPUT_CHARS);
    let mut stderr = HeadTail::new(DEFAULT_OUTPUT_CHARS);
    let (status, timed_out) = {
        let mut reading = std::pin::pin!(async {
            tokio::join!(
                capture(out_pipe, &mut stdout),
                capture(err_pipe, &mut stderr)
            );
        });
        let mut read_all = false;
        // Wait for the shell to exit, reading its output; kill the group at the deadline or
        // on cancellation.
        let ended = loop {
            tokio::select! {
                status = child.wait() => break (status, false),
                () = &mut reading, if !read_all => read_all = true,
                () = sleep_until(deadline) => {
                    group.kill();
                    break (child.wait().await, true);
                }
                () = ctx.cancel.cancelled() => {
                    group.kill();
                    break (child.wait().await, false);
                }
            }
        };
        // Background processes may still hold the pipes: give them the grace, then kill the
        // group and read what is left for a bounded time.
        if !read_all {
            let grace = (Instant::now() + COMMAND_PIPE_GRACE).min(deadline);
            let closed = tokio::select! {
                () = &mut reading => true,
                () = sleep_until(grace) => false,
                () = ctx.cancel.cancelled() => false,
            };
            if !closed {
                group.kill();
                let _ = tokio::time::timeout(COMMAND_KILL_GRACE, &mut reading).await;
            }
        }
        ended
    };
    // Whatever had to be killed has been; a background process that let go of the pipes may
    // go on.
    group.disarm();
    let status = match status {
        Ok(status) => status,
        Err(e) => return spawn_failed(&e),
    };
    render_command(
        &CommandOutcome {
            exit_code: status.code(),
            signal: status.signal(),
            timed_out: timed_out.then_some(secs),
            stdout: stdout.finish(),
            stderr: stderr.finish(),
        },
        DEFAULT_OUTPUT_CHARS,
    )
}

/// Reads `pipe` to its end into `sink`.
async fn capture(pipe: Option<impl AsyncRead + Unpin>, sink: &mut HeadTail) {
    let Some(mut pipe) = pipe else { return };
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n @ 1..) = pipe.read(&mut buf).await {
        sink.push(&buf[..n]);
    }
}

/// Kills a process group with SIGKILL when dropped, unless disarmed.
struct GroupGuard(Option<Pid>);

impl GroupGuard {
    /// Sends `SIGKILL` to every process of the group; a group that is already gone is fine.
    fn kill(&self) {
        if let Some(group) = self.0 {
            let _ = kill_process_group(group, Signal::KILL);
        }
    }

    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}
