//! The reduced grid's row lengths (`pl`) kept once per field
//! (`spec/convert.md` "GRIB metadata layout"): `base[i].geography.pl`
//! holds them as integers, and the source's header (`base[i].grib.template`)
//! is stored without their octets, which are written back from
//! `geography.pl` at the recorded place before ecCodes reads the header.

use tgm::cbor::Value;

use super::GribError;

/// Where a header's `pl` octets were taken out: the byte offset in the
/// whole header and the octets of each entry (big-endian unsigned, as GRIB
/// codes them: 2 in GRIB1, `numberOfOctectsForNumberOfPoints` in GRIB2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlPlace {
    /// Byte offset of the first entry in the complete header.
    pub offset: usize,
    /// Octets per entry (1 to 4).
    pub octets: usize,
}

impl PlPlace {
    /// The place as stored: `[offset, octets]`.
    pub fn to_value(self) -> Value {
        Value::Array(vec![
            Value::Uint(self.offset as u64),
            Value::Uint(self.octets as u64),
        ])
    }

    /// The place stored as `[offset, octets]`; `None` for any other value.
    pub fn from_value(v: &Value) -> Option<PlPlace> {
        let [offset, octets] = v.as_array()? else {
            return None;
        };
        let offset = usize::try_from(offset.as_u64()?).ok()?;
        let octets = usize::try_from(octets.as_u64()?).ok()?;
        (1..=4)
            .contains(&octets)
            .then_some(PlPlace { offset, octets })
    }
}

/// `pl` coded as GRIB codes it, `octets` big-endian bytes per entry;
/// `None` when an entry does not fit (or is negative).
fn coded(pl: &[i64], octets: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(pl.len() * octets);
    for &n in pl {
        let n = u32::try_from(n).ok()?;
        if octets < 4 && n >> (8 * octets) != 0 {
            return None;
        }
        out.extend_from_slice(&n.to_be_bytes()[4 - octets..]);
    }
    Some(out)
}

/// `header` without the octets of `pl` and where they were, when `pl`
/// coded at `octets` per entry occurs exactly once in it; `None` (keep the
/// header whole) otherwise.
pub fn take_out(header: &[u8], pl: &[i64], octets: usize) -> Option<(Vec<u8>, PlPlace)> {
    if pl.is_empty() || !(1..=4).contains(&octets) {
        return None;
    }
    let needle = coded(pl, octets)?;
    let mut found = header
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle.as_slice())
        .map(|(i, _)| i);
    let offset = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let mut rest = Vec::with_capacity(header.len() - needle.len());
    rest.extend_from_slice(&header[..offset]);
    rest.extend_from_slice(&header[offset + needle.len()..]);
    Some((rest, PlPlace { offset, octets }))
}

/// The complete header: `rest` with the octets of `pl` put back at
/// `place`. Refused, naming `geography.pl`, when an entry does not fit its
/// octets or the place lies outside `rest`.
pub fn put_back(rest: &[u8], pl: &[i64], place: PlPlace) -> Result<Vec<u8>, GribError> {
    let bytes = coded(pl, place.octets).ok_or_else(|| {
        GribError::Invalid(format!(
            "geography.pl holds a row length that does not fit the header's {} octets",
            place.octets
        ))
    })?;
    if place.offset > rest.len() {
        return Err(GribError::Invalid(format!(
            "grib.template_pl places pl at byte {} of a {}-byte header",
            place.offset,
            rest.len()
        )));
    }
    let mut out = Vec::with_capacity(rest.len() + bytes.len());
    out.extend_from_slice(&rest[..place.offset]);
    out.extend_from_slice(&bytes);
    out.extend_from_slice(&rest[place.offset..]);
    Ok(out)
}

/// The integers of `geography.pl`; refused, naming it, when it is not an
/// array of integers.
pub fn pl_of(v: &Value) -> Result<Vec<i64>, GribError> {
    let not = || GribError::Invalid("geography.pl is not an array of integers".into());
    v.as_array()
        .ok_or_else(not)?
        .iter()
        .map(|n| n.as_i64().ok_or_else(not))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<u8> {
        // "GRIB", a few bytes, pl [20, 300, 20] at 2 octets, then "7777".
        let mut h = b"GRIB\x00\x01".to_vec();
        h.extend_from_slice(&[0, 20, 1, 44, 0, 20]);
        h.extend_from_slice(b"7777");
        h
    }

    #[test]
    fn pl_comes_out_and_goes_back_byte_for_byte() {
        let pl = [20, 300, 20];
        let (rest, place) = take_out(&header(), &pl, 2).unwrap();
        assert_eq!(
            place,
            PlPlace {
                offset: 6,
                octets: 2
            }
        );
        assert_eq!(rest, b"GRIB\x00\x017777");
        assert_eq!(put_back(&rest, &pl, place).unwrap(), header());
        assert_eq!(PlPlace::from_value(&place.to_value()), Some(place));
    }

    #[test]
    fn a_pl_absent_repeated_or_too_wide_keeps_the_header_whole() {
        assert!(take_out(&header(), &[20, 301, 20], 2).is_none());
        assert!(take_out(&header(), &[300], 1).is_none());
        assert!(take_out(&header(), &[], 2).is_none());
        // [20] at one octet occurs twice.
        assert!(take_out(&header(), &[20], 1).is_none());
        assert!(take_out(&header(), &[-1], 2).is_none());
    }

    #[test]
    fn a_bad_place_or_pl_is_refused_by_name() {
        let place = PlPlace {
            offset: 99,
            octets: 2,
        };
        let e = put_back(b"GRIB", &[20], place).unwrap_err().to_string();
        assert!(e.contains("grib.template_pl"), "{e}");
        let place = PlPlace {
            offset: 0,
            octets: 1,
        };
        let e = put_back(b"GRIB", &[300], place).unwrap_err().to_string();
        assert!(e.contains("geography.pl"), "{e}");
        let e = pl_of(&Value::Text("x".into())).unwrap_err().to_string();
        assert!(e.contains("geography.pl"), "{e}");
        assert_eq!(
            PlPlace::from_value(&Value::Array(vec![Value::Uint(1)])),
            None
        );
        let five = Value::Array(vec![Value::Uint(1), Value::Uint(5)]);
        assert_eq!(PlPlace::from_value(&five), None);
    }
}
