//! An object whose filter is the byte shuffle over encoding none, decoded
//! in order a piece at a time (`spec/pipeline.md` §7, "Pieces of a shuffled
//! object"): the stages above the filter decode whole into one buffer, the
//! shuffled bytes, and each piece is unshuffled from it as it is handed
//! on. Memory holds the object once and one piece, not the shuffled copy
//! beside the decoded one.

use crate::buffer;
use crate::descriptor::ObjectDescriptor;
use crate::dtype::swap_in_place;
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::pipeline_spec::FilterSpec;

use crate::pipeline::{
    checked_decoded_len, decode_into_inner, decoded_masks, masks, out_order, plan, OnPiece,
    PipelineDecodeOptions,
};

/// The shuffle's element size when `desc` is decoded by [`decode`]: its
/// filter is the byte shuffle and its encoding none.
pub(crate) fn element_size(desc: &ObjectDescriptor) -> Option<usize> {
    let pipeline = desc.pipeline();
    match pipeline.filter() {
        FilterSpec::Shuffle(s) if plan::stages(pipeline).encoding.is_identity() => {
            Some(s.element_size)
        }
        _ => None,
    }
}

/// Decodes `desc` (stored in `region`; [`element_size`] is `Some`) in
/// order, in pieces of about `piece_bytes` (a whole number of elements and
/// of shuffle elements) into `buf`, running `f(first, piece)` on each.
/// The pieces are the bytes of a whole decode: in the byte order `opts`
/// asks for, NaN/Inf restored from the masks when it asks.
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode(
    desc: &ObjectDescriptor,
    region: &[u8],
    region_base: u64,
    piece_bytes: usize,
    opts: &PipelineDecodeOptions,
    limits: &Limits,
    buf: &mut Vec<u8>,
    f: &mut OnPiece<'_>,
) -> Result<()> {
    let size = element_size(desc).ok_or_else(|| Error::codec("not a shuffled object"))?;
    let len = usize::try_from(checked_decoded_len(desc, limits)?)
        .map_err(|_| Error::metadata("object too large"))?;
    if size == 0 || !len.is_multiple_of(size) {
        return Err(Error::codec(format!(
            "{len} bytes are not a whole number of {size}-byte elements"
        )));
    }
    // The stages above the filter, into the shuffled bytes, as stored.
    let above = desc.pipeline().without_filter();
    let stored = PipelineDecodeOptions {
        native_byte_order: false,
        restore_non_finite: false,
        ..opts.clone()
    };
    let mut shuffled = buffer::zeroed(len)?;
    decode_into_inner(&above, desc, region, &stored, limits, &mut shuffled)
        .map_err(|e| e.within(region_base))?;
    let order = out_order(desc, opts);
    let swap = desc.byte_order != order && desc.dtype.swap_unit() > 1;
    let restore = match opts.restore_non_finite {
        true => decoded_masks(desc, region).map_err(|e| e.within(region_base))?,
        false => Vec::new(),
    };
    let width = desc.dtype.width().max(1);
    let unit = lcm(size, width);
    let per = (piece_bytes / unit).max(1) * unit;
    let planes = len / size;
    let mut start = 0;
    // Each output byte is read from its plane: the planes are read in
    // step, one run of each per piece.
    while start < len {
        let piece_len = per.min(len - start);
        buf.clear();
        buf.resize(piece_len, 0);
        let first = start / size;
        for (j, element) in buf.chunks_exact_mut(size).enumerate() {
            for (b, byte) in element.iter_mut().enumerate() {
                *byte = shuffled[b * planes + first + j];
            }
        }
        if swap {
            swap_in_place(buf, desc.dtype.swap_unit());
        }
        let first_element = start / width;
        if !restore.is_empty() {
            masks::restore(buf, desc.dtype, order, &restore, first_element);
        }
        f(first_element as u64, buf)?;
        start += piece_len;
    }
    Ok(())
}

fn lcm(a: usize, b: usize) -> usize {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::ByteOrder;
    use crate::{encode, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata};

    #[test]
    fn pieces_of_a_shuffled_object_are_its_whole_decode() {
        for (dtype, order) in [
            (Dtype::Float64, ByteOrder::Little),
            (Dtype::Int16, ByteOrder::Big),
        ] {
            let n = 10_007usize;
            let w = dtype.width();
            let data: Vec<u8> = (0..n * w).map(|i| (i * 31 % 251) as u8).collect();
            let mut d = ObjectDescriptor::new(dtype, vec![n as u64])
                .with_pipeline(&crate::PipelineBuilder::new().shuffle().zstd());
            d.byte_order = order;
            let msg = encode(
                &GlobalMetadata::default(),
                &[(&d, &data)],
                &EncodeOptions::new(),
            )
            .unwrap();
            let m = crate::Message::parse(&msg).unwrap();
            let obj = m.object(0).unwrap();
            for native in [false, true] {
                let opts = DecodeOptions::default().native_byte_order(native);
                let whole = obj.decode(&opts).unwrap().into_owned();
                let mut got = Vec::new();
                let mut buf = Vec::new();
                obj.decode_streaming(&opts, 1000, &mut buf, |first, piece| {
                    assert_eq!(first as usize * w, got.len());
                    assert!(piece.len() <= 1000);
                    got.extend_from_slice(piece);
                    Ok(())
                })
                .unwrap();
                assert_eq!(got, whole, "{dtype:?} {order:?} native {native}");
            }
        }
    }
}
