//! Checks of encapsulated pixel data against what the data set declares,
//! run before any third-party decoder sees it.
//!
//! The codecs behind `dicom-pixeldata` trust their input: an RLE header
//! with a huge segment count, a JPEG frame header claiming 65500², a
//! fragment shorter than its frame or a missing frame make them panic,
//! allocate gigabytes or fill the gap with zeros. Here every frame's
//! compressed bytes are checked first (PS3.5 §8.2 and Annex A.4, G):
//!
//! - one fragment per frame for a multi-frame image (never a missing frame);
//! - RLE: a 64-byte header with 1 to 15 segments, as many as samples ×
//!   bytes per sample, offsets increasing from 64 and inside the fragment,
//!   and each segment's PackBits runs producing at least Rows × Columns
//!   bytes without running off the segment;
//! - JPEG: the frame header (SOF) names Rows × Columns × SamplesPerPixel
//!   with a precision of at most BitsAllocated, and the stream ends with EOI;
//! - JPEG 2000: the SIZ marker names the same size, without subsampling;
//! - JPEG-LS: the frame header (SOF55, ITU-T T.87 §C.2.2) names Rows ×
//!   Columns × SamplesPerPixel with a precision that fits BitsAllocated
//!   (CharLS writes one byte per sample up to 8 bits, two above), and the
//!   stream ends with EOI.
//!
//! Every size involved is then bounded by the fragment's own length, so
//! nothing here allocates beyond a copy of one frame's compressed bytes.

use std::borrow::Cow;

/// Pixel data as the data set declares it (Image Pixel module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declared {
    /// Rows (0028,0010).
    pub rows: u64,
    /// Columns (0028,0011).
    pub columns: u64,
    /// SamplesPerPixel (0028,0002).
    pub samples: u64,
    /// BitsAllocated (0028,0100).
    pub bits_allocated: u64,
    /// NumberOfFrames (0028,0008), 1 when absent.
    pub frames: u64,
}

/// The family of codec a transfer syntax hands its fragments to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// RLE Lossless (1.2.840.10008.1.2.5).
    Rle,
    /// JPEG Baseline, Extended and Lossless (ITU-T T.81).
    Jpeg,
    /// JPEG 2000 (ISO 15444-1), including High-Throughput JPEG 2000.
    Jpeg2000,
    /// JPEG-LS lossless and near-lossless (ITU-T T.87).
    JpegLs,
}

impl Codec {
    /// The codec of an encapsulated transfer syntax, `None` for one this
    /// module has no check for (which is then not decoded).
    pub fn of(uid: &str) -> Option<Codec> {
        match uid {
            "1.2.840.10008.1.2.5" => Some(Codec::Rle),
            "1.2.840.10008.1.2.4.50"
            | "1.2.840.10008.1.2.4.51"
            | "1.2.840.10008.1.2.4.57"
            | "1.2.840.10008.1.2.4.70" => Some(Codec::Jpeg),
            "1.2.840.10008.1.2.4.90"
            | "1.2.840.10008.1.2.4.91"
            | "1.2.840.10008.1.2.4.92"
            | "1.2.840.10008.1.2.4.93"
            | "1.2.840.10008.1.2.4.201"
            | "1.2.840.10008.1.2.4.202"
            | "1.2.840.10008.1.2.4.203" => Some(Codec::Jpeg2000),
            "1.2.840.10008.1.2.4.80" | "1.2.840.10008.1.2.4.81" => Some(Codec::JpegLs),
            _ => None,
        }
    }
}

/// Why encapsulated pixel data is refused before decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreDecodeError {
    /// The number of fragments does not give one per frame.
    FragmentCount {
        /// NumberOfFrames.
        frames: u64,
        /// Fragments present (basic offset table excluded).
        fragments: usize,
    },
    /// A frame's compressed bytes contradict the data set or are malformed.
    Frame {
        /// Frame index (0-based).
        frame: u64,
        /// What is wrong.
        problem: String,
    },
}

impl std::fmt::Display for PreDecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PreDecodeError::FragmentCount { frames, fragments } => write!(
                f,
                "NumberOfFrames is {frames} but PixelData holds {fragments} fragments; \
                 a multi-frame image needs one fragment per frame (a missing frame is never \
                 zero-filled)"
            ),
            PreDecodeError::Frame { frame, problem } => write!(f, "frame {frame}: {problem}"),
        }
    }
}

impl std::error::Error for PreDecodeError {}

/// Checks every frame of encapsulated pixel data (see the module
/// documentation). `fragments` excludes the basic offset table.
pub fn check_fragments<F: AsRef<[u8]>>(
    codec: Codec,
    declared: &Declared,
    fragments: &[F],
) -> Result<(), PreDecodeError> {
    let frames = frames_of(codec, declared, fragments)?;
    for (i, frame) in frames.into_iter().enumerate() {
        let i = i as u64;
        let result = match codec {
            Codec::Rle => check_rle(declared, &frame),
            Codec::Jpeg => check_jpeg(declared, &frame),
            Codec::Jpeg2000 => check_jpeg2000(declared, &frame),
            Codec::JpegLs => check_jpeg_ls(declared, &frame),
        };
        result.map_err(|problem| PreDecodeError::Frame { frame: i, problem })?;
    }
    Ok(())
}

/// Each frame's compressed bytes: one fragment per frame, or for a
/// single-frame JPEG / JPEG 2000 image every fragment joined.
fn frames_of<'a, F: AsRef<[u8]>>(
    codec: Codec,
    declared: &Declared,
    fragments: &'a [F],
) -> Result<Vec<Cow<'a, [u8]>>, PreDecodeError> {
    let count_error = || PreDecodeError::FragmentCount {
        frames: declared.frames,
        fragments: fragments.len(),
    };
    if fragments.is_empty() {
        return Err(count_error());
    }
    if declared.frames == 1 && codec != Codec::Rle && fragments.len() > 1 {
        return Ok(vec![Cow::Owned(
            fragments.iter().flat_map(|f| f.as_ref()).copied().collect(),
        )]);
    }
    if fragments.len() as u64 != declared.frames {
        return Err(count_error());
    }
    Ok(fragments
        .iter()
        .map(|f| Cow::Borrowed(f.as_ref()))
        .collect())
}

fn u16_be(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_be(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u32_le(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// RLE Lossless (PS3.5 Annex G).
fn check_rle(d: &Declared, frame: &[u8]) -> Result<(), String> {
    if frame.len() < 64 {
        return Err(format!(
            "RLE fragment of {} bytes is shorter than its 64-byte header",
            frame.len()
        ));
    }
    let count = u32_le(frame, 0).expect("64 bytes") as u64;
    if !d.bits_allocated.is_multiple_of(8) {
        return Err(format!(
            "BitsAllocated {} is not a whole number of bytes",
            d.bits_allocated
        ));
    }
    let expected = d.samples.saturating_mul(d.bits_allocated / 8);
    if count == 0 || count > 15 || count != expected {
        return Err(format!(
            "RLE header declares {count} segments; SamplesPerPixel {} x BitsAllocated {} \
             need {expected} (at most 15)",
            d.samples, d.bits_allocated
        ));
    }
    let offsets: Vec<u64> = (0..count as usize)
        .map(|i| u64::from(u32_le(frame, 4 + 4 * i).expect("64 bytes")))
        .collect();
    if offsets[0] != 64 {
        return Err(format!(
            "RLE segment 0 starts at byte {}, not right after the 64-byte header",
            offsets[0]
        ));
    }
    let len = frame.len() as u64;
    let per_segment = d.rows.saturating_mul(d.columns);
    for (i, &start) in offsets.iter().enumerate() {
        let end = offsets.get(i + 1).copied().unwrap_or(len);
        if end <= start || end > len {
            return Err(format!(
                "RLE segment {i} spans bytes {start}..{end} of a {len}-byte fragment; \
                 offsets must increase and stay inside it"
            ));
        }
        let segment = &frame[start as usize..end as usize];
        let produced = packbits_output(segment, per_segment)
            .map_err(|at| format!("RLE segment {i}: a run at byte {at} runs past its end"))?;
        if produced < per_segment {
            return Err(format!(
                "RLE segment {i} decodes to {produced} bytes; Rows {} x Columns {} need \
                 {per_segment}",
                d.rows, d.columns
            ));
        }
    }
    Ok(())
}

/// Bytes a PackBits segment decodes to, counting stops once `need` is
/// reached (padding may follow). `Err(offset)` for a run cut short.
fn packbits_output(segment: &[u8], need: u64) -> Result<u64, usize> {
    let (mut i, mut out) = (0usize, 0u64);
    while i < segment.len() && out < need {
        let header = segment[i] as i8;
        let at = i;
        i += 1;
        if header >= 0 {
            let n = header as usize + 1;
            if i + n > segment.len() {
                return Err(at);
            }
            out += n as u64;
            i += n;
        } else if header != -128 {
            if i >= segment.len() {
                return Err(at);
            }
            out += (1 - i64::from(header)) as u64;
            i += 1;
        }
    }
    Ok(out)
}

/// JPEG (ITU-T T.81 §B.2): the frame header must match the data set and
/// the stream must end with EOI (fragments may be padded with a zero).
fn check_jpeg(d: &Declared, frame: &[u8]) -> Result<(), String> {
    let sof = jpeg_frame_header(frame)?;
    check_frame_size("JPEG", &sof, d)?;
    if u64::from(sof.precision) > d.bits_allocated {
        return Err(format!(
            "JPEG precision {} exceeds BitsAllocated {}",
            sof.precision, d.bits_allocated
        ));
    }
    check_eoi("JPEG", frame)
}

/// JPEG-LS (ITU-T T.87 §C.2.2): as JPEG, with the SOF55 frame header, and
/// a precision of 2..=8 bits for BitsAllocated 8 or 9..=16 for 16 (the
/// sample width CharLS decodes to).
fn check_jpeg_ls(d: &Declared, frame: &[u8]) -> Result<(), String> {
    let sof = jpeg_ls_frame_header(frame)?;
    check_frame_size("JPEG-LS", &sof, d)?;
    let fits = match d.bits_allocated {
        8 => (2..=8).contains(&sof.precision),
        16 => (9..=16).contains(&sof.precision),
        _ => false,
    };
    if !fits {
        return Err(format!(
            "JPEG-LS precision {} does not fit BitsAllocated {} (2..=8 bits for 8, 9..=16 \
             for 16)",
            sof.precision, d.bits_allocated
        ));
    }
    check_eoi("JPEG-LS", frame)
}

/// The frame header's size and components against the data set.
fn check_frame_size(kind: &str, sof: &JpegFrameHeader, d: &Declared) -> Result<(), String> {
    if sof.height == 0 {
        return Err(format!(
            "{kind} frame header leaves the height to a DNL marker"
        ));
    }
    if (
        u64::from(sof.height),
        u64::from(sof.width),
        u64::from(sof.components),
    ) != (d.rows, d.columns, d.samples)
    {
        return Err(format!(
            "{kind} frame header is {} x {} with {} components; the data set declares Rows {} \
             x Columns {} with SamplesPerPixel {}",
            sof.height, sof.width, sof.components, d.rows, d.columns, d.samples
        ));
    }
    Ok(())
}

/// The stream ends with EOI; fragments are padded to even length, with
/// 0x00 or 0xFF by encoders.
fn check_eoi(kind: &str, frame: &[u8]) -> Result<(), String> {
    let pad = frame
        .iter()
        .rev()
        .take_while(|&&b| b == 0 || b == 0xFF)
        .count();
    let end = frame.len() - pad;
    if !frame[..end].ends_with(&[0xFF, 0xD9]) {
        return Err(format!(
            "{kind} stream is truncated: it does not end with an EOI marker"
        ));
    }
    Ok(())
}

/// The fields of a JPEG frame header (SOFn).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JpegFrameHeader {
    /// Sample precision P.
    pub precision: u8,
    /// Number of lines Y.
    pub height: u16,
    /// Samples per line X.
    pub width: u16,
    /// Components Nf.
    pub components: u8,
}

/// A JPEG (ITU-T T.81) frame header marker: SOF0..SOF15 but DHT, JPG and
/// DAC.
fn is_jpeg_sof(marker: u8) -> bool {
    matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC)
}

/// The JPEG-LS frame header marker, SOF55 (ITU-T T.87 §C.2.2).
const JPEG_LS_SOF: u8 = 0xF7;

/// Finds the first frame header of a JPEG stream, walking its marker
/// segments from SOI.
pub fn jpeg_frame_header(b: &[u8]) -> Result<JpegFrameHeader, String> {
    frame_header(b, "JPEG", is_jpeg_sof)
}

/// Finds the frame header (SOF55) of a JPEG-LS stream, walking its marker
/// segments from SOI; a JPEG frame header in its place is refused.
pub fn jpeg_ls_frame_header(b: &[u8]) -> Result<JpegFrameHeader, String> {
    frame_header(b, "JPEG-LS", |m| m == JPEG_LS_SOF)
}

fn frame_header(
    b: &[u8],
    kind: &str,
    is_sof: impl Fn(u8) -> bool,
) -> Result<JpegFrameHeader, String> {
    if !b.starts_with(&[0xFF, 0xD8]) {
        return Err(format!("not a {kind} stream: no SOI marker"));
    }
    let mut i = 2;
    loop {
        if b.get(i) != Some(&0xFF) {
            return Err(format!(
                "{kind} stream: no marker at byte {i} before the frame header"
            ));
        }
        while b.get(i) == Some(&0xFF) {
            i += 1;
        }
        let marker = *b
            .get(i)
            .ok_or_else(|| format!("{kind} stream ends before its frame header"))?;
        i += 1;
        match marker {
            0x01 | 0xD0..=0xD7 => continue,
            0xD9 => return Err(format!("{kind} stream ends (EOI) before its frame header")),
            0xDA => return Err(format!("{kind} scan starts before any frame header")),
            _ => {}
        }
        let len = usize::from(
            u16_be(b, i).ok_or_else(|| format!("{kind} stream ends inside a marker segment"))?,
        );
        if len < 2 || i + len > b.len() {
            return Err(format!(
                "{kind} marker segment at byte {i} claims {len} bytes"
            ));
        }
        if is_sof(marker) {
            if len < 8 {
                return Err(format!("{kind} frame header of {len} bytes is too short"));
            }
            return Ok(JpegFrameHeader {
                precision: b[i + 2],
                height: u16_be(b, i + 3).expect("length checked"),
                width: u16_be(b, i + 5).expect("length checked"),
                components: b[i + 7],
            });
        }
        if is_jpeg_sof(marker) || marker == JPEG_LS_SOF {
            return Err(format!(
                "{kind} stream holds another coding's frame header (marker 0xFF{marker:02X})"
            ));
        }
        i += len;
    }
}

/// The image size and components of a JPEG 2000 SIZ marker segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jpeg2000Size {
    /// Xsiz - XOsiz.
    pub width: u32,
    /// Ysiz - YOsiz.
    pub height: u32,
    /// Per component: (precision in bits, XRsiz, YRsiz).
    pub components: Vec<(u8, u8, u8)>,
}

/// Reads the SIZ marker of a JPEG 2000 codestream (ISO 15444-1 §A.5.1),
/// inside a JP2 `jp2c` box when the stream is wrapped.
pub fn jpeg2000_size(b: &[u8]) -> Result<Jpeg2000Size, String> {
    let c = codestream(b)?;
    if !c.starts_with(&[0xFF, 0x4F, 0xFF, 0x51]) {
        return Err("not a JPEG 2000 codestream: no SOC and SIZ markers".into());
    }
    let field = |at: usize| u32_be(c, at).ok_or("JPEG 2000 SIZ marker is truncated");
    let lsiz = usize::from(u16_be(c, 4).ok_or("JPEG 2000 SIZ marker is truncated")?);
    let (xsiz, ysiz, xo, yo) = (field(8)?, field(12)?, field(16)?, field(20)?);
    let csiz = usize::from(u16_be(c, 40).ok_or("JPEG 2000 SIZ marker is truncated")?);
    if lsiz != 38 + 3 * csiz || c.len() < 4 + lsiz {
        return Err(format!(
            "JPEG 2000 SIZ marker of {lsiz} bytes does not hold its {csiz} components"
        ));
    }
    let (Some(width), Some(height)) = (xsiz.checked_sub(xo), ysiz.checked_sub(yo)) else {
        return Err("JPEG 2000 image offset lies beyond its size".into());
    };
    let components = (0..csiz)
        .map(|k| {
            let at = 42 + 3 * k;
            ((c[at] & 0x7F) + 1, c[at + 1], c[at + 2])
        })
        .collect();
    Ok(Jpeg2000Size {
        width,
        height,
        components,
    })
}

/// The codestream of a raw stream or of a JP2 file's `jp2c` box.
fn codestream(b: &[u8]) -> Result<&[u8], String> {
    if !b.starts_with(&[0, 0, 0, 12, b'j', b'P', b' ', b' ']) {
        return Ok(b);
    }
    let mut at = 0usize;
    while at + 8 <= b.len() {
        let lbox = u32_be(b, at).expect("8 bytes") as u64;
        let kind = &b[at + 4..at + 8];
        let (header, size) = match lbox {
            0 => (8u64, (b.len() - at) as u64),
            1 => {
                let x = b
                    .get(at + 8..at + 16)
                    .ok_or("JP2 box header is truncated")?;
                (16, u64::from_be_bytes(x.try_into().expect("8 bytes")))
            }
            n => (8, n),
        };
        let end = (at as u64)
            .checked_add(size)
            .filter(|&e| e <= b.len() as u64 && size >= header);
        let Some(end) = end else {
            return Err(format!("JP2 box at byte {at} runs past the fragment"));
        };
        if kind == b"jp2c" {
            return Ok(&b[at + header as usize..end as usize]);
        }
        at = end as usize;
    }
    Err("JP2 file without a codestream (jp2c) box".into())
}

fn check_jpeg2000(d: &Declared, frame: &[u8]) -> Result<(), String> {
    let siz = jpeg2000_size(frame)?;
    if (
        u64::from(siz.height),
        u64::from(siz.width),
        siz.components.len() as u64,
    ) != (d.rows, d.columns, d.samples)
    {
        return Err(format!(
            "JPEG 2000 SIZ marker is {} x {} with {} components; the data set declares Rows \
             {} x Columns {} with SamplesPerPixel {}",
            siz.height,
            siz.width,
            siz.components.len(),
            d.rows,
            d.columns,
            d.samples
        ));
    }
    for (k, &(precision, dx, dy)) in siz.components.iter().enumerate() {
        if (dx, dy) != (1, 1) {
            return Err(format!(
                "JPEG 2000 component {k} is subsampled ({dx} x {dy})"
            ));
        }
        if u64::from(precision) > d.bits_allocated {
            return Err(format!(
                "JPEG 2000 component {k} has {precision} bits, more than BitsAllocated {}",
                d.bits_allocated
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GREY8: Declared = Declared {
        rows: 4,
        columns: 4,
        samples: 1,
        bits_allocated: 8,
        frames: 1,
    };

    /// One RLE frame of one segment: a replicate run of 16 bytes.
    fn rle_frame() -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[0] = 1;
        b[4] = 64;
        b.extend_from_slice(&[(1 - 16i8) as u8, 7]);
        b
    }

    #[test]
    fn a_well_formed_rle_frame_passes() {
        check_fragments(Codec::Rle, &GREY8, &[rle_frame()]).unwrap();
    }

    #[test]
    fn rle_headers_contradicting_the_data_set_are_refused() {
        let mut huge = rle_frame();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut zero = rle_frame();
        zero[0] = 0;
        let mut outside = rle_frame();
        outside[4] = 200;
        let mut short = rle_frame();
        short[64] = (1 - 8i8) as u8;
        let mut cut = rle_frame();
        cut[64] = 20;
        for (name, frame) in [
            ("huge count", huge),
            ("zero count", zero),
            ("offset outside", outside),
            ("short segment", short),
            ("literal past end", cut),
            ("tiny fragment", vec![1, 0, 0, 0]),
        ] {
            let e = check_fragments(Codec::Rle, &GREY8, &[frame]);
            assert!(
                matches!(e, Err(PreDecodeError::Frame { frame: 0, .. })),
                "{name}: {e:?}"
            );
        }
    }

    #[test]
    fn multi_frame_images_need_one_fragment_per_frame() {
        let two = Declared { frames: 2, ..GREY8 };
        check_fragments(Codec::Rle, &two, &[rle_frame(), rle_frame()]).unwrap();
        assert_eq!(
            check_fragments(Codec::Rle, &two, &[rle_frame()]),
            Err(PreDecodeError::FragmentCount {
                frames: 2,
                fragments: 1
            })
        );
        let none: [Vec<u8>; 0] = [];
        assert!(check_fragments(Codec::Jpeg, &GREY8, &none).is_err());
    }

    /// SOI, an APP0 segment, SOF0 of `h` x `w`, EOI.
    fn jpeg(h: u16, w: u16) -> Vec<u8> {
        let mut b = vec![0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0, 0, 0xFF, 0xC0, 0, 11, 8];
        b.extend_from_slice(&h.to_be_bytes());
        b.extend_from_slice(&w.to_be_bytes());
        b.extend_from_slice(&[1, 1, 0x11, 0, 0xFF, 0xD9]);
        b
    }

    #[test]
    fn jpeg_frame_headers_must_match_rows_and_columns() {
        check_fragments(Codec::Jpeg, &GREY8, &[jpeg(4, 4)]).unwrap();
        for pad in [0, 0xFF] {
            let mut padded = jpeg(4, 4);
            padded.push(pad);
            check_fragments(Codec::Jpeg, &GREY8, &[padded]).unwrap();
        }
        assert!(check_fragments(Codec::Jpeg, &GREY8, &[jpeg(65500, 65500)]).is_err());
        assert!(check_fragments(Codec::Jpeg, &GREY8, &[jpeg(2, 4)]).is_err());
        assert!(check_fragments(Codec::Jpeg, &GREY8, &[jpeg(0, 4)]).is_err());
        let whole = jpeg(4, 4);
        let truncated = &whole[..whole.len() - 2];
        assert!(check_fragments(Codec::Jpeg, &GREY8, &[truncated]).is_err());
        // Split across fragments of one frame.
        let (a, b) = whole.split_at(9);
        check_fragments(Codec::Jpeg, &GREY8, &[a, b]).unwrap();
    }

    /// SOC, SIZ of `h` x `w` with one 8-bit component.
    fn j2k(h: u32, w: u32) -> Vec<u8> {
        let mut b = vec![0xFF, 0x4F, 0xFF, 0x51, 0, 41, 0, 0];
        for v in [w, h, 0, 0, w, h, 0, 0] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        b.extend_from_slice(&[0, 1, 7, 1, 1, 0xFF, 0xD9]);
        b
    }

    #[test]
    fn jpeg2000_siz_must_match_rows_and_columns() {
        check_fragments(Codec::Jpeg2000, &GREY8, &[j2k(4, 4)]).unwrap();
        assert!(check_fragments(Codec::Jpeg2000, &GREY8, &[j2k(4, 5)]).is_err());
        let mut sixteen = j2k(4, 4);
        sixteen[42] = 15;
        assert!(check_fragments(Codec::Jpeg2000, &GREY8, &[sixteen]).is_err());
        assert!(check_fragments(Codec::Jpeg2000, &GREY8, &[&j2k(4, 4)[..20]]).is_err());
        // Wrapped in a JP2 signature box and a jp2c box.
        let mut jp2 = vec![0, 0, 0, 12, b'j', b'P', b' ', b' ', 13, 10, 0x87, 10];
        let c = j2k(4, 4);
        jp2.extend_from_slice(&(8 + c.len() as u32).to_be_bytes());
        jp2.extend_from_slice(b"jp2c");
        jp2.extend_from_slice(&c);
        check_fragments(Codec::Jpeg2000, &GREY8, &[jp2]).unwrap();
    }

    /// SOI, an LSE (preset parameters) segment, SOF55 of `h` x `w` with one
    /// component of `precision` bits, EOI.
    fn jpeg_ls(h: u16, w: u16, precision: u8) -> Vec<u8> {
        let mut b = vec![
            0xFF, 0xD8, 0xFF, 0xF8, 0, 3, 1, 0xFF, 0xF7, 0, 11, precision,
        ];
        b.extend_from_slice(&h.to_be_bytes());
        b.extend_from_slice(&w.to_be_bytes());
        b.extend_from_slice(&[1, 1, 0x11, 0, 0xFF, 0xD9]);
        b
    }

    #[test]
    fn jpeg_ls_frame_headers_must_match_the_data_set() {
        let uid = "1.2.840.10008.1.2.4.80";
        assert_eq!(Codec::of(uid), Some(Codec::JpegLs));
        assert_eq!(Codec::of("1.2.840.10008.1.2.4.81"), Some(Codec::JpegLs));
        check_fragments(Codec::JpegLs, &GREY8, &[jpeg_ls(4, 4, 8)]).unwrap();
        let grey16 = Declared {
            bits_allocated: 16,
            ..GREY8
        };
        check_fragments(Codec::JpegLs, &grey16, &[jpeg_ls(4, 4, 12)]).unwrap();
        let refused = |d: &Declared, frame: &[u8]| match check_fragments(Codec::JpegLs, d, &[frame])
        {
            Err(PreDecodeError::Frame { problem, .. }) => problem,
            other => panic!("{other:?}"),
        };
        assert!(refused(&GREY8, &jpeg_ls(65500, 65500, 8)).contains("65500 x 65500"));
        assert!(refused(&GREY8, &jpeg_ls(4, 5, 8)).contains("Columns 4"));
        assert!(refused(&GREY8, &jpeg_ls(0, 4, 8)).contains("DNL"));
        assert!(refused(&GREY8, &jpeg_ls(4, 4, 12)).contains("precision 12"));
        assert!(refused(&grey16, &jpeg_ls(4, 4, 8)).contains("precision 8"));
        let whole = jpeg_ls(4, 4, 8);
        assert!(refused(&GREY8, &whole[..whole.len() - 2]).contains("EOI"));
        // A baseline JPEG stream under a JPEG-LS transfer syntax.
        assert!(refused(&GREY8, &jpeg(4, 4)).contains("0xFFC0"));
        assert!(check_fragments(Codec::Jpeg, &GREY8, &[jpeg_ls(4, 4, 8)]).is_err());
    }

    #[test]
    fn every_prefix_of_a_valid_frame_is_handled_without_panic() {
        for frame in [rle_frame(), jpeg(4, 4), j2k(4, 4), jpeg_ls(4, 4, 8)] {
            for n in 0..frame.len() {
                for codec in [Codec::Rle, Codec::Jpeg, Codec::Jpeg2000, Codec::JpegLs] {
                    let _ = check_fragments(codec, &GREY8, &[&frame[..n]]);
                }
            }
        }
    }
}
