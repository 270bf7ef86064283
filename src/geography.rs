//! Where a field's values lie on the globe, from the `geography` map that
//! `convert-grib` writes into an object's metadata (`spec/plot.md` §3):
//! which stored row is northernmost, the latitude of each row (Gaussian
//! latitudes for Gaussian grids), and the longitude of each column of a
//! regular grid. `tgm plot` places fields by these rules; the viewer
//! (`spec/wasm.md` §4) by the dataset view's coordinates where the
//! geography describes its grid whole (`crate::view::regular_axes`), by
//! these otherwise.

use std::f64::consts::PI;

use crate::cbor::Value;

/// The most coordinate values (latitudes and longitudes together) the
/// dataset view builds for one field: 2^27, 1 GiB of `f64`, a rotated or
/// reduced grid of 67 million points (the finest operational global grids
/// have 27 million).
/// A larger field keeps its grid's dimensions without coordinates, so a
/// file's claim of a shape cannot make a reader allocate beyond this.
pub const MAX_GRID_COORDINATE_VALUES: u64 = 1 << 27;

/// The most row latitudes and column longitudes together
/// [`Geography::regular_axes`] gives: 2^20, which the viewer sends as JSON
/// (about 20 MB); a regular grid at 1 km spacing has 54,000.
pub const MAX_REGULAR_AXES_VALUES: u64 = 1 << 20;

/// Largest N for which Gaussian latitudes are computed (O(N²) work, about
/// a second at the largest; ecCodes' own grids end well below); beyond it
/// a plot takes rows as equally spaced and the dataset view gives no
/// coordinates.
pub const MAX_GAUSSIAN_N: u64 = 8000;

/// A `geography` map.
#[derive(Debug, Clone, Copy)]
pub struct Geography<'a> {
    map: &'a Value,
}

/// The latitude of every row and the longitude of every column of a
/// regular 2-D field, in stored order, degrees.
#[derive(Debug, Clone, PartialEq)]
pub struct Axes {
    /// One per row (the object's first axis).
    pub latitudes: Vec<f64>,
    /// One per column (the object's second axis).
    pub longitudes: Vec<f64>,
}

impl<'a> Geography<'a> {
    /// The map `value`, if it is one.
    pub fn new(value: &'a Value) -> Option<Geography<'a>> {
        value.as_map().map(|_| Geography { map: value })
    }

    /// The key's value as a finite number.
    pub fn number(&self, key: &str) -> Option<f64> {
        self.map.get(key)?.as_f64().filter(|x| x.is_finite())
    }

    /// The key's value as an integer.
    pub fn integer(&self, key: &str) -> Option<i64> {
        self.map.get(key)?.as_i64()
    }

    /// `gridType` (`regular_ll`, `regular_gg`, `reduced_gg`, …).
    pub fn grid_type(&self) -> Option<&'a str> {
        self.map.get("gridType")?.as_text()
    }

    /// The key's value.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// Whether each row's points are consecutive: `jPointsAreConsecutive`
    /// absent or 0. A grid scanned column by column (any other value) is
    /// stored `(Ni, Nj)`, which a square grid's `(Nj, Ni)` shape would not
    /// tell apart.
    pub fn rows_consecutive(&self) -> bool {
        self.get("jPointsAreConsecutive")
            .is_none_or(|v| v.as_i64() == Some(0))
    }

    /// Whether the first row is the southernmost: the first latitude below
    /// the last, else `jScansPositively` = 1.
    pub fn south_first(&self) -> bool {
        match (
            self.number("latitudeOfFirstGridPointInDegrees"),
            self.number("latitudeOfLastGridPointInDegrees"),
        ) {
            (Some(a), Some(b)) => a < b,
            _ => self.integer("jScansPositively") == Some(1),
        }
    }

    /// Latitudes of `rows` rows in stored order: the Gaussian latitudes of
    /// N when the grid is Gaussian (`gridType` ending in `_gg`) with 2N
    /// rows and [`gaussian_latitudes`] gives them, else equally spaced
    /// from the first to the last latitude (90 to −90 when they are
    /// missing).
    pub fn row_latitudes(&self, rows: usize) -> Vec<f64> {
        let gaussian = self.grid_type().is_some_and(|t| t.ends_with("_gg"));
        let n = self.integer("N").and_then(|n| u64::try_from(n).ok());
        let computed = n
            .filter(|&n| gaussian && n.checked_mul(2) == Some(rows as u64))
            .and_then(gaussian_latitudes);
        let mut lats = computed.unwrap_or_else(|| {
            let a = self
                .number("latitudeOfFirstGridPointInDegrees")
                .unwrap_or(90.0);
            let b = self
                .number("latitudeOfLastGridPointInDegrees")
                .unwrap_or(-90.0);
            let (hi, lo) = (a.max(b), a.min(b));
            let step = if rows > 1 {
                (hi - lo) / (rows - 1) as f64
            } else {
                0.0
            };
            (0..rows).map(|r| hi - step * r as f64).collect()
        });
        if self.south_first() {
            lats.reverse();
        }
        lats
    }

    /// Longitudes of `cols` columns in stored order: from the first
    /// longitude (0 when missing), eastward (westward when
    /// `iScansNegatively` = 1), by `iDirectionIncrementInDegrees`, else by
    /// the span from the first to the last longitude over `cols − 1`
    /// steps, else by 360 / `cols`.
    pub fn column_longitudes(&self, cols: usize) -> Vec<f64> {
        let first = self
            .number("longitudeOfFirstGridPointInDegrees")
            .unwrap_or(0.0);
        let west = self.integer("iScansNegatively") == Some(1);
        let span = self
            .number("longitudeOfLastGridPointInDegrees")
            .filter(|_| cols > 1)
            .map(|last| {
                let d = if west { first - last } else { last - first };
                d.rem_euclid(360.0) / (cols - 1) as f64
            })
            .filter(|&s| s > 0.0);
        let step = self
            .number("iDirectionIncrementInDegrees")
            .map(f64::abs)
            .filter(|&s| s > 0.0)
            .or(span)
            .unwrap_or(360.0 / cols.max(1) as f64);
        let step = if west { -step } else { step };
        (0..cols).map(|j| first + step * j as f64).collect()
    }

    /// Row latitudes and column longitudes of an object of `shape` when
    /// it is a regular grid stored row by row: two axes, `gridType`
    /// missing or `regular_ll` or `regular_gg`, `jPointsAreConsecutive`
    /// absent or 0. Other grids (reduced, rotated, projected, transposed) are
    /// none, and so are axes of more than [`MAX_REGULAR_AXES_VALUES`]
    /// values together (a shape the file only claims).
    pub fn regular_axes(&self, shape: &[u64]) -> Option<Axes> {
        let [rows, cols] = shape else { return None };
        if rows.checked_add(*cols)? > MAX_REGULAR_AXES_VALUES {
            return None;
        }
        let regular = matches!(self.grid_type(), None | Some("regular_ll" | "regular_gg"));
        let alternate = self.integer("alternativeRowScanning") == Some(1);
        if !regular || alternate || !self.rows_consecutive() {
            return None;
        }
        let (rows, cols) = (usize::try_from(*rows).ok()?, usize::try_from(*cols).ok()?);
        Some(Axes {
            latitudes: self.row_latitudes(rows),
            longitudes: self.column_longitudes(cols),
        })
    }
}

/// The first zeros of the Bessel function J0, ecCodes' first guesses of
/// the Legendre roots; later ones are spaced by π.
const J0_ZEROS: [f64; 50] = [
    2.4048255577,
    5.5200781103,
    8.6537279129,
    11.7915344391,
    14.9309177086,
    18.0710639679,
    21.2116366299,
    24.3524715308,
    27.4934791320,
    30.6346064684,
    33.7758202136,
    36.9170983537,
    40.0584257646,
    43.1997917132,
    46.3411883717,
    49.4826098974,
    52.6240518411,
    55.7655107550,
    58.9069839261,
    62.0484691902,
    65.1899648002,
    68.3314693299,
    71.4729816036,
    74.6145006437,
    77.7560256304,
    80.8975558711,
    84.0390907769,
    87.1806298436,
    90.3221726372,
    93.4637187819,
    96.6052679510,
    99.7468198587,
    102.8883742542,
    106.0299309165,
    109.1714896498,
    112.3130502805,
    115.4546126537,
    118.5961766309,
    121.7377420880,
    124.8793089132,
    128.0208770059,
    131.1624462752,
    134.3040166383,
    137.4455880203,
    140.5871603528,
    143.7287335737,
    146.8703076258,
    150.0118824570,
    153.1534580192,
    156.2950342685,
];

/// Newton steps below which a root is found, and the most steps taken
/// (ecCodes fails on the twelfth).
const PRECISION: f64 = 1.0e-14;
const MAX_STEPS: usize = 11;

/// Latitudes computed, by Gaussian number: a few grids per process.
static COMPUTED: std::sync::Mutex<Vec<(u64, Vec<f64>)>> = std::sync::Mutex::new(Vec::new());
const COMPUTED_MAX: usize = 8;

/// The 2N latitudes (degrees, north to south) of the Gaussian grid N as
/// ecCodes computes them (its `distinctLatitudes`, which cfgrib shows),
/// bit for bit: the arcsines of the roots of the Legendre polynomial of
/// degree 2N, each refined on its own by Newton steps from the cosine of
/// ecCodes' first guess until a step is below 1e-14, with the arithmetic
/// in ecCodes' order. None for N = 0, N above [`MAX_GAUSSIAN_N`] or a
/// root that does not converge within ecCodes' steps.
pub fn gaussian_latitudes(n: u64) -> Option<Vec<f64>> {
    if n == 0 || n > MAX_GAUSSIAN_N {
        return None;
    }
    let computed = |c: &[(u64, Vec<f64>)]| c.iter().find(|e| e.0 == n).map(|e| e.1.clone());
    if let Some(l) = COMPUTED.lock().ok().and_then(|c| computed(c.as_slice())) {
        return Some(l);
    }
    let lats = compute_gaussian_latitudes(n as usize)?;
    if let Ok(mut c) = COMPUTED.lock() {
        if c.len() >= COMPUTED_MAX {
            c.remove(0);
        }
        c.push((n, lats.clone()));
    }
    Some(lats)
}

/// The roots of the Legendre polynomial of degree 2N as ecCodes finds them
/// (`grib_get_gaussian_latitudes`): the north half, root by root, each
/// from its own first guess; the south half mirrors it.
struct GaussianRoots {
    n: usize,
    nlat: usize,
    denom: f64,
}

impl GaussianRoots {
    fn new(n: usize) -> Self {
        let nlat = 2 * n;
        let conv_val = 1.0 - ((2.0 / PI) * (2.0 / PI)) * 0.25;
        let half = nlat as f64 + 0.5;
        GaussianRoots {
            n,
            nlat,
            denom: ((half * half) + conv_val).sqrt(),
        }
    }

    /// ecCodes' first guess of north root `j`: the j-th zero of J0 from
    /// its table, then π added once per further root (in that order, so
    /// the sum is ecCodes' to the bit).
    fn guess(j: usize) -> f64 {
        let last = J0_ZEROS.len() - 1;
        match J0_ZEROS.get(j) {
            Some(&g) => g,
            None => (last..j).fold(J0_ZEROS[last], |g, _| g + PI),
        }
    }

    /// The latitude (degrees) of the north root refined from `guess` by
    /// Newton steps; None when it does not converge within ecCodes' steps.
    fn north(&self, guess: f64) -> Option<f64> {
        let nlat = self.nlat;
        let mut root = (guess / self.denom).cos();
        for _ in 0..MAX_STEPS {
            let (mut mem2, mut mem1, mut leg) = (1.0, root, 0.0);
            for i in 0..nlat {
                leg = ((2.0 * (i + 1) as f64 - 1.0) * root * mem1 - i as f64 * mem2)
                    / ((i + 1) as f64);
                mem2 = mem1;
                mem1 = leg;
            }
            let step = leg / ((nlat as f64 * (mem2 - root * leg)) / (1.0 - (root * root)));
            root -= step;
            if step.abs() < PRECISION {
                return Some(root.asin() * (180.0 / PI));
            }
        }
        None
    }

    /// The north index of latitude `i` (0..2N, north to south) and
    /// whether it is mirrored to the south.
    fn mirror(&self, i: usize) -> (usize, bool) {
        match i < self.n {
            true => (i, false),
            false => (self.nlat - 1 - i, true),
        }
    }

    /// Latitude `i` (0..2N, north to south), computed alone.
    fn at(&self, i: usize) -> Option<f64> {
        let (j, south) = self.mirror(i);
        let l = self.north(Self::guess(j))?;
        Some(if south { -l } else { l })
    }

    /// Latitude `i` from the first guess alone: decreasing in `i`, and
    /// far closer to the root than a row's spacing.
    fn approximate(&self, i: usize) -> f64 {
        let (j, south) = self.mirror(i);
        let l = (Self::guess(j) / self.denom).cos().asin() * (180.0 / PI);
        if south {
            -l
        } else {
            l
        }
    }
}

/// [`gaussian_latitudes`] computed (ecCodes' `grib_get_gaussian_latitudes`).
fn compute_gaussian_latitudes(n: usize) -> Option<Vec<f64>> {
    let roots = GaussianRoots::new(n);
    let mut guess = 0.0;
    let mut north = Vec::with_capacity(n);
    for j in 0..n {
        guess = J0_ZEROS.get(j).copied().unwrap_or(guess + PI);
        north.push(roots.north(guess)?);
    }
    let south = north.iter().rev().map(|l| -l);
    Some(north.iter().copied().chain(south).collect())
}

/// Whether [`gaussian_rows`] can give `rows` rows of the Gaussian grid
/// `n`: 1 ≤ N ≤ [`MAX_GAUSSIAN_N`] and 1 ≤ `rows` ≤ 2N, decided without
/// computing a latitude.
pub fn gaussian_rows_possible(n: u64, rows: usize) -> bool {
    (1..=MAX_GAUSSIAN_N).contains(&n) && (1..=2 * n).contains(&(rows as u64))
}

/// The latitudes of `rows` consecutive rows of the Gaussian grid `n` as a
/// field's geography places them (`spec/kerchunk.md` §2.1): from the
/// latitude of N nearest `first` (the northern one of two as near),
/// southward when `first ≥ last`, else northward; None when N is 0 or
/// above [`MAX_GAUSSIAN_N`], the rows run out, a root does not converge,
/// or the last row is not within one row's spacing of `last`.
///
/// Only the rows asked for and a few around `first` are computed, so a
/// small sub-area of a fine grid costs O(rows · N), not the whole grid's
/// O(N²): a hostile archive naming a new N per object stays cheap.
pub fn gaussian_rows(n: u64, first: f64, last: f64, rows: usize) -> Option<Vec<f64>> {
    if !gaussian_rows_possible(n, rows) {
        return None;
    }
    let roots = GaussianRoots::new(n as usize);
    let total = roots.nlat;
    // At half the grid's rows or more, the whole (cached) grid costs no
    // more than computing them one by one.
    let whole = (rows as u64 * 2 >= n)
        .then(|| gaussian_latitudes(n))
        .flatten();
    let lat = |i: usize| match &whole {
        Some(w) => Some(w[i]),
        None => roots.at(i),
    };
    let start = nearest_gaussian_index(&roots, first, lat)?;
    let indices: Vec<usize> = if first >= last {
        (start..total).take(rows).collect()
    } else {
        (0..=start).rev().take(rows).collect()
    };
    if indices.len() != rows {
        return None;
    }
    let out: Vec<f64> = indices.into_iter().map(lat).collect::<Option<_>>()?;
    let spacing = (lat(0)? - lat(1)?).abs();
    let within = out.last().is_some_and(|r| (r - last).abs() < spacing);
    within.then_some(out)
}

/// The index of the latitude nearest `first` (the lowest of two as near;
/// 0 when `first` is not finite, as a search over every latitude gives):
/// located by the first guesses, then decided among the exact latitudes
/// around it.
fn nearest_gaussian_index(
    roots: &GaussianRoots,
    first: f64,
    lat: impl Fn(usize) -> Option<f64>,
) -> Option<usize> {
    if !first.is_finite() {
        return Some(0);
    }
    let total = roots.nlat;
    let (mut lo, mut hi) = (0, total);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if roots.approximate(mid) > first {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let mut best: Option<(usize, f64)> = None;
    for i in lo.saturating_sub(3)..(lo + 3).min(total) {
        let d = (lat(i)? - first).abs();
        if best.is_none_or(|(_, b)| d < b) {
            best = Some((i, d));
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo(entries: &[(&str, Value)]) -> Value {
        Value::text_map(entries.iter().cloned())
    }

    #[test]
    fn gaussian_latitudes_are_eccodes_to_the_bit() {
        // Legendre P4 roots: ±sqrt(3/7 ± 2/7·sqrt(6/5)).
        let l = gaussian_latitudes(2).unwrap();
        let r = |s: f64| (3.0 / 7.0 + s * 2.0 / 7.0 * (6.0f64 / 5.0).sqrt()).sqrt();
        let want = [r(1.0), r(-1.0), -r(-1.0), -r(1.0)].map(|z| z.asin().to_degrees());
        for (a, b) in l.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{a} {b}");
        }
        // ecCodes' codes_get_gaussian_latitudes, as bits: (N, index, bits).
        let eccodes: [(u64, usize, u64); 10] = [
            (1, 0, 0x4041a1d785686a60),
            (2, 0, 0x404db8e25eee0574),
            (2, 1, 0x4033e02f214abd5b),
            (32, 0, 0x4055f7487aed34ec),
            (32, 31, 0x3ff6532d56dda3ee),
            (1280, 0, 0x40567c8e56ebaa4a),
            (1280, 639, 0x4046835fcba2e1b5),
            (1280, 1279, 0x3fa1ff199f5c729c),
            (8000, 0, 0x40567f72e9433026),
            (8000, 7999, 0x3f770a0e413bb4f5),
        ];
        for (n, i, bits) in eccodes {
            let l = gaussian_latitudes(n).unwrap();
            assert_eq!(l.len() as u64, 2 * n);
            assert_eq!(l[i].to_bits(), bits, "N{n}[{i}] = {}", l[i]);
            assert_eq!(l[2 * n as usize - 1 - i], -l[i]);
        }
        assert_eq!(gaussian_latitudes(0), None);
        assert_eq!(gaussian_latitudes(MAX_GAUSSIAN_N + 1), None);
    }

    /// The rows as a search over the whole grid finds them.
    fn rows_over_the_whole_grid(n: u64, first: f64, last: f64, rows: usize) -> Option<Vec<f64>> {
        let lats = gaussian_latitudes(n)?;
        if rows == 0 || rows > lats.len() {
            return None;
        }
        let distance = |l: f64| (l - first).abs();
        let start = (1..lats.len()).fold(0, |best, i| {
            if distance(lats[i]) < distance(lats[best]) {
                i
            } else {
                best
            }
        });
        let out: Vec<f64> = if first >= last {
            lats[start..].iter().take(rows).copied().collect()
        } else {
            lats[..=start].iter().rev().take(rows).copied().collect()
        };
        let within = out
            .last()
            .is_some_and(|r| (r - last).abs() < (lats[0] - lats[1]).abs());
        (out.len() == rows && within).then_some(out)
    }

    #[test]
    fn gaussian_rows_are_those_a_search_over_the_whole_grid_finds() {
        let mut checked = 0;
        for n in [1u64, 2, 3, 31, 32, 49, 50, 51, 80, 200, 640] {
            let lats = gaussian_latitudes(n).unwrap();
            let spacing = lats[0] - lats[1];
            let total = lats.len();
            let mut firsts = vec![90.0, -90.0, 0.0, 1e9, -1e9, f64::NAN, f64::INFINITY];
            firsts.push(f64::NEG_INFINITY);
            for i in (0..total).step_by((total / 7).max(1)).chain([total - 1]) {
                let l = lats[i];
                firsts.extend([l, l + spacing / 2.0, l - spacing / 2.0, l + 1e-9, l - 1e-9]);
            }
            for &first in &firsts {
                for rows in [1, 2, 3, total / 2, total - 1, total, total + 1, 70] {
                    for last in [first - 10.0, first + 10.0, -90.0, 90.0, first] {
                        let got = gaussian_rows(n, first, last, rows);
                        let want = rows_over_the_whole_grid(n, first, last, rows);
                        let bits = |v: &Option<Vec<f64>>| {
                            v.as_ref()
                                .map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
                        };
                        assert_eq!(
                            bits(&got),
                            bits(&want),
                            "N{n} first {first} last {last} rows {rows}"
                        );
                        checked += usize::from(got.is_some());
                    }
                }
            }
        }
        assert!(checked > 500, "{checked}");
        assert_eq!(gaussian_rows(0, 0.0, 0.0, 1), None);
        assert_eq!(gaussian_rows(MAX_GAUSSIAN_N + 1, 0.0, 0.0, 1), None);
    }

    #[test]
    fn a_row_of_the_finest_grid_is_computed_alone_as_eccodes_places_it() {
        // N8000's row 7999 (ecCodes' bits, as in the test above), found
        // from a latitude within half a row of it.
        let row = gaussian_rows(8000, 0.0062, 0.005, 1).unwrap();
        assert_eq!(row, [f64::from_bits(0x3f770a0e413bb4f5)]);
    }

    #[test]
    fn a_regular_grid_has_its_rows_and_columns_placed() {
        let g = geo(&[
            ("gridType", Value::from("regular_ll")),
            ("latitudeOfFirstGridPointInDegrees", Value::Float(90.0)),
            ("latitudeOfLastGridPointInDegrees", Value::Float(-90.0)),
            ("longitudeOfFirstGridPointInDegrees", Value::Float(0.0)),
            ("longitudeOfLastGridPointInDegrees", Value::Float(359.0)),
            ("iDirectionIncrementInDegrees", Value::Float(1.0)),
        ]);
        let a = Geography::new(&g)
            .unwrap()
            .regular_axes(&[181, 360])
            .unwrap();
        assert_eq!(a.latitudes[0], 90.0);
        assert_eq!(a.latitudes[90], 0.0);
        assert_eq!(a.latitudes[180], -90.0);
        assert_eq!(a.longitudes[0], 0.0);
        assert_eq!(a.longitudes[359], 359.0);
        // South first, westward, no increment: from the span.
        let g = geo(&[
            ("latitudeOfFirstGridPointInDegrees", Value::Float(-10.0)),
            ("latitudeOfLastGridPointInDegrees", Value::Float(10.0)),
            ("longitudeOfFirstGridPointInDegrees", Value::Float(20.0)),
            ("longitudeOfLastGridPointInDegrees", Value::Float(-20.0)),
            ("iScansNegatively", Value::from_i64(1)),
        ]);
        let a = Geography::new(&g).unwrap().regular_axes(&[3, 5]).unwrap();
        assert_eq!(a.latitudes, [-10.0, 0.0, 10.0]);
        assert_eq!(a.longitudes, [20.0, 10.0, 0.0, -10.0, -20.0]);
    }

    #[test]
    fn a_regular_gaussian_grid_has_gaussian_rows() {
        let g = geo(&[
            ("gridType", Value::from("regular_gg")),
            ("N", Value::from_i64(32)),
            ("longitudeOfFirstGridPointInDegrees", Value::Float(0.0)),
        ]);
        let a = Geography::new(&g)
            .unwrap()
            .regular_axes(&[64, 128])
            .unwrap();
        assert_eq!(a.latitudes, gaussian_latitudes(32).unwrap());
        assert_eq!(a.longitudes[1], 360.0 / 128.0);
        // Other layouts are not regular grids.
        let gg = Geography::new(&g).unwrap();
        assert!(gg.regular_axes(&[64 * 128]).is_none());
        let reduced = geo(&[("gridType", Value::from("reduced_gg"))]);
        assert!(Geography::new(&reduced)
            .unwrap()
            .regular_axes(&[2, 4])
            .is_none());
        for flag in [Value::from_i64(1), Value::from_i64(2), Value::from("1")] {
            let transposed = geo(&[("jPointsAreConsecutive", flag.clone())]);
            assert!(
                Geography::new(&transposed)
                    .unwrap()
                    .regular_axes(&[2, 4])
                    .is_none(),
                "{flag:?}"
            );
        }
        let by_rows = geo(&[("jPointsAreConsecutive", Value::from_i64(0))]);
        assert!(Geography::new(&by_rows)
            .unwrap()
            .regular_axes(&[2, 4])
            .is_some());
        assert!(Geography::new(&Value::from_i64(3)).is_none());
        // A shape the file only claims: no axes, nothing allocated.
        let empty = geo(&[]);
        let claimed = Geography::new(&empty).unwrap();
        assert!(claimed.regular_axes(&[1 << 28, 1 << 28]).is_none());
        assert!(claimed.regular_axes(&[u64::MAX, 2]).is_none());
        assert!(claimed
            .regular_axes(&[MAX_REGULAR_AXES_VALUES, 1])
            .is_none());
        assert!(claimed.regular_axes(&[3, 5]).is_some());
    }
}
