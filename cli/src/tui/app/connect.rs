//! `/connect`: adding a provider step by step (name, URL, hidden key, model).

use super::App;

/// Steps of `/connect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ConnectStep {
    Name,
    Url,
    Key,
    Model,
}

/// What `/connect` has been told so far.
pub(super) struct Connect {
    pub(super) step: ConnectStep,
    pub(super) name: String,
    pub(super) url: String,
    pub(super) key: String,
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
                crate::redact::remember(&typed);
                c.key = value;
                c.step = ConnectStep::Model;
            }
            ConnectStep::Model if value.is_empty() => {}
            ConnectStep::Model => {
                let mut entry = hrns_core::config::ProviderEntry::new(c.url.clone());
                entry.key = (!c.key.is_empty()).then(|| c.key.clone());
                entry.model = Some(value.clone());
                self.setup
                    .file
                    .config
                    .upsert_provider(c.name.clone(), entry);
                self.switch_provider(&c.name.clone(), Some(&value));
                return;
            }
        }
        self.connect = Some(c);
    }
}
