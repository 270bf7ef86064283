//! How long and how much memory one SZ3 child decode may take
//! (`spec/pipeline.md` §4.7).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Address space every decode may use beyond the output and the stream.
const BASE_MEMORY: u64 = 64 << 20;
/// Address space per decoded byte (SZ3 keeps quantisation indices,
/// Huffman tables and its own copy of the output).
const PER_OUTPUT_BYTE: u64 = 32;

/// [`set_memory_ceiling`]; 0 when unset.
static CEILING: AtomicU64 = AtomicU64::new(0);

/// Lowers the absolute ceiling on a child's added address space below the
/// machine's physical memory (`None` removes it). A decode needing more is
/// a codec error naming sz3.
pub fn set_memory_ceiling(bytes: Option<u64>) {
    CEILING.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// The machine's physical memory, from `/proc/meminfo`.
fn physical_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The absolute ceiling: the physical memory, or [`set_memory_ceiling`]'s
/// when lower.
pub(crate) fn ceiling() -> u64 {
    let set = match CEILING.load(Ordering::Relaxed) {
        0 => u64::MAX,
        c => c,
    };
    set.min(physical_memory().unwrap_or(u64::MAX))
}

/// One decode's budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    /// Wall time from the request to the last byte of the answer, after
    /// which the child is killed.
    pub time: Duration,
    /// Address space the child may add to its size at start.
    pub memory: u64,
}

impl Budget {
    /// The budget for decoding `out_bytes` bytes from a stream of
    /// `stream_len` bytes: 2 s plus 1 s per 4 MiB decoded (a decoder at
    /// 4 MB/s, far below SZ3's hundreds), and 64 MiB plus 32 × the output
    /// plus the stream in new address space, never more than `ceiling`.
    pub(crate) fn new(out_bytes: u64, stream_len: u64, ceiling: u64) -> Self {
        Budget {
            time: Duration::from_secs(2) + Duration::from_secs(out_bytes >> 22),
            memory: BASE_MEMORY
                .saturating_add(out_bytes.saturating_mul(PER_OUTPUT_BYTE))
                .saturating_add(stream_len)
                .min(ceiling),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_grows_with_the_output_up_to_the_ceiling() {
        let small = Budget::new(8000, 100, u64::MAX);
        assert_eq!(small.time, Duration::from_secs(2));
        assert_eq!(small.memory, (64 << 20) + 32 * 8000 + 100);
        let big = Budget::new(64 << 20, 0, u64::MAX);
        assert_eq!(big.time, Duration::from_secs(18));
        assert_eq!(big.memory, (64 << 20) * 33);
        assert_eq!(Budget::new(64 << 20, 0, 1 << 30).memory, 1 << 30);
        assert_eq!(Budget::new(u64::MAX, u64::MAX, 5).memory, 5);
        assert!(ceiling() <= physical_memory().unwrap_or(u64::MAX));
    }
}
