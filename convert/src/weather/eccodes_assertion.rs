//! ecCodes' failed assertions as errors of the call they fail in
//! (`spec/convert.md` "Hostile files").
//!
//! ecCodes aborts the process when one of its assertions fails, unless a
//! handler is installed. The handler installed here unwinds out of ecCodes
//! back to the guarded call that entered it, as ECMWF's MIR does by
//! throwing from its handler: ecCodes' frames are abandoned where the
//! assertion failed (what they allocated leaks) and nothing after the
//! assertion runs, so a broken invariant is never acted on.
//!
//! Two things can outlive the abandoned frames, and both are contained:
//! - locks ecCodes held (its OpenMP nest locks, owned by the thread):
//!   that thread may take them again, any other would wait for ever, so
//!   once a thread has unwound out of ecCodes, calls from other threads are
//!   refused ([`Failure::Refused`]);
//! - a message handle whose set was abandoned may point into the abandoned
//!   frames: the caller marks it unusable ([`super::ffi`]'s `Handle`).

use std::any::Any;
use std::cell::Cell;
use std::ffi::{c_char, CStr};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::thread::{self, ThreadId};

#[link(name = "eccodes")]
extern "C-unwind" {
    fn codes_set_codes_assertion_failed_proc(
        proc: Option<unsafe extern "C-unwind" fn(*const c_char)>,
    );
}

/// The payload the handler unwinds with: ecCodes' text.
struct Failed(String);

/// Why a guarded call gave no result.
pub(super) enum Failure {
    /// An assertion failed inside ecCodes: its text.
    Assertion(String),
    /// ecCodes was not called: another thread unwound out of it.
    Refused,
}

/// The refusal's text.
pub(super) const REFUSED: &str = "ecCodes failed an assertion on another thread of this \
    process, which may still hold ecCodes' locks; convert in a new process";

thread_local! {
    /// How many guarded calls this thread is inside.
    static GUARDED: Cell<u32> = const { Cell::new(0) };
}

/// The first thread that unwound out of ecCodes, and whether there is one
/// (read first, so that calls take no lock until then).
static UNWOUND: Mutex<Option<ThreadId>> = Mutex::new(None);
static ANY_UNWOUND: AtomicBool = AtomicBool::new(false);

/// Whether calls from this thread are refused ([`Failure::Refused`]).
pub(super) fn refused() -> bool {
    if !ANY_UNWOUND.load(Ordering::Acquire) {
        return false;
    }
    let unwound = *UNWOUND.lock().unwrap_or_else(|e| e.into_inner());
    unwound.is_some_and(|t| t != thread::current().id())
}

/// ecCodes' assertion handler: unwinds with the assertion's text (without
/// the panic hook's message, as `resume_unwind` does not call it). Outside
/// a guarded call there is no frame to return to: it aborts as ecCodes
/// would, after printing the text.
unsafe extern "C-unwind" fn on_failure(message: *const c_char) {
    let text = if message.is_null() {
        "ecCodes assertion failed".to_string()
    } else {
        // SAFETY: ecCodes passes a NUL-terminated string that lives during
        // the call.
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    };
    if GUARDED.with(Cell::get) == 0 {
        eprintln!("{text}");
        std::process::abort();
    }
    panic::resume_unwind(Box::new(Failed(text)));
}

/// Runs `f`, a call into ecCodes, with the handler installed (again, in
/// case another library in the process installed its own: tgm's handler
/// then stays, and an assertion outside a guarded call aborts as ecCodes'
/// default does); a failed assertion inside it is its text as an error.
/// Any other unwinding goes on. Refused, without calling ecCodes, on a
/// thread other than one that already unwound out of it.
pub(super) fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, Failure> {
    if refused() {
        return Err(Failure::Refused);
    }
    // SAFETY: the handler has the signature ecCodes calls it with.
    unsafe { codes_set_codes_assertion_failed_proc(Some(on_failure)) };
    GUARDED.with(|g| g.set(g.get() + 1));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(g.get() - 1));
    result.map_err(
        |payload: Box<dyn Any + Send>| match payload.downcast::<Failed>() {
            Ok(failed) => {
                UNWOUND
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(thread::current().id());
                ANY_UNWOUND.store(true, Ordering::Release);
                Failure::Assertion(failed.0)
            }
            Err(other) => panic::resume_unwind(other),
        },
    )
}
