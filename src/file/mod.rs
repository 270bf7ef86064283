//! Files of many messages: memory-mapped or pread-backed reading, crash-safe
//! appending, salvage of damaged files. See `spec/files.md`.

mod append;
mod async_reader;
mod async_source;
mod damage;
mod fetched;
mod footer;
pub(crate) mod index;
mod layout;
mod local;
mod partial;
pub(crate) mod pod;
mod ranges;
mod reader;
mod salvage;
mod source;

pub use crate::wire::locate::DEFAULT_HEAD_WINDOW;
pub use append::{AppendOptions, Appender, TornTailPolicy};
pub use async_reader::AsyncTgmFile;
pub use async_source::AsyncByteSource;
pub use damage::Damage;
pub use index::TornTail;
pub use layout::{FileLayout, MessageLayout, ObjectLayout, LAYOUT_VERSION};
pub use local::{Backend, LocalFile};
pub use pod::{try_cast, Pod};
pub use ranges::{
    coalesce, split_merged as ranges_split, Coalescing, HeadCached, DEFAULT_COALESCE_GAP,
};
pub use reader::{value_matches, ObjectBuffer, TgmFile, DEFAULT_READAHEAD};
pub use salvage::{salvage, SalvageReport, Skipped, SEARCH_BUDGET_FACTOR};
pub use source::{ByteSource, CountingSource, FileSource, MmapSource, SourceHints};
