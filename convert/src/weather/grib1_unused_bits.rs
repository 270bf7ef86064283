//! The count of unused bits a GRIB1 constant field records in its section 4
//! flag octet (`dataFlag`, low four bits), kept as the source wrote it
//! (`spec/convert.md` "GRIB write-back", step 3).
//!
//! A field of no data bits (`bitsPerValue` 0) has nothing for that count to
//! describe, and ecCodes, packing one, records 8 where its own samples and
//! other writers record 0. The count is copied from the source into the
//! header `convert-grib` keeps, and from that header into the message
//! `to-grib` writes; fields with data bits keep ecCodes' count, which their
//! data decides.

use std::borrow::Cow;

use super::ffi::Handle;
use super::GribError;

/// The section 4 flag octet of `h` when it holds a GRIB1 constant field.
pub(super) fn constant_field_flag(h: &Handle) -> Result<Option<u8>, GribError> {
    if h.get_long("edition")? != 1 || h.get_long("bitsPerValue")? != 0 {
        return Ok(None);
    }
    Ok(u8::try_from(h.get_long("dataFlag")?).ok())
}

/// `msg`, the message of `h`, with the unused-bit count of `source` (a flag
/// octet from [`constant_field_flag`]) when `h` holds a GRIB1 constant
/// field; borrowed when nothing changes.
pub(super) fn with_source_count<'m>(
    msg: &'m [u8],
    h: &Handle,
    source: Option<u8>,
) -> Result<Cow<'m, [u8]>, GribError> {
    let Some(source) = source else {
        return Ok(Cow::Borrowed(msg));
    };
    if constant_field_flag(h)?.is_none() {
        return Ok(Cow::Borrowed(msg));
    }
    let at = usize::try_from(h.get_long("offsetSection4")?)
        .ok()
        .and_then(|o| o.checked_add(3))
        .filter(|&at| at < msg.len())
        .ok_or_else(|| GribError::Invalid("section 4 lies outside the GRIB1 message".into()))?;
    let flag = (msg[at] & 0xf0) | (source & 0x0f);
    if flag == msg[at] {
        return Ok(Cow::Borrowed(msg));
    }
    let mut patched = msg.to_vec();
    patched[at] = flag;
    Ok(Cow::Owned(patched))
}
