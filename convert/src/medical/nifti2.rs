//! The NIfTI-2 header (540 bytes, magic `n+2`): parsed, written, and kept
//! as the same `base[i].nifti` metadata as NIfTI-1 with `version: 2`.
//!
//! NIfTI-2 widens NIfTI-1's fields (64-bit dims and offsets, f64 floats,
//! i32 codes) and reorders them; the `nifti` crate reads NIfTI-1 only, so
//! this module reads the fixed layout itself, in the byte order that makes
//! `sizeof_hdr` 540. Nothing here trusts a field: dims and `vox_offset`
//! are checked by the caller ([`nifti_check::check`], shared with NIfTI-1).

use tgm::cbor::Value;
use tgm::{ByteOrder, Dtype, Map};

use super::nifti_check::{self, LayoutFields};
use super::nifti_ext::{self, Extension};
use super::nifti_float::f64_value;
use super::nifti_header::{
    affine_value, bad_field, c_text, code_of_dtype, quaternion_affine, sform_rows, space_unit_name,
    time_unit_name, xform_name, MetaReader,
};
use super::{MedicalError, MedicalResult};

/// Size of a NIfTI-2 header.
pub const HEADER_LEN2: usize = 540;
/// Header plus the 4-byte extension flag: where single-file voxel data starts.
pub const DATA_OFFSET2: usize = HEADER_LEN2 + 4;
/// The single-file magic (`n+2\0` and the line-ending check bytes).
pub const MAGIC2: [u8; 8] = *b"n+2\0\r\n\x1a\n";

/// Every field of a NIfTI-2 header, at its own width.
#[derive(Clone, Debug, PartialEq)]
pub struct Nifti2Header {
    /// Byte order of the header and the voxels.
    pub byte_order: ByteOrder,
    /// The 8 magic bytes.
    pub magic: [u8; 8],
    /// NIfTI datatype code.
    pub datatype: i16,
    /// Bits per voxel.
    pub bitpix: i16,
    /// `dim[0]` is the rank, `dim[1..=rank]` the extents.
    pub dim: [i64; 8],
    /// Intent parameters.
    pub intent_p: [f64; 3],
    /// Voxel sizes; `pixdim[0]` is qfac.
    pub pixdim: [f64; 8],
    /// Offset of the voxel data.
    pub vox_offset: i64,
    /// Recorded scaling (never applied).
    pub scl_slope: f64,
    /// Recorded scaling offset.
    pub scl_inter: f64,
    /// Display range maximum.
    pub cal_max: f64,
    /// Display range minimum.
    pub cal_min: f64,
    /// Time to acquire one slice.
    pub slice_duration: f64,
    /// Time axis shift.
    pub toffset: f64,
    /// First slice index.
    pub slice_start: i64,
    /// Last slice index.
    pub slice_end: i64,
    /// Description (80 bytes).
    pub descrip: [u8; 80],
    /// Auxiliary file name (24 bytes).
    pub aux_file: [u8; 24],
    /// qform code.
    pub qform_code: i32,
    /// sform code.
    pub sform_code: i32,
    /// Quaternion b, c, d.
    pub quatern: [f64; 3],
    /// Quaternion offsets x, y, z.
    pub qoffset: [f64; 3],
    /// sform rows x, y, z.
    pub srow: [[f64; 4]; 3],
    /// Slice timing order.
    pub slice_code: i32,
    /// Space and time units.
    pub xyzt_units: i32,
    /// Intent code.
    pub intent_code: i32,
    /// Intent name (16 bytes).
    pub intent_name: [u8; 16],
    /// Frequency/phase/slice dimensions.
    pub dim_info: u8,
}

/// Reads fixed-width fields in one byte order.
struct Fields<'a> {
    b: &'a [u8; HEADER_LEN2],
    big: bool,
}

impl Fields<'_> {
    fn bytes<const N: usize>(&self, at: usize) -> [u8; N] {
        self.b[at..at + N].try_into().expect("inside the header")
    }
    fn i16(&self, at: usize) -> i16 {
        let v = self.bytes::<2>(at);
        if self.big {
            i16::from_be_bytes(v)
        } else {
            i16::from_le_bytes(v)
        }
    }
    fn i32(&self, at: usize) -> i32 {
        let v = self.bytes::<4>(at);
        if self.big {
            i32::from_be_bytes(v)
        } else {
            i32::from_le_bytes(v)
        }
    }
    fn i64(&self, at: usize) -> i64 {
        let v = self.bytes::<8>(at);
        if self.big {
            i64::from_be_bytes(v)
        } else {
            i64::from_le_bytes(v)
        }
    }
    fn f64(&self, at: usize) -> f64 {
        f64::from_bits(self.i64(at) as u64)
    }
    fn f64s<const N: usize>(&self, at: usize) -> [f64; N] {
        std::array::from_fn(|i| self.f64(at + 8 * i))
    }
}

/// Whether the first four bytes are a NIfTI-2 `sizeof_hdr` in either
/// byte order.
pub fn is_nifti2(lead: [u8; 4]) -> bool {
    i32::from_le_bytes(lead) == HEADER_LEN2 as i32 || i32::from_be_bytes(lead) == HEADER_LEN2 as i32
}

/// Parses a NIfTI-2 header (the byte order is the one whose `sizeof_hdr`
/// reads 540).
pub fn parse(b: &[u8; HEADER_LEN2]) -> Result<Nifti2Header, String> {
    let lead: [u8; 4] = b[..4].try_into().expect("4 bytes");
    let big = if i32::from_le_bytes(lead) == HEADER_LEN2 as i32 {
        false
    } else if i32::from_be_bytes(lead) == HEADER_LEN2 as i32 {
        true
    } else {
        return Err(format!(
            "not a NIfTI-2 header: sizeof_hdr is {}",
            i32::from_le_bytes(lead)
        ));
    };
    let f = Fields { b, big };
    let magic = f.bytes::<8>(4);
    if magic[..4] != MAGIC2[..4] {
        return Err(if magic.starts_with(b"ni2\0") {
            "header-only NIfTI-2 (magic \"ni2\", data in a separate .img) is not supported; \
             convert it to a single .nii file first"
                .to_string()
        } else {
            format!("NIfTI-2 magic is {:?}, not \"n+2\"", c_text(&magic[..4]))
        });
    }
    Ok(Nifti2Header {
        byte_order: if big {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        },
        magic,
        datatype: f.i16(12),
        bitpix: f.i16(14),
        dim: std::array::from_fn(|i| f.i64(16 + 8 * i)),
        intent_p: f.f64s(80),
        pixdim: f.f64s(104),
        vox_offset: f.i64(168),
        scl_slope: f.f64(176),
        scl_inter: f.f64(184),
        cal_max: f.f64(192),
        cal_min: f.f64(200),
        slice_duration: f.f64(208),
        toffset: f.f64(216),
        slice_start: f.i64(224),
        slice_end: f.i64(232),
        descrip: f.bytes(240),
        aux_file: f.bytes(320),
        qform_code: f.i32(344),
        sform_code: f.i32(348),
        quatern: f.f64s(352),
        qoffset: f.f64s(376),
        srow: [f.f64s(400), f.f64s(432), f.f64s(464)],
        slice_code: f.i32(496),
        xyzt_units: f.i32(500),
        intent_code: f.i32(504),
        intent_name: f.bytes(508),
        dim_info: b[524],
    })
}

/// Serialises a single-file header followed by the extension flag and
/// `extensions`: everything before the voxel data, whose offset is written
/// as `vox_offset`.
pub fn write(h: &Nifti2Header, extensions: &[Extension]) -> MedicalResult<Vec<u8>> {
    let big = h.byte_order == ByteOrder::Big;
    let ext = nifti_ext::write(extensions, big)?;
    let mut out = Vec::with_capacity(HEADER_LEN2 + ext.len());
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
    put!(HEADER_LEN2 as i32);
    out.extend_from_slice(&MAGIC2);
    put!(h.datatype);
    put!(h.bitpix);
    for d in h.dim {
        put!(d);
    }
    for v in h.intent_p {
        put!(v);
    }
    for v in h.pixdim {
        put!(v);
    }
    put!((HEADER_LEN2 + ext.len()) as i64);
    for v in [
        h.scl_slope,
        h.scl_inter,
        h.cal_max,
        h.cal_min,
        h.slice_duration,
        h.toffset,
    ] {
        put!(v);
    }
    put!(h.slice_start);
    put!(h.slice_end);
    out.extend_from_slice(&h.descrip);
    out.extend_from_slice(&h.aux_file);
    put!(h.qform_code);
    put!(h.sform_code);
    for v in h.quatern.iter().chain(&h.qoffset) {
        put!(*v);
    }
    for row in h.srow {
        for v in row {
            put!(v);
        }
    }
    put!(h.slice_code);
    put!(h.xyzt_units);
    put!(h.intent_code);
    out.extend_from_slice(&h.intent_name);
    out.push(h.dim_info);
    out.extend_from_slice(&[0; 15]);
    debug_assert_eq!(out.len(), HEADER_LEN2);
    out.extend_from_slice(&ext);
    Ok(out)
}

/// The layout fields of a NIfTI-2 header, for [`nifti_check::check`].
pub fn check_fields(h: &Nifti2Header) -> LayoutFields {
    LayoutFields {
        version: 2,
        dim: h.dim,
        datatype: h.datatype,
        bitpix: h.bitpix,
        pixdim: h.pixdim,
        vox_offset: h.vox_offset as f64,
    }
}

fn floats(v: &[f64]) -> Value {
    Value::Array(v.iter().map(|&x| f64_value(x)).collect())
}

/// The header as the `nifti` metadata map: NIfTI-1's keys, `version: 2`.
pub fn to_meta(h: &Nifti2Header, dims: &[u64]) -> Value {
    let mut m = Map::new();
    m.insert("version".into(), 2u64.into());
    m.insert("magic".into(), c_text(&h.magic[..4]).into());
    m.insert("byte_order".into(), h.byte_order.name().into());
    m.insert("datatype".into(), i64::from(h.datatype).into());
    m.insert("bitpix".into(), i64::from(h.bitpix).into());
    m.insert(
        "dim".into(),
        Value::Array(dims.iter().map(|&d| d.into()).collect()),
    );
    m.insert("dim_info".into(), u64::from(h.dim_info).into());
    m.insert("pixdim".into(), floats(&h.pixdim));
    m.insert("xyzt_units".into(), i64::from(h.xyzt_units).into());
    // Units live in the low byte, as in NIfTI-1.
    let units = (h.xyzt_units & 0xff) as u8;
    m.insert("space_unit".into(), space_unit_name(units).into());
    m.insert("time_unit".into(), time_unit_name(units).into());
    m.insert("scl_slope".into(), f64_value(h.scl_slope));
    m.insert("scl_inter".into(), f64_value(h.scl_inter));
    let applies = nifti_check::scaling(h.scl_slope, h.scl_inter).is_some();
    m.insert("scl_applies".into(), Value::Bool(applies));
    m.insert("cal_min".into(), f64_value(h.cal_min));
    m.insert("cal_max".into(), f64_value(h.cal_max));
    m.insert("toffset".into(), f64_value(h.toffset));
    m.insert("descrip".into(), c_text(&h.descrip).into());
    m.insert("aux_file".into(), c_text(&h.aux_file).into());

    let mut intent = Map::new();
    intent.insert("code".into(), i64::from(h.intent_code).into());
    intent.insert("name".into(), c_text(&h.intent_name).into());
    intent.insert("params".into(), floats(&h.intent_p));
    m.insert("intent".into(), Value::from(intent));

    let mut slice = Map::new();
    slice.insert("code".into(), i64::from(h.slice_code).into());
    slice.insert("start".into(), h.slice_start.into());
    slice.insert("end".into(), h.slice_end.into());
    slice.insert("duration".into(), f64_value(h.slice_duration));
    m.insert("slice".into(), Value::from(slice));

    let code_name = |c: i32| i16::try_from(c).map(xform_name).unwrap_or("invalid");
    let mut q = Map::new();
    q.insert("code".into(), i64::from(h.qform_code).into());
    q.insert("code_name".into(), code_name(h.qform_code).into());
    q.insert("quatern".into(), floats(&h.quatern));
    q.insert("offset".into(), floats(&h.qoffset));
    let pix = [h.pixdim[0], h.pixdim[1], h.pixdim[2], h.pixdim[3]];
    q.insert(
        "affine".into(),
        affine_value(&quaternion_affine(h.quatern, h.qoffset, pix)),
    );
    m.insert("qform".into(), Value::from(q));

    let mut s = Map::new();
    s.insert("code".into(), i64::from(h.sform_code).into());
    s.insert("code_name".into(), code_name(h.sform_code).into());
    let [x, y, z] = h.srow;
    s.insert(
        "affine".into(),
        affine_value(&[x, y, z, [0.0, 0.0, 0.0, 1.0]]),
    );
    m.insert("sform".into(), Value::from(s));
    Value::from(m)
}

/// Builds a NIfTI-2 header for a volume of `dtype` with NIfTI-order `dims`
/// stored in `byte_order`, taking the other fields from the `nifti`
/// metadata (NIfTI-1 or NIfTI-2 recorded) when present.
pub fn from_meta(
    meta: Option<&Value>,
    dtype: Dtype,
    dims: &[u64],
    byte_order: ByteOrder,
) -> MedicalResult<Nifti2Header> {
    let code = code_of_dtype(dtype).ok_or_else(|| {
        MedicalError::unsupported(format!("dtype {} has no NIfTI equivalent", dtype.name()))
    })?;
    if dims.is_empty() || dims.len() > 7 {
        return Err(MedicalError::invalid(format!(
            "NIfTI holds 1 to 7 dimensions, not {}",
            dims.len()
        )));
    }
    let mut dim = [1i64; 8];
    dim[0] = dims.len() as i64;
    for (slot, &d) in dim[1..].iter_mut().zip(dims) {
        *slot = i64::try_from(d).ok().filter(|&d| d > 0).ok_or_else(|| {
            MedicalError::invalid(format!("dimension extent {d} is outside NIfTI-2's range"))
        })?;
    }
    let r = MetaReader { map: meta };
    if let Some(v) = r.get(&["dim"]) {
        let recorded: Option<Vec<u64>> = v
            .as_array()
            .and_then(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<_>>>());
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
    let dim_info = r.int(&["dim_info"], 0u8)?;
    if r.get(&["magic"]).is_some_and(|m| m.as_text().is_none()) {
        return Err(bad_field(&["magic"], "text"));
    }
    Ok(Nifti2Header {
        byte_order,
        magic: MAGIC2,
        datatype: code,
        bitpix: (dtype.width() * 8) as i16,
        dim,
        intent_p: r.floats64(&["intent", "params"], [0.0; 3])?,
        pixdim: r.floats64(&["pixdim"], [1.0; 8])?,
        vox_offset: DATA_OFFSET2 as i64,
        scl_slope: r.f64(&["scl_slope"], 0.0)?,
        scl_inter: r.f64(&["scl_inter"], 0.0)?,
        cal_max: r.f64(&["cal_max"], 0.0)?,
        cal_min: r.f64(&["cal_min"], 0.0)?,
        slice_duration: r.f64(&["slice", "duration"], 0.0)?,
        toffset: r.f64(&["toffset"], 0.0)?,
        slice_start: r.int(&["slice", "start"], 0i64)?,
        slice_end: r.int(&["slice", "end"], 0i64)?,
        descrip: r.text::<80>(&["descrip"])?,
        aux_file: r.text::<24>(&["aux_file"])?,
        qform_code: r.int(&["qform", "code"], 0i32)?,
        sform_code: r.int(&["sform", "code"], 0i32)?,
        quatern: r.floats64(&["qform", "quatern"], [0.0; 3])?,
        qoffset: r.floats64(&["qform", "offset"], [0.0; 3])?,
        srow: sform_rows(&r)?,
        slice_code: r.int(&["slice", "code"], 0i32)?,
        xyzt_units: r.int(&["xyzt_units"], 0i32)?,
        intent_code: r.int(&["intent", "code"], 0i32)?,
        intent_name: r.text::<16>(&["intent", "name"])?,
        dim_info,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(order: ByteOrder) -> Nifti2Header {
        let mut h = from_meta(None, Dtype::Int16, &[40000, 3, 2], order).unwrap();
        h.pixdim = [-1.0, 0.1, 0.2, 0.3, 1.0, 1.0, 1.0, 1.0];
        h.srow[1] = [0.0, 0.2, 0.0, -12.345678901234];
        h.sform_code = 4;
        h.qform_code = 1;
        h.quatern = [0.0, 0.0, 1.0];
        h.scl_slope = 1.0 / 3.0;
        h.slice_end = 1 << 40;
        h.xyzt_units = 2 | 16;
        h.descrip[..5].copy_from_slice(b"hello");
        h.intent_name[..2].copy_from_slice(b"ab");
        h.dim_info = 7;
        h
    }

    #[test]
    fn written_headers_parse_back_in_both_byte_orders() {
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let h = sample(order);
            let bytes = write(&h, &[]).unwrap();
            assert_eq!(bytes.len(), DATA_OFFSET2);
            assert!(is_nifti2(bytes[..4].try_into().unwrap()));
            let back = parse(bytes[..HEADER_LEN2].try_into().unwrap()).unwrap();
            assert_eq!(back, h);
        }
        // Field offsets of the standard layout (nifti2.h).
        let b = write(&sample(ByteOrder::Little), &[]).unwrap();
        assert_eq!(&b[4..8], b"n+2\0");
        assert_eq!(i64::from_le_bytes(b[24..32].try_into().unwrap()), 40000);
        assert_eq!(i64::from_le_bytes(b[168..176].try_into().unwrap()), 544);
        assert_eq!(&b[240..245], b"hello");
        assert_eq!(i32::from_le_bytes(b[348..352].try_into().unwrap()), 4);
        assert_eq!(b[524], 7);
    }

    #[test]
    fn metadata_round_trips_every_field_exactly() {
        let h = sample(ByteOrder::Big);
        let meta = to_meta(&h, &[40000, 3, 2]);
        assert_eq!(meta.get("version").and_then(Value::as_u64), Some(2));
        assert_eq!(meta.get("space_unit").and_then(Value::as_text), Some("mm"));
        assert_eq!(meta.get("time_unit").and_then(Value::as_text), Some("ms"));
        let back = from_meta(Some(&meta), Dtype::Int16, &[40000, 3, 2], ByteOrder::Big).unwrap();
        assert_eq!(back, h);
    }

    #[test]
    fn bad_magic_and_sizes_are_refused() {
        let mut b = write(&sample(ByteOrder::Little), &[]).unwrap();
        b[4..8].copy_from_slice(b"ni2\0");
        let e = parse(b[..HEADER_LEN2].try_into().unwrap()).unwrap_err();
        assert!(e.contains("header-only"), "{e}");
        b[0..4].copy_from_slice(&348i32.to_le_bytes());
        assert!(parse(b[..HEADER_LEN2].try_into().unwrap()).is_err());
    }
}
