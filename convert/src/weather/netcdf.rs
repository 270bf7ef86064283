//! NetCDF variables to Tensogram objects and messages.
//!
//! Every variable of every group (coordinate variables included) whose
//! type is numeric, `char`, `string`, enum or opaque becomes one object,
//! a compound one object per member, a vlen a values and a lengths object
//! (`spec/convert.md` "NetCDF
//! user-defined types", [`super::netcdf_udt`]); variables of
//! sub-groups and their dimensions are named by path (`/forecast/t2m`,
//! `spec/convert.md` "NetCDF groups"). Its `base[i]` entry holds
//!
//! * `name`: the variable name (path),
//! * `dim_names`: its dimension names (paths), one per axis — absent for a
//!   `string` variable, whose object is the elements' bytes each followed
//!   by a NUL, and whose `netcdf.dims`/`netcdf.shape` give its dimensions,
//! * `netcdf`: `type` (the CDL type in the file; `char` is stored as
//!   uint8), `attrs` (every attribute, as CBOR), `attr_types` (their CDL
//!   types), `attr_order` (their names in file order), `unpacked: true` when `--cf` applied
//!   `scale_factor`/`add_offset`, `record` (the index along the unlimited
//!   dimension) with `--split-by record`, and for a NetCDF-4 source its
//!   storage: `chunks` (the chunk shape) when chunked, `deflate` (zlib
//!   level) and `shuffle` when deflated,
//! * `cf`: the CF attributes among `attrs` (units, standard_name, long_name,
//!   …; see [`CF_ATTRIBUTES`]).
//!
//! The message's `_extra_` holds `netcdf` (`format`, `dims` as
//! `{name, len, unlimited}`, the global `attrs`, `attr_types` and
//! `attr_order`, and `groups`: every sub-group as `{path, attrs,
//! attr_types, attr_order}`) and, when
//! every object has the same dimension names, `dim_names` (the list the
//! reference's xarray backend reads). Missing values of float variables
//! (`_FillValue`, `missing_value`) become NaN, stored as a NaN mask
//! (`spec/pipeline.md` §3), unless the variable (or record) holds NaN of
//! its own: then its values are kept as they are, fill values included,
//! and `netcdf.nan_kept` is true, so `to-netcdf` writes NaN back as NaN.
//! Integer variables keep their fill values.

use std::fmt;
use std::path::Path;

use netcdf::types::NcVariableType;
use tgm::cbor::Value;
use tgm::{Dtype, Map, ObjectDescriptor};

use super::budget::DecodeBudget;
pub use super::netcdf_encode::NetcdfEncoder;
use super::netcdf_read::{Attrs, NcNum, Source, Var, VarType};
pub use super::netcdf_write::write_netcdf;

/// Why a NetCDF conversion failed. Every message names the file.
#[derive(Debug)]
pub enum NetcdfError {
    /// netCDF-C refused an operation.
    Netcdf(String),
    /// A file could not be read or written.
    Io(String),
    /// Input that cannot be converted.
    Invalid(String),
    /// The Tensogram library refused to encode or decode.
    Tgm(tgm::Error),
    /// The stages asked for cannot encode a variable.
    Stages(tgm::pipeline::StageError),
}

impl fmt::Display for NetcdfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetcdfError::Netcdf(m) | NetcdfError::Io(m) | NetcdfError::Invalid(m) => f.write_str(m),
            NetcdfError::Tgm(e) => write!(f, "{e}"),
            NetcdfError::Stages(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for NetcdfError {}

impl From<tgm::Error> for NetcdfError {
    fn from(e: tgm::Error) -> Self {
        NetcdfError::Tgm(e)
    }
}

/// The CF attributes copied to `base[i].cf` (the reference's list).
pub const CF_ATTRIBUTES: &[&str] = &[
    "standard_name",
    "long_name",
    "units",
    "calendar",
    "cell_methods",
    "coordinates",
    "axis",
    "positive",
    "valid_min",
    "valid_max",
    "valid_range",
    "bounds",
    "grid_mapping",
    "ancillary_variables",
    "flag_values",
    "flag_meanings",
];

/// How variables are grouped into messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SplitBy {
    /// One message per input file.
    #[default]
    File,
    /// One message per variable.
    Variable,
    /// One message per index of the unlimited dimension.
    Record,
}

/// Options of a NetCDF → Tensogram conversion.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConvertOptions {
    /// How variables are grouped into messages.
    pub split_by: SplitBy,
    /// Apply `scale_factor`/`add_offset` (values become float64).
    pub cf: bool,
    /// The decoded-bytes budget of each file; `None` for
    /// [`DecodeBudget::for_input`] of its size (fixed variables repeated in
    /// every record message are charged each time).
    pub max_decoded_bytes: Option<u64>,
    /// Leave out variables of types tgm cannot keep (vlens of anything but
    /// numbers, compounds holding strings or vlens), listing them; without it they are
    /// refused before any message is built (`spec/convert.md` "NetCDF
    /// user-defined types").
    pub skip_unsupported: bool,
}

/// One variable (or record of one) ready for `tgm::encode`.
#[derive(Debug, Clone)]
pub struct NcObject {
    /// Plain descriptor (no pipeline stages) of the native-endian data.
    pub descriptor: ObjectDescriptor,
    /// Native-endian element bytes.
    pub data: Vec<u8>,
    /// The object's `base[i]` entry.
    pub metadata: Map,
}

/// One message: its objects and its `_extra_` section.
#[derive(Debug, Clone)]
pub struct NcMessage {
    pub objects: Vec<NcObject>,
    pub extra: Map,
}

/// What a NetCDF conversion produced: the messages, and the variables it
/// left out with the reason for each.
#[derive(Debug, Clone)]
pub struct NcConversion {
    /// The messages, grouped as asked.
    pub messages: Vec<NcMessage>,
    /// `(variable, why)` for every variable that was not converted.
    pub skipped: Vec<(String, String)>,
}

/// Converts one NetCDF file into messages grouped by `opts.split_by`.
pub fn convert_file(path: &Path, opts: &ConvertOptions) -> Result<NcConversion, NetcdfError> {
    let mut messages = Vec::new();
    let skipped = convert_file_each(path, opts, &mut |m| {
        messages.push(m);
        Ok(())
    })?;
    Ok(NcConversion { messages, skipped })
}

/// Converts one NetCDF file, handing each message to `each` as soon as it
/// is built, so that only one message (with `--split-by record`, one
/// record) is held at a time; returns the variables left out with the
/// reason for each. Stops at the first error, of the conversion or of
/// `each`.
pub fn convert_file_each(
    path: &Path,
    opts: &ConvertOptions,
    each: &mut dyn FnMut(NcMessage) -> Result<(), NetcdfError>,
) -> Result<Vec<(String, String)>, NetcdfError> {
    let src = Source::open(path)?;
    if !opts.skip_unsupported && !src.skipped.is_empty() {
        let what: Vec<String> = src
            .skipped
            .iter()
            .map(|(name, why)| format!("variable {name}: {why}"))
            .collect();
        return Err(NetcdfError::Invalid(format!(
            "{}: cannot be kept: {}; --skip-unsupported leaves them out",
            path.display(),
            what.join("; ")
        )));
    }
    if src.vars.is_empty() {
        return Err(NetcdfError::Invalid(format!(
            "{}: no variables of a supported type",
            path.display()
        )));
    }
    let extra = file_extra(&src);
    let mut budget = opts
        .max_decoded_bytes
        .map_or_else(|| DecodeBudget::for_input(src.file_len), DecodeBudget::new);
    let budget = &mut budget;
    let mut emit = |objects: Vec<NcObject>| {
        let mut extra = extra.clone();
        if let Some(names) = shared_dim_names(&objects) {
            extra.insert("dim_names".into(), names);
        }
        each(NcMessage { objects, extra })
    };
    match opts.split_by {
        SplitBy::File => {
            let mut objects = Vec::new();
            for v in &src.vars {
                objects.extend(variable_objects(&src, v, None, opts.cf, budget)?);
            }
            emit(objects)?
        }
        SplitBy::Variable => {
            for v in &src.vars {
                emit(variable_objects(&src, v, None, opts.cf, budget)?)?;
            }
        }
        SplitBy::Record => {
            let rd = src.record_dim().ok_or_else(|| {
                NetcdfError::Invalid(format!(
                    "{}: --split-by record needs an unlimited dimension; the file has none",
                    path.display()
                ))
            })?;
            let (rd_name, n) = (rd.name.clone(), rd.len);
            if n == 0 {
                return Err(NetcdfError::Invalid(format!(
                    "{}: --split-by record: the unlimited dimension {rd_name} has no records",
                    path.display()
                )));
            }
            for r in 0..n {
                let mut objects = Vec::new();
                for v in &src.vars {
                    let rec = v.dims.contains(&rd_name).then_some((rd_name.as_str(), r));
                    objects.extend(variable_objects(&src, v, rec, opts.cf, budget)?);
                }
                emit(objects)?;
            }
        }
    }
    Ok(src.skipped.clone())
}

/// The `_extra_` section of every message of `src`.
fn file_extra(src: &Source) -> Map {
    let dims = src
        .dims
        .iter()
        .map(|d| {
            Value::text_map([
                ("name", Value::from(d.name.as_str())),
                ("len", Value::from(d.len as u64)),
                ("unlimited", Value::from(d.unlimited)),
            ])
        })
        .collect();
    let mut nc = Map::new();
    nc.insert("format".into(), Value::from(src.format.name()));
    nc.insert("dims".into(), Value::Array(dims));
    insert_attrs(&mut nc, &src.attrs);
    if !src.types.is_empty() {
        let types = src
            .types
            .iter()
            .filter_map(|(g, t)| {
                let mut def = super::netcdf_udt::to_cbor(t).ok()?;
                if let Value::Map(m) = &mut def {
                    m.push((Value::from("group"), Value::from(g.as_str())));
                }
                Some(def)
            })
            .collect();
        nc.insert("types".into(), Value::Array(types));
    }
    if !src.groups.is_empty() {
        let groups = src
            .groups
            .iter()
            .map(|g| {
                let mut m = Map::new();
                m.insert("path".into(), Value::from(g.path.as_str()));
                insert_attrs(&mut m, &g.attrs);
                Value::from(m)
            })
            .collect();
        nc.insert("groups".into(), Value::Array(groups));
    }
    let mut extra = Map::new();
    extra.insert("netcdf".into(), Value::from(nc));
    extra
}

/// The dimension names all objects share, if they do.
fn shared_dim_names(objects: &[NcObject]) -> Option<Value> {
    let first = objects.first()?.metadata.get("dim_names")?;
    objects
        .iter()
        .all(|o| o.metadata.get("dim_names") == Some(first))
        .then(|| first.clone())
}

/// Inserts `attrs` (the values, as CBOR), `attr_types` (their CDL types;
/// the enum type's name for an attribute of an enum type, whose values are
/// its base integers) and `attr_order` (their names in file order, which
/// the maps do not keep) into `m`; returns the values.
fn insert_attrs(m: &mut Map, attrs: &Attrs) -> Map {
    let mut values = Map::new();
    let mut types = Map::new();
    for (name, v) in &attrs.list {
        let (c, t) = super::netcdf_attrs::to_cbor(v);
        let t = attrs
            .enum_types
            .iter()
            .find(|(a, _)| a == name)
            .map_or(t, |(_, e)| e.as_str());
        values.insert(name.clone(), c);
        types.insert(name.clone(), Value::from(t));
    }
    let order = attrs
        .list
        .iter()
        .map(|(n, _)| Value::from(n.as_str()))
        .collect();
    m.insert("attrs".into(), Value::from(values.clone()));
    m.insert("attr_types".into(), Value::from(types));
    m.insert("attr_order".into(), Value::Array(order));
    values
}

/// The missing-value markers of `var`: `_FillValue` and `missing_value`.
fn fill_values(var: &Var) -> Vec<f64> {
    ["_FillValue", "missing_value"]
        .iter()
        .filter_map(|n| var.attr(n))
        .flat_map(super::netcdf_attrs::numbers)
        .collect()
}

/// The first element of numeric attribute `name`.
fn scalar(var: &Var, name: &str) -> Option<f64> {
    var.attr(name)
        .and_then(|v| super::netcdf_attrs::numbers(v).first().copied())
}

/// Elements of native bytes of type `ty` as f64.
fn to_f64(ty: NcNum, data: &[u8]) -> Vec<f64> {
    macro_rules! conv {
        ($t:ty) => {
            data.chunks_exact(std::mem::size_of::<$t>())
                .map(|c| <$t>::from_ne_bytes(c.try_into().expect("chunk width")) as f64)
                .collect()
        };
    }
    match ty {
        NcNum::I8 => conv!(i8),
        NcNum::Char | NcNum::U8 => conv!(u8),
        NcNum::I16 => conv!(i16),
        NcNum::U16 => conv!(u16),
        NcNum::I32 => conv!(i32),
        NcNum::U32 => conv!(u32),
        NcNum::I64 => conv!(i64),
        NcNum::U64 => conv!(u64),
        NcNum::F32 => conv!(f32),
        NcNum::F64 => conv!(f64),
    }
}

/// The `netcdf` key marking an object whose fill values were kept as they
/// are because the variable holds NaN of its own (so NaN is not a fill).
pub const NAN_KEPT: &str = "nan_kept";

/// Whether float data of type `ty` holds a NaN.
fn has_nan(ty: NcNum, data: &[u8]) -> bool {
    match ty {
        NcNum::F32 => data
            .chunks_exact(4)
            .any(|c| f32::from_ne_bytes(c.try_into().expect("chunk width")).is_nan()),
        NcNum::F64 => data
            .chunks_exact(8)
            .any(|c| f64::from_ne_bytes(c.try_into().expect("chunk width")).is_nan()),
        _ => false,
    }
}

/// Float data with every fill value replaced by NaN, in place.
fn mask_fill(ty: NcNum, data: &mut [u8], fills: &[f64]) {
    match ty {
        NcNum::F32 => {
            let fills: Vec<f32> = fills.iter().map(|&f| f as f32).collect();
            for c in data.chunks_exact_mut(4) {
                let v = f32::from_ne_bytes(c.try_into().expect("chunk width"));
                if fills.contains(&v) {
                    c.copy_from_slice(&f32::NAN.to_ne_bytes());
                }
            }
        }
        NcNum::F64 => {
            for c in data.chunks_exact_mut(8) {
                let v = f64::from_ne_bytes(c.try_into().expect("chunk width"));
                if fills.contains(&v) {
                    c.copy_from_slice(&f64::NAN.to_ne_bytes());
                }
            }
        }
        _ => {}
    }
}

/// The objects of `var`, whole or at one record: one, or one per leaf
/// member of a compound.
fn variable_objects(
    src: &Source,
    var: &Var,
    record: Option<(&str, usize)>,
    cf: bool,
    budget: &mut DecodeBudget,
) -> Result<Vec<NcObject>, NetcdfError> {
    let mut data = src.read(var, record, budget)?;
    let shape: Vec<u64> = var
        .dims
        .iter()
        .zip(&var.shape)
        .map(|(d, &n)| match record {
            Some((rd, _)) if rd == d => 1,
            _ => n as u64,
        })
        .collect();
    let mut nc = Map::new();
    nc.insert("type".into(), Value::from(var.ty.name()));
    if let Some(user) = &var.user {
        let def = super::netcdf_udt::to_cbor(user)
            .map_err(|e| NetcdfError::Invalid(format!("variable {}: {e}", var.name)))?;
        nc.insert(
            def.get("kind")
                .and_then(Value::as_text)
                .unwrap_or("type")
                .into(),
            def,
        );
    }
    let slice_dims = |nc: &mut Map| {
        let dims = var.dims.iter().map(|d| Value::from(d.as_str())).collect();
        nc.insert("dims".into(), Value::Array(dims));
        let shape = shape.iter().map(|&n| Value::from(n)).collect();
        nc.insert("shape".into(), Value::Array(shape));
    };
    let (descriptor, unpacked, nan_kept) = match var.ty {
        VarType::String => {
            slice_dims(&mut nc);
            let d = ObjectDescriptor::new(Dtype::Uint8, vec![data.len() as u64]);
            (d, false, false)
        }
        VarType::Opaque(size) => {
            slice_dims(&mut nc);
            let mut shape = shape.clone();
            shape.push(size as u64);
            (ObjectDescriptor::new(Dtype::Uint8, shape), false, false)
        }
        VarType::Compound(_) | VarType::Vlen(_) => {
            slice_dims(&mut nc);
            let d = ObjectDescriptor::new(Dtype::Uint8, vec![0]);
            (d, false, false)
        }
        VarType::Fixed(ty) => {
            let (dtype, unpacked, nan_kept) = fixed_values(var, ty, &mut data, cf);
            (
                ObjectDescriptor::new(dtype, shape.clone()),
                unpacked,
                nan_kept,
            )
        }
    };

    let attrs = insert_attrs(&mut nc, &var.attrs);
    let mut cf_map = Map::new();
    for name in CF_ATTRIBUTES {
        if let Some(v) = attrs.get(*name) {
            cf_map.insert((*name).to_string(), v.clone());
        }
    }
    if unpacked {
        nc.insert("unpacked".into(), Value::from(true));
    }
    if nan_kept {
        nc.insert(NAN_KEPT.into(), Value::from(true));
    }
    if let Some((_, r)) = record {
        nc.insert("record".into(), Value::from(r as u64));
    }
    if let Some(st) = &var.storage {
        if let Some(c) = &st.chunks {
            let c = c.iter().map(|&n| Value::from(n as u64)).collect();
            nc.insert("chunks".into(), Value::Array(c));
        }
        if let Some(d) = st.deflate {
            nc.insert("deflate".into(), Value::from(i64::from(d.level)));
            nc.insert("shuffle".into(), Value::from(d.shuffle));
        }
    }
    let mut metadata = Map::new();
    metadata.insert("name".into(), Value::from(var.name.as_str()));
    if matches!(var.ty, VarType::Fixed(_)) {
        metadata.insert(
            "dim_names".into(),
            Value::Array(var.dims.iter().map(|d| Value::from(d.as_str())).collect()),
        );
    }
    if !cf_map.is_empty() {
        metadata.insert("cf".into(), Value::from(cf_map));
    }
    if let (VarType::Compound(size), Some(NcVariableType::Compound(c))) = (var.ty, &var.user) {
        return Ok(compound_members(var, c, size, &data, &shape, metadata, nc));
    }
    if let VarType::Vlen(base) = var.ty {
        return Ok(vlen_parts(var, base, data, &shape, metadata, nc));
    }
    metadata.insert("netcdf".into(), Value::from(nc));
    Ok(vec![NcObject {
        descriptor,
        data,
        metadata,
    }])
}

/// The two objects of a vlen variable of `base` values whose `data` holds
/// each element's length (u64) then every element's values: the values,
/// named as the variable, flat; and the lengths, named `var.lengths`, of
/// the variable's (slice) `shape`. Each carries `metadata` with `netcdf`
/// = `nc` plus `variable` and `part` (`values` or `lengths`).
fn vlen_parts(
    var: &Var,
    base: NcNum,
    mut data: Vec<u8>,
    shape: &[u64],
    metadata: Map,
    nc: Map,
) -> Vec<NcObject> {
    let n: u64 = shape.iter().product();
    let values = data.split_off((n * 8) as usize);
    let parts = [
        (
            var.name.clone(),
            "values",
            base.dtype(),
            vec![(values.len() / base.size()) as u64],
            values,
        ),
        (
            format!("{}.lengths", var.name),
            "lengths",
            Dtype::Uint64,
            shape.to_vec(),
            data,
        ),
    ];
    parts
        .into_iter()
        .map(|(name, part, dtype, shape, data)| {
            let mut nc = nc.clone();
            nc.insert("variable".into(), Value::from(var.name.as_str()));
            nc.insert("part".into(), Value::from(part));
            let mut metadata = metadata.clone();
            metadata.insert("name".into(), Value::from(name));
            metadata.insert("netcdf".into(), Value::from(nc));
            NcObject {
                descriptor: ObjectDescriptor::new(dtype, shape),
                data,
                metadata,
            }
        })
        .collect()
}

/// One object per leaf member of compound `c` (elements of `size` bytes
/// in `data`), named `var.member[.member…]`, of the member's dtype and
/// the variable's `shape` followed by the member's array axes (and the
/// opaque size); each carries `metadata` with `netcdf` = `nc` plus
/// `variable` (the compound variable) and `member` (the leaf's path).
fn compound_members(
    var: &Var,
    c: &netcdf::types::CompoundType,
    size: usize,
    data: &[u8],
    shape: &[u64],
    metadata: Map,
    nc: Map,
) -> Vec<NcObject> {
    super::netcdf_udt::leaves(c)
        .into_iter()
        .map(|leaf| {
            let mut shape = shape.to_vec();
            shape.extend(leaf.tail_shape().iter().map(|&n| n as u64));
            let dtype = match leaf.kind {
                super::netcdf_udt::LeafKind::Num(n) => n.dtype(),
                super::netcdf_udt::LeafKind::Opaque(_) => Dtype::Uint8,
            };
            let mut nc = nc.clone();
            nc.insert("variable".into(), Value::from(var.name.as_str()));
            let path = leaf.path.iter().map(|p| Value::from(p.as_str())).collect();
            nc.insert("member".into(), Value::Array(path));
            let mut metadata = metadata.clone();
            let name = format!("{}.{}", var.name, leaf.path.join("."));
            metadata.insert("name".into(), Value::from(name));
            metadata.insert("netcdf".into(), Value::from(nc));
            NcObject {
                descriptor: ObjectDescriptor::new(dtype, shape),
                data: leaf.gather(data, size),
                metadata,
            }
        })
        .collect()
}

/// The values of a fixed-width variable, in place: unpacked to float64
/// with `cf` and packing attributes, else with float fill values masked as
/// NaN unless the data holds NaN of its own. Returns the dtype and whether
/// the values were unpacked or kept their NaN apart.
fn fixed_values(var: &Var, ty: NcNum, data: &mut Vec<u8>, cf: bool) -> (Dtype, bool, bool) {
    let fills = fill_values(var);
    let scale = scalar(var, "scale_factor");
    let offset = scalar(var, "add_offset");
    if cf && (scale.is_some() || offset.is_some()) {
        let (s, o) = (scale.unwrap_or(1.0), offset.unwrap_or(0.0));
        *data = to_f64(ty, data)
            .into_iter()
            .flat_map(|q| {
                let v = if fills.contains(&q) {
                    f64::NAN
                } else {
                    q * s + o
                };
                v.to_ne_bytes()
            })
            .collect();
        return (Dtype::Float64, true, false);
    }
    let nan_kept = !fills.is_empty() && has_nan(ty, data);
    if !nan_kept {
        mask_fill(ty, data, &fills);
    }
    (ty.dtype(), false, nan_kept)
}
