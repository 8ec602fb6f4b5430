//! Assistant text as styled lines: a small, streaming Markdown renderer.
//!
//! The subset: ATX headings, `**bold**`, `*italic*`, `` `code` ``, fenced code blocks (``` or
//! `~~~`, with an optional language), bullet, numbered and task lists, block quotes, links
//! (text and a dim URL), autolinks, horizontal rules and backslash escapes. Anything else is
//! shown as written.
//!
//! A newline in the text is a line break (as chat UIs do, unlike CommonMark's soft breaks), so
//! each finished source line is rendered once and for all as soon as its `\n` arrives. That
//! is what makes streaming cheap: [`MarkdownRenderer::lines_committed`] only grows, and only
//! the unfinished last source line ([`MarkdownRenderer::lines_pending`]) changes as text
//! streams in. Blank lines collapse to one and are emitted only before more content.

use super::text::{self, Color, Line, SpanStyle, expand_tabs, grapheme_width, wrap, wrap_prefixed};
use inline::inline;
use unicode_segmentation::UnicodeSegmentation;

mod inline;

const HEADING: SpanStyle = SpanStyle::fg(Color::Magenta).bold();
/// The colour of inline code.
const CODE_COLOR: Color = Color::Cyan;
const MARK: SpanStyle = SpanStyle::PLAIN.dim();
/// The gutter in front of each code line.
const CODE_GUTTER: &str = "  │ ";
const TAB: usize = 4;
/// How deep quotes, emphasis and links may nest before the rest is shown as written.
const MAX_NESTING: usize = 16;

/// Renders Markdown that arrives in pieces into lines of at most `width` columns.
#[derive(Debug, Clone)]
pub(crate) struct MarkdownRenderer {
    width: usize,
    state: BlockState,
    committed: Vec<Line>,
    /// The unfinished last source line.
    partial: String,
}

/// What a source line's rendering depends on besides the line itself.
#[derive(Debug, Clone, Default)]
struct BlockState {
    /// The open code block's fence.
    fence: Option<Fence>,
    /// A blank line was seen after some content; it is shown before the next content.
    blank_pending: bool,
    /// Something was shown already (leading blank lines are dropped).
    started: bool,
}

#[derive(Debug, Clone, Copy)]
struct Fence {
    ch: u8,
    len: usize,
    indent: usize,
}

impl MarkdownRenderer {
    /// A renderer for lines of `width` columns (at least 1).
    pub(crate) fn new(width: usize) -> Self {
        MarkdownRenderer {
            width: width.max(1),
            state: BlockState::default(),
            committed: Vec::new(),
            partial: String::new(),
        }
    }

    /// Renders a whole document at once.
    pub(crate) fn render(text: &str, width: usize) -> Vec<Line> {
        let mut r = MarkdownRenderer::new(width);
        r.push(text);
        r.finish();
        r.committed
    }

    /// Changes the width of the lines rendered from now on (after a resize). Committed lines
    /// keep the width they were rendered at.
    pub(crate) fn set_width(&mut self, width: usize) {
        self.width = width.max(1);
    }

    /// Adds streamed text; every source line it completes is rendered and committed.
    pub(crate) fn push(&mut self, text: &str) {
        let mut rest = text;
        while let Some(pos) = rest.find('\n') {
            self.partial.push_str(&rest[..pos]);
            let line = std::mem::take(&mut self.partial);
            let line = line.strip_suffix('\r').unwrap_or(&line);
            let lines = render_line(&mut self.state, line, self.width);
            self.committed.extend(lines);
            rest = &rest[pos + 1..];
        }
        self.partial.push_str(rest);
    }

    /// Ends the text: the unfinished line is committed and an open code block is closed.
    pub(crate) fn finish(&mut self) {
        if !self.partial.is_empty() {
            self.push("\n");
        }
        if self.state.fence.take().is_some() {
            self.committed.push(Line::styled("  ╰─", MARK));
        }
        self.state.blank_pending = false;
    }

    /// Every line of finished source lines so far. It only grows: a line here never changes,
    /// so the UI prints `lines_committed()[printed..]` to the scrollback once.
    pub(crate) fn lines_committed(&self) -> &[Line] {
        &self.committed
    }

    /// The unfinished last source line as it would look now; redrawn as text streams in.
    pub(crate) fn lines_pending(&self) -> Vec<Line> {
        if self.partial.is_empty() {
            return Vec::new();
        }
        let mut state = self.state.clone();
        let line = self.partial.strip_suffix('\r').unwrap_or(&self.partial);
        render_line(&mut state, line, self.width)
    }
}

/// Renders one complete source line (without its line end) in `state`.
fn render_line(state: &mut BlockState, line: &str, width: usize) -> Vec<Line> {
    let line = expand_tabs(line, TAB);
    let mut out = Vec::new();
    if let Some(fence) = state.fence {
        if is_closing_fence(&line, fence) {
            state.fence = None;
            out.push(Line::styled("  ╰─", MARK));
        } else {
            let code = strip_indent(&line, fence.indent);
            out.extend(code_lines(code, width));
        }
        return out;
    }
    if line.trim().is_empty() {
        state.blank_pending = state.started;
        return out;
    }
    if state.blank_pending {
        out.push(Line::new());
        state.blank_pending = false;
    }
    state.started = true;
    if let Some((fence, lang)) = opening_fence(&line) {
        state.fence = Some(fence);
        let mut l = Line::styled("  ╭─", MARK);
        if !lang.is_empty() {
            l.push(format!(" {lang}"), MARK);
        }
        out.push(text::truncate(&l, width));
        return out;
    }
    out.extend(block_line(&line, width, 0));
    out
}

/// A line outside code blocks: heading, rule, quote, list item or paragraph text.
fn block_line(line: &str, width: usize, depth: usize) -> Vec<Line> {
    if let Some(inner) = quote(line) {
        let bar = Line::styled("│ ", MARK);
        if inner.trim().is_empty() || depth >= MAX_NESTING {
            return vec![Line::styled("│", MARK)];
        }
        let inner_width = width.saturating_sub(2).max(1);
        return block_line(inner, inner_width, depth + 1)
            .into_iter()
            .map(|l| {
                let mut b = bar.clone();
                b.extend(l);
                b
            })
            .collect();
    }
    if let Some((level, text)) = heading(line) {
        let style = if level == 1 {
            HEADING.underline()
        } else if level == 2 {
            HEADING
        } else {
            SpanStyle::PLAIN.bold()
        };
        return wrap(&inline(text, style), width);
    }
    if is_rule(line) {
        return vec![Line::styled("─".repeat(width.min(80)), MARK)];
    }
    if let Some(item) = list_item(line) {
        // Room for the marker, a space and one column of text comes first.
        let room = width.saturating_sub(text::width(&item.marker) + 2);
        let indent = " ".repeat(item.indent.min(width / 2).min(room));
        let mut first = Line::plain(indent.clone());
        first.push(item.marker.clone(), SpanStyle::PLAIN);
        first.push(" ", SpanStyle::PLAIN);
        let rest = Line::plain(" ".repeat(first.width()));
        let mut text = item.text;
        if let Some(t) = text.strip_prefix("[ ] ") {
            first.push("☐ ", SpanStyle::PLAIN);
            text = t;
        } else if let Some(t) = text
            .strip_prefix("[x] ")
            .or_else(|| text.strip_prefix("[X] "))
        {
            first.push("☑ ", SpanStyle::PLAIN);
            text = t;
        }
        return wrap_prefixed(&inline(text, SpanStyle::PLAIN), width, &first, &rest);
    }
    // Paragraph text; its leading indentation is kept by `wrap`.
    let body = line.trim_start();
    let mut l = Line::plain(&line[..line.len() - body.len()]);
    l.extend(inline(body.trim_end(), SpanStyle::PLAIN));
    wrap(&l, width)
}

/// A code line, broken hard at the width (no word wrapping), each piece behind the gutter.
fn code_lines(code: &str, width: usize) -> Vec<Line> {
    let avail = width.saturating_sub(text::width(CODE_GUTTER)).max(1);
    let mut out = Vec::new();
    let mut piece = String::new();
    let mut cols = 0;
    for g in code.graphemes(true) {
        let w = grapheme_width(g);
        if cols + w > avail && cols > 0 {
            out.push(std::mem::take(&mut piece));
            cols = 0;
        }
        piece.push_str(g);
        cols += w;
    }
    out.push(piece);
    out.into_iter()
        .map(|p| {
            let mut l = Line::styled(CODE_GUTTER, MARK);
            l.push(p, SpanStyle::PLAIN);
            l
        })
        .collect()
}

/// Up to `n` leading spaces removed.
fn strip_indent(line: &str, n: usize) -> &str {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    &line[spaces.min(n)..]
}

/// The number of leading spaces when there are at most three (a block may be indented so).
fn small_indent(line: &str) -> Option<usize> {
    let n = line.len() - line.trim_start_matches(' ').len();
    (n <= 3).then_some(n)
}

/// "A code fence is a sequence of at least three consecutive backtick characters or tildes",
/// indented by up to three spaces; a backtick fence's info string has no backticks.
fn opening_fence(line: &str) -> Option<(Fence, &str)> {
    let indent = small_indent(line)?;
    let rest = &line[indent..];
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|&b| b == ch).count();
    if len < 3 {
        return None;
    }
    let info = rest[len..].trim();
    if ch == b'`' && info.contains('`') {
        return None;
    }
    let lang = info.split_whitespace().next().unwrap_or("");
    Some((Fence { ch, len, indent }, lang))
}

/// A closing fence: the same character, at least as many, nothing after but spaces.
fn is_closing_fence(line: &str, fence: Fence) -> bool {
    let Some(indent) = small_indent(line) else {
        return false;
    };
    let rest = &line[indent..];
    let len = rest.bytes().take_while(|&b| b == fence.ch).count();
    len >= fence.len && rest[len..].trim().is_empty()
}

/// `# Title` … `###### Title`: the level and the text without the closing `#`s.
fn heading(line: &str) -> Option<(usize, &str)> {
    let rest = &line[small_indent(line)?..];
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let text = &rest[level..];
    if !(text.is_empty() || text.starts_with(' ')) {
        return None;
    }
    let text = text.trim();
    let closed = text.trim_end_matches('#');
    let text = if closed.is_empty() {
        closed
    } else if closed.ends_with(' ') {
        closed.trim_end()
    } else {
        text
    };
    Some((level, text))
}

/// Three or more `-`, `*` or `_` (the same one), with spaces between allowed.
fn is_rule(line: &str) -> bool {
    let Some(indent) = small_indent(line) else {
        return false;
    };
    let rest = line[indent..].trim_end();
    let Some(ch) = rest.chars().next() else {
        return false;
    };
    matches!(ch, '-' | '*' | '_')
        && rest.chars().all(|c| c == ch || c == ' ')
        && rest.chars().filter(|&c| c == ch).count() >= 3
}

/// `> text`: the text after the marker and one optional space.
fn quote(line: &str) -> Option<&str> {
    let rest = line[small_indent(line)?..].strip_prefix('>')?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

#[derive(Debug)]
struct ListItem<'a> {
    indent: usize,
    marker: String,
    text: &'a str,
}

/// `- item`, `* item`, `+ item`, `1. item` or `1) item`, at any indentation.
fn list_item(line: &str) -> Option<ListItem<'_>> {
    let body = line.trim_start_matches(' ');
    let indent = line.len() - body.len();
    let bytes = body.as_bytes();
    let (marker, after) = match bytes.first()? {
        b'-' | b'*' | b'+' => (if indent == 0 { "•" } else { "◦" }.to_owned(), 1),
        b'0'..=b'9' => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            if digits > 9 || !matches!(bytes.get(digits), Some(b'.' | b')')) {
                return None;
            }
            (body[..=digits].to_owned(), digits + 1)
        }
        _ => return None,
    };
    let text = &body[after..];
    if !text.is_empty() && !text.starts_with(' ') {
        return None;
    }
    Some(ListItem {
        indent,
        marker,
        text: text.trim(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[Line]) -> Vec<String> {
        lines.iter().map(Line::plain_text).collect()
    }

    fn render(s: &str) -> Vec<String> {
        plain(&MarkdownRenderer::render(s, 40))
    }

    #[test]
    fn block_vectors() {
        assert_eq!(render("# Title #\ntext"), ["Title", "text"]);
        assert_eq!(render("#hashtag"), ["#hashtag"]);
        assert_eq!(render("- a\n  * b\n3. c"), ["• a", "  ◦ b", "3. c"]);
        assert_eq!(render("- [ ] todo\n- [x] done"), ["• ☐ todo", "• ☑ done"]);
        assert_eq!(
            render("> quoted\n>\n> > deep"),
            ["│ quoted", "│", "│ │ deep"]
        );
        assert_eq!(render("---")[0], "─".repeat(40));
        assert_eq!(render("-1 degrees"), ["-1 degrees"]);
        assert_eq!(render("**bold** start"), ["bold start"]);
    }

    #[test]
    fn blank_lines_collapse_and_trail_nothing() {
        assert_eq!(render("\n\na\n\n\n\nb\n\n"), ["a", "", "b"]);
    }

    #[test]
    fn code_blocks_are_set_apart_and_not_wrapped() {
        let doc = "text\n```rust\nfn main() {\n\tlet x = \"**not bold**\";\n\n}\n```\nafter";
        assert_eq!(
            render(doc),
            [
                "text",
                "  ╭─ rust",
                "  │ fn main() {",
                "  │     let x = \"**not bold**\";",
                "  │ ",
                "  │ }",
                "  ╰─",
                "after"
            ]
        );
        // Hard breaks at the width, not at words; an unclosed block is closed at the end.
        let lines = plain(&MarkdownRenderer::render("~~~\nabc def ghi\n", 8));
        assert_eq!(lines, ["  ╭─", "  │ abc ", "  │ def ", "  │ ghi", "  ╰─"]);
        // A shorter fence does not close a longer one.
        assert_eq!(render("````\n```\n````"), ["  ╭─", "  │ ```", "  ╰─"]);
    }

    #[test]
    fn paragraphs_wrap_with_hanging_list_indent() {
        let lines = plain(&MarkdownRenderer::render(
            "- one two three four five six",
            12,
        ));
        assert_eq!(lines, ["• one two", "  three four", "  five six"]);
        let lines = plain(&MarkdownRenderer::render("> aaa bbb ccc", 7));
        assert_eq!(lines, ["│ aaa", "│ bbb", "│ ccc"]);
    }

    #[test]
    fn heading_styles() {
        let lines = MarkdownRenderer::render("# A\n## B\n### C", 20);
        assert_eq!(lines[0].0[0].style, HEADING.underline());
        assert_eq!(lines[1].0[0].style, HEADING);
        assert_eq!(lines[2].0[0].style, SpanStyle::PLAIN.bold());
    }

    const DOC: &str = "# Plan\n\nFirst **bold** and `code` with [a link](http://x.y).\n\n\
        - item one\n- item *two*\n  1. nested\n\n> a quote\n\n```sh\nls -la\r\n\n```\n\n---\n\
        Last line without newline é 日本";

    #[test]
    fn streaming_in_pieces_equals_the_whole() {
        let whole = MarkdownRenderer::render(DOC, 30);
        // Every split into single characters, and every split into two pieces.
        let mut r = MarkdownRenderer::new(30);
        let mut seen = 0;
        for (i, c) in DOC.char_indices() {
            r.push(&DOC[i..i + c.len_utf8()]);
            let committed = r.lines_committed();
            assert!(committed.len() >= seen);
            assert_eq!(
                committed,
                &whole[..committed.len()],
                "committed lines never change"
            );
            seen = committed.len();
        }
        r.finish();
        assert_eq!(r.lines_committed(), whole.as_slice());
        for (split, _) in DOC.char_indices() {
            let mut r = MarkdownRenderer::new(30);
            r.push(&DOC[..split]);
            r.push(&DOC[split..]);
            r.finish();
            assert_eq!(r.lines_committed(), whole.as_slice(), "split at {split}");
        }
    }

    #[test]
    fn pending_shows_the_unfinished_line() {
        let mut r = MarkdownRenderer::new(40);
        r.push("done\n\n**bo");
        assert_eq!(plain(r.lines_committed()), ["done"]);
        assert_eq!(plain(&r.lines_pending()), ["", "**bo"]);
        r.push("ld**");
        assert_eq!(plain(&r.lines_pending()), ["", "bold"]);
        r.push("\n");
        assert!(r.lines_pending().is_empty());
        assert_eq!(plain(r.lines_committed()), ["done", "", "bold"]);
        r.push("```\nco");
        assert_eq!(plain(&r.lines_pending()), ["  │ co"]);
    }

    #[test]
    fn lines_fit_the_width() {
        for w in [1, 2, 5, 13, 40] {
            for l in MarkdownRenderer::render(DOC, w) {
                // The gutter and list markers may exceed a width too narrow to hold them.
                assert!(l.width() <= w.max(5), "{w}: {:?}", l.plain_text());
            }
        }
    }
}
