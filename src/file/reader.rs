//! `TgmFile`: a file of messages opened through a memory map or positioned
//! reads. See `spec/files.md` §2–§4.

use std::borrow::Cow;
use std::fs::File;
use std::path::{Path, PathBuf};

use super::index::{index_messages, ReadAt, TornTail};
use crate::decode::{locate_object, DecodeOptions, DecodedObject, Message};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::wire::scan::MessageSpan;

/// How file bytes are reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// A read-only memory map: reads borrow the mapping (default).
    #[default]
    Mmap,
    /// Positioned reads (`pread`): only the bytes asked for are read, into
    /// owned buffers. For network filesystems and files others may shrink.
    Pread,
}

struct PreadSource<'f>(&'f File, u64);

impl ReadAt for PreadSource<'_> {
    fn size(&self) -> u64 {
        self.1
    }
    fn read_at(&self, offset: u64, len: usize) -> Option<Cow<'_, [u8]>> {
        read_exact_at(self.0, offset, len).ok().map(Cow::Owned)
    }
}

/// A mapping read through the slice for hops between nearby positions and
/// through `pread` for far ones: touching one page per message of a large
/// file through the mapping costs a page fault each, a small read does not.
struct MappedSource<'f> {
    bytes: &'f [u8],
    file: &'f File,
    last: std::cell::Cell<u64>,
}

/// Hops longer than this read through `pread` rather than the mapping.
const FAR_HOP: u64 = 256 << 10;

impl ReadAt for MappedSource<'_> {
    fn size(&self) -> u64 {
        self.bytes.len() as u64
    }
    fn read_at(&self, offset: u64, len: usize) -> Option<Cow<'_, [u8]>> {
        let far = offset.abs_diff(self.last.replace(offset)) > FAR_HOP;
        if far {
            if let Ok(v) = read_exact_at(self.file, offset, len) {
                return Some(Cow::Owned(v));
            }
        }
        let start = usize::try_from(offset).ok()?;
        self.bytes
            .get(start..start.checked_add(len)?)
            .map(Cow::Borrowed)
    }
}

fn read_exact_at(f: &File, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut buf = crate::buffer::zeroed(len).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            "cannot allocate read buffer",
        )
    })?;
    f.read_exact_at(&mut buf, offset)?;
    Ok(buf)
}

/// An open `.tgm` file: its messages located, none decoded.
///
/// `TgmFile` is `Send + Sync`: threads may decode different objects at once.
pub struct TgmFile {
    path: PathBuf,
    file: File,
    backend: Backend,
    map: Option<memmap2::Mmap>,
    size: u64,
    spans: Vec<MessageSpan>,
    torn: Option<TornTail>,
    limits: Limits,
}

impl std::fmt::Debug for TgmFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TgmFile")
            .field("path", &self.path)
            .field("backend", &self.backend)
            .field("size", &self.size)
            .field("messages", &self.spans.len())
            .field("torn", &self.torn)
            .finish()
    }
}

impl TgmFile {
    /// Opens and indexes `path` through a memory map, with default limits.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, Backend::Mmap, &Limits::default())
    }

    /// Opens with an explicit backend and limits. The cost is proportional to
    /// the number of messages; only damaged or streaming regions are scanned.
    pub fn open_with(path: impl AsRef<Path>, backend: Backend, limits: &Limits) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path).map_err(|e| Error::from(e).with_path(&path))?;
        let mut f = TgmFile {
            path,
            file,
            backend,
            map: None,
            size: 0,
            spans: Vec::new(),
            torn: None,
            limits: limits.clone(),
        };
        f.refresh()?;
        Ok(f)
    }

    /// Re-reads the file's length and indexes messages completed since the
    /// last look (for following a file another process appends to).
    pub fn refresh(&mut self) -> Result<()> {
        let size = self.file.metadata()?.len();
        if size < self.size {
            // Shrunk under us: start over.
            self.spans.clear();
        }
        self.size = size;
        if self.backend == Backend::Mmap {
            self.map = if size == 0 {
                None
            } else {
                Some(super::pod::map_file(&self.file)?)
            };
        }
        let start = self.spans.last().map_or(0, |s| s.offset + s.len);
        let (spans, torn) = match (&self.map, self.backend) {
            (Some(m), _) => {
                let bytes: &[u8] = m;
                let src = MappedSource {
                    bytes,
                    file: &self.file,
                    last: std::cell::Cell::new(start),
                };
                index_messages(&src, start, &self.limits, &mut |p| {
                    bytes.get(usize::try_from(p).ok()?..).map(Cow::Borrowed)
                })
            }
            (None, Backend::Pread) => {
                let src = PreadSource(&self.file, size);
                let file = &self.file;
                index_messages(&src, start, &self.limits, &mut |p| {
                    read_exact_at(file, p, usize::try_from(size - p).ok()?)
                        .ok()
                        .map(Cow::Owned)
                })
            }
            (None, Backend::Mmap) => (Vec::new(), None),
        };
        self.spans.extend(spans);
        self.torn = torn;
        Ok(())
    }

    /// The path opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// File size in bytes at the last (re)index.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Where each complete message lies.
    pub fn spans(&self) -> &[MessageSpan] {
        &self.spans
    }

    /// Number of complete messages.
    pub fn num_messages(&self) -> usize {
        self.spans.len()
    }

    /// Trailing bytes that form no complete message (an interrupted append).
    pub fn torn_tail(&self) -> Option<&TornTail> {
        self.torn.as_ref()
    }

    /// The bytes of message `i`: borrowed from the mapping, or read.
    pub fn message_bytes(&self, i: usize) -> Result<Cow<'_, [u8]>> {
        let s = *self.spans.get(i).ok_or_else(|| {
            Error::invalid_argument(format!(
                "message index {i} out of range (the file has {})",
                self.spans.len()
            ))
        })?;
        match &self.map {
            Some(m) => Ok(Cow::Borrowed(&m[s.range()])),
            None => {
                let len = usize::try_from(s.len)
                    .map_err(|_| Error::limit("max_message_len", s.len, usize::MAX as u64))?;
                Ok(Cow::Owned(read_exact_at(&self.file, s.offset, len)?))
            }
        }
    }

    /// Runs `f` on the parsed message `i`.
    pub fn with_message<R>(
        &self,
        i: usize,
        f: impl FnOnce(&Message<'_>) -> Result<R>,
    ) -> Result<R> {
        let bytes = self.message_bytes(i)?;
        let m = Message::parse_with(&bytes, self.spans[i].offset, &self.limits)
            .map_err(|e| e.in_message(i))?;
        f(&m).map_err(|e| e.in_message(i))
    }

    /// Object `o` of message `m`, decoded. With the mmap backend, an
    /// uncompressed object in native byte order is borrowed from the mapping.
    pub fn object_data(&self, m: usize, o: usize, opts: &DecodeOptions) -> Result<Cow<'_, [u8]>> {
        let span = *self
            .spans
            .get(m)
            .ok_or_else(|| Error::invalid_argument(format!("message index {m} out of range")))?;
        match &self.map {
            Some(map) => {
                let obj = locate_object(&map[span.range()], span.offset, o, &opts.limits)
                    .map_err(|e| e.in_message(m))?;
                obj.decode(opts).map_err(|e| e.in_message(m))
            }
            None => {
                let bytes = self.message_bytes(m)?;
                let obj = locate_object(&bytes, span.offset, o, &opts.limits)
                    .map_err(|e| e.in_message(m))?;
                Ok(Cow::Owned(crate::buffer::into_owned(
                    obj.decode(opts).map_err(|e| e.in_message(m))?,
                )?))
            }
        }
    }

    /// Object `o` of message `m` with its descriptor, owned.
    pub fn decode_object(&self, m: usize, o: usize, opts: &DecodeOptions) -> Result<DecodedObject> {
        let bytes = self.message_bytes(m)?;
        let span = self.spans[m];
        let obj =
            locate_object(&bytes, span.offset, o, &opts.limits).map_err(|e| e.in_message(m))?;
        let data = crate::buffer::into_owned(obj.decode(opts).map_err(|e| e.in_message(m))?)?;
        Ok(DecodedObject {
            descriptor: obj.descriptor().clone(),
            data,
        })
    }

    /// Object `o` of message `m` as a typed slice of the mapping, when the
    /// object is uncompressed, in native byte order, of element type `T`, and
    /// aligned; `None` when a copy is needed (use [`TgmFile::object_data`]).
    pub fn object_slice<T: super::Pod>(
        &self,
        m: usize,
        o: usize,
        opts: &DecodeOptions,
    ) -> Result<Option<&[T]>> {
        match self.object_data(m, o, opts)? {
            Cow::Borrowed(b) => Ok(super::try_cast::<T>(b)),
            Cow::Owned(_) => Ok(None),
        }
    }

    /// Messages whose object metadata matches `key = value` (dotted keys look
    /// in the object's base entry, then `_extra_`), as (message, object)
    /// pairs; payloads are not decoded.
    pub fn select(&self, key: &str, value: &str) -> Result<Vec<(usize, usize)>> {
        let mut out = Vec::new();
        for i in 0..self.spans.len() {
            self.with_message(i, |msg| {
                let meta = msg.metadata()?;
                for o in 0..msg.num_objects() {
                    if meta
                        .lookup(Some(o), key)
                        .is_some_and(|v| value_matches(v, value))
                    {
                        out.push((i, o));
                    }
                }
                Ok(())
            })?;
        }
        Ok(out)
    }
}

/// Compares a metadata value with its text form (`2t`, `12`, `0.5`, `true`).
pub fn value_matches(v: &crate::cbor::Value, text: &str) -> bool {
    use crate::cbor::Value;
    match v {
        Value::Text(t) => t == text,
        Value::Uint(_) | Value::Nint(_) => {
            v.as_i64().map(|i| i.to_string()) == Some(text.to_string())
                || text.parse::<u64>().ok() == v.as_u64()
        }
        Value::Float(f) => text.parse::<f64>().ok() == Some(*f),
        Value::Bool(b) => text == if *b { "true" } else { "false" },
        _ => false,
    }
}
