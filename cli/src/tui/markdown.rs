//! Assistant text as styled lines: Markdown parsed by `pulldown-cmark` (CommonMark with GFM
//! tables, strikethrough and task lists), rendered as it streams in.
//!
//! Streaming stays cheap because the source is cut into blocks at blank lines (outside code),
//! at headings and at code fences, and each block is rendered once, when it is finished:
//! [`MarkdownRenderer::lines_committed`] only grows. Only the open block
//! ([`MarkdownRenderer::lines_pending`]) is laid out again as text streams in, so a table is
//! re-aligned while its rows arrive. A code fence at the left margin is streamed line by
//! line instead: each finished line of code is highlighted and committed at once, the
//! highlighter's state carried to the next.
//!
//! A newline in the text is a line break (as chat UIs do, unlike CommonMark's soft breaks).
//! The cuts cost a little fidelity: a loose list is shown as lists one after another
//! (numbers kept), and a link reference is known only inside its block.

use super::text::{self, Color, Line, Links, SpanStyle, grapheme_width};

mod blocks;
pub(crate) mod highlight;
mod lexer;
mod table;

use highlight::{CodeHighlighter, Highlight};

/// The colour of inline code.
const CODE_COLOR: Color = Color::Cyan;
/// Borders, gutters, quote bars and other marks.
const MARK: SpanStyle = SpanStyle::PLAIN.dim();
/// The gutter in front of each code line.
const CODE_GUTTER: &str = "  │ ";
const TAB: usize = 4;

/// Renders Markdown that arrives in pieces into lines of at most `width` columns.
#[derive(Debug, Clone)]
pub(crate) struct MarkdownRenderer {
    width: usize,
    highlight: Highlight,
    links: Links,
    committed: Vec<Line>,
    /// The finished source lines of the open block.
    block: String,
    /// A fence opened inside the open block (in a list or quote) and not closed yet: blank
    /// lines do not end the block then.
    inner_fence: Option<Fence>,
    /// The code block being streamed line by line.
    code: Option<OpenCode>,
    /// The unfinished last source line.
    partial: String,
    /// Something was committed already: the next block is set apart by a blank line.
    started: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fence {
    ch: u8,
    len: usize,
    indent: usize,
}

#[derive(Debug, Clone)]
struct OpenCode {
    fence: Fence,
    highlighter: CodeHighlighter,
}

impl MarkdownRenderer {
    /// A renderer for lines of `width` columns (at least 1), colouring code as `highlight` says.
    pub(crate) fn new(width: usize, highlight: Highlight) -> Self {
        MarkdownRenderer {
            width: width.max(1),
            highlight,
            links: Links::Text,
            committed: Vec::new(),
            block: String::new(),
            inner_fence: None,
            code: None,
            partial: String::new(),
            started: false,
        }
    }

    /// Links shown as `links` says (`text (url)` unless told otherwise).
    pub(crate) fn with_links(self, links: Links) -> Self {
        MarkdownRenderer { links, ..self }
    }

    /// Renders a whole document at once.
    #[cfg(test)]
    pub(crate) fn render(text: &str, width: usize, highlight: Highlight) -> Vec<Line> {
        MarkdownRenderer::new(width, highlight).document(text)
    }

    /// Renders a whole document at once with this renderer's settings.
    pub(crate) fn document(mut self, text: &str) -> Vec<Line> {
        self.push(text);
        self.finish();
        self.committed
    }

    /// Changes the width of the lines rendered from now on (after a resize). Committed lines
    /// keep the width they were rendered at.
    pub(crate) fn set_width(&mut self, width: usize) {
        self.width = width.max(1);
    }

    /// Adds streamed text; every source line it completes is taken in.
    pub(crate) fn push(&mut self, text: &str) {
        let mut rest = text;
        while let Some(pos) = rest.find('\n') {
            self.partial.push_str(&rest[..pos]);
            let line = std::mem::take(&mut self.partial);
            self.take_line(line.strip_suffix('\r').unwrap_or(&line));
            rest = &rest[pos + 1..];
        }
        self.partial.push_str(rest);
    }

    /// Ends the text: the unfinished line and the open block are committed, an open code
    /// block is closed.
    pub(crate) fn finish(&mut self) {
        if !self.partial.is_empty() {
            self.push("\n");
        }
        if self.code.take().is_some() {
            self.committed.push(fence_footer());
        }
        self.flush_block();
    }

    /// Every line of finished blocks so far. It only grows: a line here never changes, so the
    /// UI prints `lines_committed()[printed..]` to the scrollback once.
    pub(crate) fn lines_committed(&self) -> &[Line] {
        &self.committed
    }

    /// The open block with the unfinished line, as it would look now; redrawn as text streams.
    pub(crate) fn lines_pending(&self) -> Vec<Line> {
        let partial = self.partial.strip_suffix('\r').unwrap_or(&self.partial);
        if let Some(code) = &self.code {
            if partial.is_empty() || is_closing_fence(partial, code.fence) {
                return Vec::new();
            }
            let mut h = code.highlighter.clone();
            return self.code_line(&mut h, partial, code.fence.indent);
        }
        if self.block.is_empty() && partial.trim().is_empty() {
            return Vec::new();
        }
        let mut source = self.block.clone();
        // A table's delimiter row in the making is not shown as text.
        let delimiter = partial.contains('-')
            && partial.starts_with('|')
            && partial
                .bytes()
                .all(|b| matches!(b, b'|' | b'-' | b':' | b' '));
        if !delimiter {
            source.push_str(partial);
        }
        let mut lines = Vec::new();
        let rendered = self.render_block(&source);
        if self.started && !rendered.is_empty() {
            lines.push(Line::new());
        }
        lines.extend(rendered);
        lines
    }

    /// One complete source line (without its line end).
    fn take_line(&mut self, line: &str) {
        let line = text::expand_tabs(line, TAB);
        let line = line.as_ref();
        if let Some(mut code) = self.code.take() {
            if is_closing_fence(line, code.fence) {
                self.committed.push(fence_footer());
            } else {
                // The highlighter's state moves on by this line: nothing is parsed twice.
                let lines = self.code_line(&mut code.highlighter, line, code.fence.indent);
                self.committed.extend(lines);
                self.code = Some(code);
            }
            return;
        }
        if let Some(fence) = self.inner_fence {
            self.block.push_str(line);
            self.block.push('\n');
            if is_closing_fence(container_content(line), Fence { indent: 3, ..fence }) {
                self.inner_fence = None;
            }
            return;
        }
        if line.trim().is_empty() {
            self.flush_block();
            return;
        }
        // At the margin (or at the start of a block) a fence or a heading starts a block of
        // its own: it cannot continue a list item or a quote.
        let top = self.block.is_empty() || !line.starts_with(' ');
        if let Some((fence, lang)) = opening_fence(line).filter(|_| top) {
            self.flush_block();
            self.separate();
            self.committed.push(fence_header(lang, self.width));
            self.code = Some(OpenCode {
                fence,
                highlighter: CodeHighlighter::new(lang, self.highlight),
            });
            return;
        }
        if top && is_heading(line) {
            self.flush_block();
            self.block.push_str(line);
            self.flush_block();
            return;
        }
        if let Some((fence, _)) = opening_fence(container_content(line)) {
            self.inner_fence = Some(fence);
        }
        self.block.push_str(line);
        self.block.push('\n');
    }

    /// Renders and commits the open block.
    fn flush_block(&mut self) {
        self.inner_fence = None;
        if self.block.is_empty() {
            return;
        }
        let source = std::mem::take(&mut self.block);
        let lines = self.render_block(&source);
        if !lines.is_empty() {
            self.separate();
            self.committed.extend(lines);
        }
    }

    /// A blank line before the next block, when something came before it.
    fn separate(&mut self) {
        if self.started {
            self.committed.push(Line::new());
        }
        self.started = true;
    }

    fn render_block(&self, source: &str) -> Vec<Line> {
        // A block cut from a list after a blank line keeps the list's indentation.
        let indent = source.len() - source.trim_start_matches(' ').len();
        let indent = if indent < 4 { indent } else { 0 };
        blocks::render(source, self.width, indent, self.highlight, self.links)
    }

    fn code_line(&self, h: &mut CodeHighlighter, line: &str, indent: usize) -> Vec<Line> {
        let spaces = line.len() - line.trim_start_matches(' ').len();
        code_lines(h.line(&line[spaces.min(indent)..]), self.width)
    }
}

/// The line that opens a code block: `╭─ lang`.
fn fence_header(lang: &str, width: usize) -> Line {
    let mut l = Line::styled("  ╭─", MARK);
    if !lang.is_empty() {
        l.push(format!(" {lang}"), MARK);
    }
    text::truncate(&l, width)
}

/// The line that closes a code block.
fn fence_footer() -> Line {
    Line::styled("  ╰─", MARK)
}

/// A code line, broken hard at the width (no word wrapping), each piece behind the gutter.
fn code_lines(code: Line, width: usize) -> Vec<Line> {
    let avail = width.saturating_sub(text::width(CODE_GUTTER)).max(1);
    let gutter = Line::styled(CODE_GUTTER, MARK);
    let mut out = Vec::new();
    let mut cur = gutter.clone();
    let mut cols = 0;
    for span in code.0 {
        let cleaned = text::clean(&span.text);
        let mut piece = String::new();
        for g in text::clusters(&cleaned) {
            let w = grapheme_width(g);
            if cols + w > avail && cols > 0 {
                cur.push(std::mem::take(&mut piece), span.style);
                out.push(std::mem::replace(&mut cur, gutter.clone()));
                cols = 0;
            }
            piece.push_str(g);
            cols += w;
        }
        cur.push(piece, span.style);
    }
    out.push(cur);
    out
}

/// The line without the markers of the quotes and list items in front of it.
fn container_content(line: &str) -> &str {
    let mut rest = line.trim_start();
    loop {
        if let Some(r) = rest.strip_prefix('>') {
            rest = r.trim_start();
        } else if let Some(r) = ["- ", "* ", "+ "].iter().find_map(|m| rest.strip_prefix(m)) {
            rest = r.trim_start();
        } else {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            match rest.as_bytes().get(digits) {
                Some(b'.' | b')')
                    if digits > 0 && rest.as_bytes().get(digits + 1) == Some(&b' ') =>
                {
                    rest = rest[digits + 2..].trim_start();
                }
                _ => return rest,
            }
        }
    }
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

/// `# Title` … `###### Title`, indented by at most three spaces.
fn is_heading(line: &str) -> bool {
    let Some(indent) = small_indent(line) else {
        return false;
    };
    let rest = &line[indent..];
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&level) && matches!(rest.as_bytes().get(level), None | Some(b' ' | b'\t'))
}

#[cfg(test)]
mod tests;
