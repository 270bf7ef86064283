//! Progress bars on stderr, by bytes, shown only on a terminal.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Large enough to be worth a bar.
const MIN_BYTES: u64 = 64 << 20;

/// A byte-counting bar, hidden when stderr is not a terminal or the work is small.
pub fn bytes_bar(total: u64, what: &str) -> ProgressBar {
    if total < MIN_BYTES || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} ({eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}
