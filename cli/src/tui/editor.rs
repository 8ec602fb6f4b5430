//! The prompt's line editor: a state machine over crossterm key events and pastes, with no
//! terminal IO. The event loop feeds it keys, acts on the [`EditorAction`] and draws
//! [`Editor::render`].
//!
//! The text may hold several lines. The cursor is a byte offset that always sits between
//! grapheme clusters; it moves by clusters, and columns are display widths.
//!
//! Keys: ←/→ (Ctrl-B/F), Home/End (Ctrl-A/E) within the line; Alt/Ctrl-←/→ and Alt-B/F by
//! word; Backspace (Ctrl-H), Delete, Ctrl-D on text; Ctrl-W the word before (up to a space),
//! Alt-Backspace/Ctrl-Backspace the word before and Alt-D the word after (letters and digits);
//! Ctrl-U to the start of the line, Ctrl-K to its end (at the end, joins the next line);
//! Alt/Shift-Enter and Ctrl-J insert a newline; Enter after a `\` turns it into a newline,
//! otherwise sends; ↑/↓ (Ctrl-P/N) move between lines and, on the first/last line, walk the
//! history, keeping the unsent draft; Tab asks for completion; Esc and Ctrl-C cancel;
//! Ctrl-D on empty text exits; Ctrl-L redraws.

use super::history::History;
use super::text::{self, Line};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::ops::Range;
use unicode_segmentation::UnicodeSegmentation;

/// How many columns a tab takes on screen.
const TAB_WIDTH: usize = 4;

/// What the event loop should do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EditorAction {
    /// Nothing changed.
    None,
    /// The text or the cursor changed (or Ctrl-L): draw again.
    Redraw,
    /// Send this text. The editor is now empty; the caller adds the text to the history.
    Submit(String),
    /// Esc or Ctrl-C: interrupt the turn, or clear the text (the editor keeps it).
    Cancel,
    /// Ctrl-D on empty text: leave.
    Exit,
    /// Tab: complete the text at the cursor (see `commands::complete`).
    Complete,
}

/// The text being typed, its cursor and the history it can walk.
#[derive(Debug, Clone)]
pub(crate) struct Editor {
    buf: String,
    cursor: usize,
    history: History,
    /// The history entry shown while walking the history; `None` while editing the draft.
    walk: Option<usize>,
    /// The unsent text, kept while the history is shown.
    draft: String,
}

impl Editor {
    /// An empty editor over `history`.
    pub(crate) fn new(history: History) -> Editor {
        Editor {
            buf: String::new(),
            cursor: 0,
            history,
            walk: None,
            draft: String::new(),
        }
    }

    /// The text.
    pub(crate) fn text(&self) -> &str {
        &self.buf
    }

    /// The cursor as a byte offset into [`Editor::text`].
    pub(crate) fn cursor(&self) -> usize {
        self.cursor
    }

    /// Whether there is no text.
    pub(crate) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Replaces the text, with the cursor at its end.
    pub(crate) fn set_text(&mut self, text: &str) {
        self.buf = text.to_owned();
        self.cursor = self.buf.len();
    }

    /// Empties the text and leaves the history walk.
    pub(crate) fn clear(&mut self) {
        self.buf.clear();
        self.cursor = 0;
        self.walk = None;
        self.draft.clear();
    }

    /// Replaces `range` of the text (a completion) and puts the cursor after the new text.
    /// A range that is out of bounds or not on character boundaries is ignored.
    pub(crate) fn replace_range(&mut self, range: Range<usize>, with: &str) {
        if range.start > range.end || self.buf.get(range.clone()).is_none() {
            return;
        }
        self.buf.replace_range(range.clone(), with);
        self.cursor = range.start + with.len();
    }

    /// The history, to add what was sent.
    pub(crate) fn history_mut(&mut self) -> &mut History {
        &mut self.history
    }

    /// Handles one key. Key releases are ignored.
    pub(crate) fn handle_key(&mut self, key: KeyEvent) -> EditorAction {
        if key.kind == KeyEventKind::Release {
            return EditorAction::None;
        }
        let m = key.modifiers;
        let ctrl = m.contains(KeyModifiers::CONTROL);
        let alt = m.contains(KeyModifiers::ALT);
        let shift = m.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if alt || shift => self.insert("\n"),
            KeyCode::Enter => return self.enter(),
            KeyCode::Esc => return EditorAction::Cancel,
            KeyCode::Tab => return EditorAction::Complete,
            KeyCode::Left if ctrl || alt => self.cursor = self.word_start(),
            KeyCode::Right if ctrl || alt => self.cursor = self.word_end(),
            KeyCode::Left => self.cursor = self.prev_boundary(self.cursor),
            KeyCode::Right => self.cursor = self.next_boundary(self.cursor),
            KeyCode::Home => self.cursor = self.line_start(),
            KeyCode::End => self.cursor = self.line_end(),
            KeyCode::Up => self.up(),
            KeyCode::Down => self.down(),
            KeyCode::Backspace if ctrl || alt => self.delete_to(self.word_start()),
            KeyCode::Backspace => self.delete_to(self.prev_boundary(self.cursor)),
            KeyCode::Delete => self.delete_to(self.next_boundary(self.cursor)),
            KeyCode::Char(c) if ctrl && !alt => match c.to_ascii_lowercase() {
                'c' => return EditorAction::Cancel,
                'd' if self.buf.is_empty() => return EditorAction::Exit,
                'd' => self.delete_to(self.next_boundary(self.cursor)),
                'a' => self.cursor = self.line_start(),
                'e' => self.cursor = self.line_end(),
                'b' => self.cursor = self.prev_boundary(self.cursor),
                'f' => self.cursor = self.next_boundary(self.cursor),
                'h' => self.delete_to(self.prev_boundary(self.cursor)),
                'w' => self.delete_to(self.space_word_start()),
                'u' => self.delete_to(self.line_start()),
                'k' => self.kill_to_end(),
                'j' => self.insert("\n"),
                'p' => self.up(),
                'n' => self.down(),
                'l' => {}
                _ => return EditorAction::None,
            },
            KeyCode::Char(c) if alt && !ctrl => match c {
                'b' => self.cursor = self.word_start(),
                'f' => self.cursor = self.word_end(),
                'd' => self.delete_to(self.word_end()),
                _ => return EditorAction::None,
            },
            // Plain, shifted, or AltGr (Ctrl+Alt on Windows) characters.
            KeyCode::Char(c) => self.insert(c.encode_utf8(&mut [0; 4])),
            _ => return EditorAction::None,
        }
        EditorAction::Redraw
    }

    /// Inserts pasted text as it is, however many lines: line ends become `\n` and control
    /// characters other than newline and tab are dropped. Nothing is sent.
    pub(crate) fn handle_paste(&mut self, pasted: &str) -> EditorAction {
        let normal = pasted.replace("\r\n", "\n").replace('\r', "\n");
        let clean: String = normal
            .chars()
            .filter(|&c| c == '\n' || c == '\t' || !c.is_control())
            .collect();
        if clean.is_empty() {
            return EditorAction::None;
        }
        self.insert(&clean);
        EditorAction::Redraw
    }

    /// The text laid out for a screen `width` columns wide, behind `prompt` (the first line)
    /// and as many spaces (the others); long lines break between clusters. Returns the rows
    /// and the cursor's (row, column) in them. Tabs show as spaces.
    pub(crate) fn render(&self, width: usize, prompt: &Line) -> (Vec<Line>, (usize, usize)) {
        let pw = prompt.width();
        let avail = width.saturating_sub(pw).max(1);
        let indent = " ".repeat(pw);
        let mut rows: Vec<Line> = Vec::new();
        let mut cursor = (0, pw);
        let mut offset = 0;
        for (li, text) in self.buf.split('\n').enumerate() {
            let mut row = String::new();
            let mut col = 0;
            let mut first_row = li == 0;
            let mut flush = |row: &mut String, rows: &mut Vec<Line>| {
                let mut line = if first_row {
                    prompt.clone()
                } else {
                    Line::plain(indent.clone())
                };
                first_row = false;
                line.push(std::mem::take(row), text::SpanStyle::PLAIN);
                rows.push(line);
            };
            for (gi, g) in text.grapheme_indices(true) {
                let (shown, w) = display(g);
                if col + w > avail && col > 0 {
                    flush(&mut row, &mut rows);
                    col = 0;
                }
                if offset + gi == self.cursor {
                    cursor = (rows.len(), pw + col);
                }
                row.push_str(&shown);
                col += w;
            }
            if offset + text.len() == self.cursor {
                if col >= avail {
                    flush(&mut row, &mut rows);
                    col = 0;
                }
                cursor = (rows.len(), pw + col);
            }
            flush(&mut row, &mut rows);
            offset += text.len() + 1;
        }
        (rows, cursor)
    }

    fn insert(&mut self, s: &str) {
        self.buf.insert_str(self.cursor, s);
        self.cursor += s.len();
    }

    /// Enter: continue after a trailing backslash, send non-blank text, ignore blank text.
    fn enter(&mut self) -> EditorAction {
        if self.buf[..self.cursor].ends_with('\\') {
            self.buf.replace_range(self.cursor - 1..self.cursor, "\n");
            return EditorAction::Redraw;
        }
        if self.buf.trim().is_empty() {
            return EditorAction::None;
        }
        let text = std::mem::take(&mut self.buf);
        self.clear();
        EditorAction::Submit(text)
    }

    /// Deletes between the cursor and `to` (either side of it).
    fn delete_to(&mut self, to: usize) {
        let range = if to < self.cursor {
            to..self.cursor
        } else {
            self.cursor..to
        };
        self.buf.replace_range(range.clone(), "");
        self.cursor = range.start;
    }

    /// Ctrl-K: to the end of the line, or the line end itself when already there.
    fn kill_to_end(&mut self) {
        let end = self.line_end();
        if end == self.cursor && end < self.buf.len() {
            self.delete_to(end + 1);
        } else {
            self.delete_to(end);
        }
    }

    fn prev_boundary(&self, i: usize) -> usize {
        self.buf[..i]
            .grapheme_indices(true)
            .next_back()
            .map_or(0, |(j, _)| j)
    }

    fn next_boundary(&self, i: usize) -> usize {
        i + self.buf[i..].graphemes(true).next().map_or(0, str::len)
    }

    fn line_start(&self) -> usize {
        self.buf[..self.cursor].rfind('\n').map_or(0, |p| p + 1)
    }

    fn line_end(&self) -> usize {
        self.buf[self.cursor..]
            .find('\n')
            .map_or(self.buf.len(), |p| self.cursor + p)
    }

    /// The start of the word before the cursor (letters, digits and `_`).
    fn word_start(&self) -> usize {
        let mut i = self.cursor;
        let mut seen_word = false;
        for (j, g) in self.buf[..self.cursor].grapheme_indices(true).rev() {
            let word = is_word(g);
            if seen_word && !word {
                break;
            }
            seen_word |= word;
            i = j;
        }
        i
    }

    /// The end of the word after the cursor.
    fn word_end(&self) -> usize {
        let mut i = self.cursor;
        let mut seen_word = false;
        for g in self.buf[self.cursor..].graphemes(true) {
            let word = is_word(g);
            if seen_word && !word {
                break;
            }
            seen_word |= word;
            i += g.len();
        }
        i
    }

    /// The start of the space-separated word before the cursor (Ctrl-W).
    fn space_word_start(&self) -> usize {
        let before = &self.buf[..self.cursor];
        let trimmed = before.trim_end();
        trimmed.rfind(char::is_whitespace).map_or(0, |p| {
            p + trimmed[p..].chars().next().map_or(1, char::len_utf8)
        })
    }

    /// The display column of the cursor in its line.
    fn column(&self) -> usize {
        self.buf[self.line_start()..self.cursor]
            .graphemes(true)
            .map(|g| display(g).1)
            .sum()
    }

    /// The offset in the line starting at `start` closest to display column `col`.
    fn at_column(&self, start: usize, col: usize) -> usize {
        let end = self.buf[start..]
            .find('\n')
            .map_or(self.buf.len(), |p| start + p);
        let mut acc = 0;
        for (j, g) in self.buf[start..end].grapheme_indices(true) {
            let w = display(g).1;
            if acc + w > col {
                return start + j;
            }
            acc += w;
        }
        end
    }

    fn up(&mut self) {
        let start = self.line_start();
        if start == 0 {
            return self.history_back();
        }
        let col = self.column();
        let prev_start = self.buf[..start - 1].rfind('\n').map_or(0, |p| p + 1);
        self.cursor = self.at_column(prev_start, col);
    }

    fn down(&mut self) {
        let end = self.line_end();
        if end == self.buf.len() {
            return self.history_forward();
        }
        let col = self.column();
        self.cursor = self.at_column(end + 1, col);
    }

    fn history_back(&mut self) {
        let n = self.history.len();
        let index = match self.walk {
            _ if n == 0 => return,
            None => {
                self.draft = self.buf.clone();
                n - 1
            }
            Some(0) => return,
            Some(i) => i - 1,
        };
        self.walk = Some(index);
        self.set_text(&self.history.entries()[index].clone());
    }

    fn history_forward(&mut self) {
        match self.walk {
            None => {}
            Some(i) if i + 1 < self.history.len() => {
                self.walk = Some(i + 1);
                self.set_text(&self.history.entries()[i + 1].clone());
            }
            Some(_) => {
                self.walk = None;
                let draft = std::mem::take(&mut self.draft);
                self.set_text(&draft);
            }
        }
    }
}

/// Whether a cluster belongs to a word for word motions.
fn is_word(g: &str) -> bool {
    g.chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// How a cluster shows in the editor, and its width.
fn display(g: &str) -> (String, usize) {
    if g == "\t" {
        return (" ".repeat(TAB_WIDTH), TAB_WIDTH);
    }
    let shown = text::clean(g).into_owned();
    let w = text::width(&shown);
    (shown, w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }
    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }
    fn alt(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::ALT)
    }

    fn typed(s: &str) -> Editor {
        let mut e = Editor::new(History::in_memory());
        type_str(&mut e, s);
        e
    }

    fn type_str(e: &mut Editor, s: &str) {
        for c in s.chars() {
            e.handle_key(key(KeyCode::Char(c)));
        }
    }

    /// The text with `|` at the cursor.
    fn shown(e: &Editor) -> String {
        format!("{}|{}", &e.text()[..e.cursor()], &e.text()[e.cursor()..])
    }

    #[test]
    fn typing_and_moving() {
        let mut e = typed("hello");
        assert_eq!(shown(&e), "hello|");
        e.handle_key(key(KeyCode::Left));
        e.handle_key(key(KeyCode::Left));
        type_str(&mut e, "X");
        assert_eq!(shown(&e), "helX|lo");
        e.handle_key(key(KeyCode::Home));
        assert_eq!(shown(&e), "|helXlo");
        e.handle_key(key(KeyCode::Left));
        assert_eq!(shown(&e), "|helXlo");
        e.handle_key(ctrl('e'));
        assert_eq!(shown(&e), "helXlo|");
        e.handle_key(ctrl('a'));
        e.handle_key(key(KeyCode::Right));
        assert_eq!(shown(&e), "h|elXlo");
        let shifted = KeyEvent::new(KeyCode::Char('Y'), KeyModifiers::SHIFT);
        e.handle_key(shifted);
        assert_eq!(shown(&e), "hY|elXlo");
        let mut release = key(KeyCode::Char('z'));
        release.kind = KeyEventKind::Release;
        assert_eq!(e.handle_key(release), EditorAction::None);
    }

    #[test]
    fn word_jumps() {
        let mut e = typed("let foo_bar = baz(1);");
        e.handle_key(alt(KeyCode::Char('b')));
        assert_eq!(shown(&e), "let foo_bar = baz(|1);");
        e.handle_key(KeyEvent::new(KeyCode::Left, KeyModifiers::CONTROL));
        assert_eq!(shown(&e), "let foo_bar = |baz(1);");
        e.handle_key(alt(KeyCode::Left));
        assert_eq!(shown(&e), "let |foo_bar = baz(1);");
        e.handle_key(alt(KeyCode::Char('f')));
        assert_eq!(shown(&e), "let foo_bar| = baz(1);");
        e.handle_key(alt(KeyCode::Right));
        assert_eq!(shown(&e), "let foo_bar = baz|(1);");
    }

    #[test]
    fn deletions() {
        let mut e = typed("one two-three  ");
        e.handle_key(ctrl('w'));
        assert_eq!(shown(&e), "one |");
        type_str(&mut e, "two-three");
        e.handle_key(alt(KeyCode::Backspace));
        assert_eq!(shown(&e), "one two-|");
        e.handle_key(key(KeyCode::Backspace));
        assert_eq!(shown(&e), "one two|");
        e.handle_key(ctrl('a'));
        e.handle_key(key(KeyCode::Delete));
        assert_eq!(shown(&e), "|ne two");
        e.handle_key(alt(KeyCode::Char('d')));
        assert_eq!(shown(&e), "| two");
        e.handle_key(ctrl('d'));
        assert_eq!(shown(&e), "|two");
        e.handle_key(key(KeyCode::Right));
        e.handle_key(ctrl('k'));
        assert_eq!(shown(&e), "t|");
        e.handle_key(ctrl('u'));
        assert_eq!(shown(&e), "|");
        assert_eq!(e.handle_key(ctrl('d')), EditorAction::Exit);
    }

    #[test]
    fn line_keys_stay_in_their_line() {
        let mut e = typed("ab");
        e.handle_key(alt(KeyCode::Enter));
        type_str(&mut e, "cd");
        e.handle_key(ctrl('u'));
        assert_eq!(shown(&e), "ab\n|");
        type_str(&mut e, "cd");
        e.handle_key(key(KeyCode::Up));
        assert_eq!(shown(&e), "ab|\ncd");
        e.handle_key(ctrl('k'));
        assert_eq!(shown(&e), "ab|cd");
        e.handle_key(key(KeyCode::Home));
        assert_eq!(shown(&e), "|abcd");
    }

    #[test]
    fn multi_line_input() {
        let mut e = typed("first");
        e.handle_key(alt(KeyCode::Enter));
        e.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
        type_str(&mut e, "second\\");
        assert_eq!(e.handle_key(key(KeyCode::Enter)), EditorAction::Redraw);
        type_str(&mut e, "third");
        assert_eq!(
            e.handle_key(key(KeyCode::Enter)),
            EditorAction::Submit("first\n\nsecond\nthird".into())
        );
        assert!(e.is_empty());
        // Blank text is not sent.
        let mut e = typed("  ");
        assert_eq!(e.handle_key(key(KeyCode::Enter)), EditorAction::None);
    }

    #[test]
    fn up_and_down_move_between_lines_by_column() {
        let mut e = typed("日本語");
        e.handle_key(alt(KeyCode::Enter));
        type_str(&mut e, "abcdef");
        e.handle_key(key(KeyCode::Left));
        e.handle_key(key(KeyCode::Left));
        e.handle_key(key(KeyCode::Up)); // column 4: after 本
        assert_eq!(shown(&e), "日本|語\nabcdef");
        e.handle_key(key(KeyCode::Down));
        assert_eq!(shown(&e), "日本語\nabcd|ef");
    }

    #[test]
    fn history_walk_keeps_the_draft() {
        let mut h = History::in_memory();
        h.add("old one").unwrap();
        h.add("multi\nline").unwrap();
        let mut e = Editor::new(h);
        type_str(&mut e, "draft");
        e.handle_key(key(KeyCode::Up));
        assert_eq!(shown(&e), "multi\nline|");
        e.handle_key(key(KeyCode::Up)); // inside the entry first
        assert_eq!(shown(&e), "mult|i\nline");
        e.handle_key(key(KeyCode::Up));
        assert_eq!(shown(&e), "old one|");
        e.handle_key(key(KeyCode::Up)); // the oldest stays
        assert_eq!(shown(&e), "old one|");
        e.handle_key(key(KeyCode::Down));
        assert_eq!(shown(&e), "multi\nline|");
        e.handle_key(key(KeyCode::Down));
        assert_eq!(shown(&e), "draft|");
        e.handle_key(key(KeyCode::Down));
        assert_eq!(shown(&e), "draft|");
        // Sending from the history leaves the walk.
        e.handle_key(ctrl('p'));
        assert_eq!(
            e.handle_key(key(KeyCode::Enter)),
            EditorAction::Submit("multi\nline".into())
        );
        e.handle_key(key(KeyCode::Down));
        assert_eq!(shown(&e), "|");
        assert_eq!(e.history_mut().len(), 2);
    }

    #[test]
    fn paste_is_one_message() {
        let mut e = typed("see: ");
        assert_eq!(
            e.handle_paste("line 1\r\nline 2\rline 3\n\x1b[31m"),
            EditorAction::Redraw
        );
        assert_eq!(shown(&e), "see: line 1\nline 2\nline 3\n[31m|");
        assert_eq!(e.handle_paste(""), EditorAction::None);
    }

    #[test]
    fn unicode_cursor_moves_by_cluster() {
        let mut e = typed("e\u{301}👨‍👩‍👧x");
        e.handle_key(key(KeyCode::Left));
        e.handle_key(key(KeyCode::Left));
        assert_eq!(shown(&e), "e\u{301}|👨‍👩‍👧x");
        e.handle_key(key(KeyCode::Backspace));
        assert_eq!(shown(&e), "|👨‍👩‍👧x");
        e.handle_key(key(KeyCode::Delete));
        assert_eq!(shown(&e), "|x");
    }

    #[test]
    fn control_keys_report_actions() {
        let mut e = typed("x");
        assert_eq!(e.handle_key(key(KeyCode::Tab)), EditorAction::Complete);
        assert_eq!(e.handle_key(key(KeyCode::Esc)), EditorAction::Cancel);
        assert_eq!(e.handle_key(ctrl('c')), EditorAction::Cancel);
        assert_eq!(e.handle_key(ctrl('l')), EditorAction::Redraw);
        assert_eq!(e.handle_key(key(KeyCode::F(5))), EditorAction::None);
        assert_eq!(e.text(), "x");
    }

    #[test]
    fn render_wraps_and_places_the_cursor() {
        let prompt = Line::plain("> ");
        let e = typed("abcdef");
        let (rows, cur) = e.render(6, &prompt);
        let rows: Vec<String> = rows.iter().map(Line::plain_text).collect();
        assert_eq!(rows, ["> abcd", "  ef"]);
        assert_eq!(cur, (1, 4));
        // A full last row puts the cursor on a new row.
        let e = typed("abcd");
        let (rows, cur) = e.render(6, &prompt);
        assert_eq!(rows.len(), 2);
        assert_eq!(cur, (1, 2));
        // Wide characters move whole; lines after a newline are indented.
        let mut e = typed("日本語");
        e.handle_key(alt(KeyCode::Enter));
        type_str(&mut e, "\tx");
        e.handle_key(ctrl('a'));
        let (rows, cur) = e.render(7, &prompt);
        let rows: Vec<String> = rows.iter().map(Line::plain_text).collect();
        assert_eq!(rows, ["> 日本", "  語", "      x"]);
        assert_eq!(cur, (2, 2));
        for w in [1, 3, 7] {
            let (rows, _) = e.render(w, &prompt);
            // A tab (4 columns) behind the indentation may overflow a tiny screen.
            assert!(rows.iter().all(|r| r.width() <= w.max(6)));
        }
    }

    #[test]
    fn completion_replaces_a_range() {
        let mut e = typed("/mo");
        e.replace_range(1..3, "model ");
        assert_eq!(shown(&e), "/model |");
        e.replace_range(5..99, "x");
        assert_eq!(e.text(), "/model ");
    }
}
