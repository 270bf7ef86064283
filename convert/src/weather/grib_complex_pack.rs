//! GRIB2 complex packing written by tgm (data representation templates 5.2
//! and 5.3, `grid_complex` and `grid_complex_spatial_differencing`;
//! `spec/convert.md` "GRIB write-back", step 2).
//!
//! ecCodes 2.28 lays a complex-packed message out and picks its scales, but
//! its encoder of the groups cannot be trusted with the codes:
//! - it records each group's width in 4 bits yet lets a group widen to 16
//!   bits or more, so a group whose codes span 2^15 or more has its width
//!   written modulo 16, and the message decodes to other values;
//! - it writes template 5.3 with no spatial differencing (order 0), so a
//!   source differenced to order 1 or 2 comes back at another order;
//! - it codes missing points only by a bitmap, so a source that coded them
//!   within its data (`missingValueManagementUsed` 1, as NCEP's wave and
//!   land-sea fields do) comes back with a bitmap, several times larger.
//!
//! Here the data section is coded again from the scales ecCodes wrote (R,
//! E, D), at the source's order of spatial differencing and with its
//! missing points coded as the source coded them, in groups of one
//! lengths chosen for the fewest bits, and section 5's group keys are
//! rewritten to match. The layout is the one ecCodes decodes: the extra
//! descriptors (first values, then the overall minimum, sign and
//! magnitude), the group references, widths and lengths, each run padded
//! to whole octets, then every group's values.

use tgm::cbor::Value;

use super::export::get;
use super::ffi::Handle;
use super::field_values::FieldValues;
use super::grib_decimal::{offset, ten_to_the};
use super::GribError;

/// The `base[i].grib` key of a template 5.3 source's order of spatial
/// differencing, recorded when it is not 0.
pub(super) const ORDER_KEY: &str = "orderOfSpatialDifferencing";

/// The order of spatial differencing to write `packing` at, for an object
/// whose source is described by `grib`: `None` for a packing other than
/// `grid_complex` and `grid_complex_spatial_differencing`; 0 for
/// `grid_complex`; for `grid_complex_spatial_differencing`, the source's
/// recorded order ([`ORDER_KEY`], 1 or 2), else 0 when the source was so
/// packed (its order was 0, which is not recorded), else 2. Refused,
/// naming the key, when the recorded order is not 1 or 2.
pub(super) fn order_for(grib: &[(Value, Value)], packing: &str) -> Result<Option<u8>, GribError> {
    match packing {
        "grid_complex" => Ok(Some(0)),
        "grid_complex_spatial_differencing" => match get(grib, ORDER_KEY) {
            Some(v) => match v.as_i64() {
                Some(o @ 1..=2) => Ok(Some(o as u8)),
                _ => Err(GribError::Invalid(format!(
                    "grib.{ORDER_KEY} is {v:?}; an order of spatial differencing is 1 or 2"
                ))),
            },
            None if get(grib, "packingType").and_then(Value::as_text) == Some(packing) => {
                Ok(Some(0))
            }
            None => Ok(Some(2)),
        },
        _ => Ok(None),
    }
}

/// Fixed group lengths tried beside the merged groups; the grouping giving
/// the fewest bits is kept.
const GROUP_LENGTHS: [usize; 6] = [8, 16, 32, 64, 128, 256];

/// The runs joined into groups by [`merged_lengths`], and its longest group.
const RUN: usize = 8;
const LONGEST_GROUP: usize = 1 << 16;

/// Widest code coded here (ecCodes decodes into a `long`).
const MAX_CODE_BITS: u32 = 62;

/// A missing point coded within the data, among codes (which are below
/// 2^62, and their differences below 2^64 − 1).
const MISSING: u64 = u64::MAX;

/// Widest extra descriptor, in octets.
const MAX_EXTRA_OCTETS: u32 = 4;

/// How missing points are coded: by the bitmap ecCodes wrote (section 5
/// counts only the present values), or within the data with no bitmap
/// (`missingValueManagementUsed` 1, code table 5.5: a group of missing
/// points has the reference `2^bits − 1` and no width, a missing point in
/// a group of width `w` the code `2^w − 1`), with the source's primary
/// missing value substitute (octets 24–27 of section 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Missing {
    Bitmap,
    Primary([u8; 4]),
}

/// How a source packed as `packing` coded its missing points: its section
/// 5 as the template `h` still holds it, read before the values are set.
/// `Primary` only for `missingValueManagementUsed` 1; 2 (a secondary
/// substitute too) is left to ecCodes.
pub(super) fn source_missing(
    h: &Handle,
    grib: &[(Value, Value)],
    packing: &str,
) -> Result<Missing, GribError> {
    let same_packing = get(grib, "packingType").and_then(Value::as_text) == Some(packing);
    if !same_packing
        || !h.is_defined("missingValueManagementUsed")
        || h.get_long("missingValueManagementUsed")? != 1
    {
        return Ok(Missing::Bitmap);
    }
    let s5 = offset(h, "offsetSection5")?;
    let msg = h.message_bytes()?;
    Ok(match msg.get(s5 + 23..s5 + 27) {
        Some(b) => Missing::Primary([b[0], b[1], b[2], b[3]]),
        None => Missing::Bitmap,
    })
}

/// The field's data section coded again by tgm, as a whole new message,
/// from `h` as ecCodes packed it (GRIB2, template 5.2 or 5.3, no missing
/// values within its data unless `missing` codes them so), at spatial differencing `order` (0, 1 or 2;
/// template 5.3 only), group references of at least `reference_bits`
/// bits, and missing points coded as `missing` says (for `Primary`, the
/// bitmap ecCodes wrote is dropped). `None` when the message is of another
/// kind or the values are not codes at its scales (a value below R, or a
/// code too wide), and for a constant field ecCodes packed with no bits.
pub(super) fn recode(
    h: &Handle,
    values: &(impl FieldValues + ?Sized),
    order: u8,
    reference_bits: u32,
    missing: Missing,
) -> Result<Option<Vec<u8>>, GribError> {
    let template = h.get_long("dataRepresentationTemplateNumber")?;
    let within = matches!(missing, Missing::Primary(_));
    if h.get_long("edition")? != 2 || !matches!(template, 2 | 3) {
        return Ok(None);
    }
    // ecCodes keeps a template's management when no point is missing.
    let management = h.get_long("missingValueManagementUsed")?;
    let applies = (management == 0 || (within && management == 1))
        && h.get_long("bitsPerValue")? != 0
        && order <= 2
        && (template == 3 || order == 0);
    if !applies {
        return Ok(None);
    }
    let mut msg = h.message()?;
    let s5 = offset(h, "offsetSection5")?;
    let s6 = offset(h, "offsetSection6")?;
    let s6_len = offset(h, "section6Length")?;
    let s7 = offset(h, "offsetSection7")?;
    let s7_len = offset(h, "section7Length")?;
    let s5_len = if template == 3 { 49 } else { 47 };
    if s5 + s5_len > s6 || s6 + s6_len != s7 || s7 + s7_len > msg.len() {
        return Ok(None);
    }
    let Some(scales) = Scales::of(h)? else {
        return Ok(None);
    };
    let Some(codes) = scales.codes(values, missing)? else {
        return Ok(None);
    };
    let points = codes.len();
    let Some(data) = Section7::code(codes, order, reference_bits, within) else {
        return Ok(None);
    };
    data.write_keys(&mut msg[s5..s5 + s5_len]);
    let body = data.bytes();
    let Ok(s7_new) = u32::try_from(5 + body.len()) else {
        return Ok(None);
    };
    let mut tail = Vec::with_capacity(6 + 5 + body.len());
    if let Missing::Primary(substitute) = missing {
        // All points are coded: no bitmap (indicator 255).
        let Ok(points) = u32::try_from(points) else {
            return Ok(None);
        };
        let s5 = &mut msg[s5..s5 + s5_len];
        s5[5..9].copy_from_slice(&points.to_be_bytes());
        s5[22] = 1;
        s5[23..27].copy_from_slice(&substitute);
        tail.extend_from_slice(&[0, 0, 0, 6, 6, 255]);
    } else {
        tail.extend_from_slice(&msg[s6..s7]);
    }
    tail.extend_from_slice(&s7_new.to_be_bytes());
    tail.push(7);
    tail.extend_from_slice(&body);
    msg.splice(s6..s7 + s7_len, tail);
    let total = msg.len() as u64;
    msg[8..16].copy_from_slice(&total.to_be_bytes());
    Ok(Some(msg))
}

/// R, E and D of the message ecCodes packed.
#[derive(Debug, Clone, Copy)]
struct Scales {
    reference: f64,
    binary: i32,
    decimal: i32,
}

impl Scales {
    /// The scales `h` records (`referenceValue`, `binaryScaleFactor`,
    /// `decimalScaleFactor`), when the factors are in range.
    fn of(h: &Handle) -> Result<Option<Self>, GribError> {
        let factor = |k: &str| h.get_long(k).map(|v| i32::try_from(v).ok());
        Ok(
            match (factor("binaryScaleFactor")?, factor("decimalScaleFactor")?) {
                (Some(binary), Some(decimal)) => Some(Scales {
                    reference: h.get_double("referenceValue")?,
                    binary,
                    decimal,
                }),
                _ => None,
            },
        )
    }

    /// The codes of the values, as ecCodes computes them:
    /// `⌊(v·10^D − R)·2^−E + 0.5⌋`; a NaN is left out under a bitmap and
    /// is [`MISSING`] when coded within the data. `None` when a code is
    /// negative or too wide.
    fn codes(
        self,
        values: &(impl FieldValues + ?Sized),
        missing: Missing,
    ) -> Result<Option<Vec<u64>>, GribError> {
        let ten = ten_to_the(self.decimal);
        let scale = 2f64.powi(-self.binary);
        let top = 2f64.powi(MAX_CODE_BITS as i32);
        let mut codes = Vec::new();
        codes
            .try_reserve_exact(values.len())
            .map_err(|_| GribError::Invalid(format!("cannot allocate {} codes", values.len())))?;
        let mut coded = true;
        values.each_step(&mut |_, step| {
            for &v in step {
                if v.is_nan() {
                    if missing != Missing::Bitmap {
                        codes.push(MISSING);
                    }
                    continue;
                }
                let x = (v * ten - self.reference) * scale + 0.5;
                if !(0.0..top).contains(&x) {
                    coded = false;
                    return Ok(());
                }
                codes.push(x as u64);
            }
            Ok(())
        })?;
        Ok(coded.then_some(codes))
    }
}

/// A coded data section and the section 5 keys that describe it.
#[derive(Debug)]
struct Section7 {
    order: u8,
    extra_octets: u32,
    /// The first `order` codes, then the overall minimum of the differences.
    extras: Vec<i64>,
    reference_bits: u32,
    width_reference: u32,
    width_bits: u32,
    length_reference: usize,
    length_bits: u32,
    groups: Vec<Group>,
    /// The values coded in groups (differences less their minimum);
    /// [`MISSING`] for a missing point coded within the data.
    coded: Vec<u64>,
}

/// One group: its reference (smallest value; `None` when every point is
/// missing), width in bits and number of points.
#[derive(Debug, Clone, Copy)]
struct Group {
    reference: Option<u64>,
    width: u32,
    len: usize,
}

impl Section7 {
    /// `codes` ([`MISSING`] for a missing point coded within the data)
    /// coded at spatial differencing `order` over the present points, in
    /// place, group references of at least `reference_bits` bits, with
    /// missing points coded `within` the data or not at all; `None` when
    /// there are no more present points than the order, or a descriptor does
    /// not fit its field.
    fn code(mut codes: Vec<u64>, order: u8, reference_bits: u32, within: bool) -> Option<Self> {
        let k = usize::from(order);
        let mut present = codes.iter().copied().filter(|&c| c != MISSING);
        let firsts: Vec<u64> = present.by_ref().take(k).collect();
        // More present points than the order.
        present.next()?;
        let mut extras = Vec::new();
        if k > 0 {
            let bias = differences(codes.iter().copied(), k).min()?;
            // Each present code after the first `order` becomes its
            // difference less the smallest.
            let mut history = [0i128; 2];
            for (seen, c) in codes.iter_mut().filter(|c| **c != MISSING).enumerate() {
                let x = i128::from(*c);
                if seen >= k {
                    let d = difference(x, history, k) - bias;
                    let v = u64::try_from(d).ok().filter(|&v| v != MISSING)?;
                    *c = v;
                }
                history = [x, history[0]];
            }
            // The decoder replaces the first `order` by the extra
            // descriptors; they are zero in the groups (GRIB2 template
            // 5.3, note 2).
            for c in codes.iter_mut().filter(|c| **c != MISSING).take(k) {
                *c = 0;
            }
            for f in firsts {
                extras.push(i64::try_from(f).ok()?);
            }
            extras.push(i64::try_from(bias).ok()?);
        }
        let coded = codes;
        let extra_octets = match extras.split_last() {
            None => 0,
            Some((bias, firsts)) => {
                // The first values are unsigned, but some decoders (grib-rs,
                // g2c at 4 octets) read them signed: their top bit stays
                // clear, as ecCodes' and wgrib2's encoders keep it.
                let fits = |o: u32| {
                    firsts.iter().all(|&f| (f as u64) >> (8 * o - 1) == 0)
                        && bias.unsigned_abs() >> (8 * o - 1) == 0
                };
                (1..=MAX_EXTRA_OCTETS).find(|&o| fits(o))?
            }
        };
        let mut plans: Vec<Vec<usize>> = GROUP_LENGTHS
            .iter()
            .map(|&l| fixed_lengths(coded.len(), l))
            .collect();
        plans.push(merged_lengths(&coded, within));
        let (layout, groups) = plans
            .iter()
            .map(|plan| {
                let groups = groups_of(&coded, plan, within);
                (Layout::of(&groups, within), groups)
            })
            .min_by_key(|(layout, groups)| layout.bits(groups))?;
        let reference_bits = reference_bits.max(layout.reference_bits).max(1);
        let widest = groups.iter().map(|g| g.width).max().unwrap_or(0);
        if reference_bits > 63 || widest > 63 || (within && (reference_bits > 31 || widest > 31)) {
            return None;
        }
        Some(Section7 {
            order,
            extra_octets,
            extras,
            reference_bits,
            width_reference: layout.width_reference,
            width_bits: layout.width_bits,
            length_reference: layout.length_reference,
            length_bits: layout.length_bits,
            groups,
            coded,
        })
    }

    /// Rewrites section 5's group keys (octets 20 and 32–47, and 48–49 for
    /// template 5.3) in `s5`, the section from its first octet.
    fn write_keys(&self, s5: &mut [u8]) {
        let last = self.groups.last().map_or(0, |g| g.len);
        s5[19] = self.reference_bits as u8;
        s5[31..35].copy_from_slice(&(self.groups.len() as u32).to_be_bytes());
        s5[35] = self.width_reference as u8;
        s5[36] = self.width_bits as u8;
        s5[37..41].copy_from_slice(&(self.length_reference as u32).to_be_bytes());
        s5[41] = 1;
        s5[42..46].copy_from_slice(&(last as u32).to_be_bytes());
        s5[46] = self.length_bits as u8;
        if s5.len() >= 49 {
            s5[47] = self.order;
            s5[48] = self.extra_octets as u8;
        }
    }

    /// The section's bytes after its 5-octet header.
    fn bytes(&self) -> Vec<u8> {
        let mut w = Bits::default();
        let octet_bits = 8 * self.extra_octets;
        if let Some((bias, firsts)) = self.extras.split_last() {
            for &f in firsts {
                w.put(f as u64, octet_bits);
            }
            w.put(u64::from(*bias < 0), 1);
            w.put(bias.unsigned_abs(), octet_bits - 1);
        }
        let all_missing = (1u64 << self.reference_bits) - 1;
        for g in &self.groups {
            w.put(g.reference.unwrap_or(all_missing), self.reference_bits);
        }
        w.pad();
        for g in &self.groups {
            w.put(u64::from(g.width - self.width_reference), self.width_bits);
        }
        w.pad();
        // The last group's length is `trueLengthOfLastGroup`; its scaled
        // length is written as 0 when it is shorter than the reference.
        for g in &self.groups {
            let scaled = g.len.saturating_sub(self.length_reference);
            w.put(scaled as u64, self.length_bits);
        }
        w.pad();
        let mut at = 0;
        for g in &self.groups {
            let run = &self.coded[at..at + g.len];
            at += g.len;
            let (Some(reference), width) = (g.reference, g.width) else {
                continue;
            };
            let marker = (1u64 << width) - 1;
            for &c in run {
                w.put(if c == MISSING { marker } else { c - reference }, width);
            }
        }
        w.finish()
    }
}

/// The spatial difference of order `k` (1 or 2) of the code `x` after
/// `history` (the code before it, then the one before that).
fn difference(x: i128, history: [i128; 2], k: usize) -> i128 {
    match k {
        1 => x - history[0],
        _ => x - 2 * history[0] + history[1],
    }
}

/// The spatial differences of order `k` of the present codes of `codes`,
/// from the `k`-th on.
fn differences(codes: impl Iterator<Item = u64>, k: usize) -> impl Iterator<Item = i128> {
    let mut history = [0i128; 2];
    codes
        .filter(|&c| c != MISSING)
        .enumerate()
        .filter_map(move |(seen, c)| {
            let x = i128::from(c);
            let d = (seen >= k).then(|| difference(x, history, k));
            history = [x, history[0]];
            d
        })
}

/// Lengths of `n` points in groups of `length` (the last may be shorter).
fn fixed_lengths(n: usize, length: usize) -> Vec<usize> {
    let mut plan = vec![length; n / length];
    if !n.is_multiple_of(length) {
        plan.push(n % length);
    }
    plan
}

/// The range of a run of points: its smallest and largest present codes
/// (`None` when every point is missing) and whether a point is missing.
#[derive(Debug, Clone, Copy)]
struct Span {
    range: Option<(u64, u64)>,
    gaps: bool,
    len: usize,
}

impl Span {
    fn of(run: &[u64]) -> Self {
        let present = run.iter().copied().filter(|&c| c != MISSING);
        let range = present.fold(None, |r: Option<(u64, u64)>, c| {
            Some(r.map_or((c, c), |(lo, hi)| (lo.min(c), hi.max(c))))
        });
        Span {
            range,
            gaps: run.contains(&MISSING),
            len: run.len(),
        }
    }

    fn join(self, o: Span) -> Self {
        let range = match (self.range, o.range) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (r, None) | (None, r) => r,
        };
        Span {
            range,
            gaps: self.gaps || o.gaps,
            len: self.len + o.len,
        }
    }

    /// The group's width. With missing points coded `within` the data, a
    /// code `2^w − 1` is a missing point in every group of width `w` > 0:
    /// such groups are one bit wider than their range.
    fn width(self, within: bool) -> u32 {
        match self.range {
            None => 0,
            Some((lo, hi)) if within && (hi > lo || self.gaps) => bits_of(hi - lo + 1),
            Some((lo, hi)) => bits_of(hi - lo),
        }
    }

    /// The bits of the group's values.
    fn value_bits(self, within: bool) -> u64 {
        u64::from(self.width(within)) * self.len as u64
    }
}

/// Lengths of groups built from runs of [`RUN`] points, up to
/// [`LONGEST_GROUP`] points: neighbours are first joined where that adds no
/// bits (runs of missing points, runs as wide as their group), then where
/// it adds fewer bits than one group's descriptors (estimated at 40 bits),
/// so that a long run of missing points becomes a group of its own rather
/// than widen the groups beside it.
fn merged_lengths(coded: &[u64], within: bool) -> Vec<usize> {
    const DESCRIPTORS: u64 = 40;
    let runs: Vec<Span> = coded.chunks(RUN).map(Span::of).collect();
    let free = joined(runs, within, 0);
    let merged = joined(free, within, DESCRIPTORS);
    merged.iter().map(|g| g.len).collect()
}

/// One pass over `spans`, each joined to the group before it when the
/// joined group's values take at most `slack` bits more than the two apart.
fn joined(spans: Vec<Span>, within: bool, slack: u64) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        if let Some(group) = out.last_mut() {
            let both = group.join(span);
            let apart = group.value_bits(within) + span.value_bits(within) + slack;
            if both.len <= LONGEST_GROUP && both.value_bits(within) <= apart {
                *group = both;
                continue;
            }
        }
        out.push(span);
    }
    out
}

/// The groups of `coded` of the lengths `plan` gives, in order.
fn groups_of(coded: &[u64], plan: &[usize], within: bool) -> Vec<Group> {
    let mut at = 0;
    plan.iter()
        .map(|&len| {
            let span = Span::of(&coded[at..at + len]);
            at += len;
            Group {
                reference: span.range.map(|(lo, _)| lo),
                width: span.width(within),
                len,
            }
        })
        .collect()
}

/// The widths of a grouping's descriptors: references, widths (from their
/// smallest) and lengths (from the shortest but the last's).
#[derive(Debug, Clone, Copy)]
struct Layout {
    reference_bits: u32,
    width_reference: u32,
    width_bits: u32,
    length_reference: usize,
    length_bits: u32,
}

impl Layout {
    fn of(groups: &[Group], within: bool) -> Self {
        // Under coded missing points, `2^bits − 1` marks a missing group.
        let widest_ref = groups.iter().filter_map(|g| g.reference).max().unwrap_or(0);
        let (lo, hi) = groups.iter().fold((u32::MAX, 0), |(lo, hi), g| {
            (lo.min(g.width), hi.max(g.width))
        });
        let lo = lo.min(hi);
        let body = &groups[..groups.len().saturating_sub(1)];
        let shortest = body.iter().map(|g| g.len).min().unwrap_or(0);
        let longest = body.iter().map(|g| g.len).max().unwrap_or(0);
        Layout {
            reference_bits: bits_of(widest_ref + u64::from(within)),
            width_reference: lo,
            width_bits: bits_of(u64::from(hi - lo)),
            length_reference: shortest,
            length_bits: bits_of((longest - shortest) as u64),
        }
    }

    /// The bits of the section's descriptors and values, without padding.
    fn bits(self, groups: &[Group]) -> u64 {
        let per_group = u64::from(self.reference_bits + self.width_bits + self.length_bits);
        let values: u64 = groups
            .iter()
            .map(|g| u64::from(g.width) * g.len as u64)
            .sum();
        per_group * groups.len() as u64 + values
    }
}

/// The bits needed to hold `v` (0 for 0).
fn bits_of(v: u64) -> u32 {
    64 - v.leading_zeros()
}

/// Bits written most significant first.
#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    acc: u64,
    held: u32,
}

impl Bits {
    /// Appends the low `bits` bits of `v` (at most 63).
    fn put(&mut self, v: u64, bits: u32) {
        if bits == 0 {
            return;
        }
        // Split so that `acc` never holds more than 63 bits.
        if bits > 32 {
            self.put(v >> 32, bits - 32);
            self.put(v & 0xffff_ffff, 32);
            return;
        }
        self.acc = (self.acc << bits) | (v & ((1u64 << bits) - 1));
        self.held += bits;
        while self.held >= 8 {
            self.held -= 8;
            self.out.push((self.acc >> self.held) as u8);
        }
        self.acc &= (1u64 << self.held) - 1;
    }

    /// Pads to a whole octet with zero bits.
    fn pad(&mut self) {
        if self.held > 0 {
            self.put(0, 8 - self.held);
        }
    }

    /// The bytes written, padded.
    fn finish(mut self) -> Vec<u8> {
        self.pad();
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sawtooth whose codes at E = −10 span more than 2^15 within a
    /// few points: steps of 0.5 with a period of 97 around 250–298.
    fn sawtooth(n: usize) -> Vec<f64> {
        (0..n).map(|i| 250.0 + (i % 97) as f64 * 0.5).collect()
    }

    /// A smooth field: what spatial differencing is for.
    fn smooth(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| 273.0 + 20.0 * (i as f64 * 0.01).sin() + (i % 11) as f64 * 0.01)
            .collect()
    }

    /// The sample's grid packed by ecCodes as `packing` at 16 bits.
    fn packed(packing: &str, values: &[f64]) -> Handle {
        let mut h = Handle::from_sample("regular_gg_sfc_grib2").unwrap();
        assert_eq!(
            h.get_long("numberOfDataPoints").unwrap() as usize,
            values.len()
        );
        h.set_long("bitsPerValue", 16).unwrap();
        h.set_double_array("values", values).unwrap();
        h.set_string("packingType", packing).unwrap();
        h.set_double_array("values", values).unwrap();
        h
    }

    /// The values ecCodes decodes from `msg`, and its `key`s.
    fn decoded(msg: &[u8], keys: &[&str]) -> (Vec<f64>, Vec<i64>) {
        let h = Handle::from_message(msg).unwrap();
        let keys = keys.iter().map(|k| h.get_long(k).unwrap()).collect();
        (h.get_double_array("values").unwrap(), keys)
    }

    /// The largest difference between two fields.
    fn largest_error(a: &[f64], b: &[f64]) -> f64 {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn groups_spanning_sixteen_bits_decode_to_their_values() {
        let values = sawtooth(8192);
        let h = packed("grid_complex", &values);
        assert_eq!(h.get_long("binaryScaleFactor").unwrap(), -10);
        // ecCodes' own groups do not hold these values.
        let eccodes = h.get_double_array("values").unwrap();
        assert!(largest_error(&eccodes, &values) > 1.0);
        let msg = recode(&h, &values[..], 0, 16, Missing::Bitmap)
            .unwrap()
            .unwrap();
        let (back, keys) = decoded(&msg, &["binaryScaleFactor", "bitsPerValue"]);
        assert_eq!(largest_error(&back, &values), 0.0);
        assert_eq!(keys, [-10, 16]);
    }

    #[test]
    fn spatial_differencing_of_each_order_decodes_exactly() {
        let values = smooth(8192);
        let h = packed("grid_complex_spatial_differencing", &values);
        let plain = h.message().unwrap().len();
        let keys = [
            "orderOfSpatialDifferencing",
            "numberOfOctetsExtraDescriptors",
        ];
        let quantum = 2f64.powi(h.get_long("binaryScaleFactor").unwrap() as i32);
        let mut sizes = Vec::new();
        for order in [0u8, 1, 2] {
            let msg = recode(&h, &values[..], order, 16, Missing::Bitmap)
                .unwrap()
                .unwrap();
            let (back, got) = decoded(&msg, &keys);
            assert!(
                largest_error(&back, &values) <= quantum / 2.0,
                "order {order}"
            );
            assert_eq!(got[0], i64::from(order));
            assert_eq!(got[1] > 0, order > 0);
            sizes.push(msg.len());
        }
        // Differencing is what makes a smooth field small.
        assert!(
            sizes[2] < sizes[0] && sizes[0] <= plain,
            "{sizes:?} vs {plain}"
        );
    }

    #[test]
    fn decreasing_fields_code_a_negative_minimum_difference() {
        let values: Vec<f64> = smooth(8192).into_iter().rev().collect();
        let h = packed("grid_complex_spatial_differencing", &values);
        let quantum = 2f64.powi(h.get_long("binaryScaleFactor").unwrap() as i32);
        for order in [1u8, 2] {
            let msg = recode(&h, &values[..], order, 16, Missing::Bitmap)
                .unwrap()
                .unwrap();
            let (back, _) = decoded(&msg, &[]);
            assert!(
                largest_error(&back, &values) <= quantum / 2.0,
                "order {order}"
            );
        }
    }

    #[test]
    fn values_below_the_reference_or_other_templates_are_left_to_ecodes() {
        let values = sawtooth(8192);
        let h = packed("grid_complex", &values);
        let mut lower = values.clone();
        lower[3] = 100.0;
        assert!(recode(&h, &lower[..], 0, 16, Missing::Bitmap)
            .unwrap()
            .is_none());
        // Order 1 is for template 5.3 only.
        assert!(recode(&h, &values[..], 1, 16, Missing::Bitmap)
            .unwrap()
            .is_none());
        let simple = Handle::from_sample("regular_gg_sfc_grib2").unwrap();
        assert!(recode(&simple, &values[..], 0, 16, Missing::Bitmap)
            .unwrap()
            .is_none());
    }

    /// `values` (NaN missing) packed by ecCodes as `grid_complex` with a
    /// bitmap, as `to-grib` leaves them before they are coded again.
    fn packed_with_bitmap(values: &[f64]) -> Handle {
        let mut h = Handle::from_sample("regular_gg_sfc_grib2").unwrap();
        h.set_long("bitsPerValue", 16).unwrap();
        h.set_long("bitmapPresent", 1).unwrap();
        h.set_double("missingValue", 9999.0).unwrap();
        let filled: Vec<f64> = values
            .iter()
            .map(|v| if v.is_nan() { 9999.0 } else { *v })
            .collect();
        h.set_double_array("values", &filled).unwrap();
        h.set_string("packingType", "grid_complex_spatial_differencing")
            .unwrap();
        h.set_double_array("values", &filled).unwrap();
        h
    }

    #[test]
    fn missing_points_coded_within_the_data_need_no_bitmap() {
        // A sea with land: a long run of missing points and scattered ones.
        let values: Vec<f64> = smooth(8192)
            .into_iter()
            .enumerate()
            .map(|(i, v)| match (1000..3000).contains(&i) || i % 7 == 0 {
                true => f64::NAN,
                false => v,
            })
            .collect();
        let missing = values.iter().filter(|v| v.is_nan()).count();
        let h = packed_with_bitmap(&values);
        assert_eq!(h.get_long("bitmapPresent").unwrap(), 1);
        let with_bitmap = h.message().unwrap().len();
        let quantum = 2f64.powi(h.get_long("binaryScaleFactor").unwrap() as i32);
        let substitute = Missing::Primary(9999f32.to_be_bytes());
        for order in [0u8, 2] {
            let msg = recode(&h, &values[..], order, 16, substitute)
                .unwrap()
                .unwrap();
            let keys = [
                "bitmapPresent",
                "missingValueManagementUsed",
                "numberOfMissing",
                "numberOfValues",
            ];
            let (back, got) = decoded(&msg, &keys);
            assert_eq!(got, [0, 1, missing as i64, 8192], "order {order}");
            for (i, (b, v)) in back.iter().zip(&values).enumerate() {
                match v.is_nan() {
                    true => assert_eq!(*b, 9999.0, "[{i}] order {order}"),
                    false => assert!((b - v).abs() <= quantum / 2.0, "[{i}] order {order}"),
                }
            }
            assert!(msg.len() < with_bitmap, "order {order}");
        }
        // A field with no missing point: ecCodes keeps the template's
        // management 1 without coding for it; tgm codes the groups for it.
        let whole = smooth(8192);
        let mut h = packed("grid_complex", &whole);
        h.set_long("missingValueManagementUsed", 1).unwrap();
        let msg = recode(&h, &whole[..], 0, 16, substitute).unwrap().unwrap();
        let (back, got) = decoded(&msg, &["missingValueManagementUsed", "numberOfMissing"]);
        assert_eq!(got, [1, 0]);
        assert!(largest_error(&back, &whole) <= quantum / 2.0);
    }

    #[test]
    fn random_fields_with_random_gaps_decode_exactly_at_every_order() {
        let mut state = 0x9e37_79b9u32;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        for case in 0..6 {
            // Runs of smooth values, jumps and gaps of random lengths.
            let mut values = Vec::with_capacity(8192);
            let mut level = 250.0;
            while values.len() < 8192 {
                let run = 1 + (next() % 300) as usize;
                let kind = next() % 4;
                for i in 0..run.min(8192 - values.len()) {
                    values.push(match kind {
                        0 if case % 2 == 1 => f64::NAN,
                        1 => level + f64::from(next() % 4096) / 64.0,
                        _ => level + (i as f64 * 0.05).sin(),
                    });
                }
                level = 200.0 + f64::from(next() % 100);
            }
            let h = packed_with_bitmap(&values);
            let quantum = 2f64.powi(h.get_long("binaryScaleFactor").unwrap() as i32);
            let substitute = Missing::Primary(9999f32.to_be_bytes());
            for (order, missing) in [0u8, 1, 2]
                .into_iter()
                .flat_map(|o| [(o, Missing::Bitmap), (o, substitute)])
            {
                let msg = recode(&h, &values[..], order, 16, missing)
                    .unwrap()
                    .unwrap();
                let (back, _) = decoded(&msg, &[]);
                let h = Handle::from_message(&msg).unwrap();
                let bitmap = match h.get_long("bitmapPresent").unwrap() {
                    1 => h.get_long_array("bitmap").unwrap(),
                    _ => vec![1; back.len()],
                };
                for (i, v) in values.iter().enumerate() {
                    let b = back[i];
                    let lost = bitmap[i] == 0 || (missing != Missing::Bitmap && b == 9999.0);
                    assert_eq!(lost, v.is_nan(), "case {case} order {order} [{i}]");
                    if !v.is_nan() {
                        let e = (b - v).abs();
                        assert!(e <= quantum / 2.0, "case {case} order {order} [{i}]: {e}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_order_written_is_the_sources_or_refused_naming_the_key() {
        let grib = |pairs: &[(&str, Value)]| -> Vec<(Value, Value)> {
            pairs
                .iter()
                .map(|(k, v)| (Value::Text(k.to_string()), v.clone()))
                .collect()
        };
        let sd = "grid_complex_spatial_differencing";
        let text = |t: &str| Value::Text(t.into());
        let recorded = grib(&[(ORDER_KEY, Value::Uint(1)), ("packingType", text(sd))]);
        assert_eq!(order_for(&recorded, sd).unwrap(), Some(1));
        // A source so packed at order 0 records nothing.
        assert_eq!(
            order_for(&grib(&[("packingType", text(sd))]), sd).unwrap(),
            Some(0)
        );
        // Another packing's source is differenced at order 2.
        let simple = grib(&[("packingType", text("grid_simple"))]);
        assert_eq!(order_for(&simple, sd).unwrap(), Some(2));
        assert_eq!(order_for(&simple, "grid_complex").unwrap(), Some(0));
        assert_eq!(order_for(&simple, "grid_ccsds").unwrap(), None);
        for bad in [Value::Uint(3), Value::Uint(0), text("2")] {
            let e = order_for(&grib(&[(ORDER_KEY, bad)]), sd)
                .unwrap_err()
                .to_string();
            assert!(e.contains("grib.orderOfSpatialDifferencing"), "{e}");
        }
    }

    #[test]
    fn first_values_keep_the_top_bit_of_their_octets_clear() {
        // 51188 fits 2 octets only with its top bit set: 3 are used.
        let codes: Vec<u64> = (0..64).map(|i| 51188 + (i % 5)).collect();
        assert_eq!(Section7::code(codes, 2, 16, false).unwrap().extra_octets, 3);
        let small: Vec<u64> = (0..64).map(|i| 100 + i % 5).collect();
        assert_eq!(Section7::code(small, 1, 16, false).unwrap().extra_octets, 1);
        // Codes of 32 bits need more than 4 octets: not differenced.
        let wide: Vec<u64> = (0..64).map(|i| (1u64 << 31) + i).collect();
        assert!(Section7::code(wide.clone(), 1, 32, false).is_none());
        assert!(Section7::code(wide, 0, 32, false).is_some());
        // The first values are zero in the groups.
        let codes: Vec<u64> = (0..64).map(|i| 500 + i * 3).collect();
        let s = Section7::code(codes, 2, 16, false).unwrap();
        assert_eq!(s.coded[..2], [0, 0]);
        assert_eq!(s.extras, [500, 503, 0]);
    }

    #[test]
    fn bits_are_written_most_significant_first_and_padded() {
        let mut w = Bits::default();
        w.put(0b101, 3);
        w.put(0, 0);
        w.pad();
        w.put(0xabc, 12);
        w.put(u64::MAX >> 1, 63);
        let out = w.finish();
        assert_eq!(out[0], 0b1010_0000);
        assert_eq!(out[1], 0xab);
        assert_eq!(out[2] >> 4, 0xc);
        assert_eq!(out.len(), 1 + (12 + 63usize).div_ceil(8));
        assert_eq!(bits_of(0), 0);
        assert_eq!(bits_of(1 << 15), 16);
    }
}
