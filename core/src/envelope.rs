//! Chunk envelopes: the fast path for the chunks that make up almost all of a stream.
//!
//! Providers wrap each token in the same JSON around it: an id, a model, a timestamp, one
//! choice, and a delta with one string field. Once a chunk of that shape has been parsed in
//! full, its bytes before and after the varying string (the envelope) are remembered; a later
//! chunk with the same envelope byte for byte differs only in that string, so it can be applied
//! without parsing the rest again. The string is still validated as a JSON string (no
//! unescaped quote or control character; escapes decoded by serde_json), and anything that
//! does not fit goes the full way. The result is identical to a full parse by construction.

use crate::chunk::{ArgumentsView, ChunkView, ContentView, Str};
use std::borrow::Cow;

/// Where the varying string of an envelope goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Appended to the choice's content.
    Content,
    /// Appended to the choice's reasoning.
    Reasoning,
    /// Appended to the arguments of the choice's tool call with this provider index.
    Arguments(u32),
}

/// One remembered envelope.
#[derive(Debug, Clone)]
struct Envelope {
    prefix: String,
    suffix: String,
    choice: u32,
    slot: Slot,
}

/// How many envelopes are remembered (content, reasoning, arguments, a second choice).
const CAPACITY: usize = 4;

/// The envelopes of the stream so far.
#[derive(Debug, Default)]
pub(crate) struct Envelopes {
    list: Vec<Envelope>,
    next: usize,
}

/// A chunk recognised by its envelope.
#[derive(Debug)]
pub(crate) struct Match<'a> {
    pub(crate) choice: u32,
    pub(crate) slot: Slot,
    pub(crate) text: Cow<'a, str>,
}

impl Envelopes {
    /// The chunk's choice, slot and decoded string when `json` has a known envelope and its
    /// middle is one valid JSON string; `None` sends the chunk the full way.
    ///
    /// `json` is raw bytes: the envelope was valid UTF-8 when it was learned and is compared
    /// byte for byte, and its ends are ASCII quotes, so the chunk is valid UTF-8 exactly when
    /// its middle is; only the middle is checked. A middle that is not valid UTF-8 goes the
    /// full way (which decodes it lossily).
    pub(crate) fn recognise<'a>(&self, json: &'a [u8]) -> Option<Match<'a>> {
        let env = self.list.iter().find(|e| {
            json.len() >= e.prefix.len() + e.suffix.len()
                && json.starts_with(e.prefix.as_bytes())
                && json.ends_with(e.suffix.as_bytes())
        })?;
        let middle = &json[env.prefix.len()..json.len() - env.suffix.len()];
        let text = match memchr::memchr2(b'"', b'\\', middle) {
            None if !middle.iter().any(|&b| b < 0x20) => {
                Cow::Borrowed(std::str::from_utf8(middle).ok()?)
            }
            None => return None,
            // Escapes: decode the token (with its quotes); a stray quote or invalid UTF-8
            // fails to parse.
            Some(_) => {
                let token = &json[env.prefix.len() - 1..json.len() - env.suffix.len() + 1];
                Cow::Owned(serde_json::from_slice::<String>(token).ok()?)
            }
        };
        Some(Match {
            choice: env.choice,
            slot: env.slot,
            text,
        })
    }

    /// Remembers the envelope of a fully parsed chunk when it has the one-string shape: one
    /// choice, no finish reason or other choice fields, and a delta with only content, only
    /// reasoning, or only one tool call's argument fragment (with its index), nothing unknown
    /// anywhere, and the string borrowed from `json` (so its place is known).
    pub(crate) fn learn(&mut self, json: &str, view: &ChunkView<'_>) {
        if let Some((prefix_end, suffix_start, choice, slot)) = shape(json, view) {
            let env = Envelope {
                prefix: json[..prefix_end].to_owned(),
                suffix: json[suffix_start..].to_owned(),
                choice,
                slot,
            };
            if self
                .list
                .iter()
                .any(|e| e.prefix == env.prefix && e.suffix == env.suffix)
            {
                return;
            }
            if self.list.len() < CAPACITY {
                self.list.push(env);
            } else {
                self.list[self.next] = env;
                self.next = (self.next + 1) % CAPACITY;
            }
        }
    }
}

/// The span of the one varying string and where it goes, if the chunk has the shape.
fn shape(json: &str, view: &ChunkView<'_>) -> Option<(usize, usize, u32, Slot)> {
    if view.error.is_some()
        || view.usage.is_some()
        || view.message.is_some()
        || !view.extra.is_empty()
    {
        return None;
    }
    if view.object.as_deref() == Some("error") {
        return None;
    }
    let [choice] = view.choices.as_deref()? else {
        return None;
    };
    if choice.message.is_some()
        || choice.logprobs.is_some()
        || choice.usage.is_some()
        || !choice.extra.is_empty()
        || choice
            .finish_reason
            .as_deref()
            .is_some_and(|f| !f.is_empty())
    {
        return None;
    }
    let d = choice.delta.as_ref()?;
    if d.role.is_some() || d.refusal.is_some() || d.function_call.is_some() || !d.extra.is_empty() {
        return None;
    }
    let (s, slot): (&Str<'_>, Slot) = match (
        &d.content,
        &d.reasoning_content,
        &d.reasoning,
        &d.tool_calls,
    ) {
        (Some(ContentView::Text(s)), None, None, None) => (s, Slot::Content),
        (None, Some(s), None, None) | (None, None, Some(s), None) => (s, Slot::Reasoning),
        (None, None, None, Some(calls)) => {
            let [call] = calls.as_slice() else {
                return None;
            };
            let f = call.function.as_ref()?;
            if call.id.is_some()
                || call.kind.is_some()
                || !call.extra.is_empty()
                || f.name.is_some()
                || !f.extra.is_empty()
            {
                return None;
            }
            match (&f.arguments, call.index) {
                (Some(ArgumentsView::Text(s)), Some(ix)) => (s, Slot::Arguments(ix)),
                _ => return None,
            }
        }
        _ => return None,
    };
    let Cow::Borrowed(text) = &s.0 else {
        return None;
    };
    // The string lies inside `json`; find its place from the pointers.
    let start = (text.as_ptr() as usize).checked_sub(json.as_ptr() as usize)?;
    let end = start + text.len();
    let bytes = json.as_bytes();
    if end >= bytes.len() || start == 0 || bytes[start - 1] != b'"' || bytes[end] != b'"' {
        return None;
    }
    Some((start, end, choice.index.unwrap_or(0), slot))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk;

    fn learned(json: &str) -> Envelopes {
        let mut e = Envelopes::default();
        e.learn(json, &chunk::parse(json).unwrap());
        e
    }

    const C: &str = r#"{"id":"x","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}],"created":1}"#;

    #[test]
    fn a_learned_envelope_recognises_the_same_shape() {
        let e = learned(C);
        let world = C.replace("Hello", " world");
        let m = e.recognise(world.as_bytes()).unwrap();
        assert_eq!((m.choice, m.slot, &*m.text), (0, Slot::Content, " world"));
        let escaped = C.replace("Hello", r#"a\"b\u00e9\n"#);
        let m = e.recognise(escaped.as_bytes()).unwrap();
        assert_eq!(&*m.text, "a\"bé\n");
        assert_eq!(
            &*e.recognise(C.replace("Hello", "").as_bytes()).unwrap().text,
            ""
        );
    }

    #[test]
    fn anything_else_goes_the_full_way() {
        let e = learned(C);
        for other in [
            C.replace("Hello", r#"a","role":"x"#),
            C.replace("Hello", r#"a\"#),
            C.replace("Hello", "a\nb"),
            C.replace("Hello", r#"a\\"b"#),
            C.replace("\"created\":1", "\"created\":2"),
            C.replace("null", "\"stop\""),
        ] {
            assert!(e.recognise(other.as_bytes()).is_none(), "{other}");
        }
    }

    #[test]
    fn only_one_string_shapes_are_learned() {
        for json in [
            r#"{"choices":[{"index":0,"delta":{"content":"a","role":"assistant"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"a\n"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"total_tokens":1}}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"a"}}],"provider":"p"}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"a","x":1}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"arguments":"{"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}"#,
        ] {
            assert!(learned(json).list.is_empty(), "{json}");
        }
        let r = learned(r#"{"choices":[{"index":1,"delta":{"reasoning":"hm"}}]}"#);
        assert_eq!((r.list[0].choice, r.list[0].slot), (1, Slot::Reasoning));
        let a = learned(
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"arguments":"{\"a"}}]}}]}"#,
        );
        assert!(
            a.list.is_empty(),
            "an escaped (owned) string has no known place"
        );
        let a = learned(
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"arguments":"x"}}]}}]}"#,
        );
        assert_eq!(a.list[0].slot, Slot::Arguments(2));
    }
}
