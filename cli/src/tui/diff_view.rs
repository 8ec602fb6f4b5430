//! A unified diff as coloured lines: removals red, additions green, hunk headers cyan; with
//! colours on, the code of added and unchanged lines is highlighted by the file's language.

use super::markdown::highlight::{CodeHighlighter, Highlight};
use super::text::{Color, Line, SpanStyle};
use crate::host::diff::DiffLine;

/// The lines of `diff`, indented under the tool call they belong to.
pub(crate) fn diff_lines(diff: &[DiffLine], highlight: Highlight) -> Vec<Line> {
    // The new file's lines (added and unchanged) are highlighted in order, so a construct
    // that spans lines keeps its colour; removed lines stay red.
    let mut code: Option<CodeHighlighter> = None;
    diff.iter()
        .map(|l| {
            let mut line = Line::plain("    ");
            match l {
                DiffLine::Header(t) => {
                    if let Some(path) = t.strip_prefix("+++ ") {
                        code = Some(CodeHighlighter::new(extension(path), highlight));
                    }
                    line.push(t.clone(), SpanStyle::PLAIN.bold());
                }
                DiffLine::Hunk(t) => {
                    // A hunk starts mid-file: the parser starts afresh.
                    if let Some(c) = &mut code {
                        *c = c.restarted();
                    }
                    line.push(t.clone(), SpanStyle::fg(Color::Cyan));
                }
                DiffLine::Removed(_) => line.push(l.text(), SpanStyle::fg(Color::Red)),
                DiffLine::Added(t) => match code.as_mut().filter(|c| c.is_on()) {
                    Some(c) => {
                        line.push("+", SpanStyle::fg(Color::Green).bold());
                        line.extend(c.line(t));
                    }
                    None => line.push(l.text(), SpanStyle::fg(Color::Green)),
                },
                DiffLine::Same(t) => match code.as_mut().filter(|c| c.is_on()) {
                    Some(c) => {
                        line.push(" ", SpanStyle::PLAIN);
                        let mut dimmed = c.line(t);
                        for span in &mut dimmed.0 {
                            span.style = span.style.dim();
                        }
                        line.extend(dimmed);
                    }
                    None => line.push(l.text(), SpanStyle::PLAIN.dim()),
                },
                DiffLine::Folded(_) => line.push(l.text(), SpanStyle::PLAIN.dim()),
            }
            line
        })
        .collect()
}

/// The extension of `path` (`b/src/main.rs` → `rs`), or nothing.
fn extension(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext,
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::super::markdown::highlight::Theme;
    use super::*;

    #[test]
    fn every_line_keeps_its_marker() {
        let diff = crate::host::diff::unified("a", "x\n", "y\n", 10);
        for highlight in [Highlight::Off, Highlight::On(Theme::Dark)] {
            let text: Vec<String> = diff_lines(&diff, highlight)
                .iter()
                .map(Line::plain_text)
                .collect();
            assert_eq!(
                text,
                [
                    "    --- a/a",
                    "    +++ b/a",
                    "    @@ -1,1 +1,1 @@",
                    "    -x",
                    "    +y"
                ]
            );
        }
    }

    #[test]
    fn code_in_a_diff_is_highlighted_by_the_files_extension() {
        let old = "fn a() {}\nfn b() {}\n";
        let new = "fn a() {}\nfn c() -> u8 { 1 }\n";
        let diff = crate::host::diff::unified("src/lib.rs", old, new, 50);
        let lines = diff_lines(&diff, Highlight::On(Theme::Dark));
        let added = lines
            .iter()
            .find(|l| l.plain_text().starts_with("    +fn c"))
            .unwrap();
        assert!(
            added
                .0
                .iter()
                .any(|s| matches!(s.style.fg, Some(Color::Rgb(..))))
        );
        let removed = lines
            .iter()
            .find(|l| l.plain_text().starts_with("    -fn b"))
            .unwrap();
        assert!(removed.0.iter().all(|s| s.style.fg != Some(Color::Green)));
        // Without colours, or for a file of no known language, the classic colours.
        for (path, highlight) in [
            ("src/lib.rs", Highlight::Off),
            ("notes.unknownext", Highlight::On(Theme::Dark)),
        ] {
            let diff = crate::host::diff::unified(path, old, new, 50);
            for l in diff_lines(&diff, highlight) {
                assert!(
                    l.0.iter()
                        .all(|s| !matches!(s.style.fg, Some(Color::Rgb(..))))
                );
            }
        }
        assert_eq!(extension("b/src/main.rs"), "rs");
        assert_eq!(extension("b/.bashrc"), "");
        assert_eq!(extension("b/Makefile"), "");
    }
}
