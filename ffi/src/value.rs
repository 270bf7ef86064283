//! The borrowed metadata value cursor (`tgm_value_t`) and its typed,
//! non-coercing accessors.

use std::ffi::c_char;

use tgm::cbor::Value;

use crate::args;
use crate::error::query;
use crate::metadata::TgmMetadata;

/// The kind of a metadata value (`tgm_value_type`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TgmValueType {
    /// CBOR null (or an absent value, for a NULL handle).
    Null,
    /// A boolean.
    Bool,
    /// An integer of either sign.
    Int,
    /// A floating-point number.
    Float,
    /// UTF-8 text.
    String,
    /// A byte string.
    Bytes,
    /// An array.
    Array,
    /// A map.
    Map,
}

/// A borrowed cursor on one value inside a metadata handle
/// (`tgm_value_t`); valid until `tgm_metadata_free`, never freed itself.
pub struct TgmValue {
    value: *const Value,
    owner: *const TgmMetadata,
}

impl TgmValue {
    /// A cursor on `value`, which lives inside `owner`.
    pub(crate) fn new(value: &Value, owner: &TgmMetadata) -> TgmValue {
        TgmValue { value, owner }
    }

    /// The value; it lives as long as its metadata handle.
    pub(crate) fn value(&self) -> &Value {
        // SAFETY: the value is owned by the (immutable, live) metadata handle.
        unsafe { &*self.value }
    }

    fn owner(&self) -> &TgmMetadata {
        // SAFETY: a cursor is only reachable while its handle is live.
        unsafe { &*self.owner }
    }

    /// A cursor on `child`, a value inside the same handle.
    fn child(&self, child: &Value) -> *const TgmValue {
        self.owner().cursor(child)
    }
}

/// `v` with any CBOR tags removed.
pub(crate) fn untagged(mut v: &Value) -> &Value {
    while let Value::Tag(_, inner) = v {
        v = inner;
    }
    v
}

/// The kind of `v`.
pub(crate) fn kind(v: &Value) -> TgmValueType {
    match untagged(v) {
        Value::Uint(_) | Value::Nint(_) => TgmValueType::Int,
        Value::Float(_) => TgmValueType::Float,
        Value::Bool(_) => TgmValueType::Bool,
        Value::Text(_) => TgmValueType::String,
        Value::Bytes(_) => TgmValueType::Bytes,
        Value::Array(_) => TgmValueType::Array,
        Value::Map(_) => TgmValueType::Map,
        _ => TgmValueType::Null,
    }
}

/// An integer value as i64, when it fits.
pub(crate) fn as_i64(v: &Value) -> Option<i64> {
    match untagged(v) {
        Value::Uint(u) => i64::try_from(*u).ok(),
        Value::Nint(n) => i64::try_from(*n).ok().map(|n| -1 - n),
        _ => None,
    }
}

/// A number as f64 (integers widened).
pub(crate) fn as_f64(v: &Value) -> Option<f64> {
    match untagged(v) {
        Value::Float(f) => Some(*f),
        Value::Uint(u) => Some(*u as f64),
        Value::Nint(n) => Some(-1.0 - *n as f64),
        _ => None,
    }
}

/// The entry for text key `key` of a map value.
pub(crate) fn map_get<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    match untagged(v) {
        Value::Map(entries) => entries
            .iter()
            .find(|(k, _)| matches!(untagged(k), Value::Text(t) if t == key))
            .map(|(_, v)| v),
        _ => None,
    }
}

fn cursor<'a>(v: *const TgmValue) -> Option<&'a TgmValue> {
    args::handle(v, "value").ok()
}

/// The kind of `v`; `TGM_VALUE_TYPE_NULL` for a NULL handle too (test the
/// pointer to tell an absent value from a stored null).
#[no_mangle]
pub extern "C" fn tgm_value_get_type(v: *const TgmValue) -> TgmValueType {
    query("tgm_value_get_type", TgmValueType::Null, || {
        cursor(v).map_or(TgmValueType::Null, |c| kind(c.value()))
    })
}

fn extract<T>(
    name: &str,
    v: *const TgmValue,
    out: *mut T,
    f: impl FnOnce(&Value) -> Option<T>,
) -> bool {
    query(name, false, || {
        let (Some(c), Ok(out)) = (cursor(v), args::out(out, "out")) else {
            return false;
        };
        match f(c.value()) {
            Some(x) => {
                *out = x;
                true
            }
            None => false,
        }
    })
}

/// Writes a boolean value to `*out` and returns true; false (no write)
/// for any other value.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_value_as_bool(v: *const TgmValue, out: *mut bool) -> bool {
    extract("tgm_value_as_bool", v, out, |v| match untagged(v) {
        Value::Bool(b) => Some(*b),
        _ => None,
    })
}

/// Writes an integer value within i64 to `*out`; floats are not truncated.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_value_as_i64(v: *const TgmValue, out: *mut i64) -> bool {
    extract("tgm_value_as_i64", v, out, as_i64)
}

/// Writes a non-negative integer value to `*out`.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_value_as_u64(v: *const TgmValue, out: *mut u64) -> bool {
    extract("tgm_value_as_u64", v, out, |v| match untagged(v) {
        Value::Uint(u) => Some(*u),
        _ => None,
    })
}

/// Writes a float, or an integer widened to double, to `*out`.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_value_as_f64(v: *const TgmValue, out: *mut f64) -> bool {
    extract("tgm_value_as_f64", v, out, as_f64)
}

fn borrow_slice<T>(
    name: &str,
    v: *const TgmValue,
    len_out: *mut usize,
    f: impl FnOnce(&Value) -> Option<&[T]>,
) -> *const T {
    query(name, std::ptr::null(), || {
        let (Some(c), Ok(len)) = (cursor(v), args::out(len_out, "len_out")) else {
            return std::ptr::null();
        };
        match f(c.value()) {
            Some(s) => {
                *len = s.len();
                s.as_ptr()
            }
            None => std::ptr::null(),
        }
    })
}

/// A text value as UTF-8 bytes (not NUL-terminated) and their number in
/// `*len_out`; NULL for any other value.
///
/// # Safety
/// `len_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_value_as_string(
    v: *const TgmValue,
    len_out: *mut usize,
) -> *const c_char {
    borrow_slice("tgm_value_as_string", v, len_out, |v| match untagged(v) {
        Value::Text(t) => Some(t.as_bytes()),
        _ => None,
    })
    .cast()
}

/// A byte-string value and its length in `*len_out` (non-NULL even when
/// empty); NULL for any other value.
///
/// # Safety
/// `len_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_value_as_bytes(v: *const TgmValue, len_out: *mut usize) -> *const u8 {
    borrow_slice("tgm_value_as_bytes", v, len_out, |v| match untagged(v) {
        Value::Bytes(b) => Some(b.as_slice()),
        _ => None,
    })
}

fn array_of(v: &Value) -> &[Value] {
    match untagged(v) {
        Value::Array(a) => a,
        _ => &[],
    }
}

fn map_of(v: &Value) -> &[(Value, Value)] {
    match untagged(v) {
        Value::Map(m) => m,
        _ => &[],
    }
}

/// The number of elements of an array value; 0 for anything else.
#[no_mangle]
pub extern "C" fn tgm_value_array_len(v: *const TgmValue) -> usize {
    query("tgm_value_array_len", 0, || {
        cursor(v).map_or(0, |c| array_of(c.value()).len())
    })
}

/// Element `index` of an array value; NULL when out of range or not an array.
#[no_mangle]
pub extern "C" fn tgm_value_array_get(v: *const TgmValue, index: usize) -> *const TgmValue {
    query("tgm_value_array_get", std::ptr::null(), || {
        cursor(v)
            .and_then(|c| array_of(c.value()).get(index).map(|e| c.child(e)))
            .unwrap_or(std::ptr::null())
    })
}

/// The number of entries of a map value; 0 for anything else.
#[no_mangle]
pub extern "C" fn tgm_value_map_len(v: *const TgmValue) -> usize {
    query("tgm_value_map_len", 0, || {
        cursor(v).map_or(0, |c| map_of(c.value()).len())
    })
}

/// Key `index` of a map value as UTF-8 (not NUL-terminated), its length in
/// `*len_out`; NULL when out of range, not a map, or the key is not text.
///
/// # Safety
/// `len_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_value_map_key_at(
    v: *const TgmValue,
    index: usize,
    len_out: *mut usize,
) -> *const c_char {
    borrow_slice("tgm_value_map_key_at", v, len_out, |v| {
        match map_of(v).get(index).map(|(k, _)| untagged(k)) {
            Some(Value::Text(t)) => Some(t.as_bytes()),
            _ => None,
        }
    })
    .cast()
}

/// Value `index` of a map value (the order of `tgm_value_map_key_at`).
#[no_mangle]
pub extern "C" fn tgm_value_map_value_at(v: *const TgmValue, index: usize) -> *const TgmValue {
    query("tgm_value_map_value_at", std::ptr::null(), || {
        cursor(v)
            .and_then(|c| map_of(c.value()).get(index).map(|(_, e)| c.child(e)))
            .unwrap_or(std::ptr::null())
    })
}

/// The value of one (undotted) key of a map value; NULL when absent.
///
/// # Safety
/// `key` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tgm_value_map_get(
    v: *const TgmValue,
    key: *const c_char,
) -> *const TgmValue {
    query("tgm_value_map_get", std::ptr::null(), || {
        let Some(c) = cursor(v) else {
            return std::ptr::null();
        };
        // SAFETY: caller's contract.
        let Ok(key) = (unsafe { args::text(key, "key") }) else {
            return std::ptr::null();
        };
        map_get(c.value(), key).map_or(std::ptr::null(), |e| c.child(e))
    })
}
