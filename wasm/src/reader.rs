//! The reader behind the bindings, in plain Rust: an archive held in
//! memory, or one read by ranges whose operations report the bytes they
//! still need instead of blocking (`spec/wasm.md` §2).

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use tgm::error::Result;
use tgm::file::{ByteSource, TgmFile};
use tgm::{DecodeOptions, DecodedObject, Limits};

use crate::cache::RangeCache;

/// Bytes read at once while locating messages by ranges: each message's
/// preamble and, usually, its index in one request (`spec/remote.md` §3).
pub const DEFAULT_HEAD_WINDOW: u64 = 64 << 10;

type File = TgmFile<Box<dyn ByteSource>>;

/// What an operation on an archive read by ranges gives.
#[derive(Debug)]
pub enum Step<T> {
    /// The answer (or the library's error about the archive).
    Done(Result<T>),
    /// These byte ranges must be fetched and supplied first.
    Need(Vec<Range<u64>>),
}

/// An archive: in memory, or read by ranges through a [`RangeCache`].
pub struct Reader {
    ranges: Option<Arc<RangeCache>>,
    memory: Option<Bytes>,
    file: Option<File>,
    limits: Limits,
}

impl Reader {
    /// An archive whose bytes are all in `bytes`.
    pub fn in_memory(bytes: Bytes) -> Self {
        Reader {
            ranges: None,
            memory: Some(bytes),
            file: None,
            limits: Limits::default(),
        }
    }

    /// An archive of `len` bytes read by ranges, `head_window` bytes at a
    /// time while locating messages.
    pub fn by_ranges(len: u64, head_window: u64) -> Self {
        Reader {
            ranges: Some(Arc::new(RangeCache::new(len, head_window))),
            memory: None,
            file: None,
            limits: Limits::default(),
        }
    }

    /// The range cache, when the archive is read by ranges.
    pub fn cache(&self) -> Option<&RangeCache> {
        self.ranges.as_deref()
    }

    /// Runs `op` on the archive. Read by ranges, an operation that missed
    /// bytes is answered with the ranges to fetch; after they are
    /// supplied, the caller runs it again, and the archive is located
    /// afresh from the cache (nothing the library kept from a run that
    /// missed bytes is trusted).
    pub fn run<T>(&mut self, op: impl FnOnce(&File) -> Result<T>) -> Step<T> {
        if self.file.is_none() {
            match self.open() {
                Ok(f) => self.file = Some(f),
                Err(e) => return self.finish(Err(e)),
            }
            if let Some(need) = self.needed() {
                self.file = None;
                return Step::Need(need);
            }
        }
        let Some(file) = &self.file else {
            unreachable!("opened above")
        };
        let r = op(file);
        self.finish(r)
    }

    fn finish<T>(&mut self, r: Result<T>) -> Step<T> {
        match self.needed() {
            Some(need) => {
                self.file = None;
                Step::Need(need)
            }
            None => Step::Done(r),
        }
    }

    fn needed(&self) -> Option<Vec<Range<u64>>> {
        let c = self.ranges.as_ref()?;
        let need = c.take_missing();
        (!need.is_empty()).then_some(need)
    }

    fn open(&self) -> Result<File> {
        let src: Box<dyn ByteSource> = match (&self.ranges, &self.memory) {
            (Some(c), _) => Box::new(Arc::clone(c)),
            (None, Some(b)) => Box::new(b.clone()),
            (None, None) => Box::new(Bytes::new()),
        };
        TgmFile::from_source(src, &self.limits)
    }
}

/// Decode options of the reader: elements in the host's byte order (little
/// endian in WebAssembly), NaN and infinities restored, digests checked.
pub fn decode_options() -> DecodeOptions {
    DecodeOptions::default()
}

/// Object `o` of message `m`.
pub fn object(f: &File, m: usize, o: usize) -> Result<DecodedObject> {
    f.decode_object(m, o, &decode_options())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tgm::{encode, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

    fn archive(messages: usize, n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for m in 0..messages {
            let data: Vec<u8> = (0..n)
                .flat_map(|i| ((m * n + i) as f32).to_le_bytes())
                .collect();
            let d = ObjectDescriptor::new(Dtype::Float32, [n as u64]);
            let meta = GlobalMetadata::default();
            out.extend(encode(&meta, &[(&d, &data[..])], &EncodeOptions::default()).unwrap());
        }
        out
    }

    /// Drives a reader by ranges the way the JavaScript wrapper does,
    /// counting round trips and bytes fetched.
    fn drive<T>(
        r: &mut Reader,
        all: &[u8],
        mut op: impl FnMut(&File) -> Result<T>,
    ) -> (T, usize, u64) {
        let (mut trips, mut bytes) = (0, 0);
        loop {
            match r.run(&mut op) {
                Step::Done(v) => return (v.unwrap(), trips, bytes),
                Step::Need(ranges) => {
                    trips += 1;
                    assert!(trips < 100, "no progress");
                    for g in ranges {
                        bytes += g.end - g.start;
                        let b = Bytes::copy_from_slice(&all[g.start as usize..g.end as usize]);
                        r.cache().unwrap().supply(g.start, b).unwrap();
                    }
                }
            }
        }
    }

    #[test]
    fn by_ranges_reads_what_memory_reads_fetching_one_object_lazily() {
        let all = archive(3, 50_000);
        let mut mem = Reader::in_memory(Bytes::from(all.clone()));
        let want = match mem.run(|f| object(f, 2, 0)) {
            Step::Done(v) => v.unwrap(),
            Step::Need(_) => panic!("memory never needs bytes"),
        };
        let mut r = Reader::by_ranges(all.len() as u64, 4096);
        let (n, _, opened) = drive(&mut r, &all, |f| Ok(f.num_messages()));
        assert_eq!(n, 3);
        assert!(opened < all.len() as u64 / 4, "open fetched {opened} bytes");
        let (got, trips, bytes) = drive(&mut r, &all, |f| object(f, 2, 0));
        assert_eq!(got.data, want.data);
        assert_eq!(got.descriptor.shape, vec![50_000]);
        // One object's frame, not the archive.
        assert!(trips <= 2, "{trips} round trips");
        assert!(bytes < all.len() as u64 / 2, "{bytes} bytes");
    }

    #[test]
    fn damage_is_an_error_not_a_request() {
        let mut all = archive(1, 100);
        let n = all.len();
        all[n / 2] ^= 0xff;
        let mut r = Reader::by_ranges(n as u64, 4096);
        let mut trips = 0;
        let e = loop {
            match r.run(|f| object(f, 0, 0)) {
                Step::Done(v) => break v.unwrap_err(),
                Step::Need(ranges) => {
                    trips += 1;
                    assert!(trips < 100);
                    for g in ranges {
                        let b = Bytes::copy_from_slice(&all[g.start as usize..g.end as usize]);
                        r.cache().unwrap().supply(g.start, b).unwrap();
                    }
                }
            }
        };
        assert!(!e.to_string().contains("not fetched"), "{e}");
    }
}
