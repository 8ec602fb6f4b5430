//! Images from tool results on their way into the history: as `image_url` parts of one
//! `user` message after a step's tool messages, or as the placeholder text alone
//! ([`ImageInputs`] says which, and why).

use super::ImageInputs;
use crate::tool::ToolOutput;
use crate::wire::{Content, Message};
use serde_json::{Value, json};

/// Added to a tool message whose images follow in the `user` message.
pub(super) const ATTACHED_NOTE: &str = "(The images follow in the next user message.)";

/// Added to a tool message whose images the model is not sent.
pub(super) const NOT_SHOWN_NOTE: &str =
    "(The images are not shown: this model is not set up to take images.)";

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
                    "text": format!("The images returned by the call {id} (`{name}`), in order:"),
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
