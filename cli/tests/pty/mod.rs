//! Running `hrns` in a real pseudo-terminal, reading its screen through a VT100 emulator.
#![allow(dead_code, unreachable_pub)]

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A program in a pseudo-terminal, its raw output and its screen.
pub struct Pty {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    raw: Arc<Mutex<Vec<u8>>>,
    screen: Arc<Mutex<vt100::Parser>>,
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
        let raw = Arc::new(Mutex::new(Vec::new()));
        let screen = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 2000)));
        let (raw2, screen2) = (Arc::clone(&raw), Arc::clone(&screen));
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                raw2.lock().unwrap().extend_from_slice(&buf[..n]);
                screen2.lock().unwrap().process(&buf[..n]);
            }
        });
        Pty {
            master: pair.master,
            writer,
            child,
            raw,
            screen,
        }
    }

    /// Everything the program wrote, escape sequences removed.
    pub fn output(&self) -> String {
        let raw = self.raw.lock().unwrap();
        strip_ansi(&String::from_utf8_lossy(&raw))
    }

    /// Everything the program wrote, as bytes.
    pub fn raw(&self) -> Vec<u8> {
        self.raw.lock().unwrap().clone()
    }

    /// The visible screen as text.
    pub fn screen(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    /// Whether the terminal is in the state a well-behaved program leaves: cursor shown.
    pub fn cursor_visible(&self) -> bool {
        !self.screen.lock().unwrap().screen().hide_cursor()
    }

    /// Waits until the output contains `needle`; panics with the output after `timeout`.
    pub fn expect(&self, needle: &str, timeout: Duration) {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if self.output().contains(needle) || self.screen().contains(needle) {
                return;
            }
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
        self.screen
            .lock()
            .unwrap()
            .screen_mut()
            .set_size(rows, cols);
    }

    /// The program's process id.
    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("a running child has a pid")
    }

    /// Waits for the program to exit and returns its exit code.
    pub fn wait(&mut self, timeout: Duration) -> u32 {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader thread drain the last bytes.
                std::thread::sleep(Duration::from_millis(100));
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
