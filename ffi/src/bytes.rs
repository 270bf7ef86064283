//! `tgm_bytes_t`: byte buffers the library allocates and hands to C.

/// An owned byte buffer (`tgm_bytes_t`); release it with `tgm_bytes_free`.
/// An empty buffer has a NULL `data`.
#[repr(C)]
#[derive(Debug)]
pub struct TgmBytes {
    /// The bytes.
    pub data: *mut u8,
    /// Their number.
    pub len: usize,
}

impl TgmBytes {
    /// The empty buffer: NULL data, length 0.
    pub const EMPTY: TgmBytes = TgmBytes {
        data: std::ptr::null_mut(),
        len: 0,
    };

    /// Hands `v` to C.
    pub fn from_vec(v: Vec<u8>) -> TgmBytes {
        if v.is_empty() {
            return TgmBytes::EMPTY;
        }
        let b = v.into_boxed_slice();
        let len = b.len();
        TgmBytes {
            data: Box::into_raw(b).cast::<u8>(),
            len,
        }
    }
}

/// Releases a buffer returned by any `tgm_*` function; a NULL `data` is a
/// no-op.
///
/// # Safety
/// `buf` came from this library and is released once.
#[no_mangle]
pub unsafe extern "C" fn tgm_bytes_free(buf: TgmBytes) {
    crate::error::query("tgm_bytes_free", (), || {
        if !buf.data.is_null() {
            let slice = std::ptr::slice_from_raw_parts_mut(buf.data, buf.len);
            // SAFETY: allocated by `from_vec` as a boxed slice of `len` bytes.
            drop(unsafe { Box::from_raw(slice) });
        }
    })
}
