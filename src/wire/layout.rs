//! The frame walk: locating every frame of one message without decoding
//! payloads. See `spec/format.md` §2 and §3.4.

use super::frame::{parse_frame, Frame};
use super::header::{Cursor, Postamble};
use super::{
    align_up, FrameType, Phase, FRAME_MAGIC, MIN_MESSAGE_LEN, POSTAMBLE_LEN, PREAMBLE_LEN,
};
use crate::error::{Error, ErrorKind, Result};
use crate::limits::Limits;

pub use super::header::Preamble;

/// Parses and checks the preamble at the start of `buf`.
pub fn read_preamble(buf: &[u8], base: u64) -> Result<Preamble> {
    Preamble::read(Cursor::new(buf, base))
}

/// A data frame with the preceder metadata frame written directly before it, if any.
#[derive(Debug, Clone, Copy)]
pub struct ObjectFrames<'a> {
    /// The data-object frame (type 9).
    pub data: Frame<'a>,
    /// Its preceder (type 8), if present.
    pub preceder: Option<Frame<'a>>,
}

/// Every frame of one message, borrowed from the input.
#[derive(Debug, Clone)]
pub struct MessageLayout<'a> {
    /// The message bytes, from `TENSOGRM` to the end magic.
    pub bytes: &'a [u8],
    /// Absolute offset of the message in the input.
    pub base: u64,
    /// The preamble.
    pub preamble: Preamble,
    /// Header metadata frame (type 1).
    pub header_metadata: Option<Frame<'a>>,
    /// Header index frame (type 2).
    pub header_index: Option<Frame<'a>>,
    /// Header hash frame (type 3).
    pub header_hash: Option<Frame<'a>>,
    /// Footer hash frame (type 5).
    pub footer_hash: Option<Frame<'a>>,
    /// Footer index frame (type 6).
    pub footer_index: Option<Frame<'a>>,
    /// Footer metadata frame (type 7).
    pub footer_metadata: Option<Frame<'a>>,
    /// Data objects in order.
    pub objects: Vec<ObjectFrames<'a>>,
    /// The postamble's first_footer_offset (advisory).
    pub first_footer_offset: u64,
}

impl<'a> MessageLayout<'a> {
    /// The metadata frame that describes the message: the footer copy when
    /// present (it is the complete one in streaming messages), else the header.
    pub fn metadata_frame(&self) -> Option<Frame<'a>> {
        self.footer_metadata.or(self.header_metadata)
    }

    /// The index frame, header first.
    pub fn index_frame(&self) -> Option<Frame<'a>> {
        self.header_index.or(self.footer_index)
    }

    /// The hash frame, header first.
    pub fn hash_frame(&self) -> Option<Frame<'a>> {
        self.header_hash.or(self.footer_hash)
    }

    /// Every frame in wire order.
    pub fn frames(&self) -> Vec<Frame<'a>> {
        let mut v: Vec<Frame<'a>> = [self.header_metadata, self.header_index, self.header_hash]
            .into_iter()
            .flatten()
            .collect();
        for o in &self.objects {
            v.extend(o.preceder);
            v.push(o.data);
        }
        v.extend(
            [self.footer_hash, self.footer_index, self.footer_metadata]
                .into_iter()
                .flatten(),
        );
        v.sort_by_key(|f| f.offset());
        v
    }
}

/// Walks the message at the start of `buf` (which may continue past it).
///
/// With a declared length the message is `buf[..total_length]`; a streaming
/// message (length 0) ends at the postamble found by walking the frames.
pub fn parse_layout<'a>(buf: &'a [u8], base: u64, limits: &Limits) -> Result<MessageLayout<'a>> {
    let preamble = read_preamble(buf, base)?;
    let declared = preamble.total_length;
    let frames_end = if declared > 0 {
        if declared < MIN_MESSAGE_LEN as u64 {
            return Err(Error::framing(format!(
                "message total_length {declared} below the minimum 48"
            ))
            .at(base + 16));
        }
        if declared > limits.max_message_len {
            return Err(
                Error::limit("max_message_len", declared, limits.max_message_len).at(base + 16),
            );
        }
        if declared > buf.len() as u64 {
            return Err(Error::truncated(format!(
                "message total_length {declared} exceeds the {} bytes available",
                buf.len()
            ))
            .at(base + 16));
        }
        let end = declared as usize;
        check_postamble(buf, end - POSTAMBLE_LEN, base, Some(declared))?;
        end - POSTAMBLE_LEN
    } else {
        buf.len()
            .saturating_sub(POSTAMBLE_LEN)
            .min(usize::try_from(limits.max_message_len).unwrap_or(usize::MAX))
    };

    let mut layout = MessageLayout {
        bytes: &buf[..0],
        base,
        preamble,
        header_metadata: None,
        header_index: None,
        header_hash: None,
        footer_hash: None,
        footer_index: None,
        footer_metadata: None,
        objects: Vec::new(),
        first_footer_offset: 0,
    };
    let mut pos = PREAMBLE_LEN;
    let mut phase = Phase::Header;
    let mut pending_preceder: Option<Frame<'a>> = None;
    let mut frames = 0usize;
    let postamble_at = loop {
        if declared > 0 && pos >= frames_end {
            break frames_end;
        }
        let is_frame = buf.get(pos..pos + 2) == Some(&FRAME_MAGIC[..]);
        if !is_frame {
            if declared == 0 && Postamble::peek(buf.get(pos..).unwrap_or_default()).is_some() {
                check_postamble(buf, pos, base, None)?;
                break pos;
            }
            if declared == 0 && pos >= frames_end {
                return Err(
                    Error::truncated("streaming message has no postamble").at(base + pos as u64)
                );
            }
            return Err(Error::new(
                ErrorKind::BadMagic,
                "expected frame magic \"FR\" or the postamble",
            )
            .at(base + pos as u64));
        }
        frames += 1;
        if frames > limits.max_frames {
            return Err(
                Error::limit("max_frames", frames as u64, limits.max_frames as u64)
                    .at(base + pos as u64),
            );
        }
        let f = parse_frame(buf, pos, frames_end, base)?;
        let at = f.abs_offset();
        let fphase = f.ftype().phase();
        if fphase < phase {
            return Err(
                Error::framing(format!("{:?} frame after the {phase:?} phase", f.ftype())).at(at),
            );
        }
        phase = fphase;
        if pending_preceder.is_some() && f.ftype() != FrameType::DataObject {
            return Err(
                Error::framing("preceder metadata frame not followed by a data frame").at(at),
            );
        }
        match f.ftype() {
            FrameType::DataObject => {
                if layout.objects.len() >= limits.max_objects {
                    return Err(Error::limit(
                        "max_objects",
                        layout.objects.len() as u64 + 1,
                        limits.max_objects as u64,
                    )
                    .at(at));
                }
                layout.objects.push(ObjectFrames {
                    data: f,
                    preceder: pending_preceder.take(),
                });
            }
            FrameType::PrecederMetadata => pending_preceder = Some(f),
            t => {
                let slot = match t {
                    FrameType::HeaderMetadata => &mut layout.header_metadata,
                    FrameType::HeaderIndex => &mut layout.header_index,
                    FrameType::HeaderHash => &mut layout.header_hash,
                    FrameType::FooterHash => &mut layout.footer_hash,
                    FrameType::FooterIndex => &mut layout.footer_index,
                    _ => &mut layout.footer_metadata,
                };
                if slot.is_some() {
                    return Err(Error::framing(format!("duplicate {t:?} frame")).at(at));
                }
                *slot = Some(f);
            }
        }
        let next = align_up((pos + f.total_len()) as u64) as usize;
        pos = if declared > 0 {
            next.min(frames_end)
        } else {
            next
        };
    };
    if pending_preceder.is_some() {
        return Err(
            Error::framing("preceder metadata frame at the end of the body")
                .at(base + postamble_at as u64),
        );
    }
    if layout.header_metadata.is_none() && layout.footer_metadata.is_none() {
        return Err(Error::metadata("message has no metadata frame").at(base));
    }
    check_flags_cover_frames(&layout)?;
    layout.bytes = &buf[..postamble_at + POSTAMBLE_LEN];
    layout.first_footer_offset =
        Postamble::peek(&buf[postamble_at..]).map_or(0, |p| p.first_footer_offset);
    Ok(layout)
}

/// Every frame kind present must be announced by its preamble flag. Flags
/// may over-promise (writers set some unconditionally) but never
/// under-promise; a frame whose type byte was altered is caught here, since
/// frame headers are not covered by hashes (`spec/format.md` §2.3).
fn check_flags_cover_frames(l: &MessageLayout<'_>) -> Result<()> {
    use super::message_flags as mf;
    let present = [
        (l.header_metadata, mf::HEADER_METADATA),
        (l.footer_metadata, mf::FOOTER_METADATA),
        (l.header_index, mf::HEADER_INDEX),
        (l.footer_index, mf::FOOTER_INDEX),
        (l.header_hash, mf::HEADER_HASHES),
        (l.footer_hash, mf::FOOTER_HASHES),
        (
            l.objects.iter().find_map(|o| o.preceder),
            mf::PRECEDER_METADATA,
        ),
    ];
    for (frame, flag) in present {
        if let Some(f) = frame {
            if l.preamble.flags & flag == 0 {
                return Err(Error::framing(format!(
                    "{:?} frame present but the preamble flags (0x{:04x}) do not announce it",
                    f.ftype(),
                    l.preamble.flags
                ))
                .at(f.abs_offset()));
            }
        }
    }
    Ok(())
}

/// Checks the postamble at `pos`: end magic, and a mirrored length of 0 or
/// the message's length (`declared`, or where this postamble ends).
fn check_postamble(buf: &[u8], pos: usize, base: u64, declared: Option<u64>) -> Result<()> {
    let c = Cursor::new(buf.get(pos..).unwrap_or_default(), base + pos as u64);
    let post = Postamble::read(c)?;
    post.check_length(declared.unwrap_or((pos + POSTAMBLE_LEN) as u64), c.abs(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{encode, DecodeOptions, Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor};

    fn sample() -> Vec<u8> {
        let d = ObjectDescriptor::new(Dtype::Uint16, vec![3]);
        let d2 = ObjectDescriptor::new(Dtype::Int8, vec![2]);
        encode(
            &GlobalMetadata::default(),
            &[(&d, &[1, 0, 2, 0, 3, 0][..]), (&d2, &[9, 8][..])],
            &EncodeOptions::new(),
        )
        .unwrap()
    }

    fn parse(b: &[u8]) -> Result<MessageLayout<'_>> {
        parse_layout(b, 1000, &Limits::default())
    }

    fn set_u64(b: &mut [u8], at: usize, v: u64) {
        b[at..at + 8].copy_from_slice(&v.to_be_bytes());
    }

    #[test]
    fn every_truncation_is_an_error_with_offset() {
        let m = sample();
        for n in 0..m.len() {
            let e = parse(&m[..n]).unwrap_err();
            assert!(e.offset().is_some(), "prefix {n}: {e}");
        }
    }

    #[test]
    fn rejects_wrong_magic_and_version() {
        let mut m = sample();
        m[0] = b'X';
        assert_eq!(parse(&m).unwrap_err().kind(), &ErrorKind::BadMagic);
        let mut m = sample();
        m[9] = 2;
        let e = parse(&m).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::UnsupportedVersion(2));
        assert_eq!(e.offset(), Some(1008));
    }

    #[test]
    fn rejects_mis_sized_messages() {
        let m = sample();
        for bad in [1u64, 47, m.len() as u64 - 8, m.len() as u64 + 8, u64::MAX] {
            let mut b = m.clone();
            set_u64(&mut b, 16, bad);
            assert!(parse(&b).is_err(), "total_length {bad}");
        }
        let mut b = m.clone();
        let n = b.len();
        set_u64(&mut b, n - 16, 12345);
        assert_eq!(parse(&b).unwrap_err().kind(), &ErrorKind::Framing);
    }

    #[test]
    fn rejects_overflowing_and_undersized_frames() {
        let m = sample();
        let l = parse(&m).unwrap();
        let f = l.objects[0].data.offset();
        for bad in [0u64, 35, (m.len() - f) as u64, u64::MAX] {
            let mut b = m.clone();
            set_u64(&mut b, f + 8, bad);
            let e = parse(&b).unwrap_err();
            assert!(e.offset().is_some(), "frame length {bad}: {e}");
        }
    }

    #[test]
    fn rejects_out_of_order_frames() {
        // Swap the header metadata frame type with footer metadata (7): a
        // footer frame before data frames is a phase regression.
        let mut b = sample();
        b[24 + 3] = 7;
        let e = parse(&b).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::Framing);
        assert!(e.offset().is_some());
        // Retired and unknown frame types.
        for t in [0u8, 4, 10, 255] {
            let mut b = sample();
            b[24 + 3] = t;
            assert!(parse(&b).is_err(), "type {t}");
        }
    }

    #[test]
    fn rejects_index_that_disagrees_with_frames() {
        let m = sample();
        let l = parse(&m).unwrap();
        let idx = l.header_index.unwrap();
        // Point the first index offset one frame further (same CBOR width).
        let body_start = idx.offset() + 16;
        let cbor = idx.cbor().to_vec();
        let t = crate::wire::tables::IndexTable::from_cbor(&cbor, 0, &Limits::default()).unwrap();
        let mut t2 = t.clone();
        t2.offsets[0] += 8;
        let c2 = t2.to_cbor();
        assert_eq!(c2.len(), cbor.len());
        let mut b = m.clone();
        b[body_start..body_start + c2.len()].copy_from_slice(&c2);
        let opts = DecodeOptions::default().verify(crate::Verify::Off);
        let e = crate::decode(&b, &opts).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::Framing);
        // O(1) access through the index also refuses it.
        assert!(crate::decode_object(&b, 0, &opts).is_err());
    }

    #[test]
    fn absurd_shapes_fail_before_allocation() {
        // 2^60 elements declared in a ~200-byte message.
        let mut d = ObjectDescriptor::new(Dtype::Float64, vec![1]);
        d.shape = vec![1 << 30, 1 << 30];
        d.strides = vec![1 << 30, 1];
        let desc = d.to_cbor();
        let mut frame = Vec::new();
        frame.extend_from_slice(&crate::wire::frame::header_bytes(
            FrameType::DataObject,
            1,
            (16 + desc.len() + 20) as u64,
        ));
        frame.extend_from_slice(&desc);
        frame.extend_from_slice(&crate::wire::frame::data_footer_bytes(16, 0));
        let mut msg = Vec::new();
        crate::encode::write_preamble(&mut msg, 1, 0);
        crate::wire::frame::write_cbor_frame(&mut msg, FrameType::HeaderMetadata, &[0xa0], false);
        msg.resize(crate::wire::align_up(msg.len() as u64) as usize, 0);
        msg.extend_from_slice(&frame);
        msg.resize(crate::wire::align_up(msg.len() as u64) as usize, 0);
        let total = msg.len() as u64 + 24;
        msg.extend_from_slice(&crate::encode::postamble_bytes(0, total));
        set_u64(&mut msg, 16, total);
        let e = crate::decode(&msg, &DecodeOptions::default()).unwrap_err();
        assert!(
            matches!(
                e.kind(),
                ErrorKind::LimitExceeded {
                    limit: "max_message_bytes",
                    ..
                }
            ),
            "{e:?}"
        );
        let e = crate::decode_object(&msg, 0, &DecodeOptions::default()).unwrap_err();
        assert!(
            matches!(
                e.kind(),
                ErrorKind::LimitExceeded {
                    limit: "max_object_bytes",
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(e.object_index(), Some(0));
        let mut shape_overflow = d.clone();
        shape_overflow.shape = vec![1 << 40, 1 << 40];
        assert!(shape_overflow.num_elements().is_err());
    }
}
