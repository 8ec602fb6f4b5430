//! The session's side of context management: measuring the history as it grows, and deciding
//! before each model request (and after an overflow answer) whether to prune or compact.
//!
//! The decisions, in order: past the threshold, prune old tool outputs; still past it, compact
//! (a summary request to the same model, then the history rebuilt around the summary). When
//! the provider answers that a request was too long, the window it states is learnt and the
//! history is compacted once; a second overflow in the same step fails the turn, saying what
//! was tried. A compaction that cannot get under the threshold fails the turn too: there is no
//! second attempt, so there is no loop.

use super::event::{CompactMethod, CompactReason, Event, TurnError};
use super::request;
use super::shared::Shared;
use super::turn::Turn;
use super::{Session, SessionError};
use crate::context::{self, Overflow, PrunedOutput, TokenMeter};
use crate::http::RequestId;
use crate::wire::{ApiError, Message};

/// Share of the threshold the history is compacted down to, so the next requests have room
/// before the threshold is reached again.
const TARGET_PERCENT_OF_THRESHOLD: u64 = 60;

/// Share of the window the summary request's transcript may fill; the rest is for the summary.
const TRANSCRIPT_PERCENT_OF_WINDOW: u64 = 70;

/// The session's measure of its own requests.
#[derive(Debug)]
pub(super) struct ContextState {
    pub(super) meter: TokenMeter,
    /// The window in force: configured, or learnt from an overflow message.
    pub(super) window: Option<u64>,
    /// Bytes every request carries besides the history: the system prompt and the tools.
    fixed_bytes: u64,
    /// Bytes of the history, kept up to date as messages are appended.
    history_bytes: u64,
    /// Bytes of the last step request sent, until its usage arrives.
    pub(super) sent_bytes: u64,
}

/// Bytes every request carries besides the history: the system prompt and the tools.
fn fixed_bytes(config: &super::SessionConfig) -> u64 {
    let system = config.system_prompt.as_ref().map_or(0, String::len);
    let tools: usize = config
        .tools
        .iter()
        .map(|t| t.to_wire().to_string().len())
        .sum();
    (system + tools) as u64
}

impl ContextState {
    pub(super) fn new(config: &super::SessionConfig) -> Self {
        ContextState {
            meter: TokenMeter::default(),
            window: config.context.window,
            fixed_bytes: fixed_bytes(config),
            history_bytes: 0,
            sent_bytes: 0,
        }
    }

    /// The configured tools were replaced: every request carries the new ones.
    pub(super) fn tools_changed(&mut self, config: &super::SessionConfig) {
        self.fixed_bytes = fixed_bytes(config);
    }

    pub(super) fn appended(&mut self, m: &Message) {
        self.history_bytes += context::message_bytes(m) as u64;
    }

    pub(super) fn remeasure(&mut self, history: &[Message]) {
        self.history_bytes = history
            .iter()
            .map(|m| context::message_bytes(m) as u64)
            .sum();
    }

    pub(super) fn request_bytes(&self) -> u64 {
        self.fixed_bytes + self.history_bytes
    }
}

/// How full the context is, for a status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextUsage {
    /// Estimated tokens of the next request.
    pub tokens: u64,
    /// The window, when known.
    pub window: Option<u64>,
}

impl ContextUsage {
    /// Tokens as a percentage of the window, when it is known.
    pub fn percent(&self) -> Option<u64> {
        self.window
            .filter(|w| *w > 0)
            .map(|w| self.tokens.saturating_mul(100) / w)
    }
}

/// A compaction under way: the summary request is out, the history not yet replaced.
#[derive(Debug)]
pub(super) struct Compaction {
    reason: CompactReason,
    instructions: Option<String>,
    tokens_before: u64,
    pruned: Vec<PrunedOutput>,
    /// Bytes of the request that overflowed, when the window is unknown.
    overflowed_bytes: Option<u64>,
    pub(super) then: AfterCompaction,
}

/// What follows a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AfterCompaction {
    /// Send the step's request.
    SendStep,
    /// End the turn (`/compact`).
    Finish,
}

impl Session {
    /// The estimated size of the next request and the window, for a status line.
    pub fn context_usage(&self) -> ContextUsage {
        self.shared.context_usage()
    }

    /// Sets the context window (learnt after the session started, from the provider's model
    /// list); `None` makes it unknown. Takes effect at the next request.
    pub fn set_context_window(&mut self, window: Option<u64>) {
        self.shared.context.window = window;
    }

    /// Compacts the history now (`/compact`): one summary request, with the user's extra
    /// `instructions` for it. Runs as a turn: drain [`Session::poll`] as usual; it ends with
    /// [`Event::TurnFinished`] after [`Event::ContextCompacted`], or [`Event::TurnFailed`].
    pub fn compact(&mut self, instructions: Option<String>) -> Result<(), SessionError> {
        if self.turn.is_some() {
            return Err(SessionError::Busy);
        }
        let s = &mut self.shared;
        if s.history.is_empty() {
            return Err(SessionError::NothingToCompact);
        }
        if let Some(tokens) = s.too_short_to_compact() {
            return Err(SessionError::NothingWorthCompacting { tokens });
        }
        s.turns += 1;
        s.emit(Event::TurnStarted { turn: s.turns });
        let tokens_before = s.context_usage().tokens;
        let compaction = Compaction {
            reason: CompactReason::Requested,
            instructions: instructions.filter(|i| !i.trim().is_empty()),
            tokens_before,
            pruned: Vec::new(),
            overflowed_bytes: None,
            then: AfterCompaction::Finish,
        };
        self.turn = Some(Turn::start_compaction(s, compaction));
        self.end_if_over();
        Ok(())
    }
}

impl Shared {
    pub(super) fn context_usage(&self) -> ContextUsage {
        ContextUsage {
            tokens: self.context.meter.estimate(self.context.request_bytes()),
            window: self.context.window,
        }
    }

    /// Bytes of history a compaction may leave.
    fn compacted_budget(&self, compaction: &Compaction) -> u64 {
        let budget = self
            .compacted_room(compaction)
            .saturating_sub(self.context.fixed_bytes);
        if compaction.reason == CompactReason::Requested {
            // Asked for: it must shrink, whatever the room.
            budget.min(self.context.history_bytes / 2)
        } else {
            budget
        }
    }

    /// Bytes a request may have after a compaction, the fixed part (system prompt, tools)
    /// included.
    fn compacted_room(&self, compaction: &Compaction) -> u64 {
        let target_tokens = self
            .threshold()
            .map(|t| t * TARGET_PERCENT_OF_THRESHOLD / 100);
        match (target_tokens, compaction.overflowed_bytes) {
            (Some(t), _) => self.context.meter.bytes_for(t),
            // Half of what the history took in the request that overflowed: the fixed part
            // (system prompt, tool specs) does not shrink, so halving the whole request could
            // leave nothing for the history when the tools are many.
            (None, Some(b)) => {
                let fixed = self.context.fixed_bytes;
                fixed + b.saturating_sub(fixed) / 2
            }
            (None, None) => self.context.request_bytes(),
        }
    }

    /// Why a compaction cannot succeed before its summary is even asked for: the user's latest
    /// message alone is over the budget.
    /// When the tool definitions take more than that message, they are named as the cause
    /// ([`Shared::tools_fill_window`]).
    fn hopeless(&self, compaction: &Compaction) -> Option<String> {
        let budget = self.compacted_budget(compaction) as usize;
        let latest = self.history.iter().rfind(|m| context::is_users(m))?;
        let bytes = context::message_bytes(latest) + context::SUMMARY_HEADER.len();
        if bytes <= budget {
            return None;
        }
        let error = self
            .tools_fill_window(compaction, bytes)
            .unwrap_or(context::CompactError::CannotShrink { bytes, budget });
        Some(error.to_string())
    }

    /// The failure of a compaction that cannot fit `needed` bytes of history, told as the
    /// tools' fault when their definitions take more than that history: it names the tools
    /// and each MCP server's share, since they are what to cut. `None` when the history is
    /// the larger part (then the message is what to shorten).
    fn tools_fill_window(
        &self,
        compaction: &Compaction,
        needed: usize,
    ) -> Option<context::CompactError> {
        let room = self.compacted_room(compaction);
        let system_bytes = self.config.system_prompt.as_ref().map_or(0, String::len);
        let fixed = self.context.fixed_bytes as usize;
        if fixed.saturating_sub(system_bytes) <= needed {
            return None;
        }
        let mut tool_bytes = 0;
        let mut servers: Vec<(String, usize)> = Vec::new();
        for tool in &self.config.tools {
            let bytes = tool.to_wire().to_string().len();
            tool_bytes += bytes;
            if let Some((server, _)) = crate::mcp::naming::split_name(&tool.name) {
                match servers.iter_mut().find(|(name, _)| name == server) {
                    Some((_, sum)) => *sum += bytes,
                    None => servers.push((server.to_owned(), bytes)),
                }
            }
        }
        servers.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Some(context::CompactError::ToolsFillWindow {
            tool_bytes,
            servers,
            system_bytes,
            room: room as usize,
        })
    }

    /// The history's estimated tokens when a requested compaction could not make it shorter:
    /// the user's latest message (kept verbatim) and the summary's header alone take half of
    /// it, the most a requested compaction may leave.
    fn too_short_to_compact(&self) -> Option<u64> {
        let half = self.context.history_bytes / 2;
        let latest = self
            .history
            .iter()
            .rfind(|m| context::is_users(m))
            .map_or(0, context::message_bytes);
        let kept = (latest + context::SUMMARY_HEADER.len()) as u64;
        (kept > half).then(|| self.context.meter.estimate(self.context.history_bytes))
    }

    fn threshold(&self) -> Option<u64> {
        self.context
            .window
            .map(|w| self.config.context.threshold_of(w))
    }

    fn prune(&mut self) -> Vec<PrunedOutput> {
        let keep_steps = self.config.context.keep_steps;
        let pruned = self.history.prune(keep_steps);
        if !pruned.is_empty() {
            self.context.remeasure(&self.history);
        }
        pruned
    }

    /// The summary request for the compaction under way.
    pub(super) fn summary_request(
        &self,
        id: RequestId,
        compaction: &Compaction,
    ) -> crate::http::HttpRequest {
        let budget = match (self.context.window, compaction.overflowed_bytes) {
            (Some(w), _) => self
                .context
                .meter
                .bytes_for(w * TRANSCRIPT_PERCENT_OF_WINDOW / 100),
            (None, Some(b)) => b / 2,
            (None, None) => self.context.request_bytes(),
        };
        let messages = context::summary_messages(
            &self.history,
            compaction.instructions.as_deref(),
            budget as usize,
        );
        request::summary_request(id, &self.config, messages, &self.quirks)
    }
}

impl Turn {
    /// Sends the next step's request, pruning or compacting first when it would pass the
    /// threshold.
    pub(super) fn send_step(&mut self, s: &mut Shared) {
        let Some(threshold) = s.threshold() else {
            return self.request(s, 1);
        };
        let before = s.context_usage().tokens;
        if before <= threshold {
            return self.request(s, 1);
        }
        let pruned = s.prune();
        let after = s.context_usage().tokens;
        if after <= threshold {
            s.emit(Event::ContextCompacted {
                reason: CompactReason::Threshold,
                method: CompactMethod::Pruned,
                tokens_before: before,
                tokens_after: after,
                window: s.context.window,
                pruned,
                summarized_messages: 0,
            });
            return self.request(s, 1);
        }
        self.begin_compaction(
            s,
            Compaction {
                reason: CompactReason::Threshold,
                instructions: None,
                tokens_before: before,
                pruned,
                overflowed_bytes: None,
                then: AfterCompaction::SendStep,
            },
        );
    }

    /// Sends the summary request of `compaction`, unless it cannot succeed: then the turn
    /// fails at once, without a request.
    pub(super) fn begin_compaction(&mut self, s: &mut Shared, compaction: Compaction) {
        if let Some(reason) = s.hopeless(&compaction) {
            return self.fail(s, TurnError::CompactionFailed { reason });
        }
        // PreCompact hooks only watch: they run beside the summary request.
        let trigger = match compaction.reason {
            CompactReason::Requested => "manual",
            CompactReason::Threshold | CompactReason::Overflow => "auto",
        };
        let input = s
            .hook_input(crate::hooks::HookEvent::PreCompact)
            .with("trigger", trigger)
            .with(
                "custom_instructions",
                compaction.instructions.clone().unwrap_or_default(),
            );
        s.run_hooks(
            crate::hooks::HookEvent::PreCompact,
            Some(trigger),
            None,
            input,
            crate::hooks::HookWait::Background,
        );
        self.compaction = Some(compaction);
        self.request(s, 1);
    }

    /// The provider answered with an error: when it says the request was too long, handles
    /// it (compaction, or the final failure) and returns true.
    pub(super) fn on_overflow(
        &mut self,
        s: &mut Shared,
        status: Option<u16>,
        error: &ApiError,
    ) -> bool {
        let Some(Overflow { window }) = context::recognise_overflow(status, error) else {
            return false;
        };
        if let Some(w) = window {
            s.context.window = Some(w);
        }
        if self.compaction.is_some() {
            self.fail(
                s,
                TurnError::ContextOverflow {
                    tried: "compacting the history, but the summary request itself was too long"
                        .to_owned(),
                    error: Box::new(error.clone()),
                },
            );
            return true;
        }
        if let Some(tried) = self.overflow_tried.take() {
            self.fail(
                s,
                TurnError::ContextOverflow {
                    tried,
                    error: Box::new(error.clone()),
                },
            );
            return true;
        }
        let before = s.context_usage().tokens;
        let overflowed_bytes = s.context.request_bytes();
        let pruned = s.prune();
        self.overflow_tried = Some(format!(
            "pruning {} old tool outputs and compacting the history once",
            pruned.len()
        ));
        self.begin_compaction(
            s,
            Compaction {
                reason: CompactReason::Overflow,
                instructions: None,
                tokens_before: before,
                pruned,
                overflowed_bytes: Some(overflowed_bytes),
                then: AfterCompaction::SendStep,
            },
        );
        true
    }

    /// The summary arrived: the history is rebuilt around it, or the turn fails when that
    /// cannot get under the threshold. `called` names the tools the model called instead of
    /// (or besides) answering: the summary request offers none, yet some models call one.
    pub(super) fn summary_done(
        &mut self,
        s: &mut Shared,
        compaction: Compaction,
        summary: String,
        called: Vec<String>,
    ) {
        if summary.trim().is_empty() {
            let reason = if called.is_empty() {
                "the model's summary was empty".to_owned()
            } else {
                let names: Vec<String> = called
                    .iter()
                    .map(|n| format!("`{}`", crate::text::shorten(n, 64)))
                    .collect();
                format!(
                    "the model answered the summary request with a tool call ({}) instead of a summary; the request offers no tools, so try again, or use a model that follows it",
                    names.join(", ")
                )
            };
            let error = match compaction.reason {
                CompactReason::Requested => TurnError::NotCompacted { reason },
                CompactReason::Threshold | CompactReason::Overflow => {
                    TurnError::CompactionFailed { reason }
                }
            };
            return self.fail(s, error);
        }
        let budget = s.compacted_budget(&compaction);
        // The plan is kept as it is, not as the model's summary may tell it.
        let summary = match &s.plan {
            Some(plan) => format!(
                "{}\n\n{}{}",
                summary.trim(),
                crate::plan::PLAN_KEPT,
                plan.to_text()
            ),
            None => summary,
        };
        let compacted = match context::compacted_history(&s.history, &summary, budget as usize) {
            Ok(c) => c,
            // Asked for, and the budget is half the history: the summary is as long as what
            // it would replace. That is no window problem; say what it is.
            Err(context::CompactError::CannotShrink { .. })
                if compaction.reason == CompactReason::Requested
                    && budget >= s.context.history_bytes / 2 =>
            {
                let tokens = s.context.meter.estimate(s.context.history_bytes);
                let reason = format!(
                    "the model's summary is about as long as the conversation it would replace (about {tokens} tokens), so there is nothing worth compacting; the conversation is kept as it was"
                );
                return self.fail(s, TurnError::NotCompacted { reason });
            }
            Err(e) => {
                let reason = match &e {
                    context::CompactError::CannotShrink { bytes, .. } => s
                        .tools_fill_window(&compaction, *bytes)
                        .unwrap_or(e)
                        .to_string(),
                    context::CompactError::ToolsFillWindow { .. } => e.to_string(),
                };
                return self.fail(s, TurnError::CompactionFailed { reason });
            }
        };
        s.history.replace(compacted.messages);
        s.context.remeasure(&s.history);
        let after = s.context_usage().tokens;
        s.emit(Event::ContextCompacted {
            reason: compaction.reason,
            method: CompactMethod::Summarized,
            tokens_before: compaction.tokens_before,
            tokens_after: after,
            window: s.context.window,
            pruned: compaction.pruned,
            summarized_messages: compacted.summarized,
        });
        let messages: Vec<Event> = s
            .history
            .iter()
            .map(|m| Event::Message {
                message: Box::new(m.clone()),
            })
            .collect();
        for event in messages {
            s.emit(event);
        }
        let threshold = s.threshold();
        if let Some(t) = threshold.filter(|t| after > *t) {
            let reason = format!(
                "the compacted history is still about {after} tokens, over the threshold of {t} tokens"
            );
            return self.fail(s, TurnError::CompactionFailed { reason });
        }
        match compaction.then {
            AfterCompaction::SendStep => self.request(s, 1),
            AfterCompaction::Finish => self.finish(s, None),
        }
    }
}
