//! A minimal binding to ecCodes' C API for the benchmarks: a GRIB2 handle
//! from the `regular_ll_sfc_grib2` sample, encode into it and decode from a
//! message.

#![allow(unsafe_code, dead_code)]

use std::ffi::{c_char, c_int, c_long, c_void, CString};

/// Grid side of the benchmark field.
pub const SIDE: usize = 4096;

#[repr(C)]
struct CodesHandle {
    _opaque: [u8; 0],
}

#[link(name = "eccodes")]
extern "C" {
    fn codes_handle_new_from_samples(c: *mut c_void, name: *const c_char) -> *mut CodesHandle;
    fn codes_handle_new_from_message(
        c: *mut c_void,
        data: *const c_void,
        len: usize,
    ) -> *mut CodesHandle;
    fn codes_handle_delete(h: *mut CodesHandle) -> c_int;
    fn codes_get_message(h: *const CodesHandle, msg: *mut *const c_void, len: *mut usize) -> c_int;
    fn codes_set_long(h: *mut CodesHandle, key: *const c_char, v: c_long) -> c_int;
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
    fn codes_get_double_array(
        h: *const CodesHandle,
        key: *const c_char,
        v: *mut f64,
        len: *mut usize,
    ) -> c_int;
}

fn check(rc: c_int, what: &str) {
    assert_eq!(rc, 0, "ecCodes {what} failed with {rc}");
}

fn key(s: &str) -> CString {
    CString::new(s).expect("key without NUL")
}

/// A GRIB2 handle from the sample, shaped 4096×4096, with `packing` at `bits`.
pub struct Grib(*mut CodesHandle);

impl Grib {
    pub fn new(packing: &str, bits: c_long) -> Self {
        let sample = key("regular_ll_sfc_grib2");
        // SAFETY: a NUL-terminated sample name and a null (default) context.
        let h = unsafe { codes_handle_new_from_samples(std::ptr::null_mut(), sample.as_ptr()) };
        assert!(
            !h.is_null(),
            "ecCodes sample regular_ll_sfc_grib2 not found"
        );
        let g = Grib(h);
        for (k, v) in [("Ni", SIDE as c_long), ("Nj", SIDE as c_long)] {
            // SAFETY: a live handle and a NUL-terminated key.
            check(unsafe { codes_set_long(g.0, key(k).as_ptr(), v) }, k);
        }
        let (pk, pv) = (key("packingType"), key(packing));
        let mut len = packing.len();
        // SAFETY: live handle, NUL-terminated key and value, `len` its length.
        check(
            unsafe { codes_set_string(g.0, pk.as_ptr(), pv.as_ptr(), &mut len) },
            "packingType",
        );
        // SAFETY: as above.
        check(
            unsafe { codes_set_long(g.0, key("bitsPerValue").as_ptr(), bits) },
            "bitsPerValue",
        );
        g
    }

    /// Packs `values` and returns the encoded message's bytes (borrowed from the handle).
    pub fn encode(&mut self, values: &[f64]) -> &[u8] {
        let k = key("values");
        // SAFETY: live handle; `values` holds `values.len()` doubles.
        check(
            unsafe { codes_set_double_array(self.0, k.as_ptr(), values.as_ptr(), values.len()) },
            "set values",
        );
        let (mut p, mut len) = (std::ptr::null::<c_void>(), 0usize);
        // SAFETY: live handle; ecCodes returns a pointer to its own buffer,
        // valid until the handle changes, which `&mut self` prevents.
        check(
            unsafe { codes_get_message(self.0, &mut p, &mut len) },
            "get message",
        );
        // SAFETY: `p` points at `len` bytes owned by the handle.
        unsafe { std::slice::from_raw_parts(p as *const u8, len) }
    }
}

impl Drop for Grib {
    fn drop(&mut self) {
        // SAFETY: the handle is live and dropped once.
        unsafe { codes_handle_delete(self.0) };
    }
}

/// Decodes a GRIB message's values into `out`.
pub fn grib_decode(msg: &[u8], out: &mut [f64]) {
    // SAFETY: `msg` outlives the handle, which is deleted before returning.
    let h = unsafe {
        codes_handle_new_from_message(
            std::ptr::null_mut(),
            msg.as_ptr() as *const c_void,
            msg.len(),
        )
    };
    assert!(!h.is_null(), "ecCodes cannot read its own message");
    let mut len = out.len();
    let k = key("values");
    // SAFETY: live handle; `out` has room for `len` doubles.
    let rc = unsafe { codes_get_double_array(h, k.as_ptr(), out.as_mut_ptr(), &mut len) };
    // SAFETY: deleted once.
    unsafe { codes_handle_delete(h) };
    check(rc, "get values");
    assert_eq!(len, out.len());
}
