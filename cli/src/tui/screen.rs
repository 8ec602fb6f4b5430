//! The inline screen: finished lines go to the terminal's scrollback once; a small live area at
//! the bottom (pending answer text, spinner, approval prompt, the editor, the status line) is
//! redrawn in place. The terminal is put back as it was on drop, and on panic.

use super::text::{self, Line};
use crossterm::{cursor, event, queue, style, terminal};
use std::io::{self, Stdout, Write};

/// The terminal in raw mode with the live area's bookkeeping.
pub(crate) struct Screen {
    /// Everything a print or a draw writes is buffered and goes out in one write at its end
    /// (stdout alone would make a system call for each line).
    out: io::BufWriter<Stdout>,
    colors: bool,
    /// The row of the live area the cursor was left on (0 = its first row).
    cursor_row: u16,
    /// The terminal's width in columns.
    pub(crate) width: u16,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen")
            .field("width", &self.width)
            .finish_non_exhaustive()
    }
}

/// Puts the terminal back: raw mode off, bracketed paste off, cursor shown.
pub(crate) fn restore_terminal() {
    let mut out = io::stdout();
    let _ = queue!(
        out,
        event::DisableBracketedPaste,
        cursor::Show,
        style::ResetColor
    );
    let _ = out.flush();
    let _ = terminal::disable_raw_mode();
}

impl Screen {
    /// Enters raw mode and installs a panic hook that restores the terminal first.
    pub(crate) fn enter(colors: bool) -> io::Result<Screen> {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore_terminal();
            eprintln!();
            previous(info);
        }));
        terminal::enable_raw_mode()?;
        let mut out = io::BufWriter::with_capacity(64 * 1024, io::stdout());
        queue!(out, event::EnableBracketedPaste)?;
        out.flush()?;
        let width = terminal::size().map(|(w, _)| w).unwrap_or(80).max(10);
        Ok(Screen {
            out,
            colors,
            cursor_row: 0,
            width,
        })
    }

    /// The width lines are wrapped to: one column is left free so that a full line never
    /// leaves the terminal in its pending-wrap state.
    pub(crate) fn wrap_width(&self) -> usize {
        usize::from(self.width).saturating_sub(1).max(8)
    }

    fn clear_live(&mut self) -> io::Result<()> {
        queue!(self.out, cursor::MoveToColumn(0))?;
        if self.cursor_row > 0 {
            queue!(self.out, cursor::MoveUp(self.cursor_row))?;
        }
        queue!(
            self.out,
            terminal::Clear(terminal::ClearType::FromCursorDown)
        )?;
        self.cursor_row = 0;
        Ok(())
    }

    /// Prints finished lines above the live area, into the scrollback (each wrapped to width).
    /// The bytes stay buffered: the live area is cleared by them, and flushing here would show
    /// it blank until the next paced frame; the next [`Screen::draw`] (every branch of the run
    /// loop marks one) or [`Screen::finish`] sends both at once.
    pub(crate) fn print(&mut self, lines: &[Line]) -> io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        self.clear_live()?;
        let width = self.wrap_width();
        for line in lines {
            // Most lines (an answer's) were laid out for this width already.
            if line.width() <= width {
                write!(self.out, "{}\r\n", text::render_ansi(line, self.colors))?;
                continue;
            }
            for row in text::wrap(line, width) {
                write!(self.out, "{}\r\n", text::render_ansi(&row, self.colors))?;
            }
        }
        Ok(())
    }

    /// Redraws the live area: `lines` (already one terminal row each, wrapped by the caller)
    /// with the cursor at `cursor` (row, column) within them.
    pub(crate) fn draw(&mut self, lines: &[Line], cursor: (usize, usize)) -> io::Result<()> {
        self.clear_live()?;
        queue!(self.out, cursor::Hide)?;
        let last = lines.len().saturating_sub(1);
        for (i, line) in lines.iter().enumerate() {
            write!(self.out, "{}", text::render_ansi(line, self.colors))?;
            if i < last {
                write!(self.out, "\r\n")?;
            }
        }
        let (row, col) = (cursor.0.min(last), cursor.1);
        let up = (last - row) as u16;
        if up > 0 {
            queue!(self.out, cursor::MoveUp(up))?;
        }
        queue!(self.out, cursor::MoveToColumn(col as u16), cursor::Show)?;
        self.cursor_row = row as u16;
        self.out.flush()
    }

    /// Clears the live area and leaves the cursor at the start of a fresh line (on exit).
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        self.clear_live()?;
        self.out.flush()
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.finish();
        restore_terminal();
    }
}
