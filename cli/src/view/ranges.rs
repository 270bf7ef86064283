//! What a request asks of an archive's bytes: `Range` (RFC 9110 §14.1.2,
//! §14.2) under `If-Range` (§13.1.5), as `spec/wasm.md` §3 states.

use std::time::{Duration, SystemTime};

/// What to send of a representation.
#[derive(Debug, PartialEq, Eq)]
pub enum Wanted {
    /// The whole representation, `200`: no `Range`, a unit other than
    /// `bytes` (ignored, §14.2), several ranges (ignored, §14.2 allows it),
    /// or an `If-Range` that does not match.
    All,
    /// Bytes `start..=end`, `206`.
    Part(u64, u64),
    /// `416`: a single range the representation does not reach, or a
    /// malformed `bytes` range.
    Unsatisfiable,
}

/// The current validators of a representation.
pub struct Validators<'a> {
    /// The strong entity tag, quoted.
    pub etag: &'a str,
    /// The modification time.
    pub modified: SystemTime,
    /// The time of the answer.
    pub now: SystemTime,
}

/// What `range` asks of `len` bytes, given `if_range`.
pub fn wanted(range: Option<&str>, if_range: Option<&str>, v: &Validators, len: u64) -> Wanted {
    match range {
        Some(r) if if_range.is_none_or(|c| matches(c, v)) => parse(r, len),
        _ => Wanted::All,
    }
}

/// Whether an `If-Range` value names the current representation: the
/// same strong entity tag, or exactly the modification date when that
/// date is a strong validator (at least a second before now, §8.8.2.2).
fn matches(cond: &str, v: &Validators) -> bool {
    let cond = cond.trim();
    if cond.starts_with('"') {
        return cond == v.etag;
    }
    let Ok(date) = httpdate::parse_http_date(cond) else {
        return false;
    };
    let whole = |t: SystemTime| {
        t.duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    };
    whole(date) == whole(v.modified) && v.modified + Duration::from_secs(1) <= v.now
}

fn parse(range: &str, len: u64) -> Wanted {
    let Some((unit, set)) = range.split_once('=') else {
        return Wanted::Unsatisfiable;
    };
    if !unit.trim().eq_ignore_ascii_case("bytes") {
        return Wanted::All;
    }
    let specs: Vec<&str> = set
        .split(',')
        .map(|s| s.trim_matches([' ', '\t']))
        .filter(|s| !s.is_empty())
        .collect();
    match specs[..] {
        [one] => single(one, len).unwrap_or(Wanted::Unsatisfiable),
        [] => Wanted::Unsatisfiable,
        _ => Wanted::All,
    }
}

/// Decimal digits only (`u64::from_str` would take a `+`); too large a
/// number saturates.
fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(s.parse().unwrap_or(u64::MAX))
}

/// One `first-last`, `first-` or `-suffix` (§14.1.2); `None` if malformed.
fn single(spec: &str, len: u64) -> Option<Wanted> {
    let (first, last) = spec.split_once('-')?;
    if first.is_empty() {
        let n = number(last)?;
        return Some(if n == 0 || len == 0 {
            Wanted::Unsatisfiable
        } else {
            Wanted::Part(len.saturating_sub(n), len - 1)
        });
    }
    let first = number(first)?;
    let last = if last.is_empty() {
        u64::MAX
    } else {
        number(last)?
    };
    Some(if last < first || first >= len {
        Wanted::Unsatisfiable
    } else {
        Wanted::Part(first, last.min(len - 1))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(etag: &str, modified: u64, now: u64) -> Validators<'_> {
        let t = |s| SystemTime::UNIX_EPOCH + Duration::from_secs(s);
        Validators {
            etag,
            modified: t(modified),
            now: t(now),
        }
    }

    #[test]
    fn single_suffix_open_several_and_refused() {
        let w = |r: &str| wanted(Some(r), None, &v("\"t\"", 0, 9), 100);
        assert_eq!(wanted(None, None, &v("\"t\"", 0, 9), 100), Wanted::All);
        assert_eq!(w("bytes=0-9"), Wanted::Part(0, 9));
        assert_eq!(w("Bytes = 0-9"), Wanted::Part(0, 9));
        assert_eq!(w("bytes=90-"), Wanted::Part(90, 99));
        assert_eq!(w("bytes=-10"), Wanted::Part(90, 99));
        assert_eq!(w("bytes=-1000"), Wanted::Part(0, 99));
        assert_eq!(w("bytes=-99999999999999999999999"), Wanted::Part(0, 99));
        assert_eq!(w("bytes=95-200"), Wanted::Part(95, 99));
        assert_eq!(w("bytes=0-1,5-6"), Wanted::All);
        assert_eq!(w("bytes=0-1,,"), Wanted::Part(0, 1));
        assert_eq!(w("items=0-1"), Wanted::All);
        for bad in [
            "bytes=100-",
            "bytes=5-1",
            "bytes=-0",
            "bytes=+1-2",
            "bytes=a-b",
            "bytes=",
            "bytes",
            "bytes=1",
        ] {
            assert_eq!(w(bad), Wanted::Unsatisfiable, "{bad}");
        }
        let empty = wanted(Some("bytes=-5"), None, &v("\"t\"", 0, 9), 0);
        assert_eq!(empty, Wanted::Unsatisfiable);
    }

    #[test]
    fn if_range_matches_the_strong_tag_or_an_older_exact_date() {
        let r = Some("bytes=0-9");
        let cur = v("\"t\"", 784_111_777, 784_111_800);
        let date = "Sun, 06 Nov 1994 08:49:37 GMT";
        assert_eq!(wanted(r, Some("\"t\""), &cur, 100), Wanted::Part(0, 9));
        assert_eq!(wanted(r, Some(date), &cur, 100), Wanted::Part(0, 9));
        for other in ["\"u\"", "W/\"t\"", "Sun, 06 Nov 1994 08:49:38 GMT", "x"] {
            assert_eq!(wanted(r, Some(other), &cur, 100), Wanted::All, "{other}");
        }
        // Modified within the second of the answer: not a strong validator.
        let fresh = v("\"t\"", 784_111_777, 784_111_777);
        assert_eq!(wanted(r, Some(date), &fresh, 100), Wanted::All);
        // A stale If-Range never turns a bad range into 416.
        assert_eq!(
            wanted(Some("bytes=500-"), Some("\"u\""), &cur, 100),
            Wanted::All
        );
    }
}
