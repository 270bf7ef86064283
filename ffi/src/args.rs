//! Reading C arguments: strings, buffers, arrays and out-pointers, with a
//! named `TGM_ERROR_INVALID_ARG` failure for every null or malformed one.

use std::ffi::{c_char, CStr};

use crate::error::{Failure, Outcome};

/// A required NUL-terminated UTF-8 string argument called `what`.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn text<'a>(p: *const c_char, what: &str) -> Outcome<&'a str> {
    if p.is_null() {
        return Err(Failure::invalid(format!("{what} is NULL")));
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|e| Failure::invalid(format!("{what} is not valid UTF-8: {e}")))
}

/// An optional string argument: NULL gives `None`.
///
/// # Safety
/// As [`text`].
pub(crate) unsafe fn opt_text<'a>(p: *const c_char, what: &str) -> Outcome<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded contract.
        unsafe { text(p, what) }.map(Some)
    }
}

/// `len` bytes at `p`; NULL is accepted only with `len == 0`.
///
/// # Safety
/// `p` is NULL or valid for reads of `len` bytes for `'a`.
pub(crate) unsafe fn bytes<'a>(p: *const u8, len: usize, what: &str) -> Outcome<&'a [u8]> {
    // SAFETY: forwarded contract.
    unsafe { array(p, len, what) }
}

/// `len` elements at `p`; NULL is accepted only with `len == 0`.
///
/// # Safety
/// `p` is NULL or valid for reads of `len` elements of `T` for `'a`.
pub(crate) unsafe fn array<'a, T>(p: *const T, len: usize, what: &str) -> Outcome<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::invalid(format!(
            "{what} is NULL but its length is {len}"
        )));
    }
    if len
        .checked_mul(size_of::<T>())
        .is_none_or(|n| n > isize::MAX as usize)
    {
        return Err(Failure::invalid(format!(
            "{what} length {len} is too large"
        )));
    }
    // SAFETY: non-null, in-range length, validity by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// The per-object buffers of the encode functions: `n` pointers and
/// lengths; a NULL entry is accepted only with length 0.
///
/// # Safety
/// `ptrs` and `lens` are NULL or valid for `n` elements, and each
/// `ptrs[i]` is NULL or valid for `lens[i]` bytes for `'a`.
pub(crate) unsafe fn buffers<'a>(
    ptrs: *const *const u8,
    lens: *const usize,
    n: usize,
) -> Outcome<Vec<&'a [u8]>> {
    // SAFETY: forwarded contract.
    let ptrs = unsafe { array(ptrs, n, "data_ptrs") }?;
    // SAFETY: forwarded contract.
    let lens = unsafe { array(lens, n, "data_lens") }?;
    ptrs.iter()
        .zip(lens)
        .enumerate()
        // SAFETY: forwarded contract.
        .map(|(i, (&p, &l))| unsafe { bytes(p, l, &format!("data_ptrs[{i}]")) })
        .collect()
}

/// Checks that out-pointer `p` named `what` is not NULL.
pub(crate) fn out<'a, T>(p: *mut T, what: &str) -> Outcome<&'a mut T> {
    // SAFETY: a non-null out-pointer is writable by the caller's contract.
    unsafe { p.as_mut() }.ok_or_else(|| Failure::invalid(format!("{what} is NULL")))
}

/// Borrows handle `p` of kind `what`.
pub(crate) fn handle<'a, T>(p: *const T, what: &str) -> Outcome<&'a T> {
    // SAFETY: a non-null handle was produced by this library and is live
    // by the caller's contract.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::invalid(format!("{what} handle is NULL")))
}

/// Mutably borrows handle `p` of kind `what`.
pub(crate) fn handle_mut<'a, T>(p: *mut T, what: &str) -> Outcome<&'a mut T> {
    // SAFETY: as `handle`, and not shared during the call.
    unsafe { p.as_mut() }.ok_or_else(|| Failure::invalid(format!("{what} handle is NULL")))
}

/// Hands `value` to C as an owned handle.
pub(crate) fn into_handle<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// Frees handle `p` from [`into_handle`]; NULL is a no-op.
///
/// # Safety
/// `p` is NULL or came from [`into_handle`] and is not used afterwards.
pub(crate) unsafe fn free_handle<T>(p: *mut T) {
    if !p.is_null() {
        // SAFETY: caller's contract.
        drop(unsafe { Box::from_raw(p) });
    }
}
