//! NetCDF-4 user-defined types kept by tgm (`spec/convert.md` "NetCDF
//! user-defined types"): enum, opaque and compound types as CBOR
//! definitions, checked before anything is sized by them, and the members
//! of a compound as flat leaves gathered from, or scattered into, the
//! element bytes netCDF-C reads and writes.
//!
//! A definition is a map: `{kind: "enum", name, base, members: [[name,
//! value], …]}`, `{kind: "opaque", name, size}`, `{kind: "vlen", name,
//! base}` (a vlen of a number or `char`; never inside a compound) or
//! `{kind: "compound", name, size, members: [{name, offset, type, dims},
//! …]}`, where a
//! member's `type` is a CDL type name (`int`, …) or a nested definition
//! and `dims` its array dimensions (empty for a scalar member).

use netcdf::types::{
    CompoundType, CompoundTypeField, EnumType, EnumTypeValues, NcVariableType, OpaqueType, VlenType,
};
use tgm::cbor::Value;

use super::netcdf_read::{NcNum, MAX_VARIABLE_BYTES};

/// Most members (enum names, compound fields) one definition may have.
pub const MAX_MEMBERS: usize = 4096;
/// Deepest nesting of compound types.
pub const MAX_DEPTH: usize = 8;

/// The name of a user-defined type; `None` for a basic type.
pub fn type_name(t: &NcVariableType) -> Option<&str> {
    match t {
        NcVariableType::Compound(c) => Some(&c.name),
        NcVariableType::Opaque(o) => Some(&o.name),
        NcVariableType::Enum(e) => Some(&e.name),
        NcVariableType::Vlen(v) => Some(&v.name),
        _ => None,
    }
}

/// The integer type an enum stores its values as.
pub fn enum_base(e: &EnumType) -> NcNum {
    match e.fieldvalues {
        EnumTypeValues::U8(_) => NcNum::U8,
        EnumTypeValues::I8(_) => NcNum::I8,
        EnumTypeValues::U16(_) => NcNum::U16,
        EnumTypeValues::I16(_) => NcNum::I16,
        EnumTypeValues::U32(_) => NcNum::U32,
        EnumTypeValues::I32(_) => NcNum::I32,
        EnumTypeValues::U64(_) => NcNum::U64,
        EnumTypeValues::I64(_) => NcNum::I64,
    }
}

/// The CBOR definition of `t`: a CDL name for a basic type, a map for a
/// user-defined one; `Err` names what cannot be kept (a vlen of anything
/// but a number or `char`, a vlen or string at any depth of a compound).
pub fn to_cbor(t: &NcVariableType) -> Result<Value, String> {
    match t {
        NcVariableType::Vlen(v) => {
            let base = NcNum::from_nc(&v.basetype)
                .ok_or_else(|| format!("vlen type {} of a {:?} is not kept", v.name, v.basetype))?;
            Ok(Value::text_map([
                ("kind", Value::from("vlen")),
                ("name", Value::from(v.name.as_str())),
                ("base", Value::from(base.name())),
            ]))
        }
        t => member_cbor(t),
    }
}

/// [`to_cbor`] of a compound member (or a fixed-size type): no vlen.
fn member_cbor(t: &NcVariableType) -> Result<Value, String> {
    Ok(match t {
        NcVariableType::Enum(e) => {
            fn pairs<T: Copy>(names: &[String], v: &[T], f: impl Fn(T) -> Value) -> Vec<Value> {
                names
                    .iter()
                    .zip(v)
                    .map(|(n, &x)| Value::Array(vec![Value::from(n.as_str()), f(x)]))
                    .collect()
            }
            let n = &e.fieldnames;
            let members = match &e.fieldvalues {
                EnumTypeValues::U8(v) => pairs(n, v, |x| Value::from(u64::from(x))),
                EnumTypeValues::U16(v) => pairs(n, v, |x| Value::from(u64::from(x))),
                EnumTypeValues::U32(v) => pairs(n, v, |x| Value::from(u64::from(x))),
                EnumTypeValues::U64(v) => pairs(n, v, Value::from),
                EnumTypeValues::I8(v) => pairs(n, v, |x| Value::from_i64(x.into())),
                EnumTypeValues::I16(v) => pairs(n, v, |x| Value::from_i64(x.into())),
                EnumTypeValues::I32(v) => pairs(n, v, |x| Value::from_i64(x.into())),
                EnumTypeValues::I64(v) => pairs(n, v, Value::from_i64),
            };
            Value::text_map([
                ("kind", Value::from("enum")),
                ("name", Value::from(e.name.as_str())),
                ("base", Value::from(enum_base(e).name())),
                ("members", Value::Array(members)),
            ])
        }
        NcVariableType::Opaque(o) => Value::text_map([
            ("kind", Value::from("opaque")),
            ("name", Value::from(o.name.as_str())),
            ("size", Value::from(o.size as u64)),
        ]),
        NcVariableType::Compound(c) => {
            let members = c
                .fields
                .iter()
                .map(|f| {
                    let ty =
                        member_cbor(&f.basetype).map_err(|e| format!("member {}: {e}", f.name))?;
                    let dims = f.arraydims.iter().flatten();
                    Ok(Value::text_map([
                        ("name", Value::from(f.name.as_str())),
                        ("offset", Value::from(f.offset as u64)),
                        ("type", ty),
                        (
                            "dims",
                            Value::Array(dims.map(|&d| Value::from(d as u64)).collect()),
                        ),
                    ]))
                })
                .collect::<Result<_, String>>()?;
            Value::text_map([
                ("kind", Value::from("compound")),
                ("name", Value::from(c.name.as_str())),
                ("size", Value::from(c.size as u64)),
                ("members", Value::Array(members)),
            ])
        }
        NcVariableType::Vlen(v) => {
            return Err(format!(
                "vlen type {} is not kept inside a compound",
                v.name
            ))
        }
        NcVariableType::String => return Err("string is not kept inside a compound".into()),
        NcVariableType::Char => Value::from("char"),
        t => match NcNum::from_nc(t) {
            Some(n) => Value::from(n.name()),
            None => return Err(format!("type {t:?} is not kept")),
        },
    })
}

/// The definition `v` describes, checked: every count and size within
/// [`MAX_MEMBERS`], [`MAX_DEPTH`] and [`MAX_VARIABLE_BYTES`], every
/// compound member inside its compound and apart from the others.
pub fn from_cbor(v: &Value) -> Result<NcVariableType, String> {
    parse(v, 0)
}

/// `t` checked as [`from_cbor`] checks a definition; what a file declares
/// goes through this before anything is sized by it.
pub fn checked(t: &NcVariableType) -> Result<NcVariableType, String> {
    from_cbor(&to_cbor(t)?)
}

fn text<'a>(v: &'a Value, key: &str, what: &str) -> Result<&'a str, String> {
    v.get(key)
        .and_then(Value::as_text)
        .ok_or_else(|| format!("{what}: no text {key}"))
}

fn size_at(v: &Value, key: &str, what: &str) -> Result<usize, String> {
    v.get(key)
        .and_then(Value::as_u64)
        .filter(|&n| n <= MAX_VARIABLE_BYTES)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("{what}: {key} is not a size up to {MAX_VARIABLE_BYTES}"))
}

fn list<'a>(v: &'a Value, key: &str, what: &str) -> Result<&'a [Value], String> {
    v.get(key)
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty() && a.len() <= MAX_MEMBERS)
        .ok_or_else(|| format!("{what}: {key} is not a list of 1 to {MAX_MEMBERS} entries"))
}

fn parse(v: &Value, depth: usize) -> Result<NcVariableType, String> {
    if let Some(name) = v.as_text() {
        return match name {
            "char" => Ok(NcVariableType::Char),
            n => NcNum::from_name(n)
                .map(|t| t.nc_type())
                .ok_or_else(|| format!("unknown type {n:?}")),
        };
    }
    if depth > MAX_DEPTH {
        return Err(format!("compound types nest deeper than {MAX_DEPTH}"));
    }
    let kind = text(v, "kind", "a type definition")?;
    let name = text(v, "name", "a type definition")?.to_string();
    let what = format!("{kind} type {name}");
    match kind {
        "opaque" => {
            let size = size_at(v, "size", &what)?;
            if size == 0 {
                return Err(format!("{what}: size 0"));
            }
            Ok(NcVariableType::Opaque(OpaqueType { name, size }))
        }
        "enum" => parse_enum(v, name, &what),
        "vlen" if depth == 0 => {
            let base = text(v, "base", &what)?;
            let base = NcNum::from_name(base)
                .ok_or_else(|| format!("{what}: base {base:?} is not a number or char"))?;
            Ok(NcVariableType::Vlen(VlenType {
                name,
                basetype: Box::new(base.nc_type()),
            }))
        }
        "compound" => parse_compound(v, name, &what, depth),
        other => Err(format!("{what}: unknown kind {other:?}")),
    }
}

fn parse_enum(v: &Value, name: String, what: &str) -> Result<NcVariableType, String> {
    let base = text(v, "base", what)?;
    let base = NcNum::from_name(base)
        .filter(|b| !b.is_float() && *b != NcNum::Char)
        .ok_or_else(|| format!("{what}: base {base:?} is not an integer type"))?;
    let mut names = Vec::new();
    let mut values = Vec::new();
    for m in list(v, "members", what)? {
        match m.as_array() {
            Some([Value::Text(n), x]) => {
                names.push(n.clone());
                values.push(x);
            }
            _ => return Err(format!("{what}: a member is not [name, value]")),
        }
    }
    macro_rules! vals {
        ($t:ty, $get:ident) => {
            values
                .iter()
                .map(|x| x.$get().and_then(|n| <$t>::try_from(n).ok()))
                .collect::<Option<Vec<$t>>>()
                .map(EnumTypeValues::from)
        };
    }
    let fieldvalues = match base {
        NcNum::I8 => vals!(i8, as_i64),
        NcNum::U8 => vals!(u8, as_u64),
        NcNum::I16 => vals!(i16, as_i64),
        NcNum::U16 => vals!(u16, as_u64),
        NcNum::I32 => vals!(i32, as_i64),
        NcNum::U32 => vals!(u32, as_u64),
        NcNum::I64 => vals!(i64, as_i64),
        _ => vals!(u64, as_u64),
    }
    .ok_or_else(|| format!("{what}: a member value does not fit {}", base.name()))?;
    Ok(NcVariableType::Enum(EnumType {
        name,
        fieldnames: names,
        fieldvalues,
    }))
}

fn parse_compound(
    v: &Value,
    name: String,
    what: &str,
    depth: usize,
) -> Result<NcVariableType, String> {
    let size = size_at(v, "size", what)?;
    let mut fields = Vec::new();
    let mut spans = Vec::new();
    for m in list(v, "members", what)? {
        let mname = text(m, "name", what)?.to_string();
        let mwhat = format!("{what} member {mname}");
        let offset = size_at(m, "offset", &mwhat)?;
        let basetype = parse(m.get("type").unwrap_or(&Value::Null), depth + 1)
            .map_err(|e| format!("{mwhat}: {e}"))?;
        let dims: Vec<usize> = m
            .get("dims")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{mwhat}: no dims list"))?
            .iter()
            .map(|d| {
                d.as_u64()
                    .filter(|&d| d > 0)
                    .and_then(|d| usize::try_from(d).ok())
            })
            .collect::<Option<_>>()
            .filter(|d: &Vec<usize>| d.len() <= 4)
            .ok_or_else(|| format!("{mwhat}: dims are not up to 4 positive lengths"))?;
        let extent = dims
            .iter()
            .try_fold(basetype.size(), |a, &d| a.checked_mul(d))
            .and_then(|e| e.checked_add(offset).map(|end| (e, end)))
            .filter(|&(_, end)| end <= size)
            .ok_or_else(|| format!("{mwhat}: lies outside the {size} bytes of the compound"))?;
        spans.push((offset, extent.1, mname.clone()));
        fields.push(CompoundTypeField {
            name: mname,
            basetype,
            arraydims: (!dims.is_empty()).then_some(dims),
            offset,
        });
    }
    spans.sort();
    if let Some(w) = spans.windows(2).find(|w| w[1].0 < w[0].1) {
        return Err(format!("{what}: members {} and {} overlap", w[0].2, w[1].2));
    }
    Ok(NcVariableType::Compound(CompoundType {
        name,
        size,
        fields,
    }))
}

/// What one leaf of a compound holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafKind {
    /// A basic or enum (as its base) value.
    Num(NcNum),
    /// An opaque value of this many bytes.
    Opaque(usize),
}

impl LeafKind {
    /// Bytes of one value.
    pub fn width(self) -> usize {
        match self {
            LeafKind::Num(n) => n.size(),
            LeafKind::Opaque(s) => s,
        }
    }
}

/// A member of a compound that is not itself a compound, reached through
/// nested compounds: its dotted path, what it holds, its offset in the
/// element, and its array axes as `(length, stride in bytes)`, outermost
/// first (every array of every compound on the way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    pub path: Vec<String>,
    pub kind: LeafKind,
    pub offset: usize,
    pub axes: Vec<(usize, usize)>,
}

impl Leaf {
    /// The axes' lengths, then the opaque size for an opaque leaf.
    pub fn tail_shape(&self) -> Vec<usize> {
        let mut s: Vec<usize> = self.axes.iter().map(|a| a.0).collect();
        if let LeafKind::Opaque(n) = self.kind {
            s.push(n);
        }
        s
    }

    /// Bytes of this leaf in one element of the compound.
    pub fn bytes_per_element(&self) -> usize {
        self.axes.iter().map(|a| a.0).product::<usize>() * self.kind.width()
    }

    /// The leaf's bytes of `n` elements of `elem` bytes each in `buf`,
    /// element after element (C order of its axes inside each). `buf`
    /// must hold `n * elem` bytes of a checked compound.
    pub fn gather(&self, buf: &[u8], elem: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(buf.len() / elem.max(1) * self.bytes_per_element());
        for e in buf.chunks_exact(elem) {
            self.walk(0, self.offset, &mut |at, w| {
                out.extend_from_slice(&e[at..at + w])
            });
        }
        out
    }

    /// The inverse of [`Leaf::gather`]: `data` written into `buf`.
    pub fn scatter(&self, data: &[u8], buf: &mut [u8], elem: usize) {
        let mut src = data.chunks_exact(self.kind.width());
        for e in buf.chunks_exact_mut(elem) {
            self.walk(0, self.offset, &mut |at, w| {
                if let Some(s) = src.next() {
                    e[at..at + w].copy_from_slice(s);
                }
            });
        }
    }

    fn walk(&self, axis: usize, at: usize, f: &mut dyn FnMut(usize, usize)) {
        match self.axes.get(axis) {
            None => f(at, self.kind.width()),
            Some(&(n, stride)) => {
                for i in 0..n {
                    self.walk(axis + 1, at + i * stride, f);
                }
            }
        }
    }
}

/// The leaves of a checked compound, in member order (depth first).
pub fn leaves(c: &CompoundType) -> Vec<Leaf> {
    let mut out = Vec::new();
    collect(c, &[], 0, &[], &mut out);
    out
}

fn collect(
    c: &CompoundType,
    path: &[String],
    base: usize,
    axes: &[(usize, usize)],
    out: &mut Vec<Leaf>,
) {
    for f in &c.fields {
        let mut path = path.to_vec();
        path.push(f.name.clone());
        let mut axes = axes.to_vec();
        let dims = f.arraydims.as_deref().unwrap_or(&[]);
        let mut stride = f.basetype.size();
        let start = axes.len();
        for &d in dims.iter().rev() {
            axes.insert(start, (d, stride));
            stride *= d;
        }
        let offset = base + f.offset;
        let kind = match &f.basetype {
            NcVariableType::Compound(inner) => {
                collect(inner, &path, offset, &axes, out);
                continue;
            }
            NcVariableType::Opaque(o) => LeafKind::Opaque(o.size),
            NcVariableType::Enum(e) => LeafKind::Num(enum_base(e)),
            t => LeafKind::Num(NcNum::from_nc(t).unwrap_or(NcNum::U8)),
        };
        out.push(Leaf {
            path,
            kind,
            offset,
            axes,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compound() -> NcVariableType {
        let inner = NcVariableType::Compound(CompoundType {
            name: "inner_t".into(),
            size: 12,
            fields: vec![
                CompoundTypeField {
                    name: "a".into(),
                    basetype: NcNum::I16.nc_type(),
                    arraydims: None,
                    offset: 0,
                },
                CompoundTypeField {
                    name: "b".into(),
                    basetype: NcNum::F32.nc_type(),
                    arraydims: Some(vec![2]),
                    offset: 4,
                },
            ],
        });
        NcVariableType::Compound(CompoundType {
            name: "obs_t".into(),
            size: 32,
            fields: vec![
                CompoundTypeField {
                    name: "id".into(),
                    basetype: NcNum::I32.nc_type(),
                    arraydims: None,
                    offset: 0,
                },
                CompoundTypeField {
                    name: "in".into(),
                    basetype: inner,
                    arraydims: Some(vec![2]),
                    offset: 4,
                },
                CompoundTypeField {
                    name: "raw".into(),
                    basetype: NcVariableType::Opaque(OpaqueType {
                        name: "blob_t".into(),
                        size: 3,
                    }),
                    arraydims: None,
                    offset: 28,
                },
            ],
        })
    }

    #[test]
    fn definitions_round_trip_through_cbor() {
        let e = NcVariableType::Enum(EnumType {
            name: "cloud_t".into(),
            fieldnames: vec!["Missing".into(), "Clear".into()],
            fieldvalues: EnumTypeValues::I16(vec![-1, 0]),
        });
        let v = NcVariableType::Vlen(VlenType {
            name: "ragged_t".into(),
            basetype: Box::new(NcNum::I32.nc_type()),
        });
        for t in [e, v, compound()] {
            assert_eq!(from_cbor(&to_cbor(&t).unwrap()).unwrap(), t);
        }
    }

    #[test]
    fn members_outside_or_overlapping_are_refused() {
        let NcVariableType::Compound(mut c) = compound() else {
            unreachable!()
        };
        c.size = 30;
        let e = checked(&NcVariableType::Compound(c.clone())).unwrap_err();
        assert!(e.contains("member raw") && e.contains("outside"), "{e}");
        c.size = 32;
        c.fields[2].offset = 26;
        let e = checked(&NcVariableType::Compound(c)).unwrap_err();
        assert!(e.contains("overlap"), "{e}");
    }

    #[test]
    fn leaves_gather_and_scatter_nested_arrays() {
        let NcVariableType::Compound(c) = compound() else {
            unreachable!()
        };
        let l = leaves(&c);
        let paths: Vec<String> = l.iter().map(|l| l.path.join(".")).collect();
        assert_eq!(paths, ["id", "in.a", "in.b", "raw"]);
        assert_eq!(l[2].axes, [(2, 12), (2, 4)]);
        assert_eq!(l[2].tail_shape(), [2, 2]);
        assert_eq!(l[3].tail_shape(), [3]);
        let buf: Vec<u8> = (0..64).map(|i| i as u8).collect();
        let b = l[2].gather(&buf, 32);
        assert_eq!(&b[..8], &[8, 9, 10, 11, 12, 13, 14, 15]);
        assert_eq!(&b[8..16], &[20, 21, 22, 23, 24, 25, 26, 27]);
        assert_eq!(b.len(), 2 * 16);
        let mut back = vec![0u8; 64];
        for leaf in &l {
            leaf.scatter(&leaf.gather(&buf, 32), &mut back, 32);
        }
        let padding = [6, 7, 18, 19, 31];
        for i in (0..64).filter(|i| !padding.contains(&(i % 32))) {
            assert_eq!(back[i], buf[i], "byte {i}");
        }
    }
}
