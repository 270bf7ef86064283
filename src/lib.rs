//! Tensogram v3 messages: a reader and writer byte-compatible with ECMWF's
//! reference crate `tensogram` 0.24.0 (`spec/format.md`).
//!
//! A message holds global metadata (CBOR) and any number of objects, each
//! an n-dimensional array described by an [`ObjectDescriptor`] (element
//! type, shape, byte order, and the pipeline that stored it: encoding →
//! filter → compression). A file is messages one after another.
//!
//! # A tour
//!
//! Encode one object and decode the message again:
//!
//! ```
//! use tgm::{DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};
//!
//! let values: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]
//!     .iter()
//!     .flat_map(|v| v.to_ne_bytes())
//!     .collect();
//! let desc = ObjectDescriptor::new(Dtype::Float32, vec![2, 3]);
//! let bytes = tgm::encode(&GlobalMetadata::default(), &[(&desc, &values)], &EncodeOptions::new())?;
//!
//! let msg = tgm::decode(&bytes, &DecodeOptions::default())?; // digests checked
//! assert_eq!(msg.objects[0].data, values);
//! assert_eq!(msg.objects[0].descriptor.shape, [2, 3]);
//! # Ok::<(), tgm::Error>(())
//! ```
//!
//! Store a field quantised and compressed, and decode a range of it without
//! decoding the rest:
//!
//! ```
//! use tgm::{DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor, PipelineBuilder};
//!
//! let field: Vec<u8> = (0..10_000)
//!     .flat_map(|i| (280.0 + (i as f64 * 0.01).sin()).to_ne_bytes())
//!     .collect();
//! let desc = ObjectDescriptor::new(Dtype::Float64, vec![100, 100])
//!     .with_pipeline(&PipelineBuilder::new().simple_packing(16).szip());
//! let bytes = tgm::encode(&GlobalMetadata::default(), &[(&desc, &field)], &EncodeOptions::new())?;
//!
//! // Object 0, elements 500..600 (one row).
//! let row = tgm::decode_range(&bytes, 0, &[(500, 100)], &DecodeOptions::default())?;
//! assert_eq!(row[0].len(), 100 * 8);
//! # Ok::<(), tgm::Error>(())
//! ```
//!
//! Write a file, open it (memory-mapped, one pass over the message heads)
//! and read one object of one message:
//!
//! ```
//! use tgm::{DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor, TgmFile};
//!
//! let desc = ObjectDescriptor::new(Dtype::Uint8, vec![4]);
//! let mut bytes = Vec::new();
//! for step in 0..3u8 {
//!     let one = tgm::encode(&GlobalMetadata::default(), &[(&desc, &[step; 4])], &EncodeOptions::new())?;
//!     bytes.extend_from_slice(&one);
//! }
//! let path = std::env::temp_dir().join(format!("tgm-tour-{}.tgm", std::process::id()));
//! std::fs::write(&path, &bytes)?;
//!
//! let file = TgmFile::open(&path)?;
//! assert_eq!(file.num_messages(), 3);
//! let obj = file.decode_object(2, 0, &DecodeOptions::default())?; // message 2, object 0
//! assert_eq!(obj.data, [2; 4]);
//! # drop(file);
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Validate bytes or a file: every message is checked and every problem
//! reported, with its message index and byte offset:
//!
//! ```
//! use tgm::validate::{Mode, ValidateOptions};
//! use tgm::{Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};
//!
//! let desc = ObjectDescriptor::new(Dtype::Int16, vec![3]);
//! let mut bytes = tgm::encode(&GlobalMetadata::default(), &[(&desc, &[0u8; 6][..])], &EncodeOptions::new())?;
//! assert!(tgm::validate(&bytes[..], Mode::Full, &ValidateOptions::default())?.is_ok());
//!
//! bytes.truncate(bytes.len() - 10); // cut the message short
//! let report = tgm::validate(&bytes[..], Mode::Default, &ValidateOptions::default())?;
//! assert!(!report.is_ok());
//! # Ok::<(), tgm::Error>(())
//! ```
//!
//! # Where things are
//!
//! - Whole messages in memory: [`encode()`] and friends, [`decode()`],
//!   [`decode_object`], [`decode_range`], [`Message`] for borrowed
//!   zero-copy access, [`StreamingEncoder`] for any `std::io::Write`.
//! - Files: [`TgmFile`] over a path (memory map or positioned reads) or any
//!   [`file::ByteSource`], [`file::AsyncTgmFile`] over a
//!   [`file::AsyncByteSource`], [`file::Appender`],
//!   [`file::salvage`]; remote URLs in `remote` (cargo feature `remote`).
//! - The data model: [`ObjectDescriptor`], [`Dtype`], [`GlobalMetadata`],
//!   [`cbor::Value`], [`pipeline_spec`] (the stored pipeline, typed) and
//!   [`PipelineBuilder`] (asking for one).
//! - Checks: [`validate()`], [`Limits`] (every size an input may claim),
//!   [`Error`] with an [`ErrorKind`].
//! - Beside the format: [`tensor`] (typed views, DLPack), `stats` and
//!   `npy` (cargo features), [`kerchunk`], [`doctor`]; [`view`] (the dataset
//!   view of objects: variables, stacking keys, attributes, grids).
//!
//! `spec/api.md` lists the public items and what stays stable; the
//! book's library guide (docs/src/guide/rust.md) has longer examples.
#![deny(unsafe_code)]
#![warn(missing_docs)]

// Test helpers shared with the integration tests name the crate `tgm`.
#[cfg(test)]
extern crate self as tgm;

mod buffer;
pub mod cbor;
pub mod decode;
pub mod descriptor;
pub mod doctor;
pub mod dtype;
pub mod encode;
pub mod error;
mod exec;
pub mod file;
pub mod geography;
pub mod hash;
pub mod kerchunk;
pub mod limits;
pub mod metadata;
#[cfg(feature = "npy")]
pub mod npy;
pub mod pipeline;
pub mod pipeline_spec;
#[cfg(feature = "remote")]
pub mod remote;
#[cfg(feature = "stats")]
pub mod stats;
pub mod stream;
mod stream_store;
#[cfg(feature = "sz3")]
pub mod sz3_child;
#[cfg(feature = "szip")]
pub mod szip;
pub mod tensor;
pub mod validate;
pub mod view;
pub mod wire;

pub use decode::{
    decode, decode_descriptors, decode_metadata, decode_object, decode_object_into, decode_range,
    DecodeOptions, DecodedMessage, DecodedObject, Message, Object, Verify,
};
pub use descriptor::{Map, ObjectDescriptor};
pub use dtype::{ByteOrder, Dtype};
pub use encode::{
    encode, encode_into, encode_pre_encoded, encode_pre_encoded_to, encode_to,
    encode_to_inspecting, EncodeOptions, HashPolicy,
};
pub use error::{Error, ErrorKind, Result};
pub use file::TgmFile;
pub use limits::Limits;
pub use metadata::{GlobalMetadata, Provenance};
pub use pipeline::PipelineBuilder;
pub use pipeline_spec::PipelineSpec;
pub use stream::StreamingEncoder;
pub use validate::{validate, validate_file};
pub use wire::scan::{scan, MessageSpan};

/// Internals that the fuzz targets and the tests (adversarial inputs,
/// request counts, statistics) reach; no promise of any kind
/// (`spec/api.md` §1).
#[doc(hidden)]
pub mod __fuzz {
    #[cfg(feature = "szip")]
    pub use crate::pipeline::codec::compression::szip::coder_params_of;
    pub use crate::wire::frame::{data_footer_bytes, header_bytes, write_cbor_frame};
    pub use crate::wire::layout::parse_layout;
    pub use crate::wire::scan::{scan_backward, scan_with, Scanner};

    /// Decoding one payload into a caller's buffer (`spec/pipeline.md`
    /// §6.3), which the object-level reads build on.
    pub use crate::pipeline::run::decode::decode_into;

    /// Bytes per parallel run of `stats` (the tests straddle it).
    #[cfg(feature = "stats")]
    pub const STATS_RUN: usize = crate::stats::RUN;

    /// The masks of an object, decoded: `(kind, packed bits)` per kind.
    pub fn decoded_masks(
        desc: &crate::ObjectDescriptor,
        region: &[u8],
    ) -> crate::Result<Vec<(&'static str, Vec<u8>)>> {
        crate::pipeline::decoded_masks(desc, region)
    }

    /// The decoded size of `desc`, checked against the per-object limit.
    pub fn checked_decoded_len(
        desc: &crate::ObjectDescriptor,
        limits: &crate::Limits,
    ) -> crate::Result<u64> {
        crate::pipeline::checked_decoded_len(desc, limits)
    }

    /// The byte-source wrappers and defaults the request-count tests stack.
    pub mod file {
        pub use crate::file::ranges::{Coalescing, HeadCached, DEFAULT_COALESCE_GAP};
        pub use crate::file::source::CountingSource;
        pub use crate::wire::locate::DEFAULT_HEAD_WINDOW;
    }

    /// blosc2, zfp and SZ3, called directly.
    pub mod compressors {
        #[cfg(feature = "blosc2")]
        pub use crate::pipeline::codec::compression::blosc2::{
            blosc2_compress, blosc2_decompress_into, blosc2_decompress_range,
        };
        #[cfg(feature = "sz3")]
        pub use crate::pipeline::codec::compression::sz3::{sz3_compress, sz3_decompress_into};
        #[cfg(feature = "zfp")]
        pub use crate::pipeline::codec::compression::zfp::{
            zfp_compress, zfp_decompress_into, zfp_decompress_range,
        };
    }

    /// The bitmask codecs, called directly.
    pub mod bitcodec {
        pub use crate::pipeline::codec::compression::bitmask::bitcodec::{
            rle_decode_into, rle_encode, roaring_decode_into, roaring_encode,
        };
    }

    /// lz4, called directly.
    #[cfg(feature = "lz4")]
    pub mod lz4_codec {
        pub use crate::pipeline::codec::compression::lz4::{
            lz4_compress, lz4_decompress, lz4_decompress_into,
        };
    }

    /// zstd, called directly.
    #[cfg(feature = "zstd")]
    pub mod zstd_codec {
        pub use crate::pipeline::codec::compression::zstd::{
            zstd_compress, zstd_decompress, zstd_decompress_into,
        };
    }

    /// simple_packing, called directly.
    pub mod simple_packing {
        pub use crate::pipeline::codec::encoding::simple_packing::{decode_into, encode};
    }

    /// The byte shuffle, called directly.
    pub mod shuffle {
        pub use crate::pipeline::codec::filter::shuffle::{shuffle, unshuffle_into};
    }
}

/// The README's Rust examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The Rust examples of the book's library guide, compiled and run as doc
/// tests (mdBook cannot link this crate into its own `mdbook test`).
#[cfg(doctest)]
#[doc = include_str!("../docs/src/guide/rust.md")]
pub struct BookRustDoctests;
