//! The NIfTI-1 header as Tensogram metadata (`base[i].nifti`) and back, and
//! the 348-byte header writer.
//!
//! Every header field that carries meaning is kept verbatim (f32 values are
//! exact in the metadata's f64), so NIfTI → tgm → NIfTI restores the same
//! header: dims, pixdim, units, both transforms with their codes, intent,
//! description and the `scl_slope`/`scl_inter` scaling (recorded, never
//! applied). Derived 4×4 affines are added for readers that do not want to
//! rebuild them from the quaternion.

// NiftiHeader has some fifty fields; headers are built from the default
// field by field.
#![allow(clippy::field_reassign_with_default)]

use nifti::{Endianness, NiftiHeader};
use tgm::cbor::Value;
use tgm::{ByteOrder, Dtype, Map};

use super::nifti_check;
use super::nifti_ext::{self, Extension};
use super::nifti_float::{f32_value, f64_value, to_f32, to_f64};
use super::{MedicalError, MedicalResult};

/// Size of a NIfTI-1 header.
pub const HEADER_LEN: usize = 348;
/// Header plus the 4-byte extension flag: where single-file voxel data starts.
pub const DATA_OFFSET: usize = HEADER_LEN + 4;
/// Largest extent of one NIfTI-1 dimension (`dim[]` is a signed short).
pub const MAX_DIM: u64 = i16::MAX as u64;

/// NIfTI-1 `datatype` codes that map onto a Tensogram dtype.
const DTYPES: [(i16, Dtype); 12] = [
    (2, Dtype::Uint8),
    (4, Dtype::Int16),
    (8, Dtype::Int32),
    (16, Dtype::Float32),
    (32, Dtype::Complex64),
    (64, Dtype::Float64),
    (256, Dtype::Int8),
    (512, Dtype::Uint16),
    (768, Dtype::Uint32),
    (1024, Dtype::Int64),
    (1280, Dtype::Uint64),
    (1792, Dtype::Complex128),
];

/// The Tensogram dtype of a NIfTI `datatype` code.
pub fn dtype_of_code(code: i16) -> Option<Dtype> {
    DTYPES.iter().find(|(c, _)| *c == code).map(|(_, d)| *d)
}

/// The NIfTI `datatype` code of a Tensogram dtype.
pub fn code_of_dtype(dtype: Dtype) -> Option<i16> {
    DTYPES.iter().find(|(_, d)| *d == dtype).map(|(c, _)| *c)
}

/// Name of a NIfTI datatype code that has no Tensogram equivalent.
pub fn unsupported_code_name(code: i16) -> &'static str {
    match code {
        1 => "binary (1 bit)",
        128 => "RGB24",
        1536 => "float128",
        2048 => "complex256",
        2304 => "RGBA32",
        _ => "unknown",
    }
}

/// Names of the axes of a NIfTI volume of rank `n`, in NIfTI order
/// (`dim[1]` first).
pub const AXIS_NAMES: [&str; 7] = ["i", "j", "k", "t", "u", "v", "w"];

pub(super) fn space_unit_name(code: u8) -> &'static str {
    match code & 0x07 {
        0 => "unknown",
        1 => "m",
        2 => "mm",
        3 => "um",
        _ => "invalid",
    }
}

pub(super) fn time_unit_name(code: u8) -> &'static str {
    match code & 0x38 {
        0 => "unknown",
        8 => "s",
        16 => "ms",
        24 => "us",
        32 => "Hz",
        40 => "ppm",
        48 => "rad/s",
        _ => "invalid",
    }
}

pub(super) fn xform_name(code: i16) -> &'static str {
    match code {
        0 => "unknown",
        1 => "scanner_anat",
        2 => "aligned_anat",
        3 => "talairach",
        4 => "mni_152",
        5 => "template_other",
        _ => "invalid",
    }
}

/// NUL-terminated bytes as text (lossy for non-UTF-8).
pub(super) fn c_text(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

fn floats(v: &[f32]) -> Value {
    Value::Array(v.iter().map(|&x| f32_value(x)).collect())
}

pub(super) fn affine_value(rows: &[[f64; 4]; 4]) -> Value {
    Value::Array(
        rows.iter()
            .map(|r| Value::Array(r.iter().map(|&x| f64_value(x)).collect()))
            .collect(),
    )
}

/// The sform affine: the three stored rows and `[0, 0, 0, 1]`.
pub fn sform_affine(h: &NiftiHeader) -> [[f64; 4]; 4] {
    let r = |s: [f32; 4]| s.map(f64::from);
    [r(h.srow_x), r(h.srow_y), r(h.srow_z), [0.0, 0.0, 0.0, 1.0]]
}

/// The qform affine built from the quaternion, offsets, pixdim and qfac
/// (NIfTI-1 method 2).
pub fn qform_affine(h: &NiftiHeader) -> [[f64; 4]; 4] {
    let w = |v: [f32; 3]| v.map(f64::from);
    quaternion_affine(
        w([h.quatern_b, h.quatern_c, h.quatern_d]),
        w([h.quatern_x, h.quatern_y, h.quatern_z]),
        [
            h.pixdim[0] as f64,
            h.pixdim[1] as f64,
            h.pixdim[2] as f64,
            h.pixdim[3] as f64,
        ],
    )
}

/// Below this, `1 - (b² + c² + d²)` is rounding noise: nifti_clib's
/// `nifti_quatern_to_mat44` then takes `a = 0` (a 180° rotation) and
/// renormalises `(b, c, d)`.
const QUATERNION_A_EPSILON: f64 = 1e-7;

/// The qform affine of quaternion `(b, c, d)`, offsets and
/// `pixdim[0..4]` (qfac first), as NIfTI-1 and NIfTI-2 define it, with
/// nifti_clib's rule for a near-zero `a` (spec/convert.md "NIfTI").
pub fn quaternion_affine(quatern: [f64; 3], offset: [f64; 3], pixdim: [f64; 4]) -> [[f64; 4]; 4] {
    let [mut b, mut c, mut d] = quatern;
    let s = b * b + c * c + d * d;
    let a = if 1.0 - s < QUATERNION_A_EPSILON {
        let n = s.sqrt();
        b /= n;
        c /= n;
        d /= n;
        0.0
    } else {
        (1.0 - s).sqrt()
    };
    let rot = [
        [
            a * a + b * b - c * c - d * d,
            2.0 * (b * c - a * d),
            2.0 * (b * d + a * c),
        ],
        [
            2.0 * (b * c + a * d),
            a * a + c * c - b * b - d * d,
            2.0 * (c * d - a * b),
        ],
        [
            2.0 * (b * d - a * c),
            2.0 * (c * d + a * b),
            a * a + d * d - c * c - b * b,
        ],
    ];
    let qfac = if pixdim[0] < 0.0 { -1.0 } else { 1.0 };
    let scale = [pixdim[1], pixdim[2], pixdim[3] * qfac];
    let mut m = [[0.0; 4]; 4];
    for i in 0..3 {
        for j in 0..3 {
            m[i][j] = rot[i][j] * scale[j];
        }
        m[i][3] = offset[i];
    }
    m[3][3] = 1.0;
    m
}

/// The header as the `nifti` metadata map.
pub fn header_to_meta(h: &NiftiHeader, dims: &[u64]) -> Value {
    let mut m = Map::new();
    m.insert("version".into(), 1u64.into());
    m.insert("magic".into(), c_text(&h.magic).into());
    m.insert(
        "byte_order".into(),
        match h.endianness {
            Endianness::Big => "big",
            Endianness::Little => "little",
        }
        .into(),
    );
    m.insert("datatype".into(), i64::from(h.datatype).into());
    m.insert("bitpix".into(), i64::from(h.bitpix).into());
    m.insert(
        "dim".into(),
        Value::Array(dims.iter().map(|&d| d.into()).collect()),
    );
    m.insert("dim_info".into(), u64::from(h.dim_info).into());
    m.insert("pixdim".into(), floats(&h.pixdim));
    m.insert("xyzt_units".into(), u64::from(h.xyzt_units).into());
    m.insert("space_unit".into(), space_unit_name(h.xyzt_units).into());
    m.insert("time_unit".into(), time_unit_name(h.xyzt_units).into());
    m.insert("scl_slope".into(), f32_value(h.scl_slope));
    m.insert("scl_inter".into(), f32_value(h.scl_inter));
    let applies = nifti_check::scaling(h.scl_slope.into(), h.scl_inter.into()).is_some();
    m.insert("scl_applies".into(), Value::Bool(applies));
    m.insert("cal_min".into(), f32_value(h.cal_min));
    m.insert("cal_max".into(), f32_value(h.cal_max));
    m.insert("toffset".into(), f32_value(h.toffset));
    m.insert("descrip".into(), c_text(&h.descrip).into());
    m.insert("aux_file".into(), c_text(&h.aux_file).into());

    let mut intent = Map::new();
    intent.insert("code".into(), i64::from(h.intent_code).into());
    intent.insert("name".into(), c_text(&h.intent_name).into());
    intent.insert(
        "params".into(),
        floats(&[h.intent_p1, h.intent_p2, h.intent_p3]),
    );
    m.insert("intent".into(), Value::from(intent));

    let mut slice = Map::new();
    slice.insert("code".into(), u64::from(h.slice_code).into());
    slice.insert("start".into(), i64::from(h.slice_start).into());
    slice.insert("end".into(), i64::from(h.slice_end).into());
    slice.insert("duration".into(), f32_value(h.slice_duration));
    m.insert("slice".into(), Value::from(slice));

    let mut q = Map::new();
    q.insert("code".into(), i64::from(h.qform_code).into());
    q.insert("code_name".into(), xform_name(h.qform_code).into());
    q.insert(
        "quatern".into(),
        floats(&[h.quatern_b, h.quatern_c, h.quatern_d]),
    );
    q.insert(
        "offset".into(),
        floats(&[h.quatern_x, h.quatern_y, h.quatern_z]),
    );
    q.insert("affine".into(), affine_value(&qform_affine(h)));
    m.insert("qform".into(), Value::from(q));

    let mut s = Map::new();
    s.insert("code".into(), i64::from(h.sform_code).into());
    s.insert("code_name".into(), xform_name(h.sform_code).into());
    s.insert("affine".into(), affine_value(&sform_affine(h)));
    m.insert("sform".into(), Value::from(s));
    Value::from(m)
}

/// Reads a metadata field, naming it in the error.
pub(super) struct MetaReader<'a> {
    pub(super) map: Option<&'a Value>,
}

impl<'a> MetaReader<'a> {
    pub(super) fn get(&self, path: &[&str]) -> Option<&'a Value> {
        let mut v = self.map?;
        for k in path {
            v = v.get(k)?;
        }
        Some(v)
    }

    pub(super) fn f32(&self, path: &[&str], default: f32) -> MedicalResult<f32> {
        self.number(path, default, to_f32)
    }

    pub(super) fn floats<const N: usize>(
        &self,
        path: &[&str],
        default: [f32; N],
    ) -> MedicalResult<[f32; N]> {
        self.numbers(path, default, to_f32)
    }

    pub(super) fn f64(&self, path: &[&str], default: f64) -> MedicalResult<f64> {
        self.number(path, default, to_f64)
    }

    pub(super) fn floats64<const N: usize>(
        &self,
        path: &[&str],
        default: [f64; N],
    ) -> MedicalResult<[f64; N]> {
        self.numbers(path, default, to_f64)
    }

    /// The number at `path` read by `conv`, or `default` when absent.
    fn number<T>(
        &self,
        path: &[&str],
        default: T,
        conv: fn(&Value) -> Option<T>,
    ) -> MedicalResult<T> {
        match self.get(path) {
            None => Ok(default),
            Some(v) => conv(v).ok_or_else(|| bad_field(path, "a number")),
        }
    }

    /// The array of exactly `N` numbers at `path`, each read by `conv`, or
    /// `default` when absent.
    fn numbers<T: Copy + Default, const N: usize>(
        &self,
        path: &[&str],
        default: [T; N],
        conv: fn(&Value) -> Option<T>,
    ) -> MedicalResult<[T; N]> {
        let Some(v) = self.get(path) else {
            return Ok(default);
        };
        let bad = || bad_field(path, &format!("an array of {N} numbers"));
        let arr = v.as_array().filter(|a| a.len() == N).ok_or_else(bad)?;
        let mut out = [T::default(); N];
        for (o, x) in out.iter_mut().zip(arr) {
            *o = conv(x).ok_or_else(bad)?;
        }
        Ok(out)
    }

    pub(super) fn int<T: TryFrom<i64>>(&self, path: &[&str], default: T) -> MedicalResult<T> {
        match self.get(path) {
            None => Ok(default),
            Some(v) => v
                .as_i64()
                .and_then(|x| T::try_from(x).ok())
                .ok_or_else(|| bad_field(path, "an integer in range")),
        }
    }

    pub(super) fn text<const N: usize>(&self, path: &[&str]) -> MedicalResult<[u8; N]> {
        let mut out = [0u8; N];
        if let Some(v) = self.get(path) {
            let s = v.as_text().ok_or_else(|| bad_field(path, "text"))?;
            if s.len() > N {
                return Err(bad_field(path, &format!("text of at most {N} bytes")));
            }
            out[..s.len()].copy_from_slice(s.as_bytes());
        }
        Ok(out)
    }
}

pub(super) fn bad_field(path: &[&str], what: &str) -> MedicalError {
    MedicalError::invalid(format!("metadata nifti.{} is not {what}", path.join(".")))
}

/// The three stored sform rows from `nifti.sform.affine` (identity when
/// absent).
pub(super) fn sform_rows(r: &MetaReader) -> MedicalResult<[[f64; 4]; 3]> {
    let Some(v) = r.get(&["sform", "affine"]) else {
        return Ok([
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
        ]);
    };
    let bad = || bad_field(&["sform", "affine"], "a 4x4 array");
    let rows = v.as_array().filter(|a| a.len() == 4).ok_or_else(bad)?;
    let mut out = [[0f64; 4]; 3];
    for (o, row) in out.iter_mut().zip(rows) {
        let row = row.as_array().filter(|a| a.len() == 4).ok_or_else(bad)?;
        for (x, v) in o.iter_mut().zip(row) {
            *x = to_f64(v).ok_or_else(bad)?;
        }
    }
    Ok(out)
}

/// Builds a header for a volume of `dtype` with NIfTI-order `dims`, stored
/// in `byte_order`, taking every other field from the `nifti` metadata map
/// when present (defaults: unit pixdim, no transforms).
pub fn header_from_meta(
    meta: Option<&Value>,
    dtype: Dtype,
    dims: &[u64],
    byte_order: ByteOrder,
) -> MedicalResult<NiftiHeader> {
    let code = code_of_dtype(dtype).ok_or_else(|| {
        MedicalError::unsupported(format!("dtype {} has no NIfTI-1 equivalent", dtype.name()))
    })?;
    if dims.is_empty() || dims.len() > 7 {
        return Err(MedicalError::invalid(format!(
            "NIfTI-1 holds 1 to 7 dimensions, not {}",
            dims.len()
        )));
    }
    if let Some(&d) = dims.iter().find(|&&d| d == 0 || d > MAX_DIM) {
        return Err(MedicalError::invalid(format!(
            "dimension extent {d} is outside NIfTI-1's 1..={MAX_DIM}"
        )));
    }
    let r = MetaReader { map: meta };
    if let Some(v) = r.get(&["dim"]) {
        let recorded: Option<Vec<u64>> = v
            .as_array()
            .map(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<_>>>())
            .unwrap_or(None);
        if recorded.as_deref() != Some(dims) {
            return Err(MedicalError::invalid(format!(
                "metadata nifti.dim {} disagrees with the object's shape (NIfTI order {dims:?})",
                v.to_json()
            )));
        }
    }
    if let Some(c) = r.get(&["datatype"]) {
        if c.as_i64() != Some(i64::from(code)) {
            return Err(MedicalError::invalid(format!(
                "metadata nifti.datatype {} disagrees with the object's dtype {} (code {code})",
                c.to_json(),
                dtype.name()
            )));
        }
    }
    let mut h = NiftiHeader::default();
    h.sizeof_hdr = HEADER_LEN as i32;
    h.dim = [0; 8];
    h.dim[0] = dims.len() as u16;
    for (slot, &d) in h.dim[1..].iter_mut().zip(dims) {
        *slot = d as u16;
    }
    for slot in h.dim[dims.len() + 1..].iter_mut() {
        *slot = 1;
    }
    h.datatype = code;
    h.bitpix = (dtype.width() * 8) as i16;
    h.dim_info = r.int(&["dim_info"], 0u8)?;
    h.pixdim = r.floats(&["pixdim"], [1.0; 8])?;
    h.vox_offset = DATA_OFFSET as f32;
    h.xyzt_units = r.int(&["xyzt_units"], 0u8)?;
    h.scl_slope = r.f32(&["scl_slope"], 0.0)?;
    h.scl_inter = r.f32(&["scl_inter"], 0.0)?;
    h.cal_min = r.f32(&["cal_min"], 0.0)?;
    h.cal_max = r.f32(&["cal_max"], 0.0)?;
    h.toffset = r.f32(&["toffset"], 0.0)?;
    h.descrip = r.text::<80>(&["descrip"])?.to_vec();
    h.aux_file = r.text::<24>(&["aux_file"])?;
    h.intent_code = r.int(&["intent", "code"], 0i16)?;
    h.intent_name = r.text::<16>(&["intent", "name"])?;
    [h.intent_p1, h.intent_p2, h.intent_p3] = r.floats(&["intent", "params"], [0.0; 3])?;
    h.slice_code = r.int(&["slice", "code"], 0u8)?;
    h.slice_start = r.int(&["slice", "start"], 0i16)?;
    h.slice_end = r.int(&["slice", "end"], 0i16)?;
    h.slice_duration = r.f32(&["slice", "duration"], 0.0)?;
    h.qform_code = r.int(&["qform", "code"], 0i16)?;
    [h.quatern_b, h.quatern_c, h.quatern_d] = r.floats(&["qform", "quatern"], [0.0; 3])?;
    [h.quatern_x, h.quatern_y, h.quatern_z] = r.floats(&["qform", "offset"], [0.0; 3])?;
    h.sform_code = r.int(&["sform", "code"], 0i16)?;
    let rows = sform_rows(&r)?.map(|row| row.map(|x| x as f32));
    [h.srow_x, h.srow_y, h.srow_z] = rows;
    h.magic = *b"n+1\0";
    h.endianness = match byte_order {
        ByteOrder::Big => Endianness::Big,
        ByteOrder::Little => Endianness::Little,
    };
    Ok(h)
}

/// Serialises a single-file (`n+1`) header in its `endianness`, followed by
/// the extension flag and `extensions`: everything before the voxel data,
/// whose offset is written as `vox_offset`.
pub fn write_header(h: &NiftiHeader, extensions: &[Extension]) -> MedicalResult<Vec<u8>> {
    let big = h.endianness == Endianness::Big;
    let ext = nifti_ext::write(extensions, big)?;
    let vox_offset = (HEADER_LEN + ext.len()) as f32;
    if vox_offset as usize != HEADER_LEN + ext.len() {
        return Err(MedicalError::invalid(format!(
            "header extensions of {} bytes put the voxel data at an offset NIfTI-1's float \
             vox_offset cannot hold exactly (write NIfTI-2)",
            ext.len()
        )));
    }
    let mut out = Vec::with_capacity(HEADER_LEN + ext.len());
    macro_rules! put {
        ($v:expr) => {{
            let v = $v;
            if big {
                out.extend_from_slice(&v.to_be_bytes());
            } else {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }};
    }
    put!(HEADER_LEN as i32);
    out.extend_from_slice(&h.data_type);
    out.extend_from_slice(&h.db_name);
    put!(h.extents);
    put!(h.session_error);
    out.push(h.regular);
    out.push(h.dim_info);
    for d in h.dim {
        put!(d);
    }
    put!(h.intent_p1);
    put!(h.intent_p2);
    put!(h.intent_p3);
    put!(h.intent_code);
    put!(h.datatype);
    put!(h.bitpix);
    put!(h.slice_start);
    for p in h.pixdim {
        put!(p);
    }
    put!(vox_offset);
    put!(h.scl_slope);
    put!(h.scl_inter);
    put!(h.slice_end);
    out.push(h.slice_code);
    out.push(h.xyzt_units);
    put!(h.cal_max);
    put!(h.cal_min);
    put!(h.slice_duration);
    put!(h.toffset);
    put!(h.glmax);
    put!(h.glmin);
    let mut descrip = [0u8; 80];
    let n = h.descrip.len().min(80);
    descrip[..n].copy_from_slice(&h.descrip[..n]);
    out.extend_from_slice(&descrip);
    out.extend_from_slice(&h.aux_file);
    put!(h.qform_code);
    put!(h.sform_code);
    for v in [
        h.quatern_b,
        h.quatern_c,
        h.quatern_d,
        h.quatern_x,
        h.quatern_y,
        h.quatern_z,
    ] {
        put!(v);
    }
    for row in [h.srow_x, h.srow_y, h.srow_z] {
        for v in row {
            put!(v);
        }
    }
    out.extend_from_slice(&h.intent_name);
    out.extend_from_slice(b"n+1\0");
    debug_assert_eq!(out.len(), HEADER_LEN);
    out.extend_from_slice(&ext);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_quaternion_gives_pixdim_diagonal() {
        let mut h = NiftiHeader::default();
        h.pixdim = [-1.0, 2.0, 3.0, 4.0, 1.0, 1.0, 1.0, 1.0];
        h.quatern_x = 10.0;
        let a = qform_affine(&h);
        assert_eq!(a[0], [2.0, 0.0, 0.0, 10.0]);
        assert_eq!(a[1], [0.0, 3.0, 0.0, 0.0]);
        assert_eq!(a[2], [0.0, 0.0, -4.0, 0.0]);
        assert_eq!(a[3], [0.0, 0.0, 0.0, 1.0]);
    }

    #[test]
    fn a_near_zero_is_a_half_turn_as_in_nifti_clib() {
        // example4d.nii.gz's quaternion: 1 - (b² + c² + d²) is 1.005e-9.
        let q = [-1.945_106_8e-26f32, -0.996_708_5, -0.081_068_74].map(f64::from);
        let m = quaternion_affine(q, [0.0; 3], [-1.0, 2.0, 2.0, 2.199_999_094]);
        // nibabel's get_qform() for that file.
        let want = [
            [-2.0, 0.0, 0.0],
            [0.0, 1.973_711_438, -0.355_528_225],
            [0.0, 0.323_207_610, 2.171_081_688],
        ];
        for (row, w) in m.iter().zip(want) {
            for (x, y) in row.iter().zip(w) {
                assert!((x - y).abs() < 1e-8, "{m:?}");
            }
        }
        // Far from the threshold, a comes from the norm as usual.
        let m = quaternion_affine([0.0, 0.0, 0.6], [0.0; 3], [1.0; 4]);
        assert!((m[0][0] - 0.28).abs() < 1e-12 && (m[1][0] - 0.96).abs() < 1e-12);
    }

    #[test]
    fn metadata_numbers_are_read_with_their_defaults_and_bad_ones_named() {
        let mut m = Map::new();
        m.insert(
            "pixdim".into(),
            Value::Array(vec![1.5.into(), "NaN".into()]),
        );
        m.insert("cal_max".into(), Value::from("Infinity"));
        m.insert("toffset".into(), Value::from("late"));
        m.insert("short".into(), Value::Array(vec![1.0.into()]));
        m.insert("words".into(), Value::Array(vec!["a".into(), 2.0.into()]));
        let map = Value::from(m);
        let r = MetaReader { map: Some(&map) };
        assert_eq!(r.f32(&["absent"], 7.0).unwrap(), 7.0);
        assert_eq!(r.f64(&["cal_max"], 0.0).unwrap(), f64::INFINITY);
        assert_eq!(r.floats::<2>(&["absent"], [1.0, 2.0]).unwrap(), [1.0, 2.0]);
        let [x, nan] = r.floats64::<2>(&["pixdim"], [0.0; 2]).unwrap();
        assert!(x == 1.5 && nan.is_nan());
        let e = r.f32(&["toffset"], 0.0).unwrap_err().to_string();
        assert!(e.contains("nifti.toffset is not a number"), "{e}");
        for key in ["short", "words", "cal_max"] {
            let e = r.floats::<2>(&[key], [0.0; 2]).unwrap_err().to_string();
            assert!(
                e.contains(&format!("nifti.{key} is not an array of 2 numbers")),
                "{e}"
            );
            let e = r.floats64::<2>(&[key], [0.0; 2]).unwrap_err().to_string();
            assert!(
                e.contains(&format!("nifti.{key} is not an array of 2 numbers")),
                "{e}"
            );
        }
    }

    #[test]
    fn header_written_is_read_back_by_the_nifti_crate() {
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let mut h = header_from_meta(None, Dtype::Int16, &[3, 4, 5], order).unwrap();
            h.srow_x = [0.5, 0.0, 0.0, -7.25];
            h.qform_code = 1;
            h.quatern_c = 0.5;
            h.set_description_str("hello").unwrap();
            let bytes = write_header(&h, &[]).unwrap();
            assert_eq!(bytes.len(), DATA_OFFSET);
            let back = NiftiHeader::from_reader(&bytes[..]).unwrap();
            assert_eq!(back.dim, [3, 3, 4, 5, 1, 1, 1, 1]);
            assert_eq!(back.datatype, 4);
            assert_eq!(back.bitpix, 16);
            assert_eq!(back.srow_x, h.srow_x);
            assert_eq!(back.quatern_c, 0.5);
            assert_eq!(back.qform_code, 1);
            assert_eq!(back.vox_offset, DATA_OFFSET as f32);
            assert_eq!(c_text(&back.descrip), "hello");
            assert_eq!(
                back.endianness,
                if order == ByteOrder::Big {
                    Endianness::Big
                } else {
                    Endianness::Little
                }
            );
        }
    }

    #[test]
    fn metadata_round_trips_every_field() {
        let mut h = header_from_meta(None, Dtype::Float32, &[2, 3], ByteOrder::Little).unwrap();
        h.pixdim = [1.0, 0.75, 1.25, 1.0, 1.0, 1.0, 1.0, 1.0];
        h.xyzt_units = 2 | 8;
        h.scl_slope = 2.5;
        h.scl_inter = -3.0;
        h.intent_code = 1002;
        h.intent_name = *b"labels\0\0\0\0\0\0\0\0\0\0";
        h.intent_p2 = 0.125;
        h.sform_code = 2;
        h.srow_y = [0.0, 1.25, 0.0, 4.5];
        h.qform_code = 1;
        h.quatern_b = 0.25;
        h.quatern_z = -1.5;
        h.slice_code = 3;
        h.slice_duration = 0.05;
        h.cal_max = 99.0;
        let meta = header_to_meta(&h, &[2, 3]);
        let back =
            header_from_meta(Some(&meta), Dtype::Float32, &[2, 3], ByteOrder::Little).unwrap();
        assert_eq!(
            write_header(&back, &[]).unwrap(),
            write_header(&h, &[]).unwrap()
        );
        assert_eq!(meta.get("space_unit").and_then(Value::as_text), Some("mm"));
        assert_eq!(meta.get("time_unit").and_then(Value::as_text), Some("s"));
    }

    #[test]
    fn metadata_disagreeing_with_the_object_is_refused() {
        let h = header_from_meta(None, Dtype::Float32, &[2, 3], ByteOrder::Little).unwrap();
        let meta = header_to_meta(&h, &[2, 3]);
        let e = header_from_meta(Some(&meta), Dtype::Float32, &[3, 2], ByteOrder::Little)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nifti.dim"), "{e}");
        let e = header_from_meta(Some(&meta), Dtype::Int32, &[2, 3], ByteOrder::Little)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nifti.datatype"), "{e}");
    }
}
