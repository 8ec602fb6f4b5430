//! The context settings of the config file: `contextWindow` per provider and per model, and
//! `contextThreshold`.
//!
//! ```json
//! {
//!   "contextThreshold": 80,
//!   "providers": {
//!     "local": {
//!       "url": "http://127.0.0.1:8080/v1",
//!       "contextWindow": 8192,
//!       "models": { "qwen-coder": { "contextWindow": 32768 } }
//!     }
//!   }
//! }
//! ```
//!
//! The keys live among the fields hrns keeps verbatim (`extra`), so files written by other
//! versions keep them.

use super::{Config, ProviderEntry};
use serde_json::Value;

/// The context settings for one provider and model, as the file states them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContextSettings {
    /// The window of the model, else of the provider.
    pub window: Option<u64>,
    /// Where the window came from.
    pub window_source: Option<crate::context::WindowSource>,
    /// The percentage of the window past which the session prunes and compacts.
    pub threshold_percent: Option<u8>,
}

impl Config {
    /// The context settings for `model` of the provider named `provider` (absent for the
    /// environment-only provider). A value of the wrong type is an error naming the key.
    pub fn context_settings(&self, provider: &str, model: &str) -> Result<ContextSettings, String> {
        let mut settings = ContextSettings::default();
        if let Some(v) = self.extra.get("contextThreshold") {
            settings.threshold_percent = Some(
                v.as_u64()
                    .filter(|p| (1..=100).contains(p))
                    .map(|p| p as u8)
                    .ok_or_else(|| {
                        format!("`contextThreshold` must be a percentage from 1 to 100, not {v}")
                    })?,
            );
        }
        let Some(entry) = self.providers.get(provider) else {
            return Ok(settings);
        };
        if let Some(w) = model_window(entry, provider, model)? {
            settings.window = Some(w);
            settings.window_source = Some(crate::context::WindowSource::ModelConfig);
        } else if let Some(v) = entry.extra.get("contextWindow") {
            settings.window = Some(window(v, &format!("providers.{provider}.contextWindow"))?);
            settings.window_source = Some(crate::context::WindowSource::ProviderConfig);
        }
        Ok(settings)
    }
}

fn model_window(entry: &ProviderEntry, provider: &str, model: &str) -> Result<Option<u64>, String> {
    let Some(v) = entry
        .extra
        .get("models")
        .and_then(|m| m.get(model))
        .and_then(|m| m.get("contextWindow"))
    else {
        return Ok(None);
    };
    window(
        v,
        &format!("providers.{provider}.models.{model}.contextWindow"),
    )
    .map(Some)
}

fn window(v: &Value, key: &str) -> Result<u64, String> {
    v.as_u64()
        .filter(|w| *w >= 256)
        .ok_or_else(|| format!("`{key}` must be a number of tokens (at least 256), not {v}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Config {
        Config::parse(s).unwrap()
    }

    #[test]
    fn model_over_provider_and_threshold() {
        let c = parse(
            r#"{"contextThreshold":80,"providers":{"p":{"url":"u","contextWindow":8192,"models":{"big":{"contextWindow":32768}}}}}"#,
        );
        let s = c.context_settings("p", "big").unwrap();
        assert_eq!(s.window, Some(32768));
        assert_eq!(s.threshold_percent, Some(80));
        assert_eq!(
            s.window_source,
            Some(crate::context::WindowSource::ModelConfig)
        );
        let s = c.context_settings("p", "small").unwrap();
        assert_eq!(s.window, Some(8192));
        assert_eq!(c.context_settings("env", "m").unwrap().window, None);
        assert_eq!(
            parse("{}").context_settings("p", "m").unwrap(),
            ContextSettings::default()
        );
    }

    #[test]
    fn wrong_types_are_errors_naming_the_key() {
        for (text, key) in [
            (r#"{"contextThreshold":0}"#, "contextThreshold"),
            (r#"{"contextThreshold":"85"}"#, "contextThreshold"),
            (
                r#"{"providers":{"p":{"url":"u","contextWindow":"8k"}}}"#,
                "providers.p.contextWindow",
            ),
            (
                r#"{"providers":{"p":{"url":"u","contextWindow":10}}}"#,
                "providers.p.contextWindow",
            ),
            (
                r#"{"providers":{"p":{"url":"u","models":{"m":{"contextWindow":-1}}}}}"#,
                "providers.p.models.m.contextWindow",
            ),
        ] {
            let err = parse(text).context_settings("p", "m").unwrap_err();
            assert!(err.contains(key), "{err}");
        }
    }
}
