//! Applying chunks recognised by their envelope (see [`crate::envelope`]): what a full parse of
//! each would do, without the parse.

use super::{
    Accumulator, CallIndex, Choice, ChoiceState, StreamEvent, push_content, push_reasoning,
};
use crate::envelope::{Envelope, Slot, Token};
use crate::sse::{data_value_start, event_end};
use crate::wire::Extra;
use serde_json::Value;
use std::collections::VecDeque;

/// Where the strings of one envelope's chunks go, resolved once for a run of such chunks.
#[derive(Debug, Clone, Copy)]
enum Target {
    Content,
    Reasoning,
    /// The arguments of the call at this position among the choice's calls.
    Arguments(usize),
}

impl Accumulator {
    /// The fast path straight from SSE input (see `sse::Sink::at_boundary`): applies the
    /// one-line events at the start of `rest` whose data is a chunk in a known envelope, each
    /// line at most `limit` bytes and their text together at most `budget` bytes, and returns
    /// the bytes taken and the answer bytes added (as [`StreamEvent`] text). The first event
    /// that does not fit stops it, to go the usual way.
    ///
    /// Consecutive chunks in one envelope are a run: where their strings go and the fields a
    /// full parse would set are resolved once per run, not per chunk (the tail field, which a
    /// full parse sets on every chunk, is set to the run's last value).
    #[inline]
    pub(crate) fn apply_sse_events(
        &mut self,
        rest: &[u8],
        limit: usize,
        budget: usize,
        events: &mut VecDeque<StreamEvent>,
    ) -> (usize, usize) {
        #[cfg(any(test, feature = "fuzzing"))]
        if self.no_fast_path {
            return (0, 0);
        }
        let mut taken = 0;
        let mut added = 0;
        'runs: loop {
            let at = &rest[taken..];
            let Some(value) = data_value_start(at) else {
                break;
            };
            let Some((env, mut token)) = self.envelopes.find_at(&at[value..]) else {
                break;
            };
            let Some(mut len) = event_len(at, value, &token, limit, budget - added) else {
                break;
            };
            let Some((pos, target)) = resolve(
                &mut self.choices,
                &mut self.last_choice,
                &mut self.extra,
                env,
            ) else {
                break;
            };
            let choice = &mut self.choices[pos].choice;
            loop {
                apply_text(choice, target, &token.text, events);
                taken += len;
                added += token.text.len();
                let tail = token.tail;
                let at = &rest[taken..];
                let next = data_value_start(at).and_then(|value| {
                    let token = env.token_at(&at[value..])?;
                    Some((event_len(at, value, &token, limit, budget - added), token))
                });
                match next {
                    Some((Some(next_len), next)) => (token, len) = (next, next_len),
                    other => {
                        set_tail(&mut self.extra, env, tail);
                        match other {
                            // Another envelope's chunk, perhaps.
                            None => continue 'runs,
                            // In this envelope but too large or not ending the event.
                            Some((None, _)) => break 'runs,
                            Some((Some(_), _)) => unreachable!("matched above"),
                        }
                    }
                }
            }
        }
        (taken, added)
    }
}

/// The length of the event at the start of `at` whose data, from `value`, is `token`'s chunk,
/// when its line fits `limit`, its text fits `budget`, and the event ends after that one line.
#[inline]
fn event_len(
    at: &[u8],
    value: usize,
    token: &Token<'_>,
    limit: usize,
    budget: usize,
) -> Option<usize> {
    let line = value + token.len;
    if line > limit || token.text.len() > budget {
        return None;
    }
    Some(line + event_end(&at[line..])?)
}

/// Applies a whole chunk recognised by its envelope; returns false (nothing applied but perhaps
/// some of its constant fields) to send it the full way.
#[inline]
pub(super) fn apply_match(
    choices: &mut Vec<ChoiceState>,
    last_choice: &mut usize,
    extra: &mut Extra,
    (env, token): (&Envelope, Token<'_>),
    events: &mut VecDeque<StreamEvent>,
) -> bool {
    let Some((pos, target)) = resolve(choices, last_choice, extra, env) else {
        return false;
    };
    apply_text(&mut choices[pos].choice, target, &token.text, events);
    set_tail(extra, env, token.tail);
    true
}

/// Where `env`'s chunks go, after setting the constant fields a full parse of each would set;
/// `None` when the full path must decide: the call is not known yet, or a field to set is not
/// there yet.
#[inline]
fn resolve(
    choices: &mut Vec<ChoiceState>,
    last_choice: &mut usize,
    extra: &mut Extra,
    env: &Envelope,
) -> Option<(usize, Target)> {
    let index = env.choice();
    // The call must exist already.
    let call = match env.slot() {
        Slot::Arguments(ix) => Some(
            choices
                .iter()
                .find(|c| c.choice.index == index)
                .and_then(|c| c.calls.by_index.get(&ix).copied())?,
        ),
        Slot::Content | Slot::Reasoning => None,
    };
    for (key, value) in env.constants() {
        match extra.get_mut(key) {
            Some(slot) if slot != value => *slot = value.clone(),
            Some(_) => {}
            None => return None,
        }
    }
    if let Some(key) = env.tail_key() {
        extra.get(key)?;
    }
    let target = match (env.slot(), call) {
        (Slot::Arguments(_), Some(call)) => Target::Arguments(call),
        (Slot::Content, _) => Target::Content,
        (Slot::Reasoning, _) => Target::Reasoning,
        (Slot::Arguments(_), None) => unreachable!("an unknown call returned above"),
    };
    Some((choice_pos(choices, last_choice, index), target))
}

/// Appends one chunk's string where `target` says, with its event.
#[inline]
fn apply_text(choice: &mut Choice, target: Target, text: &str, events: &mut VecDeque<StreamEvent>) {
    match target {
        Target::Content => push_content(choice, text, events),
        Target::Reasoning => push_reasoning(choice, text, events),
        Target::Arguments(call) => {
            if !text.is_empty() {
                choice.tool_calls[call].arguments.push_str(text);
                events.push_back(StreamEvent::ToolCallArgumentsDelta {
                    choice: choice.index,
                    call,
                    fragment: text.into(),
                });
            }
        }
    }
}

/// Sets the envelope's tail field (checked to exist by [`resolve`]) to `text`.
#[inline]
fn set_tail(extra: &mut Extra, env: &Envelope, text: Option<&str>) {
    let (Some(key), Some(text)) = (env.tail_key(), text) else {
        return;
    };
    match extra.get_mut(key) {
        Some(Value::String(s)) => {
            s.clear();
            s.push_str(text);
        }
        Some(slot) => *slot = Value::String(text.to_owned()),
        None => {}
    }
}

/// The position of the choice with `index` in `choices`, added when new; `last` (the
/// choice the last chunk touched) is tried first.
#[inline]
pub(super) fn choice_pos(choices: &mut Vec<ChoiceState>, last: &mut usize, index: u32) -> usize {
    if let Some(c) = choices.get(*last) {
        if c.choice.index == index {
            return *last;
        }
    }
    let pos = match choices.iter().position(|c| c.choice.index == index) {
        Some(p) => p,
        None => {
            choices.push(ChoiceState {
                choice: Choice::new(index),
                calls: CallIndex::default(),
                untracked: 0,
            });
            choices.len() - 1
        }
    };
    *last = pos;
    pos
}
