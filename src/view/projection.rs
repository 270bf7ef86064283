//! The points of a projected grid (`polar_stereographic`, `lambert`,
//! `lambert_azimuthal_equal_area`, `mercator`) on a spherical earth, and
//! of `lambert` and `mercator` on an ellipsoid too, as ecCodes'
//! geoiterators compute them: the same
//! arithmetic in the same order, so that the latitudes and longitudes are
//! those of ecCodes' `latitudes` and `longitudes` keys, which cfgrib shows
//! (`spec/kerchunk.md` §2.1).
//!
//! ecCodes computes polar stereographic, Lambert conformal and Mercator
//! points from the first grid point towards +x and +y whatever the
//! scanning flags say,
//! and pairs them with the values only after reordering the values; the
//! view therefore builds them only for grids scanned +i, +j, where the
//! message's order is the points' order. Lambert azimuthal equal-area
//! points follow the scanning flags, so any direction along rows and
//! columns is taken. Points consecutive along columns and alternating
//! rows are never taken. A `space_view` grid's points
//! ([`super::space_view`]) follow the scanning flags too.

use super::space_view::SpaceView;
use crate::geography::Geography;

const RAD2DEG: f64 = 57.295_779_513_082_32;
const DEG2RAD: f64 = 0.017_453_292_519_943_295;
const PI_OVER_2: f64 = std::f64::consts::FRAC_PI_2;
const PI_OVER_4: f64 = std::f64::consts::FRAC_PI_4;
const PI: f64 = std::f64::consts::PI;
const EPSILON: f64 = 1.0e-10;

/// The largest magnitude, in degrees, accepted for an angle of a
/// projection's keys: beyond it a longitude would need more than a few
/// turns to normalise.
const MAX_ANGLE_DEGREES: f64 = 720.0;

/// A projected grid: its projection and the `nx × ny` points it holds.
#[derive(Debug, Clone, Copy)]
pub(super) struct Projected {
    projection: Projection,
    /// The first grid point's latitude and longitude (degrees; unused by a
    /// space view).
    first: (f64, f64),
    /// The spacing along x and y (metres).
    step: (f64, f64),
    /// The sphere's radius (metres); the ellipsoid's semi-major axis for
    /// an oblate Lambert conformal or Mercator grid.
    radius: f64,
    /// The ellipsoid's semi-minor axis (metres) of an oblate Lambert
    /// conformal or Mercator grid.
    minor_axis: Option<f64>,
    /// Points along x (a row) and along y (the rows).
    pub(super) nx: usize,
    pub(super) ny: usize,
}

#[derive(Debug, Clone, Copy)]
enum Projection {
    /// Centred on `orientationOfTheGridInDegrees`, true at `LaDInDegrees`.
    PolarStereographic { centre_lon: f64, centre_lat: f64 },
    /// Lambert conformal: `LoVInDegrees`, `LaDInDegrees`, and the two
    /// standard parallels.
    LambertConformal {
        lov: f64,
        lad: f64,
        latin1: f64,
        latin2: f64,
    },
    /// Lambert azimuthal equal-area: `standardParallelInDegrees` and
    /// `centralLongitudeInDegrees`.
    LambertAzimuthalEqualArea {
        standard_parallel: f64,
        central_lon: f64,
    },
    /// Mercator: true at `LaDInDegrees`, centred on
    /// `orientationOfTheGridInDegrees`.
    Mercator { lad: f64, orientation: f64 },
    /// A geostationary satellite's view ([`SpaceView`]), placed about the
    /// sub-satellite point rather than from a first grid point.
    SpaceView(SpaceView),
}

impl Projected {
    /// The projected grid `g` describes for a field of `shape` =
    /// `(Ny, Nx)`; None when the grid is not one of the projections, the
    /// earth is oblate for another projection than Lambert conformal or
    /// Mercator, the
    /// scanning is not one whose points the view takes (module
    /// documentation), or a key is missing, not finite, or out of range.
    pub(super) fn of(g: &Geography<'_>, shape: &[u64]) -> Option<Projected> {
        let [ny, nx] = *shape else { return None };
        let count = |key| g.get(key).and_then(crate::cbor::Value::as_u64);
        if count("Ni")? != nx || count("Nj")? != ny || nx == 0 || ny == 0 {
            return None;
        }
        let flag = |key, want: u64| count(key).unwrap_or(0) == want;
        let rows_along_i = flag("jPointsAreConsecutive", 0) && flag("alternativeRowScanning", 0);
        let plus_i_plus_j = flag("iScansNegatively", 0) && flag("jScansPositively", 1);
        if !rows_along_i {
            return None;
        }
        let angle = |key| {
            g.number(key)
                .filter(|v| v.is_finite() && v.abs() <= MAX_ANGLE_DEGREES)
        };
        let metres = |key| g.number(key).filter(|v| v.is_finite());
        let grid_type = g.grid_type()?;
        let any_direction = matches!(grid_type, "lambert_azimuthal_equal_area" | "space_view");
        if !any_direction && !plus_i_plus_j {
            return None;
        }
        let mut step = (metres("DxInMetres"), metres("DyInMetres"));
        let projection = match grid_type {
            "polar_stereographic" => Projection::PolarStereographic {
                centre_lon: angle("orientationOfTheGridInDegrees")?,
                centre_lat: angle("LaDInDegrees")?,
            },
            "lambert" => {
                let (latin1, latin2) = (angle("Latin1InDegrees")?, angle("Latin2InDegrees")?);
                // ecCodes refuses standard parallels symmetric about the
                // equator (both at it too: a cone constant of 0, which the
                // projections also refuse).
                if (latin1 + latin2).abs() < EPSILON {
                    return None;
                }
                Projection::LambertConformal {
                    lov: angle("LoVInDegrees")?,
                    lad: angle("LaDInDegrees")?,
                    latin1,
                    latin2,
                }
            }
            "lambert_azimuthal_equal_area" => {
                // ecCodes steps by the coded millimetres over 1000, signed
                // by the scanning.
                let mm = |key, negative: bool| {
                    metres(key).map(|d| if negative { -d / 1000.0 } else { d / 1000.0 })
                };
                step = (
                    mm(
                        "xDirectionGridLengthInMillimetres",
                        !flag("iScansNegatively", 0),
                    ),
                    mm(
                        "yDirectionGridLengthInMillimetres",
                        !flag("jScansPositively", 1),
                    ),
                );
                Projection::LambertAzimuthalEqualArea {
                    standard_parallel: angle("standardParallelInDegrees")?,
                    central_lon: angle("centralLongitudeInDegrees")?,
                }
            }
            "mercator" => {
                step = (metres("DiInMetres"), metres("DjInMetres"));
                Projection::Mercator {
                    lad: angle("LaDInDegrees")?,
                    orientation: angle("orientationOfTheGridInDegrees")?,
                }
            }
            "space_view" => {
                // ecCodes refuses a satellite off the equator's plane, a
                // camera at the earth's centre and an empty diameter; a
                // camera inside the earth (Nr < 1) has no view.
                let positive = |key| metres(key).filter(|v| *v > 0.0);
                let whole = |key| g.get(key).and_then(crate::cbor::Value::as_i64);
                if angle("latitudeOfSubSatellitePointInDegrees")? != 0.0 {
                    return None;
                }
                step = (Some(0.0), Some(0.0));
                Projection::SpaceView(SpaceView {
                    lon_sub: angle("longitudeOfSubSatellitePointInDegrees")?,
                    xp: metres("XpInGridLengths")?,
                    yp: metres("YpInGridLengths")?,
                    // ecCodes holds the origin in a C int.
                    xo: whole("Xo").filter(|v| i32::try_from(*v).is_ok())?,
                    yo: whole("Yo").filter(|v| i32::try_from(*v).is_ok())?,
                    dx: positive("dx")?,
                    dy: positive("dy")?,
                    nr: metres("NrInRadiusOfEarth").filter(|v| *v >= 1.0)?,
                    i_negative: !flag("iScansNegatively", 0),
                    j_positive: flag("jScansPositively", 1),
                })
            }
            _ => return None,
        };
        // ecCodes takes the earth as oblate when `earthIsOblate` is 1, and
        // projects an oblate earth for Lambert conformal and Mercator grids
        // only, on its semi-major and semi-minor axes.
        let (radius, minor_axis) = if !flag("earthIsOblate", 1) {
            (metres("radius").filter(|r| *r > 0.0)?, None)
        } else if matches!(projection, Projection::SpaceView(_)) {
            // Its iterator takes the axes as the message codes them.
            let major = metres("earthMajorAxis").filter(|r| *r > 0.0)?;
            let minor = metres("earthMinorAxis").filter(|r| *r > 0.0 && *r <= major)?;
            (major, Some(minor))
        } else if matches!(
            projection,
            Projection::LambertConformal { .. } | Projection::Mercator { .. }
        ) {
            let major = metres("earthMajorAxisInMetres").filter(|r| *r > 0.0)?;
            let minor = metres("earthMinorAxisInMetres").filter(|r| *r > 0.0 && *r <= major)?;
            (major, Some(minor))
        } else {
            return None;
        };
        let first = match projection {
            Projection::SpaceView(_) => (0.0, 0.0),
            _ => (
                angle("latitudeOfFirstGridPointInDegrees")?,
                angle("longitudeOfFirstGridPointInDegrees")?,
            ),
        };
        Some(Projected {
            projection,
            first,
            step: (step.0?, step.1?),
            radius,
            minor_axis,
            nx: usize::try_from(nx).ok()?,
            ny: usize::try_from(ny).ok()?,
        })
    }

    /// The latitudes and longitudes of every point, row by row (degrees);
    /// None when a polar stereographic, Lambert conformal or Mercator
    /// longitude is not finite, a latitude found by iteration does not
    /// settle, or a Mercator grid starts at a pole; Lambert azimuthal
    /// equal-area points are always given, NaN where ecCodes gives NaN (a
    /// point beyond the projection's disc).
    pub(super) fn points(&self) -> Option<(Vec<f64>, Vec<f64>)> {
        match self.projection {
            Projection::PolarStereographic {
                centre_lon,
                centre_lat,
            } => self.polar_stereographic(centre_lon, centre_lat),
            Projection::LambertConformal {
                lov,
                lad,
                latin1,
                latin2,
            } => match self.minor_axis {
                None => self.lambert_conformal(lov, lad, latin1, latin2),
                Some(minor) => self.lambert_conformal_oblate(minor, lov, lad, latin1, latin2),
            },
            Projection::LambertAzimuthalEqualArea {
                standard_parallel,
                central_lon,
            } => Some(self.lambert_azimuthal_equal_area(standard_parallel, central_lon)),
            Projection::Mercator { lad, orientation } => self.mercator(lad, orientation),
            // On a sphere of `radius` metres ecCodes works in kilometres.
            Projection::SpaceView(view) => Some(match self.minor_axis {
                None => view.points(self.radius * 0.001, self.radius * 0.001, self.nx, self.ny),
                Some(minor) => view.points(self.radius, minor, self.nx, self.ny),
            }),
        }
    }

    /// ecCodes' `LambertAzimuthalEqualArea` geoiterator on a sphere (rows
    /// along i): the first point projected forward, then every point at x
    /// and y advanced by repeated addition of the signed steps, projected
    /// back; degrees by division by `acos(0)/90`, a negative longitude
    /// taken once round.
    fn lambert_azimuthal_equal_area(
        &self,
        phi1_deg: f64,
        lambda0_deg: f64,
    ) -> (Vec<f64>, Vec<f64>) {
        let d2r = 0.0f64.acos() / 90.0;
        let (lambda0, phi1) = (lambda0_deg * d2r, phi1_deg * d2r);
        let (lat_first, lon_first) = (self.first.0 * d2r, self.first.1 * d2r);
        let radius = self.radius;
        let (cosphi1, sinphi1) = (phi1.cos(), phi1.sin());
        let (sinphi, cosphi) = (lat_first.sin(), lat_first.cos());
        let cosdlambda = (lon_first - lambda0).cos();
        let sindlambda = (lon_first - lambda0).sin();
        let kp = radius * (2.0 / (1.0 + sinphi1 * sinphi + cosphi1 * cosphi * cosdlambda)).sqrt();
        let x_first = kp * cosphi * sindlambda;
        let y_first = kp * (cosphi1 * sinphi - sinphi1 * cosphi * cosdlambda);
        let points = self.nx * self.ny;
        let (mut lats, mut lons) = (Vec::with_capacity(points), Vec::with_capacity(points));
        let mut y = y_first;
        for _ in 0..self.ny {
            let ysq = y * y;
            let mut x = x_first;
            for _ in 0..self.nx {
                let rho = (x * x + ysq).sqrt();
                let (lat, mut lon) = if rho > 1.0e-20 {
                    let c = 2.0 * (rho / (2.0 * radius)).asin();
                    let (cosc, sinc) = (c.cos(), c.sin());
                    (
                        (cosc * sinphi1 + y * sinc * cosphi1 / rho).asin() / d2r,
                        (lambda0 + (x * sinc).atan2(rho * cosphi1 * cosc - y * sinphi1 * sinc))
                            / d2r,
                    )
                } else {
                    (phi1 / d2r, lambda0 / d2r)
                };
                if lon < 0.0 {
                    lon += 360.0;
                }
                lats.push(lat);
                lons.push(lon);
                x += self.step.0;
            }
            y += self.step.1;
        }
        (lats, lons)
    }

    /// ecCodes' `PolarStereographic` geoiterator on a sphere: the first
    /// point projected forward gives the false easting and northing, then
    /// every point is projected back from x and y advanced by repeated
    /// addition of Dx and Dy.
    fn polar_stereographic(&self, lon_c: f64, lat_c: f64) -> Option<(Vec<f64>, Vec<f64>)> {
        let centre_lon = lon_c * DEG2RAD;
        let centre_lat = lat_c * DEG2RAD;
        let (lat_first, lon_first) = (self.first.0 * DEG2RAD, self.first.1 * DEG2RAD);
        let radius = self.radius;
        let sign = if centre_lat < 0.0 { -1.0 } else { 1.0 };
        let not_polar = ((centre_lat.abs()) - PI_OVER_2).abs() > EPSILON;
        let (mut mcs, mut tcs) = (0.0, 0.0);
        if not_polar {
            let con1 = sign * centre_lat;
            mcs = con1.cos();
            tcs = (0.5 * (PI_OVER_2 - con1)).tan();
        }
        let con1 = sign * (lon_first - centre_lon);
        let ts = (0.5 * (PI_OVER_2 - sign * lat_first)).tan();
        let height = if not_polar {
            radius * mcs * ts / tcs
        } else {
            2.0 * radius * ts
        };
        let x0 = -(sign * height * con1.sin() + 0.0);
        let y0 = -(-sign * height * con1.cos() + 0.0);
        let points = self.nx * self.ny;
        let (mut lats, mut lons) = (Vec::with_capacity(points), Vec::with_capacity(points));
        let mut y = 0.0;
        for _ in 0..self.ny {
            let mut x = 0.0;
            for _ in 0..self.nx {
                let xp = (x - x0) * sign;
                let yp = (y - y0) * sign;
                let rh = (xp * xp + yp * yp).sqrt();
                let ts = if not_polar {
                    rh * tcs / (radius * mcs)
                } else {
                    rh / (radius * 2.0)
                };
                let lat = sign * (PI_OVER_2 - 2.0 * ts.atan());
                let lon = if rh == 0.0 {
                    sign * centre_lon
                } else {
                    sign * xp.atan2(-yp) + centre_lon
                };
                lats.push(lat * RAD2DEG);
                lons.push(normalise_longitude(lon * RAD2DEG)?);
                x += self.step.0;
            }
            y += self.step.1;
        }
        Some((lats, lons))
    }

    /// ecCodes' `LambertConformal` geoiterator on a sphere: the cone's
    /// constant from the standard parallels, the first point's place on
    /// the cone, then every point at `x0 + i·Dx`, `y0 + j·Dy` projected
    /// back.
    fn lambert_conformal(
        &self,
        lov_deg: f64,
        lad: f64,
        latin1: f64,
        latin2: f64,
    ) -> Option<(Vec<f64>, Vec<f64>)> {
        let (l1, l2) = (latin1 * DEG2RAD, latin2 * DEG2RAD);
        let lad = lad * DEG2RAD;
        let lov = lov_deg * DEG2RAD;
        let (lat_first, lon_first) = (self.first.0 * DEG2RAD, self.first.1 * DEG2RAD);
        let radius = self.radius;
        let n = if (l1 - l2).abs() < 1e-9 {
            l1.sin()
        } else {
            (l1.cos() / l2.cos()).ln()
                / ((PI_OVER_4 + l2 / 2.0).tan() / (PI_OVER_4 + l1 / 2.0).tan()).ln()
        };
        if n == 0.0 || !n.is_finite() {
            return None;
        }
        let f = (l1.cos() * (PI_OVER_4 + l1 / 2.0).tan().powf(n)) / n;
        let rho = radius * f * (PI_OVER_4 + lat_first / 2.0).tan().powf(-n);
        let rho0_bare = f * (PI_OVER_4 + lad / 2.0).tan().powf(-n);
        let rho0 = radius * rho0_bare;
        let mut lon_diff = lon_first - lov;
        if lon_diff > PI {
            lon_diff -= 2.0 * PI;
        }
        if lon_diff < -PI {
            lon_diff += 2.0 * PI;
        }
        let angle = n * lon_diff;
        let x0 = rho * angle.sin();
        let y0 = rho0 - rho * angle.cos();
        let points = self.nx * self.ny;
        let (mut lats, mut lons) = (Vec::with_capacity(points), Vec::with_capacity(points));
        for j in 0..self.ny {
            let y = y0 + j as f64 * self.step.1;
            for i in 0..self.nx {
                let x = x0 + i as f64 * self.step.0;
                let (lat, lon) = xy_to_lat_lon(radius, n, f, rho0_bare, lov, x, y);
                lats.push(lat);
                lons.push(normalise_longitude(lon)?);
            }
        }
        Some((lats, lons))
    }
}

impl Projected {
    /// ecCodes' `LambertConformal` geoiterator on an ellipsoid of
    /// semi-major axis `radius` and semi-minor axis `minor`: the cone from
    /// the standard parallels' small m and t, the first point's place as
    /// the false easting and northing, then every point at `i·Dx`, `j·Dy`
    /// projected back, its latitude found by at most 16 fixed-point steps
    /// (None when they do not settle, as ecCodes fails).
    fn lambert_conformal_oblate(
        &self,
        minor: f64,
        lov_deg: f64,
        lad: f64,
        latin1: f64,
        latin2: f64,
    ) -> Option<(Vec<f64>, Vec<f64>)> {
        let major = self.radius;
        let (l1, l2) = (latin1 * DEG2RAD, latin2 * DEG2RAD);
        let (lad, lov) = (lad * DEG2RAD, lov_deg * DEG2RAD);
        let (lat_first, lon_first) = (self.first.0 * DEG2RAD, self.first.1 * DEG2RAD);
        let ratio = minor / major;
        let e = (1.0 - ratio * ratio).sqrt();
        let ms1 = small_m(e, l1.sin(), l1.cos());
        let ts1 = small_t(e, l1, l1.sin());
        let ms2 = small_m(e, l2.sin(), l2.cos());
        let ts2 = small_t(e, l2, l2.sin());
        let ts0 = small_t(e, lad, lad.sin());
        let ns = if (l1 - l2).abs() > EPSILON {
            (ms1 / ms2).ln() / (ts1 / ts2).ln()
        } else {
            l1.sin()
        };
        if ns == 0.0 || !ns.is_finite() {
            return None;
        }
        let f = ms1 / (ns * ts1.powf(ns));
        let rh = major * f * ts0.powf(ns);
        let rh_first = if (lat_first.abs() - PI_OVER_2).abs() > EPSILON {
            major * f * small_t(e, lat_first, lat_first.sin()).powf(ns)
        } else if lat_first * ns <= 0.0 {
            return None;
        } else {
            0.0
        };
        let theta = ns * adjust_lon_radians(lon_first - lov);
        let false_easting = -(rh_first * theta.sin());
        let false_northing = -(rh - rh_first * theta.cos());
        self.at_steps(|x, y| {
            let xp = x - false_easting;
            let yp = rh - y + false_northing;
            let mut rh1 = (xp * xp + yp * yp).sqrt();
            let mut con = 1.0;
            if ns <= 0.0 {
                rh1 = -rh1;
                con = -con;
            }
            let theta = if rh1 != 0.0 {
                (con * xp).atan2(con * yp)
            } else {
                0.0
            };
            let lat = if rh1 != 0.0 || ns > 0.0 {
                let ts = (rh1 / (major * f)).powf(1.0 / ns);
                phi_of(e, ts)?
            } else {
                -PI_OVER_2
            };
            Some((lat, adjust_lon_radians(theta / ns + lov)))
        })
    }

    /// Every point, row by row, from `point(i·Dx, j·Dy)` in radians:
    /// degrees by multiplication, longitudes normalised; None when a point
    /// is (or its longitude does not normalise).
    fn at_steps(
        &self,
        mut point: impl FnMut(f64, f64) -> Option<(f64, f64)>,
    ) -> Option<(Vec<f64>, Vec<f64>)> {
        let points = self.nx * self.ny;
        let (mut lats, mut lons) = (Vec::with_capacity(points), Vec::with_capacity(points));
        for j in 0..self.ny {
            let y = j as f64 * self.step.1;
            for i in 0..self.nx {
                let (lat, lon) = point(i as f64 * self.step.0, y)?;
                lats.push(lat * RAD2DEG);
                lons.push(normalise_longitude(lon * RAD2DEG)?);
            }
        }
        Some((lats, lons))
    }
}

impl Projected {
    /// ecCodes' `Mercator` geoiterator (from 2.33 on, which steps y by Dj;
    /// earlier versions step it by Di), on a sphere or an ellipsoid of
    /// semi-major axis `radius`: the scale m at the true latitude, the
    /// first point projected forward as the false easting and northing,
    /// then every point at `i·Di`, `j·Dj` projected back, its latitude by
    /// at most 16 fixed-point steps (on a sphere the first settles). None
    /// when the first point is at a pole or a latitude does not settle, as
    /// ecCodes fails.
    fn mercator(&self, lad_deg: f64, orientation_deg: f64) -> Option<(Vec<f64>, Vec<f64>)> {
        let major = self.radius;
        let ratio = self.minor_axis.unwrap_or(major) / major;
        let es = 1.0 - ratio * ratio;
        let e = es.sqrt();
        let (lad, orientation) = (lad_deg * DEG2RAD, orientation_deg * DEG2RAD);
        let (lat_first, lon_first) = (self.first.0 * DEG2RAD, self.first.1 * DEG2RAD);
        let m1 = lad.cos() / (1.0 - es * lad.sin() * lad.sin()).sqrt();
        if (lat_first.abs() - PI_OVER_2).abs() <= EPSILON {
            return None;
        }
        let ts_first = small_t(e, lat_first, lat_first.sin());
        let false_easting = -(major * m1 * adjust_lon_radians(lon_first - orientation));
        let false_northing = -(0.0 - major * m1 * ts_first.ln());
        self.at_steps(|x, y| {
            let (xp, yp) = (x - false_easting, y - false_northing);
            let lat = phi_of(e, (-yp / (major * m1)).exp())?;
            Some((lat, adjust_lon_radians(orientation + xp / (major * m1))))
        })
    }
}

/// ecCodes' `compute_m`: `cos φ / sqrt(1 − (e sin φ)²)`.
fn small_m(e: f64, sinphi: f64, cosphi: f64) -> f64 {
    let con = e * sinphi;
    cosphi / (1.0 - con * con).sqrt()
}

/// ecCodes' `compute_t`: `tan((π/2 − φ)/2) / ((1 − e sin φ)/(1 + e sin φ))^(e/2)`.
fn small_t(e: f64, phi: f64, sinphi: f64) -> f64 {
    let con = e * sinphi;
    let com = 0.5 * e;
    let con = ((1.0 - con) / (1.0 + con)).powf(com);
    (0.5 * (PI_OVER_2 - phi)).tan() / con
}

/// ecCodes' `compute_phi`: the latitude whose small t is `ts`, by at most
/// 16 fixed-point steps until a step is within 10⁻¹⁰ rad.
fn phi_of(e: f64, ts: f64) -> Option<f64> {
    let half_e = 0.5 * e;
    let mut phi = PI_OVER_2 - 2.0 * ts.atan();
    for _ in 0..=15 {
        let con = e * phi.sin();
        let dphi = PI_OVER_2 - 2.0 * (ts * ((1.0 - con) / (1.0 + con)).powf(half_e)).atan() - phi;
        phi += dphi;
        if dphi.abs() <= 0.000_000_000_1 {
            return Some(phi);
        }
    }
    None
}

/// ecCodes' `adjust_lon_radians`: one turn towards (−π, π].
fn adjust_lon_radians(mut lon: f64) -> f64 {
    if lon > PI {
        lon -= 2.0 * PI;
    }
    if lon < -PI {
        lon += 2.0 * PI;
    }
    lon
}

/// One point of a Lambert conformal grid back from the cone (degrees).
fn xy_to_lat_lon(
    radius: f64,
    n: f64,
    f: f64,
    rho0_bare: f64,
    lov: f64,
    x: f64,
    y: f64,
) -> (f64, f64) {
    let mut x = x / radius;
    let mut y = rho0_bare - y / radius;
    let mut rho = x.hypot(y);
    if rho == 0.0 {
        let pole = if n > 0.0 { PI_OVER_2 } else { -PI_OVER_2 };
        return (pole * RAD2DEG, 0.0);
    }
    if n < 0.0 {
        rho = -rho;
        x = -x;
        y = -y;
    }
    let lat = 2.0 * (f / rho).powf(1.0 / n).atan() - PI_OVER_2;
    let lon = x.atan2(y) / n;
    (lat * RAD2DEG, (lon + lov) * RAD2DEG)
}

/// A longitude brought into [0, 360] a turn at a time, as ecCodes'
/// `normalise_longitude_in_degrees` does; None beyond a few turns (and
/// for NaN), where ecCodes would loop for as long as it takes.
fn normalise_longitude(mut lon: f64) -> Option<f64> {
    if !lon.is_finite() || lon.abs() > 8.0 * 360.0 {
        return None;
    }
    while lon < 0.0 {
        lon += 360.0;
    }
    while lon > 360.0 {
        lon -= 360.0;
    }
    Some(lon)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cbor::Value;

    fn geography(grid: &str, more: &[(&str, Value)]) -> Value {
        let entries = vec![
            ("gridType", Value::Text(grid.into())),
            ("Ni", Value::Uint(3)),
            ("Nj", Value::Uint(2)),
            ("jScansPositively", Value::Uint(1)),
            ("radius", Value::Float(6_371_229.0)),
            ("latitudeOfFirstGridPointInDegrees", Value::Float(60.0)),
            ("longitudeOfFirstGridPointInDegrees", Value::Float(0.0)),
            ("DxInMetres", Value::Float(2000.0)),
            ("DyInMetres", Value::Float(2000.0)),
            ("LaDInDegrees", Value::Float(60.0)),
        ];
        Value::text_map(with(entries, more))
    }

    /// `keys` with those of `more` put in their place or added.
    fn with<'a>(
        mut keys: Vec<(&'a str, Value)>,
        more: &[(&'a str, Value)],
    ) -> Vec<(&'a str, Value)> {
        for (k, v) in more {
            keys.retain(|(e, _)| e != k);
            keys.push((k, v.clone()));
        }
        keys
    }

    fn polar(more: &[(&str, Value)]) -> Value {
        let keys = vec![("orientationOfTheGridInDegrees", Value::Float(0.0))];
        geography("polar_stereographic", &with(keys, more))
    }

    #[test]
    fn the_first_point_is_the_grids_first_point() {
        let lambert = geography(
            "lambert",
            &[
                ("LoVInDegrees", Value::Float(0.0)),
                ("Latin1InDegrees", Value::Float(60.0)),
                ("Latin2InDegrees", Value::Float(60.0)),
            ],
        );
        let mut on_grs80 = vec![
            ("earthIsOblate", Value::Uint(1)),
            ("earthMajorAxisInMetres", Value::Float(6_378_137.0)),
            ("earthMinorAxisInMetres", Value::Float(6_356_752.314)),
        ];
        on_grs80.extend([
            ("LoVInDegrees", Value::Float(0.0)),
            ("Latin1InDegrees", Value::Float(50.0)),
            ("Latin2InDegrees", Value::Float(60.0)),
        ]);
        let oblate = geography("lambert", &on_grs80);
        for geo in [polar(&[]), lambert, oblate] {
            let g = Geography::new(&geo).unwrap();
            let p = Projected::of(&g, &[2, 3]).expect("a projected grid");
            let (lat, lon) = p.points().unwrap();
            assert_eq!(lat.len(), 6);
            assert!((lat[0] - 60.0).abs() < 1e-9, "{lat:?}");
            assert!(
                lon[0].abs() < 1e-9 || (lon[0] - 360.0).abs() < 1e-9,
                "{lon:?}"
            );
            // Points move away from the first one.
            assert!(lat
                .iter()
                .zip(&lon)
                .skip(1)
                .all(|(a, o)| (a - 60.0).abs() + o.abs() > 0.0));
        }
    }

    #[test]
    fn lambert_azimuthal_equal_area_points_follow_the_scanning() {
        let laea = |i_negative: u64, j_positive: u64| {
            geography(
                "lambert_azimuthal_equal_area",
                &[
                    ("standardParallelInDegrees", Value::Float(52.0)),
                    ("centralLongitudeInDegrees", Value::Float(10.0)),
                    ("xDirectionGridLengthInMillimetres", Value::Uint(5_000_000)),
                    ("yDirectionGridLengthInMillimetres", Value::Uint(5_000_000)),
                    ("iScansNegatively", Value::Uint(i_negative)),
                    ("jScansPositively", Value::Uint(j_positive)),
                ],
            )
        };
        let points = |geo: &Value| {
            let g = Geography::new(geo).unwrap();
            Projected::of(&g, &[2, 3])
                .expect("a projected grid")
                .points()
                .unwrap()
        };
        let (lat, lon) = points(&laea(0, 1));
        assert!(
            (lat[0] - 60.0).abs() < 1e-9 && lon[0].abs() < 1e-9,
            "{lat:?} {lon:?}"
        );
        // Eastward along a row, northward along a column.
        assert!(lon[1] > lon[0] && lat[3] > lat[0], "{lat:?} {lon:?}");
        let (lat, lon) = points(&laea(1, 0));
        assert!(
            lon[1] < 360.0 && lon[1] > 300.0 && lat[3] < lat[0],
            "{lat:?} {lon:?}"
        );
    }

    #[test]
    fn other_scannings_an_oblate_earth_and_wild_keys_give_no_grid() {
        for more in [
            vec![("jScansPositively", Value::Uint(0))],
            vec![("iScansNegatively", Value::Uint(1))],
            vec![("jPointsAreConsecutive", Value::Uint(1))],
            vec![("alternativeRowScanning", Value::Uint(1))],
            vec![("earthIsOblate", Value::Uint(1))],
            vec![("radius", Value::Float(0.0))],
            vec![("DxInMetres", Value::Float(f64::NAN))],
            vec![("orientationOfTheGridInDegrees", Value::Float(1e300))],
            vec![("Ni", Value::Uint(4))],
        ] {
            let geo = polar(&more);
            let g = Geography::new(&geo).unwrap();
            assert!(Projected::of(&g, &[2, 3]).is_none(), "{more:?}");
        }
        // An oblate earth without its axes.
        let oblate = geography(
            "lambert",
            &[
                ("LoVInDegrees", Value::Float(0.0)),
                ("Latin1InDegrees", Value::Float(60.0)),
                ("Latin2InDegrees", Value::Float(60.0)),
                ("earthIsOblate", Value::Uint(1)),
            ],
        );
        assert!(Projected::of(&Geography::new(&oblate).unwrap(), &[2, 3]).is_none());
        let flat = geography(
            "lambert",
            &[
                ("LoVInDegrees", Value::Float(0.0)),
                ("Latin1InDegrees", Value::Float(30.0)),
                ("Latin2InDegrees", Value::Float(-30.0)),
            ],
        );
        assert!(Projected::of(&Geography::new(&flat).unwrap(), &[2, 3]).is_none());
        // One standard parallel at the equator still makes a cone.
        let tilted = geography(
            "lambert",
            &[
                ("LoVInDegrees", Value::Float(0.0)),
                ("Latin1InDegrees", Value::Float(0.0)),
                ("Latin2InDegrees", Value::Float(30.0)),
            ],
        );
        let g = Geography::new(&tilted).unwrap();
        assert!(Projected::of(&g, &[2, 3])
            .and_then(|p| p.points())
            .is_some());
    }

    fn mercator(more: &[(&str, Value)]) -> Value {
        let keys = vec![
            ("latitudeOfFirstGridPointInDegrees", Value::Float(10.0)),
            ("longitudeOfFirstGridPointInDegrees", Value::Float(100.0)),
            ("LaDInDegrees", Value::Float(20.0)),
            ("orientationOfTheGridInDegrees", Value::Float(0.0)),
            ("DiInMetres", Value::Float(100_000.0)),
            ("DjInMetres", Value::Float(50_000.0)),
        ];
        geography("mercator", &with(keys, more))
    }

    #[test]
    fn mercator_rows_are_parallels_and_columns_meridians() {
        let grs80 = [
            ("earthIsOblate", Value::Uint(1)),
            ("earthMajorAxisInMetres", Value::Float(6_378_137.0)),
            ("earthMinorAxisInMetres", Value::Float(6_356_752.314)),
        ];
        for geo in [mercator(&[]), mercator(&grs80)] {
            let g = Geography::new(&geo).unwrap();
            let (lat, lon) = Projected::of(&g, &[2, 3]).unwrap().points().unwrap();
            assert!((lat[0] - 10.0).abs() < 1e-9 && (lon[0] - 100.0).abs() < 1e-9);
            // A row keeps its latitude, a column its longitude; x steps by
            // Di, y by Dj (half as far north as a column step is east, at
            // a scale of about 1/cos(20°) over 1/cos(10°)).
            assert_eq!((lat[1], lat[2]), (lat[0], lat[0]));
            assert_eq!((lon[3], lon[4]), (lon[0], lon[1]));
            let (east, north) = (lon[1] - lon[0], lat[3] - lat[0]);
            assert!(north > 0.0 && east > 0.0);
            assert!(
                (north / east - 0.5 * 10f64.to_radians().cos()).abs() < 0.01,
                "{north} {east}"
            );
        }
        // A grid starting at a pole has no points, as in ecCodes; nor one
        // on an oblate earth without its axes.
        let polar = mercator(&[("latitudeOfFirstGridPointInDegrees", Value::Float(90.0))]);
        let g = Geography::new(&polar).unwrap();
        assert!(Projected::of(&g, &[2, 3]).unwrap().points().is_none());
        let oblate = mercator(&[("earthIsOblate", Value::Uint(1))]);
        assert!(Projected::of(&Geography::new(&oblate).unwrap(), &[2, 3]).is_none());
        let minus_j = mercator(&[("jScansPositively", Value::Uint(0))]);
        assert!(Projected::of(&Geography::new(&minus_j).unwrap(), &[2, 3]).is_none());
    }

    fn space_view(more: &[(&str, Value)]) -> Value {
        let keys = vec![
            ("Ni", Value::Uint(5)),
            ("Nj", Value::Uint(3)),
            ("jScansPositively", Value::Uint(0)),
            ("latitudeOfSubSatellitePointInDegrees", Value::Float(0.0)),
            ("longitudeOfSubSatellitePointInDegrees", Value::Float(-20.0)),
            ("dx", Value::Uint(4)),
            ("dy", Value::Uint(4)),
            ("XpInGridLengths", Value::Float(2.0)),
            ("YpInGridLengths", Value::Float(1.0)),
            ("NrInRadiusOfEarth", Value::Float(6.6107)),
            ("Xo", Value::Uint(0)),
            ("Yo", Value::Uint(0)),
        ];
        geography("space_view", &with(keys, more))
    }

    #[test]
    fn a_space_view_centres_on_the_sub_satellite_point() {
        let geo = space_view(&[]);
        let g = Geography::new(&geo).unwrap();
        let (lat, lon) = Projected::of(&g, &[3, 5]).unwrap().points().unwrap();
        // The middle point is the sub-satellite point; the middle row the
        // equator, symmetric east and west; the corners off the disc.
        assert_eq!((lat[7], lon[7]), (0.0, 340.0));
        // (The row's ends lie on the disc's edge, where rounding decides.)
        assert!(lat[6..9].iter().all(|l| *l == 0.0), "{lat:?}");
        // (-20° ∓ d, across 0°: their sum is 2 · 340° less a turn.)
        assert!((lon[6] + lon[8] - 320.0).abs() < 1e-9, "{lon:?}");
        assert!(lat[0].is_nan() && lon[0].is_nan() && lat[14].is_nan());
        // Scanned -j, the first row is the northern one.
        assert!(lat[2] > 0.0 && lat[12] < 0.0, "{lat:?}");
        // Keys ecCodes refuses, or that have no view, give no grid.
        for more in [
            vec![("latitudeOfSubSatellitePointInDegrees", Value::Float(1.0))],
            vec![("NrInRadiusOfEarth", Value::Float(0.5))],
            vec![("NrInRadiusOfEarth", Value::Float(f64::NAN))],
            vec![("dx", Value::Uint(0))],
            vec![("longitudeOfSubSatellitePointInDegrees", Value::Float(1e300))],
            vec![("earthIsOblate", Value::Uint(1))],
            vec![("jPointsAreConsecutive", Value::Uint(1))],
            vec![("Xo", Value::Float(0.5))],
        ] {
            let geo = space_view(&more);
            let g = Geography::new(&geo).unwrap();
            assert!(Projected::of(&g, &[3, 5]).is_none(), "{more:?}");
        }
    }

    #[test]
    fn longitudes_are_normalised_a_turn_at_a_time() {
        assert_eq!(normalise_longitude(-90.0), Some(270.0));
        assert_eq!(normalise_longitude(725.0), Some(5.0));
        assert_eq!(normalise_longitude(360.0), Some(360.0));
        assert_eq!(normalise_longitude(1e9), None);
        assert_eq!(normalise_longitude(f64::NAN), None);
    }
}
