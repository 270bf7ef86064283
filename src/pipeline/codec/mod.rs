//! The codecs: one folder per codec under the kind of stage it is
//! (`encoding/`, `filter/`, `compression/`), the stage traits they implement
//! (`stage`), and the table that names them all (`registry`). See
//! `spec/pipeline.md` §9.

pub(crate) mod compression;
pub(crate) mod encoding;
pub(crate) mod entry;
pub(crate) mod filter;
pub(crate) mod none;
pub(crate) mod registry;
pub(crate) mod stage;
