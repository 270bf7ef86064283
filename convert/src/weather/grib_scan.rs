//! The structure of a GRIB file checked in Rust before ecCodes reads it
//! (`spec/convert.md` "Hostile files"): each message's indicator, edition
//! and total length, its sections' lengths and order, and its end marker
//! `7777`, all within the bytes present, and a reduced Gaussian grid's
//! row lengths ([`super::grib_grid`]). Bytes between messages are
//! skipped, as ecCodes does. Pure and allocation-bounded (one entry per
//! message and section, each at least 4 bytes of input), so it is fuzzed
//! on its own (`fuzz/fuzz_targets/grib_scan.rs`).

use std::fmt;

/// One section of a message: its number and byte range in the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    pub number: u8,
    pub offset: u64,
    pub len: u64,
}

/// One message found by [`scan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Offset of `GRIB` in the file.
    pub offset: u64,
    /// Total length, `GRIB` to `7777` included.
    pub len: u64,
    /// 1 or 2.
    pub edition: u8,
    /// Sections 1 … 7 in file order (section 0 and `7777` excluded). Empty
    /// for a GRIB1 message in ECMWF's large-message coding, whose lengths
    /// are scaled; its end marker is still checked.
    pub sections: Vec<Section>,
}

/// Why a GRIB file's structure was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError {
    /// Index of the message at fault.
    pub message: usize,
    /// Offset of its `GRIB` indicator.
    pub offset: u64,
    /// What is wrong.
    pub what: String,
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GRIB message {} at byte {}: {}",
            self.message, self.offset, self.what
        )
    }
}

impl std::error::Error for ScanError {}

/// The big-endian unsigned integer of `b` (at most 8 bytes).
pub(super) fn be(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |a, &x| (a << 8) | u64::from(x))
}

/// Every message of a GRIB file whose bytes are `b`, checked.
pub fn scan(b: &[u8]) -> Result<Vec<Message>, ScanError> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while let Some(rel) = find(&b[at..], b"GRIB") {
        let start = at + rel;
        let fail = |what: String| ScanError {
            message: out.len(),
            offset: start as u64,
            what,
        };
        let msg = message(&b[start..]).map_err(fail)?;
        let len = usize::try_from(msg.len).map_err(|_| fail("too long".into()))?;
        out.push(Message {
            offset: start as u64,
            ..msg
        });
        at = start + len;
    }
    Ok(out)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The message at the start of `b` (which begins with `GRIB`).
fn message(b: &[u8]) -> Result<Message, String> {
    let edition = *b.get(7).ok_or("the file ends inside section 0")?;
    let (len, sec0) = match edition {
        1 => (be(&b[4..7]), 8u64),
        2 => (
            be(b.get(8..16).ok_or("the file ends inside section 0")?),
            16,
        ),
        e => return Err(format!("edition {e} (1 or 2 expected)")),
    };
    let large = edition == 1 && len & 0x80_0000 != 0;
    if large {
        return large_grib1(b);
    }
    if len < sec0 + 4 {
        return Err(format!("total length {len} is shorter than its own header"));
    }
    let end = usize::try_from(len)
        .ok()
        .filter(|&e| e <= b.len())
        .ok_or_else(|| format!("declares {len} bytes but the file holds {}", b.len()))?;
    if &b[end - 4..end] != b"7777" {
        return Err(format!("no 7777 end marker at byte {}", len - 4));
    }
    let body = &b[..end - 4];
    let sections = if edition == 1 {
        grib1_sections(body)?
    } else {
        grib2_sections(body)?
    };
    super::grib_grid::check(&b[..end], edition, &sections)?;
    Ok(Message {
        offset: 0,
        len,
        edition,
        sections,
    })
}

/// The sections of a GRIB1 message without its `7777`: section 1, the
/// optional sections 2 and 3 its flags announce, then section 4, filling
/// the message exactly.
fn grib1_sections(body: &[u8]) -> Result<Vec<Section>, String> {
    let mut at = 8u64;
    let mut out = Vec::new();
    let flags = *body.get(8 + 7).ok_or("section 1 is cut short")?;
    let wanted = [
        (1u8, true, 28u64),
        (2, flags & 0x80 != 0, 32),
        (3, flags & 0x40 != 0, 6),
        (4, true, 11),
    ];
    for (number, present, min) in wanted {
        if !present {
            continue;
        }
        let o = at as usize;
        let len = body
            .get(o..o + 3)
            .map(be)
            .ok_or_else(|| format!("section {number} starts past the message"))?;
        if len < min {
            return Err(format!(
                "section {number} is {len} bytes (at least {min} expected)"
            ));
        }
        if at + len > body.len() as u64 {
            return Err(format!(
                "section {number} of {len} bytes ends past the message"
            ));
        }
        out.push(Section {
            number,
            offset: at,
            len,
        });
        at += len;
    }
    if at != body.len() as u64 {
        return Err(format!(
            "{} bytes between section 4 and 7777",
            body.len() as u64 - at
        ));
    }
    Ok(out)
}

/// The sections of a GRIB2 message without its `7777`: section 1, then
/// fields of sections (2,) 3, 4, 5, 6, 7 where a repeated field may start
/// again at 2, 3 or 4, filling the message exactly.
fn grib2_sections(body: &[u8]) -> Result<Vec<Section>, String> {
    let mut at = 16u64;
    let mut out: Vec<Section> = Vec::new();
    while at < body.len() as u64 {
        let o = at as usize;
        let head = body
            .get(o..o + 5)
            .ok_or_else(|| format!("a section header is cut short at byte {at}"))?;
        let (len, number) = (be(&head[..4]), head[4]);
        if len < 5 || at + len > body.len() as u64 {
            return Err(format!(
                "section {number} at byte {at} has length {len}, beyond the message of {} bytes",
                body.len() + 4
            ));
        }
        let prev = out.last().map_or(0, |s| s.number);
        let follows = match number {
            1 => prev == 0,
            2 => prev == 1 || prev == 7,
            3 => matches!(prev, 1 | 2 | 7),
            4 => prev == 3 || prev == 7,
            5..=7 => prev == number - 1,
            _ => false,
        };
        if !follows {
            return Err(format!(
                "section {number} at byte {at} follows section {prev}"
            ));
        }
        out.push(Section {
            number,
            offset: at,
            len,
        });
        at += len;
    }
    match out.last().map(|s| s.number) {
        Some(7) => Ok(out),
        last => Err(format!(
            "the message ends after section {} (7 expected)",
            last.unwrap_or(0)
        )),
    }
}

/// A GRIB1 message in ECMWF's large-message coding (total length flag
/// 0x800000: the length is in units of 120 bytes, corrected by section 4):
/// only its end marker within the coded extent is checked.
fn large_grib1(b: &[u8]) -> Result<Message, String> {
    let units = be(&b[4..7]) & 0x7f_ffff;
    let most = units * 120;
    let limit = usize::try_from(most).unwrap_or(usize::MAX).min(b.len());
    let end = find(b.get(8..limit).unwrap_or(&[]), b"7777")
        .map(|p| p + 8 + 4)
        .ok_or("large GRIB1 message without a 7777 end marker in its extent")?;
    Ok(Message {
        offset: 0,
        len: end as u64,
        edition: 1,
        sections: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grib2(sections: &[(u8, usize)]) -> Vec<u8> {
        let mut body = Vec::new();
        for &(n, len) in sections {
            body.extend_from_slice(&(len as u32).to_be_bytes());
            body.push(n);
            body.extend(std::iter::repeat_n(0, len - 5));
        }
        let total = 16 + body.len() + 4;
        let mut m = b"GRIB\0\0\0\x02".to_vec();
        m.extend_from_slice(&(total as u64).to_be_bytes());
        m.extend(body);
        m.extend_from_slice(b"7777");
        m
    }

    const FIELD: [(u8, usize); 6] = [(1, 21), (3, 72), (4, 34), (5, 21), (6, 6), (7, 5)];

    #[test]
    fn grib2_messages_and_junk_between_them() {
        let mut f = b"junk".to_vec();
        f.extend(grib2(&FIELD));
        f.extend_from_slice(b"\0\0pad");
        f.extend(grib2(&FIELD));
        let m = scan(&f).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].offset, 4);
        assert_eq!(m[0].sections.len(), 6);
        assert_eq!(m[1].offset, 4 + m[0].len + 5);
    }

    #[test]
    fn bad_lengths_and_orders_are_refused() {
        let good = grib2(&FIELD);
        // Truncated: the declared length passes the end.
        let e = scan(&good[..good.len() - 1]).unwrap_err();
        assert!(e.to_string().contains("declares"), "{e}");
        // A section claiming more than the message.
        let mut bad = good.clone();
        bad[16..20].copy_from_slice(&1000u32.to_be_bytes());
        assert!(scan(&bad).unwrap_err().what.contains("beyond the message"));
        // Section 5 before 4.
        let e = scan(&grib2(&[
            (1, 21),
            (3, 72),
            (5, 21),
            (4, 34),
            (6, 6),
            (7, 5),
        ]))
        .unwrap_err();
        assert!(e.what.contains("section 5"), "{e}");
        // No data section.
        let e = scan(&grib2(&FIELD[..5])).unwrap_err();
        assert!(e.what.contains("7 expected"), "{e}");
        // Zero-length section would loop forever without the minimum.
        let mut z = good;
        z[16..20].copy_from_slice(&0u32.to_be_bytes());
        assert!(scan(&z).is_err());
    }

    #[test]
    fn grib1_sections_must_fill_the_message() {
        let mut m = b"GRIB\0\0\0\x01".to_vec();
        let mut s1 = vec![0u8; 28];
        s1[..3].copy_from_slice(&[0, 0, 28]);
        m.extend(&s1);
        let mut s4 = vec![0u8; 11];
        s4[..3].copy_from_slice(&[0, 0, 11]);
        m.extend(&s4);
        m.extend_from_slice(b"7777");
        let len = m.len() as u32;
        m[4..7].copy_from_slice(&len.to_be_bytes()[1..]);
        let s = scan(&m).unwrap();
        assert_eq!(
            s[0].sections.iter().map(|s| s.number).collect::<Vec<_>>(),
            [1, 4]
        );
        // A zero-length section 4.
        let mut z = m.clone();
        z[36..39].fill(0);
        assert!(scan(&z).unwrap_err().what.contains("section 4 is 0 bytes"));
        // Section 3 announced by the flags but absent.
        let mut f = m;
        f[15] = 0x40;
        assert!(scan(&f).is_err());
    }

    #[test]
    fn large_grib1_lengths_shorter_than_the_header_are_refused() {
        // The large-message flag with 0 units: an extent of 0 bytes.
        let e = scan(b"GRIB\x80\0\0\x01 7777").unwrap_err();
        assert!(e.what.contains("large GRIB1"), "{e}");
    }
}
