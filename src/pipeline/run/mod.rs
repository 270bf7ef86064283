//! Running a pipeline over one object, one module per job: encoding,
//! decoding whole, the fused one-pass decode, range decoding, and decoding
//! in pieces handed to a caller. See `spec/pipeline.md` §6 and §7.

pub(crate) mod decode;
pub(crate) mod encode;
mod fused;
pub(crate) mod pieces;
pub(crate) mod range;
