#![doc = include_str!("../README.md")]
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod buffer;
pub mod cbor;
pub mod decode;
pub mod descriptor;
pub mod dtype;
pub mod encode;
pub mod error;
pub mod file;
pub mod hash;
pub mod limits;
pub mod metadata;
pub mod npy;
pub mod pipeline;
pub mod stream;
pub mod szip;
pub mod tensor;
pub mod wire;

pub use decode::{
    decode, decode_descriptors, decode_metadata, decode_object, decode_object_into, decode_range,
    DecodeOptions, DecodedMessage, DecodedObject, Message, Object, Verify,
};
pub use descriptor::{Map, ObjectDescriptor};
pub use dtype::{ByteOrder, Dtype};
pub use encode::{encode, encode_into, EncodeOptions, HashPolicy};
pub use error::{Error, ErrorKind, Result};
pub use file::TgmFile;
pub use limits::Limits;
pub use metadata::{GlobalMetadata, Provenance};
pub use pipeline::{Pipeline, PipelineBuilder};
pub use stream::StreamingEncoder;
pub use wire::scan::{scan, MessageSpan};

/// Internals that the fuzz targets and the adversarial tests build inputs
/// with; not part of the supported API.
#[doc(hidden)]
pub mod __fuzz {
    pub use crate::wire::frame::{data_footer_bytes, header_bytes, write_cbor_frame};
}
