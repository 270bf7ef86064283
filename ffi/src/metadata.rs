//! Metadata handles (`tgm_metadata_t`): `tgm_decode_metadata`, the
//! dotted-path getters, JSON export and the section views
//! (`spec/format.md` §7 for the sections, §7.1 for the lookup order, which
//! the library's `GlobalMetadata::get` decides).

use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, CString};
use std::sync::Mutex;

use tgm::cbor::Value;
use tgm::metadata::Scope;
use tgm::GlobalMetadata;

use crate::args;
use crate::error::{query, status, TgmError};
use crate::message::TGM_WIRE_VERSION;
use crate::value::{self, TgmValue};

/// Message metadata (`tgm_metadata_t`) with its sections as CBOR values,
/// and the strings and cursors handed out from it, which live until it is
/// freed (each distinct one is kept once).
pub struct TgmMetadata {
    meta: GlobalMetadata,
    base: Vec<Value>,
    extra: Value,
    reserved: Value,
    strings: Mutex<HashSet<CString>>,
    cursors: Mutex<HashMap<usize, Box<TgmValue>>>,
}

fn section(m: &tgm::Map) -> Value {
    Value::text_map(m.clone())
}

impl TgmMetadata {
    /// A handle over `meta`.
    pub(crate) fn new(meta: GlobalMetadata) -> TgmMetadata {
        TgmMetadata {
            base: meta.base.iter().map(section).collect(),
            extra: section(&meta.extra),
            reserved: section(&meta.reserved),
            meta,
            strings: Mutex::new(HashSet::new()),
            cursors: Mutex::new(HashMap::new()),
        }
    }

    /// A C string equal to `s` that lives as long as the handle.
    fn keep(&self, s: &str) -> *const c_char {
        let Ok(c) = CString::new(s) else {
            return std::ptr::null();
        };
        let mut set = self.strings.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(kept) = set.get(&c) {
            return kept.as_ptr();
        }
        let p = c.as_ptr();
        set.insert(c);
        p
    }

    /// The cursor on `v`, a value inside this handle.
    pub(crate) fn cursor(&self, v: &Value) -> *const TgmValue {
        let mut map = self.cursors.lock().unwrap_or_else(|p| p.into_inner());
        let b = map
            .entry(v as *const Value as usize)
            .or_insert_with(|| Box::new(TgmValue::new(v, self)));
        &**b as *const TgmValue
    }

    /// The value at dotted `path` in `scope` (`spec/format.md` §7.1).
    fn lookup(&self, scope: Scope, path: &str) -> Option<&Value> {
        self.meta.get(scope, path)
    }
}

/// A scalar leaf as text: strings as they are, numbers and booleans
/// formatted; `None` for containers, null and bytes.
fn as_text(v: &Value) -> Option<String> {
    match value::untagged(v) {
        Value::Text(t) => Some(t.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Float(f) => Some(f.to_string()),
        other => value::as_i64(other)
            .map(|i| i.to_string())
            .or_else(|| other.as_u64().map(|u| u.to_string())),
    }
}

fn handle<'a>(meta: *const TgmMetadata) -> Option<&'a TgmMetadata> {
    args::handle(meta, "metadata").ok()
}

/// A C string argument, or `None` when NULL or not UTF-8.
unsafe fn key_arg<'a>(key: *const c_char) -> Option<&'a str> {
    // SAFETY: caller's contract.
    unsafe { args::text(key, "key") }.ok()
}

/// Decodes only the metadata of the first message of `buf`. Free `out`
/// with `tgm_metadata_free`.
///
/// # Safety
/// `buf` is valid for `buf_len` bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tgm_decode_metadata(
    buf: *const u8,
    buf_len: usize,
    out: *mut *mut TgmMetadata,
) -> TgmError {
    status("tgm_decode_metadata", || {
        let out = args::out(out, "out")?;
        // SAFETY: caller's contract.
        let buf = unsafe { args::bytes(buf, buf_len, "buf") }?;
        let m = tgm::decode_metadata(buf, &tgm::DecodeOptions::default())?;
        *out = args::into_handle(TgmMetadata::new(m));
        Ok(())
    })
}

/// The wire version (3); 0 for a NULL handle.
#[no_mangle]
pub extern "C" fn tgm_metadata_version(meta: *const TgmMetadata) -> u64 {
    query("tgm_metadata_version", 0, || {
        handle(meta).map_or(0, |_| TGM_WIRE_VERSION)
    })
}

/// The number of per-object entries (`base`).
#[no_mangle]
pub extern "C" fn tgm_metadata_num_objects(meta: *const TgmMetadata) -> usize {
    query("tgm_metadata_num_objects", 0, || {
        handle(meta).map_or(0, |m| m.base.len())
    })
}

/// The leaf at `key` in `scope` as text; the pseudo-key `version` at
/// message level gives the wire version.
unsafe fn string_at(
    name: &str,
    meta: *const TgmMetadata,
    scope: Scope,
    key: *const c_char,
) -> *const c_char {
    query(name, std::ptr::null(), || {
        // SAFETY: caller's contract.
        let (Some(m), Some(key)) = (handle(meta), unsafe { key_arg(key) }) else {
            return std::ptr::null();
        };
        let text = match scope {
            Scope::Message if key == "version" => Some(TGM_WIRE_VERSION.to_string()),
            _ => m.lookup(scope, key).and_then(as_text),
        };
        text.map_or(std::ptr::null(), |t| m.keep(&t))
    })
}

unsafe fn lookup_with<T: Copy>(
    name: &str,
    meta: *const TgmMetadata,
    scope: Scope,
    key: *const c_char,
    default: T,
    f: impl FnOnce(&Value) -> Option<T>,
) -> T {
    query(name, default, || {
        // SAFETY: caller's contract.
        let (Some(m), Some(key)) = (handle(meta), unsafe { key_arg(key) }) else {
            return default;
        };
        m.lookup(scope, key).and_then(f).unwrap_or(default)
    })
}

/// The value at dotted `key` as text (numbers and booleans formatted),
/// looked up in the object entries in order, then `_extra_` (an
/// `extra.`/`_extra_.` prefix looks in `_extra_` only; `_reserved_` is
/// never found; `spec/format.md` §7.1); NULL when absent or not a scalar.
/// Valid until the handle is freed.
///
/// # Safety
/// `key` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tgm_metadata_get_string(
    meta: *const TgmMetadata,
    key: *const c_char,
) -> *const c_char {
    // SAFETY: forwarded contract.
    unsafe { string_at("tgm_metadata_get_string", meta, Scope::Message, key) }
}

/// The integer at dotted `key`, or `default_val`; `version` gives 3.
///
/// # Safety
/// `key` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tgm_metadata_get_int(
    meta: *const TgmMetadata,
    key: *const c_char,
    default_val: i64,
) -> i64 {
    // SAFETY: caller's contract.
    if handle(meta).is_some() && unsafe { key_arg(key) } == Some("version") {
        return TGM_WIRE_VERSION as i64;
    }
    // SAFETY: forwarded contract.
    unsafe {
        lookup_with(
            "tgm_metadata_get_int",
            meta,
            Scope::Message,
            key,
            default_val,
            value::as_i64,
        )
    }
}

/// The number at dotted `key` (integers widened), or `default_val`.
///
/// # Safety
/// `key` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tgm_metadata_get_float(
    meta: *const TgmMetadata,
    key: *const c_char,
    default_val: f64,
) -> f64 {
    // SAFETY: forwarded contract.
    unsafe {
        lookup_with(
            "tgm_metadata_get_float",
            meta,
            Scope::Message,
            key,
            default_val,
            value::as_f64,
        )
    }
}

/// [`tgm_metadata_get_string`] within object `obj_index`'s entry only
/// (no `_extra_`, `_reserved_` hidden).
///
/// # Safety
/// `key` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tgm_metadata_get_string_at(
    meta: *const TgmMetadata,
    obj_index: usize,
    key: *const c_char,
) -> *const c_char {
    // SAFETY: forwarded contract.
    unsafe {
        string_at(
            "tgm_metadata_get_string_at",
            meta,
            Scope::Object(obj_index),
            key,
        )
    }
}

/// [`tgm_metadata_get_int`] within object `obj_index`'s entry only.
///
/// # Safety
/// `key` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tgm_metadata_get_int_at(
    meta: *const TgmMetadata,
    obj_index: usize,
    key: *const c_char,
    default_val: i64,
) -> i64 {
    // SAFETY: forwarded contract.
    unsafe {
        lookup_with(
            "tgm_metadata_get_int_at",
            meta,
            Scope::Object(obj_index),
            key,
            default_val,
            value::as_i64,
        )
    }
}

/// [`tgm_metadata_get_float`] within object `obj_index`'s entry only.
///
/// # Safety
/// `key` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tgm_metadata_get_float_at(
    meta: *const TgmMetadata,
    obj_index: usize,
    key: *const c_char,
    default_val: f64,
) -> f64 {
    // SAFETY: forwarded contract.
    unsafe {
        lookup_with(
            "tgm_metadata_get_float_at",
            meta,
            Scope::Object(obj_index),
            key,
            default_val,
            value::as_f64,
        )
    }
}

/// Object `obj_index`'s whole entry (with `_reserved_`) as JSON text;
/// NULL when out of range. Valid until the handle is freed.
#[no_mangle]
pub extern "C" fn tgm_metadata_object_to_json(
    meta: *const TgmMetadata,
    obj_index: usize,
) -> *const c_char {
    query("tgm_metadata_object_to_json", std::ptr::null(), || {
        handle(meta)
            .and_then(|m| {
                m.base
                    .get(obj_index)
                    .map(|v| m.keep(&v.to_json_value().to_string()))
            })
            .unwrap_or(std::ptr::null())
    })
}

/// The whole metadata as JSON text (`base`, `_reserved_`, `_extra_`,
/// empty sections left out). Valid until the handle is freed.
#[no_mangle]
pub extern "C" fn tgm_metadata_to_json(meta: *const TgmMetadata) -> *const c_char {
    query("tgm_metadata_to_json", std::ptr::null(), || {
        handle(meta).map_or(std::ptr::null(), |m| {
            m.keep(&m.meta.to_json_value().to_string())
        })
    })
}

/// A cursor on the value at dotted `path` (message-level lookup as
/// [`tgm_metadata_get_string`], without the `version` pseudo-key); NULL
/// when absent.
///
/// # Safety
/// `path` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tgm_metadata_get(
    meta: *const TgmMetadata,
    path: *const c_char,
) -> *const TgmValue {
    query("tgm_metadata_get", std::ptr::null(), || {
        // SAFETY: caller's contract.
        let (Some(m), Some(path)) = (handle(meta), unsafe { key_arg(path) }) else {
            return std::ptr::null();
        };
        m.lookup(Scope::Message, path)
            .map_or(std::ptr::null(), |v| m.cursor(v))
    })
}

/// A cursor on the value at dotted `path` in object `obj_index`'s entry.
///
/// # Safety
/// `path` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tgm_metadata_get_at(
    meta: *const TgmMetadata,
    obj_index: usize,
    path: *const c_char,
) -> *const TgmValue {
    query("tgm_metadata_get_at", std::ptr::null(), || {
        // SAFETY: caller's contract.
        let (Some(m), Some(path)) = (handle(meta), unsafe { key_arg(path) }) else {
            return std::ptr::null();
        };
        m.lookup(Scope::Object(obj_index), path)
            .map_or(std::ptr::null(), |v| m.cursor(v))
    })
}

/// Whether message-level `path` is present (any type, null included).
///
/// # Safety
/// `path` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tgm_metadata_has(meta: *const TgmMetadata, path: *const c_char) -> bool {
    // SAFETY: forwarded contract.
    !unsafe { tgm_metadata_get(meta, path) }.is_null()
}

/// Whether `path` is present in object `obj_index`'s entry.
///
/// # Safety
/// `path` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn tgm_metadata_has_at(
    meta: *const TgmMetadata,
    obj_index: usize,
    path: *const c_char,
) -> bool {
    // SAFETY: forwarded contract.
    !unsafe { tgm_metadata_get_at(meta, obj_index, path) }.is_null()
}

/// Object `obj_index`'s entry as a map cursor, `_reserved_` included.
#[no_mangle]
pub extern "C" fn tgm_metadata_object(
    meta: *const TgmMetadata,
    obj_index: usize,
) -> *const TgmValue {
    query("tgm_metadata_object", std::ptr::null(), || {
        handle(meta)
            .and_then(|m| m.base.get(obj_index).map(|v| m.cursor(v)))
            .unwrap_or(std::ptr::null())
    })
}

/// The `_extra_` section as a map cursor (empty map when there is none).
#[no_mangle]
pub extern "C" fn tgm_metadata_extra(meta: *const TgmMetadata) -> *const TgmValue {
    query("tgm_metadata_extra", std::ptr::null(), || {
        handle(meta).map_or(std::ptr::null(), |m| m.cursor(&m.extra))
    })
}

/// The `_reserved_` section as a map cursor (empty map when there is none).
#[no_mangle]
pub extern "C" fn tgm_metadata_reserved(meta: *const TgmMetadata) -> *const TgmValue {
    query("tgm_metadata_reserved", std::ptr::null(), || {
        handle(meta).map_or(std::ptr::null(), |m| m.cursor(&m.reserved))
    })
}

/// Frees a metadata handle and every string and cursor taken from it;
/// NULL is a no-op.
///
/// # Safety
/// `meta` is NULL or came from this library and is freed once.
#[no_mangle]
pub unsafe extern "C" fn tgm_metadata_free(meta: *mut TgmMetadata) {
    // SAFETY: caller's contract.
    query("tgm_metadata_free", (), || unsafe {
        args::free_handle(meta)
    })
}
