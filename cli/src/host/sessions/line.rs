//! One line of a session file, written as it is serialised and redacted on the way.
//!
//! A saved message can be as long as the whole answer. Serialising it to a string first, then
//! redacting that string, held a whole copy of the answer (or two, when something was hidden)
//! at `hrns exec`'s peak memory. Here the JSON goes through a buffer of [`PIECE`] bytes that
//! is redacted in pieces as if whole ([`Pieces`]: a secret spread over two pieces is still
//! caught) and written to the file piece by piece.

use hrns_core::secrets::{Ending, Pieces};
use serde::Serialize;
use std::io::{self, Write};

/// How much JSON gathers before it is redacted and written: large enough that a short event
/// is one write, small enough not to matter beside a long message.
const PIECE: usize = 64 * 1024;

/// Serialises `value` as one JSON line (its newline included) into `file`, without any known
/// secret. Short lines go out in one write; a long one in pieces, so a failure part way can
/// leave a torn last line (which loading a session already tells about).
pub(super) fn write_redacted(file: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    let mut line = Redacting {
        file,
        pending: Vec::new(),
        pieces: Pieces::new(),
    };
    serde_json::to_writer(&mut line, value).map_err(io::Error::other)?;
    line.pending.push(b'\n');
    line.write_pending(Ending::Last)?;
    line.file.flush()
}

/// The writer `serde_json` serialises into.
struct Redacting<'f, W: Write> {
    file: &'f mut W,
    /// Serialised and not yet written: a tail held back (it could be the start of a secret)
    /// and what came after it.
    pending: Vec<u8>,
    pieces: Pieces,
}

impl<W: Write> Redacting<'_, W> {
    /// Redacts and writes what is pending; for [`Ending::More`], up to a tail that the next
    /// piece could complete into a secret, and up to the last whole character.
    fn write_pending(&mut self, ending: Ending) -> io::Result<()> {
        let (text, rest) = match std::str::from_utf8(&self.pending) {
            Ok(text) => (text, 0),
            // `serde_json` writes whole strings, so a cut inside a character cannot happen
            // but at the end of a piece, and only if that changed: keep it for the next one.
            Err(e) if matches!(ending, Ending::More) && e.error_len().is_none() => {
                let valid = e.valid_up_to();
                let text = std::str::from_utf8(&self.pending[..valid]).expect("checked valid");
                (text, self.pending.len() - valid)
            }
            Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
        };
        let pieces = &mut self.pieces;
        let (clean, held) =
            crate::host::redact::with_secrets(|secrets| pieces.redact(secrets, text, ending));
        self.file.write_all(clean.as_bytes())?;
        let written = self.pending.len() - held - rest;
        self.pending.drain(..written);
        Ok(())
    }
}

impl<W: Write> Write for Redacting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if self.pending.len() >= PIECE {
            self.write_pending(Ending::More)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value no other test writes: the set of secrets is process-wide.
    const KEY: &str = "sk-line-test-7c1e9a2b5d3f4086";

    fn remember_key() {
        crate::host::redact::remember(&{
            let mut s = hrns_core::secrets::Secrets::new();
            s.add(KEY);
            s
        });
    }

    /// A file that keeps each write apart, or fails them all.
    #[derive(Default)]
    struct Writes {
        calls: Vec<Vec<u8>>,
        fail: bool,
    }

    impl Write for Writes {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.fail {
                return Err(io::Error::other("disk full"));
            }
            self.calls.push(buf.to_vec());
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The line as a string redacted whole would be: what was saved before.
    fn whole(value: &serde_json::Value) -> String {
        let line = serde_json::to_string(value).unwrap();
        crate::host::redact::redact(&line).into_owned() + "\n"
    }

    /// A message far longer than a piece, with the key (and a long fragment of it) cut by the
    /// pieces' boundaries at every offset, and characters of two to four bytes around them:
    /// the file gets the same bytes as the whole line redacted at once, in several writes,
    /// and no trace of the key.
    #[test]
    fn a_long_line_is_written_in_pieces_as_if_redacted_whole() {
        remember_key();
        for shift in 0..KEY.len() + 2 {
            let mut text = String::new();
            while text.len() < PIECE - shift - 20 {
                text.push_str("prose é 🙂 ");
            }
            // Lands across the first boundary (the JSON adds its own bytes before the text).
            text.push_str(KEY);
            text.push_str(" then ");
            while text.len() < 3 * PIECE {
                text.push_str("more ж text, ");
            }
            text.push_str(&KEY[..KEY.len() - 3]);
            let value = serde_json::json!({"event": {"type": "message", "text": text}});
            let mut file = Writes::default();
            write_redacted(&mut file, &value).unwrap();
            assert!(file.calls.len() > 1, "one write for a long line");
            let written = String::from_utf8(file.calls.concat()).expect("whole characters");
            assert_eq!(written, whole(&value), "shift {shift}");
            assert!(
                !written.contains(&KEY[..12]),
                "shift {shift}: the key was saved"
            );
            assert!(written.ends_with("}\n"));
        }
    }

    /// A short event is one write of the whole line, as before.
    #[test]
    fn a_short_line_is_one_write() {
        remember_key();
        let value = serde_json::json!({"event": {"type": "turn_started", "key": KEY}});
        let mut file = Writes::default();
        write_redacted(&mut file, &value).unwrap();
        assert_eq!(file.calls.len(), 1);
        let written = String::from_utf8(file.calls.concat()).unwrap();
        assert_eq!(written, whole(&value));
        assert!(!written.contains(KEY));
    }

    /// A file that refuses the write: the error comes back to the caller (who warns once).
    #[test]
    fn a_failed_write_is_an_error() {
        let value = serde_json::json!({"text": "x".repeat(3 * PIECE)});
        let mut file = Writes {
            fail: true,
            ..Writes::default()
        };
        let error = write_redacted(&mut file, &value).unwrap_err();
        assert!(error.to_string().contains("disk full"), "{error}");
    }
}
