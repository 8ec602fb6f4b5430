//! What the conversation has used and cost, and the `/status` report.
//!
//! A conversation may run in several sessions one after another (`/model`, `/provider` and
//! `/agent` start a new session on the same history), each at its own model's prices, so the
//! totals are kept as [`Spent`]: the tokens, and their cost when every session's model was
//! priced. A cost is never guessed: one unpriced session with tokens makes it unknown.

use super::text::{self, Color, Line, SpanStyle};
use super::view::format_tokens;
use hrns_core::pricing::{Pricing, format_cost};
use hrns_core::session::TokenTotals;

/// What tokens cost so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Cost {
    /// In the unit of the configured prices.
    Known(f64),
    /// Tokens were used at a model the config gives no prices for.
    Unknown,
}

/// Tokens used and what they cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spent {
    pub(crate) tokens: TokenTotals,
    pub(crate) cost: Cost,
}

impl Default for Spent {
    fn default() -> Self {
        Spent {
            tokens: TokenTotals::default(),
            cost: Cost::Known(0.0),
        }
    }
}

impl Spent {
    /// A session's tokens at `pricing` (none: unknown, unless nothing was used).
    pub(crate) fn of(tokens: TokenTotals, pricing: Option<Pricing>) -> Spent {
        let used = tokens.prompt + tokens.completion > 0;
        let cost = match pricing {
            Some(p) => Cost::Known(p.cost(tokens)),
            None if used => Cost::Unknown,
            None => Cost::Known(0.0),
        };
        Spent { tokens, cost }
    }

    /// Both together.
    pub(crate) fn plus(self, other: Spent) -> Spent {
        let cost = match (self.cost, other.cost) {
            (Cost::Known(a), Cost::Known(b)) => Cost::Known(a + b),
            (Cost::Unknown, _) | (_, Cost::Unknown) => Cost::Unknown,
        };
        Spent {
            tokens: self.tokens.plus(other.tokens),
            cost,
        }
    }

    /// All tokens, prompt and completion.
    pub(crate) fn total_tokens(&self) -> u64 {
        self.tokens.prompt + self.tokens.completion
    }
}

/// What the status line says of the cost: the figure while the model is priced, nothing when
/// no price is configured at all (the line is short; `/status` says why).
pub(crate) fn status_line_cost(spent: &Spent, priced: bool) -> Option<String> {
    match (spent.cost, priced) {
        (Cost::Known(c), true) => Some(format_cost(c)),
        (Cost::Known(c), false) if c > 0.0 => Some(format!("{}+?", format_cost(c))),
        (Cost::Unknown, true) => Some("cost ?".to_owned()),
        (Cost::Known(_) | Cost::Unknown, false) => None,
    }
}

/// What `/status` shows.
#[derive(Debug)]
pub(crate) struct Report<'a> {
    pub(crate) provider: &'a str,
    pub(crate) url: &'a str,
    pub(crate) model: &'a str,
    pub(crate) agent: &'a str,
    pub(crate) approval: &'a str,
    pub(crate) sandbox: &'a str,
    /// The estimated size of the next request, and the window when known.
    pub(crate) context: hrns_core::session::ContextUsage,
    pub(crate) spent: Spent,
    /// The current model's prices.
    pub(crate) pricing: Option<Pricing>,
}

const LABEL: SpanStyle = SpanStyle::PLAIN.dim();
const VALUE: SpanStyle = SpanStyle::fg(Color::Blue);

/// The `/status` lines, each fitting `width`.
pub(crate) fn report_lines(r: &Report<'_>, width: usize) -> Vec<Line> {
    let mut rows: Vec<(&str, String)> = vec![
        ("provider", format!("{} ({})", r.provider, r.url)),
        ("model", r.model.to_owned()),
        ("agent", r.agent.to_owned()),
        ("approval", r.approval.to_owned()),
        ("sandbox", r.sandbox.to_owned()),
    ];
    let context = match (r.context.window, r.context.percent()) {
        (Some(w), Some(p)) => format!(
            "about {} of {} tokens ({p}%)",
            format_tokens(r.context.tokens),
            format_tokens(w)
        ),
        _ => format!(
            "about {} tokens (window unknown: set \"contextWindow\" or use --context-window)",
            format_tokens(r.context.tokens)
        ),
    };
    rows.push(("context", context));
    let t = r.spent.tokens;
    let cached = if t.cached > 0 {
        format!(" ({} cached)", format_tokens(t.cached))
    } else {
        String::new()
    };
    rows.push((
        "tokens",
        format!(
            "{} prompt{cached} · {} completion",
            format_tokens(t.prompt),
            format_tokens(t.completion)
        ),
    ));
    let cost = match (r.spent.cost, r.pricing) {
        (Cost::Known(c), Some(p)) => format!("{} (at {})", format_cost(c), prices(&p)),
        (Cost::Known(c), None) => format!(
            "{} so far; unknown from now: the config gives no \"pricing\" for {}",
            format_cost(c),
            r.model
        ),
        (Cost::Unknown, Some(p)) => format!(
            "unknown: an earlier model of this conversation had no \"pricing\" (now at {})",
            prices(&p)
        ),
        (Cost::Unknown, None) => format!(
            "unknown: the config gives no \"pricing\" for {} (prices per million tokens)",
            r.model
        ),
    };
    rows.push(("cost", cost));
    let label_width = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0) + 2;
    let rest = Line::plain(" ".repeat(label_width));
    let mut out = Vec::new();
    for (label, value) in rows {
        let first = Line::styled(format!("{label:<label_width$}"), LABEL);
        let value = Line::styled(value, VALUE);
        out.extend(text::wrap_prefixed(&value, width, &first, &rest));
    }
    out
}

fn prices(p: &Pricing) -> String {
    let mut s = format!("{} in · {} out", p.input, p.output);
    if let Some(c) = p.cached_input {
        s.push_str(&format!(" · {c} cached"));
    }
    s.push_str(" per million tokens");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRICE: Pricing = Pricing {
        input: 2.5,
        output: 10.0,
        cached_input: Some(1.25),
    };

    fn tokens(prompt: u64, cached: u64, completion: u64) -> TokenTotals {
        TokenTotals {
            prompt,
            cached,
            completion,
        }
    }

    #[test]
    fn an_unpriced_session_with_tokens_makes_the_cost_unknown() {
        let priced = Spent::of(tokens(1_000_000, 0, 0), Some(PRICE));
        assert_eq!(priced.cost, Cost::Known(2.5));
        let unpriced = Spent::of(tokens(10, 0, 1), None);
        assert_eq!(priced.plus(unpriced).cost, Cost::Unknown);
        assert_eq!(unpriced.plus(priced).cost, Cost::Unknown);
        // An unpriced model that was never used costs nothing.
        let idle = Spent::of(TokenTotals::default(), None);
        assert_eq!(priced.plus(idle).cost, Cost::Known(2.5));
        assert_eq!(priced.plus(unpriced).total_tokens(), 1_000_011);
    }

    #[test]
    fn the_status_line_shows_a_cost_only_where_one_is_known_or_expected() {
        let priced = Spent::of(tokens(1000, 0, 100), Some(PRICE));
        assert_eq!(status_line_cost(&priced, true).as_deref(), Some("$0.0035"));
        assert_eq!(status_line_cost(&Spent::default(), false), None);
        assert_eq!(
            status_line_cost(&priced, false).as_deref(),
            Some("$0.0035+?")
        );
        let unknown = Spent::of(tokens(1, 0, 1), None);
        assert_eq!(status_line_cost(&unknown, true).as_deref(), Some("cost ?"));
    }

    fn report(spent: Spent, pricing: Option<Pricing>) -> Vec<String> {
        let r = Report {
            provider: "openai",
            url: "https://api.openai.com/v1",
            model: "gpt-4o",
            agent: "build",
            approval: "ask",
            sandbox: "workspace-write",
            context: hrns_core::session::ContextUsage {
                tokens: 12_300,
                window: Some(128_000),
            },
            spent,
            pricing,
        };
        report_lines(&r, 100).iter().map(Line::plain_text).collect()
    }

    #[test]
    fn status_names_everything_and_the_cost() {
        let spent = Spent::of(tokens(10_000, 2_000, 500), Some(PRICE));
        assert_eq!(
            report(spent, Some(PRICE)),
            [
                "provider  openai (https://api.openai.com/v1)",
                "model     gpt-4o",
                "agent     build",
                "approval  ask",
                "sandbox   workspace-write",
                "context   about 12.3k of 128.0k tokens (9%)",
                "tokens    10.0k prompt (2.0k cached) · 500 completion",
                "cost      $0.0275 (at 2.5 in · 10 out · 1.25 cached per million tokens)",
            ]
        );
        let unknown = report(Spent::of(tokens(10, 0, 5), None), None);
        assert_eq!(
            unknown.last().unwrap(),
            "cost      unknown: the config gives no \"pricing\" for gpt-4o (prices per million tokens)"
        );
    }
}
