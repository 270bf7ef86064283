//! Reading archives: every library reading call the commands make goes
//! through these helpers, for local files, stdin and remote URLs alike. See
//! `spec/files.md` §2 for the file index and §7 for byte sources.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use tgm::file::{ByteSource, SourceFile, TornTail};
use tgm::{DecodeOptions, GlobalMetadata, Limits, Message, MessageSpan, ObjectDescriptor, TgmFile};

use crate::error::{usage, CliError, CliResult, WithPath};
use crate::output::is_dash;

use crate::remote_input::is_remote_url;

/// An opened, indexed archive (stdin is first spooled to a temporary file).
pub struct Archive {
    reader: Reader,
    label: PathBuf,
    _spool: Option<tempfile::NamedTempFile>,
}

/// Where an archive's bytes come from: a local file (memory-mapped, read in
/// place) or any other byte source, such as a remote object.
enum Reader {
    Local(TgmFile),
    Source(CachedSource),
}

/// A located byte source keeping the last message it read, so that a
/// command looking at one message several times (metadata, descriptors,
/// stored sizes, then data) fetches it once.
struct CachedSource {
    file: SourceFile<Arc<dyn ByteSource>>,
    last: Mutex<Option<(usize, Bytes)>>,
}

impl CachedSource {
    fn message_bytes(&self, i: usize) -> tgm::Result<Bytes> {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((j, b)) = last.as_ref() {
            if *j == i {
                return Ok(b.clone());
            }
        }
        let b = self.file.message_bytes(i)?;
        *last = Some((i, b.clone()));
        Ok(b)
    }

    fn with_message<R>(
        &self,
        i: usize,
        f: impl FnOnce(&Message<'_>) -> tgm::Result<R>,
    ) -> tgm::Result<R> {
        let bytes = self.message_bytes(i)?;
        let offset = self.file.spans()[i].offset;
        let m =
            Message::parse_with(&bytes, offset, &Limits::default()).map_err(|e| e.in_message(i))?;
        f(&m).map_err(|e| e.in_message(i))
    }
}

/// One object of a message, decoded.
pub struct DecodedObject {
    /// Its descriptor as stored.
    pub descriptor: ObjectDescriptor,
    /// Element bytes in the descriptor's byte order, non-finite values restored.
    pub data: Vec<u8>,
}

/// Refuses a remote URL where a command writes: remote archives are
/// read-only.
pub fn refuse_remote_output(out: &Path) -> CliResult {
    match out.to_str().filter(|s| is_remote_url(s)) {
        Some(url) => Err(usage(format!(
            "{url}: remote archives are read-only; write to a local path"
        ))),
        None => Ok(()),
    }
}

impl Reader {
    fn size(&self) -> u64 {
        match self {
            Reader::Local(f) => f.size(),
            Reader::Source(s) => s.file.size(),
        }
    }

    fn spans(&self) -> &[MessageSpan] {
        match self {
            Reader::Local(f) => f.spans(),
            Reader::Source(s) => s.file.spans(),
        }
    }

    fn torn_tail(&self) -> Option<&TornTail> {
        match self {
            Reader::Local(f) => f.torn_tail(),
            Reader::Source(s) => s.file.torn_tail(),
        }
    }

    fn message_bytes(&self, i: usize) -> tgm::Result<Cow<'_, [u8]>> {
        match self {
            Reader::Local(f) => f.message_bytes(i),
            Reader::Source(s) => Ok(Cow::Owned(Vec::from(s.message_bytes(i)?))),
        }
    }

    fn with_message<R>(
        &self,
        i: usize,
        f: impl FnOnce(&Message<'_>) -> tgm::Result<R>,
    ) -> tgm::Result<R> {
        match self {
            Reader::Local(file) => file.with_message(i, f),
            Reader::Source(s) => s.with_message(i, f),
        }
    }
}

impl Archive {
    /// Opens `path` (a local file, stdin for `-`, or an `http(s)://`,
    /// `s3://`, `gs://` or `az://` URL) without judging its content.
    pub fn open_lenient(path: &Path) -> CliResult<Self> {
        if let Some(url) = path.to_str().filter(|s| is_remote_url(s)) {
            let src = crate::remote_input::open(url)?;
            let file = SourceFile::open(src, &Limits::default()).at(path)?;
            return Ok(Archive {
                reader: Reader::Source(CachedSource {
                    file,
                    last: Mutex::new(None),
                }),
                label: path.to_path_buf(),
                _spool: None,
            });
        }
        if is_dash(path) {
            let mut spool = tempfile::NamedTempFile::new()?;
            std::io::copy(&mut std::io::stdin().lock(), spool.as_file_mut())?;
            let file = TgmFile::open(spool.path()).at(Path::new("<stdin>"))?;
            return Ok(Archive {
                reader: Reader::Local(file),
                label: PathBuf::from("<stdin>"),
                _spool: Some(spool),
            });
        }
        if path.is_dir() {
            return Err(CliError::Failed(format!(
                "{}: is a directory",
                path.display()
            )));
        }
        let file = TgmFile::open(path).map_err(|e| {
            // The library names the path already for I/O errors.
            let s = e.to_string();
            if s.contains(&path.display().to_string()) {
                CliError::Failed(s)
            } else {
                CliError::Failed(format!("{}: {s}", path.display()))
            }
        })?;
        Ok(Archive {
            reader: Reader::Local(file),
            label: path.to_path_buf(),
            _spool: None,
        })
    }

    /// Opens `path` and refuses anything but a complete, undamaged archive:
    /// a file with no message or with bytes that form none is an error.
    pub fn open(path: &Path) -> CliResult<Self> {
        let a = Self::open_lenient(path)?;
        a.check_intact()?;
        Ok(a)
    }

    /// Errors when the file holds bytes outside complete messages.
    pub fn check_intact(&self) -> CliResult {
        let f = &self.reader;
        if f.size() > 0 && f.spans().is_empty() {
            return Err(CliError::Failed(format!(
                "{}: not a Tensogram file (no message found in {} bytes)",
                self.label.display(),
                f.size()
            )));
        }
        if let Some(t) = f.torn_tail() {
            return Err(CliError::Failed(format!(
                "{}: damaged: {} bytes at offset {} form no message ({}); see `tgm salvage`",
                self.label.display(),
                t.len,
                t.offset,
                t.reason
            )));
        }
        let covered: u64 = f.spans().iter().map(|s| s.len).sum();
        if covered != f.size() {
            return Err(CliError::Failed(format!(
                "{}: damaged: {} bytes lie outside complete messages; see `tgm salvage`",
                self.label.display(),
                f.size() - covered
            )));
        }
        Ok(())
    }

    /// The name used in messages.
    pub fn label(&self) -> &Path {
        &self.label
    }

    /// Size in bytes of the file or object.
    pub fn size(&self) -> u64 {
        self.reader.size()
    }

    /// Where each complete message lies.
    pub fn spans(&self) -> &[MessageSpan] {
        self.reader.spans()
    }

    /// Trailing bytes that form no complete message.
    pub fn torn_tail(&self) -> Option<&TornTail> {
        self.reader.torn_tail()
    }

    /// Number of complete messages.
    pub fn len(&self) -> usize {
        self.reader.spans().len()
    }

    /// The raw bytes of message `i`.
    pub fn message_bytes(&self, i: usize) -> CliResult<Cow<'_, [u8]>> {
        self.reader.message_bytes(i).at(&self.label)
    }

    /// Metadata and descriptors of message `i`, without decoding payloads.
    pub fn header(&self, i: usize) -> CliResult<(GlobalMetadata, Vec<ObjectDescriptor>)> {
        if let Reader::Source(s) = &self.reader {
            // Header frame and frame envelopes only, never the payloads.
            let meta = s.file.metadata(i, &DecodeOptions::default());
            return meta
                .and_then(|m| Ok((m, s.file.descriptors(i)?)))
                .at(&self.label);
        }
        self.reader
            .with_message(i, |m| {
                let meta = m.metadata()?;
                let descs = (0..m.num_objects())
                    .map(|o| m.object(o).map(|x| x.descriptor().clone()))
                    .collect::<tgm::Result<Vec<_>>>()?;
                Ok((meta, descs))
            })
            .at(&self.label)
    }

    /// Stored payload bytes per object of message `i`.
    pub fn stored_sizes(&self, i: usize) -> CliResult<Vec<u64>> {
        if let Reader::Source(s) = &self.reader {
            return s.file.stored_sizes(i).at(&self.label);
        }
        self.reader
            .with_message(i, |m| {
                (0..m.num_objects())
                    .map(|o| m.object(o).map(|x| x.payload_region().len() as u64))
                    .collect()
            })
            .at(&self.label)
    }

    /// Decodes every object of message `i` in stored byte order (hashes verified).
    pub fn decode_message(&self, i: usize, threads: usize) -> CliResult<Vec<DecodedObject>> {
        let opts = DecodeOptions::default()
            .native_byte_order(false)
            .threads(threads);
        self.reader
            .with_message(i, |m| {
                m.verify(opts.verify)?;
                (0..m.num_objects())
                    .map(|o| {
                        let obj = m.object(o)?;
                        Ok(DecodedObject {
                            descriptor: obj.descriptor().clone(),
                            data: obj.decode(&opts)?.into_owned(),
                        })
                    })
                    .collect()
            })
            .at(&self.label)
    }

    /// Runs `f` on each object of message `i` decoded in native byte order,
    /// borrowing from the mapping where the library can.
    pub fn for_each_object(
        &self,
        i: usize,
        verify: bool,
        mut f: impl FnMut(usize, &ObjectDescriptor, &[u8]) -> CliResult,
    ) -> CliResult {
        let opts = DecodeOptions::default().verify(if verify {
            tgm::Verify::IfPresent
        } else {
            tgm::Verify::Off
        });
        let mut inner: CliResult = Ok(());
        self.reader
            .with_message(i, |m| {
                m.verify(opts.verify)?;
                let unverified = opts.clone().verify(tgm::Verify::Off);
                for o in 0..m.num_objects() {
                    let obj = m.object(o)?;
                    let data = obj.decode(&unverified)?;
                    if let Err(e) = f(o, obj.descriptor(), &data) {
                        inner = Err(e);
                        break;
                    }
                }
                Ok(())
            })
            .at(&self.label)?;
        inner
    }
}

/// The library validator reads an archive as it reads any file
/// (`spec/files.md` §8).
impl tgm::validate::ValidateSource for Archive {
    fn messages(&self, _: &Limits) -> (u64, Cow<'_, [MessageSpan]>, Option<TornTail>) {
        let r = &self.reader;
        (r.size(), Cow::Borrowed(r.spans()), r.torn_tail().cloned())
    }

    fn message_bytes(&self, i: usize, _: MessageSpan) -> tgm::Result<Cow<'_, [u8]>> {
        self.reader.message_bytes(i)
    }
}
