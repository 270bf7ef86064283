//! Writing a new file or object front to back (`spec/remote.md` §7), for
//! `to_tgm`, the converters' outputs, `TensogramFile.create` of a URL and
//! the Zarr store: a URL (`s3://`, `gs://`, `az://`, `http(s)://`) goes
//! straight into the parts of a multipart upload, a local path into a
//! temporary sibling; either appears only when finished, ends with the
//! catalogue of its messages (`spec/files.md` §9.4), and is abandoned when
//! aborted or dropped.

use std::io::Write;
use std::sync::Mutex;

use pyo3::prelude::*;
use tgm::file::{write_error, ByteSink, CataloguingWriter, Existing};
use tgm::{Error, ErrorKind, Limits};

use crate::convert::IntoPyResult;
use crate::core::Input;

type Out = CataloguingWriter<Box<dyn ByteSink>>;

/// An output being written; `finish` completes it, `abort` (or dropping
/// it unfinished) leaves nothing at the target.
#[pyclass(frozen, name = "Sink", module = "tgm._native")]
pub struct NativeSink {
    out: Mutex<Option<Out>>,
    target: String,
}

impl NativeSink {
    /// Runs `f` on the open output; a finished or aborted one is an error.
    fn with<T>(&self, f: impl FnOnce(&mut Out) -> tgm::Result<T>) -> tgm::Result<T> {
        let mut g = self.out.lock().map_err(|_| {
            Error::new(
                ErrorKind::Io,
                format!("{}: sink lock poisoned", self.target),
            )
        })?;
        let out = g.as_mut().ok_or_else(|| {
            Error::invalid_argument(format!(
                "{}: the output is already finished or aborted",
                self.target
            ))
        })?;
        f(out)
    }
}

/// What the converters that stream their messages use of a sink.
#[cfg(any(
    feature = "grib",
    feature = "netcdf",
    feature = "nifti",
    feature = "dicom"
))]
mod streaming {
    use std::io::Write;

    use tgm::file::write_error;
    use tgm::Error;

    use super::{NativeSink, Out};

    impl NativeSink {
        /// Runs `convert` with the open output as the writer it writes its
        /// encoded messages into, one at a time, as it makes them. A write that
        /// fails is what is returned, as the sink reports it (its kind, naming
        /// the target), whatever `convert` made of it; otherwise `convert`'s
        /// result.
        pub(crate) fn write_with<T>(
            &self,
            convert: impl FnOnce(&mut dyn Write) -> T,
        ) -> tgm::Result<T> {
            self.with(|out| {
                let mut watched = FirstFailure {
                    out,
                    target: &self.target,
                    failure: None,
                };
                let result = convert(&mut watched);
                match watched.failure {
                    Some(e) => Err(e),
                    None => Ok(result),
                }
            })
        }

        /// The path or URL written, for errors.
        #[cfg(feature = "netcdf")]
        pub(crate) fn target_name(&self) -> &str {
            &self.target
        }
    }

    /// A writer that keeps the first failure of the one it wraps as the
    /// library's error naming the target, and hands the writer's caller an
    /// error of the same kind and text.
    struct FirstFailure<'a> {
        out: &'a mut Out,
        target: &'a str,
        failure: Option<Error>,
    }

    impl FirstFailure<'_> {
        fn keep(&mut self, e: std::io::Error) -> std::io::Error {
            // An interrupted write is retried by its caller, not a failure.
            if e.kind() == std::io::ErrorKind::Interrupted {
                return e;
            }
            let passed_on = std::io::Error::new(e.kind(), e.to_string());
            if self.failure.is_none() {
                self.failure = Some(write_error(self.target, e));
            }
            passed_on
        }
    }

    impl Write for FirstFailure<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.out.write(buf).map_err(|e| self.keep(e))
        }

        fn flush(&mut self) -> std::io::Result<()> {
            self.out.flush().map_err(|e| self.keep(e))
        }
    }
}

#[pymethods]
impl NativeSink {
    /// Starts writing `target`; `storage_options` configure a URL's store
    /// as for reads. An existing target is refused (`already_exists`)
    /// unless `overwrite`.
    #[new]
    #[pyo3(signature = (target, storage_options=Vec::new(), overwrite=false))]
    fn new(
        py: Python<'_>,
        target: String,
        storage_options: Vec<(String, String)>,
        overwrite: bool,
    ) -> PyResult<Self> {
        let existing = if overwrite {
            Existing::Replace
        } else {
            Existing::Refuse
        };
        let sink = py
            .allow_threads(|| open(&target, storage_options, existing))
            .py(py)?;
        Ok(NativeSink {
            out: Mutex::new(Some(CataloguingWriter::new(sink, &Limits::default()))),
            target,
        })
    }

    /// Writes bytes (a bytes-like object) at the end of the output.
    fn write(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let input = Input::of(data)?;
        let bytes = input.bytes();
        py.allow_threads(|| {
            self.with(|out| {
                out.write_all(bytes)
                    .map_err(|e| write_error(&self.target, e))
            })
        })
        .py(py)
    }

    /// Bytes the destination has acknowledged so far (parts uploaded).
    fn acknowledged(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(|out| Ok(out.get_mut().acknowledged())).py(py)
    }

    /// Ends the output with its catalogue (when it is whole messages) and
    /// makes it appear → `(bytes written, ETag or None)`. A failure leaves
    /// nothing at the target.
    fn finish(&self, py: Python<'_>) -> PyResult<(u64, Option<String>)> {
        let out = self.out.lock().ok().and_then(|mut g| g.take());
        let target = &self.target;
        py.allow_threads(|| -> tgm::Result<_> {
            let out = out.ok_or_else(|| {
                Error::invalid_argument(format!(
                    "{target}: the output is already finished or aborted"
                ))
            })?;
            let (mut sink, _) = out.finish().map_err(|e| write_error(target, e))?;
            let w = sink.finish()?;
            Ok((w.bytes, w.etag))
        })
        .py(py)
    }

    /// Abandons the output: nothing appears at the target (an upload is
    /// aborted). Nothing happens once finished.
    fn abort(&self, py: Python<'_>) {
        let out = self.out.lock().ok().and_then(|mut g| g.take());
        py.allow_threads(|| drop(out));
    }

    /// The path or URL written.
    #[getter]
    fn target(&self) -> &str {
        &self.target
    }
}

#[cfg(feature = "remote")]
pub(crate) fn open(
    target: &str,
    storage_options: Vec<(String, String)>,
    existing: Existing,
) -> tgm::Result<Box<dyn ByteSink>> {
    let opts = tgm::remote::RemoteOptions::default().with_storage_options(storage_options);
    tgm::remote::create_sink(target, &opts, existing, None)
}

#[cfg(not(feature = "remote"))]
pub(crate) fn open(
    target: &str,
    storage_options: Vec<(String, String)>,
    existing: Existing,
) -> tgm::Result<Box<dyn ByteSink>> {
    if tgm::file::is_remote_url(target) {
        return Err(Error::invalid_argument(format!(
            "{target}: this tgm was built without the `remote` feature"
        )));
    }
    if !storage_options.is_empty() {
        return Err(Error::invalid_argument(format!(
            "{target}: storage_options apply to URLs, not to local paths"
        )));
    }
    let s = tgm::file::LocalSink::create(std::path::Path::new(target), existing)?;
    Ok(Box::new(s))
}
