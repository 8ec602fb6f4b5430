//! Listing the server's tools: `tools/list` page by page, with limits against a server that
//! pages forever or lists too much, and the tools read from each page.

use super::{Client, Event, Failure, Phase, Purpose};
use crate::mcp::jsonrpc::ErrorObject;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Instant;

/// Pages of `tools/list` accepted in one listing, against a server that pages forever.
pub const MAX_LIST_PAGES: usize = 100;

/// Tools read from one listing, whatever the limits say: past it, tools are counted only.
pub const MAX_TOOLS: usize = 1000;

/// What a listing left out, for a warning naming the server ([`LeftOut::warning`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeftOut {
    /// Tools listed in all (malformed ones included).
    pub listed: usize,
    /// Tools past [`Limits::max_tools`](crate::mcp::config::Limits::max_tools).
    pub over_count: usize,
    /// Tools that would have passed
    /// [`Limits::max_tool_bytes`](crate::mcp::config::Limits::max_tool_bytes).
    pub over_bytes: usize,
    /// Tools without a name.
    pub malformed: usize,
}

impl LeftOut {
    /// Whether anything was left out.
    pub fn any(&self) -> bool {
        self.over_count + self.over_bytes + self.malformed > 0
    }

    /// A warning for the user naming `server`, or `None` when nothing was left out:
    /// `MCP server big lists 5000 tools; only the first 128 are used (maxTools) …`.
    pub fn warning(&self, server: &str, limits: &crate::mcp::config::Limits) -> Option<String> {
        use crate::mcp::config::{MAX_TOOL_BYTES_KEY, MAX_TOOLS_KEY};
        if !self.any() {
            return None;
        }
        let kept = self.listed - self.over_count - self.over_bytes - self.malformed;
        let mut why = Vec::new();
        if self.over_count > 0 {
            why.push(format!(
                "{} past the limit of {} tools ({MAX_TOOLS_KEY:?})",
                self.over_count, limits.max_tools
            ));
        }
        if self.over_bytes > 0 {
            why.push(format!(
                "{} past the limit of {} bytes of definitions ({MAX_TOOL_BYTES_KEY:?})",
                self.over_bytes, limits.max_tool_bytes
            ));
        }
        if self.malformed > 0 {
            why.push(format!("{} malformed", self.malformed));
        }
        Some(format!(
            "MCP server {server} lists {} tools; {kept} are used and the rest left out: {}. Raise \
             the limits in its mcpServers entry to use more; every request carries the tools' \
             definitions",
            self.listed,
            why.join(", ")
        ))
    }
}

/// A tool as the server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// The server's name for it, used in `tools/call`.
    pub name: String,
    /// A title for people, if any.
    pub title: Option<String>,
    /// What it does, for the model.
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
    /// `annotations.readOnlyHint`: the server says the tool changes nothing.
    pub read_only_hint: Option<bool>,
}

/// A `tools/list` in progress.
#[derive(Debug, Default)]
pub(super) struct Listing {
    tools: Vec<McpTool>,
    /// Bytes of the definitions of `tools` ([`definition_bytes`]).
    bytes: usize,
    left_out: LeftOut,
    pages: usize,
    cursors: BTreeSet<String>,
}

impl Client {
    /// A listing failed: during the handshake the server has failed; a later refresh only
    /// keeps the tools listed before, with a warning.
    pub(super) fn listing_failed(&mut self, failure: Failure) {
        self.listing = None;
        match self.phase {
            Phase::Ready => {
                self.list_again = false;
                self.log("warning", format!("kept the earlier tool list: {failure}"));
                self.release_held();
            }
            Phase::New | Phase::Initializing | Phase::Listing | Phase::Failed(_) => {
                self.fail(failure)
            }
        }
    }

    pub(super) fn list_tools(&mut self, now: Instant, cursor: Option<String>) {
        if self.listing.is_none() {
            self.listing = Some(Listing::default());
        }
        let params = match cursor {
            Some(cursor) => json!({"cursor": cursor}),
            None => json!({}),
        };
        let timeout = self.config.request_timeout;
        self.request(now, timeout, Purpose::ListTools, "tools/list", params);
    }

    pub(super) fn on_tools_page(&mut self, now: Instant, answer: Result<Value, ErrorObject>) {
        let result = match answer {
            Ok(result) => result,
            Err(error) => {
                return self.listing_failed(Failure::Refused {
                    method: "tools/list",
                    code: error.code,
                    message: error.message,
                });
            }
        };
        let Some(listing) = self.listing.as_mut() else {
            return;
        };
        let Some(tools) = result.get("tools").and_then(Value::as_array) else {
            return self.listing_failed(Failure::Malformed {
                method: "tools/list",
                reason: "no tools list".into(),
            });
        };
        let limits = self.config.limits;
        let max_tools = limits.max_tools.min(MAX_TOOLS);
        for tool in tools {
            let left_out = &mut listing.left_out;
            left_out.listed += 1;
            if listing.tools.len() >= max_tools {
                left_out.over_count += 1;
                continue;
            }
            let Some(tool) = parse_tool(tool) else {
                left_out.malformed += 1;
                continue;
            };
            let bytes = definition_bytes(&tool);
            if listing.bytes + bytes > limits.max_tool_bytes {
                left_out.over_bytes += 1;
                continue;
            }
            listing.bytes += bytes;
            listing.tools.push(tool);
        }
        listing.pages += 1;
        let cursor = result
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(cursor) = cursor {
            if listing.pages >= MAX_LIST_PAGES || !listing.cursors.insert(cursor.clone()) {
                return self.listing_failed(Failure::Malformed {
                    method: "tools/list",
                    reason: format!(
                        "the listing does not end (more than {MAX_LIST_PAGES} pages, or a cursor repeated)"
                    ),
                });
            }
            return self.list_tools(now, Some(cursor));
        }
        let listing = self.listing.take().unwrap_or_default();
        if let Some(warning) = listing.left_out.warning(&self.config.server, &limits) {
            self.log("warning", warning);
        }
        self.left_out = listing.left_out;
        self.tools = listing.tools;
        match self.phase {
            Phase::Listing => {
                self.phase = Phase::Ready;
                self.emit(Event::Ready);
            }
            Phase::Ready => {
                self.emit(Event::ToolsChanged);
                self.release_held();
            }
            Phase::New | Phase::Initializing | Phase::Failed(_) => {}
        }
        if std::mem::take(&mut self.list_again) {
            self.list_tools(now, None);
        }
    }
}

/// About the bytes `tool` adds to every request once offered: its name, title, description
/// and input schema as JSON (the wrapping and the `mcp__SERVER__` prefix are small and
/// fixed). Measured as listed, before control characters are stripped.
fn definition_bytes(tool: &McpTool) -> usize {
    let text = |t: &Option<String>| t.as_ref().map_or(0, String::len);
    tool.name.len()
        + text(&tool.title)
        + text(&tool.description)
        + serde_json::to_string(&tool.input_schema).map_or(0, |s| s.len())
}

/// Reads one tool of a `tools/list` page; `None` when it has no name.
fn parse_tool(tool: &Value) -> Option<McpTool> {
    let string = |name: &str| tool.get(name).and_then(Value::as_str).map(str::to_owned);
    let name = string("name").filter(|n| !n.is_empty())?;
    Some(McpTool {
        name,
        title: string("title").or_else(|| {
            tool.get("annotations")
                .and_then(|a| a.get("title"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        }),
        description: string("description"),
        input_schema: tool
            .get("inputSchema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"})),
        read_only_hint: tool
            .get("annotations")
            .and_then(|a| a.get("readOnlyHint"))
            .and_then(Value::as_bool),
    })
}
