//! Images from tool results on their way into the history: as `image_url` parts of one
//! `user` message after a step's tool messages, or as the placeholder text alone
//! ([`ImageInputs`] says which, and why).

use super::ImageInputs;
use crate::tool::ToolOutput;
use crate::wire::{Content, Message, Role};
use serde_json::{Value, json};

/// Added to a tool message whose images follow in the `user` message.
pub(super) const ATTACHED_NOTE: &str = "(The images follow in the next user message.)";

/// Added to a tool message whose images the model is not sent.
pub(super) const NOT_SHOWN_NOTE: &str =
    "(The images are not shown: this model is not set up to take images.)";

/// The text part before one call's images: `{HEADER_START}{id}{HEADER_NAME}{name}{HEADER_END}`.
const HEADER_START: &str = "The images returned by the call ";
const HEADER_NAME: &str = " (`";
const HEADER_END: &str = "`), in order:";

/// The images of one call, as a tool-images message carries them (see [`tool_images`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolImages {
    /// The id of the call that returned them.
    pub call_id: String,
    /// The name of its tool.
    pub tool: String,
    /// How many images it returned.
    pub count: usize,
    /// The length of their `data:` URLs, in bytes.
    pub bytes: usize,
}

/// Whether `message` is the `user` message a session adds to carry a step's tool images, as
/// sent ([`tool_images`] reads it) or as context pruning left it (a short text stub): the
/// tools' words in either form, never something the user said.
#[must_use]
pub fn is_tool_images(message: &Message) -> bool {
    tool_images(message).is_some() || crate::context::is_pruned_images(message)
}

/// The calls whose images `message` carries, when it is the `user` message a session adds
/// after a step's tool messages; `None` for any other message, what the user typed (their own
/// images included) too.
///
/// A saved history holds it as a `user` message, since that is the only role providers take
/// images in; a front end showing a history uses this to show it as the tools' images, not as
/// something the user said.
#[must_use]
pub fn tool_images(message: &Message) -> Option<Vec<ToolImages>> {
    let (Role::User, Some(Content::Parts(parts))) = (&message.role, &message.content) else {
        return None;
    };
    let mut calls: Vec<ToolImages> = Vec::new();
    for part in parts {
        match part["type"].as_str() {
            Some("text") => {
                let (call_id, tool) = part["text"]
                    .as_str()?
                    .strip_prefix(HEADER_START)?
                    .strip_suffix(HEADER_END)?
                    .rsplit_once(HEADER_NAME)?;
                if calls.last().is_some_and(|c| c.count == 0) {
                    return None;
                }
                calls.push(ToolImages {
                    call_id: call_id.to_owned(),
                    tool: tool.to_owned(),
                    count: 0,
                    bytes: 0,
                });
            }
            Some("image_url") => {
                let call = calls.last_mut()?;
                call.count += 1;
                call.bytes += part["image_url"]["url"].as_str().map_or(0, str::len);
            }
            _ => return None,
        }
    }
    calls.last().is_some_and(|c| c.count > 0).then_some(calls)
}

/// The image parts collected from one step's results.
#[derive(Debug, Default)]
pub(super) struct Attachments {
    parts: Vec<Value>,
}

impl Attachments {
    /// The text of the tool message for `output` (the result of call `id` of tool `name`),
    /// collecting its images when `mode` sends them.
    pub(super) fn take(
        &mut self,
        mode: ImageInputs,
        id: &str,
        name: &str,
        output: ToolOutput,
    ) -> String {
        if output.images.is_empty() {
            return output.content;
        }
        let note = match mode {
            ImageInputs::Placeholder => NOT_SHOWN_NOTE,
            ImageInputs::Parts => {
                self.parts.push(json!({
                    "type": "text",
                    "text": format!("{HEADER_START}{id}{HEADER_NAME}{name}{HEADER_END}"),
                }));
                for image in &output.images {
                    self.parts.push(json!({
                        "type": "image_url",
                        "image_url": {"url": image.data_url()},
                    }));
                }
                ATTACHED_NOTE
            }
        };
        let mut text = output.content;
        text.push_str("\n\n");
        text.push_str(note);
        text
    }

    /// The `user` message carrying the collected images, if any.
    pub(super) fn into_message(self) -> Option<Message> {
        if self.parts.is_empty() {
            return None;
        }
        let mut message = Message::user("");
        message.content = Some(Content::Parts(self.parts));
        Some(message)
    }
}
