//! GFM tables laid out in a grid with box-drawing borders, cells wrapped to the width; a table
//! too wide for any sensible grid is shown one record per block instead.

use super::MARK;
use crate::tui::text::{self, Line, SpanStyle};
use pulldown_cmark::Alignment;

/// The narrowest a column may get before the grid gives way to records: its longest word, but
/// no more than this (longer words are broken).
const MIN_COLUMN: usize = 10;

/// The cells of a table as they arrive.
#[derive(Debug)]
pub(super) struct Table {
    aligns: Vec<Alignment>,
    /// The header row first.
    rows: Vec<Vec<Line>>,
}

impl Table {
    pub(super) fn new(aligns: Vec<Alignment>) -> Table {
        Table {
            aligns,
            rows: Vec::new(),
        }
    }

    pub(super) fn start_row(&mut self) {
        self.rows.push(Vec::new());
    }

    pub(super) fn end_row(&mut self) {}

    pub(super) fn push_cell(&mut self, cell: Line) {
        if let Some(row) = self.rows.last_mut() {
            row.push(cell);
        }
    }

    /// The table in at most `width` columns.
    pub(super) fn lay_out(mut self, width: usize) -> Vec<Line> {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return Vec::new();
        }
        for row in &mut self.rows {
            row.resize(columns, Line::new());
        }
        // The header's emphasis.
        if let Some(header) = self.rows.first_mut() {
            for cell in header {
                for span in &mut cell.0 {
                    span.style = span.style.bold();
                }
            }
        }
        match column_widths(&self.rows, columns, width) {
            Some(widths) => self.grid(&widths),
            None => self.records(width),
        }
    }

    fn grid(&self, widths: &[usize]) -> Vec<Line> {
        let border = |left: &str, mid: &str, right: &str| {
            let inner: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
            Line::styled(format!("{left}{}{right}", inner.join(mid)), MARK)
        };
        let wrapped: Vec<Vec<Vec<Line>>> = self
            .rows
            .iter()
            .map(|row| {
                row.iter()
                    .zip(widths)
                    .map(|(cell, &w)| text::wrap(cell, w))
                    .collect()
            })
            .collect();
        // Rows are set apart by rules only when some cell takes several lines.
        let tall = wrapped
            .iter()
            .skip(1)
            .any(|row| row.iter().any(|c| c.len() > 1));
        let mut out = vec![border("┌", "┬", "┐")];
        for (r, row) in wrapped.iter().enumerate() {
            if r == 1 || (r > 1 && tall) {
                out.push(border("├", "┼", "┤"));
            }
            let height = row.iter().map(Vec::len).max().unwrap_or(1);
            for i in 0..height {
                let mut line = Line::styled("│", MARK);
                for (c, cell) in row.iter().enumerate() {
                    let piece = cell.get(i).cloned().unwrap_or_default();
                    let piece = text::truncate(&piece, widths[c]);
                    let room = widths[c] - piece.width();
                    let align = self.aligns.get(c).copied().unwrap_or(Alignment::None);
                    let (before, after) = match align {
                        Alignment::Right => (room, 0),
                        Alignment::Center => (room / 2, room - room / 2),
                        Alignment::Left | Alignment::None => (0, room),
                    };
                    line.push(" ".repeat(before + 1), SpanStyle::PLAIN);
                    line.extend(piece);
                    line.push(" ".repeat(after + 1), SpanStyle::PLAIN);
                    line.push("│", MARK);
                }
                out.push(line);
            }
        }
        out.push(border("└", "┴", "┘"));
        out
    }

    /// One block per body row: `header: value` for each column, a blank line between rows.
    fn records(&self, width: usize) -> Vec<Line> {
        let Some((header, body)) = self.rows.split_first() else {
            return Vec::new();
        };
        let rest = Line::plain("  ");
        let mut out = Vec::new();
        for (r, row) in body.iter().enumerate() {
            if r > 0 {
                out.push(Line::new());
            }
            for (name, value) in header.iter().zip(row) {
                let mut first = name.clone();
                first.push(":", SpanStyle::PLAIN.bold());
                if (first.width() + 1) * 2 > width {
                    // A long header takes its own lines.
                    out.extend(text::wrap(&first, width));
                    out.extend(text::wrap_prefixed(value, width, &rest, &rest));
                } else {
                    first.push(" ", SpanStyle::PLAIN);
                    out.extend(text::wrap_prefixed(value, width, &first, &rest));
                }
            }
        }
        out
    }
}

/// The width of each column's text so that the grid fits in `width`, or `None` when even the
/// narrowest sensible columns do not fit.
fn column_widths(rows: &[Vec<Line>], columns: usize, width: usize) -> Option<Vec<usize>> {
    // "│ a │ b │": three columns of border and padding per column, one more at the end.
    let avail = width.checked_sub(3 * columns + 1)?;
    let mut natural = vec![1; columns];
    let mut narrow = vec![1; columns];
    for row in rows {
        for (c, cell) in row.iter().enumerate() {
            natural[c] = natural[c].max(cell.width());
            narrow[c] = narrow[c].max(longest_word(cell).min(MIN_COLUMN));
        }
    }
    if natural.iter().sum::<usize>() <= avail {
        return Some(natural);
    }
    let need: usize = narrow.iter().sum();
    if need > avail {
        return None;
    }
    // Each column gets its narrow width, and what is left is shared in proportion to how much
    // more each would take.
    let extra = avail - need;
    let wants: Vec<usize> = natural.iter().zip(&narrow).map(|(n, m)| n - m).collect();
    let total: usize = wants.iter().sum();
    let mut widths: Vec<usize> = narrow
        .iter()
        .zip(&wants)
        .map(|(m, want)| m + extra * want / total.max(1))
        .collect();
    let mut left = avail - widths.iter().sum::<usize>();
    for c in 0..columns {
        if left == 0 {
            break;
        }
        if widths[c] < natural[c] {
            widths[c] += 1;
            left -= 1;
        }
    }
    Some(widths)
}

/// The widest word of a cell (at least the widest character, which can never be broken).
fn longest_word(cell: &Line) -> usize {
    let text = cell.plain_text();
    text.split_whitespace().map(text::width).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::super::blocks::render;
    use super::super::highlight::Highlight;
    use crate::tui::text::Line;

    fn screen(doc: &str, width: usize) -> Vec<String> {
        render(doc, width, 0, Highlight::Off, crate::tui::text::Links::Text)
            .iter()
            .map(Line::plain_text)
            .collect()
    }

    #[test]
    fn a_narrow_table_is_a_grid_with_aligned_columns() {
        let doc = "| Name | Size | Kind |\n|:-----|-----:|:----:|\n| a.rs | 12 | src |\n| 日本語.md | 3 | 📄 doc |";
        assert_eq!(
            screen(doc, 60),
            [
                "┌───────────┬──────┬────────┐",
                "│ Name      │ Size │  Kind  │",
                "├───────────┼──────┼────────┤",
                "│ a.rs      │   12 │  src   │",
                "│ 日本語.md │    3 │ 📄 doc │",
                "└───────────┴──────┴────────┘",
            ]
        );
        let lines = render(doc, 60, 0, Highlight::Off, crate::tui::text::Links::Text);
        assert!(lines[1].0.iter().any(|s| s.style.bold), "header emphasis");
    }

    #[test]
    fn cells_wrap_within_the_width() {
        let doc = "| Key | What it does |\n|---|---|\n| theme | picks the colours of code blocks and diffs |\n| é́ | ok |";
        let lines = screen(doc, 30);
        assert_eq!(
            lines,
            [
                "┌───────┬────────────────────┐",
                "│ Key   │ What it does       │",
                "├───────┼────────────────────┤",
                "│ theme │ picks the colours  │",
                "│       │ of code blocks and │",
                "│       │ diffs              │",
                "├───────┼────────────────────┤",
                "│ é́     │ ok                 │",
                "└───────┴────────────────────┘",
            ]
        );
        for l in render(doc, 30, 0, Highlight::Off, crate::tui::text::Links::Text) {
            assert_eq!(l.width(), 30);
        }
    }

    #[test]
    fn a_table_too_wide_for_a_grid_is_one_record_per_block() {
        let doc = "| Package | Version | Licence | Description |\n|---|---|---|---|\n\
                   | serde | 1.0.200 | MIT | serialisation framework |\n| 日本 | 2 | 🦀 | 絵文字 |";
        assert_eq!(
            screen(doc, 24),
            [
                "Package: serde",
                "Version: 1.0.200",
                "Licence: MIT",
                "Description:",
                "  serialisation",
                "  framework",
                "",
                "Package: 日本",
                "Version: 2",
                "Licence: 🦀",
                "Description:",
                "  絵文字",
            ]
        );
    }
}
