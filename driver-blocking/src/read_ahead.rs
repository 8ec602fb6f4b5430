//! Reading a body ahead on its own thread, so that receiving the next bytes from the socket
//! overlaps with decoding the last ones (two cores, twice the work in flight).
//!
//! One read loop ([`read_chunks`]) serves both users: the client's [`ReadAhead`] and the
//! [`Runner`](crate::Runner)'s body thread. It reads into 64 KiB buffers that come back to it
//! when the consumer is done with them ([`Chunk`] goes home when dropped), so a fast stream
//! costs no allocation and no copy per read beyond the socket's own.

use std::io::{self, BufRead, Read};
use std::sync::mpsc;
use std::thread;

/// Size of one read.
const CHUNK: usize = 64 * 1024;

/// Chunks read ahead at most (bounded memory: `DEPTH` × 64 KiB).
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

/// Reads `inner` on a helper thread; see the module docs.
pub(crate) struct ReadAhead {
    chunks: mpsc::Receiver<Piece>,
    /// The chunk being read; the one before it went home when this one replaced it.
    current: Option<Chunk>,
    pos: usize,
    done: bool,
}

impl ReadAhead {
    /// Starts reading `inner` ahead. The thread ends at the end of the body, on an error, or
    /// when this reader is dropped (at its next chunk).
    pub(crate) fn new(mut inner: Box<dyn Read + Send>) -> Self {
        let (tx, chunks) = mpsc::sync_channel::<Piece>(DEPTH);
        thread::spawn(move || read_chunks(&mut *inner, |piece| tx.send(piece).is_ok()));
        ReadAhead {
            chunks,
            current: None,
            pos: 0,
            done: false,
        }
    }

    fn current(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], Chunk::bytes)
    }
}

impl Read for ReadAhead {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let chunk = self.fill_buf()?;
            let n = out.len().min(chunk.len());
            out[..n].copy_from_slice(&chunk[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

/// The chunks are lent as they are (no copy into the caller's buffer).
impl io::BufRead for ReadAhead {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos == self.current().len() {
            if self.done {
                return Ok(&[]);
            }
            match self.chunks.recv() {
                Ok(Piece::Data(chunk)) => {
                    self.current = Some(chunk);
                    self.pos = 0;
                }
                Ok(Piece::Failed(e)) => {
                    self.done = true;
                    self.current = None;
                    self.pos = 0;
                    return Err(e);
                }
                Ok(Piece::End) | Err(_) => {
                    self.done = true;
                    self.current = None;
                    self.pos = 0;
                    return Ok(&[]);
                }
            }
        }
        Ok(&self.current()[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.current().len());
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

    #[test]
    fn yields_every_byte_in_order_then_the_end_or_the_error() {
        let data: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        let mut r = ReadAhead::new(Box::new(Pieces(data.clone(), 0, false)));
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
        assert_eq!(r.read(&mut [0; 4]).unwrap(), 0);

        let mut r = ReadAhead::new(Box::new(Pieces(b"abc".to_vec(), 0, true)));
        let mut out = Vec::new();
        let err = r.read_to_end(&mut out).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
        assert_eq!(out, b"abc");
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
