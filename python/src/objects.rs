//! Object counts for Python-style indexing (negative indexes count from
//! the end, `spec/format.md` §12.1 for how a message is reached).

use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;

use tgm::decode::Message;
use tgm::Limits;

use crate::convert::IntoPyResult;
use crate::core::bytes_of;

/// Number of data objects in the first message of `buf`.
#[pyfunction]
pub fn object_count(py: Python<'_>, buf: PyBuffer<u8>) -> PyResult<usize> {
    let bytes = bytes_of(py, &buf)?;
    py.allow_threads(|| Message::parse_with(bytes, 0, &Limits::default()).map(|m| m.num_objects()))
        .py(py)
}
