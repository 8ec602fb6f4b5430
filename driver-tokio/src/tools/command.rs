//! `run_command` on `tokio::process`: `sh -c` in its own process group, output captured in
//! bounded memory, the whole group killed on timeout, cancellation or drop.

use crate::tool::ToolContext;
use hrns_core::tool::ToolOutput;
use hrns_core::tool::builtin::{DEFAULT_OUTPUT_CHARS, RUN_COMMAND, RunCommandArgs};
use hrns_core::tool::render::{CommandOutcome, render_command};
use hrns_core::tool::truncate::HeadTail;
use rustix::process::{Pid, Signal, kill_process_group};
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};

/// How long output is still read after the shell exited, for what it printed last; a
/// background process that keeps the pipes open does not hold the result longer.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(200);

/// `run_command`: `sh -c COMMAND` in the workspace with a timeout.
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

/// How the wait for the command ended.
enum End {
    Exited(std::io::Result<ExitStatus>),
    TimedOut,
    Cancelled,
}

async fn run(a: &RunCommandArgs, ctx: &ToolContext) -> ToolOutput {
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
        Err(e) => return ToolOutput::error(format!("could not start `sh`: {e}")),
    };
    // The shell leads a new group whose id is its pid: killing the group kills everything the
    // command started, and the guard does so if this future is dropped mid-run.
    let mut group = GroupGuard(child.id().and_then(|id| Pid::from_raw(id as i32)));
    let mut stdout = HeadTail::new(DEFAULT_OUTPUT_CHARS);
    let mut stderr = HeadTail::new(DEFAULT_OUTPUT_CHARS);
    let secs = a.effective_timeout_secs();
    let end = tokio::select! {
        status = wait_and_capture(&mut child, &mut stdout, &mut stderr) => End::Exited(status),
        () = tokio::time::sleep(Duration::from_secs(secs)) => End::TimedOut,
        () = ctx.cancel.cancelled() => End::Cancelled,
    };
    let timed_out = matches!(end, End::TimedOut).then_some(secs);
    let status = match end {
        End::Exited(status) => {
            group.disarm(); // background processes the command left may go on
            status
        }
        End::TimedOut => {
            group.kill();
            child.wait().await
        }
        End::Cancelled => {
            group.kill();
            let _ = child.wait().await;
            return ToolOutput::error("the command was cancelled and killed");
        }
    };
    let status = match status {
        Ok(status) => status,
        Err(e) => return ToolOutput::error(format!("could not wait for the command: {e}")),
    };
    render_command(
        &CommandOutcome {
            exit_code: status.code(),
            signal: status.signal(),
            timed_out,
            stdout: stdout.finish(),
            stderr: stderr.finish(),
        },
        DEFAULT_OUTPUT_CHARS,
    )
}

/// Waits for the shell to exit while reading both pipes; after the exit, reads on for at most
/// [`DRAIN_AFTER_EXIT`].
async fn wait_and_capture(
    child: &mut Child,
    stdout: &mut HeadTail,
    stderr: &mut HeadTail,
) -> std::io::Result<ExitStatus> {
    let (out_pipe, err_pipe) = (child.stdout.take(), child.stderr.take());
    let mut reading = std::pin::pin!(async {
        tokio::join!(capture(out_pipe, stdout), capture(err_pipe, stderr));
    });
    let mut read_all = false;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            () = &mut reading, if !read_all => read_all = true,
        }
    };
    if !read_all {
        let _ = tokio::time::timeout(DRAIN_AFTER_EXIT, reading).await;
    }
    status
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
    fn kill(&mut self) {
        if let Some(group) = self.0.take() {
            // It may be gone already; nothing else to do then.
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
