//! Progress bars on stderr, by bytes, shown only on a terminal.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

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
        ProgressStyle::with_template(
            "{msg} [{bar:30}] {bytes}/{total_bytes} ({binary_bytes_per_sec}, {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

/// The object being encoded: where the bar stood before it, and its mapped
/// input, if any, whose read pages are released as the encoder advances.
#[derive(Default)]
struct Current {
    base: u64,
    consumed: Option<crate::npy_input::Consumed>,
}

/// Drives a bar from the library's per-chunk encode progress
/// (`spec/pipeline.md` §6.7), one object at a time.
pub struct EncodeProgress {
    bar: ProgressBar,
    current: Arc<Mutex<Current>>,
}

impl EncodeProgress {
    /// Progress shown on `bar` (hidden or not).
    pub fn new(bar: ProgressBar) -> Self {
        EncodeProgress {
            bar,
            current: Arc::default(),
        }
    }

    /// The hook to put in the encode options.
    pub fn hook(&self) -> tgm::pipeline::ProgressHook {
        let bar = self.bar.clone();
        let current = Arc::clone(&self.current);
        tgm::pipeline::ProgressHook::new(move |s: tgm::pipeline::Step| {
            let c = current.lock().unwrap_or_else(|e| e.into_inner());
            bar.set_position(c.base + s.done);
            if let Some(m) = &c.consumed {
                m.release(s.read);
            }
        })
    }

    /// The next object starts: the bar stands at `base`; `consumed` is its
    /// mapped input.
    pub fn start(&self, base: u64, consumed: Option<crate::npy_input::Consumed>) {
        let mut c = self.current.lock().unwrap_or_else(|e| e.into_inner());
        *c = Current { base, consumed };
    }
}
