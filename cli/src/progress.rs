//! Progress bars on stderr, by bytes, shown only on a terminal: one per
//! command where it counts its own work ([`bytes_bar`]), and one per long
//! object encode or decode, driven per chunk by the library's steps
//! ([`object_hook`], `spec/pipeline.md` §6.7). Every bar shows the rate
//! and the time left.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use tgm::pipeline::{ProgressHook, Step};

/// Large enough to be worth a bar.
const MIN_BYTES: u64 = 64 << 20;

/// Where every bar is drawn, so that two at once do not overwrite each
/// other; `None` when stderr is not a terminal.
fn terminal() -> Option<&'static MultiProgress> {
    static MULTI: OnceLock<Option<MultiProgress>> = OnceLock::new();
    MULTI
        .get_or_init(|| {
            let term = std::io::stderr().is_terminal();
            term.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()))
        })
        .as_ref()
}

/// Bars counting bytes: the share done, bytes of total, rate, time left.
const BYTES_TEMPLATE: &str = "{msg} [{bar:30}] {percent:>3}% {bytes}/{total_bytes} \
                              ({binary_bytes_per_sec}, {eta} left)";

/// Bars counting items: items of total, rate, time left.
const ITEMS_TEMPLATE: &str = "{msg} [{bar:30}] {pos}/{len} ({per_sec}, {eta} left)";

/// A bar of `total` (bytes or items, as `template` shows them) labelled
/// `what`, with its rate and time left.
fn styled(multi: &MultiProgress, total: u64, what: &str, template: &str) -> ProgressBar {
    let pb = multi.add(ProgressBar::new(total));
    pb.set_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

/// A bar of `total` items (archives, files) labelled `what`, with its
/// rate and time left; hidden when stderr is not a terminal or there are
/// few items.
pub fn count_bar(total: u64, what: &str) -> ProgressBar {
    const MIN_ITEMS: u64 = 16;
    match terminal() {
        Some(multi) if total >= MIN_ITEMS => styled(multi, total, what, ITEMS_TEMPLATE),
        _ => ProgressBar::hidden(),
    }
}

/// A byte-counting bar, hidden when stderr is not a terminal or the work is small.
pub fn bytes_bar(total: u64, what: &str) -> ProgressBar {
    match terminal() {
        Some(multi) if total >= MIN_BYTES => styled(multi, total, what, BYTES_TEMPLATE),
        _ => ProgressBar::hidden(),
    }
}

/// The hook every command puts in its encode and decode options: each
/// object of at least 64 MiB whose pipeline reports a step before its end
/// gets a bar labelled `what` (`encoding`, `decoding`), advanced per chunk
/// and cleared at its last step. Unset when stderr is not a terminal, so
/// the library does no reporting work and nothing is drawn.
pub fn object_hook(what: &'static str) -> ProgressHook {
    let Some(multi) = terminal() else {
        return ProgressHook::default();
    };
    let current: Mutex<Option<ProgressBar>> = Mutex::new(None);
    ProgressHook::new(move |s: Step| {
        let mut c = current.lock().unwrap_or_else(|e| e.into_inner());
        if c.as_ref().is_some_and(|b| b.length() != Some(s.total)) {
            // An object that failed before its end, followed by another.
            if let Some(b) = c.take() {
                b.finish_and_clear();
            }
        }
        if s.done >= s.total {
            if let Some(b) = c.take() {
                b.finish_and_clear();
            }
            return;
        }
        if s.total < MIN_BYTES {
            return;
        }
        c.get_or_insert_with(|| styled(multi, s.total, what, BYTES_TEMPLATE))
            .set_position(s.done);
    })
}

/// [`object_hook`] for decoding, after `then`, the hook the caller already
/// had (one releasing the pages of a mapped payload).
pub fn decode_hook(first: ProgressHook) -> ProgressHook {
    first.then(object_hook("decoding"))
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
    pub fn hook(&self) -> ProgressHook {
        let bar = self.bar.clone();
        let current = Arc::clone(&self.current);
        ProgressHook::new(move |s: Step| {
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

/// A bar of the bytes a remote output's store has acknowledged, polled
/// from `counter` by a thread of its own (the writes block the command's
/// thread while parts are in flight); drawn only on a terminal, removed
/// when dropped.
pub struct UploadBar {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Shows the bytes uploaded to `url`; `None` when stderr is not a terminal.
pub fn upload_bar(url: &str, counter: Arc<AtomicU64>) -> Option<UploadBar> {
    let multi = terminal()?;
    let pb = multi.add(ProgressBar::new_spinner());
    pb.set_style(
        ProgressStyle::with_template("{msg} {spinner} {bytes} uploaded ({binary_bytes_per_sec})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_message(format!("uploading {url}"));
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::clone(&stop);
    let thread = std::thread::spawn(move || loop {
        pb.set_position(counter.load(Ordering::Relaxed));
        if done.load(Ordering::Relaxed) {
            pb.finish_and_clear();
            return;
        }
        pb.tick();
        std::thread::sleep(std::time::Duration::from_millis(100));
    });
    Some(UploadBar {
        stop,
        thread: Some(thread),
    })
}

impl Drop for UploadBar {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
