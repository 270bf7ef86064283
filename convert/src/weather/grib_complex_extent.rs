//! The extent of a GRIB2 complex-packed data section (templates 5.2 and
//! 5.3, `grid_complex` and `grid_complex_spatial_differencing`), checked in
//! Rust before ecCodes decodes it (`spec/convert.md` "Hostile files").
//! ecCodes 2.28 reads the group references, widths and lengths and then
//! every group's values from positions it computes from the header and the
//! data, without comparing them with the section's length, and loops over
//! as many groups as the header announces. Pure and bounded by the
//! section's bytes and the announced values, so it is fuzzed with the file
//! scan (`fuzz/fuzz_targets/weather_grib_scan.rs`).

/// The section 5 keys that lay out a complex-packed data section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ComplexLayout {
    /// `numberOfCodedValues`: the values the groups must hold together.
    pub values: u64,
    /// `numberOfGroupsOfDataValues`.
    pub groups: u64,
    /// `bitsPerValue`: the width of each group's reference.
    pub reference_bits: u64,
    /// `referenceForGroupWidths` and `numberOfBitsUsedForTheGroupWidths`.
    pub width_reference: u64,
    pub width_bits: u64,
    /// `referenceForGroupLengths`, `lengthIncrementForTheGroupLengths`,
    /// `trueLengthOfLastGroup` and `numberOfBitsUsedForTheScaledGroupLengths`.
    pub length_reference: u64,
    pub length_increment: u64,
    pub last_length: u64,
    pub length_bits: u64,
    /// `orderOfSpatialDifferencing` (0 for template 5.2) and
    /// `numberOfOctetsExtraDescriptors`.
    pub order: u64,
    pub extra_octets: u64,
}

/// The bits `n` items of `bits` bits take, rounded up to whole bytes.
pub(super) fn bytes_of(n: u64, bits: u64) -> Option<u64> {
    n.checked_mul(bits).map(|b| b.div_ceil(8))
}

/// The unsigned integer of `bits` bits at bit `at` of `b`, most significant
/// bit first (the caller has checked that it lies within `b`).
pub(super) fn bits_at(b: &[u8], at: u64, bits: u64) -> u64 {
    (at..at + bits).fold(0u64, |v, k| {
        let byte = b.get((k / 8) as usize).copied().unwrap_or(0);
        (v << 1) | u64::from(byte >> (7 - k % 8) & 1)
    })
}

/// Checks that `data` (the section's bytes after its 5-byte header) holds
/// what ecCodes reads of it under `l`: the extra descriptors, the group
/// references, widths and lengths, and every group's values, the groups'
/// lengths adding up to the coded values. Refused, with the reason, when
/// it does not, when there are more groups than values, or when a width or
/// count is beyond what ecCodes decodes into a `long`.
pub fn check(data: &[u8], l: &ComplexLayout) -> Result<(), String> {
    let held = data.len() as u64;
    let too_wide = |what: &str, bits: u64| match bits {
        0..=63 => Ok(()),
        _ => Err(format!("{what} of {bits} bits")),
    };
    too_wide("group references", l.reference_bits)?;
    too_wide("group widths", l.width_bits)?;
    too_wide("group lengths", l.length_bits)?;
    if l.groups > l.values {
        return Err(format!("{} groups for {} coded values", l.groups, l.values));
    }
    let overflow = || "the group layout overflows".to_string();
    let extra = match l.order {
        0 => 0,
        1 | 2 => (l.order + 1)
            .checked_mul(l.extra_octets)
            .and_then(|o| o.checked_mul(8))
            .ok_or_else(overflow)?,
        o => return Err(format!("order of spatial differencing {o}")),
    };
    let references = l
        .groups
        .checked_mul(l.reference_bits)
        .and_then(|b| b.checked_add(extra))
        .map(|b| b.div_ceil(8))
        .ok_or_else(overflow)?;
    let widths = bytes_of(l.groups, l.width_bits).ok_or_else(overflow)?;
    let lengths = bytes_of(l.groups, l.length_bits).ok_or_else(overflow)?;
    let descriptors = references
        .checked_add(widths)
        .and_then(|b| b.checked_add(lengths))
        .ok_or_else(overflow)?;
    if descriptors > held {
        return Err(format!(
            "the data section holds {held} bytes but its {} group descriptors take {descriptors}",
            l.groups
        ));
    }
    let width_at = references * 8;
    let length_at = (references + widths) * 8;
    let (mut values, mut bits) = (0u64, 0u128);
    for g in 0..l.groups {
        let width = bits_at(data, width_at + g * l.width_bits, l.width_bits)
            .checked_add(l.width_reference)
            .ok_or_else(overflow)?;
        too_wide("a group's values", width)?;
        let count = match g + 1 == l.groups {
            true => l.last_length,
            false => bits_at(data, length_at + g * l.length_bits, l.length_bits)
                .checked_mul(l.length_increment)
                .and_then(|n| n.checked_add(l.length_reference))
                .ok_or_else(overflow)?,
        };
        values = values.checked_add(count).ok_or_else(overflow)?;
        if values > l.values {
            return Err(format!(
                "the groups hold more values than the {} coded",
                l.values
            ));
        }
        bits += u128::from(count) * u128::from(width);
    }
    if values != l.values {
        return Err(format!(
            "the groups hold {values} values, the header {} coded",
            l.values
        ));
    }
    let need = u128::from(descriptors) + bits.div_ceil(8);
    if need > u128::from(held) {
        return Err(format!(
            "the data section holds {held} bytes but its groups' values take {need}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two groups of 3 and 2 values at widths 4 and 2 (references 8 bits,
    /// widths and lengths 4 bits each): descriptors of 2 + 1 + 1 bytes and
    /// values of 12 + 4 bits.
    fn two_groups() -> (Vec<u8>, ComplexLayout) {
        let l = ComplexLayout {
            values: 5,
            groups: 2,
            reference_bits: 8,
            width_reference: 0,
            width_bits: 4,
            length_reference: 1,
            length_increment: 1,
            last_length: 2,
            length_bits: 4,
            ..Default::default()
        };
        // references 7, 9; widths 4, 2; scaled lengths 2 (3 values), 0;
        // values 16 bits.
        (vec![7, 9, 0x42, 0x20, 0xab, 0xcd], l)
    }

    #[test]
    fn a_section_holding_its_groups_passes() {
        let (data, l) = two_groups();
        assert_eq!(check(&data, &l), Ok(()));
        // Spatial differencing: two extra descriptors of 2 octets first.
        let mut sd = vec![0u8; 6];
        sd.extend_from_slice(&data);
        let l2 = ComplexLayout {
            order: 2,
            extra_octets: 2,
            ..l
        };
        assert_eq!(check(&sd, &l2), Ok(()));
    }

    #[test]
    fn sections_shorter_than_what_they_announce_are_refused() {
        let (data, l) = two_groups();
        let e = check(&data[..5], &l).unwrap_err();
        assert!(e.contains("groups' values take 6"), "{e}");
        let e = check(&data[..3], &l).unwrap_err();
        assert!(e.contains("group descriptors take 4"), "{e}");
        let e = check(&[], &l).unwrap_err();
        assert!(e.contains("holds 0 bytes"), "{e}");
        // Lengths adding up to other than the coded values.
        let e = check(&data, &ComplexLayout { values: 6, ..l }).unwrap_err();
        assert!(e.contains("hold 5 values"), "{e}");
        let e = check(
            &data,
            &ComplexLayout {
                last_length: 9,
                ..l
            },
        )
        .unwrap_err();
        assert!(e.contains("more values than"), "{e}");
    }

    #[test]
    fn hostile_counts_and_widths_are_refused_without_work() {
        let (data, l) = two_groups();
        // 2^40 groups of no bits: more groups than values, refused before
        // any loop.
        let many = ComplexLayout {
            groups: 1 << 40,
            reference_bits: 0,
            width_bits: 0,
            length_bits: 0,
            ..l
        };
        assert!(check(&data, &many).unwrap_err().contains("groups for 5"));
        let wide = ComplexLayout {
            width_reference: 70,
            ..l
        };
        assert!(check(&data, &wide).unwrap_err().contains("of 74 bits"));
        let order = ComplexLayout { order: 3, ..l };
        assert!(check(&data, &order).unwrap_err().contains("order"));
        let huge = ComplexLayout {
            order: 1,
            extra_octets: u64::MAX,
            ..l
        };
        assert!(check(&data, &huge).unwrap_err().contains("overflows"));
    }
}
