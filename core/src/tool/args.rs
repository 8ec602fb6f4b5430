//! Decoding a tool call's JSON arguments, with errors the model can act on.
//!
//! Models get arguments wrong in a handful of ways: text that is not JSON, JSON that is not an
//! object, a missing or misspelt field, a number sent as a string. Each becomes an
//! [`ArgsError`] whose message names the tool and the field and says what was expected, so the
//! model can fix the call on its next try instead of guessing.
//!
//! serde's own errors for a derived struct say "invalid type: string, expected u64" without
//! naming the field, so decoding goes through a small deserializer over the parsed object that
//! remembers which field it was reading.

use serde::de::value::StringDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// How many characters of malformed arguments an error quotes.
const QUOTE_CHARS: usize = 200;

/// Why a tool call's arguments could not be decoded; the `Display` text is for the model.
///
/// Every variant is the model's mistake; the message names the tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgsError {
    /// The arguments are not valid JSON (truncated, unquoted, nested too deeply, ...).
    #[error(
        "{tool}: the arguments are not valid JSON ({reason}); arguments must be a JSON object, \
         but got: {quoted}"
    )]
    NotJson {
        /// The tool that was called.
        tool: String,
        /// The JSON parser's complaint, with its line and column.
        reason: String,
        /// A shortened copy of what the model sent.
        quoted: String,
    },
    /// The arguments are JSON but not an object (an array, a string, `null`, ...).
    #[error("{tool}: arguments must be a JSON object, but got {found}")]
    NotObject {
        /// The tool that was called.
        tool: String,
        /// What kind of JSON value arrived, e.g. "an array".
        found: &'static str,
    },
    /// A required argument is absent.
    #[error("{tool}: missing required argument `{field}`")]
    MissingField {
        /// The tool that was called.
        tool: String,
        /// The missing argument.
        field: &'static str,
    },
    /// An argument the tool does not take.
    #[error(
        "{tool}: unknown argument `{field}`; this tool takes {}",
        list_fields(expected)
    )]
    UnknownField {
        /// The tool that was called.
        tool: String,
        /// The unexpected argument, as sent.
        field: String,
        /// The arguments the tool takes.
        expected: &'static [&'static str],
    },
    /// An argument has the wrong type or an impossible value.
    #[error("{tool}: argument `{field}` is invalid: {problem}")]
    InvalidField {
        /// The tool that was called.
        tool: String,
        /// The argument at fault.
        field: String,
        /// What was wrong, e.g. "invalid type: string \"10\", expected a non-negative integer".
        problem: String,
    },
    /// The arguments as a whole were refused for another reason.
    #[error("{tool}: invalid arguments: {problem}")]
    Invalid {
        /// The tool that was called.
        tool: String,
        /// What was wrong.
        problem: String,
    },
}

/// Decodes the JSON `raw` arguments of a call to `tool` into `T`.
///
/// Empty or whitespace-only `raw` counts as `{}` (some models send nothing for tools without
/// arguments). Anything else must be one JSON object; see [`ArgsError`] for what is reported
/// when it is not. Nesting deeper than serde_json's limit (128) is reported as not JSON rather
/// than overflowing the stack.
pub fn decode_args<T: DeserializeOwned>(tool: &str, raw: &str) -> Result<T, ArgsError> {
    let trimmed = raw.trim();
    let value = if trimmed.is_empty() {
        Value::Object(Map::new())
    } else {
        serde_json::from_str(trimmed).map_err(|e| ArgsError::NotJson {
            tool: tool.to_owned(),
            reason: e.to_string(),
            quoted: quote(trimmed),
        })?
    };
    let map = match value {
        Value::Object(map) => map,
        other => {
            return Err(ArgsError::NotObject {
                tool: tool.to_owned(),
                found: kind_of(&other),
            });
        }
    };
    T::deserialize(ObjectDeserializer(map)).map_err(|e| e.into_args_error(tool))
}

/// Names a JSON value's kind for a message: "an array", "a string", ...
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Quotes `text` for a message, shortened to about [`QUOTE_CHARS`] characters.
fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_CHARS) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let rest = text[cut..].chars().count();
            format!("{}… ({rest} more characters)", &text[..cut])
        }
    }
}

fn list_fields(fields: &[&str]) -> String {
    if fields.is_empty() {
        return "none (send {})".to_owned();
    }
    let quoted: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
    quoted.join(", ")
}

/// Rewrites serde's Rust type names in an error into words a model understands.
fn plain_types(problem: &str) -> String {
    const NAMES: [(&str, &str); 12] = [
        ("expected u64", "expected a non-negative integer"),
        ("expected u32", "expected a non-negative integer"),
        ("expected u16", "expected a non-negative integer"),
        ("expected u8", "expected a non-negative integer"),
        ("expected usize", "expected a non-negative integer"),
        ("expected i64", "expected an integer"),
        ("expected i32", "expected an integer"),
        ("expected isize", "expected an integer"),
        ("expected f64", "expected a number"),
        ("expected f32", "expected a number"),
        ("expected a borrowed string", "expected a string"),
        ("expected a sequence", "expected an array"),
    ];
    let mut out = problem.to_owned();
    for (from, to) in NAMES {
        if let Some(at) = out.find(from) {
            // Only whole words: "expected u8" must not rewrite "expected u64".
            let end = at + from.len();
            if !out[end..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
                out.replace_range(at..end, to);
            }
        }
    }
    out
}

/// The error of [`ObjectDeserializer`], keeping serde's structured causes apart.
#[derive(Debug)]
enum DecodeError {
    Missing(&'static str),
    Unknown(String, &'static [&'static str]),
    Field(String, String),
    Other(String),
}

impl DecodeError {
    fn into_args_error(self, tool: &str) -> ArgsError {
        let tool = tool.to_owned();
        match self {
            DecodeError::Missing(field) => ArgsError::MissingField { tool, field },
            DecodeError::Unknown(field, expected) => ArgsError::UnknownField {
                tool,
                field,
                expected,
            },
            DecodeError::Field(field, problem) => ArgsError::InvalidField {
                tool,
                field,
                problem: plain_types(&problem),
            },
            DecodeError::Other(problem) => ArgsError::Invalid {
                tool,
                problem: plain_types(&problem),
            },
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Missing(field) => write!(f, "missing field `{field}`"),
            DecodeError::Unknown(field, _) => write!(f, "unknown field `{field}`"),
            DecodeError::Field(field, problem) => write!(f, "field `{field}`: {problem}"),
            DecodeError::Other(problem) => f.write_str(problem),
        }
    }
}

impl std::error::Error for DecodeError {}

impl de::Error for DecodeError {
    fn custom<M: fmt::Display>(msg: M) -> Self {
        DecodeError::Other(msg.to_string())
    }

    fn missing_field(field: &'static str) -> Self {
        DecodeError::Missing(field)
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        DecodeError::Unknown(field.to_owned(), expected)
    }
}

/// Deserializes a JSON object, tagging each value's error with its key.
struct ObjectDeserializer(Map<String, Value>);

impl<'de> de::Deserializer<'de> for ObjectDeserializer {
    type Error = DecodeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_map(ObjectAccess {
            entries: self.0.into_iter(),
            pending: None,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

struct ObjectAccess {
    entries: serde_json::map::IntoIter,
    /// The entry whose key was handed out and whose value is next.
    pending: Option<(String, Value)>,
}

impl<'de> MapAccess<'de> for ObjectAccess {
    type Error = DecodeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DecodeError> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        let key_de: StringDeserializer<DecodeError> = key.clone().into_deserializer();
        self.pending = Some((key, value));
        seed.deserialize(key_de).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, DecodeError> {
        let (key, value) = self
            .pending
            .take()
            .ok_or_else(|| DecodeError::Other("value requested before its key".to_owned()))?;
        seed.deserialize(value)
            .map_err(|e| DecodeError::Field(key, strip_position(e)))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// serde_json errors from a `Value` carry a meaningless "at line 0 column 0"; drop it.
fn strip_position(e: serde_json::Error) -> String {
    let text = e.to_string();
    match text.find(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Args {
        path: String,
        offset: Option<u64>,
        flag: Option<bool>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct NoArgs {}

    fn decode(raw: &str) -> Result<Args, ArgsError> {
        decode_args("read_file", raw)
    }

    #[test]
    fn decodes_objects() {
        assert_eq!(
            decode(r#"{"path": "a", "offset": 3}"#),
            Ok(Args {
                path: "a".into(),
                offset: Some(3),
                flag: None
            })
        );
        assert_eq!(
            decode(" \n{\"path\":\"b\",\"offset\":null,\"flag\":true}\n "),
            Ok(Args {
                path: "b".into(),
                offset: None,
                flag: Some(true)
            })
        );
    }

    #[test]
    fn empty_arguments_are_an_empty_object() {
        assert_eq!(decode_args::<NoArgs>("t", ""), Ok(NoArgs {}));
        assert_eq!(decode_args::<NoArgs>("t", " \t\n"), Ok(NoArgs {}));
        assert_eq!(decode_args::<NoArgs>("t", "{}"), Ok(NoArgs {}));
        let err = decode("").unwrap_err();
        assert_eq!(
            err.to_string(),
            "read_file: missing required argument `path`"
        );
    }

    #[test]
    fn not_json_quotes_what_was_sent() {
        for raw in [
            r#"{"path": "a""#,
            "path=a",
            "{'path': 'a'}",
            "{\"path\": \"a\"} x",
            "{",
        ] {
            let err = decode(raw).unwrap_err();
            let ArgsError::NotJson { ref quoted, .. } = err else {
                panic!("{raw:?} gave {err:?}");
            };
            assert_eq!(quoted, raw.trim());
            let text = err.to_string();
            assert!(
                text.starts_with("read_file: the arguments are not valid JSON ("),
                "{text}"
            );
            assert!(text.contains("arguments must be a JSON object"), "{text}");
        }
    }

    #[test]
    fn long_malformed_input_is_quoted_shortly() {
        let raw = format!("{{\"path\": \"{}", "é".repeat(100_000));
        let err = decode(&raw).unwrap_err();
        let text = err.to_string();
        assert!(text.len() < 1000, "{}", text.len());
        assert!(text.contains("… (99810 more characters)"), "{text}");
    }

    #[test]
    fn non_objects_are_named() {
        let table = [
            ("[1, 2]", "an array"),
            ("\"{\\\"path\\\": \\\"a\\\"}\"", "a string"),
            ("42", "a number"),
            ("null", "null"),
            ("true", "a boolean"),
        ];
        for (raw, found) in table {
            let err = decode(raw).unwrap_err();
            assert_eq!(
                err,
                ArgsError::NotObject {
                    tool: "read_file".into(),
                    found
                }
            );
            assert_eq!(
                err.to_string(),
                format!("read_file: arguments must be a JSON object, but got {found}")
            );
        }
    }

    #[test]
    fn missing_and_unknown_fields() {
        assert_eq!(
            decode(r#"{"offset": 1}"#),
            Err(ArgsError::MissingField {
                tool: "read_file".into(),
                field: "path"
            })
        );
        let err = decode(r#"{"path": "a", "file": "b"}"#).unwrap_err();
        assert!(matches!(&err, ArgsError::UnknownField { field, .. } if field == "file"));
        assert_eq!(
            err.to_string(),
            "read_file: unknown argument `file`; this tool takes `path`, `offset`, `flag`"
        );
        let err = decode_args::<NoArgs>("t", r#"{"x": 1}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t: unknown argument `x`; this tool takes none (send {})"
        );
    }

    #[test]
    fn wrong_types_name_the_field() {
        let err = decode(r#"{"path": "a", "offset": "10"}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "read_file: argument `offset` is invalid: invalid type: string \"10\", expected a \
             non-negative integer"
        );
        let err = decode(r#"{"path": "a", "offset": -1}"#).unwrap_err();
        assert!(
            err.to_string()
                .contains("`offset` is invalid: invalid value: integer `-1`")
        );
        let err = decode(r#"{"path": "a", "offset": 1.5}"#).unwrap_err();
        assert!(matches!(&err, ArgsError::InvalidField { field, .. } if field == "offset"));
        let err = decode(r#"{"path": 7}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "read_file: argument `path` is invalid: invalid type: integer `7`, expected a string"
        );
        let err = decode(r#"{"path": null}"#).unwrap_err();
        assert!(
            err.to_string()
                .contains("`path` is invalid: invalid type: null")
        );
        let err = decode(r#"{"path": "a", "flag": "yes"}"#).unwrap_err();
        assert!(err.to_string().contains("expected a boolean"), "{err}");
    }

    #[test]
    fn deep_nesting_is_refused_without_overflow() {
        let raw = "[".repeat(100_000) + &"]".repeat(100_000);
        assert!(matches!(decode(&raw), Err(ArgsError::NotJson { .. })));
        let nested = format!("{{\"path\": {}{}}}", "[".repeat(1000), "]".repeat(1000));
        assert!(matches!(decode(&nested), Err(ArgsError::NotJson { .. })));
        let ok_depth = format!("{{\"path\": {}{}}}", "[".repeat(50), "]".repeat(50));
        assert!(matches!(
            decode(&ok_depth),
            Err(ArgsError::InvalidField { .. })
        ));
    }

    #[test]
    fn duplicate_keys_keep_the_last() {
        let args = decode(r#"{"path": "a", "path": "b"}"#).unwrap();
        assert_eq!(args.path, "b");
    }

    #[test]
    fn plain_types_only_rewrites_whole_names() {
        assert_eq!(
            plain_types("expected u64"),
            "expected a non-negative integer"
        );
        assert_eq!(plain_types("expected u8x"), "expected u8x");
        assert_eq!(plain_types("nothing to do"), "nothing to do");
    }

    #[test]
    fn decodes_into_values_and_maps_too() {
        let value: Value = decode_args("t", r#"{"a": [1, {"b": null}]}"#).unwrap();
        assert_eq!(value, serde_json::json!({"a": [1, {"b": null}]}));
        let map: std::collections::BTreeMap<String, u8> =
            decode_args("t", r#"{"a": 1, "b": 2}"#).unwrap();
        assert_eq!(map.len(), 2);
        let err = decode_args::<std::collections::BTreeMap<String, u8>>("t", r#"{"a": 300}"#)
            .unwrap_err();
        assert!(matches!(err, ArgsError::InvalidField { ref field, .. } if field == "a"));
    }
}
