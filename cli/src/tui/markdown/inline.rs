//! Inline Markdown: emphasis, code spans, links, autolinks and backslash escapes.

use super::{CODE_COLOR, MAX_NESTING};
use crate::tui::text::{Line, SpanStyle};

/// Inline Markdown in `s` as a line in `base` style.
pub(super) fn inline(s: &str, base: SpanStyle) -> Line {
    let mut out = Line::new();
    inline_into(s, base, &mut out, 0);
    out
}

fn inline_into(s: &str, style: SpanStyle, out: &mut Line, depth: usize) {
    let b = s.as_bytes();
    let mut text = String::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if b.get(i + 1).is_some_and(u8::is_ascii_punctuation) => {
                text.push(b[i + 1] as char);
                i += 2;
                continue;
            }
            b'`' => {
                let n = run_len(b, i, b'`');
                if let Some(end) = code_close(b, i + n, n) {
                    out.push(std::mem::take(&mut text), style);
                    out.push(code_content(&s[i + n..end]), style.with_fg(CODE_COLOR));
                    i = end + n;
                } else {
                    text.push_str(&s[i..i + n]);
                    i += n;
                }
                continue;
            }
            d @ (b'*' | b'_') => {
                let n = run_len(b, i, d);
                match emphasis(s, i, d, n).filter(|_| depth < MAX_NESTING) {
                    Some(close) => {
                        out.push(std::mem::take(&mut text), style);
                        let inner = match n {
                            1 => style.italic(),
                            2 => style.bold(),
                            _ => style.bold().italic(),
                        };
                        inline_into(&s[i + n..close], inner, out, depth + 1);
                        i = close + n;
                    }
                    None => {
                        text.push_str(&s[i..i + n]);
                        i += n;
                    }
                }
                continue;
            }
            b'[' | b'!' if depth < MAX_NESTING => {
                let image = b[i] == b'!';
                let start = if image { i + 1 } else { i };
                if let Some(link) = link(s, start) {
                    out.push(std::mem::take(&mut text), style);
                    let label = &s[link.label.clone()];
                    if label.is_empty() || label == link.url {
                        out.push(link.url, style.underline());
                    } else {
                        let label_style = if image {
                            style.italic()
                        } else {
                            style.underline()
                        };
                        inline_into(label, label_style, out, depth + 1);
                        out.push(format!(" ({})", link.url), style.dim());
                    }
                    i = link.end;
                    continue;
                }
            }
            b'<' => {
                if let Some(len) = s[i + 1..].find('>') {
                    let url = &s[i + 1..i + 1 + len];
                    let is_url = ["http://", "https://", "mailto:"]
                        .iter()
                        .any(|p| url.starts_with(p));
                    if is_url && !url.contains(char::is_whitespace) {
                        out.push(std::mem::take(&mut text), style);
                        out.push(url, style.underline());
                        i += len + 2;
                        continue;
                    }
                }
            }
            _ => {}
        }
        let ch = s[i..].chars().next().unwrap_or(' ');
        text.push(ch);
        i += ch.len_utf8();
    }
    out.push(text, style);
}

/// The length of the run of `d` bytes at `i`.
fn run_len(b: &[u8], i: usize, d: u8) -> usize {
    b[i..].iter().take_while(|&&c| c == d).count()
}

/// Where a code span opened by `n` backticks ends: the next run of exactly `n` backticks.
fn code_close(b: &[u8], from: usize, n: usize) -> Option<usize> {
    let mut j = from;
    while j < b.len() {
        if b[j] == b'`' {
            let m = run_len(b, j, b'`');
            if m == n {
                return Some(j);
            }
            j += m;
        } else {
            j += 1;
        }
    }
    None
}

/// "If the resulting string both begins and ends with a space character, but does not consist
/// entirely of space characters, a single space character is removed from the front and back."
fn code_content(s: &str) -> &str {
    if s.len() >= 2 && s.starts_with(' ') && s.ends_with(' ') && !s.trim().is_empty() {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

/// Where the emphasis opened by the run of `n` `d`s at `i` closes: a run of exactly `n`, after
/// some text, that does not follow a space. `_` does not open or close inside a word
/// (`snake_case_name`). Code spans and escapes are skipped over.
fn emphasis(s: &str, i: usize, d: u8, n: usize) -> Option<usize> {
    let b = s.as_bytes();
    if n > 3 {
        return None;
    }
    let next = s[i + n..].chars().next()?;
    if next.is_whitespace() {
        return None;
    }
    let alnum_before = |at: usize| {
        s[..at]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
    };
    if d == b'_' && alnum_before(i) {
        return None;
    }
    let mut j = i + n;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'`' => {
                let m = run_len(b, j, b'`');
                j = code_close(b, j + m, m).map_or(j + m, |end| end + m);
            }
            c if c == d => {
                let m = run_len(b, j, d);
                let after_space = s[..j].chars().next_back().is_some_and(char::is_whitespace);
                let alnum_after = s[j + m..].chars().next().is_some_and(char::is_alphanumeric);
                if m == n && j > i + n && !after_space && !(d == b'_' && alnum_after) {
                    return Some(j);
                }
                j += m;
            }
            _ => j += 1,
        }
    }
    None
}

#[derive(Debug)]
struct Link {
    label: std::ops::Range<usize>,
    url: String,
    end: usize,
}

/// `[label](url "title")` at `i`.
fn link(s: &str, i: usize) -> Option<Link> {
    let b = s.as_bytes();
    if b.get(i) != Some(&b'[') {
        return None;
    }
    let mut depth = 0usize;
    let mut j = i;
    let close = loop {
        match *b.get(j)? {
            b'\\' => j += 1,
            b'`' => {
                let m = run_len(b, j, b'`');
                j = code_close(b, j + m, m).map_or(j + m, |end| end + m) - 1;
            }
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    break j;
                }
            }
            _ => {}
        }
        j += 1;
    };
    if b.get(close + 1) != Some(&b'(') {
        return None;
    }
    let mut parens = 0usize;
    let mut k = close + 1;
    let end = loop {
        match *b.get(k)? {
            b'(' => parens += 1,
            b')' => {
                parens -= 1;
                if parens == 0 {
                    break k;
                }
            }
            _ => {}
        }
        k += 1;
    };
    let dest = s[close + 2..end].trim();
    let url = dest.split_whitespace().next().unwrap_or("");
    let url = url
        .strip_prefix('<')
        .and_then(|u| u.strip_suffix('>'))
        .unwrap_or(url);
    Some(Link {
        label: i + 1..close,
        url: url.to_owned(),
        end: end + 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODE: SpanStyle = SpanStyle::fg(CODE_COLOR);

    /// The spans of an inline rendering as (text, style).
    fn spans(s: &str) -> Vec<(String, SpanStyle)> {
        inline(s, SpanStyle::PLAIN)
            .0
            .into_iter()
            .map(|sp| (sp.text, sp.style))
            .collect()
    }

    const P: SpanStyle = SpanStyle::PLAIN;

    #[test]
    fn inline_vectors() {
        let s = |t: &str, st: SpanStyle| (t.to_owned(), st);
        let cases: Vec<(&str, Vec<(String, SpanStyle)>)> = vec![
            ("plain", vec![s("plain", P)]),
            ("a **b** c", vec![s("a ", P), s("b", P.bold()), s(" c", P)]),
            (
                "*i* and _j_",
                vec![s("i", P.italic()), s(" and ", P), s("j", P.italic())],
            ),
            ("***bi***", vec![s("bi", P.bold().italic())]),
            (
                "**a *b* c**",
                vec![
                    s("a ", P.bold()),
                    s("b", P.bold().italic()),
                    s(" c", P.bold()),
                ],
            ),
            (
                "use `x*y` now",
                vec![s("use ", P), s("x*y", CODE), s(" now", P)],
            ),
            ("`` a`b ``", vec![s("a`b", CODE)]),
            ("snake_case_name", vec![s("snake_case_name", P)]),
            ("2 * 3 * 4", vec![s("2 * 3 * 4", P)]),
            ("**open", vec![s("**open", P)]),
            ("`open", vec![s("`open", P)]),
            (r"\*not\*", vec![s("*not*", P)]),
            (
                "*a `b*` c*",
                vec![
                    s("a ", P.italic()),
                    s("b*", CODE.italic()),
                    s(" c", P.italic()),
                ],
            ),
            (
                "see [docs](https://x.dev/a_(b) \"t\")",
                vec![
                    s("see ", P),
                    s("docs", P.underline()),
                    s(" (https://x.dev/a_(b))", P.dim()),
                ],
            ),
            (
                "[https://x.dev](https://x.dev)",
                vec![s("https://x.dev", P.underline())],
            ),
            ("[a] b", vec![s("[a] b", P)]),
            ("<https://x.dev>", vec![s("https://x.dev", P.underline())]),
            ("a <b> c", vec![s("a <b> c", P)]),
            (
                "![logo](l.png)",
                vec![s("logo", P.italic()), s(" (l.png)", P.dim())],
            ),
        ];
        for (input, want) in cases {
            assert_eq!(spans(input), want, "{input:?}");
        }
    }
}
