//! Tool specs and the pure, IO-free parts of hrns's tools.
//!
//! A tool is described to the model by a [`ToolSpec`] and answers with a [`ToolOutput`]. The
//! drivers (blocking on std, async on tokio) do the IO — reading files, spawning processes,
//! fetching URLs — and call into this module for everything that is a decision or a format, so
//! both drivers behave the same and the logic can be tested without a file system:
//!
//! - [`builtin`]: names, JSON Schemas, argument types and limits of the built-in tools;
//! - [`args`]: decoding a tool call's JSON arguments, with errors the model can act on;
//! - [`path`]: lexical path normalisation, workspace confinement, and the symbolic-link walk
//!   of writes ([`path::WriteTarget`]);
//! - [`files`]: the decisions and texts of the file tools (kinds, sizes, file-system
//!   failures, confirmations, the edit of `edit_file`, the listing of `list_files`);
//! - [`page`]: a page of a text file, rendered from its bytes as they are read;
//! - [`glob`]: the glob patterns of `list_files`;
//! - [`edit`]: the exact-match replacement behind `edit_file`;
//! - [`truncate`]: head+tail truncation of text, and bounded capture of streaming output;
//! - [`render`]: the text the model sees for command, file, listing and fetch results;
//! - [`fetch`]: which URLs `web_fetch` may fetch, where redirects lead, and its failures;
//! - [`Registry`]: tools by name, the toolbox of both drivers.
//!
//! `load_skill` answers with [`crate::skill::load_skill`].
//!
//! Nothing here touches the file system, the network, processes or clocks.
//!
//! # The built-in tools
//!
//! What both drivers' tools do, so that a session behaves the same under either:
//!
//! - Every tool decodes its arguments with [`args::decode_args`]; mistakes are error results
//!   that name the tool and the argument. Failures are results, never panics.
//! - `read_file` resolves its path against the workspace root without confining it (reads may
//!   look anywhere the user can read). It looks before it opens: directories and special
//!   files (devices, pipes, sockets) are refused ([`files::require_file`]). The file is
//!   streamed through [`page::TextPager`], so a page of a file of any size costs memory for
//!   the page only (the whole file is read, to count its lines); a file whose first
//!   [`page::BINARY_SNIFF_BYTES`] look binary is refused, later invalid UTF-8 is shown as
//!   U+FFFD.
//! - `list_files` walks its directory (default the root, not confined) honouring
//!   `.gitignore`, `.ignore` and git's exclude files even outside a repository; hidden files
//!   are listed, entries named like version-control directories
//!   ([`files::LIST_FILES_SKIPPED_DIRS`]) are left out and not entered, symbolic links are
//!   listed and not followed; see [`files::Listing`].
//! - `write_file` and `edit_file` are confined to the workspace, symbolic links included
//!   ([`path::WriteTarget`]): a link that stays inside is written through (the link is kept), a
//!   link on the way that leads outside is refused, a dangling final link is replaced by a
//!   regular file rather than followed. Only regular files are replaced. Writes go to a
//!   temporary file in the same directory that is synced and renamed over the target, so
//!   readers see the old file or the new one; an overwritten file keeps its permissions, and
//!   missing parents are created. `edit_file` loads files up to [`files::MAX_EDIT_BYTES`] that
//!   are UTF-8 text throughout ([`files::edit_text`]).
//! - `run_command` runs `sh -c` in the workspace with an empty stdin, in a process group of
//!   its own, capturing stdout and stderr in bounded memory
//!   ([`truncate::HeadTail`]). At the timeout, or on cancellation, the whole group is killed.
//!   When the shell exits, background processes that still hold its output pipes get
//!   [`builtin::COMMAND_PIPE_GRACE`] and are then killed with the group; one that redirected
//!   its output keeps running. The result is [`render::render_command`] of what was observed.
//! - `web_fetch` checks the URL before any IO ([`fetch::check_url`]), follows redirects itself
//!   ([`fetch::redirect_target`]), reads at most
//!   [`WEB_FETCH_MAX_BYTES`](builtin::WEB_FETCH_MAX_BYTES) of the body, bounds the whole
//!   exchange by [`WEB_FETCH_TIMEOUT_SECS`](builtin::WEB_FETCH_TIMEOUT_SECS), and renders
//!   every status with [`render::render_fetch`].

use serde::{Deserialize, Serialize};

pub mod args;
pub mod builtin;
pub mod edit;
pub mod fetch;
pub mod files;
pub mod glob;
pub mod grep;
pub mod page;
pub mod path;
pub mod protect;
mod registry;
pub mod render;
pub mod truncate;

pub use registry::{Registry, ToolObject};

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

// A refusal from one of this module's checks is the error result the model sees (its
// `Display` text is written for the model), so a driver's tool can use `?` on
// `args::decode_args`, `path::confine`, `fetch::check_url` and `glob::Glob::new` in a function
// that returns `Result<ToolOutput, ToolOutput>`.
macro_rules! refusals {
    ($($error:ty),*) => {
        $(
            impl From<$error> for ToolOutput {
                fn from(refusal: $error) -> Self {
                    ToolOutput::error(refusal.to_string())
                }
            }
        )*
    };
}

refusals!(
    args::ArgsError,
    path::PathError,
    fetch::UrlError,
    glob::GlobError
);

/// What a tool returns: text for the model, whether it is an error, and images.
///
/// The model sees `content` (and `images` when its configuration says it takes them, see
/// [`crate::session::ImageInputs`]); `is_error` is for the UI and the logs (an error result
/// is still an ordinary tool message in the history, so the model can react to it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// The text the model sees. It names each of `images` with a short placeholder, so a
    /// display (and a model that takes no images) never needs the pixels.
    pub content: String,
    /// Whether the tool failed (bad arguments, missing file, non-zero exit, ...).
    pub is_error: bool,
    /// Images the tool returned (an MCP tool's image blocks), already checked for type and
    /// size. Not serialised with the output: when they reach the model they are in the
    /// history (a message with image parts), and events, session files and `exec --json`
    /// carry them there once rather than twice.
    #[serde(skip)]
    pub images: Vec<ToolImage>,
}

/// An image a tool returned, base64-encoded, as it will travel in a data URL.
#[derive(Clone, PartialEq, Eq)]
pub struct ToolImage {
    /// Its media type (`image/png`, `image/jpeg`, `image/gif` or `image/webp`).
    pub mime_type: String,
    /// Its bytes in standard base64, without whitespace.
    pub data: String,
}

impl ToolImage {
    /// The `data:` URL of an `image_url` content part.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.mime_type, self.data)
    }

    /// How many bytes the image has once decoded.
    pub fn decoded_len(&self) -> usize {
        let symbols = self.data.trim_end_matches('=').len();
        symbols * 3 / 4
    }
}

/// Only the type and size: a debug dump never holds the pixels.
impl std::fmt::Debug for ToolImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolImage")
            .field("mime_type", &self.mime_type)
            .field("bytes", &self.decoded_len())
            .finish()
    }
}

impl ToolOutput {
    /// Returns a successful result with the given text.
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
            images: Vec::new(),
        }
    }

    /// Returns a failed result whose text tells the model what went wrong.
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
            images: Vec::new(),
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

    #[test]
    fn refusals_are_error_results_with_their_text() {
        let refusal = path::confine(std::path::Path::new("/w"), "../x").unwrap_err();
        let text = refusal.to_string();
        assert_eq!(ToolOutput::from(refusal), ToolOutput::error(text));
        let out = ToolOutput::from(fetch::check_url("ftp://x").unwrap_err());
        assert!(out.is_error && out.content.contains("scheme 'ftp'"));
        let out = ToolOutput::from(glob::Glob::new("[").unwrap_err());
        assert!(out.is_error && out.content.contains("no closing ']'"));
        let refusal = args::decode_args::<builtin::ReadFileArgs>("read_file", "{").unwrap_err();
        let out = ToolOutput::from(refusal);
        assert!(out.is_error && out.content.starts_with("read_file: "));
    }
}
