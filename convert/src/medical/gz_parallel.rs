//! One gzip member (RFC 1952) deflated on several threads, as pigz lays
//! it out: the input is cut into chunks, each chunk is deflated on its
//! own (raw deflate, RFC 1951) with the 32 KiB before it as its
//! dictionary, every chunk but the last ending with a sync flush (an empty
//! stored block: byte-aligned, not final) and the last with the final
//! block, so the chunks' deflate streams concatenate into one. The CRC-32
//! is combined from the chunks' own. A reader sees an ordinary single
//! member (spec/convert.md "NIfTI").
//!
//! Memory: at most two chunks per thread in flight (their input and their
//! deflated bytes), written out in order as they complete.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crc32fast::Hasher;
use flate2::{Compress, Compression, FlushCompress, Status};

/// The uncompressed bytes of a chunk.
pub const CHUNK_BYTES: usize = 1 << 20;

/// Deflate's window: what each chunk is given of the bytes before it.
const WINDOW: usize = 32 << 10;

/// The most threads deflating, whatever the machine has: with two chunks
/// each in flight, 32 MiB at most.
const MAX_THREADS: usize = 8;

/// The gzip header: deflate, no flags, no time, no extra flags, unknown
/// operating system (RFC 1952 §2.3).
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// A gzip member written to `W` as bytes are given to it.
pub struct ParallelGzip<W: Write> {
    out: W,
    level: Compression,
    chunk_bytes: usize,
    /// The bytes of the next chunk received so far.
    chunk: Vec<u8>,
    /// The last [`WINDOW`] bytes before `chunk` (fewer at the start).
    dictionary: Vec<u8>,
    /// The chunks being deflated, in order.
    in_flight: VecDeque<Receiver<io::Result<Deflated>>>,
    crc: Hasher,
    /// Bytes received.
    total: u64,
    pool: Pool,
}

impl<W: Write> ParallelGzip<W> {
    /// A member at `level` into `out`, its header written.
    pub fn new(out: W, level: Compression) -> io::Result<Self> {
        Self::with_chunks(out, level, CHUNK_BYTES)
    }

    /// [`ParallelGzip::new`] cutting the input into chunks of `chunk_bytes`.
    pub fn with_chunks(mut out: W, level: Compression, chunk_bytes: usize) -> io::Result<Self> {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_THREADS);
        out.write_all(&HEADER)?;
        Ok(ParallelGzip {
            out,
            level,
            chunk_bytes: chunk_bytes.max(1),
            chunk: Vec::new(),
            dictionary: Vec::new(),
            in_flight: VecDeque::new(),
            crc: Hasher::new(),
            total: 0,
            pool: Pool::new(threads)?,
        })
    }

    /// Compresses the next bytes.
    pub fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            if self.chunk.capacity() < self.chunk_bytes {
                self.chunk
                    .reserve_exact(self.chunk_bytes - self.chunk.len());
            }
            let take = (self.chunk_bytes - self.chunk.len()).min(bytes.len());
            self.chunk.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.chunk.len() == self.chunk_bytes {
                self.dispatch(false)?;
            }
        }
        Ok(())
    }

    /// Ends the member (the final block and the trailer) and gives back
    /// the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.dispatch(true)?;
        while !self.in_flight.is_empty() {
            self.write_next()?;
        }
        // RFC 1952 §2.3.1: CRC-32, then the length modulo 2^32.
        let crc = std::mem::take(&mut self.crc).finalize();
        self.out.write_all(&crc.to_le_bytes())?;
        self.out.write_all(&(self.total as u32).to_le_bytes())?;
        Ok(self.out)
    }

    /// Hands the chunk received to a thread, first writing out the oldest
    /// one when the window is full.
    fn dispatch(&mut self, last: bool) -> io::Result<()> {
        while self.in_flight.len() >= 2 * self.pool.threads {
            self.write_next()?;
        }
        let data = std::mem::take(&mut self.chunk);
        self.total += data.len() as u64;
        let dictionary = match data.len() >= WINDOW {
            true => data[data.len() - WINDOW..].to_vec(),
            false => {
                let mut d = self.dictionary.clone();
                d.extend_from_slice(&data);
                d.split_off(d.len().saturating_sub(WINDOW))
            }
        };
        let dictionary = std::mem::replace(&mut self.dictionary, dictionary);
        let (done, result) = sync_channel(1);
        self.pool.run(Job {
            data,
            dictionary,
            last,
            level: self.level,
            done,
        })?;
        self.in_flight.push_back(result);
        Ok(())
    }

    /// Waits for the oldest chunk in flight and writes it out.
    fn write_next(&mut self) -> io::Result<()> {
        let Some(result) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let deflated = result
            .recv()
            .map_err(|_| io::Error::other("a gzip thread stopped"))??;
        self.crc.combine(&deflated.crc);
        self.out.write_all(&deflated.bytes)
    }
}

/// One chunk deflated: its raw deflate bytes and its CRC-32.
struct Deflated {
    bytes: Vec<u8>,
    crc: Hasher,
}

/// One chunk to deflate.
struct Job {
    data: Vec<u8>,
    /// The bytes before the chunk, at most [`WINDOW`].
    dictionary: Vec<u8>,
    /// Whether the chunk ends the stream (the final block).
    last: bool,
    level: Compression,
    done: SyncSender<io::Result<Deflated>>,
}

impl Job {
    /// Deflates the chunk with `c` (a raw deflate compressor, reset here).
    fn run(&self, c: &mut Compress) -> io::Result<Deflated> {
        let mut crc = Hasher::new();
        crc.update(&self.data);
        c.reset();
        if !self.dictionary.is_empty() {
            c.set_dictionary(&self.dictionary)
                .map_err(|e| io::Error::other(format!("gzip dictionary: {e}")))?;
        }
        let flush = match self.last {
            true => FlushCompress::Finish,
            false => FlushCompress::Sync,
        };
        let mut bytes = Vec::with_capacity(self.data.len() / 2 + 4096);
        let mut read = 0;
        loop {
            if bytes.len() == bytes.capacity() {
                bytes.reserve(bytes.capacity());
            }
            let before = c.total_in();
            let status = c
                .compress_vec(&self.data[read..], &mut bytes, flush)
                .map_err(|e| io::Error::other(format!("deflate: {e}")))?;
            read += (c.total_in() - before) as usize;
            // A sync flush is complete once the input is read and space was
            // left over (zlib's rule for Z_SYNC_FLUSH); a finish once the
            // stream has ended.
            let done = match flush {
                FlushCompress::Finish => status == Status::StreamEnd,
                _ => read == self.data.len() && bytes.len() < bytes.capacity(),
            };
            if done {
                return Ok(Deflated { bytes, crc });
            }
        }
    }
}

/// Threads deflating jobs, each with its own compressor, until dropped.
struct Pool {
    jobs: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
    threads: usize,
}

impl Pool {
    fn new(threads: usize) -> io::Result<Pool> {
        let (jobs, queue) = std::sync::mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let mut pool = Pool {
            jobs: Some(jobs),
            workers: Vec::with_capacity(threads),
            threads,
        };
        for _ in 0..threads {
            let queue = Arc::clone(&queue);
            let worker = std::thread::Builder::new()
                .name("tgm-gzip".into())
                .spawn(move || {
                    let mut c: Option<Compress> = None;
                    loop {
                        let job = match queue.lock() {
                            Ok(q) => q.recv(),
                            Err(_) => return,
                        };
                        let Ok(job) = job else { return };
                        let c = c.get_or_insert_with(|| Compress::new(job.level, false));
                        // The writer may have gone (an error there).
                        let _ = job.done.send(job.run(c));
                    }
                })
                .map_err(|e| io::Error::other(format!("cannot start a gzip thread: {e}")))?;
            pool.workers.push(worker);
        }
        Ok(pool)
    }

    fn run(&self, job: Job) -> io::Result<()> {
        self.jobs
            .as_ref()
            .and_then(|j| j.send(job).ok())
            .ok_or_else(|| io::Error::other("the gzip threads stopped"))
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Closing the queue ends every thread once its job is done.
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// Bytes that deflate some but not all the way: runs, repeats from
    /// far back, and noise.
    fn data(len: usize) -> Vec<u8> {
        let mut x = 0x2545_f491_u32;
        (0..len)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                match i % 3000 {
                    0..=999 => (i / 7 % 251) as u8,
                    1000..=1999 => (x % 16) as u8,
                    _ => (x >> 8) as u8,
                }
            })
            .collect()
    }

    fn gzip(data: &[u8], chunk: usize, pieces: usize) -> Vec<u8> {
        let mut g = ParallelGzip::with_chunks(Vec::new(), Compression::new(2), chunk).unwrap();
        for p in data.chunks(pieces.max(1)) {
            g.write_all(p).unwrap();
        }
        g.finish().unwrap()
    }

    /// Inflates the first member only, as the `nifti` crate's reader does,
    /// checking that nothing follows it.
    fn first_member(gz: &[u8]) -> Vec<u8> {
        let mut d = flate2::bufread::GzDecoder::new(gz);
        let mut back = Vec::new();
        d.read_to_end(&mut back).unwrap();
        assert!(d.into_inner().is_empty(), "bytes after the member");
        back
    }

    #[test]
    fn every_size_inflates_from_one_member_to_what_was_written() {
        let chunk = 64 << 10;
        for len in [0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk, 5 * chunk + 77] {
            let d = data(len);
            for pieces in [1000, chunk, len + 1] {
                let gz = gzip(&d, chunk, pieces);
                assert_eq!(first_member(&gz), d, "{len} bytes in pieces of {pieces}");
                let isize = u32::from_le_bytes(gz[gz.len() - 4..].try_into().unwrap());
                assert_eq!(isize, len as u32);
            }
        }
    }

    #[test]
    fn chunks_shorter_than_the_window_carry_every_byte_before_them() {
        // Each chunk refers back across several earlier ones.
        let d: Vec<u8> = data(4096).repeat(40);
        for chunk in [1, 1000, 5000] {
            assert_eq!(first_member(&gzip(&d, chunk, 777)), d, "chunks of {chunk}");
        }
    }

    #[test]
    fn the_dictionary_lets_a_chunk_refer_to_the_one_before() {
        // A block of noise repeated: each chunk after the first is the one
        // before it, which only the dictionary lets deflate see.
        let block = data(30_000).into_iter().skip(2000).collect::<Vec<u8>>();
        let d = block.repeat(8);
        let gz = gzip(&d, block.len(), block.len());
        assert_eq!(first_member(&gz), d);
        let mut alone = flate2::write::DeflateEncoder::new(Vec::new(), Compression::new(2));
        alone.write_all(&block).unwrap();
        let one = alone.finish().unwrap().len();
        assert!(
            gz.len() < 2 * one,
            "{} bytes, one block deflates to {one}",
            gz.len()
        );
    }

    #[test]
    fn a_failing_output_is_an_error() {
        struct Full(usize);
        impl Write for Full {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                match self.0 >= b.len() {
                    true => {
                        self.0 -= b.len();
                        Ok(b.len())
                    }
                    false => Err(io::Error::other("disk full")),
                }
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let d = data(300_000);
        let mut g = ParallelGzip::with_chunks(Full(50_000), Compression::new(2), 10_000).unwrap();
        let err = g.write_all(&d).and_then(|()| g.finish().map(|_| ()));
        assert_eq!(err.unwrap_err().to_string(), "disk full");
        let err = ParallelGzip::new(Full(3), Compression::new(2))
            .err()
            .unwrap();
        assert_eq!(err.to_string(), "disk full");
    }
}
