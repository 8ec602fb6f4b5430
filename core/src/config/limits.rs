//! The limits of the config file: `maxAnswerBytes`, the cap on one answer's text, reasoning
//! and tool arguments together; `retryAttempts` and `retryMaxWait`, the retry budget of a
//! model request; `streamIdleTimeout`, how long a response may send no data.
//!
//! ```json
//! { "maxAnswerBytes": 67108864, "retryAttempts": 6, "retryMaxWait": 900, "streamIdleTimeout": 300 }
//! ```
//!
//! The keys live among the fields hrns keeps verbatim (`extra`), so files written by other
//! versions keep them.

use super::Config;
use crate::session::RetryPolicy;
use crate::stream::MAX_ANSWER_BYTES_KEY;
use serde_json::Value;
use std::time::Duration;

/// The key of the attempts per model request ([`RetryPolicy::max_attempts`]).
pub const RETRY_ATTEMPTS_KEY: &str = "retryAttempts";
/// The key of the longest `Retry-After` honoured, in seconds
/// ([`RetryPolicy::max_retry_after`]).
pub const RETRY_MAX_WAIT_KEY: &str = "retryMaxWait";
/// The most attempts accepted: more would only hide a provider that is down.
pub const MAX_RETRY_ATTEMPTS: u64 = 20;
/// The longest wait accepted, in seconds (a day).
pub const MAX_RETRY_MAX_WAIT: u64 = 24 * 60 * 60;

/// The key of the stream idle timeout, in seconds
/// ([`SessionConfig::stream_idle_timeout`](crate::session::SessionConfig::stream_idle_timeout)).
pub const STREAM_IDLE_TIMEOUT_KEY: &str = "streamIdleTimeout";
/// The longest stream idle timeout accepted, in seconds (a day).
pub const MAX_STREAM_IDLE_TIMEOUT: u64 = 24 * 60 * 60;

/// The smallest cap accepted: below it even short answers would fail.
pub const MIN_MAX_ANSWER_BYTES: u64 = 1024;

impl Config {
    /// The answer-size cap the file sets (`maxAnswerBytes`), `None` when it sets none (the
    /// default, [`DEFAULT_MAX_ANSWER_BYTES`](crate::stream::DEFAULT_MAX_ANSWER_BYTES),
    /// applies). A value that is not a whole number of bytes of at least
    /// [`MIN_MAX_ANSWER_BYTES`] is an error naming the key.
    pub fn max_answer_bytes(&self) -> Result<Option<usize>, String> {
        let Some(v) = self.extra.get(MAX_ANSWER_BYTES_KEY) else {
            return Ok(None);
        };
        v.as_u64()
            .filter(|n| *n >= MIN_MAX_ANSWER_BYTES)
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| {
                format!(
                    "`{MAX_ANSWER_BYTES_KEY}` must be a number of bytes (at least \
                     {MIN_MAX_ANSWER_BYTES}), not {v}"
                )
            })
    }

    /// The retry budget the file sets: [`RetryPolicy::default`] with `retryAttempts` (attempts
    /// per model request in all, 1 to [`MAX_RETRY_ATTEMPTS`]; 1 means no retry) and
    /// `retryMaxWait` (the longest `Retry-After` waited for, in whole seconds up to
    /// [`MAX_RETRY_MAX_WAIT`]; a provider asking for more fails the turn at once) where set.
    /// A value out of range or not a whole number is an error naming the key.
    pub fn retry_policy(&self) -> Result<RetryPolicy, String> {
        let mut policy = RetryPolicy::default();
        if let Some(v) = self.extra.get(RETRY_ATTEMPTS_KEY) {
            policy.max_attempts = whole(v, 1, MAX_RETRY_ATTEMPTS)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    format!(
                        "`{RETRY_ATTEMPTS_KEY}` must be a whole number of attempts from 1 to \
                         {MAX_RETRY_ATTEMPTS}, not {v}"
                    )
                })?;
        }
        if let Some(v) = self.extra.get(RETRY_MAX_WAIT_KEY) {
            let secs = whole(v, 0, MAX_RETRY_MAX_WAIT).ok_or_else(|| {
                format!(
                    "`{RETRY_MAX_WAIT_KEY}` must be a whole number of seconds from 0 to \
                     {MAX_RETRY_MAX_WAIT}, not {v}"
                )
            })?;
            policy.max_retry_after = Duration::from_secs(secs);
        }
        Ok(policy)
    }
}

impl Config {
    /// The stream idle timeout the file sets (`streamIdleTimeout`, whole seconds from 1 to
    /// [`MAX_STREAM_IDLE_TIMEOUT`]), `None` when it sets none (the default,
    /// [`DEFAULT_STREAM_IDLE_TIMEOUT`](crate::session::DEFAULT_STREAM_IDLE_TIMEOUT),
    /// applies). Anything else is an error naming the key.
    pub fn stream_idle_timeout(&self) -> Result<Option<Duration>, String> {
        let Some(v) = self.extra.get(STREAM_IDLE_TIMEOUT_KEY) else {
            return Ok(None);
        };
        whole(v, 1, MAX_STREAM_IDLE_TIMEOUT)
            .map(|secs| Some(Duration::from_secs(secs)))
            .ok_or_else(|| {
                format!(
                    "`{STREAM_IDLE_TIMEOUT_KEY}` must be a whole number of seconds from 1 to \
                     {MAX_STREAM_IDLE_TIMEOUT}, not {v}"
                )
            })
    }
}

/// `v` when it is a whole number from `min` to `max`.
fn whole(v: &Value, min: u64, max: u64) -> Option<u64> {
    v.as_u64().filter(|n| (min..=max).contains(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_idle_timeout_is_whole_seconds_from_one_to_a_day() {
        let idle = |text: &str| Config::parse(text).unwrap().stream_idle_timeout();
        assert_eq!(idle("{}"), Ok(None));
        assert_eq!(
            idle(r#"{"streamIdleTimeout": 1}"#),
            Ok(Some(Duration::from_secs(1)))
        );
        for bad in ["0", "1.5", "-3", "\"300\"", "86401", "null"] {
            let e = idle(&format!(r#"{{"streamIdleTimeout": {bad}}}"#)).unwrap_err();
            assert!(e.contains("`streamIdleTimeout`"), "{bad}: {e}");
        }
    }

    fn cap(text: &str) -> Result<Option<usize>, String> {
        Config::parse(text).unwrap().max_answer_bytes()
    }

    #[test]
    fn absent_set_and_wrong() {
        assert_eq!(cap("{}"), Ok(None));
        assert_eq!(
            cap(r#"{"maxAnswerBytes": 67108864}"#),
            Ok(Some(64 * 1024 * 1024))
        );
        assert_eq!(cap(r#"{"maxAnswerBytes": 1024}"#), Ok(Some(1024)));
        for bad in ["1023", "0", "-5", "1.5", "\"32MiB\"", "null", "[1]"] {
            let e = cap(&format!(r#"{{"maxAnswerBytes": {bad}}}"#)).unwrap_err();
            assert!(e.contains("`maxAnswerBytes`"), "{e}");
            assert!(e.contains("at least 1024"), "{e}");
        }
    }

    #[test]
    fn the_key_survives_a_round_trip() {
        let c = Config::parse(r#"{"maxAnswerBytes": 4096}"#).unwrap();
        let again = Config::parse(&c.to_json_pretty()).unwrap();
        assert_eq!(again.max_answer_bytes(), Ok(Some(4096)));
    }

    #[test]
    fn the_retry_budget_keys_set_attempts_and_the_longest_wait() {
        let policy = |text: &str| Config::parse(text).unwrap().retry_policy();
        assert_eq!(policy("{}"), Ok(RetryPolicy::default()));
        let set = policy(r#"{"retryAttempts": 1, "retryMaxWait": 900}"#).unwrap();
        assert_eq!(set.max_attempts, 1);
        assert_eq!(set.max_retry_after, Duration::from_secs(900));
        assert_eq!(set.base_delay, RetryPolicy::default().base_delay);
        let edges = policy(r#"{"retryAttempts": 20, "retryMaxWait": 0}"#).unwrap();
        assert_eq!(
            (edges.max_attempts, edges.max_retry_after),
            (20, Duration::ZERO)
        );
        assert_eq!(
            policy(r#"{"retryMaxWait": 86400}"#).map(|p| p.max_retry_after),
            Ok(Duration::from_secs(86400))
        );
        let hostile = [
            "0",
            "21",
            "-1",
            "1.5",
            "\"4\"",
            "null",
            "true",
            "[4]",
            "{}",
            "1e3",
            "18446744073709551615",
        ];
        for bad in hostile {
            let e = policy(&format!(r#"{{"retryAttempts": {bad}}}"#)).unwrap_err();
            assert!(
                e.contains("`retryAttempts`") && e.contains("from 1 to 20"),
                "{e}"
            );
        }
        for bad in ["-1", "86401", "0.5", "\"5m\"", "null", "1e9"] {
            let e = policy(&format!(r#"{{"retryMaxWait": {bad}}}"#)).unwrap_err();
            assert!(e.contains("`retryMaxWait`") && e.contains("seconds"), "{e}");
        }
        let c = Config::parse(r#"{"retryAttempts": 2, "retryMaxWait": 60}"#).unwrap();
        let again = Config::parse(&c.to_json_pretty()).unwrap();
        assert_eq!(
            again.retry_policy(),
            c.retry_policy(),
            "the keys survive a round trip"
        );
    }
}
