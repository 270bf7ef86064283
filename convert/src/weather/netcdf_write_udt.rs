//! The part of `to-netcdf` the `netcdf` crate cannot do: the user-defined
//! types an archive records (`_extra_.netcdf.types`, and each variable's
//! `netcdf.enum`/`netcdf.opaque`/`netcdf.compound`), attributes of enum
//! types, and the values of variables of user-defined types, written
//! through netCDF-C on the file the crate has open (`spec/convert.md`
//! "NetCDF user-defined types").

use std::ffi::CString;

use netcdf::types::{CompoundType, NcVariableType};
use netcdf::AttributeValue;
use tgm::cbor::Value;
use tgm::{DecodedMessage, Dtype};

use super::netcdf::NetcdfError;
use super::netcdf_attrs::to_native;
use super::netcdf_ffi::{AttrType, StorageHandle, STRING_ELEMENT, VLEN_ELEMENT};
use super::netcdf_read::{Attrs, NcNum, VarType, MAX_VARIABLE_BYTES};
use super::netcdf_udt::{enum_base, from_cbor, leaves, type_name};
use super::netcdf_write::{split_path, VarPlan};

/// The metadata keys of a variable's user-defined type, by kind.
const KINDS: [&str; 4] = ["enum", "opaque", "compound", "vlen"];

fn invalid(m: impl Into<String>) -> NetcdfError {
    NetcdfError::Invalid(m.into())
}

fn get<'a>(m: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    m.iter()
        .find(|(k, _)| k.as_text() == Some(key))
        .map(|(_, v)| v)
}

/// The user-defined type recorded in a variable's `netcdf` map, if any.
pub fn user_type(nc: &[(Value, Value)]) -> Result<Option<NcVariableType>, String> {
    let mut found = None;
    for kind in KINDS {
        if let Some(def) = get(nc, kind) {
            if found.is_some() || def.get("kind").and_then(Value::as_text) != Some(kind) {
                return Err(format!("netcdf.{kind} is not one {kind} definition"));
            }
            found = Some(from_cbor(def).map_err(|e| format!("netcdf.{kind}: {e}"))?);
        }
    }
    Ok(found)
}

/// Every type of every message's `_extra_.netcdf.types`, as `(group
/// path, definition)`, first occurrence first; a name defined twice
/// differently in one group is refused.
pub fn types_of(messages: &[DecodedMessage]) -> Result<Vec<(String, NcVariableType)>, NetcdfError> {
    let mut out: Vec<(String, NcVariableType)> = Vec::new();
    for (m, msg) in messages.iter().enumerate() {
        let Some(list) = msg
            .metadata
            .extra
            .get("netcdf")
            .and_then(|nc| nc.get("types"))
        else {
            continue;
        };
        let list = list
            .as_array()
            .ok_or_else(|| invalid(format!("message {m}: _extra_.netcdf.types is not a list")))?;
        for def in list {
            let group = def.get("group").and_then(Value::as_text).unwrap_or("");
            let t = from_cbor(def)
                .map_err(|e| invalid(format!("message {m}: _extra_.netcdf.types: {e}")))?;
            add(&mut out, group, t).map_err(invalid)?;
        }
    }
    Ok(out)
}

/// Adds `t` to `types` in `group` unless there, refusing a different
/// type of the same name there.
fn add(
    types: &mut Vec<(String, NcVariableType)>,
    group: &str,
    t: NcVariableType,
) -> Result<(), String> {
    let name = type_name(&t).unwrap_or("");
    match types
        .iter()
        .find(|(g, x)| g == group && type_name(x) == Some(name))
    {
        Some((_, x)) if *x == t => Ok(()),
        Some(_) => Err(format!("type {name} is defined twice, differently")),
        None => {
            types.push((group.to_string(), t));
            Ok(())
        }
    }
}

/// Adds the type of `v` (and the user-defined types its compound members
/// use, first) to `types` when no group on its path defines that name.
pub fn add_missing(types: &mut Vec<(String, NcVariableType)>, v: &VarPlan) -> Result<(), String> {
    let Some(t) = &v.user else {
        return Ok(());
    };
    let (group, _) = split_path(&v.name);
    add_with_members(types, group, t).map_err(|e| format!("variable {}: {e}", v.name))
}

fn add_with_members(
    types: &mut Vec<(String, NcVariableType)>,
    group: &str,
    t: &NcVariableType,
) -> Result<(), String> {
    let Some(name) = type_name(t) else {
        return Ok(());
    };
    if let NcVariableType::Compound(c) = t {
        for f in &c.fields {
            add_with_members(types, group, &f.basetype)?;
        }
    }
    let visible = |g: &str| group == g || group.starts_with(&format!("{g}/")) || g.is_empty();
    match types
        .iter()
        .find(|(g, x)| visible(g) && type_name(x) == Some(name))
    {
        Some((_, x)) if x == t => Ok(()),
        Some(_) => Err(format!(
            "type {name} differs from the one the archive defines"
        )),
        None => add(types, group, t.clone()),
    }
}

/// Writes the attributes of one owner (`var` of `group`, or the group's
/// own for `None`) in order: one of an enum type through `raw`, every
/// other through `crate_put`.
pub fn put_attrs(
    raw: &StorageHandle,
    group: &str,
    var: Option<&str>,
    attrs: &Attrs,
    mut crate_put: impl FnMut(&str, &AttributeValue) -> Result<(), NetcdfError>,
) -> Result<(), NetcdfError> {
    for (name, v) in &attrs.list {
        match attrs.enum_types.iter().find(|(a, _)| a == name) {
            None => crate_put(name, v)?,
            Some((_, e)) => put_attr(raw, group, var, name, v, Some(e)).map_err(invalid)?,
        }
    }
    Ok(())
}

/// Writes the values of object `i` of `msg` (a variable of a
/// user-defined type) into the slice `(start, count)` per dimension.
pub fn put_values(
    raw: &StorageHandle,
    msg: &DecodedMessage,
    i: usize,
    plan: &VarPlan,
    slice: &[(usize, usize)],
) -> Result<(), String> {
    let count: Vec<usize> = slice.iter().map(|s| s.1).collect();
    let start: Vec<usize> = slice.iter().map(|s| s.0).collect();
    let (data, width) = values(msg, i, plan, &count)?;
    let (group, short) = split_path(&plan.name);
    raw.put_slice(group, short, &start, &count, width, &data)
}

/// Writes one attribute, as enum type `enum_type` when given.
fn put_attr(
    h: &StorageHandle,
    group: &str,
    var: Option<&str>,
    name: &str,
    v: &AttributeValue,
    enum_type: Option<&str>,
) -> Result<(), String> {
    if let AttributeValue::Strs(strs) = v {
        let strs: Vec<CString> = strs
            .iter()
            .map(|s| CString::new(s.as_str()).map_err(|_| format!("attribute {name}: a NUL")))
            .collect::<Result<_, _>>()?;
        let ptrs: Vec<u8> = strs
            .iter()
            .flat_map(|s| (s.as_ptr() as usize).to_ne_bytes())
            .collect();
        let ty = AttrType::Basic(netcdf_sys::NC_STRING, STRING_ELEMENT);
        return h.put_attr(group, var, name, ty, strs.len(), &ptrs);
    }
    let (xtype, len, width, bytes) =
        to_native(v).ok_or_else(|| format!("attribute {name}: no native form"))?;
    let ty = match enum_type {
        Some(e) => AttrType::User(e, width),
        None => AttrType::Basic(xtype, width),
    };
    h.put_attr(group, var, name, ty, len, &bytes)
}

/// The native bytes of the slice object `i` of `msg` fills in `plan`'s
/// variable (`count` per dimension), and the bytes of one element.
fn values(
    msg: &DecodedMessage,
    i: usize,
    plan: &VarPlan,
    count: &[usize],
) -> Result<(Vec<u8>, usize), String> {
    let n = count
        .iter()
        .try_fold(1usize, |a, &c| a.checked_mul(c))
        .ok_or("the slice is too large")?;
    let obj = &msg.objects[i];
    let (dtype, width) = match (&plan.user, plan.ty) {
        (Some(NcVariableType::Enum(e)), _) => (enum_base(e).dtype(), enum_base(e).size()),
        (Some(NcVariableType::Opaque(o)), _) => (Dtype::Uint8, o.size),
        (Some(NcVariableType::Compound(c)), VarType::Compound(size)) => {
            return Ok((compound_values(msg, plan, c, size, n)?, size))
        }
        (Some(NcVariableType::Vlen(_)), VarType::Vlen(base)) => {
            return Ok((vlen_elements(msg, plan, base, n)?, VLEN_ELEMENT))
        }
        _ => return Err("a variable without a kept user-defined type".into()),
    };
    if obj.descriptor.dtype != dtype || n.checked_mul(width) != Some(obj.data.len()) {
        return Err(format!(
            "{} bytes of {} for {n} elements of {width} bytes of {}",
            obj.data.len(),
            obj.descriptor.dtype,
            dtype
        ));
    }
    Ok((obj.data.clone(), width))
}

/// The `n` elements of compound `c` (of `size` bytes each) rebuilt from
/// the member objects of `plan`'s variable in `msg`, padding zeroed. Every
/// member is checked before the elements are allocated, and padding may
/// at most octuple the members' bytes (alignment pads a member to at
/// most 8 bytes), so an archive's definition cannot size the buffer
/// beyond what its objects justify.
fn compound_values(
    msg: &DecodedMessage,
    plan: &VarPlan,
    c: &CompoundType,
    size: usize,
    n: usize,
) -> Result<Vec<u8>, String> {
    let mut members = Vec::new();
    for leaf in leaves(c) {
        let path: Vec<Value> = leaf.path.iter().map(|p| Value::from(p.as_str())).collect();
        let member = leaf.path.join(".");
        let at = (0..msg.objects.len())
            .find(|&j| {
                let nc = msg.metadata.base.get(j).and_then(|e| e.get("netcdf"));
                nc.and_then(|nc| nc.get("variable"))
                    .and_then(Value::as_text)
                    == Some(&plan.name)
                    && nc.and_then(|nc| nc.get("member")).and_then(Value::as_array)
                        == Some(path.as_slice())
            })
            .ok_or_else(|| format!("member {member} of compound {} is missing", c.name))?;
        let obj = &msg.objects[at];
        let dtype = match leaf.kind {
            super::netcdf_udt::LeafKind::Num(t) => t.dtype(),
            super::netcdf_udt::LeafKind::Opaque(_) => Dtype::Uint8,
        };
        if obj.descriptor.dtype != dtype
            || n.checked_mul(leaf.bytes_per_element()) != Some(obj.data.len())
        {
            return Err(format!(
                "member {member}: {} bytes of {}, expected {n} elements of {} bytes of {dtype}",
                obj.data.len(),
                obj.descriptor.dtype,
                leaf.bytes_per_element()
            ));
        }
        members.push((leaf, &obj.data));
    }
    let member_bytes: usize = members.iter().map(|(_, d)| d.len()).sum();
    let total = n
        .checked_mul(size)
        .filter(|&b| b as u64 <= MAX_VARIABLE_BYTES)
        .filter(|&b| b <= member_bytes.saturating_mul(8).saturating_add(size))
        .ok_or_else(|| {
            format!(
                "{n} elements of compound {} ({size} bytes each) exceed the size limit or 8 times its members' {member_bytes} bytes",
                c.name
            )
        })?;
    let mut buf = vec![0u8; total];
    for (leaf, data) in members {
        leaf.scatter(data, &mut buf, size);
    }
    Ok(buf)
}

/// Object `part` (`values` or `lengths`) of `plan`'s vlen variable in
/// `msg`.
fn vlen_part<'a>(
    msg: &'a DecodedMessage,
    plan: &VarPlan,
    part: &str,
) -> Result<&'a tgm::DecodedObject, String> {
    (0..msg.objects.len())
        .find(|&j| {
            let nc = msg.metadata.base.get(j).and_then(|e| e.get("netcdf"));
            nc.and_then(|nc| nc.get("variable"))
                .and_then(Value::as_text)
                == Some(&plan.name)
                && nc.and_then(|nc| nc.get("part")).and_then(Value::as_text) == Some(part)
        })
        .map(|j| &msg.objects[j])
        .ok_or_else(|| format!("the {part} of vlen variable {} are missing", plan.name))
}

/// The `n` netCDF-C `nc_vlen_t` elements of `plan`'s vlen variable in
/// `msg`, pointing into its values object (which must outlive the write),
/// after checking the lengths (u64, `n` of them) add up to the values.
fn vlen_elements(
    msg: &DecodedMessage,
    plan: &VarPlan,
    base: NcNum,
    n: usize,
) -> Result<Vec<u8>, String> {
    let values = vlen_part(msg, plan, "values")?;
    let lengths = vlen_part(msg, plan, "lengths")?;
    if values.descriptor.dtype != base.dtype()
        || lengths.descriptor.dtype != Dtype::Uint64
        || n.checked_mul(8) != Some(lengths.data.len())
    {
        return Err(format!(
            "vlen variable {}: values of {} and {} lengths of {} for {n} elements of {}",
            plan.name,
            values.descriptor.dtype,
            lengths.data.len() / 8,
            lengths.descriptor.dtype,
            base.name()
        ));
    }
    let mut out = Vec::with_capacity(n * VLEN_ELEMENT);
    let mut at = 0usize;
    for c in lengths.data.chunks_exact(8) {
        let len = usize::try_from(u64::from_ne_bytes(c.try_into().expect("chunk width")))
            .map_err(|_| "a vlen length overflows")?;
        let end = len
            .checked_mul(base.size())
            .and_then(|b| b.checked_add(at))
            .filter(|&e| e <= values.data.len())
            .ok_or_else(|| format!("vlen variable {}: the lengths exceed the values", plan.name))?;
        let p = values.data[at..end].as_ptr() as usize;
        out.extend_from_slice(&len.to_ne_bytes());
        out.extend_from_slice(&p.to_ne_bytes());
        at = end;
    }
    if at != values.data.len() {
        return Err(format!(
            "vlen variable {}: the lengths cover {at} of the {} value bytes",
            plan.name,
            values.data.len()
        ));
    }
    Ok(out)
}
