//! A payload coded straight into a message as it is written, never held
//! whole (`spec/pipeline.md` §6.8): its one working stage, a compression
//! with a [`StreamingCoder`], runs once for the payload's length and
//! digest, which the message head needs first, and again into the
//! message.

use xxhash_rust::xxh3::Xxh3;

use super::codec::stage::{PieceSink, StreamingCoder};
use super::progress::{ProgressHook, Step};
use crate::error::{Error, Result};

/// Objects below this many element bytes are coded once, into memory: a
/// second pass costs more than their payload's memory.
pub(crate) const STREAM_MIN_BYTES: usize = 16 << 20;

/// A payload still to be coded into the message.
#[derive(Clone)]
pub(crate) struct Streamed<'a> {
    input: &'a [u8],
    coder: StreamingCoder,
    /// Bytes the coder writes.
    pub len: usize,
    /// xxh3 state after the payload's bytes.
    digest: Xxh3,
    hook: ProgressHook,
}

impl std::fmt::Debug for Streamed<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Streamed({} bytes)", self.len)
    }
}

/// Counts and hashes the first pass; reports the first half of progress.
struct Measure<'h> {
    len: usize,
    digest: Xxh3,
    progress: Halves<'h>,
}

impl PieceSink for Measure<'_> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.len += bytes.len();
        self.digest.update(bytes);
        Ok(())
    }
    fn progress(&mut self, done: u64, released: u64) {
        self.progress.report(done, released);
    }
}

/// The object's progress over the two passes, each half of it; `read`
/// never shrinks.
struct Halves<'h> {
    hook: &'h ProgressHook,
    total: u64,
    second: bool,
}

impl Halves<'_> {
    fn report(&self, done: u64, released: u64) {
        let half = |d: u64| d.min(self.total) / 2;
        let (done, read) = if self.second {
            (
                self.total - half(self.total - done.min(self.total)),
                self.total,
            )
        } else {
            (half(done), released.min(self.total))
        };
        self.hook.advance(Step {
            done,
            total: self.total,
            read,
        });
    }
}

/// Hands the second pass to the message writer, checking it stays within
/// the first pass's length.
struct Write<'w, 'h> {
    sink: &'w mut dyn FnMut(&[u8]) -> Result<()>,
    written: usize,
    len: usize,
    progress: Halves<'h>,
}

impl PieceSink for Write<'_, '_> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.written += bytes.len();
        if self.written > self.len {
            return Err(changed(self.len));
        }
        (self.sink)(bytes)
    }
    fn progress(&mut self, done: u64, released: u64) {
        self.progress.report(done, released);
    }
}

fn changed(len: usize) -> Error {
    Error::invalid_argument(format!(
        "a streamed payload of {len} bytes came out differently when written"
    ))
}

impl<'a> Streamed<'a> {
    /// Codes `input` once for its length and digest.
    pub(crate) fn plan(
        input: &'a [u8],
        coder: StreamingCoder,
        hook: &ProgressHook,
    ) -> Result<Streamed<'a>> {
        let mut m = Measure {
            len: 0,
            digest: Xxh3::new(),
            progress: Halves {
                hook,
                total: input.len() as u64,
                second: false,
            },
        };
        coder(input, &mut m)?;
        Ok(Streamed {
            input,
            coder,
            len: m.len,
            digest: m.digest,
            hook: hook.clone(),
        })
    }

    /// The frame digest of this payload followed by `rest`.
    pub(crate) fn digest_with(&self, rest: &[&[u8]]) -> u64 {
        let mut h = self.digest.clone();
        for r in rest {
            h.update(r);
        }
        h.digest()
    }

    /// Codes the payload again into `sink`: the bytes the length and
    /// digest were taken from, or an error.
    pub(crate) fn write(&self, sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let mut w = Write {
            sink,
            written: 0,
            len: self.len,
            progress: Halves {
                hook: &self.hook,
                total: self.input.len() as u64,
                second: true,
            },
        };
        (self.coder)(self.input, &mut w)?;
        if w.written != self.len {
            return Err(changed(self.len));
        }
        Ok(())
    }
}
