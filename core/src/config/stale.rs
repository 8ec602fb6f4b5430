//! Repairing saved choices that no longer name anything, as the original hrns does: a
//! `currentAgent` whose agent file was deleted, a `currentProvider` that was renamed. Without
//! this every command would fail until the user edits the file by hand.

use super::Config;
use std::fmt;

/// Which saved choice was stale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChoiceKind {
    /// `currentProvider`.
    Provider,
    /// `currentAgent`.
    Agent,
}

/// A saved choice that named nothing, and what replaced it. Its `Display` is the warning to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleChoice {
    /// Which choice.
    pub kind: ChoiceKind,
    /// The name that was saved.
    pub stale: String,
    /// The name now saved instead.
    pub replacement: String,
    /// The names that exist.
    pub available: Vec<String>,
}

impl fmt::Display for StaleChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (key, what) = match self.kind {
            ChoiceKind::Provider => ("currentProvider", "provider"),
            ChoiceKind::Agent => ("currentAgent", "agent"),
        };
        write!(
            f,
            "the config's {key} `{}` is not a known {what} (available: {}); using `{}` and \
             saving it as {key}",
            self.stale,
            self.available.join(", "),
            self.replacement
        )
    }
}

impl Config {
    /// Replaces a `currentProvider` that names no configured provider with the first configured
    /// one (by name). Does nothing when it is unset, matches (ignoring case), or no provider is
    /// configured (then resolution reports the problem).
    pub fn repair_current_provider(&mut self) -> Option<StaleChoice> {
        let stale = self.current_provider.as_deref()?.trim();
        if stale.is_empty() || self.find(stale).is_some() {
            return None;
        }
        let available = self.provider_names();
        let replacement = available.first()?.clone();
        let stale = stale.to_owned();
        self.current_provider = Some(replacement.clone());
        Some(StaleChoice {
            kind: ChoiceKind::Provider,
            stale,
            replacement,
            available,
        })
    }

    /// Replaces a `currentAgent` that is none of `available` (compared ignoring case) with
    /// `default`.
    pub fn repair_current_agent(
        &mut self,
        available: &[String],
        default: &str,
    ) -> Option<StaleChoice> {
        let stale = self.current_agent.as_deref()?.trim();
        if stale.is_empty() || available.iter().any(|a| a.eq_ignore_ascii_case(stale)) {
            return None;
        }
        let stale = stale.to_owned();
        self.current_agent = Some(default.to_owned());
        Some(StaleChoice {
            kind: ChoiceKind::Agent,
            stale,
            replacement: default.to_owned(),
            available: available.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ProviderEntry;

    fn config(current_provider: Option<&str>, current_agent: Option<&str>) -> Config {
        let mut c = Config::default();
        c.upsert_provider("beta", ProviderEntry::new("http://b/v1"));
        c.upsert_provider("alpha", ProviderEntry::new("http://a/v1"));
        c.current_provider = current_provider.map(Into::into);
        c.current_agent = current_agent.map(Into::into);
        c
    }

    #[test]
    fn stale_provider_falls_back_to_the_first_configured() {
        let mut c = config(Some("gone"), None);
        let repair = c.repair_current_provider().unwrap();
        assert_eq!(c.current_provider.as_deref(), Some("alpha"));
        assert_eq!(repair.stale, "gone");
        let text = repair.to_string();
        assert!(
            text.contains("`gone`") && text.contains("alpha, beta"),
            "{text}"
        );
        assert_eq!(c.repair_current_provider(), None, "repaired once");
        for fine in [Some("BETA"), None, Some(" ")] {
            let mut c = config(fine, None);
            assert_eq!(c.repair_current_provider(), None, "{fine:?}");
        }
        let mut none = Config {
            current_provider: Some("gone".into()),
            ..Config::default()
        };
        assert_eq!(
            none.repair_current_provider(),
            None,
            "nothing to fall back to"
        );
    }

    #[test]
    fn stale_agent_falls_back_to_the_default() {
        let agents = ["Builder".to_owned(), "Pirate".to_owned()];
        let mut c = config(None, Some("Reviewer"));
        let repair = c.repair_current_agent(&agents, "Builder").unwrap();
        assert_eq!(c.current_agent.as_deref(), Some("Builder"));
        assert_eq!(repair.kind, ChoiceKind::Agent);
        assert!(repair.to_string().contains("Builder, Pirate"));
        let mut ok = config(None, Some("pirate"));
        assert_eq!(ok.repair_current_agent(&agents, "Builder"), None);
    }
}
