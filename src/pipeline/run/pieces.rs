//! An object decoded in order a piece at a time into one caller-owned
//! buffer (`spec/pipeline.md` §7, "Pieces"): range by range when every
//! stage decodes a range, or, for zstd over the encodings none and
//! simple_packing with no filter, by streaming the frame through libzstd's
//! stream decoder into a buffer of one piece.

use crate::descriptor::ObjectDescriptor;
use crate::dtype::Dtype;
use crate::error::{Error, ErrorKind, Result};
use crate::limits::Limits;

use crate::pipeline::{plan, PipelineDecodeOptions};

/// What [`decode_pieces`] runs on each piece: its first element and bytes.
pub type OnPiece<'f> = dyn FnMut(u64, &[u8]) -> Result<()> + 'f;

/// Whether [`decode_pieces`] decodes `desc` a piece at a time: every stage
/// decodes a range ([`crate::pipeline::decodes_by_range`]), or the pipeline is zstd
/// over none or simple_packing with no filter (a build with libzstd,
/// feature `zstd`), whose frame is streamed (`spec/pipeline.md` §7).
pub fn decodes_in_pieces(desc: &ObjectDescriptor) -> bool {
    crate::pipeline::decodes_by_range(desc) || streams_zstd(desc)
}

/// Whether `desc` is decoded in pieces by streaming its zstd frame.
fn streams_zstd(desc: &ObjectDescriptor) -> bool {
    let s = plan::stages(desc.pipeline());
    cfg!(feature = "zstd")
        && desc.dtype != Dtype::Bitmask
        && s.compression.name() == "zstd"
        && s.filter.is_identity()
        && (s.encoding.is_identity() || s.encoding.name() == "simple_packing")
}

/// Decodes the object of `desc` stored in `region` in order, a piece of a
/// power of two elements, at most `piece_bytes` (but at least one element,
/// eight when zstd is streamed, so a piece of codes of any width is whole
/// bytes), at a time, into `buf` (cleared, then reused), running
/// `f(first, piece)` on each. The pieces are the bytes of a whole decode
/// (`spec/pipeline.md` §7). A pipeline that decodes in no pieces
/// ([`decodes_in_pieces`]) is a range-not-supported error before `f` runs;
/// a zstd stream decoding to another length than the descriptor implies
/// is a codec error, at the latest after the last piece.
#[allow(clippy::too_many_arguments)]
pub fn decode_pieces(
    desc: &ObjectDescriptor,
    region: &[u8],
    region_base: u64,
    piece_bytes: usize,
    opts: &PipelineDecodeOptions,
    limits: &Limits,
    buf: &mut Vec<u8>,
    f: &mut OnPiece<'_>,
) -> Result<()> {
    let by_range = crate::pipeline::decodes_by_range(desc);
    if !by_range && !streams_zstd(desc) {
        return Err(Error::new(
            ErrorKind::RangeNotSupported,
            format!(
                "encoding {}, filter {}, compression {} cannot be decoded a piece at a time",
                desc.encoding(),
                desc.filter(),
                desc.compression()
            ),
        ));
    }
    crate::pipeline::checked_decoded_len(desc, limits)?;
    let n = desc.num_elements()?;
    let w = desc.dtype.width().max(1);
    let per = piece_elements(piece_bytes / w, if by_range { 1 } else { 8 });
    let len =
        usize::try_from(per.min(n) * w as u64).map_err(|_| Error::metadata("piece too large"))?;
    buf.clear();
    buf.try_reserve_exact(len)
        .map_err(|_| Error::invalid_argument(format!("cannot allocate {len} bytes")))?;
    buf.resize(len, 0);
    if by_range {
        let mut first = 0;
        while first < n {
            let count = per.min(n - first);
            let out = &mut buf[..(count * w as u64) as usize];
            crate::pipeline::decode_range_into(
                desc,
                region,
                region_base,
                first,
                opts,
                limits,
                out,
            )?;
            f(first, out)?;
            first += count;
        }
        return Ok(());
    }
    #[cfg(feature = "zstd")]
    return zstd_pieces::decode(desc, region, per, opts, limits, buf, f)
        .map_err(|e| e.within(region_base));
    #[cfg(not(feature = "zstd"))]
    unreachable!("streams_zstd needs the zstd feature")
}

/// Decodes the object of `desc` stored in `region` in order, handing
/// `f(first, piece)` pieces of about `piece_bytes` in `buf` whatever its
/// pipeline (`spec/pipeline.md` §7, "Streaming"): as [`decode_pieces`] when
/// it decodes in pieces; for the byte shuffle over encoding none, the
/// stages above the filter decoded whole and each piece unshuffled from
/// them; otherwise decoded whole and handed on in pieces. The pieces are
/// the bytes of a whole decode.
#[allow(clippy::too_many_arguments)]
pub fn decode_streaming(
    desc: &ObjectDescriptor,
    region: &[u8],
    region_base: u64,
    piece_bytes: usize,
    opts: &PipelineDecodeOptions,
    limits: &Limits,
    buf: &mut Vec<u8>,
    f: &mut OnPiece<'_>,
) -> Result<()> {
    if decodes_in_pieces(desc) {
        return decode_pieces(desc, region, region_base, piece_bytes, opts, limits, buf, f);
    }
    if crate::pipeline::codec::filter::shuffle::unshuffle_pieces::element_size(desc).is_some() {
        return crate::pipeline::codec::filter::shuffle::unshuffle_pieces::decode(
            desc,
            region,
            region_base,
            piece_bytes,
            opts,
            limits,
            buf,
            f,
        );
    }
    let whole = crate::pipeline::decode(desc, region, region_base, opts, limits)?;
    let width = desc.dtype.width().max(1);
    let per = (piece_bytes / width).max(1) * width;
    for (k, piece) in whole.chunks(per).enumerate() {
        f((k * per / width) as u64, piece)?;
    }
    Ok(())
}

/// The largest power of two not above `per`, and at least `least`.
fn piece_elements(per: usize, least: usize) -> u64 {
    let per = per.max(least).max(1);
    (1u64 << (usize::BITS - 1 - per.leading_zeros())).max(least as u64)
}

#[cfg(feature = "zstd")]
mod zstd_pieces {
    use zstd::zstd_safe::{DCtx, DParameter, InBuffer, OutBuffer};

    use crate::descriptor::ObjectDescriptor;
    use crate::dtype::{swap_in_place, ByteOrder};
    use crate::error::{Error, Result};
    use crate::limits::Limits;
    use crate::pipeline::{
        base_context, checked_decoded_len, decoded_masks, masks, out_order, payload_of, plan,
        PipelineDecodeOptions, Step,
    };

    use super::OnPiece;

    /// [`super::decode_pieces`] of a zstd pipeline: the frame streamed
    /// into the encoded bytes of one piece of `per` elements at a time,
    /// each then unpacked (simple_packing) or byte-swapped into `buf`.
    pub(super) fn decode(
        desc: &ObjectDescriptor,
        region: &[u8],
        per: u64,
        opts: &PipelineDecodeOptions,
        limits: &Limits,
        buf: &mut [u8],
        f: &mut OnPiece<'_>,
    ) -> Result<()> {
        let expected = checked_decoded_len(desc, limits)?;
        let stages = plan::stages(desc.pipeline());
        let payload = payload_of(desc, region)?;
        let order = out_order(desc, opts);
        let base = base_context(desc, order, 0)?;
        let cx = plan::contexts(stages, base, expected, payload.len() as u64)?;
        let (n, w) = (cx[0].num_elements, desc.dtype.width() as u64);
        let bits = u64::from(cx[1].sample_bits);
        let as_is = stages.encoding.is_identity();
        // The encoded bytes ending element `e`; `per` is a multiple of 8,
        // so every piece but the last starts and ends on a byte.
        let end_of = |e: u64| {
            e.checked_mul(bits)
                .map(|b| b.div_ceil(8))
                .ok_or_else(|| Error::metadata("element count overflows"))
        };
        let total = cx[2].decoded_len;
        let mut frames = Frames::new(payload, total)?;
        let mut encoded = if as_is {
            Vec::new()
        } else {
            crate::buffer::zeroed(end_of(per.min(n))? as usize)?
        };
        let masks_bits = if opts.restore_non_finite {
            decoded_masks(desc, region)?
        } else {
            Vec::new()
        };
        let mut first = 0;
        while first < n {
            let count = per.min(n - first);
            let (a, b) = (end_of(first)?, end_of(first + count)?);
            let out = &mut buf[..(count * w) as usize];
            if as_is {
                frames.fill(out)?;
                if opts.native_byte_order
                    && desc.byte_order != ByteOrder::native()
                    && desc.dtype.swap_unit() > 1
                {
                    swap_in_place(out, desc.dtype.swap_unit());
                }
            } else {
                let piece = &mut encoded[..(b - a) as usize];
                frames.fill(piece)?;
                let read = |x: u64, y: u64| {
                    let at = |v: u64| v.checked_sub(a).map(|v| v as usize);
                    at(x)
                        .zip(at(y))
                        .and_then(|(x, y)| piece.get(x..y))
                        .map(std::borrow::Cow::Borrowed)
                        .ok_or_else(|| Error::codec("packed range lies outside the piece"))
                };
                stages
                    .encoding
                    .decode_range_into(&read, &cx[0], first * w, out)?;
            }
            if !masks_bits.is_empty() {
                masks::restore(out, desc.dtype, order, &masks_bits, first as usize);
            }
            f(first, out)?;
            first += count;
            // The stream is read once, in order: what is behind the
            // decoder is read for good (`spec/pipeline.md` §6.7).
            opts.progress.advance(Step {
                done: first * w,
                total: expected,
                read: frames.pos as u64,
            });
        }
        frames.finish()
    }

    /// The largest window (log2) the stream decoder accepts: libzstd's
    /// default limit of 128 MiB, or the decoded size when that is larger
    /// (a window never needs to exceed what the frame decodes to).
    fn window_log_max(total: u64) -> u32 {
        let log = 64 - total.saturating_sub(1).leading_zeros();
        log.clamp(27, 31)
    }

    /// A zstd stream (one or more frames) of `total` decoded bytes, read
    /// in order by libzstd's stream decoder.
    struct Frames<'p> {
        d: DCtx<'static>,
        src: &'p [u8],
        /// Bytes of `src` read.
        pos: usize,
        /// Decoded bytes handed out.
        done: u64,
        total: u64,
        /// The decoder's last answer: 0 when a frame has just ended.
        hint: usize,
    }

    fn corrupt(code: zstd::zstd_safe::ErrorCode) -> Error {
        let name = zstd::zstd_safe::get_error_name(code);
        Error::codec(format!("zstd stream corrupt: {name}"))
    }

    impl<'p> Frames<'p> {
        /// A decoder over `src`; a single frame whose header records a
        /// content size other than `total` is refused here, before any
        /// piece.
        fn new(src: &'p [u8], total: u64) -> Result<Self> {
            use zstd::zstd_safe::{find_frame_compressed_size, get_frame_content_size};
            let one_frame = find_frame_compressed_size(src).ok() == Some(src.len());
            if let (true, Ok(Some(size))) = (one_frame, get_frame_content_size(src)) {
                if size != total {
                    return Err(Error::codec(format!(
                        "zstd frame records {size} bytes, descriptor implies {total}"
                    )));
                }
            }
            let mut d =
                DCtx::try_create().ok_or_else(|| Error::codec("cannot create a zstd decoder"))?;
            d.set_parameter(DParameter::WindowLogMax(window_log_max(total)))
                .map_err(corrupt)?;
            Ok(Frames {
                d,
                src,
                pos: 0,
                done: 0,
                total,
                hint: 0,
            })
        }

        fn ends_early(&self, at: u64) -> Error {
            Error::codec(format!(
                "zstd stream decoded to {at} bytes, descriptor implies {}",
                self.total
            ))
        }

        /// Fills `dst` with the next decoded bytes.
        fn fill(&mut self, dst: &mut [u8]) -> Result<()> {
            let mut filled = 0;
            while filled < dst.len() {
                let mut ob = OutBuffer::around(&mut dst[filled..]);
                let mut ib = InBuffer::around(&self.src[self.pos..]);
                self.hint = self
                    .d
                    .decompress_stream(&mut ob, &mut ib)
                    .map_err(corrupt)?;
                let (read, wrote) = (ib.pos(), ob.pos());
                if read == 0 && wrote == 0 {
                    return Err(self.ends_early(self.done + filled as u64));
                }
                self.pos += read;
                filled += wrote;
            }
            self.done += filled as u64;
            Ok(())
        }

        /// Reads the rest of the stream, which must decode to nothing more
        /// and end on a frame's end.
        fn finish(mut self) -> Result<()> {
            let mut spare = [0u8; 1];
            while self.pos < self.src.len() || self.hint != 0 {
                let mut ob = OutBuffer::around(&mut spare[..]);
                let mut ib = InBuffer::around(&self.src[self.pos..]);
                self.hint = self
                    .d
                    .decompress_stream(&mut ob, &mut ib)
                    .map_err(corrupt)?;
                if ob.pos() > 0 {
                    return Err(Error::codec(format!(
                        "zstd stream decodes to more than the {} bytes the descriptor implies",
                        self.total
                    )));
                }
                if ib.pos() == 0 {
                    return Err(Error::codec("zstd stream truncated"));
                }
                self.pos += ib.pos();
            }
            Ok(())
        }
    }
}
