//! What the model reads of an MCP tool result (`CallToolResult`).
//!
//! The result's `content` blocks become text, in order, separated by blank lines: text as
//! is; images and audio as a placeholder naming their type and size (hrns's tool results are
//! text); resource links as their name, URI and type; embedded resources as their URI and, for
//! text resources, their text. `structuredContent` is added as JSON when no text block carries
//! it already. `isError: true` makes the output an error result, which the model sees and can
//! act on.

use crate::tool::ToolOutput;
use serde_json::Value;

/// The text of a result that has neither content nor structured content.
const EMPTY_RESULT: &str = "(the tool returned no content)";

/// Maps a `tools/call` result to the tool output the model reads. `server` names the server in
/// the texts about malformed results.
pub fn call_result_output(server: &str, result: &Value) -> ToolOutput {
    let Some(object) = result.as_object() else {
        return ToolOutput::error(format!(
            "The MCP server {server} answered tools/call with something that is not a result \
             object; the call may or may not have had an effect."
        ));
    };
    let is_error = object.get("isError").and_then(Value::as_bool) == Some(true);
    let mut parts: Vec<String> = Vec::new();
    let mut has_text = false;
    match object.get("content") {
        Some(Value::Array(blocks)) => {
            for block in blocks {
                if block.get("type").and_then(Value::as_str) == Some("text") {
                    has_text = true;
                }
                parts.push(render_block(block));
            }
        }
        None | Some(Value::Null) => {}
        Some(_) => parts.push("[content that is not a list of blocks was left out]".into()),
    }
    if let Some(structured) = object.get("structuredContent").filter(|v| !v.is_null()) {
        // 2025-06-18: "a tool that returns structured content SHOULD also return the
        // serialized JSON in a TextContent block" — add it only when the server did not.
        if !has_text {
            parts.push(serde_json::to_string(structured).unwrap_or_default());
        }
    }
    let text = if parts.is_empty() {
        EMPTY_RESULT.to_owned()
    } else {
        parts.join("\n\n")
    };
    if is_error {
        ToolOutput::error(text)
    } else {
        ToolOutput::ok(text)
    }
}

/// The text of one content block.
fn render_block(block: &Value) -> String {
    let field = |name: &str| block.get(name).and_then(Value::as_str);
    match field("type") {
        Some("text") => field("text").unwrap_or_default().to_owned(),
        Some(kind @ ("image" | "audio")) => {
            let mime = field("mimeType").unwrap_or("unknown type");
            let size = field("data").map_or(0, base64_decoded_len);
            format!("[{kind}: {mime}, {size} bytes, not shown]")
        }
        Some("resource_link") => {
            let uri = field("uri").unwrap_or("(no uri)");
            let name = field("title").or(field("name")).unwrap_or(uri);
            let mut text = format!("[resource link: {name} <{uri}>");
            if let Some(mime) = field("mimeType") {
                text.push_str(&format!(" ({mime})"));
            }
            text.push(']');
            if let Some(description) = field("description") {
                text.push_str(&format!("\n{description}"));
            }
            text
        }
        Some("resource") => {
            let resource = block.get("resource");
            let get = |name: &str| resource.and_then(|r| r.get(name)).and_then(Value::as_str);
            let uri = get("uri").unwrap_or("(no uri)");
            match (get("text"), get("blob")) {
                (Some(text), _) => format!("[resource <{uri}>]\n{text}"),
                (None, Some(blob)) => {
                    let mime = get("mimeType").unwrap_or("unknown type");
                    let size = base64_decoded_len(blob);
                    format!("[resource <{uri}>: {mime}, {size} bytes, not shown]")
                }
                (None, None) => format!("[resource <{uri}>, empty]"),
            }
        }
        Some(other) => format!("[content of type {other:?} not shown]"),
        None => "[a content block without a type was left out]".to_owned(),
    }
}

/// The length of the bytes a base64 text decodes to (padding and whitespace aside).
fn base64_decoded_len(data: &str) -> usize {
    let symbols = data
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
        .count();
    symbols * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_each_block_kind_in_order() {
        let result = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt",
             "mimeType": "text/plain", "description": "the file"},
            {"type": "resource", "resource": {"uri": "mem://x", "text": "body"}},
            {"type": "resource", "resource": {"uri": "mem://y", "blob": "AAAAAAAA",
             "mimeType": "application/octet-stream"}},
            {"type": "hologram"},
            {"text": "typeless"}
        ]});
        let out = call_result_output("s", &result);
        assert!(!out.is_error);
        assert_eq!(
            out.content,
            "hello\n\n[image: image/png, 5 bytes, not shown]\n\n\
             [audio: audio/wav, 3 bytes, not shown]\n\n\
             [resource link: a.txt <file:///a.txt> (text/plain)]\nthe file\n\n\
             [resource <mem://x>]\nbody\n\n\
             [resource <mem://y>: application/octet-stream, 6 bytes, not shown]\n\n\
             [content of type \"hologram\" not shown]\n\n\
             [a content block without a type was left out]"
        );
    }

    #[test]
    fn structured_content_is_added_only_without_text() {
        let only = json!({"content": [], "structuredContent": {"t": 1}});
        assert_eq!(call_result_output("s", &only).content, r#"{"t":1}"#);
        let both = json!({"content": [{"type": "text", "text": "{\"t\": 1}"}],
                          "structuredContent": {"t": 1}});
        assert_eq!(call_result_output("s", &both).content, "{\"t\": 1}");
    }

    #[test]
    fn is_error_gives_an_error_result() {
        let result =
            json!({"content": [{"type": "text", "text": "no such city"}], "isError": true});
        assert_eq!(
            call_result_output("s", &result),
            ToolOutput::error("no such city")
        );
    }

    #[test]
    fn empty_and_malformed_results_are_explained() {
        assert_eq!(call_result_output("s", &json!({})).content, EMPTY_RESULT);
        let out = call_result_output("srv", &json!("text"));
        assert!(out.is_error && out.content.contains("srv"));
        let out = call_result_output("s", &json!({"content": "oops"}));
        assert!(out.content.contains("left out"));
    }
}
