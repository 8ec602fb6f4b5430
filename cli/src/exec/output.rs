//! The two printers of `exec` over the same events: text for people, JSON lines for programs.

use crate::exec::batch::Batch;
use crate::term::safe_text::{Sanitizer, safe};
use crate::term::style::Style;
use hrns_core::plan::StepStatus;
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
    let _ = writeln!(out, "{}", crate::host::redact::redact(&line.to_string()));
    let _ = out.flush();
}

/// A saved RFC 3339 time (a session's start) in the local time zone, to the minute:
/// `2026-12-01 18:30`. Text that is not such a time is returned as it is.
pub(crate) fn local_time(saved: &str) -> String {
    in_zone(saved, &jiff::tz::TimeZone::system())
}

/// [`local_time`] in the time zone `tz` (`TZ`, else the system's, for [`local_time`]).
fn in_zone(saved: &str, tz: &jiff::tz::TimeZone) -> String {
    match saved.parse::<jiff::Timestamp>() {
        Ok(at) => at
            .to_zoned(tz.clone())
            .strftime("%Y-%m-%d %H:%M")
            .to_string(),
        Err(_) => saved.to_owned(),
    }
}

/// How a tool is named to people: `github › create_issue` for the tool of an MCP server, else
/// its name.
pub(crate) fn tool_label(name: &str) -> std::borrow::Cow<'_, str> {
    match hrns_core::mcp::naming::split_name(name) {
        Some((server, tool)) => format!("{server} › {tool}").into(),
        None => name.into(),
    }
}

/// How the message carrying tools' images is shown in a history (`[2 images from github ›
/// screenshot]`, one bracket per call): it is saved as a `user` message, but the user did not
/// say it.
pub(crate) fn tool_images_text(calls: &[hrns_core::session::ToolImages]) -> String {
    calls
        .iter()
        .map(|c| format!("[{} from {}]", count(c.count, "image"), tool_label(&c.tool)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `1 line`, `2 lines`: a count with its noun in the right number.
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// How a call is named above its result when other lines came between them: the tool and a
/// short form of its arguments (`read_file {"path": "a.rs"}`), or its id when it has none.
fn call_label(id: &str, name: &str, arguments: &str) -> String {
    let args = one_line(&safe(arguments), 40);
    let args = match args.as_str() {
        "" | "{}" => format!("(call {})", one_line(&safe(id), 24)),
        _ => args,
    };
    format!("{} {args}", safe(&tool_label(name)))
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
    /// The calls printed whose results have not come yet: id → how the call is named in its
    /// result's line (its tool and a short form of its arguments).
    open_calls: std::collections::HashMap<String, String>,
    /// The call whose line was the last thing printed: its result, printed right under it,
    /// needs no label. Any other result names its call, so that the results of parallel
    /// calls can be told apart.
    last_call: Option<String>,
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
            open_calls: Default::default(),
            last_call: None,
        }
    }

    fn end_reasoning<O: Write, E: Write>(&mut self, to: &mut Batch<O, E>) {
        if self.in_reasoning {
            to.err().push(b'\n');
            self.in_reasoning = false;
        }
    }

    fn end_text<O: Write, E: Write>(&mut self, to: &mut Batch<O, E>) {
        if !self.at_line_start {
            to.out().push(b'\n');
            self.at_line_start = true;
        }
    }

    /// Prints the answer text of a text or refusal delta into `to`: what [`HumanPrinter::print`]
    /// does with one, without looking at the event again (most events of a stream are these).
    pub(crate) fn print_text<O: Write, E: Write>(&mut self, text: &str, to: &mut Batch<O, E>) {
        self.last_call = None;
        self.end_reasoning(to);
        let out = to.out();
        match &mut self.out_filter {
            Some(filter) => out.extend_from_slice(filter.filter(text).as_bytes()),
            None => out.extend_from_slice(text.as_bytes()),
        }
        self.at_line_start = text.ends_with('\n');
    }

    /// Prints one event into `to`; the caller flushes it at the end of the batch.
    pub(crate) fn print<O: Write, E: Write>(&mut self, event: &Event, to: &mut Batch<O, E>) {
        if !shown(event) {
            return;
        }
        let s = self.err;
        let redacted = redacted_event(event);
        let event = redacted.as_ref().unwrap_or(event);
        // Only a call's own line keeps the place right above its result.
        let last_call = self.last_call.take();
        match event {
            Event::TextDelta { text } | Event::RefusalDelta { text } => self.print_text(text, to),
            Event::ReasoningDelta { text } => {
                if !self.in_reasoning {
                    let _ = write!(to.err(), "{}", s.dim("thinking: "));
                    self.in_reasoning = true;
                }
                let _ = write!(to.err(), "{}", s.dim(&self.reasoning_filter.filter(text)));
            }
            Event::ToolCall {
                id,
                name,
                arguments,
            } => {
                self.end_reasoning(to);
                self.end_text(to);
                let _ = writeln!(
                    to.err(),
                    "{} {} {}",
                    s.harness("●"),
                    s.tool(&safe(&tool_label(name))),
                    s.args(&one_line(&safe(arguments), 100))
                );
                self.open_calls
                    .insert(id.clone(), call_label(id, name, arguments));
                self.last_call = Some(id.clone());
            }
            Event::ToolResult {
                id,
                name,
                status,
                output,
            } => {
                let label = self.open_calls.remove(id);
                let label = if last_call.as_deref() == Some(id.as_str()) {
                    String::new()
                } else {
                    let label = label.unwrap_or_else(|| call_label(id, name, ""));
                    format!("{} · ", s.tool(&label))
                };
                let first = output.content.lines().next().unwrap_or("");
                let lines = output.content.lines().count();
                // Images are counted, never shown (their placeholders are in the text).
                let mut extras = Vec::new();
                if lines > 1 {
                    extras.push(format!("+{}", count(lines - 1, "line")));
                }
                if !output.images.is_empty() {
                    extras.push(count(output.images.len(), "image"));
                }
                let more = if extras.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", extras.join(", "))
                };
                let name = status_text(*status);
                let first = one_line(&safe(first), 100);
                // "denied by policy: Denied by policy: …" says it twice; the text alone will do.
                let repeats = first.to_lowercase().starts_with(&name);
                let mark = if *status == ToolStatus::Ok {
                    s.ok("ok")
                } else if repeats {
                    String::new()
                } else {
                    s.error(&name)
                };
                let sep = if mark.is_empty() { "" } else { ": " };
                let _ = writeln!(
                    to.err(),
                    "  {} {label}{mark}{sep}{first}{more}",
                    s.harness("⎿")
                );
            }
            Event::Retry {
                attempt,
                delay_ms,
                reason,
            } => {
                let _ = writeln!(
                    to.err(),
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
                    let _ = writeln!(to.err(), "{}", s.harness(&line));
                }
            }
            Event::ToolsChanged { .. } => {
                if let Some(line) = tools_changed_text(event) {
                    let _ = writeln!(to.err(), "{}", s.harness(&safe(&line)));
                }
            }
            Event::PlanUpdated { explanation, plan } => {
                self.end_reasoning(to);
                self.end_text(to);
                let _ = writeln!(to.err(), "{}", s.harness("plan:"));
                if let Some(e) = explanation {
                    let _ = writeln!(to.err(), "  {}", s.dim(&safe(&one_line(e, 200))));
                }
                for step in plan {
                    let line = format!(
                        "{} {}",
                        step.status.checkbox(),
                        safe(&one_line(&step.step, 200))
                    );
                    let line = match step.status {
                        StepStatus::Completed => s.dim(&line),
                        StepStatus::InProgress => s.tool(&line),
                        StepStatus::Pending => line,
                    };
                    let _ = writeln!(to.err(), "  {line}");
                }
            }
            Event::Checkpoint { skipped, .. } if !skipped.is_empty() => {
                self.end_text(to);
                let _ = writeln!(
                    to.err(),
                    "{}",
                    s.harness(&format!(
                        "checkpoint: left out (undo cannot restore them): {}",
                        one_line(&safe(&skipped.join(", ")), 300)
                    ))
                );
            }
            Event::CheckpointFailed { reason, .. } => {
                self.end_text(to);
                let _ = writeln!(
                    to.err(),
                    "{} {}",
                    s.error("warning:"),
                    s.harness(&format!(
                        "no checkpoint for this step, so undo cannot take it back: {}",
                        one_line(&safe(reason), 300)
                    ))
                );
            }
            Event::Hook { .. } => {
                self.end_reasoning(to);
                self.end_text(to);
                if let Some(line) = hook_text(event) {
                    let _ = writeln!(to.err(), "{}", s.harness(&safe(&line)));
                }
            }
            Event::OptionDropped { field, .. } => {
                let _ = writeln!(
                    to.err(),
                    "{}",
                    s.harness(&format!(
                        "the provider rejected `{}`; sent again without it",
                        safe(field)
                    ))
                );
            }
            Event::TurnFinished { finish_reason, .. } => {
                self.end_reasoning(to);
                self.end_text(to);
                if let Some(reason) = finish_reason {
                    if reason.as_str() == "length" {
                        let _ = writeln!(
                            to.err(),
                            "{}",
                            s.error("the answer was cut off by the token limit")
                        );
                    } else if reason.as_str() == "content_filter" {
                        let _ = writeln!(
                            to.err(),
                            "{}",
                            s.error("the provider's content filter stopped the answer")
                        );
                    }
                }
            }
            Event::TurnFailed { error } => {
                self.end_reasoning(to);
                self.end_text(to);
                let _ = writeln!(
                    to.err(),
                    "{} {}",
                    s.error("error:"),
                    safe(&error.to_string())
                );
            }
            Event::TurnCancelled => {
                self.end_reasoning(to);
                self.end_text(to);
                let _ = writeln!(to.err(), "{}", s.harness("cancelled"));
            }
            // A subagent's activity, indented under the parent's `task` line.
            Event::Child(child) => {
                self.end_reasoning(to);
                crate::host::subagents::print_human(child, s, to.err());
            }
            Event::TurnStarted { .. }
            | Event::RequestStarted { .. }
            | Event::ToolCallStreaming { .. }
            | Event::ApprovalRequested { .. }
            | Event::Usage { .. }
            | Event::Message { .. }
            | Event::Checkpoint { .. } => {}
        }
    }
}

/// Whether the human output shows anything of `event` (the others are not even redacted:
/// a `Message` can be as large as the whole answer).
fn shown(event: &Event) -> bool {
    // A checkpoint is said only when it left something out: most come between a call and its
    // result, which keeps its place right under the call.
    if let Event::Checkpoint { skipped, .. } = event {
        return !skipped.is_empty();
    }
    // A subagent's streamed pieces are not shown (its lines say what it does).
    if let Event::Child(child) = event {
        return !child.event.is_delta();
    }
    matches!(
        event,
        Event::TextDelta { .. }
            | Event::RefusalDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::ToolCall { .. }
            | Event::ToolResult { .. }
            | Event::Retry { .. }
            | Event::ContextCompacted { .. }
            | Event::OptionDropped { .. }
            | Event::ToolsChanged { .. }
            | Event::Hook { .. }
            | Event::PlanUpdated { .. }
            | Event::Checkpoint { .. }
            | Event::CheckpointFailed { .. }
            | Event::TurnFinished { .. }
            | Event::TurnFailed { .. }
            | Event::TurnCancelled
    )
}

/// The event without secrets (`None` when it holds none), for the events whose text is cut
/// or reflowed before it is shown (a cut secret might be too short to recognise afterwards).
/// Streamed text is shown as it came: the batch redacts it on its way out
/// ([`Batch::flush`]).
fn redacted_event(event: &Event) -> Option<Event> {
    match event {
        Event::TextDelta { .. } | Event::RefusalDelta { .. } | Event::ReasoningDelta { .. } => None,
        _ => {
            let json = serde_json::to_string(event).ok()?;
            match crate::host::redact::redact(&json) {
                std::borrow::Cow::Borrowed(_) => None,
                std::borrow::Cow::Owned(clean) => serde_json::from_str(&clean).ok(),
            }
        }
    }
}

/// The one line that reports a hook that ran: its event, its command, what became of it and
/// why, and how long it took — for `exec`'s stderr and the TUI; `None` for other events.
pub(crate) fn hook_text(event: &Event) -> Option<String> {
    let Event::Hook {
        event,
        hook,
        outcome,
        duration_ms,
        message,
        ..
    } = event
    else {
        return None;
    };
    let outcome = serde_json::to_value(outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let why = message
        .as_deref()
        .map(|m| format!(": {}", one_line(m, 200)))
        .unwrap_or_default();
    Some(format!(
        "hook {event} `{}` {outcome}{why} ({duration_ms} ms)",
        one_line(hook, 60)
    ))
}

/// The one line that reports a change of the offered tools (an MCP server stopped or changed
/// its tools), for `exec`'s stderr and the TUI; `None` for other events.
pub(crate) fn tools_changed_text(event: &Event) -> Option<String> {
    let Event::ToolsChanged {
        reason,
        added,
        removed,
        updated,
    } = event
    else {
        return None;
    };
    /// Names shown in full; the rest are counted.
    const SHOWN: usize = 5;
    let names = |list: &[String]| {
        let mut text = list[..list.len().min(SHOWN)].join(", ");
        if list.len() > SHOWN {
            text.push_str(&format!(" and {} more", list.len() - SHOWN));
        }
        text
    };
    let mut line = reason.clone();
    for (list, what) in [
        (added, "now offered"),
        (removed, "no longer offered"),
        (updated, "changed"),
    ] {
        if !list.is_empty() {
            line.push_str(&format!("; {what}: {}", names(list)));
        }
    }
    Some(line)
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

/// Appends `event` as one JSON line to `out` (the batch's stdout buffer), encoded in place;
/// the batch takes secrets out of all its lines at once when it writes them. A delta is
/// encoded as the event stream's one encoding ([`hrns_core::event_json`]) writes it.
pub(crate) fn print_json(event: &Event, out: &mut Vec<u8>) {
    if let Some((kind, text)) = hrns_core::event_json::DeltaKind::of(event) {
        hrns_core::event_json::delta_line(kind, text, out);
        return;
    }
    let start = out.len();
    if serde_json::to_writer(&mut *out, event).is_err() {
        out.truncate(start);
        return;
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrns_core::tool::ToolOutput;

    #[test]
    fn delta_lines_are_what_serde_writes_for_hostile_text() {
        // Every ASCII character alone and between others, then strings of a hostile alphabet.
        let mut texts: Vec<String> = (0u8..=0x7f)
            .flat_map(|b| {
                let c = char::from(b);
                [c.to_string(), format!("a{c}b"), format!("{c}{c}")]
            })
            .collect();
        let alphabet = [
            '"', '\\', '\n', '\r', '\t', '\u{0}', '\u{8}', '\u{c}', '\u{1b}', '\u{1f}', '\u{7f}',
            '\u{2028}', '\u{2029}', '/', 'é', '😀', '\u{feff}', '\u{fffd}', 'x', ' ',
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..400 {
            let text: String = (0..len % 23)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize]
                })
                .collect();
            texts.push(text);
        }
        texts.push(String::new());
        for text in texts {
            for event in [
                Event::TextDelta {
                    text: text.as_str().into(),
                },
                Event::ReasoningDelta {
                    text: text.as_str().into(),
                },
                Event::RefusalDelta {
                    text: text.as_str().into(),
                },
            ] {
                let mut ours = Vec::new();
                print_json(&event, &mut ours);
                let mut serde = serde_json::to_vec(&event).unwrap();
                serde.push(b'\n');
                assert_eq!(
                    String::from_utf8(ours).unwrap(),
                    String::from_utf8(serde).unwrap(),
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn saved_times_are_shown_in_the_time_zone_to_the_minute() {
        let plus3 = jiff::tz::TimeZone::posix("XYZ-3").unwrap();
        let minus5 = jiff::tz::TimeZone::posix("EST5EDT,M3.2.0,M11.1.0").unwrap();
        assert_eq!(in_zone("2026-12-01T22:30:59Z", &plus3), "2026-12-02 01:30");
        assert_eq!(in_zone("2026-12-01T02:05:00Z", &minus5), "2026-11-30 21:05");
        assert_eq!(
            in_zone("2026-07-01T02:05:00Z", &minus5),
            "2026-06-30 22:05",
            "DST"
        );
        for odd in ["", "yesterday", "2026-13-01T00:00:00Z"] {
            assert_eq!(in_zone(odd, &plus3), odd);
        }
    }

    #[test]
    fn human_output_separates_text_and_activity() {
        let mut p = HumanPrinter {
            err: Style::plain(),
            out_filter: None,
            reasoning_filter: Sanitizer::new(),
            at_line_start: true,
            in_reasoning: false,
            open_calls: Default::default(),
            last_call: None,
        };
        let mut to = Batch::new(Vec::new(), Vec::new());
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
            p.print(&e, &mut to);
        }
        let (out, err) = to.into_parts();
        assert_eq!(String::from_utf8(out).unwrap(), "Hello\n");
        let err = String::from_utf8(err).unwrap();
        assert!(err.contains("thinking: hmm\n"));
        assert!(err.contains("● read_file {\"path\": \"a\"}"), "{err}");
        assert!(err.contains("⎿ denied by policy: no (+1 line)"), "{err}");
    }

    #[test]
    fn results_of_parallel_calls_name_their_calls() {
        let mut p = HumanPrinter {
            err: Style::plain(),
            out_filter: None,
            reasoning_filter: Sanitizer::new(),
            at_line_start: true,
            in_reasoning: false,
            open_calls: Default::default(),
            last_call: None,
        };
        let call = |id: &str, args: &str| Event::ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: args.into(),
        };
        let result = |id: &str, text: &str| Event::ToolResult {
            id: id.into(),
            name: "read_file".into(),
            status: ToolStatus::Ok,
            output: ToolOutput::ok(text),
        };
        let mut to = Batch::new(Vec::new(), Vec::new());
        for e in [
            call("c1", r#"{"path": "a.rs"}"#),
            call("c2", r#"{"path": "b.rs"}"#),
            call("c3", "{}"),
            result("c2", "B"),
            result("c1", "A"),
            result("c3", "C"),
            // A lone call: its result stays right under it, unlabelled.
            call("c4", r#"{"path": "d.rs"}"#),
            result("c4", "D"),
        ] {
            p.print(&e, &mut to);
        }
        let (_, err) = to.into_parts();
        let err = String::from_utf8(err).unwrap();
        let results: Vec<&str> = err.lines().filter(|l| l.contains('⎿')).collect();
        assert_eq!(
            results,
            [
                r#"  ⎿ read_file {"path": "b.rs"} · ok: B"#,
                r#"  ⎿ read_file {"path": "a.rs"} · ok: A"#,
                "  ⎿ read_file (call c3) · ok: C",
                "  ⎿ ok: D",
            ],
            "{err}"
        );
        assert!(p.open_calls.is_empty(), "nothing kept once answered");
    }

    /// A writer that logs each `write` call, tagged with its stream, into a log shared by
    /// both streams (what a terminal showing both would see, in order).
    #[derive(Clone)]
    struct Logged(char, std::rc::Rc<std::cell::RefCell<WriteLog>>);

    /// Each write: its stream (`o` or `e`) and its bytes.
    type WriteLog = Vec<(char, Vec<u8>)>;

    impl Write for Logged {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.1.borrow_mut().push((self.0, buf.to_vec()));
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn many_events() -> Vec<Event> {
        let mut events = vec![Event::ReasoningDelta {
            text: "think".into(),
        }];
        for i in 0..500 {
            events.push(Event::TextDelta {
                text: format!("w{i}{}", if i % 50 == 49 { "\n" } else { " " }).into(),
            });
            if i == 250 {
                events.push(Event::ToolCall {
                    id: "c".into(),
                    name: "read_file".into(),
                    arguments: "{}".into(),
                });
            }
        }
        events.push(Event::TurnCancelled);
        events
    }

    /// Writes `events` in batches of `size`, flushing after each; returns the shared log.
    fn print_in_batches(events: &[Event], size: usize, json: bool) -> WriteLog {
        let log = std::rc::Rc::default();
        let mut to = Batch::new(
            Logged('o', std::rc::Rc::clone(&log)),
            Logged('e', std::rc::Rc::clone(&log)),
        );
        let mut p = HumanPrinter {
            err: Style::plain(),
            out_filter: Some(Sanitizer::new()),
            reasoning_filter: Sanitizer::new(),
            at_line_start: true,
            in_reasoning: false,
            open_calls: Default::default(),
            last_call: None,
        };
        for batch in events.chunks(size) {
            for e in batch {
                if json {
                    print_json(e, to.out());
                } else {
                    p.print(e, &mut to);
                }
            }
            to.flush();
        }
        drop(to);
        std::rc::Rc::try_unwrap(log).unwrap().into_inner()
    }

    /// The bytes of each stream and the order of stream switches, without write boundaries.
    fn seen(log: &[(char, Vec<u8>)]) -> WriteLog {
        let mut merged: WriteLog = Vec::new();
        for (stream, bytes) in log {
            match merged.last_mut() {
                Some((s, b)) if s == stream => b.extend_from_slice(bytes),
                _ => merged.push((*stream, bytes.clone())),
            }
        }
        merged
    }

    #[test]
    fn batching_changes_the_number_of_writes_not_the_bytes() {
        let events = many_events();
        for json in [false, true] {
            let one_by_one = print_in_batches(&events, 1, json);
            let batched = print_in_batches(&events, 64, json);
            assert_eq!(seen(&one_by_one), seen(&batched), "json: {json}");
            assert!(one_by_one.len() > 400, "{}", one_by_one.len());
            // One write per batch, plus one per switch between stdout and stderr.
            assert!(
                batched.len() <= events.len().div_ceil(64) + 4,
                "{}",
                batched.len()
            );
        }
        let text: Vec<u8> = seen(&print_in_batches(&events, 64, false))
            .into_iter()
            .filter(|(s, _)| *s == 'o')
            .flat_map(|(_, b)| b)
            .collect();
        assert!(String::from_utf8(text).unwrap().starts_with("w0 w1 w2 "));
    }

    #[test]
    fn a_secret_spread_over_deltas_of_one_batch_is_redacted() {
        // A value no other test prints: the set of secrets is process-wide.
        let key = "sk-batch-test-0123456789abcdef";
        crate::host::redact::remember(&{
            let mut s = hrns_core::secrets::Secrets::new();
            s.add(key);
            s
        });
        // Pieces shorter than a recognisable fragment: only the batch as a whole shows it.
        let text = format!("key: {key}.\n");
        let events: Vec<Event> = text
            .as_bytes()
            .chunks(5)
            .map(|t| Event::TextDelta {
                text: String::from_utf8(t.to_vec()).unwrap().into(),
            })
            .collect();
        let printed = |events: &[Event], json: bool| {
            let log = print_in_batches(events, events.len(), json);
            String::from_utf8(log.into_iter().flat_map(|(_, b)| b).collect()).unwrap()
        };
        let out = printed(&events, false);
        assert_eq!(out, "key: [redacted].\n");
        // JSON lines hold one delta each; a whole secret in one of them goes too.
        let whole = [Event::TextDelta { text: text.into() }];
        let out = printed(&whole, true);
        assert_eq!(
            out,
            "{\"type\":\"text_delta\",\"text\":\"key: [redacted].\\n\"}\n"
        );
    }

    #[test]
    fn one_line_cuts_long_text() {
        assert_eq!(one_line("a\n b", 10), "a b");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
