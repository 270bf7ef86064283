//! The thread budget: how many threads one call may use, and the rayon
//! pools that run it (`spec/pipeline.md` §6.4). A leaf module: it imports
//! nothing else from tgm, so the pipeline, the buffers, encode, decode and
//! the szip coder (through the pool current when it is called) share it.
//!
//! A budget of `n` runs on a pool of exactly `min(n, parallelism)` workers,
//! where parallelism is what the operating system grants the process. The
//! work is still split for `n` (the split decides nothing but speed: every
//! parallel path gives the sequential result), but more workers than cores
//! would only add threads.
//!
//! Pools are kept in a small cache of [`POOL_SLOTS`] pools keyed by worker
//! count, least recently used first out, rather than one pool sized to the
//! maximum with the work limited by splitting: rayon lets every worker of
//! a pool steal, so a pool larger than the budget would run more threads
//! than the caller allowed, while a pool of the budget's size honours it.
//! A program uses one or two budgets, so each pool is built once; at most
//! `POOL_SLOTS × parallelism` worker threads exist at any time. A pool
//! dropped from the cache ends its threads once the calls running on it
//! return.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use rayon::ThreadPool;

/// How many pools the cache keeps.
pub(crate) const POOL_SLOTS: usize = 4;

/// A pool could not be built (the operating system refused a thread).
#[derive(Debug)]
pub(crate) struct PoolError(String);

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot build a thread pool: {}", self.0)
    }
}

/// Runs `f` on the pool for a budget of `threads` (0 and 1: one worker).
/// Parallel iterators inside `f` use that pool's workers only.
pub(crate) fn install<T: Send>(
    threads: usize,
    f: impl FnOnce() -> T + Send,
) -> Result<T, PoolError> {
    static POOLS: OnceLock<Mutex<Pools>> = OnceLock::new();
    let pool = POOLS
        .get_or_init(|| Mutex::new(Pools::default()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(workers(threads, parallelism()))?;
    Ok(pool.install(f))
}

/// The workers a budget of `threads` gets on a machine of `parallelism`.
fn workers(threads: usize, parallelism: usize) -> usize {
    threads.min(parallelism).max(1)
}

/// The threads the operating system grants the process, read once.
fn parallelism() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// At most [`POOL_SLOTS`] pools, the most recently used last.
#[derive(Default)]
struct Pools(Vec<(usize, Arc<ThreadPool>)>);

impl Pools {
    /// The pool of `workers` threads, built if the cache has none.
    fn get(&mut self, workers: usize) -> Result<Arc<ThreadPool>, PoolError> {
        let slot = match self.0.iter().position(|(w, _)| *w == workers) {
            Some(i) => self.0.remove(i),
            None => {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(workers)
                    .build()
                    .map_err(|e| PoolError(e.to_string()))?;
                if self.0.len() == POOL_SLOTS {
                    self.0.remove(0);
                }
                (workers, Arc::new(pool))
            }
        };
        let pool = slot.1.clone();
        self.0.push(slot);
        Ok(pool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_gets_its_workers_capped_at_the_machine() {
        assert_eq!(workers(0, 8), 1);
        assert_eq!(workers(1, 8), 1);
        assert_eq!(workers(3, 8), 3);
        assert_eq!(workers(64, 8), 8);
        for threads in [0, 1, 2, 3] {
            let seen = install(threads, rayon::current_num_threads).unwrap();
            assert_eq!(seen, workers(threads, parallelism()), "budget {threads}");
        }
    }

    #[test]
    fn pools_are_built_once_and_bounded() {
        let mut pools = Pools::default();
        let two = pools.get(2).unwrap();
        assert!(Arc::ptr_eq(&two, &pools.get(2).unwrap()), "reused");
        for w in 1..=POOL_SLOTS + 3 {
            let p = pools.get(w).unwrap();
            assert_eq!(p.current_num_threads(), w);
            assert!(pools.0.len() <= POOL_SLOTS);
        }
        let sizes: Vec<usize> = pools.0.iter().map(|(w, _)| *w).collect();
        assert_eq!(sizes, (4..=POOL_SLOTS + 3).collect::<Vec<_>>());
        // Using a pool keeps it: the least recently used one goes first.
        pools.get(4).unwrap();
        pools.get(9).unwrap();
        let sizes: Vec<usize> = pools.0.iter().map(|(w, _)| *w).collect();
        assert_eq!(sizes, vec![6, 7, 4, 9]);
    }
}
