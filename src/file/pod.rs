//! Zero-copy reinterpretation of bytes as numeric slices: the only place in
//! the file layer that needs `unsafe`. See `spec/files.md` §3.
#![allow(unsafe_code)]

/// Seals [`Pod`]: implemented here for the primitives, and next to their
/// definitions for the crate's own plain types (`tensor::Complex32`,
/// `tensor::Complex64`), so the file layer names no higher layer.
pub(crate) mod sealed {
    pub trait Sealed {}
}

/// Plain numeric types: every bit pattern is a valid value and there is no
/// padding.
///
/// # Safety
/// Implemented only inside this crate, for primitive integers and floats
/// and `#[repr(C)]` structs of one such type.
pub unsafe trait Pod: sealed::Sealed + Copy + 'static {}

macro_rules! pod {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        // SAFETY: primitive numeric type, no padding, every bit pattern valid.
        unsafe impl Pod for $t {}
    )*};
}
pod!(
    u8,
    u16,
    u32,
    u64,
    i8,
    i16,
    i32,
    i64,
    f32,
    f64,
    half::f16,
    half::bf16
);

/// Views `bytes` as `&[T]` when the pointer is aligned for `T` and the length
/// is a whole number of elements; `None` otherwise (copy instead).
pub fn try_cast<T: Pod>(bytes: &[u8]) -> Option<&[T]> {
    // SAFETY: `T: Pod` accepts every bit pattern; `align_to` only returns a
    // middle slice that is correctly aligned and in bounds, and we accept it
    // only when it covers all of `bytes`.
    let (head, mid, tail) = unsafe { bytes.align_to::<T>() };
    (head.is_empty() && tail.is_empty()).then_some(mid)
}

/// Maps a whole file read-only.
///
/// # Safety caveat
/// A mapping reflects later changes to the file. If another process
/// truncates the file while it is mapped, touching the lost pages raises
/// SIGBUS instead of returning an error. tgm only appends to files and never
/// truncates complete messages; use the pread backend for files that other
/// programs may shrink, or for network filesystems.
pub(crate) fn map_file(file: &std::fs::File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: see the caveat above; the mapping is read-only and every read
    // through it is bounds-checked against the length captured at map time.
    unsafe { memmap2::Mmap::map(file) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_only_when_aligned_and_whole() {
        let v: Vec<u64> = vec![1, 2, 3];
        let b: &[u8] = bytemuck_bytes(&v);
        assert_eq!(try_cast::<u64>(b), Some(&v[..]));
        assert!(try_cast::<u64>(&b[1..9]).is_none());
        assert!(try_cast::<u32>(&b[..6]).is_none());
    }

    fn bytemuck_bytes(v: &[u64]) -> &[u8] {
        // SAFETY: u64 has no padding; the byte view covers exactly the slice.
        unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, v.len() * 8) }
    }
}
