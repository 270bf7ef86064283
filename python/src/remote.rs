//! Files that are not local paths: URLs (`http(s)://`, `s3://`, `gs://`,
//! `az://`, through the library's `remote` feature, `spec/remote.md`) and
//! Python file-like objects (anything with `read` and `seek`, such as the
//! files `fsspec.open` gives). Both are read through
//! [`tgm::file::TgmFile`], so an object costs a ranged read of its frame,
//! not of the file.

use std::ops::Range;
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyBytes;

use tgm::file::{ByteSource, TgmFile};
use tgm::{DecodeOptions, Error, ErrorKind, Limits};

use crate::convert::{descriptor_to_py, metadata_to_py, IntoPyResult};
use crate::core::{array_of, verify_policy};
use crate::file::{check_intact, damage_rows};
use crate::ranges::{element_kind, ranges_to_py, ElementRanges, RangesPy};

/// A Python object with `read(n)` and `seek(offset[, whence])` as a
/// [`ByteSource`]. Each read takes the GIL and seeks before reading, under
/// one lock, so concurrent readers never interleave a seek and a read.
struct PyReader {
    obj: Mutex<Py<PyAny>>,
    len: u64,
}

impl PyReader {
    /// The object's length, from `size` when it has one (fsspec files),
    /// else from seeking to its end.
    fn new(py: Python<'_>, obj: Py<PyAny>) -> PyResult<Self> {
        let b = obj.bind(py);
        let len: u64 = match b.getattr("size") {
            Ok(s) if !s.is_callable() && !s.is_none() => s.extract()?,
            _ => b.call_method1("seek", (0, 2))?.extract()?,
        };
        Ok(PyReader {
            obj: Mutex::new(obj),
            len,
        })
    }

    fn read_into(&self, offset: u64, buf: &mut [u8]) -> PyResult<()> {
        Python::with_gil(|py| {
            // Waiting for the lock detaches from Python: the holder may be
            // inside `read`, which can release the GIL and need it back.
            let guard = self
                .obj
                .lock_py_attached(py)
                .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("reader lock poisoned"))?;
            let f = guard.bind(py);
            f.call_method1("seek", (offset,))?;
            let mut filled = 0;
            while filled < buf.len() {
                let chunk = f.call_method1("read", (buf.len() - filled,))?;
                let chunk = chunk.downcast::<PyBytes>()?.as_bytes();
                if chunk.is_empty() {
                    break;
                }
                let n = chunk.len().min(buf.len() - filled);
                buf[filled..filled + n].copy_from_slice(&chunk[..n]);
                filled += n;
            }
            if filled < buf.len() {
                return Err(pyo3::exceptions::PyEOFError::new_err(format!(
                    "{} bytes at offset {offset}, {filled} read",
                    buf.len()
                )));
            }
            Ok(())
        })
    }
}

impl ByteSource for PyReader {
    fn len(&self) -> tgm::Result<u64> {
        Ok(self.len)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> tgm::Result<()> {
        let end = offset.saturating_add(buf.len() as u64);
        if end > self.len {
            return Err(Error::truncated(format!(
                "bytes {offset}..{end} lie beyond the end of the file object ({} bytes)",
                self.len
            )));
        }
        // A Python exception fails the source as a whole (kind `Remote`),
        // so that opening reports it instead of taking it for damage.
        self.read_into(offset, buf)
            .map_err(|e| Error::new(ErrorKind::Remote, format!("reading the file object: {e}")))
    }

    fn read_bytes(&self, range: Range<u64>) -> tgm::Result<bytes::Bytes> {
        let len = usize::try_from(range.end.saturating_sub(range.start))
            .map_err(|_| Error::invalid_argument("range too long"))?;
        let mut v = vec![0u8; len];
        self.read_at(range.start, &mut v)?;
        Ok(bytes::Bytes::from(v))
    }
}

/// An opened remote file or file object: messages located, none decoded.
#[pyclass(frozen, module = "tgm._native")]
pub struct NativeSourceFile {
    pub(crate) file: TgmFile<Box<dyn ByteSource>>,
}

pub(crate) fn decode_options(native: bool, threads: usize, verify_hash: bool) -> DecodeOptions {
    DecodeOptions::default()
        .native_byte_order(native)
        .threads(threads)
        .verify(verify_policy(verify_hash))
}

impl NativeSourceFile {
    /// Locates the messages of `src`, named `name` in errors; bytes outside
    /// complete messages are refused unless `intact_only`, as for a local
    /// file (`spec/files.md` §2).
    fn locate(
        py: Python<'_>,
        name: &str,
        src: Box<dyn ByteSource>,
        intact_only: bool,
    ) -> PyResult<Self> {
        let file = py
            .allow_threads(|| -> tgm::Result<_> {
                let f = TgmFile::from_source(src, &Limits::default())?;
                check_intact(std::path::Path::new(name), &f, intact_only)?;
                Ok(f)
            })
            .py(py)?;
        Ok(NativeSourceFile { file })
    }

    fn message(&self, py: Python<'_>, m: usize) -> PyResult<usize> {
        let n = self.file.num_messages();
        if m >= n {
            return Err(crate::convert::invalid_argument(
                py,
                format!("message index {m} out of range for file with {n} messages"),
            ));
        }
        Ok(m)
    }
}

#[pymethods]
impl NativeSourceFile {
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
        open_url(py, &url, storage_options, intact_only)
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
        let r = PyReader::new(py, obj)?;
        Self::locate(py, name, Box::new(r), intact_only)
    }

    /// `[(offset, length, reason, truncated)]` of the bytes outside
    /// complete messages (empty unless opened with `intact_only`).
    fn damage(&self) -> Vec<(u64, u64, String, bool)> {
        damage_rows(&self.file)
    }

    /// Number of complete messages.
    fn message_count(&self) -> usize {
        self.file.num_messages()
    }

    /// Length of the source in bytes.
    fn size(&self) -> u64 {
        self.file.size()
    }

    /// `(offset, length)` of the bytes after the last complete message, or None.
    fn torn_tail(&self) -> Option<(u64, u64, String)> {
        self.file
            .torn_tail()
            .map(|t| (t.offset, t.len, t.reason.clone()))
    }

    /// The bytes of message `m`.
    fn message_bytes(&self, py: Python<'_>, m: usize) -> PyResult<Py<PyBytes>> {
        let m = self.message(py, m)?;
        let b = py.allow_threads(|| self.file.message_bytes(m)).py(py)?;
        Ok(PyBytes::new(py, &b).unbind())
    }

    /// Metadata of message `m` (its frame digest checked when present).
    fn metadata(&self, py: Python<'_>, m: usize) -> PyResult<PyObject> {
        let m = self.message(py, m)?;
        let meta = py
            .allow_threads(|| self.file.metadata(m, &DecodeOptions::default()))
            .py(py)?;
        metadata_to_py(py, &meta)
    }

    /// Metadata and descriptors of message `m`, no payload read.
    fn descriptors(&self, py: Python<'_>, m: usize) -> PyResult<(PyObject, Vec<PyObject>)> {
        let m = self.message(py, m)?;
        let (meta, descs) = py
            .allow_threads(|| -> tgm::Result<_> {
                let meta = self.file.metadata(m, &DecodeOptions::default())?;
                Ok((meta, self.file.descriptors(m)?))
            })
            .py(py)?;
        let descs = descs
            .iter()
            .map(|d| descriptor_to_py(py, d))
            .collect::<PyResult<Vec<_>>>()?;
        Ok((metadata_to_py(py, &meta)?, descs))
    }

    /// Object `o` of message `m`, reading its frame only once the message's
    /// index is known → `(metadata dict, descriptor dict, uint8 array)`.
    #[pyo3(signature = (m, o, native_byte_order=true, threads=0, verify_hash=false))]
    fn decode_object(
        &self,
        py: Python<'_>,
        m: usize,
        o: usize,
        native_byte_order: bool,
        threads: usize,
        verify_hash: bool,
    ) -> PyResult<(PyObject, PyObject, PyObject)> {
        let m = self.message(py, m)?;
        let opts = decode_options(native_byte_order, threads, verify_hash);
        let (meta, obj) = py
            .allow_threads(|| -> tgm::Result<_> {
                let meta = self.file.metadata(m, &opts)?;
                Ok((meta, self.file.decode_object(m, o, &opts)?))
            })
            .py(py)?;
        Ok((
            metadata_to_py(py, &meta)?,
            descriptor_to_py(py, &obj.descriptor)?,
            array_of(py, obj.data),
        ))
    }

    /// Element ranges `(first, count)` of object `o` of message `m`
    /// (`spec/remote.md` §4) → `(dtype, byte order, [uint8 array])`
    /// ([`RangesPy`]).
    #[pyo3(signature = (m, o, ranges, native_byte_order=true, threads=0))]
    fn decode_range(
        &self,
        py: Python<'_>,
        m: usize,
        o: usize,
        ranges: ElementRanges,
        native_byte_order: bool,
        threads: usize,
    ) -> PyResult<RangesPy> {
        let m = self.message(py, m)?;
        let opts = decode_options(native_byte_order, threads, false);
        let (kind, parts) = py
            .allow_threads(|| -> tgm::Result<_> {
                let descs = self.file.descriptors(m)?;
                let kind = descs.get(o).map(element_kind).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "object index {o} out of range for a message of {} objects",
                        descs.len()
                    ))
                })?;
                Ok((kind, self.file.decode_range(m, o, &ranges.0, &opts)?))
            })
            .py(py)?;
        Ok(ranges_to_py(py, kind, parts))
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
        let refs = py
            .allow_threads(|| tgm::kerchunk::refs_of_file(&self.file, target))
            .py(py)?;
        Ok(crate::kerchunk::result(&refs))
    }

    /// Reads and keeps the index of each listed message, so that later
    /// object reads cost one request each.
    fn prefetch(&self, py: Python<'_>, messages: Vec<usize>) -> PyResult<()> {
        for &m in &messages {
            self.message(py, m)?;
        }
        py.allow_threads(|| -> tgm::Result<()> {
            for &m in &messages {
                self.file.descriptors(m)?;
            }
            Ok(())
        })
        .py(py)
    }
}

#[cfg(feature = "remote")]
fn open_url(
    py: Python<'_>,
    url: &str,
    storage_options: Vec<(String, String)>,
    intact_only: bool,
) -> PyResult<NativeSourceFile> {
    use tgm::remote::{RemoteOptions, RemoteSource};
    let opts = RemoteOptions::default().with_storage_options(storage_options);
    let src = py.allow_threads(|| RemoteSource::open(url, &opts)).py(py)?;
    NativeSourceFile::locate(py, url, Box::new(src), intact_only)
}

#[cfg(not(feature = "remote"))]
fn open_url(
    py: Python<'_>,
    url: &str,
    _storage_options: Vec<(String, String)>,
    _intact_only: bool,
) -> PyResult<NativeSourceFile> {
    Err(crate::convert::invalid_argument(
        py,
        format!("{url}: this tgm was built without the `remote` feature"),
    ))
}

/// Whether this build reads URLs.
#[pyfunction]
pub fn remote_enabled() -> bool {
    cfg!(feature = "remote")
}
