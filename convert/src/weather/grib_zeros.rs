//! The zeros of a source's header kept as a count (`spec/convert.md`
//! "GRIB metadata layout"): the header (`base[i].grib.template`) carries its
//! data section with every value zero, which for spherical harmonics is
//! the unpacked subset as IEEE zeros and one bit per coefficient, kilobytes
//! of zero bytes. The longest run of them is cut out and its place and
//! length recorded (`grib.template_zeros`), to be put back before ecCodes
//! reads the header.

use tgm::cbor::Value;

use super::GribError;

/// The key of `base[i].grib` holding where zeros were cut out of the
/// template.
pub const TEMPLATE_ZEROS_KEY: &str = "template_zeros";

/// Runs shorter than this stay in the template: cutting them saves less
/// than the key costs, and headers of gridded fields keep being shared.
const MIN_RUN: usize = 256;

/// The most zeros put back: a header's data section of one-bit codes for
/// the largest spectral truncation GRIB2 can state stays far below it.
const MAX_RUN: usize = 1 << 26;

/// Where a run of zero bytes was cut out of a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZeroRun {
    /// Byte offset of the run in the header it was cut from.
    pub offset: usize,
    /// Zero bytes cut out.
    pub len: usize,
}

impl ZeroRun {
    /// The run as stored: `[offset, length]`.
    pub fn to_value(self) -> Value {
        Value::Array(vec![
            Value::Uint(self.offset as u64),
            Value::Uint(self.len as u64),
        ])
    }

    /// The run stored as `[offset, length]`; `None` for any other value.
    pub fn from_value(v: &Value) -> Option<ZeroRun> {
        let [offset, len] = v.as_array()? else {
            return None;
        };
        Some(ZeroRun {
            offset: usize::try_from(offset.as_u64()?).ok()?,
            len: usize::try_from(len.as_u64()?).ok()?,
        })
    }
}

/// `header` without its longest run of zero bytes and where it was, when
/// that run is at least [`MIN_RUN`] bytes; `None` (keep the header whole)
/// otherwise.
pub fn take_out(header: &[u8]) -> Option<(Vec<u8>, ZeroRun)> {
    let mut best = ZeroRun { offset: 0, len: 0 };
    let mut start = None;
    for (i, &b) in header.iter().chain(std::iter::once(&1)).enumerate() {
        match (b, start) {
            (0, None) => start = Some(i),
            (0, Some(_)) => {}
            (_, Some(s)) => {
                if i - s > best.len {
                    best = ZeroRun {
                        offset: s,
                        len: i - s,
                    };
                }
                start = None;
            }
            (_, None) => {}
        }
    }
    if best.len < MIN_RUN {
        return None;
    }
    let mut rest = Vec::with_capacity(header.len() - best.len);
    rest.extend_from_slice(&header[..best.offset]);
    rest.extend_from_slice(&header[best.offset + best.len..]);
    Some((rest, best))
}

/// The header with `run` put back into `rest`; refused, naming
/// `grib.template_zeros`, when the place lies outside `rest` or the run is
/// longer than any header needs.
pub fn put_back(rest: &[u8], run: ZeroRun) -> Result<Vec<u8>, GribError> {
    if run.offset > rest.len() || run.len > MAX_RUN {
        return Err(GribError::Invalid(format!(
            "grib.{TEMPLATE_ZEROS_KEY} puts {} zero bytes at byte {} of a {}-byte header \
             (at most {MAX_RUN}, within the header)",
            run.len,
            run.offset,
            rest.len()
        )));
    }
    let mut out = Vec::with_capacity(rest.len() + run.len);
    out.extend_from_slice(&rest[..run.offset]);
    out.resize(run.offset + run.len, 0);
    out.extend_from_slice(&rest[run.offset..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_run_is_cut_and_put_back() {
        let mut h = b"GRIB".to_vec();
        h.extend([0; 300]);
        h.extend(b"x");
        h.extend([0; 400]);
        h.extend(b"7777");
        let (rest, run) = take_out(&h).unwrap();
        assert_eq!(
            run,
            ZeroRun {
                offset: 305,
                len: 400
            }
        );
        assert_eq!(rest.len(), h.len() - 400);
        assert_eq!(ZeroRun::from_value(&run.to_value()), Some(run));
        assert_eq!(put_back(&rest, run).unwrap(), h);
    }

    #[test]
    fn short_runs_stay() {
        let mut h = b"GRIB".to_vec();
        h.extend([0; MIN_RUN - 1]);
        h.extend(b"7777");
        assert!(take_out(&h).is_none());
    }

    #[test]
    fn a_run_at_the_end_is_found() {
        let mut h = b"GRIB".to_vec();
        h.extend([0; 500]);
        let (rest, run) = take_out(&h).unwrap();
        assert_eq!(rest, b"GRIB");
        assert_eq!(put_back(&rest, run).unwrap(), h);
    }

    #[test]
    fn hostile_places_are_refused() {
        let e = put_back(b"GRIB", ZeroRun { offset: 5, len: 1 })
            .unwrap_err()
            .to_string();
        assert!(e.contains("grib.template_zeros"), "{e}");
        let e = put_back(
            b"GRIB",
            ZeroRun {
                offset: 0,
                len: MAX_RUN + 1,
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("at most"), "{e}");
        assert_eq!(ZeroRun::from_value(&Value::Uint(3)), None);
    }
}
