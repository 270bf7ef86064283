//! Conversions between Python objects and the tgm library's value types:
//! CBOR values (`spec/format.md` §4), message metadata (§7), object
//! descriptors (§6) and errors (§9). Every use of those library types outside
//! [`crate::core`] is here.

use std::collections::BTreeMap;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use tgm::cbor::Value;
use tgm::{ByteOrder, Dtype, Error, ErrorKind, GlobalMetadata, Map, ObjectDescriptor};

/// Deepest nesting of lists and dicts accepted from Python; deeper (or
/// self-referencing) structures are refused instead of recursing without end.
const MAX_DEPTH: usize = 64;

/// Python module holding the exception classes (`tgm/_errors.py`).
const ERRORS_MODULE: &str = "tgm._errors";

/// The Python exception class for an error kind.
fn class_name(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Truncated
        | ErrorKind::BadMagic
        | ErrorKind::UnsupportedVersion(_)
        | ErrorKind::Framing => "FramingError",
        ErrorKind::Cbor | ErrorKind::Metadata => "MetadataError",
        ErrorKind::UnsupportedCodec => "UnsupportedCodecError",
        ErrorKind::Codec => "CodecError",
        ErrorKind::LimitExceeded { .. } => "LimitExceededError",
        ErrorKind::HashMismatch { .. } => "HashMismatchError",
        ErrorKind::MissingHash => "MissingHashError",
        ErrorKind::InvalidInput | ErrorKind::NonFinite => "EncodeError",
        ErrorKind::InvalidArgument => "InvalidArgumentError",
        ErrorKind::RangeNotSupported => "RangeNotSupportedError",
        ErrorKind::Io
        | ErrorKind::NotFound
        | ErrorKind::Forbidden
        | ErrorKind::ObjectChanged
        | ErrorKind::Remote
        | ErrorKind::AlreadyExists => "TensogramIOError",
        _ => "TensogramError",
    }
}

/// Short machine-readable name of an error kind (the exception's `kind`).
fn kind_name(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Truncated => "truncated",
        ErrorKind::BadMagic => "bad_magic",
        ErrorKind::UnsupportedVersion(_) => "unsupported_version",
        ErrorKind::Framing => "framing",
        ErrorKind::Cbor => "cbor",
        ErrorKind::Metadata => "metadata",
        ErrorKind::UnsupportedCodec => "unsupported_codec",
        ErrorKind::Codec => "codec",
        ErrorKind::LimitExceeded { .. } => "limit_exceeded",
        ErrorKind::HashMismatch { .. } => "hash_mismatch",
        ErrorKind::MissingHash => "missing_hash",
        ErrorKind::InvalidInput => "invalid_input",
        ErrorKind::NonFinite => "non_finite",
        ErrorKind::InvalidArgument => "invalid_argument",
        ErrorKind::RangeNotSupported => "range_not_supported",
        ErrorKind::Io => "io",
        ErrorKind::NotFound => "not_found",
        ErrorKind::Forbidden => "forbidden",
        ErrorKind::ObjectChanged => "object_changed",
        ErrorKind::Remote => "remote",
        ErrorKind::AlreadyExists => "already_exists",
        _ => "other",
    }
}

/// The category the reference package's messages start with (its error
/// enum's variant name), kept so that code matching on it keeps working.
fn reference_category(kind: &ErrorKind) -> Option<&'static str> {
    Some(match kind {
        ErrorKind::Truncated
        | ErrorKind::BadMagic
        | ErrorKind::UnsupportedVersion(_)
        | ErrorKind::Framing
        | ErrorKind::LimitExceeded { .. } => "FramingError",
        ErrorKind::Cbor | ErrorKind::Metadata => "MetadataError",
        ErrorKind::InvalidInput | ErrorKind::NonFinite => "EncodingError",
        ErrorKind::Codec | ErrorKind::UnsupportedCodec => "CompressionError",
        ErrorKind::InvalidArgument | ErrorKind::RangeNotSupported => "ObjectError",
        _ => return None,
    })
}

/// Turns a library error into an instance of the matching `tgm._errors`
/// class, carrying `kind`, `detail`, `offset`, `object_index` and
/// `message_index` attributes.
pub fn py_err(py: Python<'_>, e: Error) -> PyErr {
    match build_err(py, &e) {
        Ok(err) => err,
        Err(import_failure) => import_failure,
    }
}

fn build_err(py: Python<'_>, e: &Error) -> PyResult<PyErr> {
    let module = py.import(ERRORS_MODULE)?;
    let cls = module.getattr(class_name(e.kind()))?;
    let text = match reference_category(e.kind()) {
        Some(category) => format!("{category}: {e}"),
        None => e.to_string(),
    };
    let inst = cls.call1((text,))?;
    inst.setattr("kind", kind_name(e.kind()))?;
    inst.setattr("detail", e.detail())?;
    inst.setattr("offset", e.offset())?;
    inst.setattr("object_index", e.object_index())?;
    inst.setattr("message_index", e.message_index())?;
    if let ErrorKind::HashMismatch { stored, computed } = e.kind() {
        // The reference's names: the digest the frame promises, the one found.
        inst.setattr("expected", tgm::hash::to_hex(*stored))?;
        inst.setattr("actual", tgm::hash::to_hex(*computed))?;
    }
    Ok(PyErr::from_value(inst))
}

/// Shorthand for `map_err(|e| py_err(py, e))`.
pub trait IntoPyResult<T> {
    /// Converts a library result into a Python result.
    fn py(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for tgm::Result<T> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| py_err(py, e))
    }
}

/// A library error of kind `InvalidArgument`, as a Python exception.
pub fn invalid_argument(py: Python<'_>, detail: impl Into<String>) -> PyErr {
    py_err(py, Error::invalid_argument(detail))
}

/// A CBOR value as a Python object: maps become dicts, arrays lists, tags
/// their content.
pub fn value_to_py(py: Python<'_>, v: &Value) -> PyResult<PyObject> {
    Ok(match v {
        Value::Uint(u) => u.into_pyobject(py)?.into_any().unbind(),
        Value::Nint(n) => {
            // -1 - n, which may lie below i64::MIN.
            let as_i128 = -1i128 - i128::from(*n);
            as_i128.into_pyobject(py)?.into_any().unbind()
        }
        Value::Bytes(b) => PyBytes::new(py, b).into_any().unbind(),
        Value::Text(t) => PyString::new(py, t).into_any().unbind(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_py(py, item)?)?;
            }
            list.into_any().unbind()
        }
        Value::Map(entries) => {
            let d = PyDict::new(py);
            for (k, val) in entries {
                d.set_item(key_to_py(py, k)?, value_to_py(py, val)?)?;
            }
            d.into_any().unbind()
        }
        Value::Tag(_, inner) => value_to_py(py, inner)?,
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any().unbind(),
        Value::Null | Value::Undefined => py.None(),
        Value::Float(f) => PyFloat::new(py, *f).into_any().unbind(),
        Value::Simple(s) => s.into_pyobject(py)?.into_any().unbind(),
    })
}

/// A map key as a hashable Python object; keys that would be unhashable
/// (arrays, maps) become their JSON text.
fn key_to_py(py: Python<'_>, k: &Value) -> PyResult<PyObject> {
    match k {
        Value::Array(_) | Value::Map(_) => Ok(PyString::new(py, &k.to_json()).into_any().unbind()),
        Value::Tag(_, inner) => key_to_py(py, inner),
        _ => value_to_py(py, k),
    }
}

/// A text-keyed map as a Python dict.
pub fn map_to_py(py: Python<'_>, m: &Map) -> PyResult<PyObject> {
    let d = PyDict::new(py);
    for (k, v) in m {
        d.set_item(k, value_to_py(py, v)?)?;
    }
    Ok(d.into_any().unbind())
}

/// Where a value lies in the caller's metadata, for errors: rendered
/// (`base[0].mars.date`) only when a value is refused.
#[derive(Clone, Copy)]
pub struct KeyPath<'a> {
    parent: Option<&'a KeyPath<'a>>,
    step: Step<'a>,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Item(usize),
}

impl<'a> KeyPath<'a> {
    /// The top-level key `key`.
    pub fn root(key: &'a str) -> Self {
        KeyPath {
            parent: None,
            step: Step::Key(key),
        }
    }

    /// Entry `i` of the list at this path.
    pub fn item(&'a self, i: usize) -> Self {
        KeyPath {
            parent: Some(self),
            step: Step::Item(i),
        }
    }

    /// Key `key` of the map at this path.
    pub fn key(&'a self, key: &'a str) -> Self {
        KeyPath {
            parent: Some(self),
            step: Step::Key(key),
        }
    }
}

impl std::fmt::Display for KeyPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(p) = self.parent {
            write!(f, "{p}")?;
        }
        match (self.step, self.parent.is_some()) {
            (Step::Key(k), true) => write!(f, ".{k}"),
            (Step::Key(k), false) => write!(f, "{k}"),
            (Step::Item(i), _) => write!(f, "[{i}]"),
        }
    }
}

/// A Python object as a CBOR value. Accepts None, bool, int (up to the
/// CBOR integer range), float, str, bytes, lists/tuples and dicts, plus
/// anything with `__index__` or `__float__` and NumPy scalars and arrays
/// (their `tolist()`); a refused value's error names its key path.
pub fn py_to_value(obj: &Bound<'_, PyAny>, path: &KeyPath<'_>) -> PyResult<Value> {
    py_to_value_at(obj, 0, path)
}

fn py_to_value_at(obj: &Bound<'_, PyAny>, depth: usize, path: &KeyPath<'_>) -> PyResult<Value> {
    let py = obj.py();
    if depth > MAX_DEPTH {
        return Err(invalid_argument(
            py,
            format!("key {path}: nests deeper than {MAX_DEPTH} levels"),
        ));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return int_value(obj, path);
    }
    if let Ok(f) = obj.downcast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(Value::Text(s.to_str()?.to_string()));
    }
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(Value::Bytes(b.as_bytes().to_vec()));
    }
    if let Ok(d) = obj.downcast::<PyDict>() {
        let mut entries = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let name = k.str()?.to_string();
            let at = path.key(&name);
            entries.push((
                py_to_value_at(&k, depth + 1, &at)?,
                py_to_value_at(&v, depth + 1, &at)?,
            ));
        }
        return Ok(Value::Map(entries));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            items.push(py_to_value_at(&item?, depth + 1, &path.item(i))?);
        }
        return Ok(Value::Array(items));
    }
    if obj.hasattr("dtype")? && obj.hasattr("tolist")? {
        // NumPy scalars and arrays: their Python value or nested-list form
        // (a type with no CBOR form, such as datetime64, is refused below
        // under its Python name).
        return numpy_value(obj, depth, path);
    }
    if obj.hasattr("__index__")? {
        return int_value(&obj.call_method0("__index__")?, path);
    }
    if obj.hasattr("__float__")? && !obj.hasattr("__len__")? {
        return Ok(Value::Float(obj.call_method0("__float__")?.extract()?));
    }
    Err(PyTypeError::new_err(format!(
        "key {path}: cannot store a {} in metadata",
        obj.get_type().name()?
    )))
}

/// A NumPy scalar or array as the CBOR form of its `tolist()`; an error
/// names the key and the NumPy type that could not be stored.
fn numpy_value(obj: &Bound<'_, PyAny>, depth: usize, path: &KeyPath<'_>) -> PyResult<Value> {
    let plain = obj.call_method0("tolist")?;
    py_to_value_at(&plain, depth + 1, path).map_err(|e| {
        let what = obj
            .getattr("dtype")
            .and_then(|d| d.str())
            .map(|d| d.to_string())
            .unwrap_or_default();
        PyTypeError::new_err(format!(
            "key {path}: cannot store a NumPy {} of dtype {what} in metadata ({})",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default(),
            e.value(obj.py())
        ))
    })
}

fn int_value(obj: &Bound<'_, PyAny>, path: &KeyPath<'_>) -> PyResult<Value> {
    if let Ok(u) = obj.extract::<u64>() {
        return Ok(Value::Uint(u));
    }
    let too_large = || {
        invalid_argument(
            obj.py(),
            format!("key {path}: integer does not fit the CBOR integer range"),
        )
    };
    let i: i128 = obj.extract().map_err(|_| too_large())?;
    // CBOR negative integers are -1 - n with n in u64.
    let n = u64::try_from(-1 - i).map_err(|_| too_large())?;
    Ok(Value::Nint(n))
}

/// A Python dict with text keys as a text-keyed map; `path` names it in errors.
pub fn py_to_map(obj: &Bound<'_, PyAny>, path: &KeyPath<'_>) -> PyResult<Map> {
    let py = obj.py();
    let d = obj
        .downcast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("metadata entries must be dicts"))?;
    let mut m = BTreeMap::new();
    for (k, v) in d.iter() {
        let key: String = k
            .extract()
            .map_err(|_| invalid_argument(py, "metadata keys must be str"))?;
        let value = py_to_value(&v, &path.key(&key))?;
        m.insert(key, value);
    }
    Ok(m)
}

/// Metadata as `{"base": [dict], "reserved": dict, "extra": dict}`.
pub fn metadata_to_py(py: Python<'_>, m: &GlobalMetadata) -> PyResult<PyObject> {
    let d = PyDict::new(py);
    let base = PyList::empty(py);
    for e in &m.base {
        base.append(map_to_py(py, e)?)?;
    }
    d.set_item("base", base)?;
    d.set_item("reserved", map_to_py(py, &m.reserved)?)?;
    d.set_item("extra", map_to_py(py, &m.extra)?)?;
    Ok(d.into_any().unbind())
}

/// Caller metadata from `(base: list[dict], extra: dict)`.
pub fn metadata_from_py(
    base: &Bound<'_, PyAny>,
    extra: &Bound<'_, PyAny>,
) -> PyResult<GlobalMetadata> {
    let mut entries = Vec::new();
    let base_path = KeyPath::root("base");
    for (i, e) in base.try_iter()?.enumerate() {
        entries.push(py_to_map(&e?, &base_path.item(i))?);
    }
    let mut m = GlobalMetadata::with_base(entries);
    m.extra = py_to_map(extra, &KeyPath::root("_extra_"))?;
    Ok(m)
}

/// A descriptor as a flat dict: the CBOR map of `spec/format.md` §6.
pub fn descriptor_to_py(py: Python<'_>, d: &ObjectDescriptor) -> PyResult<PyObject> {
    value_to_py(py, &d.to_value())
}

/// A descriptor from a flat dict in the reference's shape: `type` (default
/// `ntensor`), `shape`, `dtype`, optional `strides`, `byte_order`,
/// `encoding`, `filter`, `compression`; every other key is a pipeline
/// parameter, and a nested `params` dict is merged in.
pub fn descriptor_from_py(obj: &Bound<'_, PyAny>) -> PyResult<ObjectDescriptor> {
    let py = obj.py();
    let mut map = py_to_map(obj, &KeyPath::root("descriptor"))?;
    let shape_v = map
        .remove("shape")
        .ok_or_else(|| invalid_argument(py, "descriptor lacks \"shape\""))?;
    let shape = uint_list(py, &shape_v, "shape")?;
    let dtype_v = map
        .remove("dtype")
        .ok_or_else(|| invalid_argument(py, "descriptor lacks \"dtype\""))?;
    let name = dtype_v
        .as_text()
        .ok_or_else(|| invalid_argument(py, "descriptor \"dtype\" must be a str"))?;
    let dtype = Dtype::from_name(name)
        .ok_or_else(|| invalid_argument(py, format!("unknown dtype {name:?}")))?;
    let mut d = ObjectDescriptor::new(dtype, shape);
    if let Some(v) = map.remove("strides") {
        d.strides = uint_list(py, &v, "strides")?;
    }
    if let Some(v) = map.remove("byte_order") {
        let name = text(py, &v, "byte_order")?;
        d.byte_order = ByteOrder::from_name(&name)
            .ok_or_else(|| invalid_argument(py, format!("unknown byte_order {name:?}")))?;
    }
    if let Some(v) = map.remove("type") {
        d.obj_type = text(py, &v, "type")?;
    }
    let mut stage = |key: &str| -> PyResult<String> {
        match map.remove(key) {
            Some(v) => text(py, &v, key),
            None => Ok("none".to_string()),
        }
    };
    let encoding = stage("encoding")?;
    let filter = stage("filter")?;
    let compression = stage("compression")?;
    if let Some(v) = map.remove("ndim") {
        if v.as_u64() != Some(d.shape.len() as u64) {
            return Err(invalid_argument(
                py,
                "descriptor \"ndim\" does not match \"shape\"",
            ));
        }
    }
    let mut params = tgm::Map::new();
    if let Some(v) = map.remove("params") {
        let entries = v
            .as_map()
            .ok_or_else(|| invalid_argument(py, "descriptor \"params\" must be a dict"))?;
        for (k, val) in entries {
            let key = k
                .as_text()
                .ok_or_else(|| invalid_argument(py, "params keys must be str"))?;
            params.insert(key.to_string(), val.clone());
        }
    }
    if map.remove("masks").is_some() {
        return Err(invalid_argument(
            py,
            "\"masks\" is written by the encoder; pass allow_nan/allow_inf instead",
        ));
    }
    params.extend(map);
    let d = d
        .with_raw_pipeline(&encoding, &filter, &compression, params)
        .py(py)?;
    d.validate_for_encode().py(py)?;
    Ok(d)
}

fn text(py: Python<'_>, v: &Value, key: &str) -> PyResult<String> {
    v.as_text()
        .map(str::to_string)
        .ok_or_else(|| invalid_argument(py, format!("descriptor {key:?} must be a str")))
}

fn uint_list(py: Python<'_>, v: &Value, key: &str) -> PyResult<Vec<u64>> {
    let items = v
        .as_array()
        .ok_or_else(|| invalid_argument(py, format!("descriptor {key:?} must be a list")))?;
    items
        .iter()
        .map(|x| {
            x.as_u64().ok_or_else(|| {
                invalid_argument(
                    py,
                    format!("descriptor {key:?} entries must be non-negative ints"),
                )
            })
        })
        .collect()
}
