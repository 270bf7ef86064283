//! Ctrl-C and SIGTERM while an output is being written: the first signal
//! raises a flag that every output's sink watches, so the next write (or
//! the commit) aborts a remote upload (no object at the key, no part left)
//! or removes a local temporary file, and the command fails with the
//! reason and exit status 128 + the signal. A second signal ends the
//! process at once, as without a handler. The handlers are installed only
//! when the first output file is created: a command that writes no file
//! is ended by Ctrl-C as usual.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::consts::{SIGINT, SIGTERM};

struct Flags {
    any: Arc<AtomicBool>,
    int: Arc<AtomicBool>,
    term: Arc<AtomicBool>,
}

static FLAGS: OnceLock<Flags> = OnceLock::new();

/// The flag the sinks watch, installing the handlers on first use.
pub fn flag() -> Arc<AtomicBool> {
    let f = FLAGS.get_or_init(|| {
        let f = Flags {
            any: Arc::default(),
            int: Arc::default(),
            term: Arc::default(),
        };
        for (sig, which) in [(SIGINT, &f.int), (SIGTERM, &f.term)] {
            // Registered first, so it sees the flag as the previous signal
            // left it: the second signal exits.
            let _ = signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, f.any.clone());
            let _ = signal_hook::flag::register(sig, which.clone());
            let _ = signal_hook::flag::register(sig, f.any.clone());
        }
        f
    });
    f.any.clone()
}

/// The signal that interrupted the command, by name and number.
pub fn received() -> Option<(&'static str, i32)> {
    let f = FLAGS.get()?;
    if f.int.load(Ordering::SeqCst) {
        Some(("SIGINT", SIGINT))
    } else if f.term.load(Ordering::SeqCst) {
        Some(("SIGTERM", SIGTERM))
    } else {
        None
    }
}
