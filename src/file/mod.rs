//! Files of many messages: memory-mapped or pread-backed reading, crash-safe
//! appending, salvage of damaged files. See `spec/files.md`.

mod append;
pub mod archive_catalogue;
mod async_reader;
mod async_source;
pub mod catalogue;
mod damage;
mod fetched;
mod footer;
mod gathered;
pub(crate) mod index;
mod layout;
mod local;
mod partial;
pub(crate) mod pod;
pub(crate) mod ranges;
mod reader;
mod recorder;
mod salvage;
mod sink;
pub(crate) mod source;
mod stepped;
mod sweep;
mod walk;

pub use append::{AppendOptions, Appender, StreamingAppend, TornTailPolicy};
pub use async_reader::AsyncTgmFile;
pub use async_source::AsyncByteSource;
pub use damage::Damage;
pub use index::TornTail;
pub use layout::{FileLayout, MessageLayout, ObjectLayout, LAYOUT_VERSION};
pub use local::{Backend, LocalFile};
pub use pod::Pod;
pub use reader::{value_matches, MessageBytes, ObjectBuffer, TgmFile, DEFAULT_READAHEAD};
pub use recorder::{CatalogueRecorder, CataloguingWriter};
pub use salvage::{salvage, SalvageReport, Skipped};
pub use sink::{
    is_remote_url, write_error, ByteSink, Existing, LocalSink, Written, REMOTE_SCHEMES,
};
pub use source::{ByteSource, FileSource, MmapSource, SourceHints};
pub use stepped::{Step, SteppedFile, SuppliedBytes};

// Internals; the tests reach the wrappers and defaults through `crate::__fuzz`.
pub(crate) use crate::wire::locate::DEFAULT_HEAD_WINDOW;
pub(crate) use pod::try_cast;
#[cfg(feature = "remote")]
pub(crate) use ranges::DEFAULT_COALESCE_GAP;
