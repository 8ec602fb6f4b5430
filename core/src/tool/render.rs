//! The text the model sees for command, file, listing and fetch results.
//!
//! Both drivers gather the raw facts (exit status, captured bytes, file text, paths, an HTTP
//! response) and hand them to these functions, so a result reads the same whichever driver
//! produced it. Every function bounds its output and says when something was left out.

use super::ToolOutput;
use super::builtin::{MAX_COMMAND_TIMEOUT_SECS, WEB_FETCH_MAX_CHARS};
use super::page::{BINARY_SNIFF_BYTES, looks_binary};
use super::truncate::{lossy_text, truncate_head_tail};
use std::fmt::Write as _;

/// Characters of an error response's body that [`render_fetch`] shows.
const ERROR_BODY_CHARS: usize = 2000;

/// How a command ended and what it printed, as the driver observed it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommandOutcome {
    /// The exit code, when the process exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended the process, when one did (Unix).
    pub signal: Option<i32>,
    /// The timeout in seconds, when the driver killed the command for running too long.
    pub timed_out: Option<u64>,
    /// Captured stdout, decoded lossily (e.g. with [`HeadTail`](super::truncate::HeadTail)).
    pub stdout: String,
    /// Captured stderr, decoded lossily.
    pub stderr: String,
}

/// Renders a command's result: its status line, then its stdout and stderr.
///
/// The status is the exit code, or the signal that killed it, or that it was killed after its
/// timeout; both output sections are always present (marked empty when they are), each
/// head+tail truncated to `max_chars` characters. The result is an error unless the command
/// exited with code 0 in time, so the UI can flag failing commands.
pub fn render_command(o: &CommandOutcome, max_chars: usize) -> ToolOutput {
    let mut out = String::new();
    match (o.timed_out, o.exit_code, o.signal) {
        (Some(secs), _, _) => {
            let _ = write!(out, "killed after timeout of {secs} s");
            if secs < MAX_COMMAND_TIMEOUT_SECS {
                let _ = write!(
                    out,
                    " (set timeout_secs, up to {MAX_COMMAND_TIMEOUT_SECS}, if it needs longer)"
                );
            }
        }
        (None, Some(code), _) => {
            let _ = write!(out, "exit code: {code}");
        }
        (None, None, Some(signal)) => {
            let _ = write!(out, "killed by signal {signal}");
            if let Some(name) = signal_name(signal) {
                let _ = write!(out, " ({name})");
            }
        }
        (None, None, None) => out.push_str("exit status unknown"),
    }
    out.push('\n');
    for (name, text) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        if text.is_empty() {
            let _ = writeln!(out, "--- {name} (empty) ---");
        } else {
            let _ = writeln!(out, "--- {name} ---");
            out.push_str(&truncate_head_tail(text, max_chars));
            if !out.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    let success = o.timed_out.is_none() && o.exit_code == Some(0);
    ToolOutput {
        is_error: !success,
        ..ToolOutput::ok(out)
    }
}

/// Reports that `run_command` could not start the shell (or lost track of it).
pub fn spawn_failed(err: &std::io::Error) -> ToolOutput {
    ToolOutput::error(format!("could not start the command with sh: {err}"))
}

/// Reports that a tool stopped without a result (it panicked on the driver's thread).
pub fn tool_failed(name: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "{name}: the tool failed without a result; try another way"
    ))
}

/// Names the common Unix signals, which say more to a model than a number.
fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => return None,
    })
}

/// Renders the result of `list_files`: sorted, deduplicated paths, one a line.
///
/// At most `cap` paths are shown (the first ones in sorted order), followed by a note saying
/// how many were left out; an empty list reads "no files matched", which is not an error.
pub fn render_file_list(mut paths: Vec<String>, cap: usize) -> ToolOutput {
    paths.sort_unstable();
    paths.dedup();
    if paths.is_empty() {
        return ToolOutput::ok("no files matched");
    }
    let total = paths.len();
    let mut out = String::new();
    for path in paths.iter().take(cap) {
        out.push_str(path);
        out.push('\n');
    }
    if total > cap {
        let _ = writeln!(
            out,
            "[{} more paths not shown; showing {cap} of {total}; narrow the listing with dir or \
             pattern]",
            total - cap
        );
    }
    ToolOutput::ok(out)
}

/// Renders an HTTP response for `web_fetch`: a status line, then the body as text.
///
/// A status outside 200..=299 is an error (with the start of the body, which often says why).
/// Binary content types (images, PDFs, archives, ...) are refused with a message; an absent or
/// `application/octet-stream` type is decided by [`looks_binary`]. Text is decoded as UTF-8
/// (lossily), or as windows-1252 when the charset is that or one of its aliases
/// (`iso-8859-1`, `us-ascii`, ...), and head+tail truncated to
/// [`WEB_FETCH_MAX_CHARS`]. `truncated_at` is the byte
/// count at which the driver stopped reading, if it did; a note then says the body is
/// incomplete.
pub fn render_fetch(
    status: u16,
    content_type: Option<&str>,
    body: &[u8],
    truncated_at: Option<usize>,
) -> ToolOutput {
    let content_type = content_type.map(str::trim).filter(|c| !c.is_empty());
    let mut head = format!("HTTP {status}");
    if let Some(ct) = content_type {
        let _ = write!(head, ", {ct}");
    }
    let _ = write!(head, ", {} bytes", body.len());
    if truncated_at.is_some() {
        head.push_str(" (body cut)");
    }
    let (essence, charset) = parse_content_type(content_type.unwrap_or(""));
    let binary = match classify(&essence) {
        // A labelled text type is believed unless the body has NUL bytes, which no text has
        // (a binary file served as text/plain); other bytes may be a legacy charset.
        Kind::Text => body[..body.len().min(BINARY_SNIFF_BYTES)].contains(&0),
        Kind::Binary => true,
        Kind::Unknown => looks_binary(body),
    };
    let ok = (200..=299).contains(&status);
    if binary {
        let what = content_type.unwrap_or("unlabelled");
        let text = if ok {
            format!("{head}\n\nthe response is binary ({what}); web_fetch only returns text")
        } else {
            format!("{head}\n\n(binary body not shown)")
        };
        return ToolOutput::error(text);
    }
    let text = if is_windows_1252(&charset) {
        decode_windows_1252(body)
    } else {
        lossy_text(body)
    };
    let limit = if ok {
        WEB_FETCH_MAX_CHARS
    } else {
        ERROR_BODY_CHARS
    };
    let mut out = head;
    out.push_str("\n\n");
    if text.is_empty() {
        out.push_str("(empty body)");
    } else {
        out.push_str(&truncate_head_tail(&text, limit));
    }
    if let Some(at) = truncated_at {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        let _ = write!(out, "[the body was cut at {at} bytes]");
    }
    ToolOutput {
        is_error: !ok,
        ..ToolOutput::ok(out)
    }
}

/// Splits a content type into its lowercase essence and charset (both possibly empty).
fn parse_content_type(content_type: &str) -> (String, String) {
    let mut parts = content_type.split(';');
    let essence = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("charset"))
        .map(|(_, v)| v.trim().trim_matches('"').to_ascii_lowercase())
        .unwrap_or_default();
    (essence, charset)
}

/// Whether a content type is text, binary, or says nothing useful.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Binary,
    Unknown,
}

fn classify(essence: &str) -> Kind {
    const TEXT: [&str; 16] = [
        "application/json",
        "application/xml",
        "application/javascript",
        "application/ecmascript",
        "application/x-javascript",
        "application/x-ndjson",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/sql",
        "application/graphql",
        "application/x-sh",
        "application/x-httpd-php",
        "application/x-www-form-urlencoded",
        "application/csv",
        "message/rfc822",
    ];
    const UNKNOWN: [&str; 4] = [
        "",
        "application/octet-stream",
        "binary/octet-stream",
        "application/unknown",
    ];
    if UNKNOWN.contains(&essence) {
        Kind::Unknown
    } else if essence.starts_with("text/")
        || TEXT.contains(&essence)
        || ["+json", "+xml", "+yaml", "+toml", "+text", "+html", "+csv"]
            .iter()
            .any(|suffix| essence.ends_with(suffix))
    {
        Kind::Text
    } else {
        Kind::Binary
    }
}

/// The WHATWG Encoding Standard maps all these labels to windows-1252.
fn is_windows_1252(charset: &str) -> bool {
    matches!(
        charset,
        "windows-1252"
            | "cp1252"
            | "x-cp1252"
            | "iso-8859-1"
            | "iso8859-1"
            | "iso_8859-1"
            | "latin1"
            | "l1"
            | "us-ascii"
            | "ascii"
            | "cp819"
            | "ibm819"
    )
}

/// Decodes windows-1252: Latin-1, except 0x80..=0x9F, which hold typographic characters.
fn decode_windows_1252(bytes: &[u8]) -> String {
    const HIGH: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž',
        '\u{8f}', '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}',
        'ž', 'Ÿ',
    ];
    bytes
        .iter()
        .map(|&b| match b {
            0x80..=0x9F => HIGH[usize::from(b - 0x80)],
            _ => char::from(b),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::builtin::{READ_FILE_MAX_CHARS, READ_FILE_MAX_LINE_CHARS};
    use crate::tool::page::render_read;

    fn outcome(exit_code: Option<i32>, stdout: &str, stderr: &str) -> CommandOutcome {
        CommandOutcome {
            exit_code,
            stdout: stdout.into(),
            stderr: stderr.into(),
            ..CommandOutcome::default()
        }
    }

    #[test]
    fn command_success_and_failure() {
        let ok = render_command(&outcome(Some(0), "hi\n", ""), 100);
        assert_eq!(
            ok,
            ToolOutput::ok("exit code: 0\n--- stdout ---\nhi\n--- stderr (empty) ---\n")
        );
        let failed = render_command(&outcome(Some(2), "", "no such file"), 100);
        assert_eq!(
            failed,
            ToolOutput::error(
                "exit code: 2\n--- stdout (empty) ---\n--- stderr ---\nno such file\n"
            )
        );
    }

    #[test]
    fn command_killed_by_signal_or_timeout() {
        let signalled = CommandOutcome {
            signal: Some(9),
            ..CommandOutcome::default()
        };
        let out = render_command(&signalled, 100);
        assert!(out.is_error);
        assert!(out.content.starts_with("killed by signal 9 (SIGKILL)\n"));
        let odd = CommandOutcome {
            signal: Some(42),
            ..CommandOutcome::default()
        };
        assert!(
            render_command(&odd, 100)
                .content
                .starts_with("killed by signal 42\n")
        );

        let timed_out = CommandOutcome {
            timed_out: Some(120),
            signal: Some(9),
            stdout: "partial".into(),
            ..CommandOutcome::default()
        };
        let out = render_command(&timed_out, 100);
        assert!(out.is_error);
        assert!(
            out.content
                .starts_with("killed after timeout of 120 s (set timeout_secs")
        );
        assert!(out.content.contains("--- stdout ---\npartial\n"));
        let at_max = CommandOutcome {
            timed_out: Some(MAX_COMMAND_TIMEOUT_SECS),
            exit_code: Some(0),
            ..CommandOutcome::default()
        };
        let out = render_command(&at_max, 100);
        assert!(out.is_error);
        assert!(out.content.starts_with("killed after timeout of 3600 s\n"));
        assert!(
            render_command(&CommandOutcome::default(), 10)
                .content
                .starts_with("exit status unknown")
        );
    }

    #[test]
    fn command_output_is_truncated_per_stream() {
        let big = "o".repeat(10_000);
        let out = render_command(&outcome(Some(0), &big, &big), 1000);
        assert_eq!(
            out.content
                .matches("[... 9000 characters omitted ...]")
                .count(),
            2
        );
        assert!(out.content.len() < 2200, "{}", out.content.len());
    }

    #[test]
    fn binary_detection() {
        assert!(!looks_binary(b""));
        assert!(!looks_binary(b"plain text\n"));
        assert!(!looks_binary("ünïcødé".as_bytes()));
        assert!(looks_binary(b"ab\0cd"));
        assert!(looks_binary(b"\x89PNG\r\n\x1a\n"));
        assert!(looks_binary(b"caf\xe9 au lait"));
        // A sequence cut off at the end of the sample is fine.
        assert!(!looks_binary(&"é".as_bytes()[..1]));
        let mut block = vec![b'a'; BINARY_SNIFF_BYTES - 1];
        block.extend_from_slice("日本".as_bytes());
        assert!(!looks_binary(&block));
        // Only the sample is inspected.
        let mut late = vec![b'a'; BINARY_SNIFF_BYTES];
        late.push(0);
        assert!(!looks_binary(&late));
    }

    #[test]
    fn read_numbers_lines() {
        let out = render_read("one\ntwo\n", None, None);
        assert_eq!(out, ToolOutput::ok("     1\tone\n     2\ttwo\n"));
        let no_newline = render_read("one\ntwo", None, None);
        assert_eq!(no_newline.content, "     1\tone\n     2\ttwo\n");
        let blank = render_read("\n\n", None, None);
        assert_eq!(blank.content, "     1\t\n     2\t\n");
        let big_number = render_read(&"x\n".repeat(1_000_001), Some(1_000_000), Some(1));
        assert!(big_number.content.starts_with("1000000\tx\n"));
    }

    #[test]
    fn read_pages_with_a_note() {
        let text: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        let out = render_read(&text, Some(3), Some(2));
        assert_eq!(
            out.content,
            "     3\tl3\n     4\tl4\n[lines 3-4 of 10; call read_file with offset=5 to continue]\n"
        );
        let last = render_read(&text, Some(9), Some(100));
        assert_eq!(last.content, "     9\tl9\n    10\tl10\n");
        let zero = render_read(&text, Some(0), Some(0));
        assert!(zero.content.starts_with("     1\tl1\n[lines 1-1 of 10;"));
    }

    #[test]
    fn read_past_the_end_or_empty() {
        let out = render_read("a\nb\n", Some(3), None);
        assert_eq!(
            out,
            ToolOutput::error("offset 3 is past the end of the file, which has 2 lines")
        );
        assert_eq!(
            render_read("", None, None),
            ToolOutput::ok("(the file is empty)")
        );
        assert!(render_read("", Some(2), None).is_error);
        assert!(render_read("x", Some(u64::MAX), Some(u64::MAX)).is_error);
        assert_eq!(
            render_read("x", Some(1), Some(u64::MAX)).content,
            "     1\tx\n"
        );
    }

    #[test]
    fn read_default_limit_and_long_lines() {
        let text = "line\n".repeat(5000);
        let out = render_read(&text, None, None);
        assert!(
            out.content
                .ends_with("[lines 1-2000 of 5000; call read_file with offset=2001 to continue]\n")
        );
        let long = "é".repeat(READ_FILE_MAX_LINE_CHARS + 5);
        let out = render_read(&long, None, None);
        assert!(out.content.contains(" [... line cut, 5 more characters]\n"));
        assert!(
            out.content
                .ends_with("[1 line was longer than 2000 characters and cut]\n")
        );
    }

    #[test]
    fn read_respects_the_character_budget() {
        let line = "y".repeat(1500);
        let text = format!("{line}\n").repeat(500);
        let out = render_read(&text, None, None);
        assert!(out.content.chars().count() <= READ_FILE_MAX_CHARS + 200);
        assert!(
            out.content
                .contains("[lines 1-66 of 500; call read_file with offset=67"),
            "{}",
            &out.content[out.content.len() - 100..]
        );
        // One huge line is still shown, cut.
        let huge = "z".repeat(10_000_000);
        let out = render_read(&huge, None, None);
        assert!(out.content.len() < 3000);
    }

    #[test]
    fn read_mentions_crlf() {
        let out = render_read("a\r\nb\r\n", None, None);
        assert_eq!(
            out.content,
            "     1\ta\n     2\tb\n[the file has \\r\\n line endings, not shown above]\n"
        );
    }

    #[test]
    fn file_list_sorted_deduplicated_capped() {
        let paths = vec![
            "b".to_owned(),
            "a".to_owned(),
            "b".to_owned(),
            "c".to_owned(),
        ];
        assert_eq!(
            render_file_list(paths.clone(), 10),
            ToolOutput::ok("a\nb\nc\n")
        );
        assert_eq!(
            render_file_list(paths.clone(), 2).content,
            "a\nb\n[1 more paths not shown; showing 2 of 3; narrow the listing with dir or pattern]\n"
        );
        assert!(
            render_file_list(paths, 0)
                .content
                .starts_with("[3 more paths")
        );
        assert_eq!(
            render_file_list(Vec::new(), 5),
            ToolOutput::ok("no files matched")
        );
    }

    #[test]
    fn fetch_text_and_errors() {
        let out = render_fetch(200, Some("text/html; charset=utf-8"), b"<p>hi</p>", None);
        assert_eq!(
            out,
            ToolOutput::ok("HTTP 200, text/html; charset=utf-8, 9 bytes\n\n<p>hi</p>")
        );
        let json = render_fetch(200, Some("application/vnd.api+json"), b"{}", None);
        assert!(!json.is_error);
        let missing = render_fetch(404, Some("text/plain"), b"not found", None);
        assert_eq!(
            missing,
            ToolOutput::error("HTTP 404, text/plain, 9 bytes\n\nnot found")
        );
        let empty = render_fetch(204, None, b"", None);
        assert_eq!(empty, ToolOutput::ok("HTTP 204, 0 bytes\n\n(empty body)"));
        let redirect = render_fetch(301, Some("text/html"), b"moved", None);
        assert!(redirect.is_error);
        let big_error = render_fetch(500, Some("text/html"), "e".repeat(50_000).as_bytes(), None);
        assert!(big_error.content.len() < 2200);
    }

    #[test]
    fn fetch_refuses_binary() {
        let png = render_fetch(200, Some("image/png"), b"\x89PNG", None);
        assert!(png.is_error);
        assert!(
            png.content.contains("the response is binary (image/png)"),
            "{}",
            png.content
        );
        let sniffed = render_fetch(200, Some("application/octet-stream"), b"\0\x01", None);
        assert!(sniffed.is_error);
        let text_as_octets = render_fetch(200, Some("application/octet-stream"), b"hello", None);
        assert!(!text_as_octets.is_error);
        let unlabelled = render_fetch(200, None, b"\xff\xfe\0h", None);
        assert!(unlabelled.content.contains("(unlabelled)"));
        let error_binary = render_fetch(500, Some("application/pdf"), b"%PDF", None);
        assert!(error_binary.is_error && error_binary.content.contains("binary body not shown"));
        // Decided by the content too: a binary served as text is refused, a legacy charset is not.
        let disguised = render_fetch(200, Some("text/plain"), b"\x7fELF\x02\x01\0\0", None);
        assert!(disguised.is_error, "{}", disguised.content);
        assert!(
            disguised.content.contains("binary (text/plain)"),
            "{}",
            disguised.content
        );
        let latin1 = render_fetch(200, Some("text/html"), b"caf\xe9", None);
        assert!(!latin1.is_error, "{}", latin1.content);
    }

    #[test]
    fn fetch_decodes_charsets_and_notes_truncation() {
        let latin = render_fetch(
            200,
            Some("text/plain; charset=\"ISO-8859-1\""),
            b"caf\xe9 \x93q\x94",
            None,
        );
        assert!(latin.content.ends_with("café “q”"), "{}", latin.content);
        let lossy = render_fetch(200, Some("text/plain"), b"caf\xe9", None);
        assert!(lossy.content.ends_with("caf\u{fffd}"));
        let cut = render_fetch(200, Some("text/plain"), b"abc", Some(3));
        assert_eq!(
            cut.content,
            "HTTP 200, text/plain, 3 bytes (body cut)\n\nabc\n[the body was cut at 3 bytes]"
        );
        let huge = "w".repeat(WEB_FETCH_MAX_CHARS * 3);
        let out = render_fetch(200, Some("text/plain"), huge.as_bytes(), None);
        assert!(out.content.contains("[... 200000 characters omitted ...]"));
    }

    #[test]
    fn content_type_parsing() {
        assert_eq!(
            parse_content_type(" Text/HTML ; foo=bar; Charset=\"UTF-8\""),
            ("text/html".to_owned(), "utf-8".to_owned())
        );
        assert_eq!(parse_content_type(""), (String::new(), String::new()));
        assert_eq!(
            parse_content_type(";;=;charset"),
            (String::new(), String::new())
        );
        assert_eq!(classify("image/svg+xml"), Kind::Text);
        assert_eq!(classify("application/zip"), Kind::Binary);
        assert_eq!(classify(""), Kind::Unknown);
    }
}
