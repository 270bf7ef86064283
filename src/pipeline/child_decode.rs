//! Runs a C/C++ decoder that cannot be made safe on hostile input in a
//! forked child process, so that whatever the stream makes it do (throw an
//! uncaught C++ exception, fail an `assert`, read or write out of bounds,
//! recurse without end, loop, allocate without bound) ends the child, not
//! the caller: the decoded values come back through a shared mapping of
//! exactly the size the descriptor implies, and the child is given a time
//! and an address-space budget. See `spec/pipeline.md` §4.7.
//!
//! Linux only; other targets call the decoder in process (README "Not yet").
//! The process calls (`fork`, `mmap`, `waitpid`, `setrlimit`) need `unsafe`.
#![allow(unsafe_code)]

use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Bytes in front of the values in the shared mapping: a status word, the
/// length of the child's error message, and the message.
const HEADER: usize = 4096;
/// Longest error message the child can hand back.
const MESSAGE_MAX: usize = HEADER - 8;
/// Status words written by the child.
const DONE: u32 = 1;
const FAILED: u32 = 2;

/// How long and how much memory a child may use.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// Wall time after which the child is killed.
    pub time: Duration,
    /// Address space the child may add to what it inherits.
    pub memory: u64,
}

impl Budget {
    /// The budget for decoding `out_bytes` bytes: 2 s plus 1 s per 4 MiB
    /// (a decoder at 4 MB/s, far below SZ3's hundreds), and 64 MiB plus 32×
    /// the output in new memory.
    pub(crate) fn for_output(out_bytes: usize) -> Self {
        let out = out_bytes as u64;
        Budget {
            time: Duration::from_secs(2) + Duration::from_secs(out >> 22),
            memory: (64 << 20) + out.saturating_mul(32),
        }
    }
}

/// One shared anonymous mapping, unmapped on drop.
struct Shared {
    ptr: *mut u8,
    len: usize,
}

impl Shared {
    fn new(len: usize) -> Result<Self> {
        // SAFETY: an anonymous mapping with no address hint touches no
        // existing memory; the result is checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(Error::codec(format!(
                "cannot map {len} bytes for the decoder's child process: {}",
                std::io::Error::last_os_error()
            )));
        }
        Ok(Shared {
            ptr: ptr.cast(),
            len,
        })
    }

    fn status(&self) -> u32 {
        // SAFETY: the mapping is at least HEADER bytes, page aligned; the
        // child has exited (or been killed) before the parent reads.
        unsafe { std::ptr::read_volatile(self.ptr.cast::<u32>()) }
    }

    fn message(&self) -> String {
        // SAFETY: as in `status`; the length is clamped to the header.
        let bytes = unsafe {
            let len = std::ptr::read_volatile(self.ptr.add(4).cast::<u32>()) as usize;
            std::slice::from_raw_parts(self.ptr.add(8), len.min(MESSAGE_MAX))
        };
        String::from_utf8_lossy(bytes).into_owned()
    }

    fn values<T: Copy>(&self, n: usize) -> &[T] {
        // SAFETY: HEADER is a multiple of any primitive's alignment and the
        // mapping holds HEADER + n values (checked in `decode_in_child`).
        unsafe { std::slice::from_raw_parts(self.ptr.add(HEADER).cast::<T>(), n) }
    }

    /// In the child: the output slice.
    #[allow(clippy::mut_from_ref)]
    fn values_mut<T: Copy>(&self, n: usize) -> &mut [T] {
        // SAFETY: as in `values`; only the child writes, while the parent
        // waits.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(HEADER).cast::<T>(), n) }
    }

    /// In the child: the outcome, message first, status last.
    fn report(&self, outcome: std::result::Result<(), String>) {
        let (status, msg) = match outcome {
            Ok(()) => (DONE, String::new()),
            Err(m) => (FAILED, m),
        };
        let msg = &msg.as_bytes()[..msg.len().min(MESSAGE_MAX)];
        // SAFETY: the header has room for 8 + MESSAGE_MAX bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(msg.as_ptr(), self.ptr.add(8), msg.len());
            std::ptr::write_volatile(self.ptr.add(4).cast::<u32>(), msg.len() as u32);
            std::ptr::write_volatile(self.ptr.cast::<u32>(), status);
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are the mapping made in `new`.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

/// This process's address-space size, from `/proc/self/statm`.
fn address_space() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().next()?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages.saturating_mul(u64::try_from(page).ok()?))
}

/// In the child, before decoding: crashes end the child with the default
/// action (not a host's handler, such as a fuzzer's or Python's), no core
/// file is written, what the decoder prints goes nowhere (the error comes
/// back through the mapping), and the address space is bounded.
fn confine_child(address_limit: Option<u64>) {
    // SAFETY: opening /dev/null and duplicating it over this process's
    // own stdout and stderr.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
        if null >= 0 {
            libc::dup2(null, 1);
            libc::dup2(null, 2);
            libc::close(null);
        }
    }
    for sig in [
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGABRT,
        libc::SIGTRAP,
        libc::SIGSYS,
        // The host's own handlers (Python's for Ctrl-C among them) must
        // not run in the child: these end it instead.
        libc::SIGINT,
        libc::SIGTERM,
    ] {
        // SAFETY: restoring a default disposition is async-signal-safe.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain system calls on a valid struct.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
    }
    if let Some(limit) = address_limit {
        let lim = libc::rlimit {
            rlim_cur: limit,
            rlim_max: limit,
        };
        // SAFETY: as above.
        unsafe {
            libc::setrlimit(libc::RLIMIT_AS, &lim);
        }
    }
}

/// How the child ended, from `waitpid`'s status.
fn ended(codec: &str, status: libc::c_int) -> Option<Error> {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        return Some(Error::codec(format!(
            "{codec} decoder crashed on this stream (signal {sig}); it ran in a child process, so nothing else was affected"
        )));
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) != 0 {
        return Some(Error::codec(format!(
            "{codec} decoder's child process exited with status {}",
            libc::WEXITSTATUS(status)
        )));
    }
    None
}

/// Blocks until `pid` exits or `limit` passes, through a pidfd (Linux 5.3
/// and later); returns at once where there is none, leaving the wait to
/// polling.
fn await_exit(pid: libc::pid_t, limit: Duration) {
    // SAFETY: pidfd_open on our own child; the descriptor is closed below.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let Ok(fd) = libc::c_int::try_from(fd) else {
        return;
    };
    if fd < 0 {
        return;
    }
    let start = Instant::now();
    loop {
        let left = limit.saturating_sub(start.elapsed());
        let ms = libc::c_int::try_from(left.as_millis() + 1).unwrap_or(libc::c_int::MAX);
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut p, 1, ms) };
        if r >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
    }
    // SAFETY: closing the descriptor opened above.
    unsafe {
        libc::close(fd);
    }
}

/// Waits for `pid` until `deadline`, then kills it. `Ok(None)` when the
/// child can no longer be waited for (a host that reaps children itself);
/// the shared status then tells whether it finished.
fn wait(codec: &str, pid: libc::pid_t, budget: Budget) -> Result<Option<libc::c_int>> {
    let start = Instant::now();
    await_exit(pid, budget.time);
    let mut pause = Duration::from_micros(20);
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            return Ok(Some(status));
        }
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Ok(None);
        }
        if start.elapsed() >= budget.time {
            // SAFETY: killing and reaping our own child; the wait is
            // retried when a signal interrupts it, so no zombie is left.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                while libc::waitpid(pid, &mut status, 0) < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {
                }
            }
            return Err(Error::codec(format!(
                "{codec} decoder did not finish within {:.0} s; its child process was stopped",
                budget.time.as_secs_f64()
            )));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    }
}

/// Calls `decode(out)` in a forked child and copies its values into `out`.
/// `decode` returns its own error message on a stream it refuses; a crash,
/// a timeout or a child that cannot be started is a codec error naming
/// `codec`. `decode` runs only in the child, which ends with `_exit`
/// (no destructors, no handlers of the host).
pub(crate) fn decode_in_child<T, F>(
    codec: &str,
    out: &mut [T],
    budget: Budget,
    decode: F,
) -> Result<()>
where
    T: Copy + 'static,
    F: FnOnce(&mut [T]) -> std::result::Result<(), String>,
{
    let bytes = std::mem::size_of_val(out);
    let shared = Shared::new(HEADER.checked_add(bytes).ok_or_else(|| {
        Error::codec(format!("{codec} output of {bytes} bytes cannot be mapped"))
    })?)?;
    let limit = address_space().map(|a| {
        a.saturating_add(budget.memory)
            .saturating_add(shared.len as u64)
    });
    // SAFETY: the child only runs `decode`, writes to the shared mapping
    // and leaves with `_exit`; it never returns into the caller's frames.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(Error::codec(format!(
            "cannot start a child process for the {codec} decoder: {}",
            std::io::Error::last_os_error()
        )));
    }
    if pid == 0 {
        confine_child(limit);
        let view = shared.values_mut::<T>(out.len());
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decode(view)))
            .unwrap_or_else(|_| Err(format!("{codec} decoder panicked")));
        shared.report(outcome);
        // SAFETY: leaves the child at once, running nothing of the host.
        unsafe { libc::_exit(0) }
    }
    let status = wait(codec, pid, budget)?;
    if let Some(e) = status.and_then(|s| ended(codec, s)) {
        return Err(e);
    }
    match shared.status() {
        DONE => {
            out.copy_from_slice(shared.values::<T>(out.len()));
            Ok(())
        }
        FAILED => Err(Error::codec(shared.message())),
        _ => Err(Error::codec(format!(
            "{codec} decoder's child process ended without a result"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget() -> Budget {
        Budget::for_output(1 << 10)
    }

    #[test]
    fn values_come_back_through_the_shared_mapping() {
        let mut out = vec![0.0f64; 1000];
        decode_in_child("test", &mut out, budget(), |v: &mut [f64]| {
            for (i, x) in v.iter_mut().enumerate() {
                *x = i as f64 * 0.5;
            }
            Ok(())
        })
        .unwrap();
        assert!(out.iter().enumerate().all(|(i, &x)| x == i as f64 * 0.5));
    }

    #[test]
    fn a_refusal_keeps_its_message_and_leaves_out_untouched() {
        let mut out = vec![7.0f64; 4];
        let e = decode_in_child("test", &mut out, budget(), |v: &mut [f64]| {
            v[0] = 1.0;
            Err("stream says no".into())
        })
        .unwrap_err();
        assert!(e.detail().contains("stream says no"), "{e}");
        assert_eq!(out, [7.0; 4]);
    }

    #[test]
    fn an_abort_a_wild_write_and_a_panic_end_only_the_child() {
        let mut out = vec![0.0f64; 4];
        let e = decode_in_child("test", &mut out, budget(), |_: &mut [f64]| {
            std::process::abort()
        })
        .unwrap_err();
        assert!(
            e.detail().contains(&format!("signal {}", libc::SIGABRT)),
            "{e}"
        );
        let e = decode_in_child("test", &mut out, budget(), |_: &mut [f64]| {
            // SAFETY (of the test): the write faults in the child only.
            unsafe { std::ptr::write_volatile(std::ptr::dangling_mut::<u64>(), 1) };
            Ok(())
        })
        .unwrap_err();
        assert!(
            e.detail().contains(&format!("signal {}", libc::SIGSEGV)),
            "{e}"
        );
        let e = decode_in_child("test", &mut out, budget(), |_: &mut [f64]| panic!("boom"))
            .unwrap_err();
        assert!(e.detail().contains("panicked"), "{e}");
    }

    #[test]
    fn a_child_past_its_time_is_stopped() {
        let mut out = vec![0.0f64; 4];
        let b = Budget {
            time: Duration::from_millis(200),
            memory: 1 << 26,
        };
        let e = decode_in_child("test", &mut out, b, |_: &mut [f64]| loop {
            std::hint::spin_loop();
        })
        .unwrap_err();
        assert!(e.detail().contains("did not finish"), "{e}");
    }

    #[test]
    fn a_child_cannot_allocate_past_its_budget() {
        let mut out = vec![0.0f64; 4];
        let e = decode_in_child("test", &mut out, budget(), |_: &mut [f64]| {
            let mut v: Vec<u8> = Vec::new();
            v.try_reserve(1 << 34)
                .map_err(|e| format!("allocation refused: {e}"))?;
            Ok(())
        })
        .unwrap_err();
        assert!(e.detail().contains("allocation refused"), "{e}");
    }
}
