//! The library's metadata rules for the Python layer (`spec/format.md`
//! §7.1, §7.2): `Metadata` lookups answer through [`MetadataView`], and
//! the caller's dict given to the encoders is read by
//! `GlobalMetadata::from_caller` in [`caller_metadata`].

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use tgm::cbor::Value;
use tgm::metadata::Scope;
use tgm::GlobalMetadata;

use crate::convert::{
    invalid_argument, map_to_py, metadata_from_py, py_to_value, value_to_py, IntoPyResult, KeyPath,
};

/// Metadata sections held natively, for lookups by the library's rules.
#[pyclass(module = "tgm._native", name = "MetadataView", frozen)]
pub struct MetadataView(GlobalMetadata);

#[pymethods]
impl MetadataView {
    /// A view of `base` (a list of dicts) and `extra` (a dict).
    #[new]
    fn new(base: &Bound<'_, PyAny>, extra: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(MetadataView(metadata_from_py(base, extra)?))
    }

    /// The value at dotted `path`: in the message scope, or in object
    /// `obj`'s entry alone when `obj` is given; `default` when absent.
    #[pyo3(signature = (path, obj=None, default=None))]
    fn get(
        &self,
        py: Python<'_>,
        path: &str,
        obj: Option<usize>,
        default: Option<PyObject>,
    ) -> PyResult<PyObject> {
        let scope = obj.map_or(Scope::Message, Scope::Object);
        found(py, self.0.get(scope, path), default)
    }

    /// The value of the single key `key` (dots are part of it) in the
    /// message scope; `default` when absent.
    #[pyo3(signature = (key, default=None))]
    fn get_key(&self, py: Python<'_>, key: &str, default: Option<PyObject>) -> PyResult<PyObject> {
        found(py, self.0.get_segments(Scope::Message, &[key]), default)
    }

    /// The message scope's one-segment keys, in search order.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.0.keys(Scope::Message))
    }
}

fn found(py: Python<'_>, v: Option<&Value>, default: Option<PyObject>) -> PyResult<PyObject> {
    match v {
        Some(v) => value_to_py(py, v),
        None => Ok(default.unwrap_or_else(|| py.None())),
    }
}

/// `(base, extra)` of the caller's metadata dict, read by the library's
/// caller rule (`spec/format.md` §7.2). A value without a CBOR form is
/// named by where it would be stored (`base[0].a`, `_extra_.when`).
#[pyfunction]
pub fn caller_metadata<'py>(
    py: Python<'py>,
    meta: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut top = Vec::with_capacity(meta.len());
    let extra_root = KeyPath::root("_extra_");
    for (k, v) in meta.iter() {
        let key: String = k
            .extract()
            .map_err(|_| invalid_argument(py, "metadata keys must be str"))?;
        let value = match key.as_str() {
            "base" | "_extra_" | "extra" | "_reserved_" => py_to_value(&v, &KeyPath::root(&key))?,
            loose => py_to_value(&v, &extra_root.key(loose))?,
        };
        top.push((Value::Text(key), value));
    }
    let m = GlobalMetadata::from_caller(&Value::Map(top)).py(py)?;
    let base = PyList::empty(py);
    for e in &m.base {
        base.append(map_to_py(py, e)?)?;
    }
    PyTuple::new(py, [base.into_any().unbind(), map_to_py(py, &m.extra)?])
}
