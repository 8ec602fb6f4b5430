//! A cheap, incremental estimate of a request's prompt tokens, without a tokenizer.
//!
//! The provider reports `prompt_tokens` for every request it answers. The meter keeps the last
//! report as an anchor (that many tokens for that many bytes of request) and estimates a later
//! request as the anchor plus the bytes added since, converted with a bytes-per-token ratio
//! calibrated from the provider's own counts. Before the first report the ratio is
//! [`CONSERVATIVE_BYTES_PER_TOKEN`], low enough to over-count prose and code alike. Each
//! message is measured once, when it enters the history ([`message_bytes`]); an estimate is
//! O(1).

use crate::wire::{Content, Message};

/// Bytes per token assumed before the provider reported a count. English prose is about 4
/// bytes per token with current tokenizers, source code and JSON about 3 to 3.5; assuming 3
/// over-counts both, so the first threshold check errs on the side of compacting early.
pub const CONSERVATIVE_BYTES_PER_TOKEN: f64 = 3.0;

/// Bytes per token a report may imply to be believed. Outside these bounds the report is not a
/// count of this request (a proxy that leaves cached tokens out, a fixed placeholder, a
/// provider counting something else) and is ignored, so it cannot make the meter absurd.
const RATIO_BOUNDS: (f64, f64) = (1.0, 8.0);

/// Fixed framing a chat template adds around each message (role markers, separators).
const MESSAGE_OVERHEAD: usize = 8;

/// What a non-text content part (an image, audio) is counted as: providers charge several
/// hundred tokens for an image.
const NON_TEXT_PART_BYTES: usize = 3000;

/// The size in bytes a message adds to a request, for the estimate: its text, reasoning,
/// refusal, tool calls (id, name, arguments) and any provider fields it carries.
pub fn message_bytes(m: &Message) -> usize {
    let content = match &m.content {
        None => 0,
        Some(Content::Text(t)) => t.len(),
        Some(Content::Parts(parts)) => parts
            .iter()
            .map(|p| match p.get("text").and_then(|t| t.as_str()) {
                Some(t) => t.len(),
                None => NON_TEXT_PART_BYTES,
            })
            .sum(),
    };
    let calls: usize = m
        .tool_calls
        .iter()
        .map(|c| c.id.len() + c.function.name.len() + c.function.arguments.len() + 16)
        .sum();
    let extra = if m.extra.is_empty() {
        0
    } else {
        serde_json::to_string(&m.extra).map_or(0, |s| s.len())
    };
    MESSAGE_OVERHEAD
        + content
        + calls
        + extra
        + m.reasoning_content.as_ref().map_or(0, String::len)
        + m.refusal.as_ref().map_or(0, String::len)
        + m.tool_call_id.as_ref().map_or(0, String::len)
        + m.name.as_ref().map_or(0, String::len)
}

/// The last request the provider counted: this many bytes were this many tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Anchor {
    bytes: u64,
    tokens: u64,
}

/// Estimates prompt tokens from request bytes; see the module docs.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenMeter {
    bytes_per_token: f64,
    anchor: Option<Anchor>,
}

impl Default for TokenMeter {
    fn default() -> Self {
        TokenMeter {
            bytes_per_token: CONSERVATIVE_BYTES_PER_TOKEN,
            anchor: None,
        }
    }
}

impl TokenMeter {
    /// The estimated prompt tokens of a request of `bytes` bytes (as measured by the same
    /// method as the bytes passed to [`TokenMeter::observe`]).
    ///
    /// When the request grew since the last counted one, the count is the provider's plus the
    /// growth converted; when it shrank (pruned or compacted), the whole is converted.
    pub fn estimate(&self, bytes: u64) -> u64 {
        match self.anchor {
            Some(a) if bytes >= a.bytes => a.tokens + self.tokens_of(bytes - a.bytes),
            _ => self.tokens_of(bytes),
        }
    }

    /// The provider counted a request of `bytes` bytes as `prompt_tokens`: it becomes the
    /// anchor, and the ratio is recalibrated. A zero count, or one implying fewer than 1 or
    /// more than 8 bytes per token, is ignored.
    pub fn observe(&mut self, bytes: u64, prompt_tokens: u64) {
        if prompt_tokens == 0 || bytes == 0 {
            return;
        }
        let ratio = bytes as f64 / prompt_tokens as f64;
        if !(RATIO_BOUNDS.0..=RATIO_BOUNDS.1).contains(&ratio) {
            return;
        }
        self.anchor = Some(Anchor {
            bytes,
            tokens: prompt_tokens,
        });
        self.bytes_per_token = ratio;
    }

    /// The current bytes-per-token ratio.
    pub fn bytes_per_token(&self) -> f64 {
        self.bytes_per_token
    }

    /// How many bytes of request `tokens` tokens stand for (the inverse of the estimate, for
    /// budgets).
    pub fn bytes_for(&self, tokens: u64) -> u64 {
        (tokens as f64 * self.bytes_per_token) as u64
    }

    fn tokens_of(&self, bytes: u64) -> u64 {
        (bytes as f64 / self.bytes_per_token).ceil() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn conservative_before_any_report() {
        let m = TokenMeter::default();
        assert_eq!(m.estimate(0), 0);
        assert_eq!(m.estimate(3000), 1000);
        assert_eq!(m.estimate(3001), 1001);
    }

    #[test]
    fn anchored_after_a_report() {
        let mut m = TokenMeter::default();
        m.observe(40_000, 10_000);
        assert_eq!(m.bytes_per_token(), 4.0);
        assert_eq!(m.estimate(40_000), 10_000);
        assert_eq!(m.estimate(44_000), 11_000);
        // shrunk history: the ratio alone
        assert_eq!(m.estimate(4_000), 1_000);
        assert_eq!(m.bytes_for(100), 400);
    }

    #[test]
    fn absurd_reports_are_bounded_or_ignored() {
        let mut m = TokenMeter::default();
        m.observe(1000, 0);
        assert_eq!(m, TokenMeter::default());
        m.observe(1_000_000, 10);
        assert_eq!(
            m,
            TokenMeter::default(),
            "a placeholder count is not believed"
        );
        m.observe(10, 1_000);
        assert_eq!(m, TokenMeter::default());
        m.observe(8_000, 1_000);
        assert_eq!(m.bytes_per_token(), 8.0);
    }

    #[test]
    fn message_sizes_count_what_is_sent() {
        let mut m = Message::assistant("hello");
        let base = message_bytes(&m);
        m.reasoning_content = Some("think".into());
        assert_eq!(message_bytes(&m), base + 5);
        let parts: Message = serde_json::from_value(serde_json::json!({
            "role": "user",
            "content": [{"type":"text","text":"abc"}, {"type":"image_url","image_url":{"url":"data:"}}]
        }))
        .unwrap();
        assert_eq!(message_bytes(&parts), 8 + 3 + NON_TEXT_PART_BYTES);
    }

    proptest! {
        /// The estimate never decreases as a request grows, and equals the report at the anchor.
        #[test]
        fn monotone_and_exact_at_the_anchor(
            reports in proptest::collection::vec((1u64..1_000_000, 1u64..300_000), 0..4),
            a in 0u64..2_000_000, b in 0u64..2_000_000,
        ) {
            let mut m = TokenMeter::default();
            for (bytes, tokens) in &reports {
                m.observe(*bytes, *tokens);
            }
            let believed = reports.iter().rev().find(|(bytes, tokens)| {
                (1.0..=8.0).contains(&(*bytes as f64 / *tokens as f64))
            });
            if let Some((bytes, tokens)) = believed {
                prop_assert_eq!(m.estimate(*bytes), *tokens);
            }
            let (lo, hi) = (a.min(b), a.max(b));
            if believed.is_none_or(|(bytes, _)| lo >= *bytes || hi < *bytes) {
                prop_assert!(m.estimate(lo) <= m.estimate(hi));
            }
        }
    }
}
