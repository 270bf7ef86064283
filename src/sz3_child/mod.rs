//! SZ3's decoder in a helper process (cargo feature `sz3`, Linux).
//!
//! Past its header SZ3 trusts the stream (uncaught C++ exceptions,
//! asserts, unchecked Huffman-tree indices), so tgm never runs its decoder
//! in the caller's process on Linux: each decode is a request to a child
//! started with `exec` from a helper program, under a time budget and an
//! address-space ceiling, and the values come back over a socket straight
//! into the caller's buffer. Idle children are kept for the next decode
//! and restarted after any failure. See `spec/pipeline.md` §4.7.
//!
//! A program that decodes sz3 provides the helper in one of these ways,
//! tried in this order:
//! 1. [`set_helper`];
//! 2. the environment variable `TGM_SZ3_HELPER`, naming an executable run
//!    with [`CHILD_ARG`];
//! 3. the host's own ([`set_host_helper`]): a program that calls
//!    [`run_child_if_requested`] first thing in `main` (the `tgm` CLI)
//!    re-runs itself, and the Python module runs its interpreter;
//! 4. `tgm-sz3-helper` (the workspace package `tools/sz3-helper`) next to
//!    the running executable.
//!
//! Without one a decode is a codec error saying so; tgm never falls back
//! to decoding in process.

mod budget;
mod helper;
mod protocol;

#[cfg(target_os = "linux")]
mod client;
#[cfg(target_os = "linux")]
mod server;

pub use budget::set_memory_ceiling;
pub use helper::{set_helper, set_host_helper, Helper, CHILD_ARG, HELPER_ENV, HELPER_NAME};
#[cfg(target_os = "linux")]
pub use server::serve;

#[cfg(target_os = "linux")]
pub(crate) use client::{as_bytes_mut, decode};

/// When this process was started as an SZ3 child (its first argument is
/// [`CHILD_ARG`]), serves and exits; otherwise records this executable as
/// the host's helper and returns. Call it first thing in `main`, before
/// starting threads or parsing arguments.
pub fn run_child_if_requested() {
    let mut args = std::env::args_os().skip(1);
    if args.next().is_some_and(|a| a == CHILD_ARG) && args.next().is_none() {
        #[cfg(target_os = "linux")]
        serve();
        #[cfg(not(target_os = "linux"))]
        std::process::exit(2);
    }
    if let Ok(exe) = std::env::current_exe() {
        set_host_helper(Helper::executable(exe));
    }
}

/// Stops the idle children (the helper changed).
fn forget_idle_children() {
    #[cfg(target_os = "linux")]
    client::forget_idle();
}
