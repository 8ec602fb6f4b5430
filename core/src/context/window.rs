//! The context window a provider advertises for a model in its `/models` list.
//!
//! No standard field exists; each server family names it differently:
//!
//! | field | who sends it |
//! | --- | --- |
//! | `context_length` | OpenRouter, LM Studio, Together, Fireworks, Ollama's `/v1/models` forks |
//! | `max_model_len` | vLLM |
//! | `max_context_length` | Mistral, LM Studio |
//! | `context_window` | Groq, DeepInfra |
//! | `max_input_tokens` | LiteLLM's proxy |
//! | `n_ctx` | llama.cpp (`meta.n_ctx`; its `n_ctx_train` is the training length, not the served one) |
//!
//! The field is looked for on the entry itself first, then one level down in `meta`,
//! `metadata` and `top_provider`.

use crate::wire::ModelInfo;
use serde_json::Value;

/// The field names that state a window, in order of preference.
const FIELDS: &[&str] = &[
    "context_length",
    "max_model_len",
    "max_context_length",
    "context_window",
    "max_input_tokens",
    "n_ctx",
];

/// Nested objects that may hold one of [`FIELDS`].
const NESTED: &[&str] = &["meta", "metadata", "top_provider"];

/// Smallest value taken as a window; smaller numbers are some other setting.
const MIN_WINDOW: u64 = 256;

/// Where a session's context window came from, for `hrns` to say so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    /// `--context-window N`.
    CommandLine,
    /// `contextWindow` of the model in the config file.
    ModelConfig,
    /// `contextWindow` of the provider in the config file.
    ProviderConfig,
    /// The provider's `/models` metadata.
    ModelList,
    /// The provider's error message when a request was too long.
    OverflowError,
}

/// The window stated in one `/models` entry, if any.
pub fn window_from_model(info: &ModelInfo) -> Option<u64> {
    let top = FIELDS
        .iter()
        .find_map(|f| info.extra.get(*f).and_then(tokens));
    top.or_else(|| {
        NESTED.iter().find_map(|n| {
            let obj = info.extra.get(*n)?.as_object()?;
            FIELDS.iter().find_map(|f| obj.get(*f).and_then(tokens))
        })
    })
}

/// The window of `model` in a `/models` list: the entry with that id, else (a server that
/// serves one model under any name, like llama.cpp) the only entry.
pub fn window_from_models(models: &[ModelInfo], model: &str) -> Option<u64> {
    match models.iter().find(|m| m.id == model) {
        Some(entry) => window_from_model(entry),
        None if models.len() == 1 => window_from_model(&models[0]),
        None => None,
    }
}

/// A positive token count, as a JSON number or a string of digits.
fn tokens(v: &Value) -> Option<u64> {
    let n = match v {
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }?;
    (n >= MIN_WINDOW).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(v: Value) -> ModelInfo {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn each_known_field_is_read() {
        let cases = [
            (json!({"id":"m","context_length":131072}), Some(131072)),
            (json!({"id":"m","max_model_len":32768}), Some(32768)),
            (json!({"id":"m","max_context_length":"8192"}), Some(8192)),
            (json!({"id":"m","context_window":128000}), Some(128000)),
            (
                json!({"id":"m","meta":{"n_ctx":4096,"n_ctx_train":131072}}),
                Some(4096),
            ),
            (json!({"id":"m","meta":{"n_ctx_train":131072}}), None),
            (
                json!({"id":"m","top_provider":{"context_length":65536}}),
                Some(65536),
            ),
            (json!({"id":"m","context_length":1.6e5}), Some(160000)),
            (json!({"id":"m"}), None),
            (json!({"id":"m","context_length":null}), None),
            (json!({"id":"m","context_length":-5}), None),
            (json!({"id":"m","context_length":"lots"}), None),
            (json!({"id":"m","context_length":{"x":1}}), None),
            (json!({"id":"m","context_length":8}), None),
            (json!({"id":"m","meta":"n_ctx=4096"}), None),
        ];
        for (v, want) in cases {
            assert_eq!(window_from_model(&entry(v.clone())), want, "{v}");
        }
    }

    #[test]
    fn the_entry_of_the_model_or_the_only_one() {
        let list = vec![
            entry(json!({"id":"a","context_length":1000})),
            entry(json!({"id":"b","context_length":2000})),
        ];
        assert_eq!(window_from_models(&list, "b"), Some(2000));
        assert_eq!(window_from_models(&list, "c"), None);
        let single = vec![entry(json!({"id":"x.gguf","meta":{"n_ctx":4096}}))];
        assert_eq!(window_from_models(&single, "anything"), Some(4096));
        assert_eq!(window_from_models(&[], "a"), None);
    }
}
