//! Colour maps (the `colorous` crate's perceptual gradients), the value
//! range and the colour bar's ticks (`spec/plot.md` §5).

use std::str::FromStr;

/// Colour levels of every map: value `v` has level
/// `floor((v − lo) / (hi − lo) · LEVELS)`, clamped to `0..LEVELS`.
pub const LEVELS: usize = 200;

/// A colour map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Cmap {
    /// Greys for medical volumes, `rdbu-r` for data spanning 0, else viridis.
    Auto,
    /// Perceptually uniform, dark blue to yellow.
    Viridis,
    /// Viridis made readable with colour-vision deficiency.
    Cividis,
    /// Perceptually uniform, black to light yellow.
    Magma,
    /// Black (low) to white (high).
    Greys,
    /// Diverging, blue (low) through white to red (high): ColorBrewer RdBu reversed.
    RdbuR,
}

impl Cmap {
    /// The name shown in the picture.
    pub fn name(self) -> &'static str {
        match self {
            Cmap::Auto => "auto",
            Cmap::Viridis => "viridis",
            Cmap::Cividis => "cividis",
            Cmap::Magma => "magma",
            Cmap::Greys => "greys",
            Cmap::RdbuR => "rdbu-r",
        }
    }

    /// The colour of `level` (below [`LEVELS`]): the gradient at
    /// `level / (LEVELS − 1)`.
    pub fn colour(self, level: usize) -> [u8; 3] {
        let (g, i) = match self {
            Cmap::Cividis => (colorous::CIVIDIS, level),
            Cmap::Magma => (colorous::MAGMA, level),
            Cmap::Greys => (colorous::GREYS, LEVELS - 1 - level),
            Cmap::RdbuR => (colorous::RED_BLUE, LEVELS - 1 - level),
            Cmap::Viridis | Cmap::Auto => (colorous::VIRIDIS, level),
        };
        let c = g.eval_rational(i, LEVELS);
        [c.r, c.g, c.b]
    }
}

/// The value range mapped onto the colour levels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// Value of the bottom of the scale.
    pub lo: f64,
    /// Value of the top of the scale.
    pub hi: f64,
}

impl FromStr for Range {
    type Err = String;

    /// `A:B`, two finite numbers with A < B.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not LOW:HIGH (two finite numbers, LOW < HIGH)");
        let (a, b) = s.split_once(':').ok_or_else(bad)?;
        let (lo, hi): (f64, f64) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if !(lo.is_finite() && hi.is_finite() && lo < hi && (hi - lo).is_finite()) {
            return Err(bad());
        }
        Ok(Range { lo, hi })
    }
}

impl Range {
    /// The range of data whose finite values lie in `min..=max` (`None`
    /// when there is none): that interval, made symmetric about 0 when
    /// `symmetric` and it spans 0, widened when it is a single value.
    pub fn of_data(min: Option<f64>, max: Option<f64>, symmetric: bool) -> Range {
        let (Some(mut lo), Some(mut hi)) = (min, max) else {
            return Range { lo: 0.0, hi: 1.0 };
        };
        if symmetric && lo < 0.0 && hi > 0.0 {
            let m = hi.max(-lo);
            (lo, hi) = (-m, m);
        }
        if lo < hi {
            return Range { lo, hi };
        }
        let d = if lo == 0.0 { 1.0 } else { lo.abs() / 2.0 };
        let (a, b) = (lo - d, lo + d);
        Range {
            lo: if a.is_finite() { a } else { lo },
            hi: if b.is_finite() { b } else { lo },
        }
    }

    /// Where `v` lies: 0 at `lo`, 1 at `hi`.
    pub fn fraction(&self, v: f64) -> f64 {
        match self.hi - self.lo {
            span if span.is_finite() => (v - self.lo) / span,
            // A span beyond f64 (data from −1e308 to 1e308): halves fit.
            _ => (v / 2.0 - self.lo / 2.0) / (self.hi / 2.0 - self.lo / 2.0),
        }
    }

    /// The level of `v`, `None` for NaN; ±Inf take the end levels.
    pub fn level(&self, v: f64) -> Option<usize> {
        if v.is_nan() {
            return None;
        }
        let l = (self.fraction(v) * LEVELS as f64).floor();
        Some(l.clamp(0.0, (LEVELS - 1) as f64) as usize)
    }

    /// Round values inside the range for the colour bar (steps of 1, 2 or
    /// 5 × 10ⁿ, at most 11), with their labels.
    pub fn ticks(&self) -> Vec<(f64, String)> {
        let span = self.hi - self.lo;
        let raw = span / 5.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * mag)
            .find(|s| span / s <= 10.0)
            .unwrap_or(10.0 * mag);
        let first = (self.lo / step).ceil();
        let n = ((self.hi / step).floor() - first) as i64;
        if !(step.is_finite() && step > 0.0 && (0..=10).contains(&n)) {
            return [self.lo, self.hi].map(|v| (v, label(v, span))).to_vec();
        }
        (0..=n)
            .map(|k| {
                let v = (first + k as f64) * step;
                (v, label(v, step))
            })
            .collect()
    }
}

/// `v` with six significant digits at most, trailing zeros dropped.
pub fn short(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return v.to_string();
    }
    let mag = v.abs().log10().floor();
    if !(-4.0..6.0).contains(&mag) {
        return format!("{v:.4e}");
    }
    let decimals = (5.0 - mag).max(0.0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `v` written with as many decimals as `step` needs, in scientific
/// notation when very large or small.
fn label(v: f64, step: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if v.abs() >= 1e6 || step.abs() < 1e-4 {
        return format!("{v:.2e}");
    }
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    format!("{v:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_the_documented_rule() {
        let r = Range { lo: 0.0, hi: 10.0 };
        assert_eq!(r.level(0.0), Some(0));
        assert_eq!(r.level(5.0), Some(100));
        assert_eq!(r.level(10.0), Some(LEVELS - 1));
        assert_eq!(r.level(f64::INFINITY), Some(LEVELS - 1));
        assert_eq!(r.level(-3.0), Some(0));
        assert_eq!(r.level(f64::NAN), None);
        let v = colorous::VIRIDIS.eval_rational(0, LEVELS);
        assert_eq!(Cmap::Viridis.colour(0), [v.r, v.g, v.b]);
        // Blue low, red high.
        let [r0, _, b0] = Cmap::RdbuR.colour(0);
        let [r1, _, b1] = Cmap::RdbuR.colour(LEVELS - 1);
        assert!(b0 > r0 && r1 > b1);
    }

    #[test]
    fn ranges_parse_and_widen() {
        assert_eq!("-5:5".parse::<Range>(), Ok(Range { lo: -5.0, hi: 5.0 }));
        for bad in ["5:5", "1", "a:b", "nan:1", "2:1", "-1e308:1e308"] {
            assert!(bad.parse::<Range>().is_err(), "{bad}");
        }
        let r = Range::of_data(Some(-2.0), Some(8.0), true);
        assert_eq!((r.lo, r.hi), (-8.0, 8.0));
        let r = Range::of_data(Some(3.0), Some(3.0), false);
        assert!(r.lo < 3.0 && r.hi > 3.0);
        assert_eq!(
            Range::of_data(None, None, false),
            Range { lo: 0.0, hi: 1.0 }
        );
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short(244.8366314352605), "244.837");
        assert_eq!(short(306.0), "306");
        assert_eq!(short(-0.000123456), "-0.000123456");
        assert_eq!(short(1.5e9), "1.5000e9");
    }

    #[test]
    fn ticks_are_round() {
        let t: Vec<String> = Range {
            lo: 271.3,
            hi: 305.9,
        }
        .ticks()
        .into_iter()
        .map(|t| t.1)
        .collect();
        assert_eq!(t, ["275", "280", "285", "290", "295", "300", "305"]);
        let t = Range { lo: -0.5, hi: 0.5 }.ticks();
        assert_eq!(t.first().unwrap().1, "-0.5");
        let t = Range { lo: 0.0, hi: 1e-9 }.ticks();
        assert_eq!(t.len(), 11);
        assert_eq!(t[3].1, "3.00e-10");
    }
}
