//! SIGINT, SIGTERM and SIGHUP during `hrns exec`, and SIGTERM and SIGHUP in the TUI (where
//! Ctrl-C is a key): each cancels the turn (commands are killed with their process groups, the
//! session is saved, the terminal restored) and hrns then exits with the status of the signal
//! (130, 143, 129); a second signal exits at once, after killing hrns's children (running
//! commands, MCP stdio servers) with their process groups.

use hrns_blocking::CancelFlag;
use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that cancelled the turn, 0 while none has.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// Cancels `cancel` on the first SIGINT, SIGTERM or SIGHUP; exits on the second.
pub(crate) fn install(cancel: &CancelFlag) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let cancel = cancel.clone();
    let _ = std::thread::Builder::new()
        .name("hrns-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if cancel.is_cancelled() {
                    // The drops that would end them are skipped by the exit.
                    kill_children();
                    std::process::exit(128 + signal);
                }
                RECEIVED.store(signal, Ordering::SeqCst);
                cancel.cancel();
            }
        });
}

/// Hands the first SIGTERM or SIGHUP to `on_signal` (from a thread of its own), for the TUI to
/// cancel its turn, save the session and leave the screen before it exits with
/// [`status_of`] the signal; a second one exits at once, after `before_exit` (the TUI's
/// terminal restore: the exit skips the drops that would leave raw mode and show the cursor).
pub(crate) fn watch_termination(on_signal: impl Fn(i32) + Send + 'static, before_exit: fn()) {
    use signal_hook::consts::{SIGHUP, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("hrns-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if RECEIVED.swap(signal, Ordering::SeqCst) != 0 {
                    kill_children();
                    before_exit();
                    std::process::exit(128 + signal);
                }
                on_signal(signal);
            }
        });
}

/// The conventional exit status after `signal`: 128 + its number.
pub(crate) fn status_of(signal: i32) -> u8 {
    u8::try_from(128 + signal).unwrap_or(crate::exit::INTERRUPTED)
}

/// The exit status of a cancelled turn: 128 + the signal that cancelled it, 130 (SIGINT)
/// otherwise.
pub(crate) fn cancelled_status() -> u8 {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => crate::exit::INTERRUPTED,
        signal => status_of(signal),
    }
}

/// Makes hrns the child subreaper of its descendants (Linux), so that a process that leaves a
/// command's process group (`setsid`, a double fork) is reparented to hrns rather than to init,
/// where the command tool finds and ends it when the call ends.
pub(crate) fn become_subreaper() {
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
}

/// Kills hrns's children, each with its process group when it leads one of its own (commands
/// and MCP stdio servers do, so what they started dies too); a child in hrns's own group is
/// killed alone. For the hard exit of a second signal, which skips the drops that end them.
fn kill_children() {
    use rustix::process::{Pid, Signal, getpgid, getpid, kill_process, kill_process_group};
    let own_group = getpgid(None).ok();
    for child in children_of(getpid().as_raw_nonzero().get()) {
        let Some(pid) = Pid::from_raw(child) else {
            continue;
        };
        match getpgid(Some(pid)) {
            Ok(group) if Some(group) != own_group => {
                let _ = kill_process_group(group, Signal::KILL);
            }
            _ => {
                let _ = kill_process(pid, Signal::KILL);
            }
        }
    }
}

/// The processes whose parent is `parent`, from `/proc` (none where there is no `/proc`).
fn children_of(parent: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| parent_in_stat(&stat))
                == Some(parent)
        })
        .collect()
}

/// The parent pid in a `/proc/<pid>/stat` line: the second field after the command name,
/// which is in parentheses and may itself hold spaces and parentheses.
fn parent_in_stat(stat: &str) -> Option<i32> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_parent_is_read_past_a_hostile_command_name() {
        let stat = "4242 (a) b (c) 1 S) S 77 4242 4242 0 -1";
        assert_eq!(super::parent_in_stat(stat), Some(77));
        assert_eq!(super::parent_in_stat("4242 (x"), None);
        assert_eq!(super::parent_in_stat("4242 (x) S"), None);
        let own = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert_eq!(
            super::parent_in_stat(&own),
            Some(rustix::process::getppid().unwrap().as_raw_nonzero().get())
        );
    }
}
