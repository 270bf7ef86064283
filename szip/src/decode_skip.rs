//! Finding where an RSI ends without decoding its samples: the block
//! structure of `spec/szip.md` §3 read with the same checks as the decoder,
//! skipping what only a sample value needs (the low bits of split blocks,
//! raw samples, the reference sample, FS codeword values). Used to confirm
//! stored RSI offsets and to finish an RSI decoded only in part (§5).

use super::bitreader::BitReader;
use super::decode::{read_se_codes, zero_run};
use super::{flags, SzipParams};
use crate::error::{Error, Result};

/// Moves `r` from a block start inside an RSI of `len` samples, of which
/// `used` are read, to the RSI's end. Ends at the bit position the decoder
/// ends at, and fails exactly when decoding those blocks fails.
pub(crate) fn skip_rsi(
    r: &mut BitReader<'_>,
    p: &SzipParams,
    mut used: usize,
    len: usize,
) -> Result<()> {
    if p.flags & flags::PAD_RSI != 0 {
        return Err(Error::unsupported(
            "szip streams with PAD_RSI are not supported yet",
        ));
    }
    let j = p.block_size as usize;
    let bits = p.bits_per_sample;
    let id_len = p.id_len();
    let id_max = (1u32 << id_len) - 1;
    let pp = p.flags & flags::PREPROCESS != 0;
    let mut se = [0u32; 32];
    let mut se_long = Vec::new();
    while used < len {
        let at = r.pos();
        let reference = pp && used == 0;
        let id = r.bits(id_len)?;
        if id == 0 {
            let second_extension = r.bits(1)? == 1;
            if reference {
                r.skip(bits.into())?;
                used += 1;
            }
            if second_extension {
                let codes = if j / 2 <= se.len() {
                    &mut se[..j / 2]
                } else {
                    se_long.resize(j / 2, 0);
                    &mut se_long[..]
                };
                read_se_codes(r, codes, at)?;
                used += j - usize::from(reference);
            } else {
                used += zero_run(r, p, used, reference, at)?;
            }
        } else if id == id_max {
            r.skip(j as u64 * u64::from(bits))?;
            used += j;
        } else {
            let k = u64::from(id - 1);
            if reference {
                r.skip(bits.into())?;
            }
            let m = j - usize::from(reference);
            r.skip_fs(m)?;
            if k > 0 {
                r.skip(m as u64 * k)?;
            }
            used += j;
        }
    }
    Ok(())
}

/// Where the RSI of `len` samples starting at bit `start` of `input` ends.
pub(crate) fn rsi_end(input: &[u8], p: &SzipParams, start: u64, len: usize) -> Result<u64> {
    let mut r = BitReader::new(input, start);
    skip_rsi(&mut r, p, 0, len)?;
    Ok(r.pos())
}
