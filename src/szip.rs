//! The szip (CCSDS 121.0-B-3 AEC) coder, bit-identical to libaec: the
//! workspace crate [`tgm_szip`] (cargo feature `szip`), re-exported with
//! the calls a caller of tgm needs. See `spec/szip.md`.
//!
//! Parallel encoding and decoding run on the current rayon pool; through
//! tgm's pipeline that is the pool of the call's thread budget
//! (`spec/pipeline.md` §6.4).

pub use tgm_szip::{
    decode_into, decode_parallel_into, decode_range_into, encode, encode_parallel, encode_with,
    flags, SzipParams, SzipProfile,
};
pub(crate) use tgm_szip::{decode_pieces, decode_pieces_from, rsi_chain_holds, rsis_per_run};

use crate::error::{Error, ErrorKind};

impl From<tgm_szip::Error> for Error {
    /// Keeps the detail and the offset; the kind says who is at fault in
    /// tgm's terms (`spec/format.md` §9).
    fn from(e: tgm_szip::Error) -> Self {
        let kind = match e.kind() {
            tgm_szip::ErrorKind::InvalidParams => ErrorKind::Metadata,
            tgm_szip::ErrorKind::Unsupported => ErrorKind::UnsupportedCodec,
            tgm_szip::ErrorKind::OutOfRange => ErrorKind::InvalidArgument,
            tgm_szip::ErrorKind::Alloc => ErrorKind::InvalidInput,
            _ => ErrorKind::Codec,
        };
        let out = Error::new(kind, e.detail());
        match e.offset() {
            Some(o) => out.at(o),
            None => out,
        }
    }
}
