//! Retry timing: exponential backoff with seeded jitter, and the provider's `Retry-After`.

use super::config::RetryPolicy;
use std::time::{Duration, SystemTime};

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
/// `Retry-After` (seconds, or an HTTP date).
///
/// RFC 9110, section 10.2.3: "Retry-After = HTTP-date / delay-seconds". The date form needs
/// the wall time, which the core has no clock for: the driver hands it in as `wall` with the
/// response head. Without it (or with a date that does not parse) the date is ignored and
/// backoff applies; a date in the past means "now".
pub(crate) fn retry_after<'a>(
    headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    wall: Option<SystemTime>,
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
            secs = parse_non_negative(value)
                .map(Duration::from_secs_f64)
                .or_else(|| wall.and_then(|wall| until_date(value, wall)));
        }
    }
    millis.or(secs)
}

/// How long from `wall` until the HTTP date `value` (IMF-fixdate, or the obsolete RFC 850 and
/// asctime forms a recipient must accept); zero for a date already past, `None` for text
/// that is not a date.
fn until_date(value: &str, wall: SystemTime) -> Option<Duration> {
    let date = httpdate::parse_http_date(value.trim()).ok()?;
    Some(date.duration_since(wall).unwrap_or(Duration::ZERO))
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
            retry_after(h(&[("Retry-After", "3")]), None),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            retry_after(h(&[("retry-after", " 1.5 ")]), None),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            retry_after(h(&[("retry-after", "3"), ("retry-after-ms", "250")]), None),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            retry_after(h(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]), None),
            None,
            "a date needs the wall time"
        );
        for bad in ["-1", "NaN", "1e300", "", "soon"] {
            assert_eq!(retry_after(h(&[("retry-after", bad)]), None), None, "{bad}");
            assert_eq!(retry_after(h(&[("retry-after", bad)]), Some(wall())), None);
        }
        assert_eq!(retry_after(h(&[("x", "1")]), None), None);
        assert_eq!(
            retry_after([("retry-after", &[0xff, 0xfe][..])], None),
            None
        );
    }

    /// Wed, 21 Oct 2015 07:28:00 GMT.
    fn wall() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480)
    }

    #[test]
    fn http_dates_count_from_the_wall_time_handed_in() {
        let at = |v: &str| retry_after(h(&[("Retry-After", v)]), Some(wall()));
        assert_eq!(
            at("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO),
            "now"
        );
        assert_eq!(
            at("Wed, 21 Oct 2015 08:28:00 GMT"),
            Some(Duration::from_secs(3600))
        );
        assert_eq!(
            at(" Wed, 21 Oct 2015 07:28:30 GMT "),
            Some(Duration::from_secs(30))
        );
        // The obsolete forms a recipient must still accept (RFC 9110, section 5.6.7).
        assert_eq!(
            at("Wednesday, 21-Oct-15 07:29:00 GMT"),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            at("Wed Oct 21 07:30:00 2015"),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            at("Tue, 20 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO),
            "past"
        );
        // Seconds win over nothing else; `retry-after-ms` wins over a date.
        assert_eq!(
            retry_after(
                h(&[
                    ("retry-after", "Wed, 21 Oct 2015 08:28:00 GMT"),
                    ("retry-after-ms", "5")
                ]),
                Some(wall())
            ),
            Some(Duration::from_millis(5))
        );
        for malformed in [
            "Wed, 21 Oct 2015 07:28:00",
            "Wed, 32 Oct 2015 07:28:00 GMT",
            "Wed, 21 Foo 2015 07:28:00 GMT",
            "Wed, 21 Oct 2015 25:28:00 GMT",
            "Wed, 21 Oct 15 07:28:00 GMT",
            "21 Oct 2015 07:28:00 GMT",
            "Wed, 21 Oct 2015 07:28:00 GMT; and more",
            "Wed, 21 Oct 2015 07:28:00 GMTWed, 21 Oct 2015 07:28:00 GMT",
        ] {
            assert_eq!(at(malformed), None, "{malformed}");
        }
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
