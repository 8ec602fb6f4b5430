//! Styled text that knows nothing about the terminal: [`Span`]s of text with a [`SpanStyle`],
//! [`Line`]s of spans, their display width, word wrapping to a width, and ANSI rendering.
//!
//! Widths are display columns (unicode-width) summed over grapheme clusters; ANSI escape
//! sequences and control characters count as nothing, and [`render_ansi`] and [`wrap`] drop
//! them from span text, so text from a model cannot move the cursor or change colours.

use std::borrow::Cow;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// The colours hrns uses (the original's scheme: harness blue, errors and tool names red,
/// arguments yellow, success green, reasoning grey).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Color {
    Red,
    Green,
    Yellow,
    Blue,
    Magenta,
    Cyan,
    Grey,
    /// A colour of a highlighting theme: 24-bit where the terminal says it has it
    /// (`COLORTERM=truecolor` or `24bit`), else the nearest of the 256-colour cube.
    Rgb(u8, u8, u8),
}

impl Color {
    /// Appends the SGR parameters of this colour (no allocation: a highlighted answer has a
    /// colour on nearly every word).
    fn push_sgr(self, out: &mut String) {
        use std::fmt::Write;
        let _ = match self {
            Color::Red => out.write_str("31"),
            Color::Green => out.write_str("32"),
            Color::Yellow => out.write_str("33"),
            Color::Blue => out.write_str("34"),
            Color::Magenta => out.write_str("35"),
            Color::Cyan => out.write_str("36"),
            Color::Grey => out.write_str("90"),
            Color::Rgb(r, g, b) if truecolor() => write!(out, "38;2;{r};{g};{b}"),
            Color::Rgb(r, g, b) => write!(out, "38;5;{}", cube_index(r, g, b)),
        };
    }
}

/// Whether the terminal takes 24-bit colours, as `COLORTERM` tells (read once).
fn truecolor() -> bool {
    static TRUECOLOR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRUECOLOR
        .get_or_init(|| std::env::var("COLORTERM").is_ok_and(|v| v == "truecolor" || v == "24bit"))
}

/// The index of the nearest colour of xterm's 6×6×6 cube (16–231).
fn cube_index(r: u8, g: u8, b: u8) -> u8 {
    // The cube's levels are 0, 95, 135, 175, 215, 255.
    let level = |c: u8| -> u8 {
        if c < 48 {
            0
        } else if c < 115 {
            1
        } else {
            (c - 35) / 40
        }
    };
    16 + 36 * level(r) + 6 * level(g) + level(b)
}

/// How a span looks. The default is plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct SpanStyle {
    pub(crate) fg: Option<Color>,
    pub(crate) bold: bool,
    pub(crate) dim: bool,
    pub(crate) italic: bool,
    pub(crate) underline: bool,
    pub(crate) strike: bool,
    /// The target of an OSC 8 hyperlink around the text ([`LinkId::new`]).
    pub(crate) link: Option<LinkId>,
}

impl SpanStyle {
    /// Plain text.
    pub(crate) const PLAIN: SpanStyle = SpanStyle {
        fg: None,
        bold: false,
        dim: false,
        italic: false,
        underline: false,
        strike: false,
        link: None,
    };

    /// Plain text in `color`.
    pub(crate) const fn fg(color: Color) -> SpanStyle {
        SpanStyle {
            fg: Some(color),
            ..SpanStyle::PLAIN
        }
    }

    /// This style in `color`.
    pub(crate) const fn with_fg(self, color: Color) -> SpanStyle {
        SpanStyle {
            fg: Some(color),
            ..self
        }
    }

    /// This style, bold.
    pub(crate) const fn bold(self) -> SpanStyle {
        SpanStyle { bold: true, ..self }
    }

    /// This style, dimmed.
    pub(crate) const fn dim(self) -> SpanStyle {
        SpanStyle { dim: true, ..self }
    }

    /// This style, italic.
    pub(crate) const fn italic(self) -> SpanStyle {
        SpanStyle {
            italic: true,
            ..self
        }
    }

    /// This style, underlined.
    pub(crate) const fn underline(self) -> SpanStyle {
        SpanStyle {
            underline: true,
            ..self
        }
    }

    /// This style, struck through.
    pub(crate) const fn strike(self) -> SpanStyle {
        SpanStyle {
            strike: true,
            ..self
        }
    }

    /// This style, a hyperlink to `link`.
    pub(crate) const fn linked(self, link: LinkId) -> SpanStyle {
        SpanStyle {
            link: Some(link),
            ..self
        }
    }

    /// Appends `ESC [ parameters m` for this style, such as `ESC[1;31m`; nothing for plain
    /// text. Whether it appended anything.
    fn push_sgr(self, out: &mut String) -> bool {
        let flags = [
            (self.bold, "1"),
            (self.dim, "2"),
            (self.italic, "3"),
            (self.underline, "4"),
            (self.strike, "9"),
        ];
        let start = out.len();
        for (on, code) in flags {
            if on {
                out.push_str(if out.len() == start { "\x1b[" } else { ";" });
                out.push_str(code);
            }
        }
        if let Some(c) = self.fg {
            out.push_str(if out.len() == start { "\x1b[" } else { ";" });
            c.push_sgr(out);
        }
        let any = out.len() > start;
        if any {
            out.push('m');
        }
        any
    }
}

/// A run of text in one style. The text should hold no line breaks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Span {
    pub(crate) text: String,
    pub(crate) style: SpanStyle,
}

impl Span {
    /// Text in `style`.
    pub(crate) fn styled(text: impl Into<String>, style: SpanStyle) -> Span {
        Span {
            text: text.into(),
            style,
        }
    }
}

/// One line on the screen: spans side by side.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Line(pub(crate) Vec<Span>);

impl Line {
    /// An empty line.
    pub(crate) fn new() -> Line {
        Line(Vec::new())
    }

    /// A line of one span.
    pub(crate) fn styled(text: impl Into<String>, style: SpanStyle) -> Line {
        Line(vec![Span::styled(text, style)])
    }

    /// A line of unstyled text.
    pub(crate) fn plain(text: impl Into<String>) -> Line {
        Line::styled(text, SpanStyle::PLAIN)
    }

    /// Appends a span; empty text is skipped.
    pub(crate) fn push(&mut self, text: impl Into<String>, style: SpanStyle) {
        let text = text.into();
        if !text.is_empty() {
            self.0.push(Span { text, style });
        }
    }

    /// Appends the spans of `other`.
    pub(crate) fn extend(&mut self, other: Line) {
        self.0
            .extend(other.0.into_iter().filter(|s| !s.text.is_empty()));
    }

    /// The display width in columns.
    pub(crate) fn width(&self) -> usize {
        self.0.iter().map(|s| width(&s.text)).sum()
    }

    /// The text without styles (escape sequences and control characters removed).
    pub(crate) fn plain_text(&self) -> String {
        self.0.iter().map(|s| clean(&s.text)).collect()
    }
}

impl From<&str> for Line {
    fn from(text: &str) -> Line {
        Line::plain(text)
    }
}

/// The text with ANSI escape sequences (CSI, OSC and two-byte `ESC x`) and other control
/// characters removed; a tab becomes one space. Borrowed when there is nothing to remove.
///
/// Known secrets are taken out too ([`crate::host::redact`]): this is the one place every span
/// passes on its way to the screen. After the control characters, so that a secret spliced
/// with them (each piece too short to recognise) is looked for as the screen would show it.
pub(crate) fn clean(s: &str) -> Cow<'_, str> {
    match clean_controls(s) {
        Cow::Borrowed(s) => crate::host::redact::redact(s),
        Cow::Owned(cleaned) => match crate::host::redact::redact(&cleaned) {
            Cow::Borrowed(_) => Cow::Owned(cleaned),
            Cow::Owned(redacted) => Cow::Owned(redacted),
        },
    }
}

fn clean_controls(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                // CSI: parameters and intermediates up to a final byte in @..~.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC (and the other string sequences): up to BEL or ST (ESC \).
                Some(']' | 'P' | '_' | '^' | 'X') => {
                    while let Some(c) = chars.next() {
                        if c == '\x07' {
                            break;
                        }
                        if c == '\x1b' {
                            if chars.peek() == Some(&'\\') {
                                chars.next();
                            }
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\t' => out.push(' '),
            c if is_control(c) => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn is_control(c: char) -> bool {
    c.is_control()
}

/// The display width of `s` in terminal columns: the sum of its grapheme clusters' widths,
/// with ANSI escape sequences and control characters counting as zero.
pub(crate) fn width(s: &str) -> usize {
    let text = clean(s);
    if text.is_ascii() {
        // Cleaned ASCII is printable: one column a byte.
        return text.len();
    }
    clusters(&text).map(grapheme_width).sum()
}

/// The grapheme clusters of cleaned text (no control characters). An ASCII character followed
/// by another ASCII character (or the end) is a cluster of its own, so most of what a model
/// writes skips the segmentation tables, which were the largest single cost of drawing a
/// streamed answer; elsewhere the clusters come from Unicode's rules, started at a boundary.
pub(crate) fn clusters(cleaned: &str) -> Clusters<'_> {
    Clusters {
        text: cleaned,
        at: 0,
    }
}

/// The iterator of [`clusters`].
pub(crate) struct Clusters<'a> {
    text: &'a str,
    /// Where the next cluster starts (always a cluster boundary).
    at: usize,
}

impl<'a> Iterator for Clusters<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = &self.text[self.at..];
        let bytes = rest.as_bytes();
        let first = *bytes.first()?;
        // Only CR LF joins two ASCII characters, and cleaned text has no CR.
        let len = if first.is_ascii() && bytes.get(1).is_none_or(u8::is_ascii) {
            1
        } else {
            let mut chars = rest.chars();
            match (chars.next(), chars.next()) {
                // Two characters that join nothing stand apart (the rule "otherwise, break
                // everywhere"): box drawing, CJK, accented letters, as tables and code
                // gutters are full of.
                (Some(c), next) if lone(c) && next.is_none_or(lone) => c.len_utf8(),
                _ => rest.graphemes(true).next().map_or(rest.len(), str::len),
            }
        };
        self.at += len;
        Some(&rest[..len])
    }
}

/// Whether `c` joins no neighbour into a grapheme cluster: its Grapheme_Cluster_Break
/// property is Other (not Control, Extend, ZWJ, SpacingMark, Prepend, Regional_Indicator or
/// Hangul), checked for a few blocks that answers use a lot; `false` for the rest, which then
/// take the full rules. Extended_Pictographic characters (some symbols here) join only over a
/// ZWJ, which is not one of these.
fn lone(c: char) -> bool {
    matches!(c,
        ' '..='~'
        | '\u{a0}'..='\u{ac}'
        | '\u{ae}'..='\u{2ff}'
        | '\u{2010}'..='\u{2027}'
        | '\u{2030}'..='\u{205e}'
        | '\u{2190}'..='\u{23ff}'
        | '\u{2500}'..='\u{27bf}'
        | '\u{3000}'..='\u{3029}'
        | '\u{3030}'..='\u{303f}'
        | '\u{3041}'..='\u{3096}'
        | '\u{309b}'..='\u{30ff}'
        | '\u{4e00}'..='\u{9fff}'
        | '\u{ff01}'..='\u{ff60}')
}

/// The width of one grapheme cluster (a cleaned one: no control characters).
pub(crate) fn grapheme_width(g: &str) -> usize {
    UnicodeWidthStr::width(g)
}

/// The line as text with SGR escapes when `colors` is on, or as plain text when it is off
/// (the caller passes `false` for `NO_COLOR` or a non-terminal). Each styled span resets the
/// style after itself, so lines can be printed in any order.
pub(crate) fn render_ansi(line: &Line, colors: bool) -> String {
    let mut out = String::new();
    for span in &line.0 {
        let text = clean(&span.text);
        if text.is_empty() {
            continue;
        }
        let link = span.style.link.filter(|_| colors).map(LinkId::url);
        if let Some(url) = &link {
            out.push_str("\x1b]8;;");
            out.push_str(url);
            out.push_str("\x1b\\");
        }
        if colors && span.style.push_sgr(&mut out) {
            out.push_str(&text);
            out.push_str("\x1b[0m");
        } else {
            out.push_str(&text);
        }
        if link.is_some() {
            out.push_str("\x1b]8;;\x1b\\");
        }
    }
    out
}

/// How links in answers are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Links {
    /// `text (url)`: every terminal shows it, and the URL can be copied.
    Text,
    /// The text as an OSC 8 hyperlink to the URL, for terminals that open them.
    Osc8,
}

impl Links {
    /// What this terminal takes: the config's `"hyperlinks": true | false` if set; else OSC
    /// 8 in terminals known to support it (iTerm2, WezTerm, kitty, VS Code, Ghostty, foot,
    /// Windows Terminal, VTE ≥ 0.50 such as GNOME Terminal, Konsole), never inside tmux or
    /// screen (which pass it on only when configured to), and never without colours.
    pub(crate) fn detect(config: Option<bool>, colors: bool) -> Links {
        Links::detect_in(config, colors, |name| {
            std::env::var(name).unwrap_or_default()
        })
    }

    /// [`Links::detect`] with the environment variables `var` gives.
    fn detect_in(config: Option<bool>, colors: bool, var: impl Fn(&str) -> String) -> Links {
        let osc8 = match config {
            _ if !colors || var("TERM") == "dumb" => false,
            Some(setting) => setting,
            None => {
                let term = var("TERM");
                let multiplexed = !var("TMUX").is_empty() || term.starts_with("screen");
                let vte = var("VTE_VERSION").parse::<u32>().is_ok_and(|v| v >= 5000);
                let program = matches!(
                    var("TERM_PROGRAM").as_str(),
                    "iTerm.app" | "WezTerm" | "vscode" | "ghostty" | "Hyper" | "Tabby"
                );
                let by_term = ["xterm-kitty", "xterm-ghostty", "wezterm", "foot"]
                    .iter()
                    .any(|t| term.starts_with(t));
                let others = ["KITTY_WINDOW_ID", "WT_SESSION", "KONSOLE_VERSION"]
                    .iter()
                    .any(|v| !var(v).is_empty());
                !multiplexed && (vte || program || by_term || others)
            }
        };
        if osc8 { Links::Osc8 } else { Links::Text }
    }
}

/// A URL that may be the target of an OSC 8 hyperlink, by number, so that [`SpanStyle`] stays
/// a small `Copy` value. The URLs are kept for the run (each distinct URL once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LinkId(u32);

/// The longest URL made a hyperlink; a longer one is shown as text.
const MAX_LINK_URL: usize = 2048;

#[derive(Default)]
struct LinkTable {
    urls: Vec<std::sync::Arc<str>>,
    ids: std::collections::HashMap<std::sync::Arc<str>, u32>,
}

fn link_table() -> std::sync::MutexGuard<'static, LinkTable> {
    static LINKS: std::sync::OnceLock<std::sync::Mutex<LinkTable>> = std::sync::OnceLock::new();
    LINKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl LinkId {
    /// The id of `url` when it can be a hyperlink safely: an `http`, `https` or `mailto`
    /// URL of visible ASCII only (no spaces, no control characters, so nothing in it can end
    /// the escape sequence early or start another) and not over 2 KiB; and no secret in it
    /// (redaction would change it). `None` otherwise: the link is shown as text.
    pub(crate) fn new(url: &str) -> Option<LinkId> {
        let scheme_ok = ["http://", "https://", "mailto:"]
            .iter()
            .any(|s| url.len() > s.len() && url[..s.len()].eq_ignore_ascii_case(s));
        let bytes_ok = url.bytes().all(|b| (0x21..=0x7e).contains(&b));
        if !scheme_ok || !bytes_ok || url.len() > MAX_LINK_URL {
            return None;
        }
        if let Cow::Owned(_) = crate::host::redact::redact(url) {
            return None;
        }
        let mut table = link_table();
        if let Some(&id) = table.ids.get(url) {
            return Some(LinkId(id));
        }
        let id = u32::try_from(table.urls.len()).ok()?;
        let url: std::sync::Arc<str> = url.into();
        table.urls.push(url.clone());
        table.ids.insert(url, id);
        Some(LinkId(id))
    }

    fn url(self) -> std::sync::Arc<str> {
        link_table().urls[self.0 as usize].clone()
    }
}

/// One grapheme cluster with its style and width.
#[derive(Debug, Clone)]
struct Cell<'a> {
    text: &'a str,
    style: SpanStyle,
    width: usize,
    space: bool,
}

/// Builds lines out of cells, merging neighbours of the same style into one span.
#[derive(Debug, Default)]
struct LineBuilder {
    line: Line,
    width: usize,
}

impl LineBuilder {
    fn push(&mut self, cell: &Cell<'_>) {
        self.width += cell.width;
        if let Some(last) = self.line.0.last_mut() {
            if last.style == cell.style {
                last.text.push_str(cell.text);
                return;
            }
        }
        self.line.0.push(Span::styled(cell.text, cell.style));
    }

    fn take(&mut self) -> Line {
        self.width = 0;
        std::mem::take(&mut self.line)
    }
}

/// Wraps `line` to `width` columns (at least 1).
///
/// Breaks at spaces (dropped at the break) and after wide characters; a word longer than a
/// line is broken between grapheme clusters. A cluster is never split, and a wide character
/// that does not fit before the edge moves to the next line (on a line narrower than the
/// character it stands alone). Styles carry over the break. Continuation lines repeat the
/// line's leading indentation when it is at most half the width (list items, code). A line
/// that fits is returned as it is; the result always has at least one line.
pub(crate) fn wrap(line: &Line, width: usize) -> Vec<Line> {
    let width = width.max(1);
    if line.width() <= width {
        return vec![line.clone()];
    }
    let cleaned: Vec<(Cow<'_, str>, SpanStyle)> =
        line.0.iter().map(|s| (clean(&s.text), s.style)).collect();
    let cells: Vec<Cell<'_>> = cleaned
        .iter()
        .flat_map(|(text, style)| {
            clusters(text).map(|g| Cell {
                text: g,
                style: *style,
                width: grapheme_width(g),
                space: g.chars().all(char::is_whitespace),
            })
        })
        .collect();
    let indent_len = cells.iter().take_while(|c| c.space).count();
    let indent_width: usize = cells[..indent_len].iter().map(|c| c.width).sum();
    let indent: &[Cell<'_>] = if indent_len < cells.len() && indent_width * 2 <= width {
        &cells[..indent_len]
    } else {
        &[]
    };

    let mut out = Vec::new();
    let mut cur = LineBuilder::default();
    // Spaces seen since the last word, emitted only if the next word stays on this line.
    let mut pending: Vec<&Cell<'_>> = Vec::new();
    let mut fresh = true; // nothing but the indentation on the current line
    let new_line = |cur: &mut LineBuilder, out: &mut Vec<Line>| {
        out.push(cur.take());
        for c in indent {
            cur.push(c);
        }
    };

    // The leading indentation stays on the first line as it is.
    for c in &cells[..indent_len] {
        cur.push(c);
    }
    let mut i = indent_len;
    while i < cells.len() {
        if cells[i].space {
            pending.push(&cells[i]);
            i += 1;
            continue;
        }
        // A word: non-space cells up to a space or just after a wide cell.
        let start = i;
        while i < cells.len() && !cells[i].space {
            i += 1;
            if cells[i - 1].width > 1 {
                break;
            }
        }
        let word = &cells[start..i];
        let word_width: usize = word.iter().map(|c| c.width).sum();
        let pending_width: usize = pending.iter().map(|c| c.width).sum();
        if cur.width + pending_width + word_width <= width {
            for c in pending.drain(..) {
                cur.push(c);
            }
        } else if !fresh && indent_width + word_width <= width {
            pending.clear();
            new_line(&mut cur, &mut out);
        } else {
            // Too long for any line: fill this one and break between clusters.
            if cur.width + pending_width < width {
                for c in pending.drain(..) {
                    cur.push(c);
                }
            } else {
                pending.clear();
                if !fresh {
                    new_line(&mut cur, &mut out);
                }
            }
            for c in word {
                if cur.width + c.width > width && cur.width > 0 {
                    new_line(&mut cur, &mut out);
                }
                cur.push(c);
            }
            fresh = false;
            continue;
        }
        for c in word {
            cur.push(c);
        }
        fresh = false;
    }
    out.push(cur.take());
    out
}

/// Wraps `content` to `width` columns with `first` in front of its first line and `rest` in
/// front of the others (a bullet and its hanging indent, a quote bar); the content gets the
/// width left after the wider prefix, at least 1 column.
pub(crate) fn wrap_prefixed(content: &Line, width: usize, first: &Line, rest: &Line) -> Vec<Line> {
    let inner = width.saturating_sub(first.width().max(rest.width())).max(1);
    wrap(content, inner)
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let mut line = if i == 0 { first.clone() } else { rest.clone() };
            line.extend(l);
            line
        })
        .collect()
}

/// Cuts `line` to at most `width` columns, ending it in `…` when something was cut.
pub(crate) fn truncate(line: &Line, width: usize) -> Line {
    if line.width() <= width {
        return line.clone();
    }
    if width == 0 {
        return Line::new();
    }
    let mut out = LineBuilder::default();
    let mut last_style = SpanStyle::PLAIN;
    'spans: for span in &line.0 {
        let text = clean(&span.text);
        for g in clusters(&text) {
            let cell = Cell {
                text: g,
                style: span.style,
                width: grapheme_width(g),
                space: false,
            };
            if out.width + cell.width > width - 1 {
                break 'spans;
            }
            last_style = span.style;
            out.push(&cell);
        }
    }
    out.push(&Cell {
        text: "…",
        style: last_style,
        width: 1,
        space: false,
    });
    out.take()
}

/// Cuts plain text to at most `width` columns with a trailing `…` when cut.
pub(crate) fn truncate_str(s: &str, width: usize) -> String {
    truncate(&Line::plain(s), width).plain_text()
}

/// Replaces each tab with spaces up to the next multiple of `tab` columns.
pub(crate) fn expand_tabs(s: &str, tab: usize) -> Cow<'_, str> {
    if !s.contains('\t') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut col = 0;
    for g in s.graphemes(true) {
        if g == "\t" {
            let n = tab - col % tab;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else {
            out.push_str(g);
            col += width(g);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_spliced_with_control_characters_is_redacted_as_shown() {
        // A value no other test prints: the set of secrets is process-wide.
        let key = "sk-tui-spliced-0123456789";
        crate::host::redact::remember(&{
            let mut s = hrns_core::secrets::Secrets::new();
            s.add(key);
            s
        });
        // Pieces of at most seven bytes between BELs and escape sequences.
        let spliced = "key sk-tui-\x07splice\x1b[0md-0123\x07456789.";
        assert_eq!(clean(spliced), "key [redacted].");
        assert_eq!(clean(&format!("plain {key}")), "plain [redacted]");
    }

    #[test]
    fn clusters_are_the_unicode_ones() {
        let printable: String = (0x20u8..0x7f).map(char::from).collect();
        for s in [
            "",
            "a",
            "hello, world",
            printable.as_str(),
            "  indented `code` and **bold**",
            "caf\u{e9} and cafe\u{301}, e\u{301}\u{302}x",
            "flags \u{1f1eb}\u{1f1f7}\u{1f1e9}\u{1f1ea}\u{1f1ec} end",
            "a family \u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467} and x\u{1f44d}\u{1f3fd}y",
            "\u{1100}\u{1161}\u{11a8} \u{d55c}\u{ad6d}\u{c5b4} \u{4e2d}\u{6587}",
            "a\u{200d}b \u{feff} \u{301}lead",
        ] {
            let fast: Vec<&str> = clusters(s).collect();
            let slow: Vec<&str> = s.graphemes(true).collect();
            assert_eq!(fast, slow, "{s:?}");
            assert_eq!(
                width(s),
                slow.iter().map(|g| grapheme_width(g)).sum::<usize>()
            );
        }
        // Every string of up to four pieces from an alphabet of the characters whose clusters
        // span more than one: combining marks, joiners, regional indicators, modifiers.
        let alphabet = [
            "a",
            " ",
            "\u{301}",
            "\u{200d}",
            "\u{1f1eb}",
            "\u{1f468}",
            "\u{1f3fd}",
            "\u{e9}",
            "\u{1100}",
            "\u{1161}",
            "\u{fe0f}",
            "日",
            "─",
            "é",
            "\u{3099}",
            "\u{302a}",
            "✅",
            "\u{ad}",
            "\u{2060}",
            "\u{2028}",
        ];
        let mut strings = vec![String::new()];
        for _ in 0..4 {
            strings = strings
                .iter()
                .flat_map(|s| alphabet.iter().map(move |a| format!("{s}{a}")))
                .collect();
            for s in &strings {
                let fast: Vec<&str> = clusters(s).collect();
                let slow: Vec<&str> = s.graphemes(true).collect();
                assert_eq!(fast, slow, "{s:?}");
            }
        }
        // A combining accent stays with the ASCII letter before it.
        assert_eq!(clusters("e\u{301}x").collect::<Vec<_>>(), ["e\u{301}", "x"]);
    }

    fn texts(lines: &[Line]) -> Vec<String> {
        lines.iter().map(Line::plain_text).collect()
    }

    fn wrap_plain(s: &str, w: usize) -> Vec<String> {
        texts(&wrap(&Line::plain(s), w))
    }

    #[test]
    fn width_counts_columns_not_bytes() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("日本"), 4);
        assert_eq!(width("e\u{301}"), 1); // combining acute
        assert_eq!(width("a\u{200b}b"), 2); // zero-width space
        assert_eq!(width("👍"), 2);
        assert_eq!(width("👨‍👩‍👧"), 2); // one ZWJ family
        assert_eq!(width(""), 0);
    }

    #[test]
    fn width_ignores_escapes_and_controls() {
        assert_eq!(width("\x1b[1;31mred\x1b[0m"), 3);
        assert_eq!(width("\x1b]8;;http://x\x07link\x1b]8;;\x1b\\"), 4);
        assert_eq!(width("a\rb\x07c\x7f"), 3);
        assert_eq!(clean("a\tb"), "a b");
    }

    #[test]
    fn hyperlinks_where_the_terminal_is_known_to_open_them() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
                    .unwrap_or_default()
            }
        };
        let osc8 = |config, colors, vars| Links::detect_in(config, colors, env(vars));
        assert_eq!(
            osc8(None, true, &[("TERM_PROGRAM", "WezTerm")]),
            Links::Osc8
        );
        assert_eq!(osc8(None, true, &[("VTE_VERSION", "7600")]), Links::Osc8);
        assert_eq!(osc8(None, true, &[("VTE_VERSION", "4000")]), Links::Text);
        assert_eq!(osc8(None, true, &[("TERM", "xterm-kitty")]), Links::Osc8);
        assert_eq!(osc8(None, true, &[("TERM", "xterm-256color")]), Links::Text);
        // tmux passes OSC 8 on only when configured to: text unless the config says so.
        let tmux: &[(&str, &str)] = &[("TERM_PROGRAM", "iTerm.app"), ("TMUX", "/tmp/t,1,0")];
        assert_eq!(osc8(None, true, tmux), Links::Text);
        assert_eq!(osc8(Some(true), true, tmux), Links::Osc8);
        assert_eq!(
            osc8(Some(false), true, &[("TERM_PROGRAM", "WezTerm")]),
            Links::Text
        );
        // No colours (NO_COLOR) or a dumb terminal: never.
        assert_eq!(osc8(Some(true), false, &[]), Links::Text);
        assert_eq!(osc8(Some(true), true, &[("TERM", "dumb")]), Links::Text);
    }

    #[test]
    fn render_ansi_honours_colors_flag() {
        let mut line = Line::plain("x ");
        line.push("err", SpanStyle::fg(Color::Red).bold());
        assert_eq!(render_ansi(&line, true), "x \x1b[1;31merr\x1b[0m");
        assert_eq!(render_ansi(&line, false), "x err");
        // Escapes in the text itself never reach the terminal.
        let evil = Line::plain("a\x1b[2Jb");
        assert_eq!(render_ansi(&evil, true), "ab");
    }

    #[test]
    fn wrap_breaks_at_spaces() {
        assert_eq!(
            wrap_plain("the quick brown fox", 10),
            ["the quick", "brown fox"]
        );
        assert_eq!(wrap_plain("fits", 10), ["fits"]);
        assert_eq!(wrap_plain("", 10), [""]);
        assert_eq!(wrap_plain("a  b", 3), ["a", "b"]);
    }

    #[test]
    fn wrap_breaks_long_words() {
        assert_eq!(wrap_plain("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap_plain("ab cdefghij", 4), ["ab c", "defg", "hij"]);
    }

    #[test]
    fn wrap_never_splits_wide_characters() {
        // 5 wide characters (10 columns) in 5 columns: 2 per line, one column left over.
        assert_eq!(wrap_plain("日本語です", 5), ["日本", "語で", "す"]);
        assert_eq!(wrap_plain("a👍👍👍", 4), ["a👍", "👍👍"]);
        for l in wrap(&Line::plain("a日本語b"), 3) {
            assert!(l.width() <= 3);
        }
    }

    #[test]
    fn wrap_keeps_grapheme_clusters_whole() {
        let s = "e\u{301}e\u{301}e\u{301}e\u{301}";
        let lines = wrap_plain(s, 2);
        assert_eq!(lines, ["e\u{301}e\u{301}", "e\u{301}e\u{301}"]);
        let family = "👨‍👩‍👧👨‍👩‍👧";
        assert_eq!(wrap_plain(family, 3), ["👨‍👩‍👧", "👨‍👩‍👧"]);
    }

    #[test]
    fn wrap_handles_zero_width_and_width_one() {
        assert_eq!(
            wrap_plain("a\u{200b}b\u{200b}c", 1),
            ["a\u{200b}", "b\u{200b}", "c"]
        );
        assert_eq!(wrap_plain("ab cd", 1), ["a", "b", "c", "d"]);
        // A wide character on a 1-column line stands alone rather than looping.
        assert_eq!(wrap_plain("日本", 1), ["日", "本"]);
        assert_eq!(wrap_plain("ab", 0), ["a", "b"]);
    }

    #[test]
    fn wrap_carries_styles_across_the_break() {
        let mut line = Line::plain("plain ");
        line.push("bold words here", SpanStyle::PLAIN.bold());
        let lines = wrap(&line, 11);
        assert_eq!(texts(&lines), ["plain bold", "words here"]);
        assert_eq!(lines[1].0[0].style, SpanStyle::PLAIN.bold());
        assert_eq!(lines[0].0.len(), 2);
    }

    #[test]
    fn wrap_keeps_short_indentation() {
        assert_eq!(
            wrap_plain("    one two three four", 14),
            ["    one two", "    three four"]
        );
        // Indentation of more than half the width is not repeated.
        assert_eq!(wrap_plain("        ab cd", 10), ["        ab", "cd"]);
    }

    #[test]
    fn wrap_prefixed_hangs_the_rest() {
        let lines = wrap_prefixed(
            &Line::plain("one two three"),
            9,
            &Line::plain("• "),
            &Line::plain("  "),
        );
        assert_eq!(texts(&lines), ["• one two", "  three"]);
    }

    #[test]
    fn truncate_ends_in_ellipsis() {
        assert_eq!(truncate_str("abcdef", 4), "abc…");
        assert_eq!(truncate_str("abc", 4), "abc");
        assert_eq!(truncate_str("日本語", 4), "日…");
        assert_eq!(truncate_str("abc", 0), "");
        let mut l = Line::plain("ab");
        l.push("cdef", SpanStyle::fg(Color::Red));
        let t = truncate(&l, 4);
        assert_eq!(t.plain_text(), "abc…");
        assert_eq!(t.width(), 4);
    }

    #[test]
    fn expand_tabs_to_stops() {
        assert_eq!(expand_tabs("a\tb", 4), "a   b");
        assert_eq!(expand_tabs("\tx", 4), "    x");
        assert_eq!(expand_tabs("abcd\tx", 4), "abcd    x");
    }
}
