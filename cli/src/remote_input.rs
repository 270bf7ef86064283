//! Remote archives: which arguments are URLs, the options that tune
//! remote reads and writes, and opening a URL as a byte source through the
//! library's `remote` feature (outputs are written by `crate::output`).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use tgm::file::ByteSource;

use crate::error::CliResult;

/// Whether an argument names a remote archive rather than a local path.
pub use tgm::file::is_remote_url;

/// Options for reading `http(s)://`, `s3://`, `gs://` and `az://` inputs,
/// as global flags or `TGM_REMOTE_*` environment variables. Unset ones keep
/// the library's defaults.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Remote archives (http(s)://, s3://, gs://, az:// inputs)")]
pub struct RemoteArgs {
    /// Seconds one request may take before it fails (and is retried).
    #[arg(
        long = "timeout",
        global = true,
        value_name = "SECONDS",
        env = "TGM_REMOTE_TIMEOUT"
    )]
    pub timeout: Option<f64>,
    /// Retries of a request that failed with a 5xx status, a dropped
    /// connection or a timeout (with backoff).
    #[arg(
        long = "retries",
        global = true,
        value_name = "N",
        env = "TGM_REMOTE_RETRIES"
    )]
    pub retries: Option<u32>,
    /// Byte ranges closer than this are fetched in one request.
    #[arg(
        long = "coalesce-gap",
        global = true,
        value_name = "BYTES",
        env = "TGM_REMOTE_COALESCE_GAP"
    )]
    pub coalesce_gap: Option<u64>,
    /// First window of the scan that locates messages from both ends of
    /// a file without a catalogue (default 65536; it doubles while
    /// messages turn out small); 0 hops from the front only, one small
    /// request per message, the fewest bytes.
    #[arg(
        long = "readahead",
        global = true,
        value_name = "BYTES",
        env = "TGM_REMOTE_READAHEAD"
    )]
    pub readahead: Option<u64>,
    /// Bytes of the file's start read by the first request (which also
    /// gives its length and ETag), and of a message's start read to find
    /// its index (default 2048).
    #[arg(
        long = "head-window",
        global = true,
        value_name = "BYTES",
        env = "TGM_REMOTE_HEAD_WINDOW"
    )]
    pub head_window: Option<u64>,
}

static OPTIONS: OnceLock<RemoteArgs> = OnceLock::new();

/// Records the options given on the command line, for every later [`open`].
pub fn configure(args: RemoteArgs) {
    let _ = OPTIONS.set(args);
}

fn options() -> RemoteArgs {
    OPTIONS.get().cloned().unwrap_or_default()
}

/// The library's remote options from the command line and environment.
#[cfg(feature = "remote")]
pub fn remote_options() -> CliResult<tgm::remote::RemoteOptions> {
    let a = options();
    if a.timeout.is_some_and(|t| !(t.is_finite() && t > 0.0)) {
        return Err(crate::error::usage(
            "--timeout must be a positive number of seconds",
        ));
    }
    let mut opts = tgm::remote::RemoteOptions::default();
    if let Some(t) = a.timeout {
        opts = opts.with_timeout(std::time::Duration::from_secs_f64(t));
    }
    if let Some(r) = a.retries {
        opts = opts.with_retries(r);
    }
    if let Some(g) = a.coalesce_gap {
        opts = opts.with_coalesce_gap(g);
    }
    if let Some(r) = a.readahead {
        opts = opts.with_readahead(r);
    }
    if let Some(w) = a.head_window {
        opts = opts.with_head_window(w);
    }
    Ok(opts)
}

/// Opens `url` as a byte source. Errors name the URL.
#[cfg(feature = "remote")]
pub fn open(url: &str) -> CliResult<Arc<dyn ByteSource>> {
    use crate::error::WithPath;
    let opts = remote_options()?;
    let src = tgm::remote::RemoteSource::open(url, &opts).at(Path::new(url))?;
    Ok(Arc::new(src))
}

/// The source of the archive at `url` that `cat` lists (the library's
/// rule, `spec/files.md` §9.5): with `lazy` and a recorded ETag, no
/// request until a read, every read pinned to the ETag.
#[cfg(feature = "remote")]
pub fn open_listed(
    url: &str,
    cat: &tgm::file::archive_catalogue::ArchiveCatalogue,
    lazy: bool,
) -> CliResult<Arc<dyn ByteSource>> {
    use crate::error::WithPath;
    let opts = remote_options()?;
    let src = tgm::remote::listed_source(url, cat, &opts, lazy).at(Path::new(url))?;
    Ok(Arc::from(src))
}

/// Without the `remote` feature a URL is refused with the reason.
#[cfg(not(feature = "remote"))]
pub fn open_listed(
    url: &str,
    _: &tgm::file::archive_catalogue::ArchiveCatalogue,
    _: bool,
) -> CliResult<Arc<dyn ByteSource>> {
    open(url)
}

/// Without the `remote` feature a URL is refused with the reason.
#[cfg(not(feature = "remote"))]
pub fn open(url: &str) -> CliResult<Arc<dyn ByteSource>> {
    let _ = options();
    Err(crate::error::CliError::Failed(format!(
        "{}: this tgm was built without the `remote` feature; rebuild with --features remote",
        Path::new(url).display()
    )))
}
