//! One block of Markdown (a chunk of source between blank lines) parsed by `pulldown-cmark`
//! and laid out as lines: headings, paragraphs, lists, quotes, code, tables and rules.

use super::highlight::{CodeHighlighter, Highlight};
use super::table::Table;
use super::{CODE_COLOR, MARK, code_lines, fence_footer, fence_header};
use crate::tui::text::{self, Color, Line, LinkId, Links, SpanStyle};
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

const HEADING: SpanStyle = SpanStyle::fg(Color::Magenta).bold();
/// How deep containers may nest before their prefixes stop growing (a hostile answer of a
/// thousand `>` must not make every line a thousand columns of bars).
const MAX_NESTING: usize = 16;

/// Renders `source` (complete Markdown) into lines of at most `width` columns, each behind
/// `indent` spaces.
pub(super) fn render(
    source: &str,
    width: usize,
    indent: usize,
    highlight: Highlight,
    link_mode: Links,
) -> Vec<Line> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut w = Writer {
        width,
        highlight,
        indent,
        out: Vec::new(),
        containers: Vec::new(),
        lists: Vec::new(),
        styles: Vec::new(),
        links: Vec::new(),
        link_mode,
        inline: Line::new(),
        code: None,
        table: None,
        gap: false,
    };
    for event in Parser::new_ext(source, options) {
        w.event(event);
    }
    w.flush_inline();
    w.out
}

/// What surrounds the text being written: each adds a prefix to its lines.
#[derive(Debug)]
enum Container {
    Quote,
    /// A list item: its marker on its first line, as many spaces on the others.
    Item {
        marker: String,
        used: bool,
    },
}

struct Code {
    lang: String,
    text: String,
}

struct Writer {
    width: usize,
    highlight: Highlight,
    indent: usize,
    out: Vec<Line>,
    containers: Vec<Container>,
    /// The next number of each open list (`None` for bullets).
    lists: Vec<Option<u64>>,
    styles: Vec<SpanStyle>,
    /// The targets of open links and images, with their hyperlink when the text is one.
    links: Vec<(String, Option<LinkId>)>,
    /// How links are shown.
    link_mode: Links,
    /// The text of the paragraph, heading or table cell being written.
    inline: Line,
    code: Option<Code>,
    table: Option<Table>,
    /// A block ended: a blank line goes before the next one.
    gap: bool,
}

impl Writer {
    fn style(&self) -> SpanStyle {
        self.styles.last().copied().unwrap_or(SpanStyle::PLAIN)
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                if let Some(code) = &mut self.code {
                    code.text.push_str(&t);
                } else {
                    let style = self.style();
                    self.inline.push(t.into_string(), style);
                }
            }
            Event::Code(t) => {
                let style = self.style().with_fg(CODE_COLOR);
                self.inline.push(t.into_string(), style);
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => {
                let style = self.style();
                self.inline.push(t.into_string(), style);
            }
            Event::Html(t) => {
                // An HTML block is shown as written, line by line.
                for l in t.lines() {
                    self.inline.push(l.to_owned(), SpanStyle::PLAIN);
                    self.flush_inline();
                }
            }
            Event::InlineHtml(t) => {
                let style = self.style();
                self.inline.push(t.into_string(), style);
            }
            Event::FootnoteReference(t) => {
                let style = self.style();
                self.inline.push(format!("[^{t}]"), style);
            }
            // A newline in the text is a line break, as chat UIs show it.
            Event::SoftBreak | Event::HardBreak => {
                if self.table.is_some() {
                    self.inline.push(" ", SpanStyle::PLAIN);
                } else {
                    self.flush_inline();
                }
            }
            Event::Rule => {
                self.block_start();
                let (first, _) = self.prefixes();
                let room = self.width.saturating_sub(first.width()).clamp(1, 80);
                let mut l = first;
                l.push("─".repeat(room), MARK);
                self.push_line(l);
                self.gap = true;
            }
            Event::TaskListMarker(done) => {
                self.inline
                    .push(if done { "☑ " } else { "☐ " }, SpanStyle::PLAIN);
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock | Tag::MetadataBlock(_) => self.block_start(),
            Tag::Heading { level, .. } => {
                self.block_start();
                self.styles.push(match level {
                    HeadingLevel::H1 => HEADING.underline(),
                    HeadingLevel::H2 => HEADING,
                    _ => SpanStyle::PLAIN.bold(),
                });
            }
            Tag::BlockQuote(_) => {
                self.block_start();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.block_start();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_owned()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some(Code {
                    lang,
                    text: String::new(),
                });
            }
            Tag::List(first) => {
                self.flush_inline();
                if self.lists.is_empty() {
                    self.block_start();
                }
                self.lists.push(first);
            }
            Tag::Item => {
                self.flush_inline();
                let depth = self.lists.len();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}.");
                        *n += 1;
                        m
                    }
                    Some(None) | None => if depth <= 1 { "•" } else { "◦" }.to_owned(),
                };
                self.containers.push(Container::Item {
                    marker,
                    used: false,
                });
            }
            Tag::Table(aligns) => {
                self.block_start();
                self.table = Some(Table::new(aligns));
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.start_row();
                }
            }
            Tag::TableCell => self.inline = Line::new(),
            Tag::Emphasis => self.styles.push(self.style().italic()),
            Tag::Strong => self.styles.push(self.style().bold()),
            Tag::Strikethrough => self.styles.push(self.style().strike()),
            Tag::Superscript | Tag::Subscript => self.styles.push(self.style()),
            Tag::Link { dest_url, .. } => {
                let id = match self.link_mode {
                    Links::Osc8 => LinkId::new(&dest_url),
                    Links::Text => None,
                };
                let style = self.style().underline();
                self.styles.push(id.map_or(style, |id| style.linked(id)));
                self.links.push((dest_url.into_string(), id));
            }
            Tag::Image { dest_url, .. } => {
                self.links.push((dest_url.into_string(), None));
                self.styles.push(self.style().italic());
            }
            Tag::FootnoteDefinition(label) => {
                self.block_start();
                self.inline.push(format!("[^{label}]: "), MARK);
            }
            Tag::DefinitionList | Tag::DefinitionListTitle | Tag::DefinitionListDefinition => {
                self.block_start();
            }
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph
            | TagEnd::HtmlBlock
            | TagEnd::MetadataBlock(_)
            | TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition => {
                self.flush_inline();
                self.gap = true;
            }
            TagEnd::Heading(_) => {
                self.flush_inline();
                self.styles.pop();
                self.gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.containers.pop();
                self.gap = true;
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.code_block(&code);
                }
                self.gap = true;
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
                self.gap = true;
            }
            TagEnd::Item => {
                self.flush_inline();
                // An empty item still shows its marker.
                if let Some(Container::Item { used: false, .. }) = self.containers.last() {
                    let (first, _) = self.prefixes();
                    self.push_line(first);
                }
                self.containers.pop();
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    let (first, rest) = self.prefixes();
                    let room = self.width.saturating_sub(first.width()).max(1);
                    for (i, l) in t.lay_out(room).into_iter().enumerate() {
                        let mut line = if i == 0 { first.clone() } else { rest.clone() };
                        line.extend(l);
                        self.push_line(line);
                    }
                }
                self.gap = true;
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(t) = &mut self.table {
                    t.end_row();
                }
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.inline);
                if let Some(t) = &mut self.table {
                    t.push_cell(cell);
                }
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
                // A hyperlink's text opens its URL: the URL need not be shown.
                if let Some((url, None)) = self.links.pop() {
                    let label = self.inline.plain_text();
                    if !url.is_empty() && !label.ends_with(url.as_str()) {
                        self.inline
                            .push(format!(" ({url})"), SpanStyle::PLAIN.dim());
                    }
                }
            }
        }
    }

    /// A block starts: the pending text is written, and a blank line after an earlier block.
    fn block_start(&mut self) {
        self.flush_inline();
        if self.gap && !self.out.is_empty() {
            let (_, rest) = self.prefixes();
            let bars = rest.plain_text().trim_end().to_owned();
            self.out.push(Line::styled(bars, MARK));
        }
        self.gap = false;
    }

    /// The prefixes of the next line and of the lines after it.
    fn prefixes(&self) -> (Line, Line) {
        let mut first = Line::new();
        first.push(" ".repeat(self.indent), SpanStyle::PLAIN);
        let mut rest = first.clone();
        for c in self.containers.iter().take(MAX_NESTING) {
            match c {
                Container::Quote => {
                    first.push("│ ", MARK);
                    rest.push("│ ", MARK);
                }
                Container::Item { marker, used } => {
                    let w = text::width(marker) + 1;
                    if *used {
                        first.push(" ".repeat(w), SpanStyle::PLAIN);
                    } else {
                        first.push(format!("{marker} "), SpanStyle::PLAIN);
                    }
                    rest.push(" ".repeat(w), SpanStyle::PLAIN);
                }
            }
        }
        (first, rest)
    }

    /// Adds a finished line; every list item's marker has been shown now.
    fn push_line(&mut self, line: Line) {
        self.out.push(line);
        self.gap = false;
        for c in &mut self.containers {
            if let Container::Item { used, .. } = c {
                *used = true;
            }
        }
    }

    /// Writes the pending inline text, wrapped behind the containers' prefixes.
    fn flush_inline(&mut self) {
        if self.inline.0.is_empty() || self.table.is_some() {
            return;
        }
        let content = std::mem::take(&mut self.inline);
        let (first, rest) = self.prefixes();
        for l in text::wrap_prefixed(&content, self.width, &first, &rest) {
            self.push_line(l);
        }
    }

    fn code_block(&mut self, code: &Code) {
        let (first, rest) = self.prefixes();
        let room = self.width.saturating_sub(first.width()).max(1);
        let mut lines = vec![fence_header(&code.lang, room)];
        let mut h = CodeHighlighter::new(&code.lang, self.highlight);
        for l in code.text.lines() {
            let expanded = text::expand_tabs(l, super::TAB);
            lines.extend(code_lines(h.line(&expanded), room));
        }
        lines.push(fence_footer());
        for (i, l) in lines.into_iter().enumerate() {
            let mut line = if i == 0 { first.clone() } else { rest.clone() };
            line.extend(l);
            self.push_line(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str, width: usize) -> Vec<String> {
        render(s, width, 0, Highlight::Off, Links::Text)
            .iter()
            .map(Line::plain_text)
            .collect()
    }

    #[test]
    fn nested_and_ordered_lists_keep_their_shape() {
        let doc = "1. one\n2. two\n   - sub a\n   - sub b\n     1. deep\n3. three";
        assert_eq!(
            plain(doc, 40),
            [
                "1. one",
                "2. two",
                "   ◦ sub a",
                "   ◦ sub b",
                "     1. deep",
                "3. three"
            ]
        );
        assert_eq!(plain("7. seven\n8. eight", 40), ["7. seven", "8. eight"]);
        assert_eq!(
            plain("- [ ] todo\n- [x] done", 40),
            ["• ☐ todo", "• ☑ done"]
        );
    }

    #[test]
    fn quotes_headings_links_and_inline_code() {
        assert_eq!(
            plain("> quoted `x`\n> > deep", 40),
            ["│ quoted x", "│", "│ │ deep"]
        );
        assert_eq!(
            plain("# Title\npara [site](https://a.b) and <https://c.d>", 60),
            ["Title", "", "para site (https://a.b) and https://c.d"]
        );
        assert_eq!(plain("~~gone~~ **b** *i*", 40), ["gone b i"]);
        let lines = render("~~gone~~ `c`", 40, 0, Highlight::Off, Links::Text);
        assert!(lines[0].0[0].style.strike);
        assert_eq!(lines[0].0[2].style.fg, Some(CODE_COLOR));
    }

    #[test]
    fn hostile_nesting_stays_bounded() {
        let doc = format!("{}deep", ">".repeat(5000));
        let lines = render(&doc, 80, 0, Highlight::Off, Links::Text);
        assert!(lines.iter().all(|l| l.width() <= 80 + 2 * MAX_NESTING));
        let doc = format!("{}x", "- ".repeat(3000));
        let lines = render(&doc, 80, 0, Highlight::Off, Links::Text);
        assert!(!lines.is_empty());
    }
}
