//! The two printers of `exec` over the same events: text for people, JSON lines for programs.

use crate::safe_text::{Sanitizer, safe};
use crate::style::Style;
use hrns_core::session::{CompactMethod, CompactReason, Event, ToolStatus};
use std::io::Write;

/// The first line of `--json` output: the schema version and what the run is.
#[derive(Debug, serde::Serialize)]
pub(crate) struct SessionStarted<'a> {
    /// Always `session_started`.
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    /// [`hrns_core::session::EVENT_SCHEMA_VERSION`].
    pub(crate) schema_version: u32,
    /// The saved session's id, for `--resume`; `null` when the session is not saved.
    pub(crate) session_id: Option<&'a str>,
    pub(crate) provider: &'a str,
    pub(crate) model: &'a str,
    pub(crate) agent: &'a str,
    pub(crate) cwd: &'a str,
}

impl<'a> SessionStarted<'a> {
    pub(crate) fn new(
        session_id: Option<&'a str>,
        provider: &'a str,
        model: &'a str,
        agent: &'a str,
        cwd: &'a str,
    ) -> Self {
        SessionStarted {
            kind: "session_started",
            schema_version: hrns_core::session::EVENT_SCHEMA_VERSION,
            session_id,
            provider,
            model,
            agent,
            cwd,
        }
    }

    /// Prints it as one JSON line.
    pub(crate) fn print(&self, out: &mut impl Write) {
        if let Ok(line) = serde_json::to_string(self) {
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }
}

/// Prints a usage or config error (one that ends the run before any turn) as one JSON line:
/// `{"type":"error","schema_version":…,"exit_code":2,"message":"…"}`.
pub(crate) fn print_json_error(exit_code: u8, message: &str, out: &mut impl Write) {
    let line = serde_json::json!({
        "type": "error",
        "schema_version": hrns_core::session::EVENT_SCHEMA_VERSION,
        "exit_code": exit_code,
        "message": message,
    });
    let _ = writeln!(out, "{}", crate::redact::redact(&line.to_string()));
    let _ = out.flush();
}

/// `1 line`, `2 lines`: a count with its noun in the right number.
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Shortens one line of text to `max` characters for a status line.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// Prints events for a person: answer text on stdout as it arrives, everything else on stderr.
#[derive(Debug)]
pub(crate) struct HumanPrinter {
    err: Style,
    /// Filters answer text on stdout when it is a terminal; `None` keeps piped output exact.
    out_filter: Option<Sanitizer>,
    /// Filters streamed reasoning on stderr.
    reasoning_filter: Sanitizer,
    /// Whether the last thing written to stdout ended a line.
    at_line_start: bool,
    in_reasoning: bool,
}

impl HumanPrinter {
    pub(crate) fn new() -> Self {
        use std::io::IsTerminal;
        HumanPrinter {
            err: Style::stderr(),
            out_filter: std::io::stdout().is_terminal().then(Sanitizer::new),
            reasoning_filter: Sanitizer::new(),
            at_line_start: true,
            in_reasoning: false,
        }
    }

    fn end_reasoning(&mut self, err: &mut impl Write) {
        if self.in_reasoning {
            let _ = writeln!(err);
            self.in_reasoning = false;
        }
    }

    fn end_text(&mut self, out: &mut impl Write) {
        if !self.at_line_start {
            let _ = writeln!(out);
            let _ = out.flush();
            self.at_line_start = true;
        }
    }

    /// Prints one event.
    pub(crate) fn print(&mut self, event: &Event, out: &mut impl Write, err: &mut impl Write) {
        let s = self.err;
        let redacted = redacted_event(event);
        let event = redacted.as_ref().unwrap_or(event);
        match event {
            Event::TextDelta { text } | Event::RefusalDelta { text } => {
                self.end_reasoning(err);
                let shown = match &mut self.out_filter {
                    Some(filter) => filter.filter(text),
                    None => text.into(),
                };
                let _ = out.write_all(shown.as_bytes());
                let _ = out.flush();
                self.at_line_start = text.ends_with('\n');
            }
            Event::ReasoningDelta { text } => {
                if !self.in_reasoning {
                    let _ = write!(err, "{}", s.dim("thinking: "));
                    self.in_reasoning = true;
                }
                let _ = write!(err, "{}", s.dim(&self.reasoning_filter.filter(text)));
            }
            Event::ToolCall {
                name, arguments, ..
            } => {
                self.end_reasoning(err);
                self.end_text(out);
                let _ = writeln!(
                    err,
                    "{} {} {}",
                    s.harness("●"),
                    s.tool(&safe(name)),
                    s.args(&one_line(&safe(arguments), 100))
                );
            }
            Event::ToolResult { status, output, .. } => {
                let first = output.content.lines().next().unwrap_or("");
                let lines = output.content.lines().count();
                let more = if lines > 1 {
                    format!(" (+{})", count(lines - 1, "line"))
                } else {
                    String::new()
                };
                let name = status_text(*status);
                let first = one_line(&safe(first), 100);
                // "denied by policy: Denied by policy: …" says it twice; the text alone will do.
                let repeats = first.to_lowercase().starts_with(&name);
                let mark = match status {
                    ToolStatus::Ok => s.ok("ok"),
                    _ if repeats => String::new(),
                    _ => s.error(&name),
                };
                let sep = if mark.is_empty() { "" } else { ": " };
                let _ = writeln!(err, "  {} {mark}{sep}{first}{more}", s.harness("⎿"));
            }
            Event::Retry {
                attempt,
                delay_ms,
                reason,
            } => {
                let _ = writeln!(
                    err,
                    "{}",
                    s.harness(&format!(
                        "retrying (attempt {attempt}) in {:.1} s: {}",
                        *delay_ms as f64 / 1000.0,
                        one_line(&safe(reason), 200)
                    ))
                );
            }
            Event::ContextCompacted { .. } => {
                if let Some(line) = compaction_text(event) {
                    let _ = writeln!(err, "{}", s.harness(&line));
                }
            }
            Event::OptionDropped { field, .. } => {
                let _ = writeln!(
                    err,
                    "{}",
                    s.harness(&format!(
                        "the provider rejected `{}`; sent again without it",
                        safe(field)
                    ))
                );
            }
            Event::TurnFinished { finish_reason, .. } => {
                self.end_reasoning(err);
                self.end_text(out);
                if let Some(reason) = finish_reason {
                    if reason.as_str() == "length" {
                        let _ = writeln!(
                            err,
                            "{}",
                            s.error("the answer was cut off by the token limit")
                        );
                    } else if reason.as_str() == "content_filter" {
                        let _ = writeln!(
                            err,
                            "{}",
                            s.error("the provider's content filter stopped the answer")
                        );
                    }
                }
            }
            Event::TurnFailed { error } => {
                self.end_reasoning(err);
                self.end_text(out);
                let _ = writeln!(err, "{} {}", s.error("error:"), safe(&error.to_string()));
            }
            Event::TurnCancelled => {
                self.end_reasoning(err);
                self.end_text(out);
                let _ = writeln!(err, "{}", s.harness("cancelled"));
            }
            _ => {}
        }
        let _ = err.flush();
    }
}

/// The event without secrets (`None` when it holds none): answer text can quote a key the user
/// typed, and this is the last stop before the terminal.
fn redacted_event(event: &Event) -> Option<Event> {
    let text = match event {
        Event::TextDelta { text }
        | Event::RefusalDelta { text }
        | Event::ReasoningDelta { text } => text,
        _ => {
            let json = serde_json::to_string(event).ok()?;
            return match crate::redact::redact(&json) {
                std::borrow::Cow::Borrowed(_) => None,
                std::borrow::Cow::Owned(clean) => serde_json::from_str(&clean).ok(),
            };
        }
    };
    match crate::redact::redact(text) {
        std::borrow::Cow::Borrowed(_) => None,
        std::borrow::Cow::Owned(clean) => Some(match event {
            Event::TextDelta { .. } => Event::TextDelta { text: clean },
            Event::RefusalDelta { .. } => Event::RefusalDelta { text: clean },
            _ => Event::ReasoningDelta { text: clean },
        }),
    }
}

/// The one line that reports a compaction, for `exec`'s stderr and the TUI; `None` for other
/// events.
pub(crate) fn compaction_text(event: &Event) -> Option<String> {
    let Event::ContextCompacted {
        reason,
        method,
        tokens_before,
        tokens_after,
        window,
        pruned,
        summarized_messages,
    } = event
    else {
        return None;
    };
    let why = match reason {
        CompactReason::Threshold => "the context was nearly full",
        CompactReason::Overflow => "the provider said the request was too long",
        CompactReason::Requested => "as asked",
        _ => "the context was nearly full",
    };
    let mut what = Vec::new();
    if !pruned.is_empty() {
        let bytes: usize = pruned.iter().map(|p| p.bytes).sum();
        what.push(format!(
            "pruned {} old tool output{} ({} KiB)",
            pruned.len(),
            if pruned.len() == 1 { "" } else { "s" },
            bytes.div_ceil(1024)
        ));
    }
    if *method == CompactMethod::Summarized {
        what.push(format!("summarised {summarized_messages} messages"));
    }
    let window = window.map_or(String::new(), |w| format!(" of {w}"));
    Some(format!(
        "context compacted ({why}): {}; ~{tokens_before} → ~{tokens_after} tokens{window}",
        what.join(", ")
    ))
}

/// What a status is called in a result line.
pub(crate) fn status_text(status: ToolStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
        .unwrap_or_else(|| "error".into())
}

/// Prints each event as one JSON line, without secrets.
pub(crate) fn print_json(event: &Event, out: &mut impl Write) {
    if let Ok(line) = serde_json::to_string(event) {
        let _ = writeln!(out, "{}", crate::redact::redact(&line));
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrns_core::tool::ToolOutput;

    #[test]
    fn human_output_separates_text_and_activity() {
        let mut p = HumanPrinter {
            err: Style::plain(),
            out_filter: None,
            reasoning_filter: Sanitizer::new(),
            at_line_start: true,
            in_reasoning: false,
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        for e in [
            Event::ReasoningDelta { text: "hmm".into() },
            Event::TextDelta { text: "Hel".into() },
            Event::TextDelta { text: "lo".into() },
            Event::ToolCall {
                id: "c".into(),
                name: "read_file".into(),
                arguments: "{\"path\":\n\"a\"}".into(),
            },
            Event::ToolResult {
                id: "c".into(),
                name: "read_file".into(),
                status: ToolStatus::DeniedByPolicy,
                output: ToolOutput::error("no\nmore"),
            },
        ] {
            p.print(&e, &mut out, &mut err);
        }
        assert_eq!(String::from_utf8(out).unwrap(), "Hello\n");
        let err = String::from_utf8(err).unwrap();
        assert!(err.contains("thinking: hmm\n"));
        assert!(err.contains("● read_file {\"path\": \"a\"}"), "{err}");
        assert!(err.contains("⎿ denied by policy: no (+1 line)"), "{err}");
    }

    #[test]
    fn one_line_cuts_long_text() {
        assert_eq!(one_line("a\n b", 10), "a b");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
