//! Diagnostics on stderr (errors, notes, "wrote …" lines): written through
//! one function that drops the text when stderr is closed or its reader has
//! gone away, so that `tgm … 2>&1 | true` never panics.

use std::io::Write;

/// Writes one line to stderr, ignoring every write error.
pub fn line(args: std::fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

/// `eprintln!` that never panics: see [`line`].
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::diag::line(format_args!($($arg)*))
    };
}
