//! libaec's buffer API over FFI (Debian's libaec-dev), for the szip
//! bit-identity tests and benchmarks (feature `libaec-conformance`).

use std::os::raw::{c_int, c_uchar, c_uint};
use tgm_szip::SzipParams;

#[repr(C)]
struct AecStream {
    next_in: *const c_uchar,
    avail_in: usize,
    total_in: usize,
    next_out: *mut c_uchar,
    avail_out: usize,
    total_out: usize,
    bits_per_sample: c_uint,
    block_size: c_uint,
    rsi: c_uint,
    flags: c_uint,
    state: *mut std::ffi::c_void,
}

#[link(name = "aec")]
extern "C" {
    fn aec_buffer_encode(strm: *mut AecStream) -> c_int;
    fn aec_buffer_decode(strm: *mut AecStream) -> c_int;
}

fn stream(p: &SzipParams, input: &[u8], out: &mut [u8]) -> AecStream {
    AecStream {
        next_in: input.as_ptr(),
        avail_in: input.len(),
        total_in: 0,
        next_out: out.as_mut_ptr(),
        avail_out: out.len(),
        total_out: 0,
        bits_per_sample: p.bits_per_sample,
        block_size: p.block_size,
        rsi: p.rsi,
        flags: p.flags,
        state: std::ptr::null_mut(),
    }
}

pub fn encode(p: &SzipParams, input: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; input.len() * 2 + 4096];
    let mut s = stream(p, input, &mut out);
    let rc = unsafe { aec_buffer_encode(&mut s) };
    assert_eq!(rc, 0, "libaec encode failed for {p:?}");
    let n = s.total_out;
    out.truncate(n);
    out
}

pub fn decode(p: &SzipParams, input: &[u8], len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    let mut s = stream(p, input, &mut out);
    let rc = unsafe { aec_buffer_decode(&mut s) };
    assert_eq!(rc, 0, "libaec decode failed for {p:?}");
    assert_eq!(s.total_out, len);
    out
}
