//! Saving what hrns learned about a provider (its [quirks](hrns_core::quirks)) to the config,
//! so that later sessions do not pay for the same rejection again.

use crate::setup::{CliError, ConfigFile};
use hrns_core::quirks::ProviderQuirks;
use hrns_core::session::Event;
use std::path::PathBuf;

/// What saving quirks did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Saved {
    /// The config now holds these keys for the provider.
    Written(Vec<String>),
    /// The config already held them.
    Unchanged,
    /// The provider has no entry in the config (it came from environment variables).
    NoEntry,
}

/// Where a run's provider lives in the config.
#[derive(Debug, Clone)]
pub(crate) struct QuirkStore {
    /// The config file (re-read before each save, so edits made meanwhile are kept).
    pub(crate) path: PathBuf,
    /// The provider's name in it.
    pub(crate) provider: String,
}

impl QuirkStore {
    /// Replaces the provider's quirks with `quirks`.
    pub(crate) fn save(&self, quirks: ProviderQuirks) -> Result<Saved, CliError> {
        self.update(|_| Some(quirks))
    }

    /// Learns from a session event: an `OptionDropped` for a field hrns adds on its own is
    /// saved as a quirk. Returns what was saved, or `None` for other events.
    pub(crate) fn observe(&self, event: &Event) -> Option<Result<Saved, CliError>> {
        let Event::OptionDropped { field, .. } = event else {
            return None;
        };
        Some(self.update(|old| old.learn_dropped(field)))
    }

    fn update(
        &self,
        change: impl FnOnce(ProviderQuirks) -> Option<ProviderQuirks>,
    ) -> Result<Saved, CliError> {
        // No config file: the provider came from environment variables, and nothing names it
        // anywhere to save to (loading the absent path as an explicit one would be an error).
        if !self.path.exists() {
            return Ok(Saved::NoEntry);
        }
        let mut file = ConfigFile::load(Some(&self.path))?;
        let Some(entry) = file.config.providers.get(&self.provider) else {
            return Ok(Saved::NoEntry);
        };
        let old = entry.quirks;
        let Some(new) = change(old).filter(|n| *n != old) else {
            return Ok(Saved::Unchanged);
        };
        file.config.set_quirks(&self.provider, new);
        file.save()?;
        Ok(Saved::Written(
            new.to_keys()
                .into_iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect(),
        ))
    }
}
