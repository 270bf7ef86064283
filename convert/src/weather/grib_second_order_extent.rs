//! The extent of a second-order packed data section in ECMWF's general
//! extended form (GRIB1 `grid_second_order`, `_no_SPD`, `_SPD1`–`_SPD3`
//! and `_boustrophedonic`; GRIB2 templates 5.50001 and 5.50002), checked
//! in Rust before ecCodes decodes it (`spec/convert.md` "Hostile files").
//! ecCodes 2.28 (`data_g1second_order_general_extended_packing`) reads
//! the group widths, lengths and first-order values, then every group's
//! second-order values from the bit after them, as many as the widths and
//! lengths say, without comparing them with the section's length; it sizes
//! its arrays by the announced number of groups, and with no groups it
//! writes the spatial differencing's first values into an empty array.
//! Pure and bounded by the section's bytes and the announced values, so
//! it is fuzzed with the file scan (`fuzz/fuzz_targets/weather_grib_scan.rs`).

use super::grib_complex_extent::{bits_at, bytes_of};

/// The widest item ecCodes' encoder writes in this packing (a first-order
/// value, a group's values, a width or a length, a spatial differencing
/// value), and the widest this check accepts: the codes it rebuilds are
/// then sums of 32-bit numbers.
pub const MAX_BITS: u64 = 32;

/// The keys that lay out a general extended second-order section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SecondOrderLayout {
    /// `numberOfGroups` (GRIB1: `codedNumberOfGroups + 65536 · extraValues`).
    pub groups: u64,
    /// `widthOfFirstOrderValues`, `widthOfWidths` and `widthOfLengths`.
    pub first_order_bits: u64,
    pub width_bits: u64,
    pub length_bits: u64,
    /// `orderOfSPD`: the spatial differencing's order, 0 to 3.
    pub order: u64,
    /// `widthOfSPD`: the width of the differencing's first values and bias
    /// (a sign bit and a magnitude), 1 to [`MAX_BITS`] when `order` is
    /// above 0 (ecCodes decodes a magnitude of −1 bits from a width of 0).
    pub spd_bits: u64,
}

/// What a section [`check`] accepted holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecondOrderExtent {
    /// The bytes the three descriptor arrays take: where ecCodes starts
    /// reading the values.
    pub descriptors: u64,
    /// The values ecCodes decodes: the groups' lengths and the order.
    pub values: u64,
}

/// Checks that `region` (the section's bytes from its group widths to its
/// end) holds what ecCodes reads of it under `l`: the group widths,
/// lengths and first-order values, then every group's values. Refused,
/// with the reason, when it does not, when there are no groups or more
/// groups than values, or when a width exceeds [`MAX_BITS`]. Its work is
/// bounded by the region's bytes whatever the announced groups (lengths of
/// no bits are all 0, so such a section holds at most 3 groups). The
/// caller compares the values with the points the grid and bitmap give.
pub fn check(region: &[u8], l: &SecondOrderLayout) -> Result<SecondOrderExtent, String> {
    let held = region.len() as u64;
    let too_wide = |what: &str, bits: u64| match bits {
        0..=MAX_BITS => Ok(()),
        _ => Err(format!("{what} of {bits} bits (at most {MAX_BITS})")),
    };
    too_wide("first-order values", l.first_order_bits)?;
    too_wide("group widths", l.width_bits)?;
    too_wide("group lengths", l.length_bits)?;
    if l.order > 3 {
        return Err(format!("order of spatial differencing {}", l.order));
    }
    if l.order > 0 {
        too_wide("spatial differencing values", l.spd_bits)?;
        if l.spd_bits == 0 {
            return Err("spatial differencing values of 0 bits".into());
        }
    }
    if l.groups == 0 {
        return Err("no groups".into());
    }
    let more_groups = |values: u64| format!("{} groups for {values} values", l.groups);
    if l.length_bits == 0 && l.groups > l.order {
        return Err(more_groups(l.order));
    }
    let overflow = || "the group layout overflows".to_string();
    let widths = bytes_of(l.groups, l.width_bits).ok_or_else(overflow)?;
    let lengths = bytes_of(l.groups, l.length_bits).ok_or_else(overflow)?;
    let firsts = bytes_of(l.groups, l.first_order_bits).ok_or_else(overflow)?;
    let descriptors = widths + lengths + firsts;
    if descriptors > held {
        return Err(format!(
            "the data section holds {held} bytes but its {} group descriptors take {descriptors}",
            l.groups
        ));
    }
    let length_at = widths * 8;
    let (mut values, mut bits) = (l.order, 0u128);
    for g in 0..l.groups {
        let width = bits_at(region, g * l.width_bits, l.width_bits);
        too_wide("a group's values", width)?;
        let count = bits_at(region, length_at + g * l.length_bits, l.length_bits);
        values += count;
        bits += u128::from(count) * u128::from(width);
    }
    if l.groups > values {
        return Err(more_groups(values));
    }
    let need = u128::from(descriptors) + bits.div_ceil(8);
    if need > u128::from(held) {
        return Err(format!(
            "the data section holds {held} bytes but its groups' values take {need}"
        ));
    }
    Ok(SecondOrderExtent {
        descriptors,
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two groups at order 2: widths 4 bits (3 and 0), lengths 4 bits (3
    /// and 2), first-order values 8 bits; 2 + 3 + 2 = 7 values, the values
    /// 3 × 3 bits.
    fn two_groups() -> (Vec<u8>, SecondOrderLayout) {
        let region = vec![0x30, 0x32, 7, 9, 0b1010_1010, 0b1000_0000];
        let layout = SecondOrderLayout {
            groups: 2,
            first_order_bits: 8,
            width_bits: 4,
            length_bits: 4,
            order: 2,
            spd_bits: 16,
        };
        (region, layout)
    }

    #[test]
    fn a_section_holding_its_groups_is_accepted() {
        let (region, layout) = two_groups();
        let extent = SecondOrderExtent {
            descriptors: 4,
            values: 7,
        };
        assert_eq!(check(&region, &layout), Ok(extent));
    }

    #[test]
    fn a_section_short_of_its_values_or_descriptors_is_refused() {
        let (region, layout) = two_groups();
        let e = check(&region[..5], &layout).unwrap_err();
        assert!(e.contains("groups' values take 6"), "{e}");
        let e = check(&region[..3], &layout).unwrap_err();
        assert!(e.contains("descriptors take 4"), "{e}");
    }

    #[test]
    fn no_groups_too_many_groups_or_too_wide_items_are_refused() {
        let (region, layout) = two_groups();
        let none = SecondOrderLayout {
            groups: 0,
            ..layout
        };
        assert_eq!(check(&region, &none).unwrap_err(), "no groups");
        // Eight groups of lengths 3, 2 and six of 0: 7 values.
        let mut many = vec![0x30, 0, 0, 0, 0x32, 0, 0, 0];
        many.extend([0; 8]);
        let l = SecondOrderLayout {
            groups: 8,
            ..layout
        };
        assert_eq!(check(&many, &l).unwrap_err(), "8 groups for 7 values");
        // Lengths of no bits: every group empty, whatever their number.
        let empty = SecondOrderLayout {
            groups: u64::from(u32::MAX),
            length_bits: 0,
            ..layout
        };
        assert!(check(&region, &empty)
            .unwrap_err()
            .contains("groups for 2 values"));
        let wide = SecondOrderLayout {
            first_order_bits: 33,
            ..layout
        };
        assert!(check(&region, &wide).unwrap_err().contains("33 bits"));
        let order = SecondOrderLayout { order: 4, ..layout };
        assert!(check(&region, &order).unwrap_err().contains("order"));
        for (bits, cause) in [(0, "of 0 bits"), (33, "of 33 bits")] {
            let spd = SecondOrderLayout {
                spd_bits: bits,
                ..layout
            };
            let e = check(&region, &spd).unwrap_err();
            assert!(
                e.contains(cause) && e.contains("spatial differencing"),
                "{e}"
            );
        }
        // No differencing: no width of its own, and 3 + 2 values.
        let no_spd = SecondOrderLayout {
            order: 0,
            spd_bits: 0,
            ..layout
        };
        assert_eq!(check(&region, &no_spd).map(|e| e.values), Ok(5));
        // A group's own width of 33 bits (the widths' field of 8 bits).
        let mut wide_group = vec![33, 0, 3, 4, 7, 9];
        wide_group.extend([0; 16]);
        let l = SecondOrderLayout {
            width_bits: 8,
            ..layout
        };
        assert!(check(&wide_group, &l)
            .unwrap_err()
            .contains("a group's values of 33"));
    }
}
