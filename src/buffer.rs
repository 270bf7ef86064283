//! Fresh output buffers for decoded and encoded data (`spec/pipeline.md` §6.1).
//!
//! Filling a fresh buffer costs one page fault per page, and for objects of
//! tens of MiB those faults, not the codecs, dominate a decode. So every
//! buffer here is obtained fallibly, zeroed by the allocator (fresh pages
//! from the OS are zero already, so no memset runs), and, on Linux, large
//! buffers are advised for transparent huge pages before anything touches
//! them: one fault per 2 MiB instead of one per 4 KiB where the system
//! allows it (`/sys/kernel/mm/transparent_hugepage/enabled` set to `always`
//! or `madvise`). The advice never changes contents.
#![allow(unsafe_code)]

use std::alloc::Layout;
use std::borrow::Cow;

use crate::error::{Error, Result};

/// Buffers at least this large are advised for huge pages.
#[cfg(any(target_os = "linux", test))]
const HUGE_PAGE_ADVICE_MIN: usize = 4 << 20;

fn alloc_failed(len: usize) -> Error {
    Error::invalid_input(format!("cannot allocate {len} bytes"))
}

/// `len` zero bytes, or an error when the allocation fails.
pub fn zeroed(len: usize) -> Result<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    let layout = Layout::array::<u8>(len).map_err(|_| alloc_failed(len))?;
    // SAFETY: `layout` has a non-zero size (len > 0).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(alloc_failed(len));
    }
    advise_huge_pages(ptr, len);
    // SAFETY: `ptr` comes from the global allocator with the layout of
    // `[u8; len]`, which is what `Vec<u8>` with capacity `len` deallocates
    // with, and all `len` bytes are initialised (zero).
    Ok(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// Appends `n` bytes to `v`, written by `fill` over consecutive chunks of
/// `chunk` bytes (the last may be shorter; `fill` gets each chunk's index)
/// on up to `threads` workers. Each chunk is zeroed just before `fill`
/// writes it, while it is in cache, instead of all `n` bytes being zeroed
/// in a pass of their own first (`spec/pipeline.md` §6.3). On error `v`
/// keeps its length.
pub fn append_in_chunks(
    v: &mut Vec<u8>,
    n: usize,
    chunk: usize,
    threads: usize,
    fill: impl Fn(usize, &mut [u8]) -> Result<()> + Sync,
) -> Result<()> {
    use std::mem::MaybeUninit;
    v.try_reserve(n).map_err(|_| alloc_failed(n))?;
    let chunk = chunk.max(1);
    let spare = &mut v.spare_capacity_mut()[..n];
    let run = |(i, c): (usize, &mut [MaybeUninit<u8>])| {
        c.fill(MaybeUninit::new(0));
        // SAFETY: every element of `c` was initialised on the line above,
        // and `MaybeUninit<u8>` has the layout of `u8`.
        let c = unsafe { &mut *(c as *mut [MaybeUninit<u8>] as *mut [u8]) };
        fill(i, c)
    };
    if threads > 1 && n > chunk {
        use rayon::prelude::*;
        crate::exec::install(threads, || {
            spare.par_chunks_mut(chunk).enumerate().try_for_each(run)
        })??;
    } else {
        spare.chunks_mut(chunk).enumerate().try_for_each(run)?;
    }
    // SAFETY: every chunk ran without error, so the `n` bytes after the old
    // length are initialised, and `n` is within the reserved capacity.
    unsafe { v.set_len(v.len() + n) };
    Ok(())
}

/// An empty vector with room for exactly `cap` bytes.
pub fn with_capacity(cap: usize) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(cap).map_err(|_| alloc_failed(cap))?;
    advise_huge_pages(v.as_mut_ptr(), v.capacity());
    Ok(v)
}

/// Empties `v` and makes room for `cap` bytes, keeping its allocation when
/// it is large enough (`spec/pipeline.md` §6.3); a smaller one is replaced
/// by a fresh buffer (advised like [`with_capacity`]) rather than grown, so
/// nothing is copied.
pub fn reserve_cleared(v: &mut Vec<u8>, cap: usize) -> Result<()> {
    v.clear();
    if v.capacity() < cap {
        *v = with_capacity(cap)?;
    }
    Ok(())
}

/// An owned copy of `src` in a fresh buffer.
pub fn copy_of(src: &[u8]) -> Result<Vec<u8>> {
    let mut v = with_capacity(src.len())?;
    v.extend_from_slice(src);
    Ok(v)
}

/// The bytes of `data` as an owned vector, copying only when borrowed.
pub fn into_owned(data: Cow<'_, [u8]>) -> Result<Vec<u8>> {
    match data {
        Cow::Owned(v) => Ok(v),
        Cow::Borrowed(b) => copy_of(b),
    }
}

/// An owned buffer read once, in order, by a consumer that copies what it
/// reads (a stream encoder): the memory of the part already read is given
/// back to the system as the reading advances, so the buffer and what is
/// made from it are not both resident whole (`spec/pipeline.md` §6.7).
/// The buffer is dropped at the end; its bytes are never read again.
#[cfg(feature = "zstd")]
pub(crate) struct ReadOnce {
    buf: Vec<u8>,
    /// Bytes handed out so far.
    at: usize,
    /// Bytes whose whole pages were given back.
    released: usize,
}

#[cfg(feature = "zstd")]
impl ReadOnce {
    /// Takes `buf` to be read from its start.
    pub(crate) fn new(buf: Vec<u8>) -> Self {
        ReadOnce {
            buf,
            at: 0,
            released: 0,
        }
    }

    /// Bytes in all.
    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }

    /// The next at most `n` bytes, giving back the pages of everything read
    /// before them; empty at the end.
    pub(crate) fn next(&mut self, n: usize) -> &[u8] {
        self.release_to(self.at);
        let start = self.at;
        self.at = start + n.min(self.buf.len() - start);
        &self.buf[start..self.at]
    }

    #[cfg(target_os = "linux")]
    fn release_to(&mut self, upto: usize) {
        let addr = self.buf.as_mut_ptr() as usize;
        // SAFETY: the range is inside the buffer, which this value owns and
        // no reference points into (`next` borrows `self` mutably).
        // MADV_DONTNEED makes its whole pages read as zeros from now on;
        // they lie before `at`, so nothing reads them again, and the
        // allocator's own bookkeeping lies outside the buffer.
        let end = unsafe {
            advise_whole_pages(
                addr + self.released,
                upto - self.released,
                libc::MADV_DONTNEED,
            )
        };
        if let Some(end) = end {
            self.released = end - addr;
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn release_to(&mut self, _: usize) {}
}

/// The size of a memory page.
#[cfg(target_os = "linux")]
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).unwrap_or(4096).max(1)
}

/// Gives `advice` (madvise(2)) for the whole pages inside the `len` bytes
/// at `addr`, if there are any, and returns the end of the last of them.
/// A refusal by the kernel is ignored.
///
/// # Safety
/// The bytes lie in memory the caller may advise on. With an advice that
/// discards contents (`MADV_DONTNEED` on anonymous memory reads as zeros
/// afterwards), nothing may read those pages again.
#[cfg(target_os = "linux")]
pub(crate) unsafe fn advise_whole_pages(
    addr: usize,
    len: usize,
    advice: libc::c_int,
) -> Option<usize> {
    let page = page_size();
    let start = addr.div_ceil(page) * page;
    let end = addr.saturating_add(len) / page * page;
    if end <= start {
        return None;
    }
    // SAFETY: [start, end) are whole pages inside the caller's range (the
    // caller's contract above).
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, advice);
    }
    Some(end)
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    const HUGE: usize = 2 << 20;
    if len < HUGE_PAGE_ADVICE_MIN {
        return;
    }
    let addr = ptr as usize;
    let (Some(start), Some(end)) = (
        addr.checked_add(HUGE - 1).map(|a| a & !(HUGE - 1)),
        addr.checked_add(len).map(|e| e & !(HUGE - 1)),
    ) else {
        return;
    };
    if end > start {
        // SAFETY: [start, end) lies inside the allocation [addr, addr + len),
        // and `start` is page aligned. MADV_HUGEPAGE only changes how future
        // faults are served; it never alters or frees memory. A failure
        // (e.g. a kernel without THP) leaves the range as it was.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _len: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "zstd")]
    #[test]
    fn read_once_gives_every_byte_once_in_order() {
        let src: Vec<u8> = (0..(3 << 20) + 777).map(|i| (i % 251) as u8).collect();
        let mut r = ReadOnce::new(src.clone());
        assert_eq!(r.len(), src.len());
        let mut back = Vec::new();
        loop {
            let piece = r.next(100_003);
            if piece.is_empty() {
                break;
            }
            back.extend_from_slice(piece);
        }
        assert_eq!(back, src);
        assert!(r.next(10).is_empty());
    }

    #[test]
    fn zeroed_is_zero_at_every_size() {
        for len in [
            0,
            1,
            7,
            4096,
            HUGE_PAGE_ADVICE_MIN,
            HUGE_PAGE_ADVICE_MIN + 12_345,
        ] {
            let v = zeroed(len).unwrap();
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&b| b == 0), "len {len}");
        }
    }

    #[test]
    fn huge_buffers_hold_what_is_written() {
        let len = (9 << 20) + 3;
        let mut v = zeroed(len).unwrap();
        for (i, b) in v.iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        assert!(v.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
        let c = copy_of(&v).unwrap();
        assert_eq!(c, v);
        let mut w = with_capacity(len).unwrap();
        assert!(w.is_empty() && w.capacity() >= len);
        w.extend_from_slice(&v);
        assert_eq!(w, v);
    }

    #[test]
    fn impossible_sizes_are_errors() {
        assert!(zeroed(usize::MAX).is_err());
        assert!(zeroed(isize::MAX as usize).is_err());
        assert!(with_capacity(usize::MAX).is_err());
    }

    #[test]
    fn reserve_cleared_reuses_large_enough_allocations() {
        let mut v = vec![7u8; 1000];
        let p = v.as_ptr();
        reserve_cleared(&mut v, 600).unwrap();
        assert!(v.is_empty());
        assert_eq!(v.as_ptr(), p, "capacity 1000 holds 600 bytes");
        reserve_cleared(&mut v, 5000).unwrap();
        assert!(v.is_empty() && v.capacity() >= 5000);
        assert!(reserve_cleared(&mut v, usize::MAX).is_err());
    }

    #[test]
    fn into_owned_copies_only_borrowed() {
        let v = vec![1u8, 2, 3];
        let p = v.as_ptr();
        let owned = into_owned(Cow::Owned(v)).unwrap();
        assert_eq!(owned.as_ptr(), p);
        assert_eq!(
            into_owned(Cow::Borrowed(&[4u8, 5][..])).unwrap(),
            vec![4, 5]
        );
    }
}
