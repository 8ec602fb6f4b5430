//! Listing the server's tools: `tools/list` page by page, with limits against a server that
//! pages forever or lists too much, and the tools read from each page.

use super::{Client, Event, Failure, Phase, Purpose};
use crate::mcp::jsonrpc::ErrorObject;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Instant;

/// Pages of `tools/list` accepted in one listing, against a server that pages forever.
pub const MAX_LIST_PAGES: usize = 100;

/// Tools accepted from one server.
pub const MAX_TOOLS: usize = 1000;

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
        let mut skipped = 0;
        for tool in tools {
            match parse_tool(tool) {
                Some(tool) if listing.tools.len() < MAX_TOOLS => listing.tools.push(tool),
                Some(_) | None => skipped += 1,
            }
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
            if skipped > 0 {
                self.log(
                    "warning",
                    format!("left out {skipped} malformed or surplus tools"),
                );
            }
            return self.list_tools(now, Some(cursor));
        }
        let listing = self.listing.take().unwrap_or_default();
        if skipped > 0 {
            self.log(
                "warning",
                format!("left out {skipped} malformed or surplus tools"),
            );
        }
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
