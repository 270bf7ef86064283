//! The only unsafe code of the weather converters: a minimal binding to
//! ecCodes' C API (`libeccodes`), wrapped in safe owning types.
//!
//! Every call passes NUL-terminated key names, buffers sized from
//! `codes_get_size`, and checks the returned status; handles and iterators
//! are freed on drop.

// `c_long` is 32 bits on some platforms, so its conversions to i64 are kept.
#![allow(clippy::useless_conversion)]

use std::ffi::{c_char, c_int, c_long, c_ulong, c_void, CStr, CString};
use std::path::Path;
use std::ptr::NonNull;

use super::GribError;

#[repr(C)]
struct CodesHandle {
    _opaque: [u8; 0],
}
#[repr(C)]
struct CodesKeysIterator {
    _opaque: [u8; 0],
}
#[repr(C)]
struct CFile {
    _opaque: [u8; 0],
}

/// `PRODUCT_GRIB` of ecCodes' `ProductKind`.
const PRODUCT_GRIB: c_int = 1;

// "C-unwind": a failed ecCodes assertion unwinds out of these calls
// ([`super::eccodes_assertion`]).
#[link(name = "eccodes")]
extern "C-unwind" {
    fn codes_handle_new_from_file(
        c: *mut c_void,
        f: *mut CFile,
        product: c_int,
        error: *mut c_int,
    ) -> *mut CodesHandle;
    fn codes_handle_new_from_samples(c: *mut c_void, name: *const c_char) -> *mut CodesHandle;
    fn codes_handle_new_from_message_copy(
        c: *mut c_void,
        data: *const c_void,
        len: usize,
    ) -> *mut CodesHandle;
    fn codes_handle_new_from_message(
        c: *mut c_void,
        data: *const c_void,
        len: usize,
    ) -> *mut CodesHandle;
    fn codes_handle_clone(h: *const CodesHandle) -> *mut CodesHandle;
    fn codes_handle_delete(h: *mut CodesHandle) -> c_int;
    fn codes_get_message(h: *const CodesHandle, msg: *mut *const c_void, len: *mut usize) -> c_int;
    fn codes_get_size(h: *const CodesHandle, key: *const c_char, size: *mut usize) -> c_int;
    fn codes_get_length(h: *const CodesHandle, key: *const c_char, len: *mut usize) -> c_int;
    fn codes_get_long(h: *const CodesHandle, key: *const c_char, v: *mut c_long) -> c_int;
    fn codes_get_double(h: *const CodesHandle, key: *const c_char, v: *mut f64) -> c_int;
    fn codes_get_string(
        h: *const CodesHandle,
        key: *const c_char,
        buf: *mut c_char,
        len: *mut usize,
    ) -> c_int;
    fn codes_get_double_array(
        h: *const CodesHandle,
        key: *const c_char,
        v: *mut f64,
        len: *mut usize,
    ) -> c_int;
    // Exported by libeccodes (2.28 and later) though absent from its
    // header: it decodes the listed elements only, where
    // `codes_get_double_elements` decodes the whole array per call.
    fn grib_get_double_element_set(
        h: *const CodesHandle,
        key: *const c_char,
        index: *const usize,
        len: usize,
        v: *mut f64,
    ) -> c_int;
    fn codes_get_long_array(
        h: *const CodesHandle,
        key: *const c_char,
        v: *mut c_long,
        len: *mut usize,
    ) -> c_int;
    fn codes_get_native_type(h: *const CodesHandle, key: *const c_char, t: *mut c_int) -> c_int;
    fn codes_is_defined(h: *const CodesHandle, key: *const c_char) -> c_int;
    fn codes_is_missing(h: *const CodesHandle, key: *const c_char, err: *mut c_int) -> c_int;
    fn codes_set_long(h: *mut CodesHandle, key: *const c_char, v: c_long) -> c_int;
    fn codes_set_double(h: *mut CodesHandle, key: *const c_char, v: f64) -> c_int;
    fn codes_set_string(
        h: *mut CodesHandle,
        key: *const c_char,
        v: *const c_char,
        len: *mut usize,
    ) -> c_int;
    fn codes_set_double_array(
        h: *mut CodesHandle,
        key: *const c_char,
        v: *const f64,
        len: usize,
    ) -> c_int;
    fn codes_set_bytes(
        h: *mut CodesHandle,
        key: *const c_char,
        v: *const u8,
        len: *mut usize,
    ) -> c_int;
    fn codes_set_long_array(
        h: *mut CodesHandle,
        key: *const c_char,
        v: *const c_long,
        len: usize,
    ) -> c_int;
    fn codes_keys_iterator_new(
        h: *mut CodesHandle,
        flags: c_ulong,
        namespace: *const c_char,
    ) -> *mut CodesKeysIterator;
    fn codes_keys_iterator_next(it: *mut CodesKeysIterator) -> c_int;
    fn codes_keys_iterator_get_name(it: *const CodesKeysIterator) -> *const c_char;
    fn codes_keys_iterator_delete(it: *mut CodesKeysIterator) -> c_int;
    fn codes_get_error_message(code: c_int) -> *const c_char;
}

extern "C" {
    fn fopen(path: *const c_char, mode: *const c_char) -> *mut CFile;
    fn fclose(f: *mut CFile) -> c_int;
}

/// The native type ecCodes reports for a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyType {
    /// An integer.
    Long,
    /// A floating-point number.
    Double,
    /// Text.
    String,
    /// Anything else (bytes, sections, labels).
    Other,
}

/// Key-iterator filters (ecCodes `CODES_KEYS_ITERATOR_SKIP_*`).
pub mod skip {
    /// Keys with the same name as an earlier one.
    pub const DUPLICATES: u64 = 1 << 5;
    /// Function keys.
    pub const FUNCTION: u64 = 1 << 6;
}

/// An ecCodes getter of one value of a key, written through the out-pointer.
type GetFn<T> = unsafe extern "C-unwind" fn(*const CodesHandle, *const c_char, *mut T) -> c_int;

fn error_text(code: c_int) -> String {
    // SAFETY: ecCodes returns a pointer to a static NUL-terminated string
    // (or null for unknown codes).
    let p = unsafe { codes_get_error_message(code) };
    if p.is_null() {
        format!("ecCodes error {code}")
    } else {
        // SAFETY: non-null, static, NUL-terminated.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// Runs the ecCodes call `f` (`what` on `key`) and checks its status; a
/// failed assertion inside it is an error ([`super::eccodes_assertion`]).
fn call(what: &str, key: &str, f: impl FnOnce() -> c_int) -> Result<(), GribError> {
    let code = guarded(what, key, f)?;
    check(code, what, key)
}

/// `f`, an ecCodes call, with a failed assertion inside it as an error.
fn guarded<T>(what: &str, key: &str, f: impl FnOnce() -> T) -> Result<T, GribError> {
    use super::eccodes_assertion::{Failure, REFUSED};
    super::eccodes_assertion::guarded(f).map_err(|failure| match failure {
        Failure::Assertion(message) => GribError::EcCodesAssertion {
            what: what.to_string(),
            key: key.to_string(),
            message,
        },
        Failure::Refused => GribError::Invalid(format!("ecCodes: {what} {key}: {REFUSED}")),
    })
}

fn check(code: c_int, what: &str, key: &str) -> Result<(), GribError> {
    if code == 0 {
        Ok(())
    } else {
        Err(GribError::EcCodes {
            what: what.to_string(),
            key: key.to_string(),
            code,
            message: error_text(code),
        })
    }
}

/// Largest array copied out of a message, in bytes: the library's default
/// limit on one decoded object.
fn max_array_bytes() -> u64 {
    tgm::Limits::default().max_object_bytes
}

/// Refuses arrays of `n` elements of `width` bytes above [`max_array_bytes`].
fn check_array(key: &str, n: usize, width: usize) -> Result<(), GribError> {
    let bytes = (n as u64).checked_mul(width as u64);
    if bytes.is_some_and(|b| b <= max_array_bytes()) {
        Ok(())
    } else {
        Err(GribError::Invalid(format!(
            "{key} has {n} elements, more than the {} bytes allowed",
            max_array_bytes()
        )))
    }
}

fn cstr(key: &str) -> Result<CString, GribError> {
    CString::new(key).map_err(|_| GribError::Invalid(format!("key {key:?} contains NUL")))
}

/// An open file from which GRIB messages are read in order.
pub struct GribFile {
    file: NonNull<CFile>,
}

impl GribFile {
    /// Opens `path` for reading.
    pub fn open(path: &Path) -> Result<Self, GribError> {
        let p = path
            .to_str()
            .ok_or_else(|| GribError::Invalid(format!("{} is not UTF-8", path.display())))?;
        let cp = cstr(p)?;
        // SAFETY: both arguments are valid NUL-terminated strings.
        let f = unsafe { fopen(cp.as_ptr(), c"rb".as_ptr()) };
        NonNull::new(f)
            .map(|file| GribFile { file })
            .ok_or_else(|| GribError::Io(format!("cannot open {}", path.display())))
    }

    /// The next GRIB message, or `None` at the end of the file.
    pub fn next_handle(&mut self) -> Result<Option<Handle>, GribError> {
        let mut err: c_int = 0;
        // SAFETY: `file` is an open FILE*; a null context selects the default.
        let h = guarded("read message", "", || unsafe {
            codes_handle_new_from_file(
                std::ptr::null_mut(),
                self.file.as_ptr(),
                PRODUCT_GRIB,
                &mut err,
            )
        })?;
        match NonNull::new(h) {
            Some(h) => Ok(Some(Handle::owning(h))),
            None if err == 0 => Ok(None),
            None => check(err, "read message", "").map(|_| None),
        }
    }
}

impl Drop for GribFile {
    fn drop(&mut self) {
        // SAFETY: `file` came from fopen and is closed exactly once.
        unsafe { fclose(self.file.as_ptr()) };
    }
}

/// One GRIB message, owned.
pub struct Handle {
    h: NonNull<CodesHandle>,
    /// Set when a call that changes the message was abandoned by a failed
    /// ecCodes assertion ([`super::eccodes_assertion`]): the handle may
    /// point into the abandoned frames, so every later call is refused and
    /// the handle is never deleted.
    broken: std::cell::Cell<bool>,
}

impl Handle {
    fn owning(h: NonNull<CodesHandle>) -> Self {
        Handle {
            h,
            broken: std::cell::Cell::new(false),
        }
    }

    /// [`call`] on this message, `f` given its pointer; refused on a broken
    /// handle.
    fn call(
        &self,
        what: &str,
        key: &str,
        f: impl FnOnce(*mut CodesHandle) -> c_int,
    ) -> Result<(), GribError> {
        let h = self.live(what, key)?;
        call(what, key, || f(h))
    }

    /// [`Handle::call`] of a set of `key`: one abandoned by a failed
    /// assertion breaks the handle.
    fn set_call(
        &mut self,
        key: &str,
        f: impl FnOnce(*mut CodesHandle) -> c_int,
    ) -> Result<(), GribError> {
        let r = self.call("set", key, f);
        if matches!(r, Err(GribError::EcCodesAssertion { .. })) {
            self.broken.set(true);
        }
        r
    }

    /// The message's pointer, unless a failed assertion broke it.
    fn live(&self, what: &str, key: &str) -> Result<*mut CodesHandle, GribError> {
        match self.broken.get() {
            false => Ok(self.h.as_ptr()),
            true => Err(GribError::EcCodesAssertion {
                what: what.to_string(),
                key: key.to_string(),
                message: "the message was left inconsistent by an earlier failed ecCodes \
                          assertion"
                    .into(),
            }),
        }
    }

    /// A new message from the sample (template) `name`, e.g. `regular_ll_sfc_grib2`.
    pub fn from_sample(name: &str) -> Result<Self, GribError> {
        let n = cstr(name)?;
        // SAFETY: valid NUL-terminated name; null context selects the default.
        let h = guarded("read sample", name, || unsafe {
            codes_handle_new_from_samples(std::ptr::null_mut(), n.as_ptr())
        })?;
        NonNull::new(h)
            .map(Handle::owning)
            .ok_or_else(|| GribError::Invalid(format!("ecCodes has no sample {name:?}")))
    }

    /// A message parsed from `bytes` (ecCodes keeps its own copy).
    pub fn from_message(bytes: &[u8]) -> Result<Self, GribError> {
        // SAFETY: `bytes` is readable for `bytes.len()` bytes during the call;
        // ecCodes copies them and never writes through the pointer.
        let h = guarded("parse message", "", || unsafe {
            codes_handle_new_from_message_copy(
                std::ptr::null_mut(),
                bytes.as_ptr().cast(),
                bytes.len(),
            )
        })?;
        NonNull::new(h)
            .map(Handle::owning)
            .ok_or_else(|| GribError::Invalid("ecCodes cannot parse the GRIB message".into()))
    }

    /// A message parsed where `bytes` lie, without a copy: the handle
    /// borrows them and must not be changed.
    pub fn over(bytes: &[u8]) -> Result<Borrowed<'_>, GribError> {
        // SAFETY: `bytes` stays readable and unchanged for the result's
        // lifetime `'_`, which it borrows; ecCodes reads the buffer, never
        // writes or frees it (it does not own it), and the result offers no
        // setter, so nothing repacks the message in place.
        let h = guarded("parse message", "", || unsafe {
            codes_handle_new_from_message(std::ptr::null_mut(), bytes.as_ptr().cast(), bytes.len())
        })?;
        NonNull::new(h)
            .map(|h| Borrowed {
                handle: Handle::owning(h),
                _bytes: std::marker::PhantomData,
            })
            .ok_or_else(|| GribError::Invalid("ecCodes cannot parse the GRIB message".into()))
    }

    /// An independent copy of this message.
    pub fn try_clone(&self) -> Result<Self, GribError> {
        let h = self.live("copy message", "")?;
        // SAFETY: live handle; the clone is a new handle owned by the result.
        let h = guarded("copy message", "", || unsafe { codes_handle_clone(h) })?;
        NonNull::new(h)
            .map(Handle::owning)
            .ok_or_else(|| GribError::Invalid("ecCodes cannot copy the GRIB message".into()))
    }

    /// Whether `key` exists in this message (not, when ecCodes fails an
    /// assertion finding out: reading the key would fail too).
    pub fn is_defined(&self, key: &str) -> bool {
        let (Ok(k), Ok(h)) = (cstr(key), self.live("look up", key)) else {
            return false;
        };
        // SAFETY: live handle, valid key.
        guarded("look up", key, || unsafe {
            codes_is_defined(h, k.as_ptr())
        })
        .is_ok_and(|r| r != 0)
    }

    /// Whether `key` holds GRIB's "missing" value (not, when ecCodes fails
    /// an assertion finding out: reading the key fails too).
    pub fn is_missing(&self, key: &str) -> bool {
        let (Ok(k), Ok(h)) = (cstr(key), self.live("look up", key)) else {
            return false;
        };
        let mut err: c_int = 0;
        // SAFETY: live handle, valid key, valid out-pointer.
        let r = guarded("look up", key, || unsafe {
            codes_is_missing(h, k.as_ptr(), &mut err)
        });
        err == 0 && r.is_ok_and(|r| r != 0)
    }

    /// The native type of `key`.
    pub fn key_type(&self, key: &str) -> Result<KeyType, GribError> {
        Ok(
            match self.scalar(key, "get type of", codes_get_native_type)? {
                1 => KeyType::Long,
                2 => KeyType::Double,
                3 => KeyType::String,
                _ => KeyType::Other,
            },
        )
    }

    /// The number of elements of `key`.
    pub fn size(&self, key: &str) -> Result<usize, GribError> {
        self.scalar(key, "get size of", codes_get_size)
    }

    /// An integer key.
    pub fn get_long(&self, key: &str) -> Result<i64, GribError> {
        Ok(i64::from(self.scalar(key, "get", codes_get_long)?))
    }

    /// A floating-point key.
    pub fn get_double(&self, key: &str) -> Result<f64, GribError> {
        self.scalar(key, "get", codes_get_double)
    }

    /// The one value of `key` that `get` writes through its out-pointer;
    /// `what` names the call in the error.
    fn scalar<T: Default>(&self, key: &str, what: &str, get: GetFn<T>) -> Result<T, GribError> {
        let k = cstr(key)?;
        let mut v = T::default();
        // SAFETY: live handle, valid key, valid out-pointer of the type
        // `get` writes.
        self.call(what, key, |h| unsafe { get(h, k.as_ptr(), &mut v) })?;
        Ok(v)
    }

    /// A text key.
    pub fn get_string(&self, key: &str) -> Result<String, GribError> {
        let len = self.scalar(key, "get length of", codes_get_length)?;
        let k = cstr(key)?;
        let mut buf = vec![0u8; len.max(1) + 1];
        let mut n = buf.len();
        // SAFETY: `buf` holds `n` bytes; ecCodes writes at most `n` and a NUL.
        self.call("get", key, |h| unsafe {
            codes_get_string(h, k.as_ptr(), buf.as_mut_ptr().cast(), &mut n)
        })?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
    }

    /// A floating-point array key (e.g. `values`).
    pub fn get_double_array(&self, key: &str) -> Result<Vec<f64>, GribError> {
        let k = cstr(key)?;
        let mut n = self.size(key)?;
        check_array(key, n, 8)?;
        let mut v = vec![0.0f64; n];
        // SAFETY: `v` holds `n` doubles and ecCodes writes at most `n`.
        self.call("get", key, |h| unsafe {
            codes_get_double_array(h, k.as_ptr(), v.as_mut_ptr(), &mut n)
        })?;
        v.truncate(n);
        Ok(v)
    }

    /// The elements `index` of a floating-point array key, into `out` (one
    /// per index), decoding those elements only.
    pub fn get_double_elements(
        &self,
        key: &str,
        index: &[usize],
        out: &mut [f64],
    ) -> Result<(), GribError> {
        let k = cstr(key)?;
        if index.len() != out.len() {
            return Err(GribError::Invalid(format!(
                "{} indexes for {} values",
                index.len(),
                out.len()
            )));
        }
        // SAFETY: `index` holds `len` indexes and `out` room for `len`
        // doubles; ecCodes checks each index against the array's size.
        self.call("get", key, |h| unsafe {
            grib_get_double_element_set(
                h,
                k.as_ptr(),
                index.as_ptr(),
                index.len(),
                out.as_mut_ptr(),
            )
        })
    }

    /// An integer array key (e.g. `pl`, `bitmap`).
    pub fn get_long_array(&self, key: &str) -> Result<Vec<i64>, GribError> {
        let k = cstr(key)?;
        let mut n = self.size(key)?;
        check_array(key, n, std::mem::size_of::<c_long>())?;
        let mut v: Vec<c_long> = vec![0; n];
        // SAFETY: `v` holds `n` longs and ecCodes writes at most `n`.
        self.call("get", key, |h| unsafe {
            codes_get_long_array(h, k.as_ptr(), v.as_mut_ptr(), &mut n)
        })?;
        v.truncate(n);
        Ok(v.into_iter().map(i64::from).collect())
    }

    /// Sets an integer key.
    pub fn set_long(&mut self, key: &str, v: i64) -> Result<(), GribError> {
        let k = cstr(key)?;
        let v = c_long::try_from(v)
            .map_err(|_| GribError::Invalid(format!("{key} = {v} exceeds C long")))?;
        // SAFETY: live handle, valid key.
        self.set_call(key, |h| unsafe { codes_set_long(h, k.as_ptr(), v) })
    }

    /// Sets a floating-point key.
    pub fn set_double(&mut self, key: &str, v: f64) -> Result<(), GribError> {
        let k = cstr(key)?;
        // SAFETY: live handle, valid key.
        self.set_call(key, |h| unsafe { codes_set_double(h, k.as_ptr(), v) })
    }

    /// Sets a text key.
    pub fn set_string(&mut self, key: &str, v: &str) -> Result<(), GribError> {
        let k = cstr(key)?;
        let cv = cstr(v)?;
        let mut len = v.len();
        // SAFETY: live handle, valid key and NUL-terminated value of `len` bytes.
        self.set_call(key, |h| unsafe {
            codes_set_string(h, k.as_ptr(), cv.as_ptr(), &mut len)
        })
    }

    /// Sets a floating-point array key.
    pub fn set_double_array(&mut self, key: &str, v: &[f64]) -> Result<(), GribError> {
        let k = cstr(key)?;
        // SAFETY: live handle, valid key, `v` holds `v.len()` doubles.
        self.set_call(key, |h| unsafe {
            codes_set_double_array(h, k.as_ptr(), v.as_ptr(), v.len())
        })
    }

    /// Sets a key from raw bytes (a data section's coded values, as
    /// ecCodes' `pack_bytes` stores them, without unpacking them).
    pub fn set_bytes(&mut self, key: &str, v: &[u8]) -> Result<(), GribError> {
        let k = cstr(key)?;
        let mut len = v.len();
        // SAFETY: live handle, valid key, `v` holds `len` bytes, which
        // ecCodes copies and never writes through.
        self.set_call(key, |h| unsafe {
            codes_set_bytes(h, k.as_ptr(), v.as_ptr(), &mut len)
        })
    }

    /// Sets an integer array key.
    pub fn set_long_array(&mut self, key: &str, v: &[i64]) -> Result<(), GribError> {
        let k = cstr(key)?;
        let c: Vec<c_long> = v
            .iter()
            .map(|&x| c_long::try_from(x))
            .collect::<Result<_, _>>()
            .map_err(|_| GribError::Invalid(format!("{key} element exceeds C long")))?;
        // SAFETY: live handle, valid key, `c` holds `c.len()` longs.
        self.set_call(key, |h| unsafe {
            codes_set_long_array(h, k.as_ptr(), c.as_ptr(), c.len())
        })
    }

    /// The names of the keys in `namespace` (all keys when `None`), filtered by
    /// [`skip`] flags.
    pub fn key_names(&self, namespace: Option<&str>, flags: u64) -> Result<Vec<String>, GribError> {
        let ns = namespace.map(cstr).transpose()?;
        let h = self.live("iterate keys", namespace.unwrap_or(""))?;
        // SAFETY: live handle; the namespace is null or NUL-terminated.
        let it = guarded("iterate keys", namespace.unwrap_or(""), || unsafe {
            codes_keys_iterator_new(
                h,
                flags as c_ulong,
                ns.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            )
        })?;
        let it = NonNull::new(it)
            .ok_or_else(|| GribError::Invalid("cannot iterate the keys".to_string()))?;
        let mut names = Vec::new();
        // SAFETY: `it` is live until the delete below (left undeleted when
        // ecCodes fails an assertion); names are copied out before the next
        // step invalidates them.
        guarded("iterate keys", namespace.unwrap_or(""), || unsafe {
            while codes_keys_iterator_next(it.as_ptr()) != 0 {
                let p = codes_keys_iterator_get_name(it.as_ptr());
                if !p.is_null() {
                    names.push(CStr::from_ptr(p).to_string_lossy().into_owned());
                }
            }
            codes_keys_iterator_delete(it.as_ptr());
        })?;
        Ok(names)
    }

    /// The encoded message.
    pub fn message(&self) -> Result<Vec<u8>, GribError> {
        self.message_bytes().map(<[u8]>::to_vec)
    }

    /// The encoded message, borrowed from the handle.
    pub fn message_bytes(&self) -> Result<&[u8], GribError> {
        let mut p: *const c_void = std::ptr::null();
        let mut n: usize = 0;
        // SAFETY: live handle, valid out-pointers.
        self.call("get message", "", |h| unsafe {
            codes_get_message(h, &mut p, &mut n)
        })?;
        if p.is_null() {
            return Err(GribError::Invalid(
                "ecCodes returned no message".to_string(),
            ));
        }
        // SAFETY: ecCodes guarantees `n` readable bytes at `p` while the
        // handle lives unchanged, which the borrow of `self` ensures.
        Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) })
    }
}

/// A handle over borrowed message bytes ([`Handle::over`]): read-only.
pub struct Borrowed<'a> {
    handle: Handle,
    _bytes: std::marker::PhantomData<&'a [u8]>,
}

impl std::ops::Deref for Borrowed<'_> {
    type Target = Handle;
    fn deref(&self) -> &Handle {
        &self.handle
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // A broken handle may point into abandoned frames: it is left
        // allocated rather than deleted.
        let Ok(h) = self.live("delete message", "") else {
            return;
        };
        // SAFETY: the handle is deleted exactly once. A failed assertion
        // while deleting leaves the rest of it allocated.
        let _ = guarded("delete message", "", || unsafe { codes_handle_delete(h) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set in the child process that runs
    /// [`assertion_in_a_process_of_its_own`].
    const CHILD: &str = "TGM_ECCODES_ASSERTION_CHILD";

    /// A GRIB1 seasonal field (ECMWF local definition 16) whose forecast
    /// month disagrees with its dates: reading `marsForecastMonth` fails
    /// an assertion inside ecCodes, which would abort the process.
    fn inconsistent_forecast_month() -> Handle {
        let mut h = Handle::from_sample("GRIB1").unwrap();
        h.set_long("localDefinitionNumber", 16).unwrap();
        h.set_long("dataDate", 20180101).unwrap();
        h.set_long("verifyingMonth", 201801).unwrap();
        h.set_long("forecastMonth", 1).unwrap();
        h
    }

    /// Runs [`assertion_in_a_process_of_its_own`] in a child process: once a
    /// thread has unwound out of ecCodes, the process's other threads are
    /// refused, which would refuse the other tests' threads here.
    #[test]
    fn a_failed_ecodes_assertion_is_an_error_of_its_call() {
        let name = "weather::ffi::tests::assertion_in_a_process_of_its_own";
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", name, "--include-ignored", "--test-threads=1"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    #[ignore = "run in a child process by a_failed_ecodes_assertion_is_an_error_of_its_call"]
    fn assertion_in_a_process_of_its_own() {
        // Run with --include-ignored among the other tests, it would
        // refuse their threads: it runs only in its child process.
        if std::env::var_os(CHILD).is_none() {
            return;
        }
        let h = inconsistent_forecast_month();
        match h.get_long("marsForecastMonth") {
            Err(GribError::EcCodesAssertion { what, key, message }) => {
                assert_eq!((what.as_str(), key.as_str()), ("get", "marsForecastMonth"));
                assert!(
                    message.contains("gribForecastMonth == fcmonth"),
                    "{message}"
                );
            }
            other => panic!("expected a failed assertion, got {other:?}"),
        }
        // The handle stays usable for what does not fail, and fails again
        // where it did.
        assert_eq!(h.get_long("forecastMonth").unwrap(), 1);
        assert!(matches!(
            h.get_string("marsForecastMonth"),
            Err(GribError::EcCodesAssertion { .. })
        ));
        assert!(!h.is_missing("marsForecastMonth"));
        // Another thread is refused: this one may hold ecCodes' locks.
        let other = std::thread::spawn(|| Handle::from_sample("GRIB2").err())
            .join()
            .unwrap();
        match other {
            Some(GribError::Invalid(message)) => {
                assert!(message.contains("another thread"), "{message}")
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        // This thread goes on.
        assert_eq!(h.get_long("forecastMonth").unwrap(), 1);
        assert!(Handle::from_sample("GRIB2").is_ok());
    }
}
