//! Running `hrns` in a real pseudo-terminal, reading its screen through a VT100 emulator.
#![allow(dead_code, unreachable_pub)]

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// A program in a pseudo-terminal, its raw output and its screen.
pub struct Pty {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    /// The output and the screen behind one lock, updated together: what the output shows,
    /// the screen has already taken in (two locks left a window where a test found text in
    /// the output and then read a screen that had not processed it yet).
    seen: Arc<Mutex<Seen>>,
    /// Disconnected when the reader thread has read everything (end of file, or the error
    /// Linux gives once the terminal's last writer closed it).
    drained: mpsc::Receiver<()>,
}

/// How long [`Pty::wait`] waits for the output after the program exited: the end of the
/// output comes as soon as every holder of the terminal closed it, so this is reached only
/// when a process the program started still holds it.
const DRAIN_BOUND: Duration = Duration::from_secs(30);

/// Everything read from the terminal so far, as output and as screen.
struct Seen {
    output: Output,
    screen: vt100::Parser,
}

/// What the program wrote: the bytes, and the text without escape sequences, which grows as
/// the bytes come (each byte is decoded and stripped once, not on every look at it).
#[derive(Default)]
struct Output {
    raw: Vec<u8>,
    text: String,
    /// The start of a UTF-8 sequence that the next read completes.
    partial: Vec<u8>,
    strip: Strip,
}

/// Where [`Output`] is in an escape sequence, as [`strip_ansi`] reads them.
#[derive(Default, Clone, Copy, PartialEq)]
enum Strip {
    #[default]
    Text,
    /// After ESC.
    Escape,
    /// In a CSI sequence, until its final byte.
    Csi,
    /// In an OSC string, until BEL or ESC `\`.
    Osc,
    /// After an ESC inside an OSC string.
    OscEscape,
}

impl Output {
    fn push(&mut self, bytes: &[u8]) {
        self.raw.extend_from_slice(bytes);
        let mut pending = std::mem::take(&mut self.partial);
        pending.extend_from_slice(bytes);
        let mut rest = &pending[..];
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.push_text(text);
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    self.push_text(std::str::from_utf8(valid).expect("checked"));
                    match e.error_len() {
                        // Cut by the read: the next one completes it.
                        None => {
                            self.partial = after.to_vec();
                            break;
                        }
                        Some(bad) => {
                            self.push_text("\u{fffd}");
                            rest = &after[bad..];
                        }
                    }
                }
            }
        }
    }

    fn push_text(&mut self, text: &str) {
        for c in text.chars() {
            self.strip = match (self.strip, c) {
                (Strip::Text, '\x1b') => Strip::Escape,
                (Strip::Text, '\r') => Strip::Text,
                (Strip::Text, c) => {
                    self.text.push(c);
                    Strip::Text
                }
                (Strip::Escape, '[') => Strip::Csi,
                (Strip::Escape, ']') => Strip::Osc,
                // A two-byte escape.
                (Strip::Escape, _) => Strip::Text,
                (Strip::Csi, '@'..='~') => Strip::Text,
                (Strip::Csi, _) => Strip::Csi,
                (Strip::Osc | Strip::OscEscape, '\x07') => Strip::Text,
                (Strip::Osc | Strip::OscEscape, '\x1b') => Strip::OscEscape,
                (Strip::OscEscape, '\\') => Strip::Text,
                (Strip::Osc | Strip::OscEscape, _) => Strip::Osc,
            };
        }
    }
}

impl Pty {
    /// Starts `program args` in `cwd` with exactly `env`, on a `rows`×`cols` terminal.
    pub fn spawn(
        program: &str,
        args: &[&str],
        cwd: &Path,
        env: &[(&str, String)],
        rows: u16,
        cols: u16,
    ) -> Pty {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        cmd.cwd(cwd);
        cmd.env_clear();
        cmd.env("TERM", "xterm-256color");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).expect("spawn in pty");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let writer = pair.master.take_writer().expect("writer");
        let seen = Arc::new(Mutex::new(Seen {
            output: Output::default(),
            screen: vt100::Parser::new(rows, cols, 2000),
        }));
        let seen2 = Arc::clone(&seen);
        let (done, drained) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            let _done = done; // dropped at the end of the output
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut seen = seen2.lock().unwrap();
                seen.output.push(&buf[..n]);
                seen.screen.process(&buf[..n]);
            }
        });
        Pty {
            master: pair.master,
            writer,
            child,
            seen,
            drained,
        }
    }

    /// Everything the program wrote, escape sequences removed (as [`strip_ansi`] removes them).
    pub fn output(&self) -> String {
        self.seen.lock().unwrap().output.text.clone()
    }

    /// Everything the program wrote, as bytes.
    pub fn raw(&self) -> Vec<u8> {
        self.seen.lock().unwrap().output.raw.clone()
    }

    /// Whether the output from byte `from` on contains `needle`, and where to look from next
    /// time: the text only grows, so each poll of [`Pty::expect`] reads only what is new.
    fn output_contains(&self, needle: &str, from: usize) -> (bool, usize) {
        let seen = self.seen.lock().unwrap();
        let text = &seen.output.text;
        let mut start = from.min(text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        if text[start..].contains(needle) {
            return (true, start);
        }
        // A match may begin in the last `needle.len() - 1` bytes and end in what comes next.
        (
            false,
            text.len().saturating_sub(needle.len().saturating_sub(1)),
        )
    }

    /// The visible screen as text.
    pub fn screen(&self) -> String {
        self.seen.lock().unwrap().screen.screen().contents()
    }

    /// Whether the terminal is in the state a well-behaved program leaves: cursor shown.
    pub fn cursor_visible(&self) -> bool {
        !self.seen.lock().unwrap().screen.screen().hide_cursor()
    }

    /// Waits until the output contains `needle`; panics with the output after `timeout`.
    pub fn expect(&self, needle: &str, timeout: Duration) {
        let start = Instant::now();
        let mut from = 0;
        while start.elapsed() < timeout {
            let (found, next) = self.output_contains(needle, from);
            if found || self.screen().contains(needle) {
                return;
            }
            from = next;
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "timed out waiting for {needle:?}; output so far:\n{}\n--- screen:\n{}",
            self.output(),
            self.screen()
        );
    }

    /// Waits until the visible screen satisfies `ready` (described by `what` in the panic);
    /// panics with the screen after `timeout`. For states that only the screen shows, such as
    /// a redraw after a resize or a recalled line in the editor.
    pub fn expect_screen(&self, what: &str, timeout: Duration, ready: impl Fn(&str) -> bool) {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if ready(&self.screen()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "timed out waiting for the screen to show {what}; screen:\n{}",
            self.screen()
        );
    }

    /// Types `text`.
    pub fn send(&mut self, text: &str) {
        self.writer.write_all(text.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// Resizes the terminal.
    pub fn resize(&self, rows: u16, cols: u16) {
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        self.seen
            .lock()
            .unwrap()
            .screen
            .screen_mut()
            .set_size(rows, cols);
    }

    /// The program's process id.
    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("a running child has a pid")
    }

    /// Waits for the program to exit and for the end of its output (what it wrote last, the
    /// terminal restored among it, is then all read), and returns its exit code.
    pub fn wait(&mut self, timeout: Duration) -> u32 {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Not a fixed pause: a loaded machine may take longer to hand over the last
                // bytes. Past the bound, the checks that follow say what is missing.
                let _ = self.drained.recv_timeout(DRAIN_BOUND);
                return status.exit_code();
            }
            if start.elapsed() > timeout {
                let _ = self.child.kill();
                panic!("the program did not exit; output:\n{}", self.output());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// Removes ANSI escape sequences (CSI, OSC and two-byte escapes) and carriage returns.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\x07' {
                            break;
                        }
                        if c == '\x1b' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

#[test]
fn output_is_stripped_as_it_comes_like_strip_ansi_of_the_whole() {
    let sample = "a\x1b[1;31mred\x1b[0m\r\n\x1b]0;title\x07é\x1b]8;;x\x1b\\link\x1b]2;t\x1bx\x07\
                  \x1bMnext 界\u{1F600}\x1b[?25h";
    let mut bytes = sample.as_bytes().to_vec();
    bytes.extend_from_slice(b"\xff\xe2\x82 end\xf0\x9f");
    let whole = strip_ansi(&String::from_utf8_lossy(&bytes));
    // Every split into two reads, and one byte per read.
    for cut in 0..=bytes.len() {
        let mut output = Output::default();
        output.push(&bytes[..cut]);
        output.push(&bytes[cut..]);
        let mut text = output.text.clone();
        if !output.partial.is_empty() {
            text.push('\u{fffd}'); // the lossy decoding of a cut-off sequence at the end
        }
        assert_eq!(text, whole, "cut at {cut}");
        assert_eq!(output.raw, bytes);
    }
    let mut output = Output::default();
    for b in &bytes {
        output.push(std::slice::from_ref(b));
    }
    assert!(whole.starts_with(&output.text) && whole.len() - output.text.len() == 3);
}
