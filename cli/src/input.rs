//! Reading archives: every library reading call the commands make goes
//! through these helpers, for local files, stdin and remote URLs alike. See
//! `spec/files.md` §2 for the file index and §7 for byte sources.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use tgm::file::archive_catalogue::ArchiveCatalogue;
use tgm::file::{Backend, ByteSource, LocalFile, TornTail};
use tgm::{DecodeOptions, GlobalMetadata, Limits, Message, MessageSpan, ObjectDescriptor, TgmFile};

use crate::error::{at_path, usage, CliError, CliResult, WithPath};
use crate::output::is_dash;

use crate::remote_input::is_remote_url;

/// An opened, indexed archive (stdin is first spooled to a temporary file).
pub struct Archive {
    reader: Reader,
    label: PathBuf,
    _spool: Option<crate::spool::Spooled>,
}

/// An archive's located messages over its bytes: a local file (memory-
/// mapped, read in place) or any other byte source, such as a remote
/// object. A source not in memory keeps the last message it read, so that
/// a command looking at one message several times (metadata,
/// descriptors, stored sizes, then data) fetches it once.
struct Reader {
    file: TgmFile<Arc<dyn ByteSource>>,
    last: Mutex<Option<(usize, Bytes)>>,
}

impl Reader {
    fn new(file: TgmFile<Arc<dyn ByteSource>>) -> Self {
        Reader {
            file,
            last: Mutex::new(None),
        }
    }

    /// Whether the bytes are in memory (a mapped local file): read in
    /// place, never copied.
    fn in_memory(&self) -> bool {
        self.file.source().as_slice().is_some()
    }

    fn message_bytes(&self, i: usize) -> tgm::Result<Cow<'_, [u8]>> {
        if self.in_memory() {
            return self
                .file
                .message_bytes(i)
                .map(tgm::file::MessageBytes::into_cow);
        }
        Ok(Cow::Owned(Vec::from(self.fetched(i)?)))
    }

    /// Message `i`'s bytes, read once from a source not in memory.
    fn fetched(&self, i: usize) -> tgm::Result<Bytes> {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((j, b)) = last.as_ref() {
            if *j == i {
                return Ok(b.clone());
            }
        }
        let b = self.file.message_bytes(i)?.into_bytes();
        *last = Some((i, b.clone()));
        Ok(b)
    }

    fn with_message<R>(
        &self,
        i: usize,
        f: impl FnOnce(&Message<'_>) -> tgm::Result<R>,
    ) -> tgm::Result<R> {
        if self.in_memory() {
            return self.file.with_message(i, f);
        }
        let bytes = self.fetched(i)?;
        let offset = self.file.spans()[i].offset;
        let m =
            Message::parse_with(&bytes, offset, &Limits::default()).map_err(|e| e.in_message(i))?;
        f(&m).map_err(|e| e.in_message(i))
    }
}

/// A byte range of an archive outside every complete message: the
/// library's report, the same for a path and a URL.
pub use tgm::file::Damage;

/// One object of a message: its descriptor as stored and bytes of it,
/// either its decoded elements ([`Archive::decode_message`]) or its stored
/// payload ([`Archive::stored_objects`]).
pub struct ObjectBytes<'a> {
    /// Its descriptor as stored.
    pub descriptor: ObjectDescriptor,
    /// Decoded: element bytes in the descriptor's byte order, non-finite
    /// values restored. Stored: the payload as the pipeline wrote it.
    /// Borrowed from the archive's mapping where possible.
    pub data: Cow<'a, [u8]>,
}

/// One object of a message, decoded.
pub type DecodedObject<'a> = ObjectBytes<'a>;

/// Every object of `m`, hashes verified per `opts`, decoded in stored byte
/// order (borrowed from `m`'s buffer where the pipeline allows).
fn decode_all<'a>(m: &Message<'a>, opts: &DecodeOptions) -> tgm::Result<Vec<ObjectBytes<'a>>> {
    m.verify(opts.verify)?;
    let unverified = opts.clone().verify(tgm::Verify::Off);
    (0..m.num_objects())
        .map(|o| {
            let obj = m.object(o)?;
            let paging = tgm::pipeline::ProgressHook::paging_out(obj.payload_region())
                .then(crate::progress::object_hook("decoding"));
            let paging = crate::progress::decode_hook(paging);
            Ok(ObjectBytes {
                descriptor: obj.descriptor().clone(),
                data: obj.decode(&unverified.clone().progress(paging))?,
            })
        })
        .collect()
}

/// Every object of `m` as stored, hashes verified per `opts`: payloads
/// borrowed from `m`'s buffer, not decoded.
fn stored_all<'a>(m: &Message<'a>, opts: &DecodeOptions) -> tgm::Result<Vec<ObjectBytes<'a>>> {
    m.verify(opts.verify)?;
    (0..m.num_objects())
        .map(|o| {
            let obj = m.object(o)?;
            Ok(ObjectBytes {
                descriptor: obj.descriptor().clone(),
                data: Cow::Borrowed(obj.payload_region()),
            })
        })
        .collect()
}

/// Opens every file of a read command ([`Archive::open_readable`]), before
/// any output.
/// A catalogue file (`.tgmc`, `spec/files.md` §9.5) stands for every
/// archive it lists, each opened from its catalogue.
pub fn open_all_readable(paths: &[PathBuf]) -> CliResult<Vec<Archive>> {
    let mut out = Vec::with_capacity(paths.len());
    for p in paths {
        if crate::catalogue_input::is_catalogue_file(p) {
            for (loc, cat) in crate::catalogue_input::read(p)? {
                let a = Archive::open_lenient_with(Path::new(&loc), Some(cat), true)?;
                out.push(a.readable()?);
            }
        } else {
            out.push(Archive::open_readable(p)?);
        }
    }
    Ok(out)
}

/// Ends a read command: flushes `out`, then reports the damage of every
/// archive on stderr; any damage is exit status 1.
pub fn finish_read(out: &mut impl std::io::Write, archives: &[Archive]) -> CliResult {
    out.flush()?;
    let mut damaged = false;
    for a in archives {
        damaged |= a.report_damage();
    }
    if damaged {
        return Err(CliError::Reported);
    }
    Ok(())
}

/// Locates the messages of `src`, the archive at `path`, from `cat` when
/// given and still matching it (a stale catalogue is noted and the
/// archive located without it).
fn located(
    path: &Path,
    src: Arc<dyn ByteSource>,
    cat: Option<&ArchiveCatalogue>,
    limits: &Limits,
) -> tgm::Result<TgmFile<Arc<dyn ByteSource>>> {
    let Some(cat) = cat else {
        return TgmFile::from_source(src, limits);
    };
    let (f, why) = TgmFile::from_source_catalogued(src, cat, limits)?;
    if let Some(why) = why {
        crate::catalogue_input::note_stale(path, &why);
    }
    Ok(f)
}

/// [`located`] over the local file `path`, memory-mapped.
fn local_file(
    path: &Path,
    cat: Option<&ArchiveCatalogue>,
    limits: &Limits,
) -> tgm::Result<TgmFile<Arc<dyn ByteSource>>> {
    located(
        path,
        Arc::new(LocalFile::open(path, Backend::Mmap)?),
        cat,
        limits,
    )
}

impl Archive {
    /// Opens `path` (a local file, stdin for `-`, or an `http(s)://`,
    /// `s3://`, `gs://` or `az://` URL) without judging its content.
    /// With `--catalogue`, opened from the catalogue it gives for `path`.
    pub fn open_lenient(path: &Path) -> CliResult<Self> {
        let cat = crate::catalogue_input::for_archive(path)?;
        Self::open_lenient_with(path, cat, false)
    }

    /// [`Archive::open_lenient`] from `cat`, a catalogue kept apart
    /// (`spec/files.md` §9.5), when given and still matching the archive.
    /// `lazy`: a remote archive whose ETag `cat` records is not fetched
    /// until an object is read, every read pinned to that ETag (so a
    /// replaced archive is an error then, while its listing comes from
    /// `cat`); otherwise it is checked against `cat` first.
    pub fn open_lenient_with(
        path: &Path,
        cat: Option<ArchiveCatalogue>,
        lazy: bool,
    ) -> CliResult<Self> {
        let limits = Limits::default();
        if let Some(url) = path.to_str().filter(|s| is_remote_url(s)) {
            // With the ETag recorded, nothing is fetched until an object is
            // read, and every read is pinned to it.
            let src = match &cat {
                Some(c) => crate::remote_input::open_listed(url, c, lazy)?,
                None => crate::remote_input::open(url)?,
            };
            return Ok(Archive {
                reader: Reader::new(located(path, src, cat.as_ref(), &limits).at(path)?),
                label: path.to_path_buf(),
                _spool: None,
            });
        }
        if is_dash(path) {
            let spool = crate::spool::stdin_to_file(crate::spool::no_suffix)?;
            let label = Path::new(crate::spool::STDIN);
            let file = local_file(spool.path(), None, &limits).map_err(|e| {
                let text = e.to_string();
                at_path(
                    label,
                    text.replace(&spool.path().display().to_string(), crate::spool::STDIN),
                )
            })?;
            return Ok(Archive {
                reader: Reader::new(file),
                label: label.to_path_buf(),
                _spool: Some(spool),
            });
        }
        if path.is_dir() {
            return Err(CliError::Failed(format!(
                "{}: is a directory",
                path.display()
            )));
        }
        let named = |e: tgm::Error| {
            // The library names the path already for I/O errors.
            let s = e.to_string();
            if s.contains(&path.display().to_string()) {
                CliError::Failed(s)
            } else {
                CliError::Failed(format!("{}: {s}", path.display()))
            }
        };
        let file = local_file(path, cat.as_ref(), &limits).map_err(named)?;
        Ok(Archive {
            reader: Reader::new(file),
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

    /// Opens `path` for a read command, which shows the intact messages of
    /// a damaged file and then reports its damage ([`Archive::report_damage`]).
    /// Bytes that are neither messages nor a cut one are an error.
    pub fn open_readable(path: &Path) -> CliResult<Self> {
        Self::open_lenient(path)?.readable()
    }

    /// The catalogue of this archive kept apart from it, naming it as
    /// `location` (`spec/files.md` §9.5); the archive must be intact.
    pub fn catalogue_apart(&self, location: &str) -> CliResult<ArchiveCatalogue> {
        ArchiveCatalogue::of_file(&self.reader.file, location, &Limits::default()).at(&self.label)
    }

    /// Refuses an archive whose bytes form no message and are not a cut one.
    fn readable(self) -> CliResult<Self> {
        let a = self;
        let cut = a.torn_tail().is_some_and(TornTail::is_truncation);
        if a.size() > 0 && a.len() == 0 && !cut {
            return Err(a.not_tensogram());
        }
        Ok(a)
    }

    fn not_tensogram(&self) -> CliError {
        CliError::Failed(format!(
            "{}: not a Tensogram file (no message found in {} bytes)",
            self.label.display(),
            self.size()
        ))
    }

    /// Errors when the file holds bytes outside complete messages.
    pub fn check_intact(&self) -> CliResult {
        if self.size() > 0 && self.len() == 0 && self.torn_tail().is_none() {
            return Err(self.not_tensogram());
        }
        match self.damage().first() {
            Some(d) => Err(CliError::Failed(self.describe(d))),
            None => Ok(()),
        }
    }

    /// Every byte range outside complete messages, in file order. See
    /// `spec/files.md` §2 (torn tails) and §6 (salvage).
    pub fn damage(&self) -> Vec<Damage> {
        self.reader.file.damage()
    }

    /// One line naming the archive, the damage's offset and its kind.
    pub fn describe(&self, d: &Damage) -> String {
        let label = self.label.display();
        if d.truncated {
            format!(
                "{label}: truncated: the message at offset {} is cut short ({} bytes of it remain); see `tgm salvage`",
                d.offset, d.len
            )
        } else {
            format!(
                "{label}: damaged: {} bytes at offset {} form no message ({}); see `tgm salvage`",
                d.len, d.offset, d.reason
            )
        }
    }

    /// Prints every damage on stderr after the intact messages were shown;
    /// returns whether there was any (the command then exits 1).
    pub fn report_damage(&self) -> bool {
        let damage = self.damage();
        for d in &damage {
            note!("error: {}", self.describe(d));
        }
        !damage.is_empty()
    }

    /// The local file (stdin's spooled copy stays readable through it);
    /// a remote archive is an error.
    #[cfg(any(
        feature = "nifti",
        feature = "dicom",
        feature = "grib",
        feature = "netcdf"
    ))]
    pub fn into_local(self) -> CliResult<TgmFile<Arc<dyn ByteSource>>> {
        if !self.reader.in_memory() {
            return Err(self.remote_refused());
        }
        Ok(self.reader.file)
    }

    /// The error of a command reading local files only, given a URL.
    #[cfg(any(
        feature = "nifti",
        feature = "dicom",
        feature = "grib",
        feature = "netcdf"
    ))]
    fn remote_refused(&self) -> CliError {
        usage(format!(
            "{}: this command reads local files only",
            self.label.display()
        ))
    }

    /// Opens a complete, undamaged local archive (`-` for stdin) for a
    /// command that writes another format from it.
    #[cfg(any(
        feature = "nifti",
        feature = "dicom",
        feature = "grib",
        feature = "netcdf"
    ))]
    pub fn open_local(path: &Path) -> CliResult<TgmFile<Arc<dyn ByteSource>>> {
        Self::open(path)?.into_local()
    }

    /// [`Archive::open_local`] kept as an archive, for the per-object
    /// readers ([`Archive::for_each_object`]).
    #[cfg(any(feature = "grib", feature = "netcdf"))]
    pub fn open_local_archive(path: &Path) -> CliResult<Self> {
        let a = Self::open(path)?;
        if !a.reader.in_memory() {
            return Err(a.remote_refused());
        }
        Ok(a)
    }

    /// The name used in messages.
    pub fn label(&self) -> &Path {
        &self.label
    }

    /// Size in bytes of the file or object.
    pub fn size(&self) -> u64 {
        self.reader.file.size()
    }

    /// Where each complete message lies.
    pub fn spans(&self) -> &[MessageSpan] {
        self.reader.file.spans()
    }

    /// Trailing bytes that form no complete message.
    pub fn torn_tail(&self) -> Option<&TornTail> {
        self.reader.file.torn_tail()
    }

    /// Number of complete messages.
    pub fn len(&self) -> usize {
        self.reader.file.num_messages()
    }

    /// Runs `f` on message `i`, parsed at its offset in the archive (so
    /// payload offsets are the archive's).
    pub fn with_message<R>(
        &self,
        i: usize,
        f: impl FnOnce(&Message<'_>) -> tgm::Result<R>,
    ) -> CliResult<R> {
        self.reader.with_message(i, f).at(&self.label)
    }

    /// The raw bytes of message `i`.
    pub fn message_bytes(&self, i: usize) -> CliResult<Cow<'_, [u8]>> {
        self.reader.message_bytes(i).at(&self.label)
    }

    /// Metadata and descriptors of message `i`, without decoding payloads.
    pub fn header(&self, i: usize) -> CliResult<(GlobalMetadata, Vec<ObjectDescriptor>)> {
        let file = &self.reader.file;
        if !self.reader.in_memory() {
            // Header frame and frame envelopes only, never the payloads.
            let meta = file.metadata(i, &DecodeOptions::default());
            return meta
                .and_then(|m| Ok((m, file.descriptors(i)?)))
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
        if !self.reader.in_memory() {
            return self.reader.file.stored_sizes(i).at(&self.label);
        }
        self.reader
            .with_message(i, |m| {
                (0..m.num_objects())
                    .map(|o| m.object(o).map(|x| x.payload_region().len() as u64))
                    .collect()
            })
            .at(&self.label)
    }

    /// Decodes every object of message `i` in stored byte order (hashes
    /// verified). Objects stored raw are borrowed from the memory map, not
    /// copied, so a rewrite holds one copy of them (`spec/files.md` §7).
    pub fn decode_message(&self, i: usize, threads: usize) -> CliResult<Vec<DecodedObject<'_>>> {
        let opts = DecodeOptions::default()
            .native_byte_order(false)
            .threads(threads);
        self.objects_of(i, &opts, decode_all)
    }

    /// Every object of message `i` as stored (hashes verified), its payload
    /// borrowed from the memory map, for a rewrite that keeps pipelines.
    pub fn stored_objects(&self, i: usize) -> CliResult<Vec<ObjectBytes<'_>>> {
        self.objects_of(i, &DecodeOptions::default(), stored_all)
    }

    /// `read` on message `i`, parsed where its bytes lie: in the mapping
    /// (the result borrows from it) or, for other sources, in a buffer
    /// (the result is copied out of it).
    fn objects_of(
        &self,
        i: usize,
        opts: &DecodeOptions,
        read: for<'a> fn(&Message<'a>, &DecodeOptions) -> tgm::Result<Vec<ObjectBytes<'a>>>,
    ) -> CliResult<Vec<ObjectBytes<'_>>> {
        let offset = self.spans()[i].offset;
        let limits = Limits::default();
        let objects = match self.reader.message_bytes(i).at(&self.label)? {
            Cow::Borrowed(bytes) => {
                Message::parse_with(bytes, offset, &limits).and_then(|m| read(&m, opts))
            }
            Cow::Owned(bytes) => Message::parse_with(&bytes, offset, &limits)
                .and_then(|m| read(&m, opts))
                .map(|objects| {
                    let own = |o: ObjectBytes<'_>| ObjectBytes {
                        descriptor: o.descriptor,
                        data: Cow::Owned(o.data.into_owned()),
                    };
                    objects.into_iter().map(own).collect()
                }),
        };
        objects.map_err(|e| e.in_message(i)).at(&self.label)
    }

    /// Runs `f` on each object `o` of message `i` for which `want(o)`,
    /// decoded in native byte order, borrowing from the mapping where the
    /// library can.
    pub fn for_each_object(
        &self,
        i: usize,
        verify: bool,
        want: impl Fn(usize) -> bool,
        mut f: impl FnMut(usize, &ObjectDescriptor, &[u8]) -> CliResult,
    ) -> CliResult {
        let opts = DecodeOptions::default().verify(if verify {
            tgm::Verify::IfPresent
        } else {
            tgm::Verify::Off
        });
        self.each_object(i, &opts, want, |obj, unverified| {
            let data = Self::decode_paging_out(obj, unverified)?;
            Ok(f(obj.index(), obj.descriptor(), &data))
        })
    }

    /// `obj` decoded whole with `opts`, its stored payload paged out behind
    /// the decode, with progress ([`Archive::for_each_object`]).
    pub fn decode_paging_out<'a>(
        obj: &tgm::Object<'a>,
        opts: &DecodeOptions,
    ) -> tgm::Result<Cow<'a, [u8]>> {
        let paging = tgm::pipeline::ProgressHook::paging_out(obj.payload_region())
            .then(crate::progress::object_hook("decoding"));
        let paging = crate::progress::decode_hook(paging);
        obj.decode(&opts.clone().progress(paging))
    }

    /// Runs `f(object, opts)` on each object of message `i` for which
    /// `want(o)`, undecoded, once the message's hashes are verified; `f`
    /// decodes it as it needs with `opts` (verification off).
    #[cfg(feature = "grib")]
    pub fn for_each_undecoded(
        &self,
        i: usize,
        want: impl Fn(usize) -> bool,
        mut f: impl FnMut(&tgm::Object<'_>, &DecodeOptions) -> CliResult,
    ) -> CliResult {
        let opts = DecodeOptions::default().verify(tgm::Verify::IfPresent);
        self.each_object(i, &opts, want, |obj, unverified| Ok(f(obj, unverified)))
    }

    /// Decodes each object `o` of message `i` for which `want(o)` into a
    /// buffer of its own, in native byte order with hashes verified, and
    /// hands it to `f`. A payload the library borrows from the mapping is
    /// copied with the mapping paged out behind the copy, so memory holds
    /// one copy of the object.
    #[cfg(feature = "netcdf")]
    pub fn for_each_owned_object(
        &self,
        i: usize,
        want: impl Fn(usize) -> bool,
        mut f: impl FnMut(usize, tgm::DecodedObject) -> CliResult,
    ) -> CliResult {
        self.each_object(i, &DecodeOptions::default(), want, |obj, unverified| {
            let paging = tgm::pipeline::ProgressHook::paging_out(obj.payload_region())
                .then(crate::progress::object_hook("decoding"));
            let data = match obj.decode(&unverified.clone().progress(paging))? {
                Cow::Owned(v) => v,
                Cow::Borrowed(b) => tgm::pipeline::copy_paging_out(b)?,
            };
            let descriptor = obj.descriptor().clone();
            Ok(f(obj.index(), tgm::DecodedObject { descriptor, data }))
        })
    }

    /// Decodes each object `o` of message `i` for which `want(o)` into
    /// `buf`, in native byte order with hashes verified, and runs `f` on
    /// it. `buf` is reused from object to object (and call to call), so
    /// memory stays near the largest decoded object.
    pub fn decode_each_into(
        &self,
        i: usize,
        threads: usize,
        want: impl Fn(usize) -> bool,
        buf: &mut Vec<u8>,
        mut f: impl FnMut(usize, &ObjectDescriptor, &[u8]) -> CliResult,
    ) -> CliResult {
        let opts = DecodeOptions::default()
            .threads(threads)
            .progress(crate::progress::object_hook("decoding"));
        self.each_object(i, &opts, want, |obj, unverified| {
            obj.decode_reusing(unverified, buf)?;
            Ok(f(obj.index(), obj.descriptor(), buf))
        })
    }

    /// Verifies message `i` per `opts` once, then runs `visit` on each
    /// object `o` for which `want(o)`, with `opts` less verification, until
    /// it fails or returns a command error.
    fn each_object(
        &self,
        i: usize,
        opts: &DecodeOptions,
        want: impl Fn(usize) -> bool,
        mut visit: impl FnMut(&tgm::Object<'_>, &DecodeOptions) -> tgm::Result<CliResult>,
    ) -> CliResult {
        let mut inner: CliResult = Ok(());
        self.reader
            .with_message(i, |m| {
                m.verify(opts.verify)?;
                let unverified = opts.clone().verify(tgm::Verify::Off);
                for o in (0..m.num_objects()).filter(|&o| want(o)) {
                    inner = visit(&m.object(o)?, &unverified)?;
                    if inner.is_err() {
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
/// (`spec/files.md` §8), catalogue messages included (§9.1).
impl tgm::validate::ValidateSource for Archive {
    fn messages(&self, l: &Limits) -> (u64, Cow<'_, [MessageSpan]>, Option<TornTail>) {
        tgm::validate::ValidateSource::messages(&self.reader.file, l)
    }

    fn message_bytes(&self, i: usize, span: MessageSpan) -> tgm::Result<Cow<'_, [u8]>> {
        tgm::validate::ValidateSource::message_bytes(&self.reader.file, i, span)
    }
}
