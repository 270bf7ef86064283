#![doc = include_str!("../README.md")]
#![deny(unsafe_code)]
#![warn(missing_docs)]

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
pub mod hash;
pub mod kerchunk;
pub mod limits;
pub mod metadata;
pub mod npy;
pub mod pipeline;
pub mod pipeline_spec;
#[cfg(feature = "remote")]
pub mod remote;
pub mod stats;
pub mod stream;
mod stream_store;
#[cfg(feature = "szip")]
pub mod szip;
pub mod tensor;
pub mod validate;
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

/// Internals that the fuzz targets and the adversarial tests build inputs
/// with; not part of the supported API.
#[doc(hidden)]
pub mod __fuzz {
    #[cfg(feature = "szip")]
    pub use crate::pipeline::szip_stage::coder_params_of;
    pub use crate::wire::frame::{data_footer_bytes, header_bytes, write_cbor_frame};
    pub use crate::wire::layout::parse_layout;
    pub use crate::wire::scan::{scan_backward, scan_with, Scanner};

    /// The bitmask codecs, called directly.
    pub mod bitcodec {
        pub use crate::pipeline::bitcodec::{
            rle_decode_into, rle_encode, roaring_decode_into, roaring_encode,
        };
    }

    /// lz4, called directly.
    #[cfg(feature = "lz4")]
    pub mod lz4_codec {
        pub use crate::pipeline::lz4_codec::{lz4_compress, lz4_decompress, lz4_decompress_into};
    }

    /// zstd, called directly.
    #[cfg(feature = "zstd")]
    pub mod zstd_codec {
        pub use crate::pipeline::zstd_codec::{
            zstd_compress, zstd_decompress, zstd_decompress_into,
        };
    }

    /// simple_packing, called directly.
    pub mod simple_packing {
        pub use crate::pipeline::simple_packing::{decode_into, encode};
    }

    /// The byte shuffle, called directly.
    pub mod shuffle {
        pub use crate::pipeline::shuffle::{shuffle, unshuffle_into};
    }
}
