//! How a remote source requests bytes (`spec/remote.md` §2, §3, §5).

use std::time::Duration;

/// Options of a remote source. `Default` gives the values documented on
/// each field; the `with_*` methods change one.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RemoteOptions {
    /// Ranges of one read closer than this many bytes are fetched by one
    /// request (default 64 KiB).
    pub coalesce_gap: u64,
    /// The first window of the concurrent scan that locates messages
    /// from both ends of the object at once (default 64 KiB; the window
    /// doubles while messages turn out small, and a message larger than
    /// it is hopped over; `spec/remote.md` §3.1). 0 hops from the front
    /// only, reading exactly what each hop needs: one request per
    /// message, the fewest bytes.
    /// [`crate::file::TgmFile::from_source`] asks the source for it.
    pub readahead: u64,
    /// Bytes of the object's start fetched by the first request of open,
    /// which also gives the length and ETag (default 2 KiB: the first
    /// message's preamble and, usually, its header frames and index); and
    /// bytes of a message's start read to find its index when one of its
    /// objects is first asked for. 0 opens with a HEAD.
    pub head_window: u64,
    /// Whole-request timeout, body included (default 30 s).
    pub timeout: Duration,
    /// Connection timeout (default 5 s).
    pub connect_timeout: Duration,
    /// Retries of a request that failed with a 5xx status, a timeout or a
    /// dropped connection (default 3), with exponential backoff.
    pub retries: u32,
    /// First backoff delay (default 100 ms); each retry doubles it.
    pub backoff: Duration,
    /// Longest backoff delay (default 5 s).
    pub max_backoff: Duration,
    /// Most bytes one response may carry (default 1 GiB): a larger read is
    /// refused before it is sent, and a response longer than asked is cut
    /// off with an error.
    pub max_response_bytes: u64,
    /// Requests in flight at once for one read of several ranges (default 8).
    pub concurrency: usize,
    /// Check frame digests on every whole-frame read even when the caller's
    /// options turn checking off (default true).
    pub verify_hashes: bool,
    /// Store configuration as `(key, value)` pairs, applied after the
    /// environment: `object_store`'s key names for the URL's store
    /// (`aws_access_key_id`, `endpoint`, `region`, `allow_http`,
    /// `google_service_account`, `azure_storage_account_name`, … and the
    /// HTTP client's `timeout`, `proxy_url`, …; `spec/remote.md` §1).
    /// Empty by default; an unknown key is an error naming it.
    pub storage_options: Vec<(String, String)>,
    /// Bytes of one part of a multipart upload (default 8 MiB; at least
    /// [`MIN_PART_SIZE`], the smallest part S3 accepts before the last).
    /// An output no longer than one part is sent by a single `PUT`
    /// (`spec/remote.md` §7).
    pub part_size: usize,
    /// Parts of one upload in flight at once (default 4): a remote sink
    /// holds at most this many parts plus the one being filled.
    pub parts_in_flight: usize,
}

/// The smallest part of a multipart upload (S3's minimum for every part
/// but the last): 5 MiB.
pub const MIN_PART_SIZE: usize = 5 << 20;

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            coalesce_gap: crate::file::DEFAULT_COALESCE_GAP,
            readahead: crate::file::DEFAULT_READAHEAD,
            head_window: crate::file::DEFAULT_HEAD_WINDOW,
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            retries: 3,
            backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            max_response_bytes: 1 << 30,
            concurrency: 8,
            verify_hashes: true,
            storage_options: Vec::new(),
            part_size: 8 << 20,
            parts_in_flight: 4,
        }
    }
}

impl RemoteOptions {
    /// Sets [`Self::coalesce_gap`].
    pub fn with_coalesce_gap(mut self, bytes: u64) -> Self {
        self.coalesce_gap = bytes;
        self
    }
    /// Sets [`Self::readahead`].
    pub fn with_readahead(mut self, bytes: u64) -> Self {
        self.readahead = bytes;
        self
    }
    /// Sets [`Self::head_window`].
    pub fn with_head_window(mut self, bytes: u64) -> Self {
        self.head_window = bytes;
        self
    }
    /// Sets [`Self::timeout`].
    pub fn with_timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }
    /// Sets [`Self::connect_timeout`].
    pub fn with_connect_timeout(mut self, t: Duration) -> Self {
        self.connect_timeout = t;
        self
    }
    /// Sets [`Self::retries`].
    pub fn with_retries(mut self, n: u32) -> Self {
        self.retries = n;
        self
    }
    /// Sets [`Self::backoff`] and [`Self::max_backoff`].
    pub fn with_backoff(mut self, first: Duration, max: Duration) -> Self {
        self.backoff = first;
        self.max_backoff = max;
        self
    }
    /// Sets [`Self::max_response_bytes`].
    pub fn with_max_response_bytes(mut self, bytes: u64) -> Self {
        self.max_response_bytes = bytes;
        self
    }
    /// Sets [`Self::concurrency`] (at least 1).
    pub fn with_concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }
    /// Sets [`Self::verify_hashes`].
    pub fn with_verify_hashes(mut self, on: bool) -> Self {
        self.verify_hashes = on;
        self
    }
    /// Sets [`Self::storage_options`].
    pub fn with_storage_options(mut self, pairs: Vec<(String, String)>) -> Self {
        self.storage_options = pairs;
        self
    }
    /// Sets [`Self::part_size`] (at least [`MIN_PART_SIZE`]).
    pub fn with_part_size(mut self, bytes: usize) -> Self {
        self.part_size = bytes.max(MIN_PART_SIZE);
        self
    }
    /// Sets [`Self::parts_in_flight`] (at least 1).
    pub fn with_parts_in_flight(mut self, n: usize) -> Self {
        self.parts_in_flight = n.max(1);
        self
    }
}
