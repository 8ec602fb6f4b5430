//! A body reader that reads ahead on its own thread, so that receiving the next bytes from the
//! socket overlaps with decoding the last ones (two cores, twice the work in flight).

use std::io::{self, BufRead, Read};
use std::sync::mpsc;
use std::thread;

/// Size of one read.
const CHUNK: usize = 64 * 1024;

/// Chunks read ahead at most (bounded memory: `DEPTH` × 64 KiB).
const DEPTH: usize = 8;

/// Reads `inner` on a helper thread; see the module docs.
pub(crate) struct ReadAhead {
    /// Filled buffers with the number of bytes read into each; buffers keep their full length
    /// on the way back and forth, so none is zeroed twice.
    chunks: mpsc::Receiver<io::Result<(Vec<u8>, usize)>>,
    spare: mpsc::SyncSender<Vec<u8>>,
    current: Vec<u8>,
    len: usize,
    pos: usize,
    done: bool,
}

impl ReadAhead {
    /// Starts reading `inner` ahead. The thread ends at the end of the body, on an error, or
    /// when this reader is dropped (at its next chunk).
    pub(crate) fn new(mut inner: Box<dyn Read + Send>) -> Self {
        let (tx, chunks) = mpsc::sync_channel::<io::Result<(Vec<u8>, usize)>>(DEPTH);
        let (spare, spares) = mpsc::sync_channel::<Vec<u8>>(DEPTH + 2);
        thread::spawn(move || {
            loop {
                let mut buf = spares.try_recv().unwrap_or_else(|_| vec![0; CHUNK]);
                match inner.read(&mut buf) {
                    Ok(0) => return,
                    Ok(n) => {
                        if tx.send(Ok((buf, n))).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        ReadAhead {
            chunks,
            spare,
            current: Vec::new(),
            len: 0,
            pos: 0,
            done: false,
        }
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
        while self.pos == self.len {
            if self.done {
                return Ok(&[]);
            }
            match self.chunks.recv() {
                Ok(Ok((chunk, len))) => {
                    let used = std::mem::replace(&mut self.current, chunk);
                    if !used.is_empty() {
                        let _ = self.spare.try_send(used);
                    }
                    self.len = len;
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Ok(&[]);
                }
            }
        }
        Ok(&self.current[self.pos..self.len])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.len);
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
}
