//! Compaction: the conversation so far summarised by the model, and the history that follows.
//!
//! The summary request goes to the same model without tools: a system message
//! ([`SUMMARY_SYSTEM`]) and one user message holding a transcript of the history followed by
//! [`SUMMARY_PROMPT`]. A transcript rather than the raw messages, because some providers refuse
//! tool messages in a request that offers no tools, and because a transcript can be shortened
//! (long tool outputs cut in the middle, the oldest messages dropped) to fit the window even
//! when the history no longer does.
//!
//! The history after compaction is the summary (as a user message starting with
//! [`SUMMARY_HEADER`], with the user's earlier messages quoted), the user's latest message
//! verbatim, and the most recent steps after it that fit the budget.

use super::estimate::message_bytes;
use crate::wire::{Message, Role};

/// The system message of the summary request.
pub const SUMMARY_SYSTEM: &str = "You summarise a conversation between a user and a coding agent so that the agent can continue the work from the summary alone. Be factual and specific; do not call tools.";

/// The instructions after the transcript in the summary request.
pub const SUMMARY_PROMPT: &str = "The conversation above is about to be cut from the context window. Write a summary the agent will continue from, with these sections:

1. Goal: what the user asked for, with their constraints and preferences, in their words where it matters.
2. Decisions: what was decided, and why.
3. Files: the files read, created or changed, with what matters about each (paths exact).
4. Commands: the commands run and their results (pass or fail, key error messages verbatim).
5. Open problems: what is failing or unknown.
6. Next steps: what remains to be done, in order.

Be concise but keep every detail needed to continue: names, paths, numbers, error messages.";

/// The first line of the message that carries a summary in the compacted history.
pub const SUMMARY_HEADER: &str =
    "[Context compacted: the earlier conversation was replaced by this summary.]";

/// Introduces the user's earlier messages quoted in a summary message.
const EARLIER_MARKER: &str = "The user's earlier messages, verbatim:";

/// Tool outputs longer than this are cut in the middle in the transcript.
const TRANSCRIPT_TOOL_OUTPUT: usize = 4000;

/// Most of one earlier user message quoted in the summary message, and of all of them.
const QUOTED_USER_MESSAGE: usize = 2000;
const QUOTED_USER_TOTAL: usize = 8000;

/// Why a compaction could not be done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CompactError {
    /// The summary and the user's latest message alone are over the budget: nothing more can
    /// be dropped. Shorten the message, or use a model with a larger window.
    #[error(
        "the summary and your latest message alone take about {bytes} bytes, over the {budget} bytes that fit the context window; shorten the message or use a model with a larger window"
    )]
    CannotShrink {
        /// Bytes of the summary and the latest message.
        bytes: usize,
        /// The budget.
        budget: usize,
    },
    /// What every request carries besides the history (the system prompt and the tool
    /// definitions) leaves no room for any history: compacting cannot help. Offer fewer tools
    /// (an agent's `tools` map, an MCP server's `maxTools` or `maxToolBytes`, or disable the
    /// server), or use a model with a larger window.
    #[error(
        "the tool definitions alone take about {tool_bytes} bytes{shares} and the system prompt {system_bytes}, together over the {room} bytes that fit the context window before any conversation; offer fewer tools (an agent's `tools` map, or an MCP server's \"maxTools\" or \"maxToolBytes\", or disable it) or use a model with a larger window",
        shares = server_shares(servers)
    )]
    ToolsFillWindow {
        /// Bytes of all tool definitions.
        tool_bytes: usize,
        /// The MCP servers' shares of them (server name as in `mcp__SERVER__`, bytes), largest
        /// first.
        servers: Vec<(String, usize)>,
        /// Bytes of the system prompt.
        system_bytes: usize,
        /// Bytes the window has for requests below the compaction threshold.
        room: usize,
    },
}

/// ` (MCP server a: 900 bytes, b: 80)`, or nothing when no MCP server has tools.
fn server_shares(servers: &[(String, usize)]) -> String {
    if servers.is_empty() {
        return String::new();
    }
    let list: Vec<String> = servers
        .iter()
        .enumerate()
        .map(|(i, (name, bytes))| match i {
            0 => format!("MCP server {name}: {bytes} bytes"),
            _ => format!("{name}: {bytes}"),
        })
        .collect();
    format!(" ({})", list.join(", "))
}

/// The history after a compaction.
#[derive(Debug, Clone, PartialEq)]
pub struct Compacted {
    /// The new history (without the system prompt).
    pub messages: Vec<Message>,
    /// How many messages of the old history the summary replaced.
    pub summarized: usize,
}

/// The messages of the summary request for `history`, the transcript shortened to about
/// `budget_bytes`, with the user's extra `instructions` (from `/compact`) if any.
pub fn summary_messages(
    history: &[Message],
    instructions: Option<&str>,
    budget_bytes: usize,
) -> Vec<Message> {
    let mut entries: Vec<String> = history.iter().map(transcript_entry).collect();
    let total: usize = entries.iter().map(String::len).sum();
    let mut omitted = 0;
    if total > budget_bytes {
        // Drop the oldest entries after the first (the task) until the rest fits.
        let mut size = total;
        let mut drop_until = 1;
        while size > budget_bytes && drop_until < entries.len() {
            size -= entries[drop_until].len();
            drop_until += 1;
        }
        omitted = drop_until - 1;
        entries.drain(1..drop_until);
    }
    let mut transcript = String::from("<conversation>\n");
    for (n, entry) in entries.iter().enumerate() {
        if n == 1 && omitted > 0 {
            transcript.push_str(&format!(
                "[… {omitted} earlier messages omitted to fit the context window …]\n\n"
            ));
        }
        transcript.push_str(entry);
    }
    transcript.push_str("</conversation>\n\n");
    transcript.push_str(SUMMARY_PROMPT);
    if let Some(extra) = instructions.map(str::trim).filter(|s| !s.is_empty()) {
        transcript.push_str("\n\nThe user adds these instructions for the summary: ");
        transcript.push_str(extra);
    }
    vec![Message::system(SUMMARY_SYSTEM), Message::user(transcript)]
}

/// One message as transcript text.
fn transcript_entry(m: &Message) -> String {
    if crate::session::is_tool_images(m) {
        return tool_images_entry(m);
    }
    let mut s = format!("## {}", m.role);
    if m.role == Role::Tool {
        if let Some(id) = &m.tool_call_id {
            s.push_str(&format!(" (result of {id})"));
        }
    }
    s.push('\n');
    let text = m.text();
    if m.role == Role::Tool {
        s.push_str(&cut_middle(&text, TRANSCRIPT_TOOL_OUTPUT));
    } else {
        s.push_str(&text);
    }
    for c in &m.tool_calls {
        s.push_str(&format!(
            "\n[calls {} ({}) with {}]",
            c.function.name,
            c.id,
            cut_middle(&c.function.arguments, TRANSCRIPT_TOOL_OUTPUT)
        ));
    }
    s.push_str("\n\n");
    s
}

/// The message carrying a step's tool images (sent or pruned) as transcript text: labelled as
/// the tools' output, since its `user` role only says where providers take images, and its
/// images named rather than quoted.
fn tool_images_entry(m: &Message) -> String {
    let mut s = String::from("## tool (images)\n");
    match crate::session::tool_images(m) {
        Some(calls) => {
            s.push('[');
            for (n, call) in calls.iter().enumerate() {
                if n > 0 {
                    s.push_str("; ");
                }
                let images = if call.count == 1 { "image" } else { "images" };
                s.push_str(&format!(
                    "{} {images} returned by {} (`{}`)",
                    call.count, call.call_id, call.tool
                ));
            }
            s.push_str(", not shown here]");
        }
        // The stub pruning left names its calls already.
        None => s.push_str(&m.text()),
    }
    s.push_str("\n\n");
    s
}

/// `text` with its middle cut when longer than `max` bytes, saying how much was cut.
fn cut_middle(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut head = max / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - max / 2;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n[… {} bytes cut …]\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

/// The history after compaction: the summary message, the user's latest message verbatim (a
/// message carrying tools' images is not one), and
/// the most recent whole steps after it that fit `budget_bytes` (measured with
/// [`message_bytes`]). A step (an assistant message and its tool results) is kept or dropped
/// whole, and only a contiguous run of the latest steps is kept, so the result is valid
/// whenever `history` is.
pub fn compacted_history(
    history: &[Message],
    summary: &str,
    budget_bytes: usize,
) -> Result<Compacted, CompactError> {
    let latest_user = history.iter().rposition(is_users);
    let mut text = format!("{SUMMARY_HEADER}\n\n{}", summary.trim());
    let mut quoted = String::new();
    for m in history[..latest_user.unwrap_or(0)]
        .iter()
        .filter(|m| is_users(m))
    {
        let t = m.text();
        if t.starts_with(SUMMARY_HEADER) {
            // An earlier summary: carry its quotes over, so the task survives every compaction.
            if let Some(at) = t.find(EARLIER_MARKER) {
                quoted.push_str(&t[at + EARLIER_MARKER.len()..]);
            }
        } else {
            quoted.push_str("\n- ");
            quoted.push_str(&crate::text::shorten(&t, QUOTED_USER_MESSAGE));
        }
    }
    if !quoted.is_empty() {
        text.push_str("\n\n");
        text.push_str(EARLIER_MARKER);
        text.push_str(&crate::text::shorten(&quoted, QUOTED_USER_TOTAL));
    }
    let mut messages = vec![Message::user(text)];
    let tail_start = match latest_user {
        Some(i) => {
            messages.push(history[i].clone());
            i + 1
        }
        None => 0,
    };
    let base: usize = messages.iter().map(message_bytes).sum();
    if base > budget_bytes {
        return Err(CompactError::CannotShrink {
            bytes: base,
            budget: budget_bytes,
        });
    }
    // Step boundaries after the latest user message: each message starts one but a tool
    // result and the message carrying a step's images, which belong to the step before.
    let tail = &history[tail_start..];
    let mut room = budget_bytes - base;
    let mut keep_from = tail.len();
    let mut step_bytes = 0;
    for i in (0..tail.len()).rev() {
        step_bytes += message_bytes(&tail[i]);
        if tail[i].role == Role::Tool || crate::session::is_tool_images(&tail[i]) {
            continue;
        }
        if step_bytes > room {
            break;
        }
        room -= step_bytes;
        step_bytes = 0;
        keep_from = i;
    }
    messages.extend(tail[keep_from..].iter().cloned());
    Ok(Compacted {
        summarized: tail_start.saturating_sub(usize::from(latest_user.is_some())) + keep_from,
        messages,
    })
}

/// Whether `m` is a message of the user's own: a `user` message that is not the one carrying
/// a step's images ([`crate::session::tool_images`]), which only has that role because
/// providers take images in no other.
pub(crate) fn is_users(m: &Message) -> bool {
    m.role == Role::User && !crate::session::is_tool_images(m)
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;
