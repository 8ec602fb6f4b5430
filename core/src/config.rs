//! The config file model, and the choice of provider, key and model from it and the environment.
//!
//! The CLI reads `$XDG_CONFIG_HOME/hrns/config.json` (default `~/.config/hrns/config.json`) and
//! hands the text to [`Config::parse`]; it writes [`Config::to_json_pretty`] back atomically.
//! The shape is the original Go hrns file's, so existing files keep working:
//!
//! ```json
//! {
//!   "providers": {
//!     "openrouter": {
//!       "url": "https://openrouter.ai/api/v1",
//!       "keyEnv": "OPENROUTER_API_KEY",
//!       "model": "anthropic/claude-sonnet-4",
//!       "skipVerify": false
//!     }
//!   },
//!   "currentProvider": "openrouter",
//!   "currentAgent": "Builder"
//! }
//! ```
//!
//! hrns adds optional provider keys: `keyEnv`, the name of an environment variable holding
//! the key (so the file need not hold secrets), `headers`, extra HTTP headers, and the
//! [quirks](crate::quirks) `hrns doctor` and sessions learn (`streamOptions`, `maxTokensField`,
//! `toolChoice`). Keys hrns does
//! not know, at the top level and in each provider, are kept and written back unchanged (map
//! keys are written in sorted order). A file that is not valid JSON or has a field of the wrong
//! type gives a [`ConfigError`] with the line and column; the CLI must then leave the file alone.
//!
//! [`Config::resolve`] picks what a session talks to. Nothing here reads files or the
//! environment: the caller passes a lookup function for environment variables.

use crate::http::{Secret, is_sensitive_header};
use crate::quirks::ProviderQuirks;
use crate::session::Provider;
use crate::wire::Extra;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

mod checkpoints;
mod context;
mod images;
pub use checkpoints::{
    CHECKPOINTS_KEY, CHECKPOINTS_MAX_BYTES_KEY, CheckpointSettings, DEFAULT_CHECKPOINTS_MAX_BYTES,
    MIN_CHECKPOINTS_MAX_BYTES,
};
pub use context::ContextSettings;
mod limits;
pub use limits::{
    MAX_RETRY_ATTEMPTS, MAX_RETRY_MAX_WAIT, MAX_STREAM_IDLE_TIMEOUT, MIN_MAX_ANSWER_BYTES,
    RETRY_ATTEMPTS_KEY, RETRY_MAX_WAIT_KEY, STREAM_IDLE_TIMEOUT_KEY,
};
mod stale;
pub use stale::{ChoiceKind, StaleChoice};

/// The environment variable with the API key when no provider is configured.
pub const ENV_API_KEY: &str = "OPENAI_API_KEY";
/// The environment variable with the base URL when no provider is configured.
pub const ENV_BASE_URL: &str = "OPENAI_BASE_URL";
/// The environment variable with the default model.
pub const ENV_MODEL: &str = "HRNS_MODEL";
/// The base URL used when no provider is configured and [`ENV_BASE_URL`] is unset.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The name of the provider made from environment variables alone.
pub const ENV_PROVIDER_NAME: &str = "env";

/// The config file.
///
/// Its `Debug` shows the names of unknown keys but not their values, and never a key.
#[derive(Clone, Default, PartialEq, Serialize)]
pub struct Config {
    /// The configured providers by name.
    pub providers: BTreeMap<String, ProviderEntry>,
    /// The provider used when none is chosen on the command line (`currentProvider`).
    #[serde(rename = "currentProvider", skip_serializing_if = "Option::is_none")]
    pub current_provider: Option<String>,
    /// The agent used when none is chosen on the command line (`currentAgent`).
    #[serde(rename = "currentAgent", skip_serializing_if = "Option::is_none")]
    pub current_agent: Option<String>,
    /// Top-level keys hrns does not know, kept for writing back.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One provider of the config file.
///
/// Its `Debug` redacts `key` and sensitive headers, and shows only the names of unknown keys.
#[derive(Clone, Default, PartialEq, Serialize)]
pub struct ProviderEntry {
    /// The base URL, such as `https://api.openai.com/v1`.
    pub url: String,
    /// The API key, written in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The environment variable holding the API key, used when `key` is absent or empty
    /// (`keyEnv`).
    #[serde(rename = "keyEnv", skip_serializing_if = "Option::is_none")]
    pub key_env: Option<String>,
    /// The model used with this provider unless one is chosen on the command line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Whether to skip TLS certificate checks, for self-signed local servers (`skipVerify`).
    #[serde(rename = "skipVerify")]
    pub skip_verify: bool,
    /// Extra HTTP headers sent with every request.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// What `hrns doctor` or a session learned about the provider (`streamOptions`,
    /// `maxTokensField`, `toolChoice`); written only when not the defaults.
    #[serde(flatten)]
    pub quirks: ProviderQuirks,
    /// Keys hrns does not know, kept for writing back.
    #[serde(flatten)]
    pub extra: Extra,
}

impl ProviderEntry {
    /// A provider at `url` with no key, no model and default settings.
    pub fn new(url: impl Into<String>) -> Self {
        ProviderEntry {
            url: url.into(),
            ..ProviderEntry::default()
        }
    }
}

/// Why the config file could not be read. The CLI prefixes the file's path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The text is not valid JSON, or a field has the wrong type (`"skipVerify": "yes"`).
    #[error(
        "line {line}, column {column}: {message}; fix the file by hand (hrns does not \
         overwrite a config file it cannot read)"
    )]
    Invalid {
        /// The line, from 1.
        line: usize,
        /// The column, from 1.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// The text ends in the middle of the JSON, as a file cut short does.
    #[error(
        "line {line}, column {column}: the file ends in the middle of the JSON; complete it or \
         restore it from a backup (hrns does not overwrite a config file it cannot read)"
    )]
    Truncated {
        /// The line of the end, from 1.
        line: usize,
        /// The column of the end, from 1.
        column: usize,
    },
}

impl ConfigError {
    /// The line of the problem, from 1.
    pub fn line(&self) -> usize {
        match self {
            ConfigError::Invalid { line, .. } | ConfigError::Truncated { line, .. } => *line,
        }
    }

    /// The column of the problem, from 1.
    pub fn column(&self) -> usize {
        match self {
            ConfigError::Invalid { column, .. } | ConfigError::Truncated { column, .. } => *column,
        }
    }

    fn from_json(err: serde_json::Error) -> Self {
        let text = err.to_string();
        let suffix = format!(" at line {} column {}", err.line(), err.column());
        let message = text.strip_suffix(&suffix).unwrap_or(&text).to_owned();
        // serde_json counts a column 0 before the first character of a line.
        let (line, column) = (err.line().max(1), err.column().max(1));
        if err.classify() == serde_json::error::Category::Eof {
            return ConfigError::Truncated { line, column };
        }
        ConfigError::Invalid {
            line,
            column,
            message,
        }
    }
}

/// What the user chose on the command line or with a slash command; `None` defers to the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Selection<'a> {
    /// A provider name from `--provider` or `/provider`.
    pub provider: Option<&'a str>,
    /// A model name from `--model` or `/model`.
    pub model: Option<&'a str>,
}

/// The provider, key and model a session uses, after [`Config::resolve`].
///
/// Its `Debug` redacts the key and sensitive headers.
#[derive(Clone, PartialEq, Eq)]
pub struct ResolvedProvider {
    /// The provider's name in the config, or [`ENV_PROVIDER_NAME`].
    pub name: String,
    /// The base URL.
    pub base_url: String,
    /// The API key, if there is one.
    pub api_key: Option<Secret>,
    /// The model.
    pub model: String,
    /// Whether to skip TLS certificate checks.
    pub skip_verify: bool,
    /// Extra HTTP headers.
    pub headers: BTreeMap<String, String>,
    /// The provider's saved quirks.
    pub quirks: ProviderQuirks,
}

impl ResolvedProvider {
    /// The session's [`Provider`]: URL, key and headers. `skip_verify` is the driver's business
    /// and `model` goes to [`SessionConfig`](crate::SessionConfig).
    pub fn to_provider(&self) -> Provider {
        let mut provider = Provider::new(self.base_url.clone(), self.api_key.clone());
        provider.headers = self
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        provider.quirks = self.quirks;
        provider
    }
}

/// Why no provider could be chosen. Each message says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// A provider was asked for by name and the config has none of that name.
    #[error(
        "there is no provider named `{name}` in the config ({}): {}",
        list(known),
        unknown_provider_hint(known)
    )]
    UnknownProvider {
        /// The name asked for.
        name: String,
        /// The configured names.
        known: Vec<String>,
    },
    /// `currentProvider` names a provider the config does not have.
    #[error(
        "the config's currentProvider is `{name}`, which is not a configured provider ({}): \
         change currentProvider, or pick one with --provider",
        list(known)
    )]
    UnknownCurrentProvider {
        /// The name in `currentProvider`.
        name: String,
        /// The configured names.
        known: Vec<String>,
    },
    /// Several providers are configured and nothing says which to use.
    #[error(
        "several providers are configured ({}) and none is current: pick one with --provider \
         or set currentProvider in the config",
        list(known)
    )]
    NoCurrentProvider {
        /// The configured names.
        known: Vec<String>,
    },
    /// No provider is configured and the environment names none.
    #[error(
        "no provider is configured: set {ENV_API_KEY} (and {ENV_BASE_URL} for an endpoint other \
         than OpenAI's), or run hrns to set one up"
    )]
    NotConfigured,
    /// A provider's `keyEnv` names an environment variable that is unset or empty.
    #[error(
        "provider `{provider}` takes its API key from the environment variable {variable}, \
         which is not set: set {variable}, or change keyEnv in the config"
    )]
    KeyEnvUnset {
        /// The provider.
        provider: String,
        /// The variable named by `keyEnv`.
        variable: String,
    },
    /// A provider has no `url`.
    #[error("provider `{provider}` has no url: set providers.{provider}.url in the config")]
    MissingUrl {
        /// The provider.
        provider: String,
    },
    /// The base URL is not an `http://` or `https://` URL with a host (`OPENAI_BASE_URL=not-a-url`).
    #[error(
        "the base URL `{url}` of provider `{provider}` is not an http:// or https:// URL with a \
         host: {}",
        fix_url(provider)
    )]
    InvalidUrl {
        /// The provider.
        provider: String,
        /// The URL as given.
        url: String,
    },
    /// No model was chosen anywhere.
    #[error(
        "no model is chosen for provider `{provider}`: pass --model NAME, set its model in the \
         config, or set {ENV_MODEL}"
    )]
    MissingModel {
        /// The provider.
        provider: String,
    },
}

impl ResolveError {
    /// Whether the error is about something written in the config file (rather than the
    /// environment or the command line), so that a message should name that file.
    pub fn concerns_config_file(&self) -> bool {
        match self {
            ResolveError::UnknownCurrentProvider { .. }
            | ResolveError::NoCurrentProvider { .. }
            | ResolveError::KeyEnvUnset { .. }
            | ResolveError::MissingUrl { .. } => true,
            ResolveError::InvalidUrl { provider, .. } | ResolveError::MissingModel { provider } => {
                provider != ENV_PROVIDER_NAME
            }
            ResolveError::UnknownProvider { .. } | ResolveError::NotConfigured => false,
        }
    }
}

fn fix_url(provider: &str) -> String {
    let example = "such as http://127.0.0.1:11434/v1";
    if provider == ENV_PROVIDER_NAME {
        format!("set {ENV_BASE_URL} to one, {example}")
    } else {
        format!("set providers.{provider}.url in the config to one, {example}")
    }
}

/// Whether `url` is an `http://` or `https://` URL with a non-empty host and no spaces.
fn is_http_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
    else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = host.rsplit('@').next().unwrap_or_default();
    let name = host.split(':').next().unwrap_or_default();
    !name.is_empty() && !url.chars().any(char::is_whitespace)
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none are configured".to_owned()
    } else {
        format!("configured: {}", names.join(", "))
    }
}

/// What to do about an unknown provider name: pick a configured one, if there are any.
fn unknown_provider_hint(known: &[String]) -> &'static str {
    if known.is_empty() {
        "add one to the config, or with /connect in the interactive UI"
    } else {
        "pick one of those, or add it with /connect"
    }
}

/// `Some(trimmed)` unless absent or blank.
fn non_empty(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

impl Config {
    /// Parses the config file's text; empty or blank text is an empty config.
    ///
    /// Errors carry the line and column of the problem.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        serde_json::from_str(text).map_err(ConfigError::from_json)
    }

    /// The file's text: pretty JSON with two-space indents and a final newline.
    ///
    /// Unknown keys are written back; keys hrns knows keep the Go hrns spelling, and `url` and
    /// `skipVerify` are always written, as Go hrns does.
    pub fn to_json_pretty(&self) -> String {
        // Every map has string keys and every value is plain JSON, so this cannot fail; an empty
        // string written over the user's file would be far worse than a panic.
        let mut text = serde_json::to_string_pretty(self).expect("a Config always serialises");
        text.push('\n');
        text
    }

    /// Adds the provider `name`, or replaces its settings if it exists. Unknown keys of the
    /// existing entry are kept unless `entry` has the same ones.
    pub fn upsert_provider(&mut self, name: impl Into<String>, mut entry: ProviderEntry) {
        let name = name.into();
        if let Some(old) = self.providers.remove(&name) {
            for (k, v) in old.extra {
                entry.extra.entry(k).or_insert(v);
            }
        }
        self.providers.insert(name, entry);
    }

    /// Makes `name` the current provider. Fails when no provider has that name.
    pub fn set_current_provider(&mut self, name: &str) -> Result<(), ResolveError> {
        if !self.providers.contains_key(name) {
            return Err(ResolveError::UnknownProvider {
                name: name.to_owned(),
                known: self.provider_names(),
            });
        }
        self.current_provider = Some(name.to_owned());
        Ok(())
    }

    /// Saves `model` as the default model of the configured provider `name` (as `/model` does, like
    /// the original hrns). Returns false when no configured provider has that name (the
    /// provider made from environment variables has nowhere to keep it).
    pub fn set_provider_model(&mut self, name: &str, model: &str) -> bool {
        match self.providers.get_mut(name) {
            Some(entry) => {
                entry.model = Some(model.to_owned());
                true
            }
            None => false,
        }
    }

    /// Makes `name` the current agent. Agents are not part of the config, so any name is taken.
    pub fn set_current_agent(&mut self, name: impl Into<String>) {
        self.current_agent = Some(name.into());
    }

    /// Saves `quirks` for the provider `name`; `false` when no provider has that name (the
    /// provider made from environment variables has no entry to keep them in).
    pub fn set_quirks(&mut self, name: &str, quirks: ProviderQuirks) -> bool {
        match self.providers.get_mut(name) {
            Some(entry) => {
                entry.quirks = quirks;
                true
            }
            None => false,
        }
    }

    /// The names of the configured providers, sorted.
    pub fn provider_names(&self) -> Vec<String> {
        self.providers.keys().cloned().collect()
    }

    /// Chooses the provider, key and model, given the user's `selection` and `env`, a lookup of
    /// environment variables (unset and empty variables are treated alike).
    ///
    /// The provider: the selected one, else `currentProvider`, else the only configured one,
    /// else — with no provider configured — one made from [`ENV_API_KEY`] and [`ENV_BASE_URL`]
    /// (default [`DEFAULT_BASE_URL`]), named [`ENV_PROVIDER_NAME`]. A name is matched exactly,
    /// then ignoring case.
    ///
    /// The key: the entry's `key`, else the variable its `keyEnv` names (an error if unset),
    /// else none. [`ENV_API_KEY`] is never sent to a configured provider: an OpenAI key must not
    /// leak to another endpoint.
    ///
    /// The model: the selected one, else the entry's `model`, else [`ENV_MODEL`]. `HRNS_MODEL`
    /// is a default, not an override: a model name belongs to a provider, so a variable set
    /// once in a shell profile must not replace the models the config gives each provider;
    /// `--model` is the per-run override.
    pub fn resolve(
        &self,
        selection: &Selection<'_>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ResolvedProvider, ResolveError> {
        let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let model = |name: &str, entry_model: Option<&str>| {
            non_empty(selection.model)
                .or(non_empty(entry_model))
                .map(str::to_owned)
                .or_else(|| env(ENV_MODEL).map(|m| m.trim().to_owned()))
                .ok_or_else(|| ResolveError::MissingModel {
                    provider: name.to_owned(),
                })
        };

        let Some((name, entry)) = self.choose(selection.provider)? else {
            let key = env(ENV_API_KEY);
            let url = env(ENV_BASE_URL);
            if key.is_none() && url.is_none() {
                return Err(ResolveError::NotConfigured);
            }
            let base_url = url.map_or_else(|| DEFAULT_BASE_URL.to_owned(), |u| u.trim().to_owned());
            if !is_http_url(&base_url) {
                return Err(ResolveError::InvalidUrl {
                    provider: ENV_PROVIDER_NAME.to_owned(),
                    url: base_url,
                });
            }
            return Ok(ResolvedProvider {
                name: ENV_PROVIDER_NAME.to_owned(),
                base_url,
                api_key: key.map(|k| Secret::new(k.trim())),
                model: model(ENV_PROVIDER_NAME, None)?,
                skip_verify: false,
                headers: BTreeMap::new(),
                quirks: ProviderQuirks::default(),
            });
        };

        let base_url = non_empty(Some(&entry.url)).ok_or_else(|| ResolveError::MissingUrl {
            provider: name.to_owned(),
        })?;
        if !is_http_url(base_url) {
            return Err(ResolveError::InvalidUrl {
                provider: name.to_owned(),
                url: base_url.to_owned(),
            });
        }
        let api_key = match (
            non_empty(entry.key.as_deref()),
            non_empty(entry.key_env.as_deref()),
        ) {
            (Some(key), _) => Some(Secret::new(key)),
            (None, Some(variable)) => match env(variable) {
                Some(key) => Some(Secret::new(key.trim())),
                None => {
                    return Err(ResolveError::KeyEnvUnset {
                        provider: name.to_owned(),
                        variable: variable.to_owned(),
                    });
                }
            },
            (None, None) => None,
        };
        Ok(ResolvedProvider {
            name: name.to_owned(),
            base_url: base_url.to_owned(),
            api_key,
            model: model(name, entry.model.as_deref())?,
            skip_verify: entry.skip_verify,
            headers: entry.headers.clone(),
            quirks: entry.quirks,
        })
    }

    /// The configured provider to use, or `None` for the environment-only provider.
    fn choose(
        &self,
        requested: Option<&str>,
    ) -> Result<Option<(&str, &ProviderEntry)>, ResolveError> {
        if let Some(name) = non_empty(requested) {
            // `hrns providers` lists the provider made from environment variables by this name,
            // so it can be asked for by it (a configured provider of the same name wins).
            if name == ENV_PROVIDER_NAME && self.find(name).is_none() {
                return Ok(None);
            }
            return self
                .find(name)
                .map(Some)
                .ok_or_else(|| ResolveError::UnknownProvider {
                    name: name.to_owned(),
                    known: self.provider_names(),
                });
        }
        if let Some(name) = non_empty(self.current_provider.as_deref()) {
            return self
                .find(name)
                .map(Some)
                .ok_or_else(|| ResolveError::UnknownCurrentProvider {
                    name: name.to_owned(),
                    known: self.provider_names(),
                });
        }
        let mut entries = self.providers.iter();
        match (entries.next(), entries.next()) {
            (None, _) => Ok(None),
            (Some((name, entry)), None) => Ok(Some((name.as_str(), entry))),
            (Some(_), Some(_)) => Err(ResolveError::NoCurrentProvider {
                known: self.provider_names(),
            }),
        }
    }

    fn find(&self, name: &str) -> Option<(&str, &ProviderEntry)> {
        if let Some((k, v)) = self.providers.get_key_value(name) {
            return Some((k.as_str(), v));
        }
        let lower = name.to_lowercase();
        self.providers
            .iter()
            .find(|(k, _)| k.to_lowercase() == lower)
            .map(|(k, v)| (k.as_str(), v))
    }
}

// ---- Debug without secrets ----

/// Shows a header map with the values of sensitive names redacted.
struct RedactedHeaders<'a>(&'a BTreeMap<String, String>);

impl fmt::Debug for RedactedHeaders<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (name, value) in self.0 {
            if is_sensitive_header(name) {
                map.entry(name, &format_args!("[redacted]"));
            } else {
                map.entry(name, value);
            }
        }
        map.finish()
    }
}

/// Shows the names of unknown keys only: their values may be secrets under names hrns cannot
/// guess.
struct KeysOnly<'a>(&'a Extra);

impl fmt::Debug for KeysOnly<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("providers", &self.providers)
            .field("current_provider", &self.current_provider)
            .field("current_agent", &self.current_agent)
            .field("extra", &KeysOnly(&self.extra))
            .finish()
    }
}

impl fmt::Debug for ProviderEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderEntry")
            .field("url", &self.url)
            .field(
                "key",
                &self.key.as_ref().map(|_| format_args!("[redacted]")),
            )
            .field("key_env", &self.key_env)
            .field("model", &self.model)
            .field("skip_verify", &self.skip_verify)
            .field("headers", &RedactedHeaders(&self.headers))
            .field("quirks", &self.quirks)
            .field("extra", &KeysOnly(&self.extra))
            .finish()
    }
}

impl fmt::Debug for ResolvedProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResolvedProvider")
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key)
            .field("model", &self.model)
            .field("skip_verify", &self.skip_verify)
            .field("headers", &RedactedHeaders(&self.headers))
            .finish()
    }
}

// ---- Deserialisation ----
//
// Written by hand rather than derived: with `#[serde(flatten)]` a derived impl buffers the
// object and type errors lose their line and column. Here every known field is read straight
// from the JSON, so an error points at the value.

/// Stores a field's value, refusing a second occurrence of the key.
fn set_once<T, E: de::Error>(slot: &mut Option<T>, value: T, key: &'static str) -> Result<(), E> {
    if slot.is_some() {
        return Err(E::duplicate_field(key));
    }
    *slot = Some(value);
    Ok(())
}

impl<'de> Deserialize<'de> for Config {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ConfigVisitor;

        impl<'de> Visitor<'de> for ConfigVisitor {
            type Value = Config;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object with `providers`, `currentProvider` and `currentAgent`")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Config, A::Error> {
                let mut providers: Option<Option<BTreeMap<String, ProviderEntry>>> = None;
                let mut current_provider: Option<Option<String>> = None;
                let mut current_agent: Option<Option<String>> = None;
                let mut extra = Extra::new();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "providers" => set_once(&mut providers, map.next_value()?, "providers")?,
                        "currentProvider" => {
                            set_once(&mut current_provider, map.next_value()?, "currentProvider")?
                        }
                        "currentAgent" => {
                            set_once(&mut current_agent, map.next_value()?, "currentAgent")?
                        }
                        _ => {
                            let value = map.next_value()?;
                            extra.insert(key, value);
                        }
                    }
                }
                Ok(Config {
                    providers: providers.flatten().unwrap_or_default(),
                    current_provider: current_provider.flatten(),
                    current_agent: current_agent.flatten(),
                    extra,
                })
            }
        }

        deserializer.deserialize_map(ConfigVisitor)
    }
}

impl<'de> Deserialize<'de> for ProviderEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntryVisitor;

        impl<'de> Visitor<'de> for EntryVisitor {
            type Value = ProviderEntry;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a provider object with `url`, `key` or `keyEnv`, `model` and `skipVerify`",
                )
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ProviderEntry, A::Error> {
                let mut url: Option<Option<String>> = None;
                let mut key: Option<Option<String>> = None;
                let mut key_env: Option<Option<String>> = None;
                let mut model: Option<Option<String>> = None;
                let mut skip_verify: Option<Option<bool>> = None;
                let mut headers: Option<Option<BTreeMap<String, String>>> = None;
                let mut extra = Extra::new();
                while let Some(name) = map.next_key::<String>()? {
                    match name.as_str() {
                        "url" => set_once(&mut url, map.next_value()?, "url")?,
                        "key" => set_once(&mut key, map.next_value()?, "key")?,
                        "keyEnv" => set_once(&mut key_env, map.next_value()?, "keyEnv")?,
                        "model" => set_once(&mut model, map.next_value()?, "model")?,
                        "skipVerify" => {
                            set_once(&mut skip_verify, map.next_value()?, "skipVerify")?
                        }
                        "headers" => set_once(&mut headers, map.next_value()?, "headers")?,
                        _ => {
                            let value = map.next_value()?;
                            extra.insert(name, value);
                        }
                    }
                }
                let quirks = ProviderQuirks::take_from(&mut extra).map_err(de::Error::custom)?;
                Ok(ProviderEntry {
                    quirks,
                    url: url.flatten().unwrap_or_default(),
                    key: key.flatten(),
                    key_env: key_env.flatten(),
                    model: model.flatten(),
                    skip_verify: skip_verify.flatten().unwrap_or(false),
                    headers: headers.flatten().unwrap_or_default(),
                    extra,
                })
            }
        }

        deserializer.deserialize_map(EntryVisitor)
    }
}

#[cfg(test)]
mod tests;
