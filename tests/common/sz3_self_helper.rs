//! The test executable as its own SZ3 helper (`spec/pipeline.md` §4.7).
//! Started with the helper's argument, the executable serves on its
//! standard input before the test harness runs: from the main thread, as
//! a helper's `main` would, so that the child's address-space ceiling
//! holds (a thread the harness started would allocate from a heap arena
//! reserved before the ceiling was set).
//! glibc passes the process's arguments to `.init_array` functions;
//! the tests that include this are built for glibc only.

use std::ffi::{c_char, c_int, CStr};

use tgm::sz3_child::{Helper, CHILD_ARG};

/// This executable, run as the helper.
pub fn helper() -> Helper {
    Helper::executable(std::env::current_exe().expect("the test executable's path"))
}

/// Run by the C runtime before `main`, with the process's arguments.
#[used]
#[unsafe(link_section = ".init_array")]
static SERVE_WHEN_STARTED_AS_THE_HELPER: extern "C" fn(
    c_int,
    *const *const c_char,
    *const *const c_char,
) = serve_when_started_as_the_helper;

extern "C" fn serve_when_started_as_the_helper(
    argc: c_int,
    argv: *const *const c_char,
    _envp: *const *const c_char,
) {
    if argc != 2 || argv.is_null() {
        return;
    }
    // SAFETY: the C runtime passes `argc` valid, NUL-terminated arguments.
    let first = unsafe { CStr::from_ptr(*argv.add(1)) };
    if first.to_bytes() == CHILD_ARG.as_bytes() {
        tgm::sz3_child::serve();
    }
}
