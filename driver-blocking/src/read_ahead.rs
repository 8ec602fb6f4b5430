//! The [`Runner`](crate::Runner)'s body thread: reads a body on its own thread, beside the
//! tools and the cancel flag the runner also waits for.
//!
//! It reads into buffers of [`CHUNK`] bytes that come back to it when the consumer is done with
//! them ([`Chunk`] goes home when dropped), so a fast stream costs no allocation and no copy
//! per read beyond the socket's own. (The client's `stream_chat` reads on the caller's thread
//! instead: see [`ChatEvents`](crate::ChatEvents).)

use std::io::{self, Read};
use std::sync::mpsc;

/// Most bytes one read of the client's `stream_chat` takes: what the connection has
/// buffered, up to this. Large reads mean few system calls on a fast stream (the
/// connection's own buffer is `client::INPUT_BUFFER` in size); a read never waits for more
/// than is there, so a slow stream's events are not held back.
pub(crate) const READ_SIZE: usize = 256 * 1024;

/// Size of one read of the runner's body thread: smaller than [`READ_SIZE`], as up to
/// `DEPTH` + 2 of them may be filled at once (256 KiB pieces made `hrns exec`'s peak memory
/// 2.2 times the client's, measured in issue 20's `BENCHMARKS.md`).
const CHUNK: usize = 64 * 1024;

/// Chunks read ahead at most (bounded memory: `DEPTH` × [`CHUNK`]).
pub(crate) const DEPTH: usize = 8;

/// What one read brought, in a buffer that goes back to its reader when dropped.
pub(crate) struct Chunk {
    /// Keeps its full length on the way back and forth, so no buffer is zeroed twice.
    buf: Vec<u8>,
    len: usize,
    home: mpsc::SyncSender<Vec<u8>>,
}

impl Chunk {
    /// The bytes read.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // A reader that has ended takes none back: the buffer is freed.
        let _ = self.home.try_send(std::mem::take(&mut self.buf));
    }
}

/// One step of a body, as [`read_chunks`] hands it on.
pub(crate) enum Piece {
    Data(Chunk),
    End,
    Failed(io::Error),
}

/// Reads `inner` to its end or its first error, handing each piece to `send` as it arrives,
/// until `send` refuses one (returns `false`: nobody wants the rest). Meant for a thread of
/// its own; at most `DEPTH` + 2 buffers exist at once when `send` blocks at `DEPTH` pieces.
pub(crate) fn read_chunks(inner: &mut dyn Read, mut send: impl FnMut(Piece) -> bool) {
    let (home, spares) = mpsc::sync_channel::<Vec<u8>>(DEPTH + 2);
    loop {
        let mut buf = spares.try_recv().unwrap_or_else(|_| vec![0; CHUNK]);
        let piece = match inner.read(&mut buf) {
            Ok(0) => Piece::End,
            Ok(len) => Piece::Data(Chunk {
                buf,
                len,
                home: home.clone(),
            }),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Piece::Failed(e),
        };
        let last = !matches!(piece, Piece::Data(_));
        if !send(piece) || last {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out its data in small uneven pieces, then fails or ends.
    struct Pieces(Vec<u8>, usize, bool);

    impl Read for Pieces {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.1 == self.0.len() {
                return if self.2 {
                    Err(io::Error::new(io::ErrorKind::ConnectionReset, "reset"))
                } else {
                    Ok(0)
                };
            }
            let n = buf.len().min(7).min(self.0.len() - self.1);
            buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }

    /// Every byte in order, then the end or the reader's error as the last piece.
    #[test]
    fn read_chunks_yields_every_byte_in_order_then_the_end_or_the_error() {
        for fails in [false, true] {
            let data: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
            let mut out = Vec::new();
            let mut last = None;
            read_chunks(&mut Pieces(data.clone(), 0, fails), |piece| {
                match piece {
                    Piece::Data(chunk) => out.extend_from_slice(chunk.bytes()),
                    Piece::End => last = Some(None),
                    Piece::Failed(e) => last = Some(Some(e.kind())),
                }
                true
            });
            assert_eq!(out, data);
            let want = fails.then_some(io::ErrorKind::ConnectionReset);
            assert_eq!(last, Some(want));
        }
    }

    /// A chunk handed back (dropped) is the buffer of the next read: a fast stream allocates
    /// no buffer per read, and the pieces are still every byte in order.
    #[test]
    fn read_chunks_reuses_the_buffers_handed_back() {
        let data: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        let mut buffers = Vec::new();
        let mut out = Vec::new();
        let mut ended = false;
        read_chunks(&mut Pieces(data.clone(), 0, false), |piece| {
            match piece {
                Piece::Data(chunk) => {
                    buffers.push(chunk.bytes().as_ptr());
                    out.extend_from_slice(chunk.bytes());
                }
                Piece::End => ended = true,
                Piece::Failed(e) => panic!("{e}"),
            }
            true
        });
        assert!(ended);
        assert_eq!(out, data);
        assert_eq!(buffers.len(), 1000usize.div_ceil(7));
        assert!(
            buffers.iter().all(|b| *b == buffers[0]),
            "a new buffer per read"
        );
    }

    /// A consumer that stops wanting pieces ends the loop at the next one.
    #[test]
    fn read_chunks_stops_when_the_pieces_are_refused() {
        let mut seen = 0;
        read_chunks(&mut Pieces(vec![1; 100], 0, false), |_| {
            seen += 1;
            seen < 3
        });
        assert_eq!(seen, 3);
    }
}
