//! The row lengths (`pl`) of a reduced Gaussian grid, checked before
//! ecCodes reads the message (`spec/convert.md` "Hostile files"): ecCodes
//! divides 360° by each row's number of points as an exact fraction and
//! aborts the process on a row of 0 points. Pure, and reached from
//! [`super::grib_scan::scan`], so fuzzed with it.

use super::grib_scan::{be, Section};

/// Checks the `pl` list of `message` (a whole GRIB message, `GRIB` to
/// `7777`) when its grid is reduced Gaussian: GRIB1 data representation
/// types 4, 14, 24 and 34 with `Ni` missing, GRIB2 templates 3.40 to 3.43
/// with a list of points. The list must lie in the grid section and have
/// no row of 0 points.
pub fn check(message: &[u8], edition: u8, sections: &[Section]) -> Result<(), String> {
    let number = if edition == 1 { 2 } else { 3 };
    for s in sections.iter().filter(|s| s.number == number) {
        let start = usize::try_from(s.offset).map_err(|_| "section offset")?;
        let len = usize::try_from(s.len).map_err(|_| "section length")?;
        let sec = &message[start..start + len];
        if let Some((at, rows, width)) = if edition == 1 {
            grib1_pl(sec)
        } else {
            grib2_pl(sec)
        } {
            rows_have_points(sec, at, rows, width, number, s.offset)?;
        }
    }
    Ok(())
}

/// `(offset in the section, rows, bytes per entry)` of a GRIB1 section 2's
/// `pl` list, for a reduced Gaussian grid.
fn grib1_pl(sec: &[u8]) -> Option<(u64, u64, u64)> {
    let (nv, location, kind) = (*sec.get(3)?, *sec.get(4)?, *sec.get(5)?);
    let ni = be(sec.get(6..8)?);
    if !matches!(kind, 4 | 14 | 24 | 34) || ni != 0xFFFF || location == 0xFF || location == 0 {
        return None;
    }
    let nj = be(sec.get(8..10)?);
    // Octet `location` (1-based) starts the vertical coordinates, 4 bytes
    // each; the list follows them.
    Some((u64::from(location) - 1 + 4 * u64::from(nv), nj, 2))
}

/// As [`grib1_pl`] for a GRIB2 section 3: the list is its last `Nj`
/// entries of `numberOfOctectsForNumberOfPoints` bytes each.
fn grib2_pl(sec: &[u8]) -> Option<(u64, u64, u64)> {
    let (width, interpretation) = (u64::from(*sec.get(10)?), *sec.get(11)?);
    let template = be(sec.get(12..14)?);
    if !(40..=43).contains(&template) || interpretation == 0 {
        return None;
    }
    let nj = be(sec.get(34..38)?);
    let list = nj.saturating_mul(width);
    Some(((sec.len() as u64).saturating_sub(list).max(72), nj, width))
}

fn rows_have_points(
    sec: &[u8],
    at: u64,
    rows: u64,
    width: u64,
    number: u8,
    offset: u64,
) -> Result<(), String> {
    let end = rows
        .checked_mul(width)
        .and_then(|n| n.checked_add(at))
        .filter(|&e| width > 0 && e <= sec.len() as u64)
        .ok_or_else(|| {
            format!(
                "the reduced Gaussian grid's list of {rows} row lengths ({width} bytes each) \
                 does not fit in section {number} at byte {offset} ({} bytes)",
                sec.len()
            )
        })?;
    let list = &sec[at as usize..end as usize];
    match list.chunks(width as usize).position(|e| be(e) == 0) {
        Some(row) => Err(format!(
            "row {row} of the reduced Gaussian grid in section {number} at byte {offset} has 0 points"
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::grib_scan::scan;

    const GRIB1: &[u8] =
        include_bytes!("../../../fuzz/corpus/weather_grib_scan/reduced-gg-grib1.grib");

    /// A GRIB2 message whose section 3 is template 3.40 with `pl`.
    fn grib2(pl: &[u16]) -> Vec<u8> {
        let mut s3 = vec![0u8; 72];
        s3[4] = 3;
        s3[10] = 2; // two bytes per entry
        s3[11] = 1; // a list of points per parallel
        s3[12..14].copy_from_slice(&40u16.to_be_bytes());
        s3[30..34].fill(0xff); // Ni missing
        s3[34..38].copy_from_slice(&(pl.len() as u32).to_be_bytes());
        for n in pl {
            s3.extend_from_slice(&n.to_be_bytes());
        }
        let len = s3.len() as u32;
        s3[..4].copy_from_slice(&len.to_be_bytes());
        let mut body = [&[0, 0, 0, 21, 1][..], &[0; 16]].concat();
        body.extend(s3);
        for (n, l) in [(4u8, 34u32), (5, 21), (6, 6), (7, 5)] {
            body.extend_from_slice(&l.to_be_bytes());
            body.push(n);
            body.extend(std::iter::repeat_n(0, l as usize - 5));
        }
        let mut m = b"GRIB\0\0\0\x02".to_vec();
        m.extend_from_slice(&((16 + body.len() + 4) as u64).to_be_bytes());
        m.extend(body);
        m.extend_from_slice(b"7777");
        m
    }

    #[test]
    fn rows_of_0_points_are_refused() {
        assert!(scan(GRIB1).is_ok());
        // pl[25] of the GRIB1 sample (section 2 at byte 60, list at octet 33).
        let mut b = GRIB1.to_vec();
        b[60 + 32 + 2 * 25..60 + 32 + 2 * 26].fill(0);
        let e = scan(&b).unwrap_err();
        assert!(
            e.what.contains("row 25") && e.what.contains("0 points"),
            "{e}"
        );
        assert!(scan(&grib2(&[20, 24, 24, 20])).is_ok());
        let e = scan(&grib2(&[20, 0, 24, 20])).unwrap_err();
        assert!(e.what.contains("row 1"), "{e}");
    }

    #[test]
    fn lists_past_their_section_are_refused() {
        let mut b = grib2(&[20, 24, 24, 20]);
        // Nj = 1000: the list would need 2000 bytes.
        b[16 + 21 + 34..16 + 21 + 38].copy_from_slice(&1000u32.to_be_bytes());
        let e = scan(&b).unwrap_err();
        assert!(e.what.contains("does not fit"), "{e}");
        let mut b = GRIB1.to_vec();
        b[60 + 4] = 200; // the list would start at octet 200 of 160
        assert!(scan(&b).unwrap_err().what.contains("does not fit"));
    }
}
