//! Element ranges of `decode_range` (`spec/pipeline.md` §7) between Python
//! and the library: the `[(start, count), ...]` argument, checked here in
//! one pass instead of element by element in Python, and the result shape
//! the Python layer turns into arrays.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList, PyTuple};

use tgm::{ByteOrder, Dtype, ObjectDescriptor};

use crate::convert::invalid_argument;
use crate::core::array_of;

/// The ranges argument: every item a `(start, count)` pair (a tuple, a
/// list or any iterable of two items) of non-negative integers. Floats,
/// strings and bools are refused with `TypeError` rather than truncated or
/// read as 0/1; negative values with `InvalidArgumentError`.
pub(crate) struct ElementRanges(pub(crate) Vec<(u64, u64)>);

impl<'py> FromPyObject<'py> for ElementRanges {
    fn extract_bound(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let mut out = Vec::with_capacity(obj.len().unwrap_or(0));
        for item in obj.try_iter()? {
            out.push(pair(&item?)?);
        }
        Ok(ElementRanges(out))
    }
}

/// One `(start, count)` pair.
fn pair(r: &Bound<'_, PyAny>) -> PyResult<(u64, u64)> {
    let py = r.py();
    let not_a_pair = || {
        let shown = r.repr().map_or_else(|_| "?".to_string(), |s| s.to_string());
        invalid_argument(py, format!("a range is a (start, count) pair, got {shown}"))
    };
    let (start, count) = if let Ok(t) = r.downcast::<PyTuple>() {
        if t.len() != 2 {
            return Err(not_a_pair());
        }
        (t.get_item(0)?, t.get_item(1)?)
    } else if let Ok(l) = r.downcast::<PyList>() {
        if l.len() != 2 {
            return Err(not_a_pair());
        }
        (l.get_item(0)?, l.get_item(1)?)
    } else {
        let Ok(items) = r.try_iter() else {
            return Err(not_a_pair());
        };
        let items = items.collect::<PyResult<Vec<_>>>()?;
        let [a, b]: [Bound<'_, PyAny>; 2] = items.try_into().map_err(|_| not_a_pair())?;
        (a, b)
    };
    Ok((bound(&start, "start")?, bound(&count, "count")?))
}

/// A range bound: an integer (`int` or anything with `__index__`, such as
/// NumPy integers), not a bool, not negative.
fn bound(v: &Bound<'_, PyAny>, name: &str) -> PyResult<u64> {
    let py = v.py();
    let refused = || {
        let kind = v
            .get_type()
            .name()
            .map_or_else(|_| "?".to_string(), |s| s.to_string());
        let shown = v.repr().map_or_else(|_| "?".to_string(), |s| s.to_string());
        PyTypeError::new_err(format!(
            "range {name} must be an integer, got {kind} {shown}"
        ))
    };
    if v.is_instance_of::<PyBool>() {
        return Err(refused());
    }
    let int = if v.is_instance_of::<PyInt>() {
        v.clone()
    } else if v.hasattr("__index__")? {
        v.call_method0("__index__")?
    } else {
        return Err(refused());
    };
    let int = int.downcast::<PyInt>().map_err(|_| refused())?;
    // The common case without a Python comparison; only a value outside
    // u64 is looked at again.
    if let Ok(u) = int.extract::<u64>() {
        return Ok(u);
    }
    if int.lt(0)? {
        return Err(invalid_argument(
            py,
            format!("range {name} must not be negative, got {int}"),
        ));
    }
    int.extract()
}

/// Decoded ranges as Python values: `(dtype name, stored byte order name,
/// [uint8 array])`, all the Python layer needs to view them (the whole
/// descriptor, with its szip block offsets, is not converted per call).
pub(crate) type RangesPy = (&'static str, &'static str, Vec<PyObject>);

/// The element type of an object: all [`ranges_to_py`] needs of its
/// descriptor.
pub(crate) fn element_kind(desc: &ObjectDescriptor) -> (Dtype, ByteOrder) {
    (desc.dtype, desc.byte_order)
}

/// [`RangesPy`] of the ranges decoded from an object of element type
/// `kind` ([`element_kind`]), each array owning its bytes without another
/// copy.
pub(crate) fn ranges_to_py(
    py: Python<'_>,
    (dtype, order): (Dtype, ByteOrder),
    parts: Vec<Vec<u8>>,
) -> RangesPy {
    let parts = parts.into_iter().map(|p| array_of(py, p)).collect();
    (dtype.name(), order.name(), parts)
}
