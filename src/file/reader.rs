//! `TgmFile`: a file of messages opened through a memory map or positioned
//! reads. See `spec/files.md` §2–§4.

use std::borrow::Cow;
use std::fs::File;
use std::path::{Path, PathBuf};

use std::sync::atomic::{AtomicU64, Ordering};

use super::index::{index_messages, TornTail};
use super::locate::{locate_data_frame, MessageAt};
use super::source::{ByteSource, FileSource, MmapSource};
use crate::decode::{DecodeOptions, DecodedObject, Message, Object};
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

/// A mapping read through the slice for hops between nearby positions and
/// through positioned reads for far ones: touching one page per message of
/// a large file through the mapping costs a page fault each, a small read
/// does not.
struct MappedSource<'f> {
    bytes: &'f [u8],
    file: &'f FileSource,
    last: AtomicU64,
}

/// Hops longer than this read through the file rather than the mapping.
const FAR_HOP: u64 = 256 << 10;

impl ByteSource for MappedSource<'_> {
    fn len(&self) -> Result<u64> {
        Ok(self.bytes.len() as u64)
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let far = offset.abs_diff(self.last.swap(offset, Ordering::Relaxed)) > FAR_HOP;
        if far && self.file.read_at(offset, buf).is_ok() {
            return Ok(());
        }
        self.bytes.read_at(offset, buf)
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(self.bytes)
    }
}

/// An open `.tgm` file: its messages located, none decoded.
///
/// `TgmFile` is `Send + Sync`: threads may decode different objects at once.
pub struct TgmFile {
    path: PathBuf,
    file: FileSource,
    backend: Backend,
    map: Option<MmapSource>,
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
        let file = FileSource::new(File::open(&path).map_err(|e| Error::from(e).with_path(&path))?);
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
        let size = self.file.file().metadata()?.len();
        if size < self.size {
            // Shrunk under us: start over.
            self.spans.clear();
        }
        self.size = size;
        if self.backend == Backend::Mmap {
            self.map = if size == 0 {
                None
            } else {
                Some(MmapSource::map(self.file.file())?)
            };
        }
        let start = self.spans.last().map_or(0, |s| s.offset + s.len);
        let (spans, torn) = match (&self.map, self.backend) {
            (Some(m), _) => {
                let src = MappedSource {
                    bytes: m.as_slice().unwrap_or_default(),
                    file: &self.file,
                    last: AtomicU64::new(start),
                };
                index_messages(&src, start, &self.limits)
            }
            (None, Backend::Pread) => index_messages(&self.file, start, &self.limits),
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

    fn span(&self, i: usize) -> Result<MessageSpan> {
        span_of(&self.spans, i)
    }

    /// The bytes of message `i`: borrowed from the mapping, or read.
    pub fn message_bytes(&self, i: usize) -> Result<Cow<'_, [u8]>> {
        let s = self.span(i)?;
        match &self.map {
            // Spans lie within the mapping they were indexed from.
            Some(m) => Ok(Cow::Borrowed(&m.as_slice().unwrap_or_default()[s.range()])),
            None => Ok(Cow::Owned(
                self.file.read_bytes(s.offset..s.offset + s.len)?.into(),
            )),
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

    /// Object `o` of message `span`, borrowed from the mapping `bytes`.
    fn mapped_object<'s>(
        &self,
        bytes: &'s [u8],
        span: MessageSpan,
        o: usize,
        limits: &Limits,
    ) -> Result<Object<'s>> {
        match locate_data_frame(&bytes, MessageAt::of(span, self.size), o, limits)? {
            Some(e) => {
                // The locator checked the range against the message, which
                // lies within the mapping.
                let start = (span.offset + e.offset) as usize;
                let frame = e.frame(&bytes[start..start + e.len as usize], span.offset)?;
                Object::from_frame(frame, o, limits)
            }
            None => Message::parse_with(&bytes[span.range()], span.offset, limits)?.object(o),
        }
    }

    /// Runs `f` on object `o` of message `m`. Without a mapping only the
    /// message's head, its index and the object's frame are read when the
    /// message has an index.
    fn with_object<R>(
        &self,
        m: usize,
        o: usize,
        limits: &Limits,
        f: impl FnOnce(&Object<'_>) -> Result<R>,
    ) -> Result<R> {
        let span = self.span(m)?;
        let run = || {
            if let Some(map) = &self.map {
                let bytes = map.as_slice().unwrap_or_default();
                return f(&self.mapped_object(bytes, span, o, limits)?);
            }
            read_object(&self.file, self.size, span, o, limits, f)
        };
        run().map_err(|e| e.in_message(m))
    }

    /// Object `o` of message `m`, decoded. With the mmap backend, an
    /// uncompressed object in native byte order is borrowed from the mapping.
    pub fn object_data(&self, m: usize, o: usize, opts: &DecodeOptions) -> Result<Cow<'_, [u8]>> {
        let span = self.span(m)?;
        match &self.map {
            Some(map) => {
                let bytes = map.as_slice().unwrap_or_default();
                self.mapped_object(bytes, span, o, &opts.limits)
                    .and_then(|obj| obj.decode(opts))
                    .map_err(|e| e.in_message(m))
            }
            None => self.with_object(m, o, &opts.limits, |obj| {
                Ok(Cow::Owned(crate::buffer::into_owned(obj.decode(opts)?)?))
            }),
        }
    }

    /// Object `o` of message `m` with its descriptor, owned.
    pub fn decode_object(&self, m: usize, o: usize, opts: &DecodeOptions) -> Result<DecodedObject> {
        self.with_object(m, o, &opts.limits, |obj| {
            Ok(DecodedObject {
                descriptor: obj.descriptor().clone(),
                data: crate::buffer::into_owned(obj.decode(opts)?)?,
            })
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

/// Runs `f` on object `o` of the message at `span` of `src`. With an index
/// only the message's head, the frame headers before the index, the index
/// and the object's frame are read; otherwise the whole message.
pub(crate) fn read_object<R>(
    src: &dyn ByteSource,
    size: u64,
    span: MessageSpan,
    o: usize,
    limits: &Limits,
    f: impl FnOnce(&Object<'_>) -> Result<R>,
) -> Result<R> {
    match locate_data_frame(src, MessageAt::of(span, size), o, limits)? {
        Some(e) => {
            let start = span.offset + e.offset;
            let bytes = src.read_bytes(start..start + e.len)?;
            let frame = e.frame(&bytes, span.offset)?;
            f(&Object::from_frame(frame, o, limits)?)
        }
        None => {
            let bytes = src.read_bytes(span.offset..span.offset + span.len)?;
            f(&Message::parse_with(&bytes, span.offset, limits)?.object(o)?)
        }
    }
}

/// The messages of any [`ByteSource`], located, none decoded: what
/// [`TgmFile`] is for a path, for memory, a shared mapping, an open file or
/// a remote store. Opening reads a few bytes per message; reading an object
/// reads the message's head, its index and that object's frame.
#[derive(Debug)]
pub struct SourceFile<S> {
    src: S,
    size: u64,
    spans: Vec<MessageSpan>,
    torn: Option<TornTail>,
    limits: Limits,
}

impl<S: ByteSource> SourceFile<S> {
    /// Locates the messages of `src`.
    pub fn open(src: S, limits: &Limits) -> Result<Self> {
        let size = src.len()?;
        let (spans, torn) = index_messages(&src, 0, limits);
        Ok(SourceFile {
            src,
            size,
            spans,
            torn,
            limits: limits.clone(),
        })
    }

    /// The source read.
    pub fn source(&self) -> &S {
        &self.src
    }

    /// Where each complete message lies.
    pub fn spans(&self) -> &[MessageSpan] {
        &self.spans
    }

    /// Number of complete messages.
    pub fn num_messages(&self) -> usize {
        self.spans.len()
    }

    /// Trailing bytes that form no complete message.
    pub fn torn_tail(&self) -> Option<&TornTail> {
        self.torn.as_ref()
    }

    /// The bytes of message `i`, shared with the source where it allows.
    pub fn message_bytes(&self, i: usize) -> Result<bytes::Bytes> {
        let s = span_of(&self.spans, i)?;
        self.src.read_bytes(s.offset..s.offset + s.len)
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

    /// Object `o` of message `m` with its descriptor, owned.
    pub fn decode_object(&self, m: usize, o: usize, opts: &DecodeOptions) -> Result<DecodedObject> {
        let span = span_of(&self.spans, m)?;
        read_object(&self.src, self.size, span, o, &opts.limits, |obj| {
            Ok(DecodedObject {
                descriptor: obj.descriptor().clone(),
                data: crate::buffer::into_owned(obj.decode(opts)?)?,
            })
        })
        .map_err(|e| e.in_message(m))
    }
}

fn span_of(spans: &[MessageSpan], i: usize) -> Result<MessageSpan> {
    spans.get(i).copied().ok_or_else(|| {
        Error::invalid_argument(format!(
            "message index {i} out of range (the file has {})",
            spans.len()
        ))
    })
}
