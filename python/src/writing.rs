//! Appending to local files and ending them with their catalogue
//! (`spec/files.md` §9.4), for `TensogramFile.append`, `to_tgm`, the
//! converters and the Zarr store.

use std::path::PathBuf;

use pyo3::prelude::*;
use tgm::file::{AppendOptions, Appender, TornTailPolicy};

use crate::convert::IntoPyResult;
use crate::core::Input;

/// Appends one encoded message to the file at `path` through the
/// library's locking appender: a catalogue at the end of the file is cut
/// first, so the file never holds a stale one (`spec/files.md` §9.4).
#[pyfunction]
pub fn append_message(py: Python<'_>, path: PathBuf, message: &Bound<'_, PyAny>) -> PyResult<()> {
    let input = Input::of(message)?;
    let bytes = input.bytes();
    py.allow_threads(|| {
        let mut w = Appender::open(&path, &AppendOptions::default())?;
        w.append_bytes(bytes)
    })
    .py(py)
}

/// Ends the file at `path` with the catalogue of its messages, replacing
/// one at its end; returns the catalogue's length, or `None` when the file
/// is not wholly complete messages: nothing is then written, and nothing
/// cut (a torn tail is refused, not truncated).
#[pyfunction]
pub fn end_with_catalogue(py: Python<'_>, path: PathBuf) -> PyResult<Option<u64>> {
    py.allow_threads(|| -> tgm::Result<Option<u64>> {
        let whole = tgm::TgmFile::open(&path).is_ok_and(|f| f.check_intact().is_ok());
        if !whole {
            return Ok(None);
        }
        let opts = AppendOptions::default().torn_tail(TornTailPolicy::Refuse);
        Appender::open(&path, &opts)?.finish()
    })
    .py(py)
}
