//! Zero-copy views of one streamed chunk, for the accumulator's hot path.
//!
//! A chunk is parsed straight out of the SSE event's text: strings without escapes are borrowed,
//! and a field these views do not know is kept as its raw JSON text, parsed into a
//! [`serde_json::Value`] only when the accumulator merges it. This avoids `#[serde(flatten)]`,
//! which would buffer every field of every chunk through an intermediate map.

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A string borrowed from the input when it has no escapes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Str<'a>(pub(crate) Cow<'a, str>);

impl std::ops::Deref for Str<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// Unknown fields of one object: names and raw JSON values, in arrival order.
pub(crate) type RawExtra<'a> = Vec<(Str<'a>, &'a RawValue)>;

/// Generates a `visit_map` deserializer: known keys go to their fields (last one wins), every
/// other key to `extra` as raw JSON.
macro_rules! map_view {
    ($ty:ident, $what:literal, { $($key:literal => $field:ident),* $(,)? }) => {
        impl<'de> Deserialize<'de> for $ty<'de> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty<'de>;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                        let mut out = $ty::default();
                        while let Some(key) = map.next_key::<Str<'de>>()? {
                            match &*key {
                                $($key => out.$field = map.next_value()?,)*
                                _ => {
                                    let value: &'de RawValue = map.next_value()?;
                                    out.extra.push((key, value));
                                }
                            }
                        }
                        Ok(out)
                    }
                }
                d.deserialize_map(V)
            }
        }
    };
}

/// One `chat.completion.chunk` (or an error object sent in its place).
#[derive(Debug, Default)]
pub(crate) struct ChunkView<'a> {
    pub(crate) id: Option<Str<'a>>,
    pub(crate) object: Option<Str<'a>>,
    pub(crate) model: Option<Str<'a>>,
    pub(crate) created: Option<&'a RawValue>,
    pub(crate) system_fingerprint: Option<Str<'a>>,
    pub(crate) choices: Option<Vec<ChoiceView<'a>>>,
    pub(crate) usage: Option<&'a RawValue>,
    pub(crate) error: Option<&'a RawValue>,
    pub(crate) message: Option<&'a RawValue>,
    pub(crate) extra: RawExtra<'a>,
}

map_view!(ChunkView, "a chat completion chunk object", {
    "id" => id,
    "object" => object,
    "model" => model,
    "created" => created,
    "system_fingerprint" => system_fingerprint,
    "choices" => choices,
    "usage" => usage,
    "error" => error,
    "message" => message,
});

/// One choice of a chunk.
#[derive(Debug, Default)]
pub(crate) struct ChoiceView<'a> {
    pub(crate) index: Option<u32>,
    pub(crate) delta: Option<DeltaView<'a>>,
    /// Some providers send a whole `message` instead of a `delta` in their last chunk.
    pub(crate) message: Option<Box<DeltaView<'a>>>,
    pub(crate) finish_reason: Option<Str<'a>>,
    pub(crate) logprobs: Option<&'a RawValue>,
    pub(crate) usage: Option<&'a RawValue>,
    pub(crate) extra: RawExtra<'a>,
}

map_view!(ChoiceView, "a choice object", {
    "index" => index,
    "delta" => delta,
    "message" => message,
    "finish_reason" => finish_reason,
    "logprobs" => logprobs,
    "usage" => usage,
});

/// The new parts of a choice.
#[derive(Debug, Default)]
pub(crate) struct DeltaView<'a> {
    pub(crate) role: Option<Str<'a>>,
    pub(crate) content: Option<ContentView<'a>>,
    pub(crate) reasoning_content: Option<Str<'a>>,
    pub(crate) reasoning: Option<Str<'a>>,
    pub(crate) refusal: Option<Str<'a>>,
    pub(crate) tool_calls: Option<Vec<ToolCallView<'a>>>,
    pub(crate) function_call: Option<Box<FunctionView<'a>>>,
    pub(crate) extra: RawExtra<'a>,
}

map_view!(DeltaView, "a delta object", {
    "role" => role,
    "content" => content,
    "reasoning_content" => reasoning_content,
    "reasoning" => reasoning,
    "refusal" => refusal,
    "tool_calls" => tool_calls,
    "function_call" => function_call,
});

/// A tool-call fragment.
#[derive(Debug, Default)]
pub(crate) struct ToolCallView<'a> {
    pub(crate) index: Option<u32>,
    pub(crate) id: Option<Str<'a>>,
    pub(crate) kind: Option<Str<'a>>,
    pub(crate) function: Option<FunctionView<'a>>,
    pub(crate) extra: RawExtra<'a>,
}

map_view!(ToolCallView, "a tool call object", {
    "index" => index,
    "id" => id,
    "type" => kind,
    "function" => function,
});

/// A function-call fragment.
#[derive(Debug, Default)]
pub(crate) struct FunctionView<'a> {
    pub(crate) name: Option<Str<'a>>,
    pub(crate) arguments: Option<ArgumentsView<'a>>,
    pub(crate) extra: RawExtra<'a>,
}

map_view!(FunctionView, "a function object", {
    "name" => name,
    "arguments" => arguments,
});

/// Tool-call arguments: a JSON text as OpenAI sends it, or (Ollama and some proxies) the
/// arguments object itself, which is kept as its JSON text.
#[derive(Debug)]
pub(crate) enum ArgumentsView<'a> {
    Text(Str<'a>),
    Json(&'a RawValue),
}

impl<'de> Deserialize<'de> for ArgumentsView<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw: &'de RawValue = Deserialize::deserialize(d)?;
        if raw.get().starts_with('"') {
            let s: Str<'de> = serde_json::from_str(raw.get()).map_err(de::Error::custom)?;
            Ok(ArgumentsView::Text(s))
        } else {
            Ok(ArgumentsView::Json(raw))
        }
    }
}

/// Delta content: a string, or (Mistral's reasoning models) a list of typed parts, where
/// `text` parts are content and `thinking` parts are reasoning.
#[derive(Debug)]
pub(crate) enum ContentView<'a> {
    Text(Str<'a>),
    Parts(Vec<PartView<'a>>),
}

impl<'de> Deserialize<'de> for ContentView<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ContentView<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of content parts")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(ContentView::Text(Str(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(ContentView::Text(Str(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(ContentView::Text(Str(Cow::Owned(v))))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut parts = Vec::new();
                while let Some(p) = seq.next_element()? {
                    parts.push(p);
                }
                Ok(ContentView::Parts(parts))
            }
            /// A single part sent without its list.
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let part = PartView::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(ContentView::Parts(vec![part]))
            }
        }
        d.deserialize_any(V)
    }
}

/// One content part: `{"type":"text","text":…}` or `{"type":"thinking","thinking":[parts]}`.
#[derive(Debug, Default)]
pub(crate) struct PartView<'a> {
    pub(crate) kind: Option<Str<'a>>,
    pub(crate) text: Option<Str<'a>>,
    pub(crate) thinking: Option<ThinkingView<'a>>,
    pub(crate) extra: RawExtra<'a>,
}

map_view!(PartView, "a content part", {
    "type" => kind,
    "text" => text,
    "thinking" => thinking,
});

/// The `thinking` of a thinking part: a string or nested text parts.
#[derive(Debug)]
pub(crate) enum ThinkingView<'a> {
    Text(Str<'a>),
    Parts(Vec<PartView<'a>>),
}

impl<'de> Deserialize<'de> for ThinkingView<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match ContentView::deserialize(d)? {
            ContentView::Text(s) => ThinkingView::Text(s),
            ContentView::Parts(p) => ThinkingView::Parts(p),
        })
    }
}

/// Parses one chunk's JSON text.
pub(crate) fn parse(json: &str) -> Result<ChunkView<'_>, serde_json::Error> {
    serde_json::from_str(json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrows_plain_strings_and_keeps_unknown_fields_raw() {
        let json = r#"{"id":"c1","choices":[{"index":0,"delta":{"content":"hi","x":{"a":[1]}},"finish_reason":null}],"provider":"P"}"#;
        let v = parse(json).unwrap();
        assert!(matches!(v.id.as_ref().unwrap().0, Cow::Borrowed("c1")));
        let choice = &v.choices.as_ref().unwrap()[0];
        let delta = choice.delta.as_ref().unwrap();
        assert!(matches!(
            delta.content,
            Some(ContentView::Text(Str(Cow::Borrowed("hi"))))
        ));
        assert_eq!(&*delta.extra[0].0, "x");
        assert_eq!(delta.extra[0].1.get(), r#"{"a":[1]}"#);
        assert_eq!(v.extra[0].1.get(), r#""P""#);
    }

    #[test]
    fn escaped_strings_are_decoded() {
        let v = parse(r#"{"choices":[{"delta":{"content":"a\"b\u00e9\n"}}]}"#).unwrap();
        let d = v
            .choices
            .unwrap()
            .into_iter()
            .next()
            .unwrap()
            .delta
            .unwrap();
        match d.content {
            Some(ContentView::Text(s)) => assert_eq!(&*s, "a\"bé\n"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nulls_are_absent_and_arguments_may_be_objects() {
        let v = parse(
            r#"{"choices":[{"index":null,"delta":{"content":null,"tool_calls":[{"index":null,"function":{"name":"f","arguments":{"a":1}}}]}}]}"#,
        )
        .unwrap();
        let c = &v.choices.as_ref().unwrap()[0];
        assert_eq!(c.index, None);
        let d = c.delta.as_ref().unwrap();
        assert!(d.content.is_none());
        let f = d.tool_calls.as_ref().unwrap()[0].function.as_ref().unwrap();
        assert!(matches!(f.arguments, Some(ArgumentsView::Json(r)) if r.get() == r#"{"a":1}"#));
    }

    #[test]
    fn a_single_content_part_without_its_list_parses() {
        let v =
            parse(r#"{"choices":[{"delta":{"content":{"type":"text","text":"solo"}}}]}"#).unwrap();
        let d = v
            .choices
            .unwrap()
            .into_iter()
            .next()
            .unwrap()
            .delta
            .unwrap();
        let Some(ContentView::Parts(parts)) = d.content else {
            panic!("parts expected")
        };
        assert_eq!(parts[0].text.as_deref(), Some("solo"));
    }

    #[test]
    fn content_parts_parse() {
        let v = parse(
            r#"{"choices":[{"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"hm"}]},{"type":"text","text":"ok"}]}}]}"#,
        )
        .unwrap();
        let d = v
            .choices
            .unwrap()
            .into_iter()
            .next()
            .unwrap()
            .delta
            .unwrap();
        let Some(ContentView::Parts(parts)) = d.content else {
            panic!("parts expected")
        };
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[1].text.as_deref(), Some("ok"));
    }

    #[test]
    fn malformed_shapes_are_errors() {
        for bad in [
            "[]",
            "\"x\"",
            "{",
            r#"{"choices":{}}"#,
            r#"{"choices":[{"index":-1}]}"#,
            r#"{"choices":[{"index":4294967296}]}"#,
            r#"{"choices":[{"delta":{"content":5}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":7}}]}}]}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
