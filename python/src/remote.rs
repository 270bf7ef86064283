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

use tgm::file::ByteSource;
use tgm::{Error, ErrorKind};

use crate::file::NativeFile;

/// A Python object with `read(n)` and `seek(offset[, whence])` as a
/// [`ByteSource`]. Each read takes the GIL and seeks before reading, under
/// one lock, so concurrent readers never interleave a seek and a read.
pub(crate) struct PyReader {
    obj: Mutex<Py<PyAny>>,
    len: u64,
}

impl PyReader {
    /// The object's length, from `size` when it has one (fsspec files),
    /// else from seeking to its end.
    pub(crate) fn new(py: Python<'_>, obj: Py<PyAny>) -> PyResult<Self> {
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

/// Opens `url` through the `remote` feature (`spec/remote.md` §1).
#[cfg(feature = "remote")]
pub(crate) fn open_url(
    py: Python<'_>,
    url: &str,
    storage_options: Vec<(String, String)>,
    intact_only: bool,
) -> PyResult<NativeFile> {
    use crate::convert::IntoPyResult;
    use tgm::remote::{RemoteOptions, RemoteSource};
    let opts = RemoteOptions::default().with_storage_options(storage_options);
    let src = py.allow_threads(|| RemoteSource::open(url, &opts)).py(py)?;
    let f = NativeFile::locate(py, std::path::Path::new(url), Box::new(src), intact_only)?;
    Ok(NativeFile::of(f, None))
}

#[cfg(not(feature = "remote"))]
pub(crate) fn open_url(
    py: Python<'_>,
    url: &str,
    _storage_options: Vec<(String, String)>,
    _intact_only: bool,
) -> PyResult<NativeFile> {
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
