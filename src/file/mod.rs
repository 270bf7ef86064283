//! Files of many messages: memory-mapped or pread-backed reading, crash-safe
//! appending, salvage of damaged files. See `spec/files.md`.

mod append;
mod index;
pub(crate) mod locate;
mod pod;
mod reader;
mod salvage;
mod source;

pub use append::{AppendOptions, Appender, TornTailPolicy};
pub use index::TornTail;
pub use pod::{try_cast, Pod};
pub use reader::{value_matches, Backend, SourceFile, TgmFile};
pub use salvage::{salvage, SalvageReport, Skipped, SEARCH_BUDGET_FACTOR};
pub use source::{ByteSource, CountingSource, FileSource, MmapSource};
