//! Retry timing: exponential backoff with seeded jitter, and the provider's `Retry-After`.

use super::config::RetryPolicy;
use std::time::Duration;

/// Statuses worth another attempt: rate limits, server errors, overload (529).
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504 | 529)
}

/// A small deterministic generator (SplitMix64): the same seed gives the same delays, which
/// replay and tests rely on.
#[derive(Debug, Clone)]
pub(crate) struct Jitter(u64);

impl Jitter {
    pub(crate) fn new(seed: u64) -> Self {
        Jitter(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The delay before retry number `retry` (1 for the first retry): half of the
    /// exponential delay plus a random part of the other half ("equal jitter"), so that
    /// many clients do not retry in step.
    pub(crate) fn backoff(&mut self, policy: &RetryPolicy, retry: u32) -> Duration {
        let factor = 1u32
            .checked_shl(retry.saturating_sub(1))
            .unwrap_or(u32::MAX);
        let exp = policy
            .base_delay
            .saturating_mul(factor)
            .min(policy.max_delay);
        let half = exp / 2;
        let nanos = half.as_nanos() as u64;
        let extra = if nanos == 0 {
            0
        } else {
            self.next() % (nanos + 1)
        };
        half + Duration::from_nanos(extra)
    }
}

/// The delay a provider asks for, from `retry-after-ms` (milliseconds, OpenAI) or
/// `Retry-After` (seconds). The HTTP-date form of `Retry-After` needs a wall clock, which the
/// core does not have, so it is ignored and backoff applies.
pub(crate) fn retry_after<'a>(
    headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Option<Duration> {
    let mut secs = None;
    let mut millis = None;
    for (name, value) in headers {
        let Ok(value) = std::str::from_utf8(value) else {
            continue;
        };
        if name.eq_ignore_ascii_case("retry-after-ms") {
            millis = parse_non_negative(value).map(|ms| Duration::from_secs_f64(ms / 1000.0));
        } else if name.eq_ignore_ascii_case("retry-after") {
            secs = parse_non_negative(value).map(Duration::from_secs_f64);
        }
    }
    millis.or(secs)
}

fn parse_non_negative(value: &str) -> Option<f64> {
    let v: f64 = value.trim().parse().ok()?;
    (0.0..1e9).contains(&v).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Iterator<Item = (&'a str, &'a [u8])> {
        pairs.iter().map(|(n, v)| (*n, v.as_bytes()))
    }

    #[test]
    fn retry_after_variants() {
        assert_eq!(
            retry_after(h(&[("Retry-After", "3")])),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            retry_after(h(&[("retry-after", " 1.5 ")])),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            retry_after(h(&[("retry-after", "3"), ("retry-after-ms", "250")])),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            retry_after(h(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")])),
            None
        );
        assert_eq!(retry_after(h(&[("retry-after", "-1")])), None);
        assert_eq!(retry_after(h(&[("retry-after", "NaN")])), None);
        assert_eq!(retry_after(h(&[("retry-after", "1e300")])), None);
        assert_eq!(retry_after(h(&[("x", "1")])), None);
        assert_eq!(retry_after([("retry-after", &[0xff, 0xfe][..])]), None);
    }

    #[test]
    fn backoff_grows_is_bounded_and_deterministic() {
        let policy = RetryPolicy::default();
        let mut a = Jitter::new(7);
        let mut b = Jitter::new(7);
        for retry in 1..=40 {
            let d = a.backoff(&policy, retry);
            assert_eq!(d, b.backoff(&policy, retry));
            let exp = policy
                .base_delay
                .saturating_mul(1 << (retry - 1).min(20))
                .min(policy.max_delay);
            assert!(d >= exp / 2 && d <= exp, "retry {retry}: {d:?}");
        }
        assert_ne!(
            Jitter::new(1).backoff(&policy, 3),
            Jitter::new(2).backoff(&policy, 3)
        );
    }

    #[test]
    fn retryable_statuses() {
        for s in [429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(s));
        }
        for s in [200, 400, 401, 403, 404, 413, 422, 501] {
            assert!(!is_retryable_status(s));
        }
    }
}
