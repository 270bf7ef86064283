//! The compression stages (`spec/pipeline.md` §4): `none` is the identity
//! ([`super::none`]).

pub(crate) mod bitmask;
pub(crate) mod blosc2;
#[cfg(any(feature = "zfp", feature = "sz3"))]
mod float64_stream;
pub(crate) mod lz4;
pub(crate) mod sz3;
pub(crate) mod szip;
pub(crate) mod zfp;
pub(crate) mod zstd;
