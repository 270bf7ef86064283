//! Object counts for Python-style indexing (negative indexes count from
//! the end, `spec/format.md` §12.1 for how a message is reached).

use pyo3::prelude::*;

use tgm::decode::Message;
use tgm::Limits;

use crate::convert::IntoPyResult;
use crate::core::Input;

/// Number of data objects in the first message of `buf`.
#[pyfunction]
pub fn object_count(py: Python<'_>, buf: &Bound<'_, PyAny>) -> PyResult<usize> {
    let input = Input::of(buf)?;
    let bytes = input.bytes();
    py.allow_threads(|| Message::parse_with(bytes, 0, &Limits::default()).map(|m| m.num_objects()))
        .py(py)
}
