//! Messages written by `convert-netcdf` back to one NetCDF-4 file: the
//! groups, dimensions, global and group attributes, variables and variable
//! attributes the metadata records (layout in [`super::netcdf`]), each
//! variable in the group its path names, NaN written back as the
//! variable's fill value (unless the object kept its NaN apart) and
//! `--cf`-unpacked variables packed again with their
//! `scale_factor`/`add_offset`. Messages of `--split-by variable` and
//! `--split-by record` archives are reassembled into one file.

use std::path::Path;

use netcdf::types::NcVariableType;
use tgm::cbor::Value;
use tgm::{DecodedMessage, Dtype, Map};

use super::netcdf::NetcdfError;
use super::netcdf_attrs::{default_type, from_cbor, numbers};
use super::netcdf_ffi::{string_ptrs, NcChar};
use super::netcdf_read::{Attrs, Dim, NcNum, VarType};
use super::netcdf_write_udt::put_attrs;

/// The source's storage of a variable, as recorded.
#[derive(Debug, Clone, Default, PartialEq)]
struct StoragePlan {
    chunks: Option<Vec<usize>>,
    deflate: Option<(i32, bool)>,
}

/// A variable to create.
pub(super) struct VarPlan {
    pub(super) name: String,
    pub(super) ty: VarType,
    dims: Vec<String>,
    attrs: Attrs,
    unpacked: bool,
    storage: StoragePlan,
    /// The definition of its user-defined type.
    pub(super) user: Option<NcVariableType>,
}

/// A sub-group to create: its path (`/a/b`) and attributes.
type GroupPlan = (String, Attrs);

/// The enum types an archive records, by name, with their base types:
/// attributes whose `attr_types` entry names one are written as that enum.
type Enums = Vec<(String, NcNum)>;

/// One object's data to put: (variable, message, object, record index,
/// the object's shape as a variable slice).
type Put = (usize, usize, usize, Option<usize>, Vec<u64>);

/// The group path and short name of path name `name` (`/a/b/x` → `/a/b`,
/// `x`; a root name has no group).
pub(super) fn split_path(name: &str) -> (&str, &str) {
    match name.rfind('/') {
        Some(i) => (&name[..i], &name[i + 1..]),
        None => ("", name),
    }
}

fn invalid(m: impl Into<String>) -> NetcdfError {
    NetcdfError::Invalid(m.into())
}

fn map<'a>(v: Option<&'a Value>, what: &str) -> Result<&'a [(Value, Value)], NetcdfError> {
    v.and_then(Value::as_map)
        .ok_or_else(|| invalid(format!("{what} is missing or not a map")))
}

fn field<'a>(m: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    m.iter()
        .find(|(k, _)| k.as_text() == Some(key))
        .map(|(_, v)| v)
}

/// Attributes from the `attrs` map of `owner` and its `attr_types` map,
/// in the order of its `attr_order` list (names it lacks come last); an
/// attribute whose type names one of `enums` is read as its base type.
fn attributes(owner: &[(Value, Value)], what: &str, enums: &Enums) -> Result<Attrs, NetcdfError> {
    let Some(attrs) = field(owner, "attrs") else {
        return Ok(Attrs::default());
    };
    let mut enum_types = Vec::new();
    let attrs = map(Some(attrs), what)?;
    let types = field(owner, "attr_types")
        .and_then(Value::as_map)
        .unwrap_or(&[]);
    let mut out = attrs
        .iter()
        .map(|(k, v)| {
            let name = k
                .as_text()
                .ok_or_else(|| invalid(format!("{what}: a key is not text")))?;
            let mut ty = field(types, name)
                .and_then(Value::as_text)
                .unwrap_or_else(|| default_type(v));
            if let Some((e, base)) = enums.iter().find(|(e, _)| e == ty) {
                enum_types.push((name.to_string(), e.clone()));
                ty = base.name();
            }
            let value = from_cbor(v, ty).map_err(|e| invalid(format!("{what}.{name}: {e}")))?;
            Ok((name.to_string(), value))
        })
        .collect::<Result<Vec<_>, NetcdfError>>()?;
    if let Some(order) = field(owner, "attr_order").and_then(Value::as_array) {
        let rank: std::collections::HashMap<&str, usize> = order
            .iter()
            .enumerate()
            .filter_map(|(i, o)| Some((o.as_text()?, i)))
            .collect();
        out.sort_by_key(|(name, _)| rank.get(name.as_str()).copied().unwrap_or(usize::MAX));
    }
    Ok(Attrs {
        list: out,
        enum_types,
    })
}

fn dims_of(extra: &Map, m: usize) -> Result<Vec<Dim>, NetcdfError> {
    let nc = map(extra.get("netcdf"), &format!("message {m}: _extra_.netcdf"))?;
    let dims = field(nc, "dims")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid(format!("message {m}: _extra_.netcdf.dims is missing")))?;
    dims.iter()
        .map(|d| {
            let d = map(Some(d), &format!("message {m}: a dimension"))?;
            Ok(Dim {
                name: field(d, "name")
                    .and_then(Value::as_text)
                    .ok_or_else(|| invalid(format!("message {m}: a dimension has no name")))?
                    .to_string(),
                len: field(d, "len")
                    .and_then(Value::as_u64)
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| invalid(format!("message {m}: a dimension has no len")))?,
                unlimited: field(d, "unlimited").is_some_and(|u| *u == Value::Bool(true)),
            })
        })
        .collect()
}

/// Adds `new` to `dims`, refusing a fixed dimension whose length differs.
fn merge_dims(dims: &mut Vec<Dim>, new: Vec<Dim>) -> Result<(), NetcdfError> {
    for d in new {
        match dims.iter_mut().find(|x| x.name == d.name) {
            None => dims.push(d),
            Some(x) if x.unlimited && d.unlimited => x.len = x.len.max(d.len),
            Some(x) if *x == d => {}
            Some(x) => {
                return Err(invalid(format!(
                    "dimension {} has length {} in one message and {} in another",
                    d.name, x.len, d.len
                )))
            }
        }
    }
    Ok(())
}

/// The variable plan of object `i` of message `m`, and its record index.
fn plan(
    msg: &DecodedMessage,
    m: usize,
    i: usize,
    enums: &Enums,
) -> Result<(VarPlan, Option<usize>), NetcdfError> {
    let what = format!("message {m} object {i}");
    let entry = msg
        .metadata
        .base
        .get(i)
        .ok_or_else(|| invalid(format!("{what}: no base entry")))?;
    let name = entry
        .get("name")
        .and_then(Value::as_text)
        .ok_or_else(|| invalid(format!("{what}: no name (not written by convert-netcdf?)")))?;
    let nc = map(entry.get("netcdf"), &format!("{what}: netcdf"))?;
    let ty_name = field(nc, "type").and_then(Value::as_text).unwrap_or("");
    let user =
        super::netcdf_write_udt::user_type(nc).map_err(|e| invalid(format!("{what}: {e}")))?;
    let ty = match (&user, ty_name) {
        (Some(NcVariableType::Opaque(o)), "opaque") => Some(VarType::Opaque(o.size)),
        (Some(NcVariableType::Compound(c)), "compound") => Some(VarType::Compound(c.size)),
        (Some(NcVariableType::Vlen(v)), "vlen") => NcNum::from_nc(&v.basetype).map(VarType::Vlen),
        (Some(NcVariableType::Enum(e)), t) => {
            VarType::from_name(t).filter(|&t| t == VarType::Fixed(super::netcdf_udt::enum_base(e)))
        }
        (None, t) => VarType::from_name(t),
        _ => None,
    }
    .ok_or_else(|| {
        invalid(format!(
            "{what}: NetCDF type {ty_name:?} unknown or unlike its definition"
        ))
    })?;
    let name = match ty {
        VarType::Compound(_) | VarType::Vlen(_) => field(nc, "variable")
            .and_then(Value::as_text)
            .ok_or_else(|| {
            invalid(format!("{what}: a {ty_name} part without netcdf.variable"))
        })?,
        _ => name,
    };
    let (dims_key, dims_value) = match ty {
        VarType::Fixed(_) => ("dim_names", entry.get("dim_names")),
        _ => ("netcdf.dims", field(nc, "dims")),
    };
    let dims: Vec<String> = dims_value
        .and_then(Value::as_array)
        .ok_or_else(|| invalid(format!("{what}: no {dims_key}")))?
        .iter()
        .map(|d| d.as_text().map(str::to_string))
        .collect::<Option<_>>()
        .ok_or_else(|| invalid(format!("{what}: {dims_key} holds a non-text entry")))?;
    let storage = storage_plan(nc, dims.len()).map_err(|e| invalid(format!("{what}: {e}")))?;
    let mut enums = enums.clone();
    if let Some(NcVariableType::Enum(e)) = &user {
        enums.push((e.name.clone(), super::netcdf_udt::enum_base(e)));
    }
    let attrs = attributes(nc, &what, &enums)?;
    let unpacked = field(nc, "unpacked") == Some(&Value::Bool(true));
    let record = match field(nc, "record") {
        None => None,
        Some(r) => Some(
            r.as_u64()
                .and_then(|r| usize::try_from(r).ok())
                .ok_or_else(|| invalid(format!("{what}: record is not an index")))?,
        ),
    };
    Ok((
        VarPlan {
            name: name.to_string(),
            ty,
            dims,
            attrs,
            unpacked,
            storage,
            user,
        },
        record,
    ))
}

/// The recorded storage (`netcdf.chunks`, `netcdf.deflate`,
/// `netcdf.shuffle`) of a variable of `rank` dimensions.
fn storage_plan(nc: &[(Value, Value)], rank: usize) -> Result<StoragePlan, String> {
    let chunks = match field(nc, "chunks") {
        None => None,
        Some(c) => {
            let c: Vec<usize> = c
                .as_array()
                .ok_or("netcdf.chunks is not a list")?
                .iter()
                .map(|n| n.as_u64().and_then(|n| usize::try_from(n).ok()))
                .collect::<Option<_>>()
                .filter(|c: &Vec<usize>| c.len() == rank && c.iter().all(|&n| n > 0))
                .ok_or("netcdf.chunks is not one positive length per dimension")?;
            Some(c)
        }
    };
    let deflate = match field(nc, "deflate") {
        None => None,
        Some(d) => {
            let level = d
                .as_i64()
                .filter(|l| (1..=9).contains(l))
                .ok_or("netcdf.deflate is not a level 1–9")?;
            let shuffle = field(nc, "shuffle") == Some(&Value::Bool(true));
            Some((level as i32, shuffle))
        }
    };
    Ok(StoragePlan { chunks, deflate })
}

/// The shape object `i` of `msg` fills in its variable: the descriptor's,
/// or for a `string`, opaque or compound variable the recorded
/// `netcdf.shape`.
fn object_shape(msg: &DecodedMessage, i: usize, plan: &VarPlan) -> Result<Vec<u64>, String> {
    if matches!(plan.ty, VarType::Fixed(_)) {
        return Ok(msg.objects[i].descriptor.shape.clone());
    }
    msg.metadata
        .base
        .get(i)
        .and_then(|e| e.get("netcdf"))
        .and_then(Value::as_map)
        .and_then(|nc| field(nc, "shape"))
        .and_then(Value::as_array)
        .and_then(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
        .ok_or_else(|| format!("a {} variable without netcdf.shape", plan.ty.name()))
}

/// Every sub-group recorded in `_extra_.netcdf.groups` of `extra`, with
/// its attributes.
fn groups_of(extra: &Map, m: usize, enums: &Enums) -> Result<Vec<GroupPlan>, NetcdfError> {
    let nc = map(extra.get("netcdf"), &format!("message {m}: _extra_.netcdf"))?;
    let Some(groups) = field(nc, "groups") else {
        return Ok(Vec::new());
    };
    let groups = groups
        .as_array()
        .ok_or_else(|| invalid(format!("message {m}: _extra_.netcdf.groups is not a list")))?;
    groups
        .iter()
        .map(|g| {
            let g = map(Some(g), &format!("message {m}: a group"))?;
            let path = field(g, "path")
                .and_then(Value::as_text)
                .filter(|p| p.starts_with('/') && p.len() > 1)
                .ok_or_else(|| invalid(format!("message {m}: a group has no /path")))?;
            let what = format!("group {path}");
            let attrs = attributes(g, &what, enums)?;
            Ok((path.to_string(), attrs))
        })
        .collect()
}

/// Creates group `path` (`/a/b`) and any missing parent in `file`,
/// recording each in `made`.
fn ensure_group(
    file: &mut netcdf::FileMut,
    made: &mut Vec<String>,
    path: &str,
) -> Result<(), netcdf::Error> {
    if path.is_empty() || made.iter().any(|g| g == path) {
        return Ok(());
    }
    let (parent, _) = split_path(path);
    ensure_group(file, made, parent)?;
    file.add_group(path.trim_start_matches('/'))?;
    made.push(path.to_string());
    Ok(())
}

fn nc_type(v: &VarPlan) -> NcVariableType {
    match (&v.user, v.ty) {
        (Some(t), _) => t.clone(),
        (None, VarType::Fixed(t)) => t.nc_type(),
        (None, _) => NcVariableType::String,
    }
}

/// zlib level of every variable written (with the shuffle filter).
pub const DEFLATE_LEVEL: i32 = 4;
/// Largest chunk written, in bytes.
pub const MAX_CHUNK_BYTES: usize = 4 << 20;

/// The chunk shape of a variable with dimensions `(length, unlimited)` and
/// elements of `width` bytes: one record along an unlimited dimension, the
/// whole length along the others, leading dimensions halved until a chunk
/// holds at most [`MAX_CHUNK_BYTES`].
pub fn chunk_shape(dims: &[(usize, bool)], width: usize) -> Vec<usize> {
    let mut c: Vec<usize> = dims
        .iter()
        .map(|&(len, unlimited)| if unlimited { 1 } else { len.max(1) })
        .collect();
    let bytes = |c: &[usize]| c.iter().fold(width, |b, &n| b.saturating_mul(n));
    for i in 0..c.len() {
        while bytes(&c) > MAX_CHUNK_BYTES && c[i] > 1 {
            c[i] = c[i].div_ceil(2);
        }
    }
    c
}

/// The recorded chunk shape of a variable of these dimensions
/// (`(length, unlimited)`, elements of `width` bytes), as the source had
/// it unless it holds more bytes than both the variable and
/// [`MAX_CHUNK_BYTES`]: then each length is cut to its dimension's. A
/// subset of a source's records can be smaller than the source's chunk,
/// and an archive can claim any chunk, while HDF5 allocates a whole chunk
/// to write one element.
fn recorded_chunks(chunks: &[usize], dims: &[(usize, bool)], width: usize) -> Vec<usize> {
    let bytes = |n: &mut dyn Iterator<Item = usize>| n.fold(width.max(1), usize::saturating_mul);
    let chunk = bytes(&mut chunks.iter().copied());
    let variable = bytes(&mut dims.iter().map(|&(len, _)| len.max(1)));
    if chunk <= variable.max(MAX_CHUNK_BYTES) {
        return chunks.to_vec();
    }
    chunks
        .iter()
        .zip(dims)
        .map(|(&c, &(len, _))| c.min(len.max(1)))
        .collect()
}

/// Writes every object of `messages` into a new NetCDF-4 file at `out`,
/// every variable in its group, chunked and deflated as its source was
/// (recorded `netcdf.chunks`, `netcdf.deflate`, `netcdf.shuffle`), else
/// chunked by [`chunk_shape`] and deflated at [`DEFLATE_LEVEL`], shuffled.
pub fn write_netcdf(messages: &[DecodedMessage], out: &Path) -> Result<(), NetcdfError> {
    let first = messages
        .first()
        .ok_or_else(|| invalid("the input holds no messages"))?;
    let mut dims = Vec::new();
    let mut groups: Vec<GroupPlan> = Vec::new();
    let types = super::netcdf_write_udt::types_of(messages)?;
    let enums: Enums = types
        .iter()
        .filter_map(|(_, t)| match t {
            NcVariableType::Enum(e) => Some((e.name.clone(), super::netcdf_udt::enum_base(e))),
            _ => None,
        })
        .collect();
    for (m, msg) in messages.iter().enumerate() {
        merge_dims(&mut dims, dims_of(&msg.metadata.extra, m)?)?;
        for g in groups_of(&msg.metadata.extra, m, &enums)? {
            if !groups.iter().any(|x| x.0 == g.0) {
                groups.push(g);
            }
        }
    }
    let nc0 = map(
        first.metadata.extra.get("netcdf"),
        "message 0: _extra_.netcdf",
    )?;
    let globals = attributes(nc0, "global", &enums)?;

    let mut vars: Vec<VarPlan> = Vec::new();
    let mut puts: Vec<Put> = Vec::new();
    for (m, msg) in messages.iter().enumerate() {
        for i in 0..msg.objects.len() {
            let (p, record) = plan(msg, m, i, &enums)?;
            let shape = object_shape(msg, i, &p)
                .map_err(|e| invalid(format!("message {m} object {i}: {e}")))?;
            let v = match vars.iter().position(|v| v.name == p.name) {
                Some(v) => {
                    if vars[v].ty != p.ty || vars[v].dims != p.dims || vars[v].user != p.user {
                        return Err(invalid(format!(
                            "message {m} object {i}: variable {} differs in type or dimensions from its first occurrence",
                            p.name
                        )));
                    }
                    if puts.iter().any(|(pv, pm, _, pr, _)| {
                        *pv == v && *pr == record && (record.is_none() || *pm == m)
                    }) {
                        continue;
                    }
                    v
                }
                None => {
                    vars.push(p);
                    vars.len() - 1
                }
            };
            puts.push((v, m, i, record, shape));
        }
    }

    let nc_err = |what: &str, e: netcdf::Error| {
        NetcdfError::Netcdf(format!("{}: {what}: {e}", out.display()))
    };
    let mut file =
        netcdf::create_with(out, netcdf::Options::NETCDF4).map_err(|e| nc_err("create", e))?;
    let mut made = Vec::new();
    let parents = groups
        .iter()
        .map(|g| g.0.as_str())
        .chain(dims.iter().map(|d| split_path(&d.name).0))
        .chain(vars.iter().map(|v| split_path(&v.name).0));
    for g in parents {
        ensure_group(&mut file, &mut made, g).map_err(|e| nc_err(&format!("group {g}"), e))?;
    }
    let raw = super::netcdf_ffi::StorageHandle::borrow_root(&file)
        .map_err(|e| NetcdfError::Netcdf(format!("{}: {e}", out.display())))?;
    let mut types = types;
    for v in &vars {
        super::netcdf_write_udt::add_missing(&mut types, v).map_err(invalid)?;
    }
    for (g, t) in &types {
        let name = super::netcdf_udt::type_name(t).unwrap_or("");
        let r = if g.is_empty() {
            file.add_type_from_descriptor(t.clone())
        } else {
            match file.group_mut(g.trim_start_matches('/')) {
                Ok(Some(mut gm)) => gm.add_type_from_descriptor(t.clone()),
                Ok(None) => Err(format!("no group {g}").into()),
                Err(e) => Err(e),
            }
        };
        r.map_err(|e| nc_err(&format!("type {name}"), e))?;
    }
    let mut dim_ids = Vec::with_capacity(dims.len());
    for d in &dims {
        let at = d.name.trim_start_matches('/');
        let r = if d.unlimited {
            file.add_unlimited_dimension(at)
        } else {
            file.add_dimension(at, d.len)
        };
        let id = r
            .map_err(|e| nc_err(&format!("dimension {}", d.name), e))?
            .identifier();
        dim_ids.push((d.name.as_str(), id));
    }
    put_attrs(&raw, "", None, &globals, |name, v| {
        file.add_attribute(name, v.clone())
            .map(drop)
            .map_err(|e| nc_err(&format!("global attribute {name}"), e))
    })?;
    for (g, attrs) in &groups {
        put_attrs(&raw, g, None, attrs, |name, v| {
            let at = format!("{}/{name}", g.trim_start_matches('/'));
            file.add_attribute(&at, v.clone())
                .map(drop)
                .map_err(|e| nc_err(&format!("group {g} attribute {name}"), e))
        })?;
    }
    for v in &vars {
        let ids = v
            .dims
            .iter()
            .map(|d| {
                dim_ids
                    .iter()
                    .find(|(n, _)| n == d)
                    .map(|(_, id)| *id)
                    .ok_or_else(|| {
                        invalid(format!(
                            "variable {}: no dimension {d} in _extra_.netcdf.dims",
                            v.name
                        ))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut var = file
            .add_variable_from_identifiers_with_type(
                v.name.trim_start_matches('/'),
                &ids,
                &nc_type(v),
            )
            .map_err(|e| nc_err(&format!("variable {}", v.name), e))?;
        if !v.dims.is_empty() {
            let lens: Vec<(usize, bool)> = v
                .dims
                .iter()
                .map(|d| {
                    dims.iter()
                        .find(|x| &x.name == d)
                        .map_or((1, false), |x| (x.len, x.unlimited))
                })
                .collect();
            let chunks = match &v.storage.chunks {
                Some(recorded) => recorded_chunks(recorded, &lens, v.ty.raw_size()),
                None => chunk_shape(&lens, v.ty.raw_size()),
            };
            let (level, shuffle) = v.storage.deflate.unwrap_or((DEFLATE_LEVEL, true));
            var.set_chunking(&chunks)
                .and_then(|()| match v.ty {
                    // netCDF-C applies no filter to variable-length types.
                    VarType::String | VarType::Vlen(_) => Ok(()),
                    _ => var.set_compression(level, shuffle),
                })
                .map_err(|e| nc_err(&format!("variable {} chunking", v.name), e))?;
        }
        let (group, short) = split_path(&v.name);
        put_attrs(&raw, group, Some(short), &v.attrs, |name, a| {
            var.put_attribute(name, a.clone())
                .map(drop)
                .map_err(|e| nc_err(&format!("variable {} attribute {name}", v.name), e))
        })?;
    }
    for (v, m, i, record, shape) in &puts {
        let (m, i, record) = (*m, *i, *record);
        let plan = &vars[*v];
        let obj = &messages[m].objects[i];
        let what = format!("message {m} object {i} ({})", plan.name);
        if shape.len() != plan.dims.len() {
            return Err(invalid(format!(
                "{what}: {} dimension names for a {}-dimensional object",
                plan.dims.len(),
                shape.len()
            )));
        }
        let slice: Vec<(usize, usize)> = plan
            .dims
            .iter()
            .zip(shape)
            .map(|(d, &n)| {
                let unlimited = dims.iter().any(|x| &x.name == d && x.unlimited);
                let start = match record {
                    Some(r) if unlimited => r,
                    _ => 0,
                };
                (start, n as usize)
            })
            .collect();
        if plan.user.is_some() {
            super::netcdf_write_udt::put_values(&raw, &messages[m], i, plan, &slice)
                .map_err(|e| invalid(format!("{what}: {e}")))?;
            continue;
        }
        let mut var = file
            .variable_mut(plan.name.trim_start_matches('/'))
            .ok_or_else(|| invalid(format!("{what}: variable not created")))?;
        let fill = if nan_kept(&messages[m], i) {
            None
        } else {
            fill_of(plan)
        };
        let count = shape.iter().try_fold(1u64, |a, &n| a.checked_mul(n));
        put_data(&mut var, plan, obj, &slice, fill, count).map_err(|e| match e {
            PutError::Nc(e) => nc_err(&what, e),
            PutError::Invalid(s) => invalid(format!("{what}: {s}")),
        })?;
    }
    drop(raw);
    file.close().map_err(|e| nc_err("close", e))
}

enum PutError {
    Nc(netcdf::Error),
    Invalid(String),
}

impl From<netcdf::Error> for PutError {
    fn from(e: netcdf::Error) -> Self {
        PutError::Nc(e)
    }
}

/// The first value of the variable's `_FillValue`, else `missing_value`.
fn fill_of(plan: &VarPlan) -> Option<f64> {
    ["_FillValue", "missing_value"].iter().find_map(|n| {
        plan.attrs
            .list
            .iter()
            .find(|(a, _)| a == n)
            .and_then(|(_, v)| numbers(v).first().copied())
    })
}

fn attr_f64(plan: &VarPlan, name: &str) -> Option<f64> {
    plan.attrs
        .list
        .iter()
        .find(|(a, _)| a == name)
        .and_then(|(_, v)| numbers(v).first().copied())
}

/// Whether object `i` of `msg` kept its NaN apart from its fill values
/// ([`super::netcdf::NAN_KEPT`]).
fn nan_kept(msg: &DecodedMessage, i: usize) -> bool {
    msg.metadata
        .base
        .get(i)
        .and_then(|e| e.get("netcdf"))
        .and_then(|nc| field(nc.as_map()?, super::netcdf::NAN_KEPT))
        == Some(&Value::Bool(true))
}

/// Bytes of values converted and put at a time by [`put_data`].
const PUT_STEP_BYTES: usize = 16 << 20;

/// `slice` ((start, count) per dimension) as netCDF extents.
fn extents(slice: &[(usize, usize)]) -> Vec<netcdf::Extent> {
    slice
        .iter()
        .map(|&(start, count)| netcdf::Extent::SliceCount {
            start,
            stride: 1,
            count,
        })
        .collect()
}

/// The hyperslab `slice` cut into pieces of at most `step` elements where
/// its innermost dimensions allow (a piece is never less than one element):
/// each piece is `(first, slice)`, a run of the slice's elements in
/// row-major order from element `first`, so that its values are one
/// contiguous range of the object's. The pieces cover the slice in order.
fn pieces(slice: &[(usize, usize)], step: usize) -> Vec<(usize, Vec<(usize, usize)>)> {
    let total = slice.iter().fold(1usize, |a, &(_, n)| a.saturating_mul(n));
    if total == 0 || slice.is_empty() {
        return vec![(0, slice.to_vec())];
    }
    // The outermost axis `k` whose inner rows hold at most `step` elements
    // (the last axis always does: its rows are single elements).
    let inner = |k: usize| slice[k + 1..].iter().map(|&(_, n)| n).product::<usize>();
    let k = (0..slice.len())
        .find(|&k| inner(k) <= step)
        .unwrap_or(slice.len() - 1);
    let rows = (step / inner(k)).max(1);
    let outer: usize = slice[..k].iter().map(|&(_, n)| n).product();
    let mut out = Vec::new();
    for o in 0..outer {
        // The index of `o` along each axis before `k`, row-major.
        let mut rest = o;
        let mut at = vec![0usize; k];
        for a in (0..k).rev() {
            at[a] = rest % slice[a].1;
            rest /= slice[a].1;
        }
        let mut r = 0;
        while r < slice[k].1 {
            let n = rows.min(slice[k].1 - r);
            let mut piece: Vec<(usize, usize)> = (0..k).map(|a| (slice[a].0 + at[a], 1)).collect();
            piece.push((slice[k].0 + r, n));
            piece.extend_from_slice(&slice[k + 1..]);
            out.push(((o * slice[k].1 + r) * inner(k), piece));
            r += n;
        }
    }
    out
}

/// Puts one object's values into the hyperslab `slice`, packing unpacked
/// data and writing NaN as `fill` (NaN stays NaN without one), converted
/// and put [`PUT_STEP_BYTES`] at a time so that no second copy of the
/// object is held.
fn put_data(
    var: &mut netcdf::VariableMut<'_>,
    plan: &VarPlan,
    obj: &tgm::DecodedObject,
    slice: &[(usize, usize)],
    fill: Option<f64>,
    count: Option<u64>,
) -> Result<(), PutError> {
    let d = &obj.descriptor;
    let ty = match plan.ty {
        VarType::Fixed(t) => t,
        _ => return put_strings(var, &obj.data, extents(slice), count),
    };
    if plan.unpacked && d.dtype != Dtype::Float64 {
        return Err(PutError::Invalid(format!(
            "unpacked data is {}, not float64",
            d.dtype
        )));
    }
    if !plan.unpacked && d.dtype != ty.dtype() {
        return Err(PutError::Invalid(format!(
            "data is {} but the variable is {}",
            d.dtype,
            ty.name()
        )));
    }
    let width = if plan.unpacked { 8 } else { ty.size() };
    let elements = slice.iter().fold(1usize, |a, &(_, n)| a.saturating_mul(n));
    if elements.checked_mul(width) != Some(obj.data.len()) {
        return Err(PutError::Invalid(format!(
            "{} bytes of data for a slice of {elements} elements of {width} bytes",
            obj.data.len()
        )));
    }
    for (first, piece) in pieces(slice, (PUT_STEP_BYTES / width).max(1)) {
        let n: usize = piece.iter().map(|&(_, n)| n).product();
        let data = &obj.data[first * width..(first + n) * width];
        put_piece(var, plan, ty, data, extents(&piece), fill)?;
    }
    Ok(())
}

/// [`put_data`] of one piece: `data` holds its values.
fn put_piece(
    var: &mut netcdf::VariableMut<'_>,
    plan: &VarPlan,
    ty: NcNum,
    data: &[u8],
    extents: Vec<netcdf::Extent>,
    fill: Option<f64>,
) -> Result<(), PutError> {
    if plan.unpacked {
        let s = attr_f64(plan, "scale_factor").unwrap_or(1.0);
        let o = attr_f64(plan, "add_offset").unwrap_or(0.0);
        let values: Vec<f64> = data
            .chunks_exact(8)
            .map(|c| f64::from_ne_bytes(c.try_into().expect("chunk width")))
            .map(|v| {
                if v.is_nan() {
                    fill.ok_or_else(|| {
                        PutError::Invalid(
                            "missing values but no _FillValue or missing_value".into(),
                        )
                    })
                } else if ty.is_float() {
                    Ok((v - o) / s)
                } else {
                    Ok(((v - o) / s).round())
                }
            })
            .collect::<Result<_, _>>()?;
        return put_f64(var, ty, &values, extents);
    }
    macro_rules! put_raw {
        ($t:ty) => {{
            let vals: Vec<$t> = data
                .chunks_exact(std::mem::size_of::<$t>())
                .map(|c| <$t>::from_ne_bytes(c.try_into().expect("chunk width")))
                .collect();
            var.put_values(&vals, extents)?;
        }};
    }
    macro_rules! put_float {
        ($t:ty) => {{
            let f = fill.map(|f| f as $t);
            let vals: Vec<$t> = data
                .chunks_exact(std::mem::size_of::<$t>())
                .map(|c| <$t>::from_ne_bytes(c.try_into().expect("chunk width")))
                .map(|v| match f {
                    Some(f) if v.is_nan() => f,
                    _ => v,
                })
                .collect();
            var.put_values(&vals, extents)?;
        }};
    }
    match ty {
        NcNum::Char => {
            let vals: Vec<NcChar> = data.iter().map(|&b| NcChar(b)).collect();
            var.put_values(&vals, extents)?;
        }
        NcNum::I8 => put_raw!(i8),
        NcNum::U8 => put_raw!(u8),
        NcNum::I16 => put_raw!(i16),
        NcNum::U16 => put_raw!(u16),
        NcNum::I32 => put_raw!(i32),
        NcNum::U32 => put_raw!(u32),
        NcNum::I64 => put_raw!(i64),
        NcNum::U64 => put_raw!(u64),
        NcNum::F32 => put_float!(f32),
        NcNum::F64 => put_float!(f64),
    }
    Ok(())
}

/// Puts the strings of a `string` object (each element's bytes followed
/// by a NUL), refusing a count other than the slice's `count` elements.
fn put_strings(
    var: &mut netcdf::VariableMut<'_>,
    data: &[u8],
    extents: Vec<netcdf::Extent>,
    count: Option<u64>,
) -> Result<(), PutError> {
    let Some(body) = data.strip_suffix(&[0]).or(data.is_empty().then_some(data)) else {
        return Err(PutError::Invalid(
            "string data does not end with a NUL".into(),
        ));
    };
    let strings: Vec<std::ffi::CString> = if data.is_empty() {
        Vec::new()
    } else {
        body.split(|&b| b == 0)
            .map(|s| std::ffi::CString::new(s).expect("split at every NUL"))
            .collect()
    };
    if Some(strings.len() as u64) != count {
        return Err(PutError::Invalid(format!(
            "{} strings for a slice of {} elements",
            strings.len(),
            count.map_or_else(|| "too many".into(), |c| c.to_string())
        )));
    }
    if strings.is_empty() {
        return Ok(());
    }
    var.put_values(&string_ptrs(&strings), extents)?;
    Ok(())
}

/// Puts f64 values as type `ty`, refusing values outside its range.
fn put_f64(
    var: &mut netcdf::VariableMut<'_>,
    ty: NcNum,
    values: &[f64],
    extents: Vec<netcdf::Extent>,
) -> Result<(), PutError> {
    macro_rules! put_int {
        ($t:ty) => {{
            let vals: Vec<$t> = values
                .iter()
                .map(|&v| {
                    if v >= <$t>::MIN as f64 && v <= <$t>::MAX as f64 {
                        Ok(v as $t)
                    } else {
                        Err(PutError::Invalid(format!(
                            "{v} does not fit the packed type {}",
                            ty.name()
                        )))
                    }
                })
                .collect::<Result<_, _>>()?;
            var.put_values(&vals, extents)?;
        }};
    }
    match ty {
        NcNum::I8 => put_int!(i8),
        NcNum::Char | NcNum::U8 => put_int!(u8),
        NcNum::I16 => put_int!(i16),
        NcNum::U16 => put_int!(u16),
        NcNum::I32 => put_int!(i32),
        NcNum::U32 => put_int!(u32),
        NcNum::I64 => put_int!(i64),
        NcNum::U64 => put_int!(u64),
        NcNum::F32 => {
            let vals: Vec<f32> = values.iter().map(|&v| v as f32).collect();
            var.put_values(&vals, extents)?;
        }
        NcNum::F64 => var.put_values(values, extents)?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_slice_in_order_as_contiguous_runs() {
        let slice = [(2, 3), (0, 4), (1, 5)];
        for step in [1, 3, 5, 7, 20, 21, 59, 60, 1000] {
            let p = pieces(&slice, step);
            let mut next = 0;
            for (first, piece) in &p {
                assert_eq!(*first, next, "step {step}");
                let n: usize = piece.iter().map(|&(_, n)| n).product();
                assert!(n <= step, "step {step}: {n} elements");
                // Every element of the piece is the next in row-major order.
                for e in 0..n {
                    let (mut rest, mut idx) = (e, vec![0; 3]);
                    for a in (0..3).rev() {
                        idx[a] = piece[a].0 + rest % piece[a].1;
                        rest /= piece[a].1;
                    }
                    let lin = ((idx[0] - 2) * 4 + idx[1]) * 5 + (idx[2] - 1);
                    assert_eq!(lin, first + e, "step {step}");
                }
                next += n;
            }
            assert_eq!(next, 60, "step {step}");
        }
        assert_eq!(pieces(&[], 4), [(0, vec![])]);
        assert_eq!(pieces(&[(0, 0), (0, 9)], 4), [(0, vec![(0, 0), (0, 9)])]);
    }

    #[test]
    fn chunks_hold_one_record_and_at_most_the_chunk_limit() {
        assert_eq!(
            chunk_shape(&[(10, true), (3, false), (4, false)], 8),
            [1, 3, 4]
        );
        let c = chunk_shape(&[(4096, false), (4096, false)], 8);
        assert!(c.iter().product::<usize>() * 8 <= MAX_CHUNK_BYTES, "{c:?}");
        assert_eq!(c[1], 4096);
        assert_eq!(chunk_shape(&[(0, true), (0, false)], 4), [1, 1]);
    }

    #[test]
    fn a_recorded_chunk_larger_than_its_variable_and_the_default_is_cut_to_it() {
        let dims = [(1usize, true), (721, false), (1440, false)];
        // A source's chunks: within the variable, or a record chunk of the
        // default size along an unlimited dimension of one record.
        assert_eq!(recorded_chunks(&[1, 721, 1440], &dims, 4), [1, 721, 1440]);
        let records = [(3, true), (1, false), (1, false)];
        assert_eq!(recorded_chunks(&[1024, 1, 1], &records, 8), [1024, 1, 1]);
        // One record of a source chunked 8 records deep (33 MB), and a
        // chunk the archive only claims: cut to the variable.
        assert_eq!(recorded_chunks(&[8, 721, 1440], &dims, 4), [1, 721, 1440]);
        let claimed = [1 << 20, 1 << 20, 1 << 20];
        assert_eq!(recorded_chunks(&claimed, &dims, 4), [1, 721, 1440]);
        assert_eq!(recorded_chunks(&[usize::MAX, 2, 2], &dims, 8), [1, 2, 2]);
    }
}
