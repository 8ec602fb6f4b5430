//! What the model reads of an MCP tool result (`CallToolResult`).
//!
//! The result's `content` blocks become text, in order, separated by blank lines: text as
//! is; images as a placeholder naming their number, type and size, with the image itself
//! kept aside ([`ToolOutput::images`]) when it is a type providers take (PNG, JPEG, GIF, WebP),
//! valid base64 and within the limits ([`MAX_IMAGE_BYTES`], [`MAX_RESULT_IMAGE_BYTES`],
//! [`MAX_RESULT_IMAGES`]);
//! whether the model then gets it is the session's decision
//! ([`crate::session::ImageInputs`]); audio as a placeholder naming its type and size;
//! resource links as their name, URI and type; embedded resources as their URI and, for text
//! resources, their text. `structuredContent` is added as JSON when no text block carries
//! it already. `isError: true` makes the output an error result, which the model sees and can
//! act on.

use crate::tool::truncate::truncate_head_tail;
use crate::tool::{ToolImage, ToolOutput};
use serde_json::Value;
use std::borrow::Cow;

/// The text of a result that has neither content nor structured content.
const EMPTY_RESULT: &str = "(the tool returned no content)";

/// The largest image (decoded) kept for the model. Providers refuse larger ones (Anthropic
/// at 5 MB, others at 20 MB), and every later request of the session carries it again.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// The most image bytes (decoded) one result keeps; images past it get the placeholder only.
pub const MAX_RESULT_IMAGE_BYTES: usize = 10 * 1024 * 1024;

/// The most images one result keeps; the rest get the placeholder only. Each kept image rides
/// along in every later request of the session, so many tiny ones cost as much as a few big ones.
pub const MAX_RESULT_IMAGES: usize = 20;

/// The image types OpenAI-compatible providers take in `image_url` data URLs.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Names servers give image types that are not the registered ones, mapped to the registered
/// type they mean (compared in lower case). Providers check a data URL's type strictly.
const IMAGE_TYPE_ALIASES: [(&str, &str); 3] = [
    // Common in the wild, never registered; the file extension leaks into the type.
    ("image/jpg", "image/jpeg"),
    // Progressive JPEG, as old browsers named it.
    ("image/pjpeg", "image/jpeg"),
    // The unregistered name PNG had before its registration.
    ("image/x-png", "image/png"),
];

/// The registered type (one of [`IMAGE_TYPES`]) that a server's `mimeType` names, in any
/// case, with surrounding spaces or parameters (`image/png; q=1`) or as a known alias; `None`
/// for every other type.
fn canonical_image_type(mime: &str) -> Option<&'static str> {
    let essence = mime.split(';').next().unwrap_or_default().trim();
    let known = |name: &str| name.eq_ignore_ascii_case(essence);
    IMAGE_TYPES.into_iter().find(|t| known(t)).or_else(|| {
        IMAGE_TYPE_ALIASES
            .into_iter()
            .find(|(alias, _)| known(alias))
            .map(|(_, canonical)| canonical)
    })
}

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
    let mut images = Vec::new();
    // The decoded bytes of `images`, kept as they are added so each block costs the same.
    let mut image_bytes = 0;
    match object.get("content") {
        Some(Value::Array(blocks)) => {
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => has_text = true,
                    Some("image") => {
                        parts.push(take_image(block, &mut images, &mut image_bytes));
                        continue;
                    }
                    _ => {}
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
    let mut output = if is_error {
        ToolOutput::error(text)
    } else {
        ToolOutput::ok(text)
    };
    output.images = images;
    output
}

/// `output` with its text cut to `max_chars` characters when longer, as built-in tools' output
/// is ([`truncate_head_tail`]: head and tail kept, a marker line where the middle was), and a
/// last line telling the model what was cut and which key of which server sets the limit. A
/// server may return megabytes; every later request of the session would carry them.
pub fn cap_result(mut output: ToolOutput, server: &str, max_chars: usize) -> ToolOutput {
    if let Cow::Owned(cut) = truncate_head_tail(&output.content, max_chars) {
        let total = output.content.chars().count();
        let key = super::config::MAX_RESULT_CHARS_KEY;
        output.content = format!(
            "{cut}\n\n[The result of the MCP server {server} had {total} characters; only the \
             first and last {max_chars} in all are shown (its {key:?} in mcpServers sets the \
             limit). Ask for less, or for a part, if you need the middle.]"
        );
    }
    output
}

/// The placeholder of an image block; the image joins `images` (whose decoded bytes
/// `image_bytes` counts) when it may be sent.
fn take_image(block: &Value, images: &mut Vec<ToolImage>, image_bytes: &mut usize) -> String {
    let field = |name: &str| block.get(name).and_then(Value::as_str);
    let mime = field("mimeType").unwrap_or("unknown type");
    let shown_mime = crate::text::shorten(mime, 60);
    let Some(data) = field("data") else {
        return format!("[image: {shown_mime}, not shown: it has no data]");
    };
    let size = base64_decoded_len(data);
    let Some(mime) = canonical_image_type(mime) else {
        return format!(
            "[image: {shown_mime}, {size} bytes, not shown: only PNG, JPEG, GIF and WebP images \
             are sent]"
        );
    };
    let why_not = if size > MAX_IMAGE_BYTES {
        Some(format!(
            "larger than the {} MiB limit",
            MAX_IMAGE_BYTES / (1024 * 1024)
        ))
    } else if images.len() >= MAX_RESULT_IMAGES {
        Some(format!(
            "the result has more than {MAX_RESULT_IMAGES} images"
        ))
    } else if *image_bytes + size > MAX_RESULT_IMAGE_BYTES {
        Some(format!(
            "the result's images exceed {} MiB together",
            MAX_RESULT_IMAGE_BYTES / (1024 * 1024)
        ))
    } else {
        None
    };
    if let Some(why) = why_not {
        return format!("[image: {shown_mime}, {size} bytes, not shown: {why}]");
    }
    let Some(clean) = clean_base64(data) else {
        return format!("[image: {shown_mime}, not shown: its data is not valid base64]");
    };
    // A provider refuses a request whose image is not what it says, and the image stays in
    // every later request: one lying server must not break the session.
    if !has_signature(mime, &decode_prefix(&clean)) {
        return format!("[image: {shown_mime}, {size} bytes, not shown: its data is not {mime}]");
    }
    let image = ToolImage {
        mime_type: mime.to_owned(),
        data: clean,
    };
    *image_bytes += image.decoded_len();
    images.push(image);
    format!("[image {}: {shown_mime}, {size} bytes]", images.len())
}

/// Whether `head` (the first bytes of an image) starts the way files of type `mime` start.
fn has_signature(mime: &str, head: &[u8]) -> bool {
    match mime {
        "image/png" => head.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => head.starts_with(&[0xFF, 0xD8, 0xFF]),
        "image/gif" => head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a"),
        "image/webp" => head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP",
        _ => false,
    }
}

/// The first (at most 12) bytes that valid base64 `data` decodes to.
fn decode_prefix(data: &str) -> Vec<u8> {
    let value = |b: u8| match b {
        b'A'..=b'Z' => Some(b - b'A'),
        b'a'..=b'z' => Some(b - b'a' + 26),
        b'0'..=b'9' => Some(b - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(12);
    let (mut bits, mut count) = (0u32, 0u32);
    for sextet in data.bytes().take(16).map_while(value) {
        bits = (bits << 6) | u32::from(sextet);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    out
}

/// `data` without whitespace, when it is standard base64 (padded or not); `None` otherwise,
/// so nothing but base64 ever enters a data URL.
fn clean_base64(data: &str) -> Option<String> {
    let clean: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let body = clean.trim_end_matches('=');
    let padding = clean.len() - body.len();
    let valid = !body.is_empty()
        && padding <= 2
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        && (padding == 0 || clean.len() % 4 == 0)
        && body.len() % 4 != 1;
    valid.then_some(clean)
}

/// The text of one content block.
fn render_block(block: &Value) -> String {
    let field = |name: &str| block.get(name).and_then(Value::as_str);
    match field("type") {
        Some("text") => field("text").unwrap_or_default().to_owned(),
        Some("audio") => {
            let mime = field("mimeType").unwrap_or("unknown type");
            let size = field("data").map_or(0, base64_decoded_len);
            format!("[audio: {mime}, {size} bytes, not shown]")
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
            "hello\n\n[image: image/png, 5 bytes, not shown: its data is not image/png]\n\n\
             [audio: audio/wav, 3 bytes, not shown]\n\n\
             [resource link: a.txt <file:///a.txt> (text/plain)]\nthe file\n\n\
             [resource <mem://x>]\nbody\n\n\
             [resource <mem://y>: application/octet-stream, 6 bytes, not shown]\n\n\
             [content of type \"hologram\" not shown]\n\n\
             [a content block without a type was left out]"
        );
    }

    /// A 1x1 PNG.
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    /// A PNG-signed base64 text that decodes to `bytes` bytes.
    fn png_of(bytes: usize) -> String {
        let mut data = String::from("iVBORw0KGgoA");
        data.push_str(&"A".repeat(bytes / 3 * 4 - data.len()));
        data
    }

    fn image(data: &str, mime: &str) -> Value {
        json!({"type": "image", "data": data, "mimeType": mime})
    }

    #[test]
    fn images_are_kept_aside_and_named_in_the_text() {
        let wrapped = format!("{}\n{}", &PNG[..40], &PNG[40..]);
        let result = json!({"content": [
            {"type": "text", "text": "two pictures:"},
            image(PNG, "image/png"),
            image(&wrapped, "IMAGE/PNG"),
        ]});
        let out = call_result_output("s", &result);
        assert_eq!(
            out.content,
            "two pictures:\n\n[image 1: image/png, 70 bytes]\n\n[image 2: IMAGE/PNG, 70 bytes]"
        );
        assert_eq!(out.images.len(), 2);
        for kept in &out.images {
            assert_eq!(kept.mime_type, "image/png");
            assert_eq!(kept.data, PNG, "whitespace is taken out");
            assert_eq!(kept.data_url(), format!("data:image/png;base64,{PNG}"));
        }
        // Neither the debug dump nor the serialised output carries the pixels.
        assert!(!format!("{out:?}").contains(&PNG[..20]));
        assert!(!serde_json::to_string(&out).unwrap().contains(&PNG[..20]));
    }

    #[test]
    fn a_result_keeps_at_most_max_result_images_images() {
        let blocks: Vec<Value> = (0..MAX_RESULT_IMAGES + 5)
            .map(|_| image(PNG, "image/png"))
            .collect();
        let out = call_result_output("s", &json!({ "content": blocks }));
        assert_eq!(out.images.len(), MAX_RESULT_IMAGES);
        let last_kept = format!("[image {MAX_RESULT_IMAGES}: image/png, 70 bytes]");
        assert!(out.content.contains(&last_kept), "{}", out.content);
        let refused = format!(
            "[image: image/png, 70 bytes, not shown: the result has more than \
             {MAX_RESULT_IMAGES} images]"
        );
        assert_eq!(out.content.matches(&refused).count(), 5, "{}", out.content);
    }

    #[test]
    fn each_image_type_is_checked_by_its_signature() {
        let signed = [
            ("image/jpeg", "/9j/4AAQSkZJRgABAQ=="),
            ("image/gif", "R0lGODlhAQABAAAAACw="),
            ("image/webp", "UklGRhoAAABXRUJQVlA4TA0="),
        ];
        for (mime, data) in signed {
            let out = call_result_output("s", &json!({"content": [image(data, mime)]}));
            assert_eq!(out.images.len(), 1, "{mime}: {}", out.content);
            // The same bytes under another type are refused.
            let out = call_result_output("s", &json!({"content": [image(data, "image/png")]}));
            assert!(out.images.is_empty() && out.content.contains("is not image/png"));
        }
    }

    #[test]
    fn known_aliases_and_spellings_of_a_type_are_sent_as_the_registered_type() {
        let jpeg = "/9j/4AAQSkZJRgABAQ==";
        let cases = [
            (jpeg, "image/jpg", "image/jpeg"),
            (jpeg, "IMAGE/JPG", "image/jpeg"),
            (jpeg, "image/pjpeg", "image/jpeg"),
            (jpeg, "Image/Jpeg", "image/jpeg"),
            (PNG, "image/x-png", "image/png"),
            (PNG, "IMAGE/PNG", "image/png"),
            (PNG, " image/png ; charset=binary", "image/png"),
        ];
        for (data, mime, canonical) in cases {
            let out = call_result_output("s", &json!({"content": [image(data, mime)]}));
            assert_eq!(out.images.len(), 1, "{mime}: {}", out.content);
            assert_eq!(out.images[0].mime_type, canonical, "{mime}");
            assert!(
                out.images[0]
                    .data_url()
                    .starts_with(&format!("data:{canonical};base64,")),
                "{mime}"
            );
            // The text names the type as the server gave it.
            assert!(out.content.starts_with(&format!("[image 1: {mime},")));
        }
        // An alias does not lift the signature check: PNG bytes called `image/jpg` are refused
        // by the type they were mapped to.
        let out = call_result_output("s", &json!({"content": [image(PNG, "image/jpg")]}));
        assert!(out.images.is_empty());
        assert!(
            out.content.contains("its data is not image/jpeg"),
            "{}",
            out.content
        );
    }

    #[test]
    fn types_that_only_look_like_an_image_type_are_refused() {
        let hostile = [
            "image/svg+xml",
            "IMAGE/SVG+XML",
            "image/jpgx",
            "image/png+xml",
            "image/x-jpg",
            "image/pngimage/png",
            "text/png",
            "image/",
            "png",
            "image/png\u{0}",
            "image/p\u{0}ng",
            ";image/png",
            "",
        ];
        let jpeg = "/9j/4AAQSkZJRgABAQ==";
        for mime in hostile {
            for data in [PNG, jpeg] {
                let out = call_result_output("s", &json!({"content": [image(data, mime)]}));
                assert!(out.images.is_empty(), "{mime:?} was kept");
                assert!(
                    out.content.contains("only PNG, JPEG, GIF and WebP"),
                    "{mime:?}"
                );
            }
        }
    }

    #[test]
    fn hostile_images_get_the_placeholder_only() {
        let cases = [
            (image(PNG, "image/svg+xml"), "only PNG, JPEG, GIF and WebP"),
            (image("iVBO!!w0", "image/png"), "not valid base64"),
            (image("iVBORw0KG", "image/png"), "not valid base64"),
            (image("iVBORw0KGgo===", "image/png"), "not valid base64"),
            (
                json!({"type": "image", "mimeType": "image/png"}),
                "it has no data",
            ),
            (
                json!({"type": "image", "data": 7, "mimeType": "image/png"}),
                "it has no data",
            ),
            (
                image(&png_of(MAX_IMAGE_BYTES + 3), "image/png"),
                "larger than the 5 MiB limit",
            ),
            (image(PNG, &"x".repeat(10_000)), "only PNG"),
        ];
        for (block, why) in cases {
            let out = call_result_output("s", &json!({"content": [block]}));
            assert!(out.images.is_empty(), "{why}");
            assert!(out.content.contains(why), "{why}: {}", out.content);
            assert!(out.content.len() < 300, "a placeholder stays short");
        }
        // The limit itself is allowed.
        let out = call_result_output(
            "s",
            &json!({"content": [image(&png_of(MAX_IMAGE_BYTES), "image/png")]}),
        );
        assert_eq!(out.images.len(), 1, "{}", out.content);
    }

    #[test]
    fn a_result_keeps_at_most_its_total_of_image_bytes() {
        let four = png_of(4 * 1024 * 1024);
        let result = json!({"content": [image(&four, "image/png"), image(&four, "image/png"),
                                        image(&four, "image/png"), image(PNG, "image/png")]});
        let out = call_result_output("s", &result);
        assert_eq!(out.images.len(), 3, "{}", out.content);
        assert!(out.content.contains("exceed 10 MiB together"));
        assert!(out.content.ends_with("[image 3: image/png, 70 bytes]"));
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

    /// A huge result reaches the model cut to the limit, head and tail kept, with the cut
    /// said; a short one is untouched; an error stays an error.
    #[test]
    fn a_huge_result_is_capped_and_the_cut_is_said() {
        let big = format!("START{}END", "x".repeat(15 * 1024 * 1024));
        let result = json!({"content": [{"type": "text", "text": big}], "isError": true});
        let out = cap_result(call_result_output("big", &result), "big", 30_000);
        assert!(out.is_error);
        assert!(out.content.len() < 31_000, "{}", out.content.len());
        assert!(out.content.starts_with("START") && out.content.contains("END\n\n[The result"));
        assert!(
            out.content.contains("characters omitted"),
            "the marker of the cut"
        );
        assert!(
            out.content
                .contains("MCP server big had 15728648 characters")
                && out.content.contains("\"maxResultChars\""),
            "{}",
            &out.content[out.content.len() - 300..]
        );
        let small = cap_result(ToolOutput::ok("short"), "big", 30_000);
        assert_eq!(small.content, "short");
    }
}
