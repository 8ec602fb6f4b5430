//! A JSON Schema the turn's final answer must match (`hrns exec --output-schema`): how it is
//! asked for, how an answer is read, and what the model is told when it missed.
//!
//! The session decides; checking a value against the schema is the caller's ([`OutputCheck`]),
//! so hrns-core needs no JSON Schema engine. The check is pure (no IO), so the same inputs
//! still give the same actions.

use serde_json::Value;
use std::sync::Arc;

/// The name the schema is sent under in `response_format.json_schema.name`.
pub const SCHEMA_NAME: &str = "final_answer";

/// How many validation errors the model (and the user, on failure) is told at most.
pub const MAX_ERRORS_TOLD: usize = 5;

/// Checks a value against the output schema. Implemented by the caller with a JSON Schema
/// validator; must not do IO.
pub trait OutputCheck: Send + Sync + std::fmt::Debug {
    /// Where `value` does not match the schema, one line per error (`/items/0: "x" is not of
    /// type "integer"`); empty when it matches.
    fn errors(&self, value: &Value) -> Vec<String>;
}

/// The schema of a turn's final answer, and its checker.
#[derive(Debug, Clone)]
pub struct OutputSchema {
    /// The JSON Schema, sent as it is in `response_format` (or in the system prompt).
    pub schema: Value,
    /// Checks an answer against `schema`.
    pub check: Arc<dyn OutputCheck>,
}

impl OutputSchema {
    /// The schema `schema`, checked by `check`.
    pub fn new(schema: Value, check: Arc<dyn OutputCheck>) -> Self {
        OutputSchema { schema, check }
    }

    /// The `response_format` field of a request.
    pub(crate) fn response_format(&self) -> Value {
        serde_json::json!({
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "schema": self.schema},
        })
    }

    /// The paragraph added to the system prompt when the provider does not take
    /// `response_format`.
    pub(crate) fn instruction(&self) -> String {
        format!(
            "When you give your final answer (the one without tool calls), write only a JSON \
             value that matches this JSON Schema: no other text, no Markdown code fence.\n{}",
            self.schema
        )
    }

    /// The answer's value when it matches; else the errors, at most [`MAX_ERRORS_TOLD`].
    /// A code fence around the JSON (` ```json … ``` `) is taken off first: models write one
    /// out of habit when the schema is only in the prompt.
    pub(crate) fn read(&self, answer: &str) -> Result<Value, Vec<String>> {
        let value: Value = serde_json::from_str(unfenced(answer)).map_err(|e| {
            vec![if answer.trim().is_empty() {
                "the answer is empty, not JSON".to_owned()
            } else {
                format!("the answer is not JSON: {e}")
            }]
        })?;
        let mut errors = self.check.errors(&value);
        if errors.is_empty() {
            return Ok(value);
        }
        errors.truncate(MAX_ERRORS_TOLD);
        Err(errors)
    }
}

/// What the model is told when its answer missed the schema: the errors, and to answer again.
pub(crate) fn retry_message(errors: &[String]) -> String {
    let mut text =
        String::from("Your final answer does not match the JSON Schema it must follow:\n");
    for e in errors {
        text.push_str("- ");
        text.push_str(e);
        text.push('\n');
    }
    text.push_str(
        "Answer again with only a JSON value that matches the schema: no other text, no code fence.",
    );
    text
}

/// `text` without surrounding white space and one Markdown code fence around it.
fn unfenced(text: &str) -> &str {
    let t = text.trim();
    let Some(inner) = t.strip_prefix("```").and_then(|r| r.strip_suffix("```")) else {
        return t;
    };
    // The info string (`json`) runs to the end of the fence's first line.
    match inner.split_once('\n') {
        Some((info, body)) if !info.contains(['{', '[', '"']) => body.trim(),
        _ => inner.trim(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Objects must have `n`, an integer.
    #[derive(Debug)]
    struct NeedsN;

    impl OutputCheck for NeedsN {
        fn errors(&self, value: &Value) -> Vec<String> {
            if value.get("n").is_some_and(Value::is_i64) {
                Vec::new()
            } else {
                (0..9).map(|i| format!("error {i}")).collect()
            }
        }
    }

    fn schema() -> OutputSchema {
        OutputSchema::new(json!({"type": "object"}), Arc::new(NeedsN))
    }

    #[test]
    fn answers_are_read_with_or_without_a_fence() {
        let s = schema();
        for answer in [
            "{\"n\": 1}",
            "  {\"n\": 1}\n",
            "```json\n{\"n\": 1}\n```",
            "```\n{\"n\": 1}\n```",
            "```{\"n\": 1}```",
        ] {
            assert_eq!(s.read(answer), Ok(json!({"n": 1})), "{answer:?}");
        }
    }

    #[test]
    fn misses_say_why_and_are_capped() {
        let s = schema();
        assert_eq!(s.read("{\"n\": \"x\"}").unwrap_err().len(), MAX_ERRORS_TOLD);
        let prose = s.read("Here is the answer: 1").unwrap_err();
        assert!(prose[0].starts_with("the answer is not JSON"), "{prose:?}");
        assert_eq!(s.read("  ").unwrap_err(), ["the answer is empty, not JSON"]);
        assert!(s.read("```json\n{\"n\": 1}").is_err(), "an unclosed fence");
        let told = retry_message(&["/n: \"x\" is not an integer".into()]);
        assert!(told.contains("- /n: \"x\" is not an integer\n"), "{told}");
    }
}
