//! A unified diff as coloured lines: removals red, additions green, hunk headers cyan.

use super::text::{Color, Line, SpanStyle};
use crate::host::diff::DiffLine;

/// The lines of `diff`, indented under the tool call they belong to.
pub(crate) fn diff_lines(diff: &[DiffLine]) -> Vec<Line> {
    diff.iter()
        .map(|l| {
            let style = match l {
                DiffLine::Header(_) => SpanStyle::PLAIN.bold(),
                DiffLine::Hunk(_) => SpanStyle::fg(Color::Cyan),
                DiffLine::Removed(_) => SpanStyle::fg(Color::Red),
                DiffLine::Added(_) => SpanStyle::fg(Color::Green),
                DiffLine::Same(_) | DiffLine::Folded(_) => SpanStyle::PLAIN.dim(),
            };
            let mut line = Line::plain("    ");
            line.push(l.text(), style);
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_keeps_its_marker() {
        let diff = crate::host::diff::unified("a", "x\n", "y\n", 10);
        let text: Vec<String> = diff_lines(&diff).iter().map(Line::plain_text).collect();
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
