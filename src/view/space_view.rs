//! The points of a `space_view` grid (a geostationary satellite's view of
//! the earth) as ecCodes' `SpaceView` geoiterator computes them, in the
//! message's order whatever the scanning (`spec/kerchunk.md` §2.1).

/// ecCodes' `RAD2DEG`.
const RAD2DEG: f64 = 57.295_779_513_082_32;

/// The keys of a space view, as `convert-grib` copies them.
#[derive(Debug, Clone, Copy)]
pub(super) struct SpaceView {
    /// The sub-satellite point's longitude (degrees).
    pub(super) lon_sub: f64,
    /// The sub-satellite point's place in grid lengths (`XpInGridLengths`,
    /// `YpInGridLengths`).
    pub(super) xp: f64,
    pub(super) yp: f64,
    /// The sector image's origin (`Xo`, `Yo`).
    pub(super) xo: i64,
    pub(super) yo: i64,
    /// The earth's apparent diameter in grid lengths (`dx`, `dy`).
    pub(super) dx: f64,
    pub(super) dy: f64,
    /// The camera's distance from the earth's centre in earth radii
    /// (`NrInRadiusOfEarth`).
    pub(super) nr: f64,
    pub(super) i_negative: bool,
    pub(super) j_positive: bool,
}

impl SpaceView {
    /// The latitudes and longitudes (degrees) of the `nx × ny` points, row
    /// by row, on an earth of equatorial and polar radii `r_eq` and
    /// `r_pol`: ecCodes' arithmetic in its order, its rows walked from the
    /// last y to the first. A point off the earth's disc is NaN (ecCodes
    /// gives it 0°, 0°, a real place).
    pub(super) fn points(
        &self,
        r_eq: f64,
        r_pol: f64,
        nx: usize,
        ny: usize,
    ) -> (Vec<f64>, Vec<f64>) {
        let angular_size = 2.0 * (1.0 / self.nr).asin();
        let height = self.nr * r_eq;
        let rx = angular_size / self.dx;
        let ry = (r_pol / r_eq) * angular_size / self.dy;
        let xp = if self.i_negative {
            (nx as f64 - 1.0) - (self.xp - self.xo as f64)
        } else {
            self.xp - self.xo as f64
        };
        let yp = if self.j_positive {
            self.yp - self.yo as f64
        } else {
            (ny as f64 - 1.0) - (self.yp - self.yo as f64)
        };
        let factor_2 = (r_eq / r_pol) * (r_eq / r_pol);
        let factor_1 = height * height - r_eq * r_eq;
        let columns: Vec<(f64, f64)> = (0..nx)
            .map(|ix| {
                let sin_x = ((ix as f64 - xp) * rx).sin();
                (sin_x, (1.0 - sin_x * sin_x).sqrt())
            })
            .collect();
        let points = nx * ny;
        let (mut lats, mut lons) = (Vec::with_capacity(points), Vec::with_capacity(points));
        for iy in (0..ny).rev() {
            let sin_y = ((iy as f64 - yp) * ry).sin();
            let cos_y = (1.0 - sin_y * sin_y).sqrt();
            let tmp1 = 1.0 + (factor_2 - 1.0) * sin_y * sin_y;
            for &(sin_x, cos_x) in &columns {
                let along = height * cos_x * cos_y;
                let sd = along * along - tmp1 * factor_1;
                if sd <= 0.0 || sd.is_nan() {
                    lats.push(f64::NAN);
                    lons.push(f64::NAN);
                    continue;
                }
                let sn = (height * cos_x * cos_y - sd.sqrt()) / tmp1;
                let s1 = height - sn * cos_x * cos_y;
                let s2 = sn * sin_x * cos_y;
                let s3 = sn * sin_y;
                let sxy = (s1 * s1 + s2 * s2).sqrt();
                let mut lon = (s2 / s1).atan() * RAD2DEG + self.lon_sub;
                // At most a few turns: the sub-satellite longitude is
                // bounded by the caller.
                while lon < 0.0 {
                    lon += 360.0;
                }
                while lon > 360.0 {
                    lon -= 360.0;
                }
                lats.push((factor_2 * s3 / sxy).atan() * RAD2DEG);
                lons.push(lon);
            }
        }
        (lats, lons)
    }
}
