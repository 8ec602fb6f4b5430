//! `/connect`: adding a provider step by step (name, URL, hidden key, whether to skip TLS
//! certificate checks, model), with the same questions and model list as first-run onboarding.

use super::{App, Msg};
use crate::setup::onboarding::{SKIP_VERIFY_QUESTION, asks_skip_verify, pick_model, yes_no};
use crate::tui::text::Line;
use hrns_core::http::Secret;
use hrns_core::session::Provider;
use hrns_tokio::{Client, ClientConfig};
use std::time::Duration;

/// How long `/connect` waits for the new provider's `/models` before asking for a name.
const LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// How many listed models `/connect` numbers (the rest can be typed by name).
const SHOWN_MODELS: usize = 50;

/// Steps of `/connect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ConnectStep {
    Name,
    Url,
    Key,
    /// Asked for `https://` URLs only, as onboarding does.
    SkipVerify,
    Model,
}

/// The new provider's model list, as far as it is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ModelList {
    /// `/models` was asked and has not answered yet.
    Listing,
    /// What `/models` listed (not empty): a number or Enter picks from it.
    Listed(Vec<String>),
    /// `/models` failed or listed nothing: the model is typed by name.
    Unavailable,
}

/// What `/connect` has been told so far.
pub(super) struct Connect {
    pub(super) step: ConnectStep,
    pub(super) name: String,
    pub(super) url: String,
    pub(super) key: String,
    pub(super) skip_verify: bool,
    pub(super) models: ModelList,
}

impl Connect {
    pub(super) fn new() -> Connect {
        Connect {
            step: ConnectStep::Name,
            name: String::new(),
            url: String::new(),
            key: String::new(),
            skip_verify: false,
            models: ModelList::Listing,
        }
    }

    /// The question shown for the current step.
    pub(super) fn prompt(&self) -> &'static str {
        match (self.step, &self.models) {
            (ConnectStep::Name, _) => "provider name: ",
            (ConnectStep::Url, _) => "base URL: ",
            (ConnectStep::Key, _) => "API key (hidden, empty for none): ",
            (ConnectStep::SkipVerify, _) => SKIP_VERIFY_QUESTION,
            (ConnectStep::Model, ModelList::Listing) => "model (listing the models…): ",
            (ConnectStep::Model, ModelList::Listed(_)) => "model (number or name) [1]: ",
            (ConnectStep::Model, ModelList::Unavailable) => "model name: ",
        }
    }

    /// Whether Enter on an empty line answers the current step.
    pub(super) fn takes_empty_answer(&self) -> bool {
        match self.step {
            ConnectStep::Key | ConnectStep::SkipVerify => true,
            ConnectStep::Model => matches!(self.models, ModelList::Listed(_)),
            ConnectStep::Name | ConnectStep::Url => false,
        }
    }
}

impl App {
    pub(super) fn connect_step(&mut self, text: String) {
        let Some(mut c) = self.connect.take() else {
            return;
        };
        let value = text.trim().to_owned();
        match c.step {
            ConnectStep::Name if value.is_empty() => {}
            ConnectStep::Name => {
                c.name = value;
                c.step = ConnectStep::Url;
            }
            ConnectStep::Url
                if !(value.starts_with("http://") || value.starts_with("https://")) =>
            {
                self.error("the base URL must start with http:// or https://");
            }
            ConnectStep::Url => {
                c.url = value;
                c.step = ConnectStep::Key;
            }
            ConnectStep::Key => {
                let mut typed = hrns_core::secrets::Secrets::new();
                typed.add(&value);
                crate::host::redact::remember(&typed);
                c.key = value;
                if asks_skip_verify(&c.url) {
                    c.step = ConnectStep::SkipVerify;
                } else {
                    self.list_connect_models(&mut c);
                }
            }
            ConnectStep::SkipVerify => match yes_no(&value, false) {
                Some(skip) => {
                    c.skip_verify = skip;
                    self.list_connect_models(&mut c);
                }
                None => self.error("answer y or n (Enter for no)"),
            },
            ConnectStep::Model => {
                let listed: &[String] = match &c.models {
                    ModelList::Listed(models) => models,
                    ModelList::Listing | ModelList::Unavailable => &[],
                };
                if let Some(model) = pick_model(&value, listed) {
                    self.finish_connect(&c, model);
                    return;
                }
            }
        }
        self.connect = Some(c);
    }

    /// Asks the new provider's `/models` in the background (with the key and TLS setting just
    /// given); the answer arrives as [`Msg::ConnectModels`]. The model can be typed meanwhile.
    fn list_connect_models(&mut self, c: &mut Connect) {
        c.step = ConnectStep::Model;
        c.models = ModelList::Listing;
        let key = (!c.key.is_empty()).then(|| Secret::new(c.key.clone()));
        let client = Client::new(
            Provider::new(c.url.clone(), key),
            &ClientConfig {
                skip_verify: c.skip_verify,
                connect_timeout: Duration::from_secs(3),
                read_idle_timeout: LIST_TIMEOUT,
                ..ClientConfig::default()
            },
        );
        let tx = self.tx.clone();
        let url = c.url.clone();
        self.info(&format!("listing the models of {url}…"));
        tokio::spawn(async move {
            let result = match tokio::time::timeout(LIST_TIMEOUT, client.list_models()).await {
                Ok(Ok(models)) => Ok(models.into_iter().map(|m| m.id).collect()),
                Ok(Err(e)) => Err(e.to_string()),
                Err(_) => Err(format!("no answer within {} s", LIST_TIMEOUT.as_secs())),
            };
            let _ = tx.send(Msg::ConnectModels { url, result });
        });
    }

    /// The `/models` answer for `/connect`: a numbered list to pick from, or why the model is
    /// to be typed. An answer for a `/connect` that was cancelled or moved on is dropped.
    pub(super) fn connect_models(&mut self, url: &str, result: Result<Vec<String>, String>) {
        let Some(c) = self.connect.as_mut() else {
            return;
        };
        if c.step != ConnectStep::Model || c.url != url || c.models != ModelList::Listing {
            return;
        }
        match result {
            Ok(models) if !models.is_empty() => {
                let mut lines: Vec<Line> = models
                    .iter()
                    .take(SHOWN_MODELS)
                    .enumerate()
                    .map(|(i, m)| Line::plain(format!("  {:>2}. {m}", i + 1)))
                    .collect();
                if models.len() > SHOWN_MODELS {
                    lines.push(Line::plain(format!(
                        "  … and {} more (type a name)",
                        models.len() - SHOWN_MODELS
                    )));
                }
                c.models = ModelList::Listed(models);
                self.print(&lines);
            }
            Ok(_) => {
                c.models = ModelList::Unavailable;
                self.info("the provider lists no models; type the model's name");
            }
            Err(e) => {
                c.models = ModelList::Unavailable;
                self.error(&format!(
                    "could not list the models ({e}); type the model's name"
                ));
            }
        }
    }

    fn finish_connect(&mut self, c: &Connect, model: String) {
        let mut entry = hrns_core::config::ProviderEntry::new(c.url.clone());
        entry.key = (!c.key.is_empty()).then(|| c.key.clone());
        entry.model = Some(model.clone());
        entry.skip_verify = c.skip_verify;
        self.setup
            .file
            .config
            .upsert_provider(c.name.clone(), entry);
        self.switch_provider(&c.name, Some(&model));
    }
}
