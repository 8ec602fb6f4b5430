//! Asking the terminal for its background colour (OSC 11), so that code is highlighted with a
//! theme that reads on it.
//!
//! The question is followed by a request for the terminal's primary attributes (DA1), which
//! every terminal of the last decades answers: its answer ends the wait at once, whether the
//! background came before it or not. A terminal that answers neither is waited for only
//! [`WAIT`]. Keys typed during that moment are read with the answers and dropped.

use super::markdown::highlight::Theme;
use std::io::Write;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// The longest wait for the answers.
pub(crate) const WAIT: Duration = Duration::from_millis(150);
/// The most bytes read while waiting: the answers are a few dozen.
const MAX_ANSWER: usize = 4096;

/// Asks the terminal on stdin and stdout (in raw mode) for its background and tells which
/// theme suits it; `None` when it does not say within [`WAIT`] or says something unreadable.
pub(crate) fn ask() -> Option<Theme> {
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    if !stdin.is_terminal() || !std::io::stdout().is_terminal() {
        return None;
    }
    let mut out = std::io::stdout().lock();
    out.write_all(b"\x1b]11;?\x1b\\\x1b[c").ok()?;
    out.flush().ok()?;
    let answer = read_answers(stdin.as_fd(), Instant::now() + WAIT);
    parse_background(&answer).map(theme_for)
}

/// Reads what the terminal sends until its DA1 answer (`ESC [ ? … c`) has come or `deadline`
/// has passed.
fn read_answers(fd: std::os::fd::BorrowedFd<'_>, deadline: Instant) -> Vec<u8> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while got.len() < MAX_ANSWER && !has_attributes_answer(&got) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let timeout = Timespec {
            tv_sec: left.as_secs() as _,
            tv_nsec: left.subsec_nanos() as _,
        };
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) => break,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        }
        match rustix::io::read(fd, &mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => continue,
            Err(_) => break,
        }
    }
    got
}

/// Whether `bytes` hold the answer to DA1: `ESC [ ?`, digits and `;`, then `c`.
fn has_attributes_answer(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    while let Some(at) = rest.windows(3).position(|w| w == b"\x1b[?") {
        let after = &rest[at + 3..];
        let params = after
            .iter()
            .take_while(|b| b.is_ascii_digit() || **b == b';')
            .count();
        if after.get(params) == Some(&b'c') {
            return true;
        }
        rest = after;
    }
    false
}

/// The background colour in an OSC 11 answer: `ESC ] 11 ; rgb:RRRR/GGGG/BBBB` ended by BEL
/// or ST, each component 1 to 4 hex digits; as fractions of full intensity.
fn parse_background(bytes: &[u8]) -> Option<(f64, f64, f64)> {
    let start = bytes.windows(5).position(|w| w == b"\x1b]11;")? + 5;
    let body = &bytes[start..];
    let end = body
        .iter()
        .position(|b| *b == 0x07 || *b == 0x1b)
        .unwrap_or(body.len());
    let text = std::str::from_utf8(&body[..end]).ok()?;
    let rgb = text
        .strip_prefix("rgb:")
        .or_else(|| text.strip_prefix("rgba:"))?;
    let mut parts = rgb.split('/').map(|c| {
        if c.is_empty() || c.len() > 4 || !c.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let max = (1u32 << (4 * c.len())) - 1;
        Some(f64::from(u32::from_str_radix(c, 16).ok()?) / f64::from(max))
    });
    let (r, g, b) = (parts.next()??, parts.next()??, parts.next()??);
    Some((r, g, b))
}

/// Light backgrounds (relative luminance over one half) get the light theme.
fn theme_for((r, g, b): (f64, f64, f64)) -> Theme {
    let luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    if luminance > 0.5 {
        Theme::Light
    } else {
        Theme::Dark
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme(answer: &[u8]) -> Option<Theme> {
        parse_background(answer).map(theme_for)
    }

    #[test]
    fn answers_of_real_terminals() {
        // xterm, with ST; a white background.
        assert_eq!(
            theme(b"\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[?64;1;2c"),
            Some(Theme::Light)
        );
        // BEL-terminated, a dark grey, two-digit components.
        assert_eq!(theme(b"\x1b]11;rgb:28/2c/34\x07"), Some(Theme::Dark));
        // Solarized light's base3.
        assert_eq!(
            theme(b"\x1b]11;rgb:fdfd/f6f6/e3e3\x1b\\"),
            Some(Theme::Light)
        );
        // Keys typed before the answer do not hide it.
        assert_eq!(theme(b"ls\x1b]11;rgb:0/0/0\x07"), Some(Theme::Dark));
    }

    #[test]
    fn unreadable_answers_are_no_answer() {
        for bad in [
            &b""[..],
            b"\x1b[?1;2c",
            b"\x1b]11;rgb:zz/00/00\x07",
            b"\x1b]11;rgb:fffff/0/0\x07",
            b"\x1b]11;rgb:ff/ff\x07",
            b"\x1b]11;cmy:1/2/3\x07",
            b"\x1b]11;rgb:\xff\xfe/0/0\x07",
        ] {
            assert_eq!(theme(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_wait_ends_at_the_attributes_answer() {
        assert!(has_attributes_answer(b"\x1b]11;rgb:0/0/0\x07\x1b[?62;22c"));
        assert!(has_attributes_answer(b"\x1b[?6c"));
        assert!(!has_attributes_answer(b"\x1b]11;rgb:0/0/0\x07"));
        assert!(!has_attributes_answer(b"\x1b[?62;22"));
        assert!(has_attributes_answer(b"\x1b[?x\x1b[?1c"));
    }

    #[test]
    fn a_silent_terminal_is_waited_for_only_until_the_deadline() {
        // A socket nobody writes to stands for a terminal that never answers.
        use std::os::unix::net::UnixStream;
        let (read, _write) = UnixStream::pair().unwrap();
        let got = read_answers(read.as_fd(), Instant::now() + Duration::from_millis(20));
        assert!(got.is_empty());
        // One that answers is read up to the end of its answer.
        let (read, mut write) = UnixStream::pair().unwrap();
        write
            .write_all(b"\x1b]11;rgb:ff/ff/ff\x07\x1b[?1;2c")
            .unwrap();
        let got = read_answers(read.as_fd(), Instant::now() + Duration::from_secs(60));
        assert_eq!(theme(&got), Some(Theme::Light));
    }
}
