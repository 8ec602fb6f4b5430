//! `@path` mentions in a prompt, and the user message with the mentioned files attached.
//!
//! [`find_mentions`] finds the mentions; whether a path names a file is asked of the caller, who
//! also keeps it inside the workspace. The caller reads each file and hands back an
//! [`Attachment`]; [`attach`] builds the user message: the prompt as typed, then each text file
//! fenced under its path, and each image as an `image_url` content part for vision models.
//!
//! A mention starts at a word start (the start of the text, after whitespace or an opening
//! bracket or quote), so `me@example.com` stays plain text, as does an `@` that names nothing.
//! Trailing punctuation (`see @a.rs.`) is left out of the path unless the file's name has it.

use crate::wire::{Content, Message};
use serde_json::json;
use std::fmt::Write as _;
use std::ops::Range;

/// The largest part of a text file attached (256 KiB); the rest is left out with a note.
pub const MAX_TEXT_BYTES: usize = 256 * 1024;

/// The largest image attached (5 MiB); a larger one is refused with a note.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// One `@path` in a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// The byte range of `@path` in the prompt.
    pub range: Range<usize>,
    /// The path as written.
    pub path: String,
}

/// Characters that may end a sentence after a path and are left out when the path without
/// them names a file.
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '}', '"', '\'', '`'];

/// Characters after which an `@` starts a word.
const OPENERS: &[char] = &['(', '[', '{', '"', '\'', '`'];

/// The mentions of `text`, in order, each naming a path for which `is_file` is true. Each path
/// is looked up at most a few times (with and without trailing punctuation).
pub fn find_mentions(text: &str, mut is_file: impl FnMut(&str) -> bool) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut prev: Option<char> = None;
    for (at, c) in text.char_indices() {
        let word_start = prev.is_none_or(|p| p.is_whitespace() || OPENERS.contains(&p));
        prev = Some(c);
        if c != '@' || !word_start {
            continue;
        }
        let rest = &text[at + 1..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let mut candidate = &rest[..end];
        loop {
            if candidate.is_empty() {
                break;
            }
            if is_file(candidate) {
                out.push(Mention {
                    range: at..at + 1 + candidate.len(),
                    path: candidate.to_owned(),
                });
                break;
            }
            match candidate.strip_suffix(TRAILING) {
                Some(shorter) => candidate = shorter,
                None => break,
            }
        }
    }
    out
}

/// A mentioned file as the caller read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attachment {
    /// UTF-8 text; `total` is the file's full size, `text` at most [`MAX_TEXT_BYTES`] of it (the
    /// caller may read only that much).
    Text {
        /// The path as mentioned.
        path: String,
        /// The text read.
        text: String,
        /// The file's size in bytes.
        total: u64,
    },
    /// A png, jpeg, gif or webp image (see [`image_type`]), base64-encoded by the caller.
    Image {
        /// The path as mentioned.
        path: String,
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        media_type: &'static str,
        /// The bytes in standard base64.
        base64: String,
    },
    /// Not attached, with the reason (binary, too large, unreadable) for the model and the user.
    Refused {
        /// The path as mentioned.
        path: String,
        /// Why, such as "a binary file".
        reason: String,
    },
}

impl Attachment {
    /// The path as mentioned.
    pub fn path(&self) -> &str {
        match self {
            Attachment::Text { path, .. }
            | Attachment::Image { path, .. }
            | Attachment::Refused { path, .. } => path,
        }
    }

    /// One line for the user: what was attached, or why not.
    pub fn summary(&self) -> String {
        match self {
            Attachment::Text { path, text, total } if (text.len() as u64) < *total => {
                format!("attached {path} (first {} of {total} bytes)", text.len())
            }
            Attachment::Text { path, total, .. } => format!("attached {path} ({total} bytes)"),
            Attachment::Image {
                path, media_type, ..
            } => format!("attached {path} as an image ({media_type})"),
            Attachment::Refused { path, reason } => format!("not attached: {path}: {reason}"),
        }
    }
}

/// The image type of `bytes` from its signature: png, jpeg, gif or webp; `None` otherwise.
pub fn image_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Whether `path`'s extension is one of an image type hrns attaches as an image.
pub fn has_image_extension(path: &str) -> bool {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    matches!(
        ext.as_deref(),
        Some("png" | "jpg" | "jpeg" | "gif" | "webp")
    )
}

/// The text of a file's first `bytes` (a prefix of a file of `total` bytes) for attaching:
/// `None` when it is binary (a NUL byte, or not UTF-8 apart from a character cut at the end).
pub fn text_of(bytes: &[u8], total: u64) -> Option<String> {
    let head = &bytes[..bytes.len().min(MAX_TEXT_BYTES)];
    if memchr::memchr(0, head).is_some() {
        return None;
    }
    let cut = (head.len() as u64) < total;
    match std::str::from_utf8(head) {
        Ok(text) => Some(text.to_owned()),
        Err(e) if cut && e.error_len().is_none() && e.valid_up_to() + 4 > head.len() => {
            Some(String::from_utf8_lossy(&head[..e.valid_up_to()]).into_owned())
        }
        Err(_) => None,
    }
}

/// The user message for `prompt` with `attachments`: plain text when there is no image, else
/// content parts (the text first, then one `image_url` part per image).
pub fn attach(prompt: &str, attachments: &[Attachment]) -> Message {
    let mut text = prompt.to_owned();
    let mut images = Vec::new();
    for a in attachments {
        match a {
            Attachment::Text {
                path,
                text: body,
                total,
            } => {
                let fence = fence_for(body);
                let _ = write!(text, "\n\n{path}:\n{fence}\n{body}");
                if !body.is_empty() && !body.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&fence);
                if (body.len() as u64) < *total {
                    let _ = write!(
                        text,
                        "\n(only the first {} of {total} bytes; read_file has the rest)",
                        body.len()
                    );
                }
            }
            Attachment::Image {
                path,
                media_type,
                base64,
            } => {
                let _ = write!(text, "\n\n{path}: attached as an image below.");
                images.push(json!({
                    "type": "image_url",
                    "image_url": {"url": format!("data:{media_type};base64,{base64}")}
                }));
            }
            Attachment::Refused { path, reason } => {
                let _ = write!(text, "\n\n{path}: not attached ({reason}).");
            }
        }
    }
    let mut message = Message::user(String::new());
    message.content = Some(if images.is_empty() {
        Content::Text(text)
    } else {
        let mut parts = vec![json!({"type": "text", "text": text})];
        parts.extend(images);
        Content::Parts(parts)
    });
    message
}

/// A backtick fence longer than any run of backticks in `body`, at least three.
fn fence_for(body: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for b in body.bytes() {
        if b == b'`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

#[cfg(test)]
mod tests;
