//! A prompt's content blocks as the user message: text as written (its `@path` mentions
//! attached as in the UI), resource links to workspace files and embedded resources as
//! attachments, images as image parts.

use crate::setup::Setup;
use hrns_core::acp::methods::{ContentBlock, file_uri_path};
use hrns_core::mention::{self, Attachment};
use hrns_core::wire::{Content, Message};

/// The user's text of a prompt (for custom commands and the log), and the message to send.
pub(crate) fn message(blocks: &[ContentBlock], setup: &Setup) -> (String, Message) {
    let mut text = String::new();
    let mut attachments: Vec<Attachment> = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text { text: t } => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(t);
            }
            ContentBlock::Image { data, mime_type } => {
                let n = attachments
                    .iter()
                    .filter(|a| matches!(a, Attachment::Image { .. }))
                    .count();
                attachments.push(match image_type(mime_type) {
                    Some(media_type) => Attachment::Image {
                        path: format!("image {}", n + 1),
                        media_type,
                        base64: data.clone(),
                    },
                    None => Attachment::Refused {
                        path: format!("image {}", n + 1),
                        reason: format!("{mime_type} is not a png, jpeg, gif or webp image"),
                    },
                });
            }
            ContentBlock::Audio { mime_type } => attachments.push(Attachment::Refused {
                path: "audio".into(),
                reason: format!("hrns does not take audio ({mime_type})"),
            }),
            ContentBlock::ResourceLink { uri, .. } => attachments.push(link(uri, setup)),
            ContentBlock::Resource { resource } => {
                let path = shown_path(&resource.uri, setup);
                attachments.push(match (&resource.text, &resource.blob) {
                    (Some(body), _) => Attachment::Text {
                        path,
                        text: body.clone(),
                        total: body.len() as u64,
                    },
                    (None, _) => Attachment::Refused {
                        path,
                        reason: "binary contents are not attached".into(),
                    },
                });
            }
        }
    }
    // `@path` mentions in the text are attached as the UI attaches them.
    let (mentioned, _) =
        crate::setup::mentions::expand(&text, &setup.workspace, &setup.sandbox.protected);
    if attachments.is_empty() {
        return (text, mentioned);
    }
    let mut message = mention::attach(&mentioned.text(), &attachments);
    // Images of the mentions come after the text, as `attach` puts them.
    if let Some(Content::Parts(parts)) = &mentioned.content {
        let images: Vec<_> = parts.iter().skip(1).cloned().collect();
        if !images.is_empty() {
            let mut all = match message.content.take() {
                Some(Content::Parts(p)) => p,
                Some(Content::Text(t)) => vec![serde_json::json!({"type": "text", "text": t})],
                None => Vec::new(),
            };
            all.extend(images);
            message.content = Some(Content::Parts(all));
        }
    }
    (text, message)
}

/// A linked resource: a file in the workspace is read as a mention would be; anything else is
/// named for the model, unread.
fn link(uri: &str, setup: &Setup) -> Attachment {
    let path = shown_path(uri, setup);
    let Some(full) = file_uri_path(uri) else {
        return Attachment::Refused {
            path,
            reason: "only file:// links are read".into(),
        };
    };
    let (message, mut attached) = crate::setup::mentions::expand(
        &format!("@{}", relative(&full, setup)),
        &setup.workspace,
        &setup.sandbox.protected,
    );
    drop(message);
    attached.pop().unwrap_or(Attachment::Refused {
        path,
        reason: "not a file in the workspace".into(),
    })
}

/// The path as the model sees it: relative to the workspace when inside it.
fn shown_path(uri: &str, setup: &Setup) -> String {
    match file_uri_path(uri) {
        Some(full) => relative(&full, setup),
        None => uri.to_owned(),
    }
}

fn relative(full: &str, setup: &Setup) -> String {
    std::path::Path::new(full)
        .strip_prefix(&setup.workspace)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| full.to_owned())
}

fn image_type(mime: &str) -> Option<&'static str> {
    match mime {
        "image/png" => Some("image/png"),
        "image/jpeg" | "image/jpg" => Some("image/jpeg"),
        "image/gif" => Some("image/gif"),
        "image/webp" => Some("image/webp"),
        _ => None,
    }
}
