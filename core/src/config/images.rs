//! The `images` setting of the config file: whether a provider's models (or one model) take
//! the images tools return, as image parts.
//!
//! ```json
//! {
//!   "providers": {
//!     "local": {
//!       "url": "http://127.0.0.1:8080/v1",
//!       "images": false,
//!       "models": { "qwen2.5-vl": { "images": true } }
//!     }
//!   }
//! }
//! ```
//!
//! The model's key beats the provider's; without either, the session uses
//! [`ImageInputs::known_for`]. The keys live among the fields hrns keeps verbatim (`extra`).

use super::Config;
use crate::session::ImageInputs;
use serde_json::Value;

impl Config {
    /// Whether `model` of the provider named `provider` takes images, as the file states it
    /// (`None` when it does not). A value that is not `true` or `false` is an error naming
    /// the key.
    pub fn image_inputs(&self, provider: &str, model: &str) -> Result<Option<ImageInputs>, String> {
        let Some(entry) = self.providers.get(provider) else {
            return Ok(None);
        };
        let from_model = entry
            .extra
            .get("models")
            .and_then(|m| m.get(model))
            .and_then(|m| m.get("images"));
        if let Some(v) = from_model {
            return parse(v, &format!("providers.{provider}.models.{model}.images")).map(Some);
        }
        match entry.extra.get("images") {
            Some(v) => parse(v, &format!("providers.{provider}.images")).map(Some),
            None => Ok(None),
        }
    }
}

fn parse(v: &Value, key: &str) -> Result<ImageInputs, String> {
    match v {
        Value::Bool(true) => Ok(ImageInputs::Parts),
        Value::Bool(false) => Ok(ImageInputs::Placeholder),
        other => Err(format!("`{key}` must be true or false, not {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Config {
        Config::parse(s).unwrap()
    }

    #[test]
    fn model_over_provider_and_unstated_is_none() {
        let c = parse(
            r#"{"providers":{"p":{"url":"u","images":true,"models":{"text-only":{"images":false}}}}}"#,
        );
        assert_eq!(c.image_inputs("p", "m"), Ok(Some(ImageInputs::Parts)));
        assert_eq!(
            c.image_inputs("p", "text-only"),
            Ok(Some(ImageInputs::Placeholder))
        );
        assert_eq!(c.image_inputs("env", "m"), Ok(None));
        assert_eq!(
            parse(r#"{"providers":{"p":{"url":"u"}}}"#).image_inputs("p", "m"),
            Ok(None)
        );
    }

    #[test]
    fn wrong_types_are_errors_naming_the_key() {
        for (text, key) in [
            (
                r#"{"providers":{"p":{"url":"u","images":"yes"}}}"#,
                "providers.p.images",
            ),
            (
                r#"{"providers":{"p":{"url":"u","models":{"m":{"images":1}}}}}"#,
                "providers.p.models.m.images",
            ),
        ] {
            let err = parse(text).image_inputs("p", "m").unwrap_err();
            assert!(err.contains(key), "{err}");
        }
    }
}
