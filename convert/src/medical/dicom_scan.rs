//! A pre-scan of a DICOM file's element lengths, run before `dicom-object`
//! parses it.
//!
//! `dicom-parser` allocates (and zero-fills) a value's declared length before
//! reading it, so a small hostile file declaring a 4 GiB element would make
//! it touch 4 GiB of memory. The scan walks every element header the parser
//! will read (file meta group, data set, sequences and items, encapsulated
//! pixel fragments) and refuses a declared length larger than the bytes
//! that can still follow it: the rest of the file, or for a deflated data
//! set the most a deflate stream of the remaining compressed bytes can
//! expand to (1032:1). Memory then follows the bytes actually present.
//!
//! The walk reads the file once, streaming, with nothing allocated per
//! element; it uses the standard dictionary for implicit-VR sequences, as
//! the parser does.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use dicom_core::dictionary::{DataDictionary, DataDictionaryEntry};
use dicom_core::{Tag, VR};
use dicom_dictionary_std::StandardDataDictionary;

use super::DEFLATE_MAX_RATIO;

const UNDEFINED: u32 = 0xFFFF_FFFF;
const ITEM: Tag = Tag(0xFFFE, 0xE000);
const SEQUENCE_DELIMITER: Tag = Tag(0xFFFE, 0xE0DD);
const ITEM_DELIMITER: Tag = Tag(0xFFFE, 0xE00D);
const PIXEL_DATA: Tag = Tag(0x7FE0, 0x0010);
const TRANSFER_SYNTAX: Tag = Tag(0x0002, 0x0010);

/// Transfer syntax UIDs whose data set is deflated.
const DEFLATED: [&str; 2] = ["1.2.840.10008.1.2.1.99", "1.2.840.10008.1.2.4.95"];

/// A refused element or a file the scan cannot walk.
#[derive(Debug, PartialEq, Eq)]
pub enum ScanError {
    /// An element declares more bytes than can follow it.
    TooLong {
        /// The element's tag.
        tag: Tag,
        /// Byte offset of its header (in the inflated data set when
        /// deflated).
        offset: u64,
        /// Declared value length.
        length: u64,
        /// Bytes that can still follow the header.
        available: u64,
    },
    /// The file ends inside an element header.
    Truncated {
        /// Where the header starts.
        offset: u64,
    },
    /// More than [`MAX_NESTING`] sequences and items open at once.
    TooDeep {
        /// Where the element that would nest deeper starts.
        offset: u64,
    },
    /// No `DICM` marker at byte 128 or 0.
    NotDicom,
    /// The file meta group names no transfer syntax.
    NoTransferSyntax,
    /// Reading failed.
    Io(String),
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScanError::TooLong {
                tag,
                offset,
                length,
                available,
            } => write!(
                f,
                "element ({:04X},{:04X}) at byte {offset} claims {length} bytes, \
                 at most {available} can follow it",
                tag.0, tag.1
            ),
            ScanError::Truncated { offset } => {
                write!(
                    f,
                    "truncated: the file ends inside the element header at byte {offset}"
                )
            }
            ScanError::TooDeep { offset } => write!(
                f,
                "sequences nest more than {MAX_NESTING} deep at byte {offset}"
            ),
            ScanError::NotDicom => write!(f, "no DICM marker: not a DICOM Part 10 file"),
            ScanError::NoTransferSyntax => {
                write!(
                    f,
                    "the file meta group has no TransferSyntaxUID (0002,0010)"
                )
            }
            ScanError::Io(e) => write!(f, "cannot read: {e}"),
        }
    }
}

impl std::error::Error for ScanError {}

/// Byte order and VR encoding of a data set.
#[derive(Clone, Copy)]
struct Encoding {
    explicit: bool,
    big_endian: bool,
}

/// A stream with its position and how many more bytes it can yield.
struct Cursor<R> {
    inner: R,
    offset: u64,
    /// Upper bound of the bytes still to come.
    budget: u64,
}

impl<R: Read> Cursor<R> {
    /// Fills `buf`; `Ok(false)` at a clean end of stream before any byte.
    fn fill(&mut self, buf: &mut [u8]) -> Result<bool, ScanError> {
        let start = self.offset;
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) if got == 0 => return Ok(false),
                Ok(0) => return Err(ScanError::Truncated { offset: start }),
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ScanError::Io(e.to_string())),
            }
        }
        self.advance(got as u64);
        Ok(true)
    }

    fn exact(&mut self, buf: &mut [u8], header_at: u64) -> Result<(), ScanError> {
        if self.fill(buf)? {
            Ok(())
        } else {
            Err(ScanError::Truncated { offset: header_at })
        }
    }

    fn advance(&mut self, n: u64) {
        self.offset += n;
        self.budget = self.budget.saturating_sub(n);
    }

    fn skip(&mut self, n: u64) -> Result<(), ScanError> {
        let copied = std::io::copy(&mut (&mut self.inner).take(n), &mut std::io::sink())
            .map_err(|e| ScanError::Io(e.to_string()))?;
        self.advance(copied);
        if copied == n {
            Ok(())
        } else {
            Err(ScanError::Truncated {
                offset: self.offset,
            })
        }
    }
}

fn u16_at(b: &[u8], big: bool) -> u16 {
    let a = [b[0], b[1]];
    if big {
        u16::from_be_bytes(a)
    } else {
        u16::from_le_bytes(a)
    }
}

fn u32_at(b: &[u8], big: bool) -> u32 {
    let a = [b[0], b[1], b[2], b[3]];
    if big {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    }
}

/// Whether an explicit VR header has 2 reserved bytes and a 4-byte length
/// (PS3.5 §7.1.2). As in `dicom-encoding`, every VR outside the 2-byte
/// list, including a VR no dictionary knows (read as UN), has one.
fn long_header(vr: [u8; 2]) -> bool {
    !matches!(
        &vr,
        b"AE"
            | b"AS"
            | b"AT"
            | b"CS"
            | b"DA"
            | b"DS"
            | b"DT"
            | b"FL"
            | b"FD"
            | b"IS"
            | b"LO"
            | b"LT"
            | b"PN"
            | b"SH"
            | b"SL"
            | b"SS"
            | b"ST"
            | b"TM"
            | b"UI"
            | b"UL"
            | b"US"
    )
}

/// An open sequence or item during the walk, with the offset where it
/// ends when its length is defined.
enum Open {
    Sequence { end: Option<u64> },
    Item { end: Option<u64> },
}

impl Open {
    fn end(&self) -> Option<u64> {
        match self {
            Open::Sequence { end } | Open::Item { end } => *end,
        }
    }
}

/// Most sequences and items open at once. `dicom-object` builds nested
/// sequences by recursion, so a file nesting thousands of them would
/// overflow the stack; real data sets nest a handful.
pub const MAX_NESTING: usize = 64;

/// What the walk found worth knowing: the transfer syntax of the data set.
struct Walk {
    transfer_syntax: Option<String>,
}

/// Walks elements until the stream ends, or (with `meta_only`) until the
/// first element outside group 0002, which it leaves unread.
fn walk<R: Read>(
    cur: &mut Cursor<R>,
    enc: Encoding,
    meta_only: bool,
    pending: &mut Option<[u8; 4]>,
) -> Result<Walk, ScanError> {
    let mut found = Walk {
        transfer_syntax: None,
    };
    let mut in_pixel_sequence = false;
    // Open sequences and items. Like `dicom-parser`, the walk keeps the
    // data set's encoding inside a sequence of VR UN with undefined length
    // (it does not switch to implicit VR as PS3.5 §6.2.2 would), so both
    // read the same headers.
    let mut open: Vec<Open> = Vec::new();
    loop {
        let at = cur.offset;
        while open.last().and_then(Open::end).is_some_and(|e| at >= e) {
            open.pop();
        }
        if open.len() > MAX_NESTING {
            return Err(ScanError::TooDeep { offset: at });
        }
        let mut tag_bytes = [0u8; 4];
        if !cur.fill(&mut tag_bytes)? {
            return Ok(found);
        }
        let tag = Tag(
            u16_at(&tag_bytes[..2], enc.big_endian),
            u16_at(&tag_bytes[2..], enc.big_endian),
        );
        if meta_only && tag.0 != 0x0002 {
            *pending = Some(tag_bytes);
            return Ok(found);
        }
        if tag.0 == 0xFFFE {
            let mut len = [0u8; 4];
            cur.exact(&mut len, at)?;
            let len = u32_at(&len, enc.big_endian);
            if tag == SEQUENCE_DELIMITER {
                in_pixel_sequence = false;
                while let Some(o) = open.pop() {
                    if let Open::Sequence { .. } = o {
                        break;
                    }
                }
            } else if tag == ITEM_DELIMITER {
                if let Some(Open::Item { .. }) = open.last() {
                    open.pop();
                }
            } else if tag == ITEM && len == UNDEFINED {
                open.push(Open::Item { end: None });
            }
            if len != UNDEFINED {
                check(tag, at, len, cur.budget)?;
                if tag == ITEM && in_pixel_sequence {
                    cur.skip(u64::from(len))?;
                } else if tag == ITEM {
                    open.push(Open::Item {
                        end: Some(cur.offset + u64::from(len)),
                    });
                }
            }
            continue;
        }
        let (vr, len) = if enc.explicit {
            let mut vr = [0u8; 2];
            cur.exact(&mut vr, at)?;
            let len = if long_header(vr) {
                let mut b = [0u8; 6];
                cur.exact(&mut b, at)?;
                u32_at(&b[2..], enc.big_endian)
            } else {
                let mut b = [0u8; 2];
                cur.exact(&mut b, at)?;
                u32::from(u16_at(&b, enc.big_endian))
            };
            (Some(VR::from_binary(vr).unwrap_or(VR::UN)), len)
        } else {
            let mut b = [0u8; 4];
            cur.exact(&mut b, at)?;
            let vr = StandardDataDictionary.by_tag(tag).map(|e| e.vr().relaxed());
            (vr, u32_at(&b, enc.big_endian))
        };
        if len == UNDEFINED {
            // A sequence (or encapsulated pixel data) whose items follow.
            if tag == PIXEL_DATA {
                in_pixel_sequence = true;
            } else {
                open.push(Open::Sequence { end: None });
            }
            continue;
        }
        check(tag, at, len, cur.budget)?;
        if vr == Some(VR::SQ) {
            // Defined-length sequence: its items follow inline.
            open.push(Open::Sequence {
                end: Some(cur.offset + u64::from(len)),
            });
            continue;
        }
        if tag == TRANSFER_SYNTAX && len <= 64 {
            let mut v = [0u8; 64];
            let v = &mut v[..len as usize];
            cur.exact(v, at)?;
            let s = String::from_utf8_lossy(v);
            found.transfer_syntax = Some(s.trim_end_matches(['\0', ' ']).to_string());
        } else {
            cur.skip(u64::from(len))?;
        }
    }
}

fn check(tag: Tag, offset: u64, len: u32, available: u64) -> Result<(), ScanError> {
    if u64::from(len) > available {
        return Err(ScanError::TooLong {
            tag,
            offset,
            length: u64::from(len),
            available,
        });
    }
    Ok(())
}

/// Checks every declared length in the DICOM file at `path` against the
/// bytes that can follow it (see the module documentation).
pub fn check_lengths(path: &Path) -> Result<(), ScanError> {
    let file = File::open(path).map_err(|e| ScanError::Io(e.to_string()))?;
    let file_len = file
        .metadata()
        .map_err(|e| ScanError::Io(e.to_string()))?
        .len();
    check_reader(BufReader::with_capacity(1 << 16, file), file_len)
}

/// [`check_lengths`] of a DICOM file of `file_len` bytes read from `reader`.
pub fn check_reader<R: Read>(mut reader: R, file_len: u64) -> Result<(), ScanError> {
    let mut head = [0u8; 132];
    let n = read_up_to(&mut reader, &mut head)?;
    // The meta group starts after the 128-byte preamble and DICM, or right
    // after DICM when the preamble is absent.
    let (start, rest) = if n == 132 && &head[128..132] == b"DICM" {
        (132u64, &head[132..132])
    } else if n >= 4 && &head[..4] == b"DICM" {
        (4u64, &head[4..n])
    } else {
        return Err(ScanError::NotDicom);
    };
    let prefix = rest.to_vec();
    let mut cur = Cursor {
        inner: std::io::Cursor::new(prefix).chain(reader),
        offset: start,
        budget: file_len.saturating_sub(start),
    };
    let meta_enc = Encoding {
        explicit: true,
        big_endian: false,
    };
    let mut pending = None;
    let meta = walk(&mut cur, meta_enc, true, &mut pending)?;
    let Some(first_tag) = pending else {
        return Ok(());
    };
    let ts = meta.transfer_syntax.ok_or(ScanError::NoTransferSyntax)?;
    let enc = Encoding {
        explicit: ts != "1.2.840.10008.1.2",
        big_endian: ts == "1.2.840.10008.1.2.2",
    };
    let data_start = cur.offset - 4;
    if DEFLATED.contains(&ts.as_str()) {
        let compressed = std::io::Cursor::new(first_tag.to_vec()).chain(cur.inner);
        let remaining = file_len.saturating_sub(data_start);
        let mut inflated = Cursor {
            inner: flate2::read::DeflateDecoder::new(compressed),
            offset: 0,
            budget: remaining.saturating_mul(DEFLATE_MAX_RATIO),
        };
        walk(&mut inflated, enc, false, &mut None)?;
        return Ok(());
    }
    let mut cur = Cursor {
        inner: std::io::Cursor::new(first_tag.to_vec()).chain(cur.inner),
        offset: data_start,
        budget: file_len.saturating_sub(data_start),
    };
    walk(&mut cur, enc, false, &mut None)?;
    Ok(())
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, ScanError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ScanError::Io(e.to_string())),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Part 10 file: preamble, DICM, a meta group naming `ts`, then `body`.
    fn file(ts: &str, body: &[u8]) -> tempfile::NamedTempFile {
        let mut ts = ts.as_bytes().to_vec();
        if ts.len() % 2 == 1 {
            ts.push(0);
        }
        let mut b = vec![0u8; 128];
        b.extend_from_slice(b"DICM");
        b.extend_from_slice(&[0x02, 0x00, 0x10, 0x00, b'U', b'I']);
        b.extend_from_slice(&(ts.len() as u16).to_le_bytes());
        b.extend_from_slice(&ts);
        b.extend_from_slice(body);
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, &b).unwrap();
        f
    }

    fn explicit_ow(tag: Tag, len: u32, payload: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&tag.0.to_le_bytes());
        b.extend_from_slice(&tag.1.to_le_bytes());
        b.extend_from_slice(b"OW\0\0");
        b.extend_from_slice(&len.to_le_bytes());
        b.extend_from_slice(payload);
        b
    }

    #[test]
    fn a_length_beyond_the_file_is_refused_with_its_offset() {
        let f = file(
            "1.2.840.10008.1.2.1",
            &explicit_ow(PIXEL_DATA, 0xFFFF_FFF0, &[0; 8]),
        );
        let e = check_lengths(f.path()).unwrap_err();
        match e {
            ScanError::TooLong {
                tag,
                length,
                available,
                offset,
            } => {
                assert_eq!(tag, PIXEL_DATA);
                assert_eq!(length, 0xFFFF_FFF0);
                assert_eq!(available, 8);
                assert_eq!(offset, 132 + 8 + 20);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn lengths_within_the_file_pass_in_every_encoding() {
        let f = file("1.2.840.10008.1.2.1", &explicit_ow(PIXEL_DATA, 8, &[0; 8]));
        check_lengths(f.path()).unwrap();
        // Implicit VR: tag, 4-byte length.
        let mut body = Vec::new();
        body.extend_from_slice(&[0xE0, 0x7F, 0x10, 0x00]);
        body.extend_from_slice(&4u32.to_le_bytes());
        body.extend_from_slice(&[1, 2, 3, 4]);
        let f = file("1.2.840.10008.1.2", &body);
        check_lengths(f.path()).unwrap();
        body[4..8].copy_from_slice(&5u32.to_le_bytes());
        let f = file("1.2.840.10008.1.2", &body);
        assert!(matches!(
            check_lengths(f.path()),
            Err(ScanError::TooLong { length: 5, .. })
        ));
    }

    #[test]
    fn fragments_of_encapsulated_pixel_data_are_checked() {
        let mut body = explicit_ow(PIXEL_DATA, UNDEFINED, &[]);
        body[4..6].copy_from_slice(b"OB");
        // Basic offset table (empty item), one fragment claiming too much.
        body.extend_from_slice(&[0xFE, 0xFF, 0x00, 0xE0, 0, 0, 0, 0]);
        body.extend_from_slice(&[0xFE, 0xFF, 0x00, 0xE0]);
        body.extend_from_slice(&1000u32.to_le_bytes());
        body.extend_from_slice(&[0; 16]);
        let f = file("1.2.840.10008.1.2.5", &body);
        assert!(matches!(
            check_lengths(f.path()),
            Err(ScanError::TooLong { length: 1000, .. })
        ));
    }

    #[test]
    fn deflated_data_sets_are_bounded_by_the_deflate_ratio() {
        use std::io::Write;
        let inner = explicit_ow(PIXEL_DATA, 0x4000_0000, &[0; 64]);
        let mut enc =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&inner).unwrap();
        let f = file("1.2.840.10008.1.2.1.99", &enc.finish().unwrap());
        assert!(matches!(
            check_lengths(f.path()),
            Err(ScanError::TooLong {
                length: 0x4000_0000,
                ..
            })
        ));
    }

    #[test]
    fn an_unknown_explicit_vr_has_a_four_byte_length_as_in_dicom_rs() {
        // (0009,0010) with VR "ZZ": reserved bytes, then a 4-byte length of 4.
        let mut body = vec![0x09, 0x00, 0x10, 0x00, b'Z', b'Z', 0, 0];
        body.extend_from_slice(&4u32.to_le_bytes());
        body.extend_from_slice(b"abcd");
        let f = file("1.2.840.10008.1.2.1", &body);
        check_lengths(f.path()).unwrap();
        // Read with a 2-byte length, the same bytes would claim 0 and then
        // walk into the value; a 4-byte length beyond the file is refused.
        body[8..12].copy_from_slice(&0x00FF_0000u32.to_le_bytes());
        let f = file("1.2.840.10008.1.2.1", &body);
        assert!(matches!(
            check_lengths(f.path()),
            Err(ScanError::TooLong {
                length: 0x00FF_0000,
                ..
            })
        ));
    }

    /// An explicit VR little endian element header with a 4-byte length.
    fn long(tag: Tag, vr: &[u8; 2], len: u32) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&tag.0.to_le_bytes());
        b.extend_from_slice(&tag.1.to_le_bytes());
        b.extend_from_slice(vr);
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&len.to_le_bytes());
        b
    }

    fn delimiter(tag: Tag) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&tag.0.to_le_bytes());
        b.extend_from_slice(&tag.1.to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        b
    }

    #[test]
    fn an_undefined_length_un_sequence_keeps_the_explicit_encoding() {
        // UN sequence, one item holding an explicit OB element whose
        // 4-byte length (at the place an implicit reader would not look)
        // claims far more than the file.
        let mut body = long(Tag(0x0009, 0x1001), b"UN", UNDEFINED);
        body.extend_from_slice(&[0xFE, 0xFF, 0x00, 0xE0, 0xFF, 0xFF, 0xFF, 0xFF]);
        body.extend_from_slice(&long(Tag(0x0009, 0x1002), b"OB", 0x7000_0000));
        body.extend_from_slice(&delimiter(ITEM_DELIMITER));
        body.extend_from_slice(&delimiter(SEQUENCE_DELIMITER));
        let f = file("1.2.840.10008.1.2.1", &body);
        assert!(matches!(
            check_lengths(f.path()),
            Err(ScanError::TooLong {
                length: 0x7000_0000,
                ..
            })
        ));
    }

    /// `depth` nested sequences, each of one undefined-length item, in
    /// explicit VR or with defined lengths.
    fn nested(depth: usize, defined: bool) -> Vec<u8> {
        let mut inner = Vec::new();
        for _ in 0..depth {
            let mut item = vec![0xFE, 0xFF, 0x00, 0xE0];
            let mut b;
            if defined {
                item.extend_from_slice(&(inner.len() as u32).to_le_bytes());
                item.extend_from_slice(&inner);
                b = long(Tag(0x0040, 0x0275), b"SQ", item.len() as u32);
                b.extend_from_slice(&item);
            } else {
                item.extend_from_slice(&UNDEFINED.to_le_bytes());
                item.extend_from_slice(&inner);
                item.extend_from_slice(&delimiter(ITEM_DELIMITER));
                b = long(Tag(0x0040, 0x0275), b"SQ", UNDEFINED);
                b.extend_from_slice(&item);
                b.extend_from_slice(&delimiter(SEQUENCE_DELIMITER));
            }
            inner = b;
        }
        inner
    }

    #[test]
    fn sequences_nested_too_deep_are_refused() {
        for defined in [false, true] {
            let f = file("1.2.840.10008.1.2.1", &nested(MAX_NESTING / 2, defined));
            check_lengths(f.path()).unwrap();
            let f = file("1.2.840.10008.1.2.1", &nested(7000, defined));
            assert!(
                matches!(check_lengths(f.path()), Err(ScanError::TooDeep { .. })),
                "defined lengths: {defined}"
            );
        }
    }

    #[test]
    fn files_without_dicm_are_not_dicom() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, &[0u8; 200]).unwrap();
        assert_eq!(check_lengths(f.path()), Err(ScanError::NotDicom));
    }
}
