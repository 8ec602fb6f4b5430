//! The namespace probe of a front end that starts it early and hears it later.
//!
//! Whether the launcher can make its namespace here is learnt by starting a process
//! ([`super::probe::namespaces`]): about 3 ms, most of `hrns exec`'s start-up beyond its
//! library's. A front end that can say the warning later asks for the probe to run in the
//! background ([`start_in_background`]); [`super::for_run`] then starts it on a thread instead
//! of waiting for it, and the front end says what it found ([`say_found`]) before anything can
//! run a command. Front ends that do not ask probe and warn at once, as before.

use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;

/// Where the probe stands.
enum Early {
    /// Probed where the sandbox is set up, and warned at once.
    Off,
    /// The next sandbox set up starts the probe on a thread.
    Wanted,
    /// The probe runs (or ran) on this thread; its warning is not said yet.
    Running(JoinHandle<Result<(), String>>),
}

static EARLY: Mutex<Early> = Mutex::new(Early::Off);

fn early() -> std::sync::MutexGuard<'static, Early> {
    EARLY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Asks that the namespace probe run in the background: call before the sandbox is set up,
/// and [`say_found`] before any command (an MCP server, a tool call) can run.
pub(crate) fn start_in_background() {
    *early() = Early::Wanted;
}

/// Probes for the sandbox being set up: in the background when asked for (`None` now),
/// else at once (what the probe found).
pub(super) fn probe() -> Option<Result<(), String>> {
    let mut early = early();
    match &*early {
        Early::Off => Some(super::probe::namespaces()),
        Early::Wanted => {
            *early = Early::Running(std::thread::spawn(super::probe::namespaces));
            None
        }
        // A sandbox set up again while the first probe runs: that probe answers for both.
        Early::Running(_) => None,
    }
}

/// Waits for a probe started in the background and says its warning, once; nothing when
/// none was started.
pub(crate) fn say_found() {
    let running = std::mem::replace(&mut *early(), Early::Off);
    if let Early::Running(probe) = running {
        let found = probe
            .join()
            .unwrap_or_else(|_| Err("the namespace probe failed".into()));
        if let Err(reason) = found {
            super::warn_no_namespaces(&crate::term::style::Style::stderr(), &reason);
        }
    }
}
