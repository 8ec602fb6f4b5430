//! The lines the interactive UI shows around the answer: banner, status line, tool calls and
//! results, approval prompts, reasoning, errors, retries and the spinner. Pure functions of
//! their inputs; the colours follow the original's scheme (the harness blue, errors red, tool
//! names red with yellow arguments, reasoning grey).
//!
//! Functions that take a `width` return lines that fit it; the others return logical lines
//! for the caller to [`wrap`](super::text::wrap).

use super::markdown::highlight::CodeHighlighter;
use super::text::{self, Color, Line, SpanStyle, expand_tabs, truncate, wrap_prefixed};
use crate::sandbox::escalate::Unsandboxed;
use hrns_core::session::{Approval, ToolStatus};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::time::Duration;

const HARNESS: SpanStyle = SpanStyle::fg(Color::Blue);
const ERROR: SpanStyle = SpanStyle::fg(Color::Red);
const TOOL: SpanStyle = SpanStyle::fg(Color::Red);
const ARGS: SpanStyle = SpanStyle::fg(Color::Yellow);
const OK: SpanStyle = SpanStyle::fg(Color::Green);
const REASONING: SpanStyle = SpanStyle::fg(Color::Grey);
const DIM: SpanStyle = SpanStyle::PLAIN.dim();
const PLAIN: SpanStyle = SpanStyle::PLAIN;

/// The prompt in front of the editor.
pub(crate) fn prompt() -> Line {
    Line::styled("› ", HARNESS.bold())
}

/// The lines shown when the UI opens.
pub(crate) fn banner(provider: &str, model: &str, agent: &str, version: &str) -> Vec<Line> {
    let mut title = Line::styled("hrns", HARNESS.bold());
    title.push(format!(" {version}"), DIM);
    let mut setup = Line::new();
    for (i, (label, value)) in [("provider", provider), ("model", model), ("agent", agent)]
        .into_iter()
        .enumerate()
    {
        if i > 0 {
            setup.push(" · ", DIM);
        }
        setup.push(format!("{label} "), DIM);
        setup.push(value, HARNESS);
    }
    let help = Line::styled(
        "/help for commands · Alt+Enter for a new line · Esc interrupts · Ctrl-D quits",
        DIM,
    );
    vec![title, setup, help]
}

/// Which instruction files the system prompt includes, for the banner.
pub(crate) fn instructions_line(files: &[hrns_core::instructions::InstructionFile]) -> Line {
    let mut line = Line::styled("instructions ", DIM);
    if files.is_empty() {
        line.push("none (no AGENTS.md found; /init writes one)", DIM);
    }
    for (i, f) in files.iter().enumerate() {
        if i > 0 {
            line.push(" · ", DIM);
        }
        line.push(f.path.clone(), HARNESS);
    }
    line
}

/// Tokens as people read them: `950`, `12.3k`, `1.2M`.
pub(crate) fn format_tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// `provider · model · agent · N tokens`, dim, in at most `width` columns: a long model name
/// is shortened first, then the whole line.
pub(crate) fn status_line(
    provider: &str,
    model: &str,
    agent: &str,
    tokens: u64,
    context_percent: Option<u64>,
    cost: Option<&str>,
    width: usize,
) -> Line {
    let mut tokens = format!("{} tokens", format_tokens(tokens));
    if let Some(percent) = context_percent {
        tokens.push_str(&format!(" · ctx {percent}%"));
    }
    if let Some(cost) = cost {
        tokens.push_str(&format!(" · {cost}"));
    }
    let fixed = text::width(provider) + text::width(agent) + text::width(&tokens) + 9;
    let room = width.saturating_sub(fixed).max(8);
    let model = text::truncate_str(model, room);
    let line = Line::styled(format!("{provider} · {model} · {agent} · {tokens}"), DIM);
    truncate(&line, width)
}

/// The user's message as it goes into the scrollback, behind the prompt.
pub(crate) fn user_message(message: &str, width: usize) -> Vec<Line> {
    let rest = Line::plain("  ");
    message
        .split('\n')
        .enumerate()
        .flat_map(|(i, l)| {
            let first = if i == 0 { prompt() } else { rest.clone() };
            wrap_prefixed(&Line::plain(expand_tabs(l, 4)), width, &first, &rest)
        })
        .collect()
}

/// A JSON object's entries in the order they were written.
#[derive(Debug)]
struct Entries(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        d.deserialize_map(V)
    }
}

/// A tool's arguments in one short line: a single argument's value as it is
/// (`src/main.rs`), several as `key=value` in the order the model wrote them (strings with
/// spaces quoted); arguments that are not a JSON object are shown flattened.
pub(crate) fn short_arguments(arguments: &str) -> String {
    let text = match serde_json::from_str::<Entries>(arguments) {
        Ok(Entries(entries)) if entries.len() == 1 => match &entries[0].1 {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        },
        Ok(Entries(entries)) => entries
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) if !s.contains(char::is_whitespace) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        Err(_) => arguments.to_owned(),
    };
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `● name arguments`: the name red, the arguments yellow, shortened to one line of `width`.
pub(crate) fn tool_call_line(name: &str, arguments: &str, width: usize) -> Line {
    let mut line = Line::styled("● ", HARNESS);
    line.push(crate::exec::output::tool_label(name), TOOL);
    let args = short_arguments(arguments);
    if !args.is_empty() {
        line.push(" ", PLAIN);
        line.push(args, ARGS);
    }
    truncate(&line, width)
}

/// `⎿ ok` (green) or `⎿ error` (red, or the status that stopped the call), then up to
/// `max_lines` first lines of the output, dimmed and cut to `width`, and `… +N lines` for
/// the rest.
#[cfg(test)]
pub(crate) fn tool_result_lines(
    status: ToolStatus,
    output: &str,
    max_lines: usize,
    width: usize,
) -> Vec<Line> {
    tool_result_lines_as(status, output, max_lines, width, None)
}

/// The result lines with the lines of a file `read_file` returned coloured by `code` (the
/// highlighter of the file's language): `read_file` numbers its lines `     7\tcode`, so the
/// number stays dim and the code after the tab is highlighted.
pub(crate) fn tool_result_lines_as(
    status: ToolStatus,
    output: &str,
    max_lines: usize,
    width: usize,
    mut code: Option<CodeHighlighter>,
) -> Vec<Line> {
    let output = output.trim_end();
    let total = if output.is_empty() {
        0
    } else {
        output.lines().count()
    };
    let mut head = Line::styled("  ⎿ ", DIM);
    match status {
        ToolStatus::Ok => head.push("ok", OK),
        other => head.push(crate::exec::output::status_text(other), ERROR),
    }
    if max_lines == 0 && total > 0 {
        head.push(
            format!(" ({})", crate::exec::output::count(total, "line")),
            DIM,
        );
    }
    let mut lines = vec![truncate(&head, width)];
    for l in output.lines().take(max_lines) {
        let numbered = l
            .split_once('\t')
            .filter(|(n, _)| !n.trim().is_empty() && n.trim().bytes().all(|b| b.is_ascii_digit()));
        let line = match (code.as_mut(), numbered, status) {
            (Some(h), Some((number, source)), ToolStatus::Ok) if h.is_on() => {
                let mut line = Line::styled(format!("    {number}  "), DIM);
                line.extend(h.line(&expand_tabs(source, 4)));
                line
            }
            _ => Line::styled(format!("    {}", expand_tabs(l, 4)), DIM),
        };
        lines.push(truncate(&line, width));
    }
    if max_lines > 0 && total > max_lines {
        let more = Line::styled(
            format!(
                "    … +{}",
                crate::exec::output::count(total - max_lines, "line")
            ),
            DIM,
        );
        lines.push(truncate(&more, width));
    }
    lines
}

/// How many argument lines an approval prompt shows.
const APPROVAL_DETAIL_LINES: usize = 12;

/// The question under a tool line that waits for approval. Arguments too long for the tool
/// line are shown first, each value on its own lines, wrapped, up to a dozen rows. With
/// `unsandboxed` offered, `[u]nsandboxed, once` is one of the answers.
pub(crate) fn approval_prompt(
    name: &str,
    arguments: &str,
    unsandboxed: Unsandboxed,
    width: usize,
) -> Vec<Line> {
    let mut lines = Vec::new();
    let short = short_arguments(arguments);
    if text::width(name) + text::width(&short) + 3 > width || arguments.contains("\\n") {
        let detail: Vec<String> = match serde_json::from_str::<Entries>(arguments) {
            Ok(Entries(entries)) => entries
                .into_iter()
                .flat_map(|(k, v)| {
                    let value = match v {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    let mut out = vec![format!("{k}:")];
                    out.extend(value.lines().map(|l| format!("  {}", expand_tabs(l, 4))));
                    out
                })
                .collect(),
            Err(_) => arguments.lines().map(str::to_owned).collect(),
        };
        let indent = Line::plain("    ");
        let rows: Vec<Line> = detail
            .iter()
            .flat_map(|l| wrap_prefixed(&Line::styled(l.as_str(), ARGS), width, &indent, &indent))
            .collect();
        let shown = rows.len().min(APPROVAL_DETAIL_LINES);
        lines.extend(rows[..shown].iter().map(|l| truncate(l, width)));
        if rows.len() > shown {
            let more = format!("    … +{} lines", rows.len() - shown);
            lines.push(truncate(&Line::styled(more, DIM), width));
        }
    }
    let mut q = Line::styled("  Allow ", HARNESS);
    q.push(crate::exec::output::tool_label(name), TOOL);
    q.push("? ", HARNESS);
    let keys: &[(&str, &str)] = match unsandboxed {
        Unsandboxed::Offered => &[
            ("y", "es"),
            ("a", "lways"),
            ("u", "nsandboxed, once"),
            ("n", "o"),
        ],
        Unsandboxed::NotOffered => &[("y", "es"), ("a", "lways"), ("n", "o")],
    };
    for (i, &(key, rest)) in keys.iter().enumerate() {
        if i > 0 {
            q.push(" / ", DIM);
        }
        q.push(format!("[{key}]"), HARNESS.bold());
        q.push(rest, HARNESS);
    }
    lines.extend(wrap_prefixed(&q, width, &Line::new(), &Line::plain("  ")));
    lines
}

/// What a key answers to an approval prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// An answer for the session.
    Approval(Approval),
    /// Once, without the sandbox (only where it was offered).
    OnceUnsandboxed,
}

/// The answer a key gives to an approval prompt: `y` once, `a` always for this tool in this
/// session, `u` once without the sandbox where `unsandboxed` is offered, `n` deny (the caller
/// may then ask for a reason for the model). Other keys: `None`.
pub(crate) fn approval_answer(key: char, unsandboxed: Unsandboxed) -> Option<Answer> {
    match key.to_ascii_lowercase() {
        'y' => Some(Answer::Approval(Approval::Once)),
        'a' => Some(Answer::Approval(Approval::AlwaysThisTool)),
        'u' if unsandboxed == Unsandboxed::Offered => Some(Answer::OnceUnsandboxed),
        'n' => Some(Answer::Approval(Approval::Deny { reason: None })),
        _ => None,
    }
}

/// Reasoning folded into one grey line: `thinking · N words · first sentence`.
pub(crate) fn reasoning_summary(reasoning: &str, width: usize) -> Line {
    let words = reasoning.split_whitespace().count();
    let mut s = String::from("✻ thinking");
    if words > 0 {
        let noun = if words == 1 { "word" } else { "words" };
        s.push_str(&format!(
            " · {words} {noun} · {}",
            first_sentence(reasoning)
        ));
    } else {
        s.push('…');
    }
    truncate(&Line::styled(s, REASONING.italic()), width)
}

/// Reasoning unfolded: grey lines wrapped to `width`.
pub(crate) fn reasoning_lines(reasoning: &str, width: usize) -> Vec<Line> {
    reasoning
        .trim()
        .lines()
        .flat_map(|l| text::wrap(&Line::styled(expand_tabs(l, 4), REASONING.italic()), width))
        .collect()
}

/// The text up to the end of its first sentence (or line), flattened.
fn first_sentence(s: &str) -> String {
    let s = s.trim_start();
    let line = s.lines().next().unwrap_or("");
    let end = line
        .char_indices()
        .find(|&(i, c)| {
            matches!(c, '。' | '！' | '？')
                || (matches!(c, '.' | '!' | '?')
                    && line[i + 1..].chars().next().is_none_or(char::is_whitespace))
        })
        .map_or(line.len(), |(i, c)| i + c.len_utf8());
    line[..end].split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An error, red, on one line.
pub(crate) fn error_line(message: &str) -> Line {
    let flat = message.split_whitespace().collect::<Vec<_>>().join(" ");
    Line::styled(format!("error: {flat}"), ERROR)
}

/// A retry announcement with its delay.
pub(crate) fn retry_line(attempt: u32, delay_ms: u64, reason: &str) -> Line {
    let flat = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    Line::styled(
        format!(
            "retrying (attempt {attempt}) in {:.1} s: {flat}",
            delay_ms as f64 / 1000.0
        ),
        HARNESS,
    )
}

/// A message from the harness itself (a switched model, a cancelled turn).
/// The model's plan as a checklist: `☑` done (dimmed), `◐` in progress (bold), `☐` to do.
pub(crate) fn plan_lines(
    explanation: Option<&str>,
    plan: &[hrns_core::plan::PlanStep],
    width: usize,
) -> Vec<Line> {
    use hrns_core::plan::StepStatus;
    let mut out = vec![text::truncate(&Line::styled("Plan", HARNESS.bold()), width)];
    if let Some(e) = explanation.map(str::trim).filter(|e| !e.is_empty()) {
        let l = Line::styled(e, SpanStyle::PLAIN.dim());
        out.extend(text::wrap_prefixed(
            &l,
            width,
            &Line::plain("  "),
            &Line::plain("  "),
        ));
    }
    for step in plan {
        let (mark, style) = match step.status {
            StepStatus::Completed => ("☑ ", SpanStyle::PLAIN.dim()),
            StepStatus::InProgress => ("◐ ", SpanStyle::PLAIN.bold()),
            StepStatus::Pending => ("☐ ", SpanStyle::PLAIN),
        };
        let mut first = Line::plain("  ");
        first.push(mark, style);
        let l = Line::styled(step.step.trim(), style);
        out.extend(text::wrap_prefixed(&l, width, &first, &Line::plain("    ")));
    }
    out
}

pub(crate) fn info_line(message: &str) -> Line {
    Line::styled(message, HARNESS)
}

const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/// How long each spinner frame shows.
const FRAME: Duration = Duration::from_millis(80);

/// The spinner frame and the time waited, such as `⠋ 1.2s` or `⠋ 2m 05s`.
pub(crate) fn spinner_frame(elapsed: Duration) -> String {
    let frame = SPINNER[(elapsed.as_millis() / FRAME.as_millis()) as usize % SPINNER.len()];
    let secs = elapsed.as_secs();
    if secs < 60 {
        format!("{frame} {:.1}s", elapsed.as_secs_f64())
    } else {
        format!("{frame} {}m {:02}s", secs / 60, secs % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[Line]) -> Vec<String> {
        lines.iter().map(Line::plain_text).collect()
    }

    #[test]
    fn banner_and_status() {
        let b = plain(&banner("openai", "gpt-4o", "Builder", "0.1.0"));
        assert_eq!(b[0], "hrns 0.1.0");
        assert_eq!(b[1], "provider openai · model gpt-4o · agent Builder");
        let s = status_line("openai", "gpt-4o", "Builder", 12_345, None, None, 80);
        assert_eq!(s.plain_text(), "openai · gpt-4o · Builder · 12.3k tokens");
        let s = status_line("openai", "gpt-4o", "Builder", 12_345, Some(42), None, 80);
        assert_eq!(
            s.plain_text(),
            "openai · gpt-4o · Builder · 12.3k tokens · ctx 42%"
        );
        let s = status_line(
            "openai",
            "gpt-4o",
            "Builder",
            12_345,
            Some(42),
            Some("$0.0123"),
            80,
        );
        assert_eq!(
            s.plain_text(),
            "openai · gpt-4o · Builder · 12.3k tokens · ctx 42% · $0.0123"
        );
        // A long model name is shortened first.
        let model = "accounts/fireworks/models/llama-v3p1-405b-instruct";
        let s = status_line("fw", model, "Builder", 5, None, None, 50).plain_text();
        assert!(s.ends_with("· Builder · 5 tokens"), "{s}");
        assert!(s.contains('…'));
        assert_eq!(format_tokens(999), "999");
        assert_eq!(format_tokens(1_250_000), "1.2M");
    }

    #[test]
    fn short_arguments_keep_the_models_order() {
        assert_eq!(short_arguments(r#"{"path":"src/main.rs"}"#), "src/main.rs");
        assert_eq!(
            short_arguments(r#"{"path":"a.rs","content":"x y\nz","limit":3}"#),
            r#"path=a.rs content="x y\nz" limit=3"#
        );
        assert_eq!(short_arguments(r#"{"command":"ls\n -la"}"#), "ls -la");
        assert_eq!(short_arguments("not json\n at all"), "not json at all");
        assert_eq!(short_arguments("{}"), "");
    }

    #[test]
    fn tool_lines() {
        let l = tool_call_line("read_file", r#"{"path":"src/main.rs"}"#, 80);
        assert_eq!(l.plain_text(), "● read_file src/main.rs");
        assert_eq!(l.0[1].style, TOOL);
        assert_eq!(l.0[3].style, ARGS);
        let out = "line 1\nline 2\nline 3\n";
        let r = plain(&tool_result_lines(ToolStatus::Ok, out, 2, 80));
        assert_eq!(r, ["  ⎿ ok", "    line 1", "    line 2", "    … +1 line"]);
        let r = tool_result_lines(ToolStatus::DeniedByPolicy, "no", 0, 80);
        assert_eq!(plain(&r), ["  ⎿ denied by policy (1 line)"]);
        assert_eq!(r[0].0[1].style, ERROR);
        assert_eq!(
            plain(&tool_result_lines(ToolStatus::Ok, "", 3, 80)),
            ["  ⎿ ok"]
        );
    }

    #[test]
    fn read_file_results_are_coloured_by_the_files_language() {
        use crate::tui::markdown::highlight::{Highlight, Theme};
        let out = "     1\tfn main() {\n     2\t    let x = 1;\n     3\t}\n";
        let code = CodeHighlighter::new("rs", Highlight::On(Theme::Dark));
        let r = tool_result_lines_as(ToolStatus::Ok, out, 2, 80, Some(code));
        assert_eq!(
            plain(&r),
            [
                "  ⎿ ok",
                "         1  fn main() {",
                "         2      let x = 1;",
                "    … +1 line"
            ]
        );
        // The number stays dim; the code carries the theme's colours.
        assert_eq!(r[1].0[0].style, DIM);
        assert!(
            r[1].0[1..]
                .iter()
                .any(|s| matches!(s.style.fg, Some(Color::Rgb(..))))
        );
        // Colours off (NO_COLOR), an unknown language or an error: dim plain text as before.
        for (code, status) in [
            (CodeHighlighter::new("rs", Highlight::Off), ToolStatus::Ok),
            (
                CodeHighlighter::new("no-such", Highlight::On(Theme::Dark)),
                ToolStatus::Ok,
            ),
            (
                CodeHighlighter::new("rs", Highlight::On(Theme::Dark)),
                ToolStatus::Error,
            ),
        ] {
            let r = tool_result_lines_as(status, out, 1, 80, Some(code));
            assert_eq!(plain(&r)[1], "         1\tfn main() {".replace('\t', "  "));
            assert!(r[1..].iter().all(|l| l.0.iter().all(|s| s.style == DIM)));
        }
    }

    #[test]
    fn approval() {
        let ls = r#"{"command":"ls"}"#;
        let q = plain(&approval_prompt(
            "run_command",
            ls,
            Unsandboxed::NotOffered,
            80,
        ));
        assert_eq!(q, ["  Allow run_command? [y]es / [a]lways / [n]o"]);
        let q = plain(&approval_prompt(
            "run_command",
            ls,
            Unsandboxed::Offered,
            80,
        ));
        assert_eq!(
            q,
            ["  Allow run_command? [y]es / [a]lways / [u]nsandboxed, once / [n]o"]
        );
        let q = plain(&approval_prompt(
            "write_file",
            r#"{"path":"a.txt","content":"one\ntwo"}"#,
            Unsandboxed::NotOffered,
            80,
        ));
        assert_eq!(
            q,
            [
                "    path:",
                "      a.txt",
                "    content:",
                "      one",
                "      two",
                "  Allow write_file? [y]es / [a]lways / [n]o"
            ]
        );
        let cmd = format!(r#"{{"command":"{}"}}"#, "x ".repeat(30));
        let q = plain(&approval_prompt(
            "run_command",
            &cmd,
            Unsandboxed::NotOffered,
            40,
        ));
        let xs: usize = q[1..3].iter().map(|l| l.matches('x').count()).sum();
        assert_eq!(xs, 30, "wrapped, not cut: {q:?}");
        let answer = |key| approval_answer(key, Unsandboxed::NotOffered);
        assert_eq!(answer('Y'), Some(Answer::Approval(Approval::Once)));
        assert_eq!(
            answer('a'),
            Some(Answer::Approval(Approval::AlwaysThisTool))
        );
        assert_eq!(
            answer('n'),
            Some(Answer::Approval(Approval::Deny { reason: None }))
        );
        assert_eq!(answer('x'), None);
        // `u` only where it was offered.
        assert_eq!(answer('u'), None);
        assert_eq!(
            approval_answer('U', Unsandboxed::Offered),
            Some(Answer::OnceUnsandboxed)
        );
    }

    #[test]
    fn reasoning() {
        let r = reasoning_summary("Let me look at main.rs first. Then the tests.", 80);
        assert_eq!(
            r.plain_text(),
            "✻ thinking · 9 words · Let me look at main.rs first."
        );
        assert_eq!(reasoning_summary("", 80).plain_text(), "✻ thinking…");
        assert_eq!(first_sentence("v1.2 is out! yes"), "v1.2 is out!");
        assert_eq!(first_sentence("一行目。二行目"), "一行目。");
        assert_eq!(plain(&reasoning_lines("a b c\nd", 3)), ["a b", "c", "d"]);
    }

    #[test]
    fn messages() {
        assert_eq!(error_line("bad\n key").plain_text(), "error: bad key");
        assert_eq!(error_line("x").0[0].style, ERROR);
        assert_eq!(
            retry_line(2, 1500, "429 Too Many Requests").plain_text(),
            "retrying (attempt 2) in 1.5 s: 429 Too Many Requests"
        );
        assert_eq!(plain(&user_message("hi\nthere", 80)), ["› hi", "  there"]);
    }

    #[test]
    fn spinner() {
        assert_eq!(spinner_frame(Duration::from_millis(0)), "⠋ 0.0s");
        assert_eq!(spinner_frame(Duration::from_millis(1230)), "⠴ 1.2s");
        assert_eq!(spinner_frame(Duration::from_secs(125)), "⠹ 2m 05s");
    }

    #[test]
    fn lines_fit_the_width() {
        let args = r#"{"path":"src/deeply/nested/目录/file.rs","content":"fn main() {\n\tprintln!(\"hi\");\n}"}"#;
        let long = "word ".repeat(50);
        for w in [10, 20, 33, 80] {
            let mut all = vec![
                status_line(
                    "openai",
                    "gpt-4o-mini-2024-07-18",
                    "Explorer",
                    1_234_567,
                    Some(100),
                    Some("$12.35"),
                    w,
                ),
                tool_call_line("write_file", args, w),
                reasoning_summary(&long, w),
            ];
            all.extend(tool_result_lines(
                ToolStatus::Error,
                &long.replace(' ', "\n"),
                3,
                w,
            ));
            all.extend(tool_result_lines(ToolStatus::Ok, &long, 3, w));
            all.extend(approval_prompt(
                "write_file",
                args,
                Unsandboxed::NotOffered,
                w,
            ));
            all.extend(approval_prompt(
                "run_command",
                args,
                Unsandboxed::Offered,
                w,
            ));
            all.extend(user_message(&long, w));
            all.extend(reasoning_lines(&long, w));
            for l in all {
                assert!(l.width() <= w, "{w}: {:?}", l.plain_text());
            }
        }
    }
}
