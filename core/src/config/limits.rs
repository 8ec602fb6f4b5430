//! The limits of the config file: `maxAnswerBytes`, the cap on one answer's text, reasoning
//! and tool arguments together.
//!
//! ```json
//! { "maxAnswerBytes": 67108864 }
//! ```
//!
//! The key lives among the fields hrns keeps verbatim (`extra`), so files written by other
//! versions keep it.

use super::Config;
use crate::stream::MAX_ANSWER_BYTES_KEY;

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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
