//! How a test reports a check it cannot run on this machine (README
//! "Tests"): a `SKIPPED:` line on the real standard error, visible in an
//! ordinary `cargo test` run (libtest captures only `print!`/`eprint!`),
//! or a panic when `TGM_NO_SKIPS=1`, which `.ci/run` sets so that CI can
//! never pass by skipping.
//!
//! Whole tests that need a provisioned machine (servers, sample files) are
//! `#[ignore = "needs …"]` instead, so `cargo test` counts them as ignored
//! with their reason, and the CI stage that provisions them runs them with
//! `--include-ignored`.

use std::io::Write;

/// Reports that `what` could not run here, and why.
pub fn skip(what: &str) {
    if std::env::var_os("TGM_NO_SKIPS").is_some_and(|v| v == "1") {
        panic!("{what}, and TGM_NO_SKIPS=1 forbids skipping");
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED: {what}");
}
