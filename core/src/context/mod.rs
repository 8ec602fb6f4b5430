//! Keeping a long conversation inside the model's context window: the window itself, a cheap
//! token estimate of the next request, pruning old tool outputs, compacting the history into a
//! summary, and recognising a provider's "too long" answer.
//!
//! Every part here is a pure function or a small value type: the session decides *when* (see
//! [`crate::session`]), these decide *what*. The order of the measures, from cheapest to most
//! lossy:
//!
//! 1. [`prune_tool_outputs`]: old tool outputs (outside the last few model steps) are replaced by
//!    a stub naming the tool, its arguments and how many bytes were cut;
//! 2. [`summary_messages`] and [`compacted_history`]: one request to the same model, without
//!    tools, asks for a structured summary ([`SUMMARY_PROMPT`]); the history continues as the
//!    summary, the user's latest message verbatim and the most recent steps that fit;
//! 3. [`recognise_overflow`]: when the provider still says the request is too long, the session
//!    compacts and retries once.
//!
//! Tool-call pairing stays valid through all of them: an assistant message and the results of
//! its calls are kept or dropped together.

mod compact;
mod estimate;
mod overflow;
mod prune;
mod window;

pub(crate) use compact::is_users;
pub use compact::{
    CompactError, Compacted, SUMMARY_HEADER, SUMMARY_PROMPT, SUMMARY_SYSTEM, compacted_history,
    summary_messages,
};
pub use estimate::{CONSERVATIVE_BYTES_PER_TOKEN, TokenMeter, message_bytes};
pub use overflow::{Overflow, recognise_overflow};
pub use prune::{PRUNE_MIN_BYTES, PrunedOutput, is_pruned_stub, prune_tool_outputs};
pub(crate) use prune::{is_pruned_images, is_step, protected_from};
pub use window::{WindowSource, window_from_model, window_from_models};

/// How a session keeps its requests inside the context window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextConfig {
    /// The model's context window in tokens; `None` when unknown (then only overflow recovery
    /// applies, and the window may be learnt from the provider's error).
    pub window: Option<u64>,
    /// Percentage of the window the next request may reach before old tool outputs are
    /// pruned and then the history is compacted (default 85).
    pub threshold_percent: u8,
    /// Model steps (an assistant message and its tool results) at the end of the history whose
    /// tool outputs are never pruned (default 3).
    pub keep_steps: usize,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            window: None,
            threshold_percent: 85,
            keep_steps: 3,
        }
    }
}

impl ContextConfig {
    /// The token count past which the session prunes and compacts, for a `window`.
    pub fn threshold_of(&self, window: u64) -> u64 {
        let percent = u64::from(self.threshold_percent.clamp(1, 100));
        window.saturating_mul(percent) / 100
    }
}
