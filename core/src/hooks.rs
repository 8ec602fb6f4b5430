//! Hooks: the user's own programs, run at fixed points of a session, in Claude Code's
//! contract (one JSON object on stdin; exit code 2 blocks; a JSON decision on stdout), so the
//! hook scripts users already have work unchanged.
//!
//! The split is the usual one. This module decides: which hooks are due for an event
//! ([`Hooks::due`], matchers over hrns's tool names and Claude Code's aliases), what they read
//! ([`input`], redacted), and what their answers mean ([`outcome`]: a typed verdict per hook,
//! combined deterministically per event). The session asks for hooks with
//! [`Action::RunHooks`](crate::session::Action::RunHooks) and waits for
//! [`Session::handle_hooks`](crate::session::Session::handle_hooks) where an answer can change
//! what happens (a call waiting on a hook is one more call state, like one waiting on an
//! approval). A driver only runs the processes: stdin JSON, a timeout, a killed process group,
//! stdout and stderr capped at [`MAX_HOOK_OUTPUT`], and hands back a [`HookRun`] per hook.
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "run_command|Bash",
//!   "hooks": [{"type": "command", "command": "~/bin/no-rm", "timeout": 30}]}]}}
//! ```

mod config;
pub mod input;
pub mod outcome;
#[cfg(test)]
mod tests;

pub use config::{
    DEFAULT_HOOK_TIMEOUT, FailMode, HookCommand, HookEntry, HookEvent, HookSource, Hooks, Matcher,
    claude_tool_name,
};
pub use input::HookContext;
pub use outcome::{
    Combined, HookExit, HookOutcome, HookRun, MAX_HOOK_OUTPUT, Permission, Verdict, combine,
    verdict,
};

/// Hooks the session wants run now: every command gets `input` on stdin, all of them at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookDue {
    /// Hand it back with the results ([`Session::handle_hooks`](crate::session::Session::handle_hooks)).
    pub id: u64,
    /// The event they run for.
    pub event: HookEvent,
    /// The commands, in configuration order; results go back in the same order.
    pub commands: Vec<HookCommand>,
    /// The JSON object for their stdin (already redacted).
    pub input: String,
    /// Whether the session waits for them (a background hook's answer is only shown).
    pub wait: HookWait,
}

/// Whether the session waits for a hook's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookWait {
    /// The answer decides what happens next; the session waits for it.
    Awaited,
    /// The answer is only shown (`Notification`): the session goes on meanwhile.
    Background,
}

/// A session's hooks and the facts their input carries
/// ([`SessionConfig::hooks`](crate::session::SessionConfig::hooks)). The default has none:
/// the session behaves as if hooks did not exist.
#[derive(Debug, Clone, Default)]
pub struct SessionHooks {
    /// The configured hooks.
    pub hooks: std::sync::Arc<Hooks>,
    /// What every input carries.
    pub context: HookContext,
    /// Whether this is a main session or a subagent's (`Stop` is `SubagentStop` there).
    pub role: AgentRole,
    /// Whether the first turn is a resumed conversation's (`SessionStart`'s `source` is
    /// `resume`) or a new one's (`startup`).
    pub start: StartSource,
}

/// Whose session it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AgentRole {
    /// The user's own session.
    #[default]
    Main,
    /// The child session of a `task` call.
    Subagent,
}

/// Why a session ends, for `SessionEnd`'s `reason` (Claude Code's words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// The conversation was replaced by a new one (`/new`).
    Clear,
    /// The user logged out.
    Logout,
    /// The user left at the prompt (`/quit`, Ctrl-D, Ctrl-C twice).
    PromptInputExit,
    /// Anything else: `exec` is done, a signal, an editor closed the session or went away.
    Other,
}

impl EndReason {
    /// Claude Code's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Clear => "clear",
            EndReason::Logout => "logout",
            EndReason::PromptInputExit => "prompt_input_exit",
            EndReason::Other => "other",
        }
    }
}

/// How long the prompt waits idle after a turn before `Notification` hooks hear that hrns
/// waits for the user (`notification_type: idle_prompt`), as Claude Code waits: 60 s.
pub const IDLE_NOTIFICATION_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// How a session started, for `SessionStart`'s `source`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StartSource {
    /// A new conversation.
    #[default]
    Startup,
    /// A resumed one.
    Resume,
    /// A new conversation in place of the last (`/new`).
    Clear,
    /// The same conversation in a session made again (another model, a retry): it started
    /// before, so `SessionStart` does not run again.
    Continued,
}

impl StartSource {
    /// Claude Code's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            StartSource::Startup => "startup",
            StartSource::Resume => "resume",
            StartSource::Clear => "clear",
            StartSource::Continued => "continued",
        }
    }
}
