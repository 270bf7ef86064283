//! The szip (CCSDS 121.0-B-3 AEC) coder, bit-identical to libaec: the
//! workspace crate [`tgm_szip`] (cargo feature `szip`), re-exported with
//! the calls a caller of tgm needs. See `spec/szip.md`.
//!
//! Parallel encoding and decoding run on the current rayon pool; through
//! tgm's pipeline that is the pool of the call's thread budget
//! (`spec/pipeline.md` §6.4).

pub use tgm_szip::{
    any_negative, decode_into, decode_parallel_into, decode_range_into, decode_ranges_into,
    decoded_extent, encode, encode_parallel, encode_samples, encode_with, flags, SampleSource,
    SzipParams, SzipProfile,
};
pub(crate) use tgm_szip::{
    decode_codes_from, decode_pieces, rsi_chain_holds, rsis_per_run, Containers,
};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coder_errors_keep_their_kind_detail_and_offset() {
        let p = SzipParams {
            bits_per_sample: 16,
            block_size: 16,
            rsi: 4,
            flags: flags::PREPROCESS,
        };
        let input: Vec<u8> = (0..4000u32)
            .flat_map(|i| (i as u16 * 7).to_le_bytes())
            .collect();
        let (stream, _) = encode(&input, &p).unwrap();
        let mut out = vec![0u8; input.len()];
        let cut = decode_into(&stream[..stream.len() / 2], &p, &mut out).unwrap_err();
        let e = Error::from(cut.clone());
        assert_eq!(e.kind(), &ErrorKind::Codec);
        assert_eq!(e.offset(), cut.offset());
        assert!(e.offset().is_some());
        assert_eq!(e.to_string(), cut.to_string());
        let bad = SzipParams { rsi: 0, ..p };
        let e = Error::from(bad.validate().unwrap_err());
        assert_eq!(e.kind(), &ErrorKind::Metadata);
        let pad = SzipParams {
            flags: flags::PAD_RSI,
            ..p
        };
        let e = Error::from(encode(&input, &pad).unwrap_err());
        assert_eq!(e.kind(), &ErrorKind::UnsupportedCodec);
        let e = Error::from(decode_range_into(&stream, &p, &[0], 8, 4, &mut [0u8; 8]).unwrap_err());
        assert_eq!(e.kind(), &ErrorKind::InvalidArgument);
    }
}
