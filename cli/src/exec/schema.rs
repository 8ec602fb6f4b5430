//! JSON Schemas in `exec`: the user's `--output-schema` (read, checked as a schema, and used
//! to check answers) and the published schema of the `--json` event lines
//! (`--print-event-schema`).

use crate::setup::CliError;
use hrns_core::session::{OutputCheck, OutputSchema};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// The JSON Schema (draft 2020-12) of every `exec --json` line at the current
/// `schema_version`; `hrns exec --print-event-schema` prints it.
pub(crate) const EVENT_SCHEMA: &str = include_str!("event-schema.json");

/// The largest schema file read; a bigger one is refused rather than cut.
const MAX_SCHEMA_BYTES: u64 = 1024 * 1024;

/// Reads `--output-schema FILE`: JSON, a valid JSON Schema (any draft the file names; 2020-12
/// when it names none), with no `$ref` to anything outside it. Every failure is a usage error,
/// before anything is sent.
pub(crate) fn output_schema(path: &Path) -> Result<OutputSchema, CliError> {
    use std::io::Read;
    let shown = path.display();
    let bad = |what: String| CliError::usage(format!("--output-schema {shown}: {what}"));
    let file = std::fs::File::open(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let mut text = String::new();
    file.take(MAX_SCHEMA_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| bad(format!("cannot read it: {e}")))?;
    if text.len() as u64 > MAX_SCHEMA_BYTES {
        return Err(bad(format!(
            "larger than {} MiB; a schema that large is not one a model can follow",
            MAX_SCHEMA_BYTES / (1024 * 1024)
        )));
    }
    let schema: Value = serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let check =
        SchemaCheck::new(&schema).map_err(|e| bad(format!("not a valid JSON Schema: {e}")))?;
    Ok(OutputSchema::new(schema, Arc::new(check)))
}

/// Checks values against one compiled schema.
#[derive(Debug)]
pub(crate) struct SchemaCheck(jsonschema::Validator);

impl SchemaCheck {
    /// Compiles `schema`, checking it against its meta-schema first; the error says what is
    /// wrong where (a `$ref` outside the document cannot be resolved: nothing is fetched).
    pub(crate) fn new(schema: &Value) -> Result<SchemaCheck, String> {
        if !(schema.is_object() || schema.is_boolean()) {
            return Err(format!(
                "a schema is a JSON object (or true or false), not {}",
                crate::exec::output::one_line(&schema.to_string(), 40)
            ));
        }
        jsonschema::validator_for(schema)
            .map(SchemaCheck)
            .map_err(|e| at(e.instance_path().as_str(), &e.to_string()))
    }
}

impl OutputCheck for SchemaCheck {
    fn errors(&self, value: &Value) -> Vec<String> {
        self.0
            .iter_errors(value)
            .take(hrns_core::session::MAX_ERRORS_TOLD)
            .map(|e| at(e.instance_path().as_str(), &e.to_string()))
            .collect()
    }
}

/// An error with the JSON Pointer of where it is (`/items/0: …`); the root is `/`.
fn at(pointer: &str, message: &str) -> String {
    let pointer = if pointer.is_empty() { "/" } else { pointer };
    format!("{pointer}: {message}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_event_schema_is_a_valid_schema_of_the_current_version() {
        let schema: Value = serde_json::from_str(EVENT_SCHEMA).unwrap();
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        SchemaCheck::new(&schema).unwrap();
        assert_eq!(
            schema["$defs"]["schema_version"]["const"],
            hrns_core::session::EVENT_SCHEMA_VERSION,
            "the published schema describes the current version"
        );
    }

    #[test]
    fn answers_are_checked_with_where_and_what() {
        let check = SchemaCheck::new(&json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"]
        }))
        .unwrap();
        assert!(check.errors(&json!({"n": 1})).is_empty());
        let errors = check.errors(&json!({"n": "x"}));
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with("/n: "), "{errors:?}");
        assert!(check.errors(&json!([]))[0].starts_with("/: "));
    }

    #[test]
    fn bad_schemas_are_refused_and_nothing_is_fetched() {
        for bad in [
            json!({"type": "integer-ish"}),
            json!({"minimum": "three"}),
            json!("object"),
            json!({"$ref": "https://example.com/schema.json"}),
        ] {
            assert!(SchemaCheck::new(&bad).is_err(), "{bad}");
        }
    }
}
