//! Tool specs and the pure, IO-free parts of hrns's tools.
//!
//! A tool is described to the model by a [`ToolSpec`] and answers with a [`ToolOutput`]. The
//! drivers (blocking on std, async on tokio) do the IO — reading files, spawning processes,
//! fetching URLs — and call into this module for everything that is a decision or a format, so
//! both drivers behave the same and the logic can be tested without a file system:
//!
//! - [`builtin`]: names, JSON Schemas, argument types and limits of the built-in tools;
//! - [`args`]: decoding a tool call's JSON arguments, with errors the model can act on;
//! - [`edit`]: the exact-match replacement behind `edit_file`;
//! - [`glob`]: the glob patterns of `list_files`;
//! - [`truncate`]: head+tail truncation of text, and bounded capture of streaming output;
//! - [`page`]: a page of a text file, rendered from its bytes as they are read;
//! - [`path`]: lexical path normalisation and workspace confinement;
//! - [`render`]: the text the model sees for command, file, listing and fetch results;
//! - [`report`]: the text of file-system failures, write confirmations and other outcomes;
//! - [`url`]: the check that `web_fetch` makes before any network IO.
//! - [`files`]: how the file tools show paths and report file-system failures;
//! - [`fetch`]: which URLs `web_fetch` may fetch, and where redirects lead;
//! - [`skill`]: the instructions `load_skill` returns;
//! - [`Registry`]: tools by name, the toolbox of both drivers.
//!
//! Nothing here touches the file system, the network, processes or clocks.

use serde::{Deserialize, Serialize};

pub mod args;
pub mod builtin;
pub mod edit;
pub mod fetch;
pub mod files;
pub mod glob;
pub mod page;
pub mod path;
mod registry;
pub mod render;
pub mod report;
pub mod skill;
pub mod truncate;
pub mod url;

pub use registry::Registry;

/// What running a tool can do to the world, which decides whether it needs approval.
///
/// The session's approval policy maps each effect to "run" or "ask first"; the variants are
/// ordered here from harmless to most dangerous, but the policy decides, not the order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Only reads files or harness state and changes nothing, so it runs without asking.
    ReadOnly,
    /// Creates or changes files (inside the workspace); may need approval, since a bad write
    /// loses work.
    Write,
    /// Runs programs, which can do anything the user can; may need approval, and a cautious
    /// policy always asks.
    Exec,
    /// Talks to the network, which can leak data or pull in untrusted text; may need approval.
    Network,
}

/// A tool as offered to the model: its name, what it does and the arguments it takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls the tool by (`read_file`); unique within a session.
    pub name: String,
    /// What the tool does, written for the model: behaviour, limits and when to use it.
    pub description: String,
    /// The full JSON Schema of the arguments object (`{"type": "object", ...}`).
    pub parameters: serde_json::Value,
    /// What the tool can do to the world, for the approval policy.
    pub effect: Effect,
}

impl ToolSpec {
    /// Returns the entry for the `tools` array of an OpenAI chat request.
    ///
    /// The shape is `{"type": "function", "function": {"name", "description", "parameters"}}`;
    /// `effect` is hrns's own business and is not sent.
    pub fn to_wire(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }
}

/// What a tool returns: text for the model, and whether it is an error.
///
/// The model sees only `content`; `is_error` is for the UI and the logs (an error result is
/// still an ordinary tool message in the history, so the model can react to it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// The text the model sees.
    pub content: String,
    /// Whether the tool failed (bad arguments, missing file, non-zero exit, ...).
    pub is_error: bool,
}

impl ToolOutput {
    /// Returns a successful result with the given text.
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
        }
    }

    /// Returns a failed result whose text tells the model what went wrong.
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn effect_serialises_in_snake_case() {
        let all = [
            (Effect::ReadOnly, "\"read_only\""),
            (Effect::Write, "\"write\""),
            (Effect::Exec, "\"exec\""),
            (Effect::Network, "\"network\""),
        ];
        for (effect, text) in all {
            assert_eq!(serde_json::to_string(&effect).unwrap(), text);
            assert_eq!(serde_json::from_str::<Effect>(text).unwrap(), effect);
        }
        assert!(serde_json::from_str::<Effect>("\"ReadOnly\"").is_err());
    }

    #[test]
    fn to_wire_has_the_openai_shape_and_no_effect() {
        let spec = ToolSpec {
            name: "t".into(),
            description: "does t".into(),
            parameters: json!({"type": "object", "properties": {}}),
            effect: Effect::Exec,
        };
        assert_eq!(
            spec.to_wire(),
            json!({
                "type": "function",
                "function": {
                    "name": "t",
                    "description": "does t",
                    "parameters": {"type": "object", "properties": {}},
                }
            })
        );
    }

    #[test]
    fn tool_output_constructors_and_round_trip() {
        let ok = ToolOutput::ok("fine");
        let err = ToolOutput::error(String::from("bad"));
        assert!(!ok.is_error);
        assert!(err.is_error);
        let text = serde_json::to_string(&err).unwrap();
        assert_eq!(text, r#"{"content":"bad","is_error":true}"#);
        assert_eq!(serde_json::from_str::<ToolOutput>(&text).unwrap(), err);
    }
}
