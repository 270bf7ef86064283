//! How far a long encode of one object got: a hook the pipeline calls per
//! chunk of its last working stage, so a caller can show progress (or
//! release input it no longer needs) during a single large object. The
//! library knows no terminal. See `spec/pipeline.md` §6.7.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One report: how far one object's encode or decode got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Bytes of the object done, of `total`: element bytes encoded, or
    /// decoded.
    pub done: u64,
    /// The object's element bytes.
    pub total: u64,
    /// Leading bytes of the input the pipeline will not read again and
    /// its result does not borrow: of the element bytes on encode, of the
    /// stored payload on decode. A caller that mapped its input may
    /// release those pages.
    pub read: u64,
}

/// The callback.
type Callback = dyn Fn(Step) + Send + Sync;

/// An optional progress callback, told a [`Step`] as an object's pipeline
/// advances: `done` and `read` only grow, and the last call of an object
/// has `done == total`.
///
/// The default reports nothing. Objects encoded on several threads at once
/// report in turn, each with its own `total`.
#[derive(Clone, Default)]
pub struct ProgressHook(Option<Arc<Callback>>);

impl ProgressHook {
    /// A hook calling `f(step)`.
    pub fn new(f: impl Fn(Step) + Send + Sync + 'static) -> Self {
        ProgressHook(Some(Arc::new(f)))
    }

    /// A hook telling each step to `self`'s callback, then to `next`'s.
    pub fn then(self, next: ProgressHook) -> Self {
        match (self.0, next.0) {
            (Some(a), Some(b)) => ProgressHook::new(move |s| {
                a(s);
                b(s);
            }),
            (a, b) => ProgressHook(a.or(b)),
        }
    }

    /// Whether a callback is set.
    pub fn is_set(&self) -> bool {
        self.0.is_some()
    }

    /// Calls the callback, if any.
    pub(crate) fn advance(&self, step: Step) {
        if let Some(f) = &self.0 {
            f(step);
        }
    }

    /// The object is done, `read` bytes of its input read for good.
    pub(crate) fn finished(&self, total: u64, read: u64) {
        self.advance(Step {
            done: total,
            total,
            read,
        });
    }

    /// What a stage reports through, `(done, read)` in bytes of its own
    /// input of `of` bytes: `done` scaled to the object's `total`; `read`
    /// passed on when the stage reads the pipeline's input (`first`), else
    /// the whole `input_len`, which an earlier stage has read.
    pub(crate) fn scaled(
        &self,
        total: u64,
        of: u64,
        first: bool,
        input_len: u64,
    ) -> impl Fn(u64, u64) + '_ {
        move |done: u64, read: u64| {
            let done = if of == 0 {
                total
            } else {
                (u128::from(done.min(of)) * u128::from(total) / u128::from(of)) as u64
            };
            let read = if first {
                read.min(input_len)
            } else {
                input_len
            };
            self.advance(Step { done, total, read });
        }
    }
}
/// What a stage reports through: `report(done, read)` in bytes of its own
/// input (encode) or output (decode), callable from any of its workers
/// (`spec/pipeline.md` §6.7).
pub(crate) type Report<'r> = dyn Fn(u64, u64) + Sync + 'r;

/// Bytes a stage that works in chunks codes between two reports.
pub(crate) const REPORT_BYTES: u64 = 4 << 20;

/// A stage's progress counted in units of `unit` bytes (samples, values,
/// bytes) as its workers finish them: one report per [`REPORT_BYTES`]
/// crossed, never the end (the stage or the pipeline reports that), and
/// never a count below one already reported (`spec/pipeline.md` §6.7).
/// Adding is one atomic addition; only a crossing takes a lock.
pub(crate) struct Ticks<'r> {
    report: &'r Report<'r>,
    unit: u64,
    /// Units in all.
    of: u64,
    /// Units per report.
    every: u64,
    added: AtomicU64,
    shown: Mutex<u64>,
    /// Units are added in order from the first, once each, so the count
    /// done is also the input read for good; otherwise nothing is said read.
    in_order: bool,
}

impl<'r> Ticks<'r> {
    /// Counts `of` units of `unit` bytes, reporting through `report`.
    pub(crate) fn new(report: &'r Report<'r>, unit: u64, of: u64, in_order: bool) -> Self {
        let unit = unit.max(1);
        Ticks {
            report,
            unit,
            of,
            every: (REPORT_BYTES / unit).max(1),
            added: AtomicU64::new(0),
            shown: Mutex::new(0),
            in_order,
        }
    }

    /// Reports every `units` units instead, for a stage whose units are
    /// not the object's bytes (a packed stream decoded to values).
    pub(crate) fn every(mut self, units: u64) -> Self {
        self.every = units.max(1);
        self
    }

    /// `n` more units are done.
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        let before = self.added.fetch_add(n, Ordering::Relaxed);
        let after = before.saturating_add(n);
        if before / self.every != after / self.every && after < self.of {
            self.show(after);
        }
    }

    #[cold]
    fn show(&self, units: u64) {
        let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
        if units <= *shown {
            return;
        }
        *shown = units;
        let bytes = units.saturating_mul(self.unit);
        (self.report)(bytes, if self.in_order { bytes } else { 0 });
    }
}

impl ProgressHook {
    /// A hook that pages out the part of `region` (the stored payload being
    /// decoded, or the element bytes being encoded) the pipeline has read
    /// for good, as it advances ([`page_out`]).
    pub fn paging_out(region: &[u8]) -> Self {
        let (addr, len) = (region.as_ptr() as usize, region.len());
        ProgressHook::new(move |s: Step| {
            let n = len.min(usize::try_from(s.read).unwrap_or(usize::MAX));
            page_out_raw(addr, n);
        })
    }
}

/// Copies `src` into a new vector, paging out each 8 MiB of it once copied
/// ([`page_out`]): a mapped input and its copy are not both resident whole.
pub fn copy_paging_out(src: &[u8]) -> crate::Result<Vec<u8>> {
    let mut out = crate::buffer::with_capacity(src.len())?;
    for chunk in src.chunks(8 << 20) {
        out.extend_from_slice(chunk);
        page_out(chunk);
    }
    Ok(out)
}

/// Asks the kernel to reclaim the whole pages inside `bytes` (Linux
/// `MADV_PAGEOUT`; elsewhere nothing). It changes no byte: a page read
/// again comes back from its file, or from swap, so it is safe on any
/// memory. Meant for a mapped input that was read and will not be read
/// again soon, so it stops counting in the process's resident memory.
pub fn page_out(bytes: &[u8]) {
    page_out_raw(bytes.as_ptr() as usize, bytes.len());
}

#[cfg(target_os = "linux")]
fn page_out_raw(addr: usize, len: usize) {
    // SAFETY: the range lies within memory the caller borrows (for a hook,
    // only while the coding that borrows it runs), and MADV_PAGEOUT changes
    // no byte of it (madvise(2)).
    #[allow(unsafe_code)]
    unsafe {
        crate::buffer::advise_whole_pages(addr, len, libc::MADV_PAGEOUT);
    }
}

#[cfg(not(target_os = "linux"))]
fn page_out_raw(_: usize, _: usize) {}

impl fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.is_set() {
            "ProgressHook(set)"
        } else {
            "ProgressHook(none)"
        })
    }
}

/// Two hooks are equal when both are unset or both call the same closure.
impl PartialEq for ProgressHook {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for ProgressHook {}
