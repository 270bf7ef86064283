//! Reading `.tgm` files from object storage and web servers, and writing
//! them to object storage ([`RemoteSink`], `spec/remote.md` §7): `http://` and
//! `https://` URLs (range requests), `s3://bucket/key`, `gs://bucket/key`
//! and `az://container/key`, through the `object_store` crate. Built with
//! the `remote` feature. See `spec/remote.md`.
//!
//! [`AsyncRemoteSource`] is the asynchronous source (tokio);
//! [`RemoteSource`] wraps it as a blocking [`crate::file::ByteSource`] with
//! its own small runtime, so that [`crate::file::TgmFile`] reads remote
//! objects exactly as it reads local ones:
//!
//! ```no_run
//! use tgm::TgmFile;
//! use tgm::remote::{RemoteOptions, RemoteSource};
//! # fn main() -> tgm::Result<()> {
//! let src = RemoteSource::open("http://127.0.0.1:8080/data.tgm", &RemoteOptions::default())?;
//! let f = TgmFile::from_source(src, &tgm::Limits::default())?;
//! let obj = f.decode_object(0, 0, &tgm::DecodeOptions::default())?;
//! println!("{} bytes, {} requests", obj.data.len(), f.source().stats().requests);
//! # Ok(()) }
//! ```

mod async_source;
mod blocking;
mod catalogued;
mod errors;
mod listing;
mod options;
mod sink;
mod store;

pub use async_source::{AsyncRemoteSource, RemoteStats};
pub use blocking::RemoteSource;
pub use catalogued::{
    index_archives, listed_source, open_catalogue_file, read_catalogue_file, ListedArchive,
};
pub use listing::{expand_patterns, is_pattern, list_matching};
pub use options::{RemoteOptions, MIN_PART_SIZE};
pub use sink::{create_sink, RemoteSink};
pub(crate) use store::store_for_url;
