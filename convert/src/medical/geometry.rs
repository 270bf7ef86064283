//! The scanner geometry of a medical volume, recorded the same way whether
//! it came from DICOM or NIfTI (spec/convert.md "Medical geometry"):
//! `base[i].geometry` holds the LPS affine from voxel index to patient
//! millimetres, the frame of reference, slice spacing and thickness, and
//! the modality.
//!
//! Index order: `(i, j, k)` are the last, second-last and third-last axes
//! of the object's shape: column, row, slice of a DICOM series; `dim[1]`,
//! `dim[2]`, `dim[3]` of a NIfTI volume.

use tgm::cbor::Value;
use tgm::Map;

use super::{MedicalError, MedicalResult};

/// Key of the geometry map in a `base` entry.
pub const KEY: &str = "geometry";

/// Largest |cos| between the row and column directions still taken as
/// perpendicular (DICOM's ImageOrientationPatient holds two perpendicular
/// unit vectors).
const PERPENDICULAR: f64 = 1e-4;

/// Where a volume's voxels lie in the patient.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    /// Voxel index `(i, j, k, 1)` to LPS millimetres `(x, y, z, 1)`.
    pub affine_lps: [[f64; 4]; 4],
    /// FrameOfReferenceUID, when the source has one.
    pub frame_of_reference: Option<String>,
    /// Distance between slice centres (mm).
    pub slice_spacing: Option<f64>,
    /// Nominal slice thickness (mm).
    pub slice_thickness: Option<f64>,
    /// DICOM Modality, when the source has one.
    pub modality: Option<String>,
}

/// The DICOM description of one slice plane: orientation, pixel spacing
/// and the step from one slice to the next.
#[derive(Clone, Debug, PartialEq)]
pub struct Plane {
    /// ImageOrientationPatient: row direction then column direction.
    pub orientation: [f64; 6],
    /// PixelSpacing: between rows, then between columns (mm).
    pub pixel_spacing: [f64; 2],
}

fn column(m: &[[f64; 4]; 4], c: usize) -> [f64; 3] {
    [m[0][c], m[1][c], m[2][c]]
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

fn scale(v: [f64; 3], s: f64) -> [f64; 3] {
    v.map(|x| x * s)
}

/// `a × b`.
pub fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// NIfTI's RAS and DICOM's LPS differ by diag(-1, -1, 1): the same matrix
/// converts either way.
fn flip_xy(m: &[[f64; 4]; 4]) -> [[f64; 4]; 4] {
    let mut out = *m;
    for c in 0..4 {
        out[0][c] = -m[0][c];
        out[1][c] = -m[1][c];
    }
    out
}

fn affine_value(m: &[[f64; 4]; 4]) -> Value {
    Value::Array(
        m.iter()
            .map(|r| Value::Array(r.iter().map(|&x| Value::Float(x)).collect()))
            .collect(),
    )
}

impl Geometry {
    /// The geometry of a DICOM series: first slice's ImagePositionPatient,
    /// the plane's orientation and spacing, and `slice_step`, the vector
    /// from one slice centre to the next (PS3.3 C.7.6.2.1.1).
    pub fn from_dicom(position: [f64; 3], plane: &Plane, slice_step: [f64; 3]) -> Geometry {
        let o = plane.orientation;
        let [row_spacing, column_spacing] = plane.pixel_spacing;
        let i = scale([o[0], o[1], o[2]], column_spacing);
        let j = scale([o[3], o[4], o[5]], row_spacing);
        let mut m = [[0.0; 4]; 4];
        for r in 0..3 {
            m[r] = [i[r], j[r], slice_step[r], position[r]];
        }
        m[3][3] = 1.0;
        let spacing = norm(slice_step);
        Geometry {
            affine_lps: m,
            frame_of_reference: None,
            slice_spacing: (spacing > 0.0).then_some(spacing),
            slice_thickness: None,
            modality: None,
        }
    }

    /// The geometry recorded in a `nifti` metadata map: the sform when its
    /// code is set, else the qform when its code is set (NIfTI-1 methods 3
    /// and 2); `None` for method 1 (no transform).
    pub fn from_nifti_meta(meta: &Value) -> Option<Geometry> {
        let code = |k: &str| meta.get(k)?.get("code")?.as_i64();
        let source = if code("sform").is_some_and(|c| c > 0) {
            "sform"
        } else if code("qform").is_some_and(|c| c > 0) {
            "qform"
        } else {
            return None;
        };
        let ras = tgm::view::affine_from_value(meta.get(source)?.get("affine")?)?;
        let spacing = norm(column(&ras, 2));
        Some(Geometry {
            affine_lps: flip_xy(&ras),
            frame_of_reference: None,
            slice_spacing: (spacing > 0.0).then_some(spacing),
            slice_thickness: None,
            modality: None,
        })
    }

    /// The geometry map of a `base` entry.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("affine_lps".into(), affine_value(&self.affine_lps));
        if let Some(f) = &self.frame_of_reference {
            m.insert("frame_of_reference_uid".into(), f.clone().into());
        }
        if let Some(s) = self.slice_spacing {
            m.insert("slice_spacing".into(), Value::Float(s));
        }
        if let Some(t) = self.slice_thickness {
            m.insert("slice_thickness".into(), Value::Float(t));
        }
        if let Some(md) = &self.modality {
            m.insert("modality".into(), md.clone().into());
        }
        Value::from(m)
    }

    /// The geometry of a `base` entry, `None` when it has none; an error
    /// when present but malformed.
    pub fn from_entry(entry: &Map) -> MedicalResult<Option<Geometry>> {
        let Some(g) = entry.get(KEY) else {
            return Ok(None);
        };
        let bad = |what: &str| MedicalError::invalid(format!("metadata {KEY}.{what} is malformed"));
        let affine_lps = g
            .get("affine_lps")
            .and_then(tgm::view::affine_from_value)
            .ok_or_else(|| bad("affine_lps (a 4x4 array of finite numbers)"))?;
        let number = |k: &str| -> MedicalResult<Option<f64>> {
            match g.get(k) {
                None => Ok(None),
                Some(v) => Ok(Some(
                    v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| bad(k))?,
                )),
            }
        };
        let text = |k: &str| -> MedicalResult<Option<String>> {
            match g.get(k) {
                None => Ok(None),
                Some(v) => Ok(Some(v.as_text().ok_or_else(|| bad(k))?.to_string())),
            }
        };
        Ok(Some(Geometry {
            affine_lps,
            frame_of_reference: text("frame_of_reference_uid")?,
            slice_spacing: number("slice_spacing")?,
            slice_thickness: number("slice_thickness")?,
            modality: text("modality")?,
        }))
    }

    /// The DICOM plane of this geometry; refused when the row and column
    /// directions are not perpendicular or a voxel size is zero, which
    /// ImageOrientationPatient and PixelSpacing cannot express.
    pub fn plane(&self) -> MedicalResult<Plane> {
        let (i, j) = (column(&self.affine_lps, 0), column(&self.affine_lps, 1));
        let (ni, nj) = (norm(i), norm(j));
        if ni == 0.0 || nj == 0.0 {
            return Err(MedicalError::invalid(
                "the geometry's affine has a zero voxel size along a row or column",
            ));
        }
        let (ui, uj) = (scale(i, 1.0 / ni), scale(j, 1.0 / nj));
        if dot(ui, uj).abs() > PERPENDICULAR {
            return Err(MedicalError::invalid(format!(
                "the geometry's affine shears rows against columns (cos {:.6}); \
                 DICOM's ImageOrientationPatient cannot hold it",
                dot(ui, uj)
            )));
        }
        Ok(Plane {
            orientation: [ui[0], ui[1], ui[2], uj[0], uj[1], uj[2]],
            pixel_spacing: [nj, ni],
        })
    }

    /// ImagePositionPatient of slice `k`: the centre of its first voxel.
    pub fn slice_position(&self, k: u64) -> [f64; 3] {
        let m = &self.affine_lps;
        let k = k as f64;
        [0, 1, 2].map(|r| m[r][3] + k * m[r][2])
    }

    /// The vector from one slice centre to the next.
    pub fn slice_step(&self) -> [f64; 3] {
        column(&self.affine_lps, 2)
    }

    /// A `nifti` metadata map carrying this geometry: sform and qform with
    /// code 1 (scanner), pixdim with qfac, units mm. `to-nifti` writes a
    /// header from it when the object has no NIfTI header of its own.
    pub fn to_nifti_meta(&self) -> Value {
        let ras = flip_xy(&self.affine_lps);
        let q = Quaternion::of(&ras);
        let mut pixdim = [1.0f64; 8];
        pixdim[0] = q.qfac;
        pixdim[1..4].copy_from_slice(&q.voxel);
        let floats = |v: &[f64]| Value::Array(v.iter().map(|&x| Value::Float(x)).collect());
        let mut qform = Map::new();
        qform.insert("code".into(), 1u64.into());
        qform.insert("quatern".into(), floats(&q.bcd));
        qform.insert("offset".into(), floats(&[ras[0][3], ras[1][3], ras[2][3]]));
        let mut sform = Map::new();
        sform.insert("code".into(), 1u64.into());
        sform.insert("affine".into(), affine_value(&ras));
        let mut m = Map::new();
        m.insert("pixdim".into(), floats(&pixdim));
        // NIFTI_UNITS_MM.
        m.insert("xyzt_units".into(), 2u64.into());
        m.insert("qform".into(), Value::from(qform));
        m.insert("sform".into(), Value::from(sform));
        Value::from(m)
    }
}

/// The NIfTI qform parameters of an affine's rotation part.
#[derive(Debug)]
pub struct Quaternion {
    /// Quaternion `(b, c, d)`; `a = sqrt(1 - b² - c² - d²)` is not stored.
    pub bcd: [f64; 3],
    /// Voxel sizes along i, j, k (pixdim[1..4]).
    pub voxel: [f64; 3],
    /// -1 for a left-handed frame (the k column negated), else 1.
    pub qfac: f64,
}

impl Quaternion {
    /// The quaternion of `m`'s 3×3 part after removing the voxel sizes and
    /// orthogonalising (Gram–Schmidt), as nifti_mat44_to_quatern defines it.
    pub fn of(m: &[[f64; 4]; 4]) -> Quaternion {
        let mut cols = [column(m, 0), column(m, 1), column(m, 2)];
        let voxel = cols.map(norm);
        let defaults = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        for (c, d) in cols.iter_mut().zip(defaults) {
            let n = norm(*c);
            *c = if n > 0.0 { scale(*c, 1.0 / n) } else { d };
        }
        // Gram–Schmidt: j against i, k along i × j with the frame's sign.
        let p = dot(cols[1], cols[0]);
        let j = [0, 1, 2].map(|r| cols[1][r] - p * cols[0][r]);
        cols[1] = scale(j, 1.0 / norm(j).max(f64::MIN_POSITIVE));
        let right = cross(cols[0], cols[1]);
        let qfac = if dot(right, cols[2]) < 0.0 { -1.0 } else { 1.0 };
        cols[2] = right;
        // r[row][col], 0-based.
        let r = |row: usize, col: usize| cols[col][row];
        let trace = r(0, 0) + r(1, 1) + r(2, 2) + 1.0;
        let (mut a, mut b, mut c, mut d);
        if trace > 0.5 {
            a = 0.5 * trace.sqrt();
            b = 0.25 * (r(2, 1) - r(1, 2)) / a;
            c = 0.25 * (r(0, 2) - r(2, 0)) / a;
            d = 0.25 * (r(1, 0) - r(0, 1)) / a;
        } else {
            let xd = 1.0 + r(0, 0) - (r(1, 1) + r(2, 2));
            let yd = 1.0 + r(1, 1) - (r(0, 0) + r(2, 2));
            let zd = 1.0 + r(2, 2) - (r(0, 0) + r(1, 1));
            if xd > 1.0 {
                b = 0.5 * xd.sqrt();
                c = 0.25 * (r(0, 1) + r(1, 0)) / b;
                d = 0.25 * (r(0, 2) + r(2, 0)) / b;
                a = 0.25 * (r(2, 1) - r(1, 2)) / b;
            } else if yd > 1.0 {
                c = 0.5 * yd.sqrt();
                b = 0.25 * (r(0, 1) + r(1, 0)) / c;
                d = 0.25 * (r(1, 2) + r(2, 1)) / c;
                a = 0.25 * (r(0, 2) - r(2, 0)) / c;
            } else {
                d = 0.5 * zd.sqrt();
                b = 0.25 * (r(0, 2) + r(2, 0)) / d;
                c = 0.25 * (r(1, 2) + r(2, 1)) / d;
                a = 0.25 * (r(1, 0) - r(0, 1)) / d;
            }
            if a < 0.0 {
                (b, c, d) = (-b, -c, -d);
                a = -a;
            }
        }
        let _ = a;
        Quaternion {
            bcd: [b, c, d],
            voxel,
            qfac,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oblique() -> Geometry {
        let (s, c) = (0.3f64.sin(), 0.3f64.cos());
        let plane = Plane {
            orientation: [c, s, 0.0, -s * 0.8, c * 0.8, -0.6],
            pixel_spacing: [0.5, 0.75],
        };
        let o = plane.orientation;
        let row = [o[0], o[1], o[2]];
        let col = [o[3], o[4], o[5]];
        let n = cross(row, col);
        let n = scale(n, 2.5 / norm(n));
        Geometry::from_dicom([-120.5, 33.25, 7.0], &plane, n)
    }

    #[test]
    fn the_plane_of_a_dicom_geometry_is_its_source() {
        let g = oblique();
        let p = g.plane().unwrap();
        let (s, c) = (0.3f64.sin(), 0.3f64.cos());
        let want = [c, s, 0.0, -s * 0.8, c * 0.8, -0.6];
        assert!(p
            .orientation
            .iter()
            .zip(want)
            .all(|(a, b)| (a - b).abs() < 1e-12));
        assert_eq!(p.pixel_spacing, [0.5, 0.75]);
        assert!((g.slice_spacing.unwrap() - 2.5).abs() < 1e-12);
        let p2 = g.slice_position(2);
        let step = g.slice_step();
        assert!((0..3).all(|r| (p2[r] - ([-120.5, 33.25, 7.0][r] + 2.0 * step[r])).abs() < 1e-12));
    }

    #[test]
    fn a_sheared_affine_has_no_dicom_plane() {
        let mut g = oblique();
        g.affine_lps[0][1] += 0.2;
        let e = g.plane().unwrap_err().to_string();
        assert!(e.contains("shears"), "{e}");
    }

    #[test]
    fn entry_round_trip_keeps_every_field() {
        let mut g = oblique();
        g.frame_of_reference = Some("1.2.3".into());
        g.slice_thickness = Some(3.0);
        g.modality = Some("CT".into());
        let mut entry = Map::new();
        entry.insert(KEY.into(), g.to_value());
        assert_eq!(Geometry::from_entry(&entry).unwrap(), Some(g));
        let mut broken = Map::new();
        broken.insert(KEY.into(), Value::Array(vec![]));
        assert!(Geometry::from_entry(&broken).is_err());
    }

    #[cfg(feature = "nifti")]
    #[test]
    fn the_nifti_meta_qform_rebuilds_the_affine_in_both_handednesses() {
        use super::super::nifti_header::quaternion_affine;
        for flip in [1.0, -1.0] {
            let mut g = oblique();
            for r in 0..3 {
                g.affine_lps[r][2] *= flip;
            }
            let meta = g.to_nifti_meta();
            let f = |k: &[&str]| {
                let mut v = &meta;
                for p in k {
                    v = v.get(p).unwrap();
                }
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect::<Vec<_>>()
            };
            let (q, off, pix) = (
                f(&["qform", "quatern"]),
                f(&["qform", "offset"]),
                f(&["pixdim"]),
            );
            assert_eq!(pix[0], flip);
            let m = quaternion_affine(
                [q[0], q[1], q[2]],
                [off[0], off[1], off[2]],
                [pix[0], pix[1], pix[2], pix[3]],
            );
            let back = flip_xy(&m);
            for (r, (got, want)) in back.iter().zip(&g.affine_lps).enumerate().take(3) {
                for (c, (x, y)) in got.iter().zip(want).enumerate() {
                    assert!((x - y).abs() < 1e-9, "flip {flip} [{r}][{c}] {x} vs {y}");
                }
            }
            let from = Geometry::from_nifti_meta(&meta).unwrap();
            assert_eq!(from.affine_lps, g.affine_lps);
        }
    }
}
