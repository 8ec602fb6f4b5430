//! What tokens cost: the prices the config gives for a model, and the cost of the tokens a
//! session or a turn used.
//!
//! hrns has no built-in price list: prices differ between providers for the same model and
//! change often, so a figure hrns made up would be wrong without anyone noticing. A model
//! without a configured price has an unknown cost, and front ends say so.
//!
//! The config holds prices per million tokens, per model, at the top level or under a
//! provider (which wins, since the same model costs differently at different providers):
//!
//! ```json
//! {
//!   "pricing": { "gpt-4o": { "input": 2.5, "output": 10, "cachedInput": 1.25 } },
//!   "providers": { "router": { "url": "…", "pricing": { "gpt-4o": { "input": 3, "output": 12 } } } }
//! }
//! ```

use crate::config::{Config, ProviderEntry};
use crate::session::TokenTotals;
use crate::wire::{Extra, Usage};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The config key holding prices, at the top level and in a provider.
pub const PRICING_KEY: &str = "pricing";

/// A model's prices, per million tokens, in the unit the user wrote them in (usually USD).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pricing {
    /// Prompt tokens (`input`).
    pub input: f64,
    /// Completion tokens, reasoning included (`output`).
    pub output: f64,
    /// Prompt tokens the provider served from its cache (`cachedInput`); when absent they
    /// cost the `input` price.
    #[serde(rename = "cachedInput", default)]
    pub cached_input: Option<f64>,
}

/// Why the `pricing` of the config cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PricingError {
    /// The value does not have the expected shape (a typo in a key, a price as a string).
    #[error(
        "{place}: {message}; write \"pricing\": {{\"MODEL\": {{\"input\": 2.5, \"output\": 10, \"cachedInput\": 1.25}}}} (prices per million tokens)"
    )]
    Invalid {
        /// Where: `pricing` or `providers.NAME.pricing`.
        place: String,
        /// What serde found wrong.
        message: String,
    },
    /// A price is negative, infinite or not a number.
    #[error("{place}.{model}: the price {price} is not a number of zero or more")]
    BadPrice {
        /// Where: `pricing` or `providers.NAME.pricing`.
        place: String,
        /// The model whose price it is.
        model: String,
        /// The price as written.
        price: String,
    },
}

/// The prices the config gives for `model` at the provider `provider` (a provider's own
/// `pricing` first, then the top-level one); `None` when neither names the model.
pub fn pricing_for(
    config: &Config,
    provider: &str,
    model: &str,
) -> Result<Option<Pricing>, PricingError> {
    if let Some(entry) = config.providers.get(provider) {
        let place = format!("providers.{provider}.{PRICING_KEY}");
        if let Some(p) = table(&entry.extra, &place)?.remove(model) {
            return Ok(Some(p));
        }
    }
    Ok(table(&config.extra, PRICING_KEY)?.remove(model))
}

/// Checks every `pricing` of the config, so that a mistake is reported when the config is
/// read rather than when a cost is first shown.
pub fn check(config: &Config) -> Result<(), PricingError> {
    table(&config.extra, PRICING_KEY)?;
    for (name, entry) in &config.providers {
        provider_table(name, entry)?;
    }
    Ok(())
}

fn provider_table(
    name: &str,
    entry: &ProviderEntry,
) -> Result<BTreeMap<String, Pricing>, PricingError> {
    table(&entry.extra, &format!("providers.{name}.{PRICING_KEY}"))
}

fn table(extra: &Extra, place: &str) -> Result<BTreeMap<String, Pricing>, PricingError> {
    let Some(value) = extra.get(PRICING_KEY) else {
        return Ok(BTreeMap::new());
    };
    let table: BTreeMap<String, Pricing> =
        serde_json::from_value(value.clone()).map_err(|e| PricingError::Invalid {
            place: place.to_owned(),
            message: e.to_string(),
        })?;
    for (model, p) in &table {
        for price in [Some(p.input), Some(p.output), p.cached_input]
            .into_iter()
            .flatten()
        {
            if !price.is_finite() || price < 0.0 {
                return Err(PricingError::BadPrice {
                    place: place.to_owned(),
                    model: model.clone(),
                    price: price.to_string(),
                });
            }
        }
    }
    Ok(table)
}

impl Pricing {
    /// The cost of `tokens`: cached prompt tokens at the cached price, the other prompt
    /// tokens at the input price, completion tokens at the output price.
    pub fn cost(&self, tokens: TokenTotals) -> f64 {
        let cached = tokens.cached.min(tokens.prompt);
        let fresh = tokens.prompt - cached;
        let per_token = |price: f64| price / 1_000_000.0;
        fresh as f64 * per_token(self.input)
            + cached as f64 * per_token(self.cached_input.unwrap_or(self.input))
            + tokens.completion as f64 * per_token(self.output)
    }

    /// The cost of one reported usage (a turn's, say).
    pub fn cost_of(&self, usage: &Usage) -> f64 {
        let mut totals = TokenTotals::default();
        totals.add(usage);
        self.cost(totals)
    }
}

/// The prompt tokens a usage says were served from the provider's cache: OpenAI's
/// `prompt_tokens_details.cached_tokens`, or DeepSeek's `prompt_cache_hit_tokens`.
pub fn cached_tokens(usage: &Usage) -> Option<u64> {
    usage
        .extra
        .get("prompt_tokens_details")
        .and_then(|d| d.get("cached_tokens"))
        .or_else(|| usage.extra.get("prompt_cache_hit_tokens"))
        .and_then(serde_json::Value::as_u64)
}

/// A cost for people: `$0.0123` below a dollar (four places), `$12.35` above. The unit is the
/// one the prices were written in; `$` is what nearly every price list uses.
pub fn format_cost(cost: f64) -> String {
    if cost < 1.0 {
        format!("${cost:.4}")
    } else {
        format!("${cost:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(v: serde_json::Value) -> Config {
        Config::parse(&v.to_string()).unwrap()
    }

    #[test]
    fn a_provider_price_wins_over_the_top_level_one() {
        let c = config(json!({
            "pricing": {"m": {"input": 1, "output": 2}},
            "providers": {"p": {"url": "http://x", "pricing": {"m": {"input": 3, "output": 4, "cachedInput": 0.5}}}}
        }));
        assert_eq!(
            pricing_for(&c, "p", "m").unwrap(),
            Some(Pricing {
                input: 3.0,
                output: 4.0,
                cached_input: Some(0.5)
            })
        );
        assert_eq!(pricing_for(&c, "other", "m").unwrap().unwrap().input, 1.0);
        assert_eq!(pricing_for(&c, "p", "unpriced").unwrap(), None);
        assert!(check(&c).is_ok());
    }

    #[test]
    fn mistakes_are_named() {
        let typo = config(json!({"pricing": {"m": {"input": 1, "ouput": 2}}}));
        let e = pricing_for(&typo, "p", "m").unwrap_err();
        assert!(e.to_string().contains("ouput"), "{e}");
        assert!(e.to_string().starts_with("pricing:"), "{e}");
        let negative = config(
            json!({"providers": {"p": {"url": "u", "pricing": {"m": {"input": -1, "output": 2}}}}}),
        );
        let e = check(&negative).unwrap_err();
        assert_eq!(
            e.to_string(),
            "providers.p.pricing.m: the price -1 is not a number of zero or more"
        );
        let string = config(json!({"pricing": {"m": {"input": "2.5", "output": 2}}}));
        assert!(matches!(check(&string), Err(PricingError::Invalid { .. })));
        let not_a_map = config(json!({"pricing": 3}));
        assert!(check(&not_a_map).is_err());
    }

    #[test]
    fn cost_counts_cached_tokens_at_their_price() {
        let p = Pricing {
            input: 2.5,
            output: 10.0,
            cached_input: Some(1.25),
        };
        let t = TokenTotals {
            prompt: 1_000_000,
            cached: 400_000,
            completion: 100_000,
        };
        // 600k × 2.5 + 400k × 1.25 + 100k × 10, per million.
        assert!((p.cost(t) - (1.5 + 0.5 + 1.0)).abs() < 1e-9);
        let no_cache_price = Pricing {
            cached_input: None,
            ..p
        };
        assert!((no_cache_price.cost(t) - (2.5 + 1.0)).abs() < 1e-9);
        // A provider reporting more cached than prompt tokens is not trusted past the prompt.
        let odd = TokenTotals {
            prompt: 10,
            cached: 50,
            completion: 0,
        };
        assert!((p.cost(odd) - 10.0 * 1.25 / 1e6).abs() < 1e-12);
    }

    #[test]
    fn cached_tokens_from_either_dialect() {
        let u: Usage = serde_json::from_value(json!({
            "prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 4}
        }))
        .unwrap();
        assert_eq!(cached_tokens(&u), Some(4));
        let u: Usage = serde_json::from_value(json!({
            "prompt_tokens": 10, "prompt_cache_hit_tokens": 6
        }))
        .unwrap();
        assert_eq!(cached_tokens(&u), Some(6));
        assert_eq!(cached_tokens(&Usage::default()), None);
    }

    #[test]
    fn costs_read_well() {
        assert_eq!(format_cost(0.0), "$0.0000");
        assert_eq!(format_cost(0.01234), "$0.0123");
        assert_eq!(format_cost(12.345), "$12.35");
    }
}
