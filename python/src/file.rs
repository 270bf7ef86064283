//! `tgm._native.File`: the one reader of the Python package, over any
//! byte source: a local file read through positioned reads into owned
//! buffers, never through a memory map (so that an array it returns
//! neither changes nor faults when the file is rewritten or truncated), a
//! remote object or a Python file object. Each message's index, frame
//! envelopes and (for the last few messages) metadata are read once per
//! handle (`spec/files.md` §2, §7).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use tgm::file::{
    Backend, ByteSource, FileLayout, LocalFile, MessageLayout, TgmFile, LAYOUT_VERSION,
};
use tgm::{ByteOrder, DecodeOptions, Dtype, Error, GlobalMetadata, Limits};

use crate::convert::{descriptor_to_py, metadata_to_py, IntoPyResult};
use crate::core::{array_of, decode_options, message_to_py, verify_policy, DecodedPy};
use crate::ranges::{element_kind, ranges_to_py, ElementRanges, RangesPy};

/// `[(offset, length, reason, truncated)]` of the bytes of `f` outside
/// complete messages (`spec/files.md` §2).
pub(crate) fn damage_rows<S: ByteSource>(f: &TgmFile<S>) -> Vec<(u64, u64, String, bool)> {
    f.damage()
        .into_iter()
        .map(|d| (d.offset, d.len, d.reason, d.truncated))
        .collect()
}

/// The error opening a file raises: not a Tensogram file at all, or
/// bytes outside complete messages (unless `intact_only`, which reads the
/// intact messages of a damaged file). Offsets are absolute.
pub(crate) fn check_intact<S: ByteSource>(
    path: &std::path::Path,
    f: &TgmFile<S>,
    intact_only: bool,
) -> tgm::Result<()> {
    let Err(e) = f.check_intact() else {
        return Ok(());
    };
    // No message and no cut one: not a Tensogram file, whatever is asked.
    let not_tensogram = f.num_messages() == 0 && *e.kind() != tgm::ErrorKind::Truncated;
    if not_tensogram {
        return Err(e.with_path(path));
    }
    if intact_only {
        return Ok(());
    }
    let hint = format!(
        "open with intact_only=True to read the {} intact messages",
        f.num_messages()
    );
    let mut out = Error::new(e.kind().clone(), format!("{}; {hint}", e.detail()));
    if let Some(at) = e.offset() {
        out = out.at(at);
    }
    if let Some(m) = e.message_index() {
        out = out.in_message(m);
    }
    Err(out.with_path(path))
}

/// Parsed message metadata shared with the file's cache.
#[pyclass(module = "tgm._native", name = "MetadataHandle", frozen)]
pub struct NativeMetadata(Arc<GlobalMetadata>);

#[pymethods]
impl NativeMetadata {
    /// The metadata as `{"base", "reserved", "extra"}`, a new dict each call.
    fn to_dict(&self, py: Python<'_>) -> PyResult<PyObject> {
        metadata_to_py(py, &self.0)
    }
}

/// The located messages of a byte source.
pub(crate) type Reader = TgmFile<Box<dyn ByteSource>>;

/// An open file (`spec/files.md`): a local path read by positioned reads
/// into buffers the returned arrays own, a URL or a file object.
#[pyclass(module = "tgm._native", name = "File", frozen)]
pub struct NativeFile {
    /// The local path, which errors name and `refresh` looks at again;
    /// `None` for a URL or a file object (their errors name them already).
    path: Option<PathBuf>,
    inner: RwLock<Reader>,
    /// Element type of each object read by ranges, by `(message, object)`:
    /// its descriptor (with any szip block offsets) is parsed once, not on
    /// every range read. Taken from the handle's kept envelopes, so it is
    /// as current as they are; cleared by `refresh`.
    kinds: Mutex<HashMap<(usize, usize), (Dtype, ByteOrder)>>,
}

impl NativeFile {
    /// A handle on `file`, located already; `path` when it is a local file.
    pub(crate) fn of(file: Reader, path: Option<PathBuf>) -> Self {
        NativeFile {
            path,
            inner: RwLock::new(file),
            kinds: Mutex::default(),
        }
    }

    /// Locates the messages of `src`, named `name` in errors; bytes outside
    /// complete messages are refused unless `intact_only`, as for a local
    /// file (`spec/files.md` §2).
    pub(crate) fn locate(
        py: Python<'_>,
        name: &std::path::Path,
        src: Box<dyn ByteSource>,
        intact_only: bool,
    ) -> PyResult<Reader> {
        py.allow_threads(|| -> tgm::Result<_> {
            let f = TgmFile::from_source(src, &Limits::default())?;
            check_intact(name, &f, intact_only)?;
            Ok(f)
        })
        .py(py)
    }

    /// The element types known so far.
    fn kinds(&self) -> MutexGuard<'_, HashMap<(usize, usize), (Dtype, ByteOrder)>> {
        self.kinds.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `e`, naming the local path.
    fn named(&self, e: Error) -> Error {
        match &self.path {
            Some(p) => e.with_path(p),
            None => e,
        }
    }

    /// Runs `f` on the located file with the GIL released; errors name the
    /// local path.
    pub(crate) fn read<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Reader) -> tgm::Result<R> + Send,
    ) -> PyResult<R> {
        py.allow_threads(|| {
            let g = self.inner.read().unwrap_or_else(|p| p.into_inner());
            f(&g).map_err(|e| self.named(e))
        })
        .py(py)
    }
}

#[pymethods]
impl NativeFile {
    /// Opens and locates the messages of `path`; refuses a file that is not
    /// a Tensogram file or holds bytes outside complete messages unless
    /// `intact_only`.
    #[new]
    #[pyo3(signature = (path, intact_only=false))]
    fn new(py: Python<'_>, path: PathBuf, intact_only: bool) -> PyResult<Self> {
        let src = py
            .allow_threads(|| LocalFile::open(&path, Backend::Pread))
            .py(py)?;
        let f = Self::locate(py, &path, Box::new(src), intact_only)?;
        Ok(Self::of(f, Some(path)))
    }

    /// A reader over `path` whose messages `spans` (`[(offset, length)]`)
    /// were located already in a file of `size` bytes: nothing is scanned;
    /// a file of another size is refused, and each frame is checked when read.
    #[staticmethod]
    fn from_layout(
        py: Python<'_>,
        path: PathBuf,
        size: u64,
        spans: Vec<(u64, u64)>,
    ) -> PyResult<Self> {
        let layout = FileLayout {
            version: LAYOUT_VERSION,
            source_len: size,
            etag: None,
            messages: spans
                .into_iter()
                .map(|(offset, len)| MessageLayout {
                    offset,
                    len,
                    objects: None,
                })
                .collect(),
        };
        let f = py
            .allow_threads(|| -> tgm::Result<_> {
                let file: Box<dyn ByteSource> = Box::new(LocalFile::open(&path, Backend::Pread)?);
                TgmFile::from_layout(file, &layout, &Limits::default())
                    .map_err(|e| e.with_path(&path))
            })
            .py(py)?;
        Ok(Self::of(f, Some(path)))
    }

    /// Opens `url` (`spec/remote.md` §1); `storage_options` are the store's
    /// configuration keys, applied after the environment.
    #[staticmethod]
    #[pyo3(signature = (url, storage_options=Vec::new(), intact_only=false))]
    fn open_url(
        py: Python<'_>,
        url: String,
        storage_options: Vec<(String, String)>,
        intact_only: bool,
    ) -> PyResult<Self> {
        crate::remote::open_url(py, &url, storage_options, intact_only)
    }

    /// Reads a Python file object with `read` and `seek`, named `name` in
    /// errors.
    #[staticmethod]
    #[pyo3(signature = (obj, name, intact_only=false))]
    fn open_reader(
        py: Python<'_>,
        obj: Py<PyAny>,
        name: &str,
        intact_only: bool,
    ) -> PyResult<Self> {
        let r = crate::remote::PyReader::new(py, obj)?;
        let f = Self::locate(py, std::path::Path::new(name), Box::new(r), intact_only)?;
        Ok(Self::of(f, None))
    }

    /// Whether the file was opened from its catalogue (`spec/files.md` §9.3).
    fn catalogued(&self) -> bool {
        self.inner
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .catalogue()
            .is_some()
    }

    /// Locates the messages another writer appended since the last look;
    /// the damage rule of opening applies to the file as it is now.
    #[pyo3(signature = (intact_only=false))]
    fn refresh(&self, py: Python<'_>, intact_only: bool) -> PyResult<()> {
        let Some(path) = &self.path else {
            return Err(crate::convert::invalid_argument(
                py,
                "refresh looks again at local files only",
            ));
        };
        py.allow_threads(|| {
            let mut g = self.inner.write().unwrap_or_else(|p| p.into_inner());
            self.kinds().clear();
            g.locate_again().map_err(|e| e.with_path(path))?;
            check_intact(path, &g, intact_only)
        })
        .py(py)
    }

    /// `(offset, length, reason)` of the bytes after the last complete
    /// message, or None.
    fn torn_tail(&self) -> Option<(u64, u64, String)> {
        let g = self.inner.read().unwrap_or_else(|p| p.into_inner());
        g.torn_tail().map(|t| (t.offset, t.len, t.reason.clone()))
    }

    /// Kerchunk references of every message (`spec/kerchunk.md`), chunk
    /// references pointing at `target` → `(JSON text, [(message, object,
    /// variable, reason)])`; each message is read whole once.
    #[allow(clippy::type_complexity)]
    fn kerchunk_refs(
        &self,
        py: Python<'_>,
        target: &str,
    ) -> PyResult<(String, Vec<(usize, usize, String, String)>)> {
        let refs = self.read(py, |f| tgm::kerchunk::refs_of_file(f, target))?;
        Ok(crate::kerchunk::result(&refs))
    }

    /// Reads and keeps the index of each listed message, so that later
    /// object reads cost one request each.
    fn prefetch(&self, py: Python<'_>, messages: Vec<usize>) -> PyResult<()> {
        self.read(py, |f| {
            for &m in &messages {
                f.descriptors(m)?;
            }
            Ok(())
        })
    }

    /// File size in bytes when last located.
    fn size(&self) -> u64 {
        self.inner.read().unwrap_or_else(|p| p.into_inner()).size()
    }

    /// Number of complete messages.
    fn count(&self) -> usize {
        self.inner
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .num_messages()
    }

    /// `[(offset, length)]` of each complete message.
    fn spans(&self) -> Vec<(u64, u64)> {
        let g = self.inner.read().unwrap_or_else(|p| p.into_inner());
        g.spans().iter().map(|s| (s.offset, s.len)).collect()
    }

    /// `(offset, length)` of message `m`.
    fn span(&self, py: Python<'_>, m: usize) -> PyResult<(u64, u64)> {
        self.read(py, |f| {
            let s = f.spans().get(m).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "message index {m} out of range (the file has {})",
                    f.num_messages()
                ))
            })?;
            Ok((s.offset, s.len))
        })
    }

    /// `[(offset, length, reason, truncated)]` of the bytes outside
    /// complete messages.
    fn damage(&self) -> Vec<(u64, u64, String, bool)> {
        let g = self.inner.read().unwrap_or_else(|p| p.into_inner());
        damage_rows(&*g)
    }

    /// The bytes of message `m`.
    fn message_bytes(&self, py: Python<'_>, m: usize) -> PyResult<Py<PyBytes>> {
        let b = self.read(py, |f| {
            f.message_bytes(m).map(tgm::file::MessageBytes::into_owned)
        })?;
        Ok(PyBytes::new(py, &b).unbind())
    }

    /// Message `m` decoded whole → `(metadata dict, [(descriptor dict,
    /// uint8 array)])`; error offsets are absolute in the file.
    #[pyo3(signature = (m, native_byte_order=true, threads=0, restore_non_finite=true, verify_hash=false))]
    fn decode_message(
        &self,
        py: Python<'_>,
        m: usize,
        native_byte_order: bool,
        threads: usize,
        restore_non_finite: bool,
        verify_hash: bool,
    ) -> PyResult<DecodedPy> {
        let opts = decode_options(native_byte_order, threads, restore_non_finite, verify_hash);
        let d = self.read(py, |f| {
            let bytes = f.message_bytes(m)?;
            let at = f.spans()[m].offset;
            tgm::decode(&bytes, &opts).map_err(|e| e.rebase(at).in_message(m))
        })?;
        message_to_py(py, d)
    }

    /// The metadata of message `m` (kept parsed for the last few messages).
    #[pyo3(signature = (m, verify_hash=false))]
    fn metadata(&self, py: Python<'_>, m: usize, verify_hash: bool) -> PyResult<PyObject> {
        let opts = DecodeOptions::default().verify(verify_policy(verify_hash));
        let meta = self.read(py, |f| f.shared_metadata(m, &opts))?;
        metadata_to_py(py, &meta)
    }

    /// The metadata of message `m`, parsed and its digest checked now
    /// (kept parsed for the last few messages), converted to a dict only
    /// when asked: reading every object of a large message does not
    /// convert its metadata once per object.
    #[pyo3(signature = (m, verify_hash=false))]
    fn metadata_handle(
        &self,
        py: Python<'_>,
        m: usize,
        verify_hash: bool,
    ) -> PyResult<NativeMetadata> {
        let opts = DecodeOptions::default().verify(verify_policy(verify_hash));
        let meta = self.read(py, |f| f.shared_metadata(m, &opts))?;
        Ok(NativeMetadata(meta))
    }

    /// Metadata and descriptors of message `m`, no payload read.
    fn descriptors(&self, py: Python<'_>, m: usize) -> PyResult<(PyObject, Vec<PyObject>)> {
        let opts = DecodeOptions::default();
        let (meta, descs) = self.read(py, |f| {
            Ok((f.shared_metadata(m, &opts)?, f.descriptors(m)?))
        })?;
        let descs = descs
            .iter()
            .map(|d| descriptor_to_py(py, d))
            .collect::<PyResult<Vec<_>>>()?;
        Ok((metadata_to_py(py, &meta)?, descs))
    }

    /// Number of objects of message `m`.
    fn object_count(&self, py: Python<'_>, m: usize) -> PyResult<usize> {
        self.read(py, |f| f.num_objects(m))
    }

    /// Object `o` of message `m` → `(descriptor dict, uint8 array, start,
    /// end)`: the elements are `array[start:end]` of a buffer the array
    /// owns (the object's frame, read once, when its pipeline leaves the
    /// bytes as stored).
    #[pyo3(signature = (m, o, native_byte_order=true, threads=0, restore_non_finite=true, verify_hash=false))]
    #[allow(clippy::too_many_arguments)]
    fn decode_object(
        &self,
        py: Python<'_>,
        m: usize,
        o: usize,
        native_byte_order: bool,
        threads: usize,
        restore_non_finite: bool,
        verify_hash: bool,
    ) -> PyResult<(PyObject, PyObject, usize, usize)> {
        let opts = decode_options(native_byte_order, threads, restore_non_finite, verify_hash);
        let b = self.read(py, |f| f.decode_object_buffer(m, o, &opts))?;
        let desc = descriptor_to_py(py, &b.descriptor)?;
        Ok((desc, array_of(py, b.data), b.range.start, b.range.end))
    }

    /// Element ranges `(first, count)` of object `o` of message `m`
    /// (`spec/pipeline.md` §7) → `(dtype, byte order, [uint8 array])`
    /// ([`RangesPy`]).
    #[pyo3(signature = (m, o, ranges, native_byte_order=true, threads=0, restore_non_finite=true))]
    #[allow(clippy::too_many_arguments)]
    fn decode_range(
        &self,
        py: Python<'_>,
        m: usize,
        o: usize,
        ranges: ElementRanges,
        native_byte_order: bool,
        threads: usize,
        restore_non_finite: bool,
    ) -> PyResult<RangesPy> {
        let opts = decode_options(native_byte_order, threads, restore_non_finite, false);
        let known = self.kinds().get(&(m, o)).copied();
        let (kind, parts) = self.read(py, |f| {
            let parts = f.decode_range(m, o, &ranges.0, &opts)?;
            let kind = match known {
                Some(k) => k,
                None => element_kind(&f.descriptor(m, o)?),
            };
            Ok((kind, parts))
        })?;
        self.kinds().insert((m, o), kind);
        Ok(ranges_to_py(py, kind, parts))
    }
}
