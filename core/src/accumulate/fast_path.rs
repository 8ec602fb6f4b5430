//! Applying a chunk recognised by its envelope (see [`crate::envelope`]): what a full parse of
//! it would do, without the parse.

use super::{CallIndex, Choice, ChoiceState, StreamEvent, push_content, push_reasoning};
use crate::envelope::{self, Slot};
use crate::wire::Extra;
use serde_json::Value;
use std::collections::VecDeque;

/// Applies a chunk recognised by its envelope; returns the answer bytes its event carries, or
/// `None` (nothing applied but perhaps some of its constant fields) to send it the full way.
#[inline]
pub(super) fn apply_match(
    choices: &mut Vec<ChoiceState>,
    last_choice: &mut usize,
    extra: &mut Extra,
    found: envelope::Match<'_, '_>,
    events: &mut VecDeque<StreamEvent>,
) -> Option<usize> {
    let envelope::Match {
        choice: index,
        slot,
        text,
        fields,
    } = found;
    let added = text.len();
    // The call must exist already; otherwise the full path decides.
    let call = match slot {
        Slot::Arguments(ix) => Some(
            choices
                .iter()
                .find(|c| c.choice.index == index)
                .and_then(|c| c.calls.by_index.get(&ix).copied())?,
        ),
        Slot::Content | Slot::Reasoning => None,
    };
    if !set_fields(extra, &fields) {
        return None;
    }
    let pos = choice_pos(choices, last_choice, index);
    let choice = &mut choices[pos].choice;
    match (slot, call) {
        (Slot::Arguments(_), Some(call)) => {
            if !text.is_empty() {
                choice.tool_calls[call].arguments.push_str(&text);
                events.push_back(StreamEvent::ToolCallArgumentsDelta {
                    choice: index,
                    call,
                    fragment: text.into(),
                });
            }
        }
        (Slot::Content, _) => push_content(choice, &text, events),
        (Slot::Reasoning, _) => push_reasoning(choice, &text, events),
        (Slot::Arguments(_), None) => unreachable!("an unknown call returned above"),
    }
    Some(added)
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

fn set_fields(extra: &mut Extra, fields: &envelope::Fields<'_, '_>) -> bool {
    for (key, value) in fields.constants {
        match extra.get_mut(key) {
            Some(slot) if slot != value => *slot = value.clone(),
            Some(_) => {}
            None => return false,
        }
    }
    if let Some((key, text)) = fields.tail {
        match extra.get_mut(key) {
            Some(Value::String(s)) => {
                s.clear();
                s.push_str(text);
            }
            Some(slot) => *slot = Value::String(text.to_owned()),
            None => return false,
        }
    }
    true
}
