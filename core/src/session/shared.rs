//! The state a session keeps across turns, which the running turn borrows: configuration,
//! history, the queue of actions, counters and what the user allowed for the whole session.

use super::config::SessionConfig;
use super::context::{Compaction, ContextState};
use super::event::{Event, TurnError};
use super::history::History;
use super::outbox::Outbox;
use super::{Action, SessionError, TokenTotals, request, retry};
use crate::http::RequestId;
use crate::quirks::ProviderQuirks;
use crate::secrets::Secrets;
use crate::wire::Message;
use std::collections::HashSet;

/// The session's own state, apart from the running turn. Turn logic gets `&mut Shared`
/// beside `&mut Turn`, so neither is ever taken out of the session and put back.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) config: SessionConfig,
    /// The conversation, each message with its JSON; changed only through its own methods.
    pub(super) history: History,
    /// What was decided and not taken yet.
    pub(super) outbox: Outbox,
    pub(super) turns: u64,
    /// The id the next request gets; every id below it was issued.
    pub(super) next_request: u64,
    pub(super) jitter: retry::Jitter,
    /// Tools the user allowed for the rest of the session.
    pub(super) approved_tools: HashSet<String>,
    /// Tools the user denied for the rest of the session ([`Approval::NeverThisTool`](super::Approval::NeverThisTool)).
    pub(super) denied_tools: HashSet<String>,
    /// The provider quirks requests obey: the configured ones plus what this session learned
    /// from rejections.
    pub(super) quirks: ProviderQuirks,
    pub(super) totals: TokenTotals,
    /// The last call signature (name and arguments) and how many times in a row it was made.
    pub(super) last_call: Option<(String, u32)>,
    /// Every tool call id this session handed to its driver (to run or to ask about), so
    /// that late input for one of them is told apart from input for an id never issued.
    pub(super) issued_calls: HashSet<String>,
    /// Set when the model repeated a call after the repeated-call guard fired: the turn ends
    /// with this error once the answer's calls are answered.
    pub(super) stuck: Option<TurnError>,
    /// The measure of the history against the context window.
    pub(super) context: ContextState,
    /// The provider's secrets and the configured extra ones, redacted from everything that
    /// leaves the session.
    pub(super) secrets: Secrets,
    /// The checkpoints of the running turn.
    pub(super) checkpoint: super::checkpoints::CheckpointState,
    /// The plan the model last sent with `update_plan`; kept across a compaction.
    pub(super) plan: Option<crate::plan::Plan>,
    /// The hooks asked for and not answered yet.
    pub(super) hooks: super::hooks::HookState,
    /// Set when a hook said `continue: false` during the tool calls: the turn ends with this
    /// error once the answer's calls are answered.
    pub(super) hook_stop: Option<TurnError>,
}

impl Shared {
    pub(super) fn new(config: SessionConfig) -> Self {
        let mut secrets = Secrets::of_provider(&config.provider);
        secrets.extend(&config.secrets);
        Shared {
            secrets,
            jitter: retry::Jitter::new(config.seed),
            context: ContextState::new(&config),
            quirks: config.provider.quirks,
            config,
            history: History::default(),
            outbox: Outbox::default(),
            turns: 0,
            next_request: 0,
            approved_tools: HashSet::new(),
            denied_tools: HashSet::new(),
            totals: TokenTotals::default(),
            last_call: None,
            issued_calls: HashSet::new(),
            stuck: None,
            checkpoint: super::checkpoints::CheckpointState::default(),
            plan: None,
            hooks: super::hooks::HookState::default(),
            hook_stop: None,
        }
    }

    pub(super) fn emit(&mut self, event: Event) {
        self.outbox.emit(event);
    }

    pub(super) fn push_history(&mut self, message: Message) {
        self.emit(Event::Message {
            message: Box::new(message.clone()),
        });
        self.append(message);
    }

    /// Appends to the history, keeping its measure up to date.
    pub(super) fn append(&mut self, message: Message) {
        self.context.appended(&message);
        self.history.push(message);
    }

    /// Queues a new model request for the history as it is now (or the summary request of
    /// a compaction under way); returns its id.
    pub(super) fn send_request(
        &mut self,
        step: u32,
        attempt: u32,
        compaction: Option<&Compaction>,
    ) -> RequestId {
        let id = RequestId(self.next_request);
        self.next_request += 1;
        let req = match compaction {
            Some(compaction) => self.summary_request(id, compaction),
            None => {
                self.context.sent_bytes = self.context.request_bytes();
                let json = self.history.json();
                let req = request::turn_request(id, &self.config, json, &self.quirks);
                #[cfg(any(test, feature = "fuzzing"))]
                request::check_turn_body(&req.body, &self.config, &self.history, &self.quirks);
                req
            }
        };
        self.emit(Event::RequestStarted { step, attempt });
        self.outbox.push(Action::SendRequest(req));
        id
    }

    /// Whether `req` was ever issued by this session.
    pub(super) fn issued(&self, req: RequestId) -> bool {
        req.0 < self.next_request
    }

    /// Input for a call that is not waiting: ignored when this session issued the id (the
    /// call finished, timed out or was cancelled meanwhile), an error otherwise.
    pub(super) fn late_call(&self, call_id: &str) -> Result<(), SessionError> {
        if self.issued_calls.contains(call_id) {
            Ok(())
        } else {
            Err(SessionError::UnknownCall(call_id.to_owned()))
        }
    }

    /// Takes every known secret (and fragment of one) out of a text from outside.
    pub(super) fn redact(&self, text: String) -> String {
        self.secrets.redact_string(text)
    }
}
