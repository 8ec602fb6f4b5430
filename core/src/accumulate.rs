//! Merges streamed chunks into complete choices.
//!
//! The rules are DESIGN.md's "Accumulation rules" 3–7; each is quoted where it is implemented.
//! Work is amortised O(1) per input byte: text is appended to growing strings, a tool-call
//! fragment finds its call through hash maps, and unknown fields are parsed only when present.

mod completion;
mod delta_text;
mod event;
mod fast_path;
#[cfg(test)]
mod tests;

pub use completion::{Choice, Completion, FinishReason, FunctionCallParts, ToolCallParts};
pub use delta_text::DeltaText;
pub use event::StreamEvent;

use crate::chunk::{
    self, ArgumentsView, ChoiceView, ContentView, DeltaView, PartView, Str, ThinkingView,
    ToolCallView,
};
use crate::envelope::Envelopes;
use crate::wire::{ApiError, Extra, Usage};
use fast_path::{apply_match, choice_pos};
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::{HashMap, VecDeque};

/// Why a chunk could not be applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ChunkError {
    /// The server sent data that is not a chat-completion chunk. Server's fault.
    #[error("malformed chunk from the provider ({error}): {payload}")]
    Malformed {
        /// What the JSON parser said.
        error: String,
        /// The offending data, shortened.
        payload: String,
    },
    /// The provider reported an error inside the stream. Its message says whose fault it is.
    #[error("the provider reported an error in the stream: {0}")]
    Provider(Box<ApiError>),
}

/// Per-call lookup state, kept apart from the public [`ToolCallParts`].
#[derive(Debug, Default)]
struct CallIndex {
    /// Position of the call by id.
    by_id: HashMap<String, usize>,
    /// Position of the latest call with each provider index.
    by_index: HashMap<u32, usize>,
}

#[derive(Debug)]
struct ChoiceState {
    choice: Choice,
    calls: CallIndex,
    /// Bytes this choice kept that no stream event carries (legacy `function_call` arguments,
    /// unknown fields that grow), so the answer-size cap sees them too.
    untracked: usize,
}

/// Merges chunks into choices; see the module docs.
#[derive(Debug, Default)]
pub struct Accumulator {
    choices: Vec<ChoiceState>,
    /// Position of the choice the last chunk touched (the usual next one).
    last_choice: usize,
    id: Option<String>,
    model: Option<String>,
    usage: Option<Usage>,
    nested_usage: Option<Usage>,
    extra: Extra,
    /// Bytes kept in `extra` that grow the answer (see [`Accumulator::untracked_bytes`]).
    untracked: usize,
    /// Envelopes of the stream's one-string chunks, for the fast path.
    envelopes: Envelopes,
    /// Tests and the fuzz targets compare the fast path with full parsing.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) no_fast_path: bool,
}

const PAYLOAD_SHOWN: usize = 300;

impl Accumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one chunk, given as the JSON data of one SSE event, and appends what changed to
    /// `events`.
    ///
    /// Rule 3: a chunk with a top-level `error` object (or `"object": "error"`) is an error;
    /// what was accumulated before it is kept. Chunks with `choices: []` or no `choices` are
    /// normal. On error nothing of the chunk is applied.
    pub fn handle_chunk(
        &mut self,
        json: &str,
        events: &mut VecDeque<StreamEvent>,
    ) -> Result<(), ChunkError> {
        if self.apply_envelope(json.as_bytes(), events) {
            return Ok(());
        }
        self.handle_full(json, events)
    }

    /// [`handle_chunk`](Self::handle_chunk) for JSON data as it arrived, which may hold invalid
    /// UTF-8: a chunk that takes the fast path has only its varying string checked; any other
    /// is decoded lossily (each invalid sequence becomes U+FFFD) and parsed in full.
    pub(crate) fn handle_chunk_bytes(
        &mut self,
        json: &[u8],
        events: &mut VecDeque<StreamEvent>,
    ) -> Result<(), ChunkError> {
        if self.apply_envelope(json, events) {
            return Ok(());
        }
        self.handle_full(&String::from_utf8_lossy(json), events)
    }

    /// The full path of [`handle_chunk`](Self::handle_chunk): parse, learn the envelope, apply.
    fn handle_full(
        &mut self,
        json: &str,
        events: &mut VecDeque<StreamEvent>,
    ) -> Result<(), ChunkError> {
        let view = chunk::parse(json).map_err(|e| malformed(e.to_string(), json))?;
        self.envelopes.learn(json, &view);
        // `"error": false`, `""` or `{}` carry no error (some servers send such placeholders).
        let error = view
            .error
            .map(|raw| serde_json::from_str::<Value>(raw.get()).unwrap_or(Value::Null));
        let error = error.filter(|v| match v {
            Value::Object(o) => !o.is_empty(),
            Value::String(s) => !s.is_empty(),
            Value::Null | Value::Bool(false) => false,
            _ => true,
        });
        if let Some(value) = error {
            let api = match &value {
                Value::Object(_) => {
                    serde_json::from_value(value.clone()).unwrap_or_else(|_| ApiError {
                        message: value.to_string(),
                        ..ApiError::default()
                    })
                }
                Value::String(s) => ApiError {
                    message: s.clone(),
                    ..ApiError::default()
                },
                other => ApiError {
                    message: other.to_string(),
                    ..ApiError::default()
                },
            };
            return Err(ChunkError::Provider(Box::new(api)));
        }
        if view.object.as_deref() == Some("error") {
            let value: Value = serde_json::from_str(json).unwrap_or(Value::Null);
            return Err(ChunkError::Provider(Box::new(
                ApiError::from_value(&value).unwrap_or_default(),
            )));
        }
        if self.id.is_none() {
            if let Some(id) = view.id.as_deref().filter(|s| !s.is_empty()) {
                self.id = Some(id.to_owned());
            }
        }
        if self.model.is_none() {
            if let Some(m) = view.model.as_deref().filter(|s| !s.is_empty()) {
                self.model = Some(m.to_owned());
            }
        }
        // Rule 6: usage is the last non-null top-level usage, else a nested one (x_groq.usage).
        // Usage is metadata: one the provider shaped oddly (floats, negatives) is skipped rather
        // than failing the answer.
        if let Some(usage) = view
            .usage
            .and_then(|raw| serde_json::from_str::<Usage>(raw.get()).ok())
        {
            events.push_back(StreamEvent::Usage(usage.clone()));
            self.usage = Some(usage);
        }
        for (key, raw) in &view.extra {
            if &**key == "x_groq" {
                if let Ok(v) = serde_json::from_str::<Value>(raw.get()) {
                    if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
                        if let Ok(u) = serde_json::from_value::<Usage>(u.clone()) {
                            if self.usage.is_none() {
                                events.push_back(StreamEvent::Usage(u.clone()));
                            }
                            self.nested_usage = Some(u);
                        }
                    }
                }
            }
            self.untracked += merge_raw(&mut self.extra, key, raw);
        }
        let _ = (view.created, view.system_fingerprint, view.message);
        if let Some(choices) = view.choices {
            for choice in choices {
                self.apply_choice(choice, json, events)?;
            }
        }
        Ok(())
    }

    /// The fast path (see [`crate::envelope`]): applies a chunk recognised by its envelope and
    /// returns true, or returns false to send it the full way.
    #[inline]
    fn apply_envelope(&mut self, json: &[u8], events: &mut VecDeque<StreamEvent>) -> bool {
        #[cfg(any(test, feature = "fuzzing"))]
        if self.no_fast_path {
            return false;
        }
        let Some(found) = self.envelopes.recognise(json) else {
            return false;
        };
        apply_match(
            &mut self.choices,
            &mut self.last_choice,
            &mut self.extra,
            found,
            events,
        )
    }

    fn choice_pos(&mut self, index: u32) -> usize {
        choice_pos(&mut self.choices, &mut self.last_choice, index)
    }

    fn apply_choice(
        &mut self,
        view: ChoiceView<'_>,
        json: &str,
        events: &mut VecDeque<StreamEvent>,
    ) -> Result<(), ChunkError> {
        // Gemini sends `index: null`, some servers no index at all: that is choice 0.
        let index = view.index.unwrap_or(0);
        let pos = self.choice_pos(index);
        let state = &mut self.choices[pos];
        let delta = match (view.delta, view.message) {
            (Some(d), _) => Some(d),
            // A whole `message` in a stream chunk counts only when nothing was streamed before,
            // so a provider that repeats the full message at the end does not double it.
            (None, Some(m))
                if state.choice.content.is_empty()
                    && state.choice.reasoning.is_none()
                    && state.choice.refusal.is_none()
                    && state.choice.tool_calls.is_empty() =>
            {
                Some(*m)
            }
            (None, _) => None,
        };
        if let Some(delta) = delta {
            apply_delta(state, delta, events);
        }
        if let Some(raw) = view.logprobs {
            if raw.get() != "null" {
                let v: Value =
                    serde_json::from_str(raw.get()).map_err(|e| malformed(e.to_string(), json))?;
                let growth = match &mut state.choice.logprobs {
                    Some(existing) => merge_value(existing, v),
                    slot @ None => {
                        *slot = Some(v);
                        Growth::Grew
                    }
                };
                if growth == Growth::Grew {
                    state.untracked += raw.get().len();
                }
            }
        }
        if let Some(raw) = view.usage {
            if raw.get() != "null" && self.nested_usage.is_none() {
                if let Ok(u) = serde_json::from_str::<Usage>(raw.get()) {
                    if self.usage.is_none() {
                        events.push_back(StreamEvent::Usage(u.clone()));
                    }
                    self.nested_usage = Some(u);
                }
            }
        }
        let state = &mut self.choices[pos];
        for (key, raw) in &view.extra {
            state.untracked += merge_raw(&mut state.choice.meta, key, raw);
        }
        // Rule 4: finish_reason is the last non-null value; a later null (or "") never erases it.
        if let Some(reason) = view.finish_reason.as_deref().and_then(FinishReason::parse) {
            if state.choice.finish_reason.as_ref() != Some(&reason) {
                events.push_back(StreamEvent::ChoiceFinished {
                    choice: index,
                    reason: reason.clone(),
                });
                state.choice.finish_reason = Some(reason);
            }
        }
        Ok(())
    }

    /// The choices so far, ordered by first appearance.
    pub fn choices(&self) -> impl Iterator<Item = &Choice> {
        self.choices.iter().map(|c| &c.choice)
    }

    /// The usage reported so far.
    pub fn usage(&self) -> Option<&Usage> {
        self.usage.as_ref().or(self.nested_usage.as_ref())
    }

    /// Whether any choice, usage or other content arrived.
    pub fn is_empty(&self) -> bool {
        self.choices.is_empty() && self.usage().is_none()
    }

    /// Bytes of the answer that no [`StreamEvent`] carries: legacy `function_call` arguments and
    /// unknown fields that grew (appended arrays, new keys). The answer-size cap adds them to
    /// the events' bytes, so no part of an answer grows without bound.
    pub fn untracked_bytes(&self) -> usize {
        self.choices
            .iter()
            .fold(self.untracked, |n, c| n.saturating_add(c.untracked))
    }

    /// Finishes accumulation: choices ordered by index and their tool calls by index.
    pub fn into_completion(self, done: bool) -> Completion {
        let usage = self.usage.or(self.nested_usage);
        let mut choices: Vec<Choice> = self
            .choices
            .into_iter()
            .map(|mut s| {
                // Rule 5: output is ordered by index (arrival order among equal indexes).
                s.choice.tool_calls.sort_by_key(|c| c.index);
                s.choice
            })
            .collect();
        choices.sort_by_key(|c| c.index);
        Completion {
            id: self.id,
            model: self.model,
            choices,
            usage,
            done,
            extra: self.extra,
        }
    }
}

fn malformed(error: String, json: &str) -> ChunkError {
    ChunkError::Malformed {
        error,
        payload: crate::text::shorten(json, PAYLOAD_SHOWN).into_owned(),
    }
}

fn non_empty<'s>(s: &'s Option<Str<'_>>) -> Option<&'s str> {
    s.as_deref().filter(|s| !s.is_empty())
}

fn apply_delta(state: &mut ChoiceState, delta: DeltaView<'_>, events: &mut VecDeque<StreamEvent>) {
    let choice = &mut state.choice;
    let index = choice.index;
    if choice.role.is_none() {
        if let Some(role) = non_empty(&delta.role) {
            choice.role = Some(role.to_owned());
        }
    }
    match &delta.content {
        Some(ContentView::Text(text)) => push_content(choice, text, events),
        Some(ContentView::Parts(parts)) => {
            for part in parts {
                apply_part(choice, part, events);
            }
        }
        None => {}
    }
    // Rule 4: reasoning takes `reasoning_content` when it is a non-empty string, else
    // `reasoning` — never both from one delta.
    if let Some(text) = non_empty(&delta.reasoning_content).or_else(|| non_empty(&delta.reasoning))
    {
        push_reasoning(choice, text, events);
    }
    if let Some(text) = non_empty(&delta.refusal) {
        choice
            .refusal
            .get_or_insert_with(String::new)
            .push_str(text);
        events.push_back(StreamEvent::RefusalDelta {
            choice: index,
            text: text.into(),
        });
    }
    if let Some(calls) = delta.tool_calls {
        for call in calls {
            apply_tool_fragment(state, call, events);
        }
    }
    let choice = &mut state.choice;
    if let Some(f) = delta.function_call {
        let fc = choice
            .function_call
            .get_or_insert_with(FunctionCallParts::default);
        if fc.name.is_empty() {
            if let Some(n) = non_empty(&f.name) {
                fc.name = n.to_owned();
            }
        }
        let arguments = match &f.arguments {
            Some(ArgumentsView::Text(t)) => &**t,
            Some(ArgumentsView::Json(raw)) => raw.get(),
            None => "",
        };
        fc.arguments.push_str(arguments);
        state.untracked += arguments.len();
    }
    for (key, raw) in &delta.extra {
        state.untracked += merge_raw(&mut choice.extra, key, raw);
    }
}

#[inline]
fn push_content(choice: &mut Choice, text: &str, events: &mut VecDeque<StreamEvent>) {
    if text.is_empty() {
        return;
    }
    choice.content.push_str(text);
    events.push_back(StreamEvent::ContentDelta {
        choice: choice.index,
        text: text.into(),
    });
}

#[inline]
fn push_reasoning(choice: &mut Choice, text: &str, events: &mut VecDeque<StreamEvent>) {
    if text.is_empty() {
        return;
    }
    choice
        .reasoning
        .get_or_insert_with(String::new)
        .push_str(text);
    events.push_back(StreamEvent::ReasoningDelta {
        choice: choice.index,
        text: text.into(),
    });
}

fn apply_part(choice: &mut Choice, part: &PartView<'_>, events: &mut VecDeque<StreamEvent>) {
    match part.kind.as_deref() {
        Some("thinking") | Some("reasoning") => match &part.thinking {
            Some(ThinkingView::Text(t)) => push_reasoning(choice, t, events),
            Some(ThinkingView::Parts(parts)) => {
                for p in parts {
                    if let Some(t) = &p.text {
                        push_reasoning(choice, t, events);
                    }
                }
            }
            None => {
                if let Some(t) = &part.text {
                    push_reasoning(choice, t, events);
                }
            }
        },
        _ => {
            if let Some(t) = &part.text {
                push_content(choice, t, events);
            }
        }
    }
}

/// Rule 5: tool calls merge by `index`; id, type and name come from the first fragment with a
/// non-empty string; arguments are concatenated in arrival order. Without `index`, a fragment
/// with a name or an unseen id starts a new call and a bare arguments fragment continues the
/// last one. The same index with a different non-empty id is a new call, and the same id at a
/// different index is a different call too (renamed in [`Choice::to_message`]).
fn apply_tool_fragment(
    state: &mut ChoiceState,
    frag: ToolCallView<'_>,
    events: &mut VecDeque<StreamEvent>,
) {
    let choice = &mut state.choice;
    let calls = &mut state.calls;
    let untracked = &mut state.untracked;
    let id = non_empty(&frag.id);
    let (name, arguments, function_extra) = match &frag.function {
        Some(f) => (non_empty(&f.name), f.arguments.as_ref(), Some(&f.extra)),
        None => (None, None, None),
    };
    // Calls are identified by index first: a fragment with an index continues the call at that
    // index unless it brings a different non-empty id (several calls sharing one index). Only
    // fragments without an index are matched by id.
    let existing = match frag.index {
        Some(ix) => match calls.by_index.get(&ix).copied() {
            Some(p)
                if id.is_some_and(|id| {
                    choice.tool_calls[p]
                        .id
                        .as_deref()
                        .is_some_and(|have| have != id)
                }) =>
            {
                None
            }
            found => found,
        },
        None => match id.and_then(|id| calls.by_id.get(id).copied()) {
            Some(p) => Some(p),
            None if id.is_some() || name.is_some() => None,
            None => choice.tool_calls.len().checked_sub(1),
        },
    };
    let pos = match existing {
        Some(p) => p,
        None => {
            let pos = choice.tool_calls.len();
            let index = frag.index.unwrap_or(pos as u32);
            choice.tool_calls.push(ToolCallParts {
                index,
                id: None,
                kind: None,
                name: String::new(),
                arguments: String::new(),
                function_extra: Extra::new(),
                extra: Extra::new(),
            });
            calls.by_index.insert(index, pos);
            events.push_back(StreamEvent::ToolCallBegin {
                choice: choice.index,
                call: pos,
                id: id.map(str::to_owned),
                name: name.map(str::to_owned),
            });
            pos
        }
    };
    let is_new = existing.is_none();
    let call = &mut choice.tool_calls[pos];
    if call.id.is_none() {
        if let Some(id) = id {
            call.id = Some(id.to_owned());
            // A duplicate id keeps pointing at its first call for index-less fragments.
            calls.by_id.entry(id.to_owned()).or_insert(pos);
        }
    }
    if call.kind.is_none() {
        if let Some(k) = non_empty(&frag.kind) {
            call.kind = Some(k.to_owned());
        }
    }
    if call.name.is_empty() {
        if let Some(n) = name {
            call.name = n.to_owned();
        }
    }
    let text = match arguments {
        Some(ArgumentsView::Text(t)) => t.0.as_ref(),
        Some(ArgumentsView::Json(raw)) => raw.get(),
        None => "",
    };
    if !text.is_empty() {
        // A provider that repeats the whole call in a duplicated final chunk (OpenRouter) sends
        // the id or name again with arguments equal to everything received: not new data.
        let repeat = !is_new
            && (id.is_some() || name.is_some())
            && text == call.arguments
            && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
        if !repeat {
            call.arguments.push_str(text);
            events.push_back(StreamEvent::ToolCallArgumentsDelta {
                choice: choice.index,
                call: pos,
                fragment: text.into(),
            });
        }
    }
    if let Some(fx) = function_extra {
        for (key, raw) in fx {
            *untracked += merge_raw(&mut call.function_extra, key, raw);
        }
    }
    for (key, raw) in &frag.extra {
        *untracked += merge_raw(&mut call.extra, key, raw);
    }
}

/// Rule 7: unknown fields are kept. A field seen again merges with what is there: arrays are
/// appended (streamed lists such as `reasoning_details`), objects merged key by key, anything
/// else replaced; `null` never erases a value.
///
/// Returns how many bytes the merge may have added for good (the field's JSON length when it
/// was new or something was appended; 0 when a value was only replaced), for the answer cap.
fn merge_raw(extra: &mut Extra, key: &Str<'_>, raw: &RawValue) -> usize {
    if raw.get() == "null" {
        return 0;
    }
    let Ok(value) = serde_json::from_str::<Value>(raw.get()) else {
        return 0;
    };
    let grew = match extra.get_mut(&**key) {
        Some(existing) => merge_value(existing, value),
        None => {
            extra.insert((**key).to_owned(), value);
            Growth::Grew
        }
    };
    match grew {
        Growth::Grew => key.len() + raw.get().len(),
        Growth::Replaced => 0,
    }
}

/// Whether a merge appended or added something, or only replaced values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Growth {
    Grew,
    Replaced,
}

fn merge_value(existing: &mut Value, new: Value) -> Growth {
    match (existing, new) {
        (_, Value::Null) => Growth::Replaced,
        (Value::Array(a), Value::Array(b)) => {
            if b.is_empty() {
                return Growth::Replaced;
            }
            a.extend(b);
            Growth::Grew
        }
        (Value::Object(a), Value::Object(b)) => {
            let mut growth = Growth::Replaced;
            for (k, v) in b {
                let g = match a.get_mut(&k) {
                    Some(e) => merge_value(e, v),
                    None => {
                        a.insert(k, v);
                        Growth::Grew
                    }
                };
                if g == Growth::Grew {
                    growth = Growth::Grew;
                }
            }
            growth
        }
        (slot, new) => {
            *slot = new;
            Growth::Replaced
        }
    }
}
