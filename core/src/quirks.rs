//! What hrns knows about a provider's deviations from the OpenAI chat API, learned by
//! `hrns doctor` or by a session that met a rejection, and saved with the provider in the
//! config so that no later session pays for the same 400 again.
//!
//! In the config file the quirks are flat keys of the provider entry, written only when they
//! differ from the default:
//!
//! ```json
//! { "url": "http://127.0.0.1:8080/v1", "streamOptions": false,
//!   "maxTokensField": "max_completion_tokens", "toolChoice": "auto", "responseFormat": false }
//! ```

use crate::wire::Extra;
use serde_json::Value;

/// The config key of [`ProviderQuirks::stream_options`] (a boolean).
pub const KEY_STREAM_OPTIONS: &str = "streamOptions";
/// The config key of [`ProviderQuirks::max_tokens_field`] (a field name).
pub const KEY_MAX_TOKENS_FIELD: &str = "maxTokensField";
/// The config key of [`ProviderQuirks::tool_choice`] (`"auto"`, or absent).
pub const KEY_TOOL_CHOICE: &str = "toolChoice";

/// The config key of [`ProviderQuirks::response_format`] (a boolean).
pub const KEY_RESPONSE_FORMAT: &str = "responseFormat";

/// Whether streamed requests ask for a usage chunk with `stream_options.include_usage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum StreamOptions {
    /// Send it (the default: most providers then report the tokens used).
    #[default]
    Send,
    /// Leave it out: the provider rejects the field.
    Omit,
}

/// The name of the request field that limits generated tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum MaxTokensField {
    /// `max_tokens` (the default, and what most servers accept).
    #[default]
    MaxTokens,
    /// `max_completion_tokens` (OpenAI's reasoning models reject `max_tokens`).
    MaxCompletionTokens,
}

impl MaxTokensField {
    /// The field name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            MaxTokensField::MaxTokens => "max_tokens",
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        match name {
            "max_tokens" => Some(MaxTokensField::MaxTokens),
            "max_completion_tokens" => Some(MaxTokensField::MaxCompletionTokens),
            _ => None,
        }
    }
}

/// Whether requests with tools carry `tool_choice`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ToolChoice {
    /// Leave it out (the default: the API's default is `auto` anyway).
    #[default]
    Omit,
    /// Send `"tool_choice": "auto"`: the server calls tools only when asked explicitly.
    Auto,
}

/// Whether a turn with an output schema sends it as `response_format: {"type": "json_schema"}`
/// (OpenAI, vLLM, llama.cpp's server and LiteLLM take it, and then constrain the answer to it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ResponseFormat {
    /// Send it (the default), and learn [`ResponseFormat::Omit`] from a 400 that names it.
    #[default]
    Send,
    /// Leave it out: the provider rejects it. The schema goes into the system prompt instead.
    Omit,
}

/// The deviations of one provider that requests must respect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ProviderQuirks {
    /// Whether to send `stream_options`.
    pub stream_options: StreamOptions,
    /// Which field carries the token limit.
    pub max_tokens_field: MaxTokensField,
    /// Whether to send `tool_choice: "auto"` with tools.
    pub tool_choice: ToolChoice,
    /// Whether an output schema goes out as `response_format`.
    pub response_format: ResponseFormat,
}

/// A config value for a quirk key that hrns cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{key}` must be {expected}, not {found}; fix or remove it (hrns doctor writes it again)")]
pub struct QuirkValueError {
    /// The key.
    pub key: &'static str,
    /// What it must be.
    pub expected: &'static str,
    /// The value found, as JSON.
    pub found: String,
}

impl ProviderQuirks {
    /// Whether nothing differs from the defaults.
    pub fn is_default(&self) -> bool {
        *self == ProviderQuirks::default()
    }

    /// Takes the quirk keys out of a provider entry's unknown keys. A key with a value of the
    /// wrong type is an error naming it; the entry keeps no quirk key either way.
    pub fn take_from(extra: &mut Extra) -> Result<ProviderQuirks, QuirkValueError> {
        let mut quirks = ProviderQuirks::default();
        let bad = |key: &'static str, expected: &'static str, v: &Value| QuirkValueError {
            key,
            expected,
            found: crate::text::shorten(&v.to_string(), 60).into_owned(),
        };
        if let Some(v) = extra.remove(KEY_STREAM_OPTIONS) {
            quirks.stream_options = match v {
                Value::Bool(true) | Value::Null => StreamOptions::Send,
                Value::Bool(false) => StreamOptions::Omit,
                other => return Err(bad(KEY_STREAM_OPTIONS, "true or false", &other)),
            };
        }
        if let Some(v) = extra.remove(KEY_MAX_TOKENS_FIELD) {
            quirks.max_tokens_field = match &v {
                Value::Null => MaxTokensField::MaxTokens,
                Value::String(s) => MaxTokensField::parse(s).ok_or_else(|| {
                    bad(
                        KEY_MAX_TOKENS_FIELD,
                        "\"max_tokens\" or \"max_completion_tokens\"",
                        &v,
                    )
                })?,
                other => {
                    return Err(bad(
                        KEY_MAX_TOKENS_FIELD,
                        "\"max_tokens\" or \"max_completion_tokens\"",
                        other,
                    ));
                }
            };
        }
        if let Some(v) = extra.remove(KEY_TOOL_CHOICE) {
            quirks.tool_choice = match &v {
                Value::Null => ToolChoice::Omit,
                Value::String(s) if s == "auto" => ToolChoice::Auto,
                other => return Err(bad(KEY_TOOL_CHOICE, "\"auto\"", other)),
            };
        }
        if let Some(v) = extra.remove(KEY_RESPONSE_FORMAT) {
            quirks.response_format = match v {
                Value::Bool(true) | Value::Null => ResponseFormat::Send,
                Value::Bool(false) => ResponseFormat::Omit,
                other => return Err(bad(KEY_RESPONSE_FORMAT, "true or false", &other)),
            };
        }
        Ok(quirks)
    }

    /// The config keys of the quirks that differ from the defaults.
    pub fn to_keys(&self) -> Vec<(&'static str, Value)> {
        let mut keys = Vec::new();
        if self.stream_options == StreamOptions::Omit {
            keys.push((KEY_STREAM_OPTIONS, Value::Bool(false)));
        }
        if self.max_tokens_field != MaxTokensField::MaxTokens {
            keys.push((
                KEY_MAX_TOKENS_FIELD,
                Value::String(self.max_tokens_field.as_str().to_owned()),
            ));
        }
        if self.tool_choice == ToolChoice::Auto {
            keys.push((KEY_TOOL_CHOICE, Value::String("auto".to_owned())));
        }
        if self.response_format == ResponseFormat::Omit {
            keys.push((KEY_RESPONSE_FORMAT, Value::Bool(false)));
        }
        keys
    }

    /// Learns from a session's [`Event::OptionDropped`](crate::session::Event::OptionDropped):
    /// returns the quirks with that field left out from now on, or `None` when the field says
    /// nothing new (already known, or not a field hrns adds on its own).
    pub fn learn_dropped(&self, field: &str) -> Option<ProviderQuirks> {
        let mut next = *self;
        match field {
            "stream_options" => next.stream_options = StreamOptions::Omit,
            "max_tokens" => next.max_tokens_field = MaxTokensField::MaxCompletionTokens,
            "response_format" => next.response_format = ResponseFormat::Omit,
            _ => return None,
        }
        (next != *self).then_some(next)
    }

    /// The quirks with the optional field that a 400/422 answer rejects left out (or renamed)
    /// from now on, with the field's name; `None` when the answer names no field hrns adds on
    /// its own that is still sent. `text` is the error message, its `param` and the raw body.
    pub fn learn_rejection(&self, text: &[&str]) -> Option<(&'static str, ProviderQuirks)> {
        let mentions = |needle: &str| text.iter().any(|t| t.contains(needle));
        if self.stream_options == StreamOptions::Send
            && (mentions("stream_options") || mentions("include_usage"))
        {
            return Some(("stream_options", self.learn_dropped("stream_options")?));
        }
        // "max_tokens is too large" is about the value, not the field: only an answer that
        // names the other field or calls this one unsupported teaches the rename.
        let refused = [
            "max_completion_tokens",
            "nsupported",
            "not supported",
            "unknown",
            "xtra",
        ]
        .iter()
        .any(|w| mentions(w));
        if self.max_tokens_field == MaxTokensField::MaxTokens && mentions("max_tokens") && refused {
            return Some(("max_tokens", self.learn_dropped("max_tokens")?));
        }
        None
    }

    /// [`ProviderQuirks::learn_rejection`] for a request that carried `response_format`: an
    /// answer naming it (or its `json_schema`, or the grammar a server would build from it,
    /// as llama.cpp's does) teaches [`ResponseFormat::Omit`]. Only asked when the request
    /// carried it, so an unrelated error mentioning a schema teaches nothing.
    pub fn learn_rejection_with_format(
        &self,
        text: &[&str],
    ) -> Option<(&'static str, ProviderQuirks)> {
        if let Some(learned) = self.learn_rejection(text) {
            return Some(learned);
        }
        let mentions = |needle: &str| text.iter().any(|t| t.contains(needle));
        if self.response_format == ResponseFormat::Send
            && (mentions("response_format") || mentions("json_schema") || mentions("grammar"))
        {
            return Some(("response_format", self.learn_dropped("response_format")?));
        }
        None
    }

    /// Applies the quirks to a chat request body (a JSON object): `stream_options` and
    /// `response_format` removed when omitted, `max_tokens` renamed, `tool_choice` added when
    /// tools are offered.
    pub fn apply_to_body(&self, body: &mut serde_json::Map<String, Value>) {
        if self.response_format == ResponseFormat::Omit {
            body.remove("response_format");
        }
        if self.stream_options == StreamOptions::Omit {
            body.remove("stream_options");
        }
        if self.max_tokens_field == MaxTokensField::MaxCompletionTokens {
            if let Some(v) = body.remove("max_tokens") {
                body.entry("max_completion_tokens").or_insert(v);
            }
        }
        let has_tools = body
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|t| !t.is_empty());
        if self.tool_choice == ToolChoice::Auto && has_tools {
            body.entry("tool_choice")
                .or_insert_with(|| Value::String("auto".to_owned()));
        }
    }
}

/// Written as the flat config keys of [`ProviderQuirks::to_keys`].
impl serde::Serialize for ProviderQuirks {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let keys = self.to_keys();
        let mut map = serializer.serialize_map(Some(keys.len()))?;
        for (k, v) in &keys {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn extra(v: Value) -> Extra {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn keys_round_trip_and_defaults_write_nothing() {
        assert!(ProviderQuirks::default().to_keys().is_empty());
        let q = ProviderQuirks {
            stream_options: StreamOptions::Omit,
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
            tool_choice: ToolChoice::Auto,
            response_format: ResponseFormat::Omit,
        };
        let mut e: Extra = q
            .to_keys()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        e.insert("color".into(), json!("red"));
        assert_eq!(ProviderQuirks::take_from(&mut e), Ok(q));
        assert_eq!(e.len(), 1, "only the unknown key stays: {e:?}");
    }

    #[test]
    fn wrong_types_are_errors_naming_the_key() {
        let table = [
            (json!({"streamOptions": "no"}), KEY_STREAM_OPTIONS),
            (json!({"maxTokensField": "max_toks"}), KEY_MAX_TOKENS_FIELD),
            (json!({"maxTokensField": 3}), KEY_MAX_TOKENS_FIELD),
            (json!({"toolChoice": "required"}), KEY_TOOL_CHOICE),
            (json!({"responseFormat": "json"}), KEY_RESPONSE_FORMAT),
        ];
        for (v, key) in table {
            let err = ProviderQuirks::take_from(&mut extra(v.clone())).unwrap_err();
            assert_eq!(err.key, key, "{v}");
            assert!(err.to_string().contains(key));
        }
        let mut nulls =
            extra(json!({"streamOptions": null, "maxTokensField": null, "toolChoice": null}));
        assert_eq!(
            ProviderQuirks::take_from(&mut nulls),
            Ok(ProviderQuirks::default())
        );
    }

    #[test]
    fn learning_from_dropped_fields() {
        let q = ProviderQuirks::default();
        let learned = q.learn_dropped("stream_options").unwrap();
        assert_eq!(learned.stream_options, StreamOptions::Omit);
        assert_eq!(learned.learn_dropped("stream_options"), None);
        assert_eq!(
            q.learn_dropped("max_tokens").unwrap().max_tokens_field,
            MaxTokensField::MaxCompletionTokens
        );
        assert_eq!(q.learn_dropped("temperature"), None);
    }

    #[test]
    fn learning_from_rejections() {
        let q = ProviderQuirks::default();
        let openai = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
        let (field, learned) = q.learn_rejection(&[openai, "max_tokens", ""]).unwrap();
        assert_eq!(field, "max_tokens");
        assert_eq!(
            learned.max_tokens_field,
            MaxTokensField::MaxCompletionTokens
        );
        assert_eq!(learned.learn_rejection(&[openai]), None, "learned once");
        assert_eq!(
            q.learn_rejection(&["max_tokens must be at most 4096"]),
            None,
            "a bad value is not a missing field"
        );
        let pydantic =
            r#"{"detail":[{"loc":["body","stream_options"],"msg":"extra fields not permitted"}]}"#;
        let (field, learned) = q.learn_rejection(&["", "", pydantic]).unwrap();
        assert_eq!(field, "stream_options");
        assert_eq!(learned.stream_options, StreamOptions::Omit);
        assert_eq!(q.learn_rejection(&["model not found"]), None);
        // A schema is named only by a request that carried one.
        let vllm = "response_format json_schema is not supported";
        assert_eq!(q.learn_rejection(&[vllm]), None);
        let (field, learned) = q.learn_rejection_with_format(&[vllm]).unwrap();
        assert_eq!(field, "response_format");
        assert_eq!(learned.response_format, ResponseFormat::Omit);
        assert_eq!(learned.learn_rejection_with_format(&[vllm]), None);
        let llama = "Cannot use custom grammar constraints with tools.";
        assert_eq!(
            q.learn_rejection_with_format(&[llama]).unwrap().0,
            "response_format"
        );
    }

    #[test]
    fn applying_to_a_body() {
        let q = ProviderQuirks {
            stream_options: StreamOptions::Omit,
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
            tool_choice: ToolChoice::Auto,
            response_format: ResponseFormat::Omit,
        };
        let mut body = json!({"stream_options": {"include_usage": true}, "max_tokens": 9, "tools": [{}], "response_format": {}});
        q.apply_to_body(body.as_object_mut().unwrap());
        assert_eq!(
            body,
            json!({"max_completion_tokens": 9, "tools": [{}], "tool_choice": "auto"})
        );
        let mut no_tools = json!({"tools": []});
        q.apply_to_body(no_tools.as_object_mut().unwrap());
        assert!(no_tools.get("tool_choice").is_none());
        let mut untouched = json!({"stream_options": {}, "max_tokens": 1, "tools": [{}]});
        ProviderQuirks::default().apply_to_body(untouched.as_object_mut().unwrap());
        assert_eq!(
            untouched,
            json!({"stream_options": {}, "max_tokens": 1, "tools": [{}]})
        );
    }
}
