//! Reading NetCDF-3 (classic, 64-bit offset, CDF-5) and NetCDF-4 files
//! through netCDF-C: the dimensions, attributes and variables of every
//! group (named by path, `spec/convert.md` "NetCDF groups"), and a
//! variable's values (whole, or one record) as native bytes with every size
//! checked before anything is allocated.

use std::io::Read;
use std::path::{Path, PathBuf};

use netcdf::types::{FloatType, IntType, NcVariableType};
use netcdf::AttributeValue;
use tgm::Dtype;

use super::budget::DecodeBudget;
use super::netcdf::NetcdfError;

/// Largest variable (or record slice) read into memory, in bytes.
pub const MAX_VARIABLE_BYTES: u64 = 4 << 30;

/// The fixed-width NetCDF types, by CDL name: the numeric ones and `char`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NcNum {
    /// `char`: one byte of text, stored as uint8.
    Char,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl NcNum {
    const ALL: [NcNum; 11] = [
        NcNum::Char,
        NcNum::I8,
        NcNum::U8,
        NcNum::I16,
        NcNum::U16,
        NcNum::I32,
        NcNum::U32,
        NcNum::I64,
        NcNum::U64,
        NcNum::F32,
        NcNum::F64,
    ];

    /// The CDL type name (`short`, `float`, …).
    pub fn name(self) -> &'static str {
        match self {
            NcNum::Char => "char",
            NcNum::I8 => "byte",
            NcNum::U8 => "ubyte",
            NcNum::I16 => "short",
            NcNum::U16 => "ushort",
            NcNum::I32 => "int",
            NcNum::U32 => "uint",
            NcNum::I64 => "int64",
            NcNum::U64 => "uint64",
            NcNum::F32 => "float",
            NcNum::F64 => "double",
        }
    }

    /// The type called `name`.
    pub fn from_name(name: &str) -> Option<NcNum> {
        NcNum::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The Tensogram dtype of the same width and kind.
    pub fn dtype(self) -> Dtype {
        match self {
            NcNum::I8 => Dtype::Int8,
            NcNum::Char | NcNum::U8 => Dtype::Uint8,
            NcNum::I16 => Dtype::Int16,
            NcNum::U16 => Dtype::Uint16,
            NcNum::I32 => Dtype::Int32,
            NcNum::U32 => Dtype::Uint32,
            NcNum::I64 => Dtype::Int64,
            NcNum::U64 => Dtype::Uint64,
            NcNum::F32 => Dtype::Float32,
            NcNum::F64 => Dtype::Float64,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        self.dtype().width()
    }

    /// Whether this is `float` or `double`.
    pub fn is_float(self) -> bool {
        matches!(self, NcNum::F32 | NcNum::F64)
    }

    /// The netCDF type of the same name.
    pub fn nc_type(self) -> NcVariableType {
        match self {
            NcNum::Char => NcVariableType::Char,
            NcNum::I8 => NcVariableType::Int(IntType::I8),
            NcNum::U8 => NcVariableType::Int(IntType::U8),
            NcNum::I16 => NcVariableType::Int(IntType::I16),
            NcNum::U16 => NcVariableType::Int(IntType::U16),
            NcNum::I32 => NcVariableType::Int(IntType::I32),
            NcNum::U32 => NcVariableType::Int(IntType::U32),
            NcNum::I64 => NcVariableType::Int(IntType::I64),
            NcNum::U64 => NcVariableType::Int(IntType::U64),
            NcNum::F32 => NcVariableType::Float(FloatType::F32),
            NcNum::F64 => NcVariableType::Float(FloatType::F64),
        }
    }

    /// The fixed-width type `t` is, if it is one.
    pub fn from_nc(t: &NcVariableType) -> Option<NcNum> {
        Some(match t {
            NcVariableType::Char => NcNum::Char,
            NcVariableType::Int(IntType::I8) => NcNum::I8,
            NcVariableType::Int(IntType::U8) => NcNum::U8,
            NcVariableType::Int(IntType::I16) => NcNum::I16,
            NcVariableType::Int(IntType::U16) => NcNum::U16,
            NcVariableType::Int(IntType::I32) => NcNum::I32,
            NcVariableType::Int(IntType::U32) => NcNum::U32,
            NcVariableType::Int(IntType::I64) => NcNum::I64,
            NcVariableType::Int(IntType::U64) => NcNum::U64,
            NcVariableType::Float(FloatType::F32) => NcNum::F32,
            NcVariableType::Float(FloatType::F64) => NcNum::F64,
            _ => return None,
        })
    }
}

/// The on-disk format, from the file's signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `CDF\x01`.
    Classic,
    /// `CDF\x02`.
    Offset64,
    /// `CDF\x05`.
    Data64,
    /// An HDF5 file.
    Netcdf4,
}

impl Format {
    /// The name recorded in the archive.
    pub fn name(self) -> &'static str {
        match self {
            Format::Classic => "classic",
            Format::Offset64 => "64bit_offset",
            Format::Data64 => "64bit_data",
            Format::Netcdf4 => "netcdf4",
        }
    }

    /// NetCDF-3 stores every variable uncompressed.
    fn is_netcdf3(self) -> bool {
        self != Format::Netcdf4
    }
}

/// The type of a variable tgm converts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarType {
    /// A fixed-width type, read as raw native bytes (an enum as its base).
    Fixed(NcNum),
    /// NetCDF-4 `string`: variable-length text, stored as the elements'
    /// bytes each followed by a NUL.
    String,
    /// An opaque type of this many bytes.
    Opaque(usize),
    /// A compound type of this many bytes (netCDF-C's in-memory size).
    Compound(usize),
    /// A vlen of numbers (or `char`) of this type.
    Vlen(NcNum),
}

impl VarType {
    /// The CDL type name.
    pub fn name(self) -> &'static str {
        match self {
            VarType::Fixed(t) => t.name(),
            VarType::String => "string",
            VarType::Opaque(_) => "opaque",
            VarType::Compound(_) => "compound",
            VarType::Vlen(_) => "vlen",
        }
    }

    /// The type called `name`.
    pub fn from_name(name: &str) -> Option<VarType> {
        if name == "string" {
            return Some(VarType::String);
        }
        NcNum::from_name(name).map(VarType::Fixed)
    }

    /// The type of a variable of netCDF type `t` and, for a user-defined
    /// type, its checked definition; `Err` says why it cannot be kept.
    fn from_nc(t: &NcVariableType) -> Result<(VarType, Option<NcVariableType>), String> {
        let user = |ty| Ok((ty, Some(super::netcdf_udt::checked(t)?)));
        match t {
            NcVariableType::String => Ok((VarType::String, None)),
            NcVariableType::Enum(e) => user(VarType::Fixed(super::netcdf_udt::enum_base(e))),
            NcVariableType::Opaque(o) => user(VarType::Opaque(o.size)),
            NcVariableType::Compound(c) => user(VarType::Compound(c.size))
                .map_err(|e| format!("compound type {}: {e}", c.name)),
            NcVariableType::Vlen(v) => match NcNum::from_nc(&v.basetype) {
                Some(b) => user(VarType::Vlen(b)),
                None => Err(format!(
                    "vlen type {} of a {:?} is not kept",
                    v.name, v.basetype
                )),
            },
            t => NcNum::from_nc(t)
                .map(|n| (VarType::Fixed(n), None))
                .ok_or_else(|| format!("type {t:?} is not supported")),
        }
    }

    /// Bytes per element as netCDF-C reads it raw (a pointer for strings).
    pub fn raw_size(self) -> usize {
        match self {
            VarType::Fixed(t) => t.size(),
            VarType::String => super::netcdf_ffi::STRING_ELEMENT,
            VarType::Opaque(n) | VarType::Compound(n) => n,
            VarType::Vlen(_) => super::netcdf_ffi::VLEN_ELEMENT,
        }
    }
}

/// A dimension, named by its path: plain in the root group (`time`),
/// `/group/…/name` in a sub-group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dim {
    pub name: String,
    pub len: usize,
    pub unlimited: bool,
}

/// Attributes in file order, each attribute of an enum type held as its
/// base integers, with the enum type's name in `enum_types`.
#[derive(Debug, Clone, Default)]
pub struct Attrs {
    pub list: Vec<(String, AttributeValue)>,
    /// `(attribute, enum type name)` for every attribute of an enum type.
    pub enum_types: Vec<(String, String)>,
}

/// A NetCDF-4 sub-group: its path (`/a/b`) and attributes.
#[derive(Debug, Clone)]
pub struct GroupInfo {
    pub path: String,
    pub attrs: Attrs,
}

/// How a NetCDF-4 variable is stored: its chunk shape (`None`:
/// contiguous) and deflate settings.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Storage {
    pub chunks: Option<Vec<usize>>,
    pub deflate: Option<super::netcdf_ffi::Deflate>,
}

/// A variable of any group, named by its path like dimensions.
#[derive(Debug, Clone)]
pub struct Var {
    pub name: String,
    pub ty: VarType,
    /// The path names of its dimensions, resolved through parent groups.
    pub dims: Vec<String>,
    pub shape: Vec<usize>,
    pub attrs: Attrs,
    /// NetCDF-4 storage; `None` for NetCDF-3.
    pub storage: Option<Storage>,
    /// The checked definition of a user-defined type.
    pub user: Option<NcVariableType>,
}

impl Var {
    /// The value of attribute `name`.
    pub fn attr(&self, name: &str) -> Option<&AttributeValue> {
        self.attrs
            .list
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}

/// An open NetCDF file and the structure of every group.
pub struct Source {
    pub path: PathBuf,
    pub format: Format,
    /// Dimensions of every group, the root's first.
    pub dims: Vec<Dim>,
    pub attrs: Attrs,
    /// The user-defined types kept, `(group path, definition)`, each
    /// group's in definition order, the root's first.
    pub types: Vec<(String, NcVariableType)>,
    /// Every sub-group, parents before children.
    pub groups: Vec<GroupInfo>,
    /// Variables of every group, the root's first.
    pub vars: Vec<Var>,
    /// Variables of user-defined types with the reason.
    pub skipped: Vec<(String, String)>,
    /// The file's size in bytes.
    pub file_len: u64,
    file: netcdf::File,
}

fn nc_err(path: &Path, what: impl std::fmt::Display, e: netcdf::Error) -> NetcdfError {
    NetcdfError::Netcdf(format!("{}: {what}: {e}", path.display()))
}

/// The format named by the first bytes of `path`.
fn sniff(path: &Path) -> Result<(Format, u64), NetcdfError> {
    let io = |e: std::io::Error| NetcdfError::Io(format!("{}: {e}", path.display()));
    let mut f = std::fs::File::open(path).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    let mut head = [0u8; 8];
    let n = f.read(&mut head).map_err(io)?;
    let format = match &head[..n.min(8)] {
        [b'C', b'D', b'F', 1, ..] => Format::Classic,
        [b'C', b'D', b'F', 2, ..] => Format::Offset64,
        [b'C', b'D', b'F', 5, ..] => Format::Data64,
        [0x89, b'H', b'D', b'F', b'\r', b'\n', 0x1a, b'\n'] => Format::Netcdf4,
        _ => {
            return Err(NetcdfError::Invalid(format!(
                "{}: not a NetCDF file (no CDF or HDF5 signature at offset 0)",
                path.display()
            )))
        }
    };
    Ok((format, len))
}

/// Refuses a NetCDF-3 file whose header places data past its end; returns
/// the record count the bytes present hold when the header's is unknown
/// (streaming).
fn check_netcdf3_extent(path: &Path, file_len: u64) -> Result<Option<u64>, NetcdfError> {
    let io = |e: std::io::Error| NetcdfError::Io(format!("{}: {e}", path.display()));
    let f = std::fs::File::open(path).map_err(io)?;
    // SAFETY: the map is read-only and dropped before this function returns;
    // a file changed underneath yields wrong bytes, never unsafety in the
    // parser, which only reads a byte slice with bounds checks.
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::Mmap::map(&f) }.map_err(io)?;
    let extent = super::netcdf_classic::extent(&map, file_len).map_err(|e| {
        NetcdfError::Invalid(format!("{}: damaged NetCDF-3 header: {e}", path.display()))
    })?;
    let end = extent.end;
    if end > file_len {
        return Err(NetcdfError::Invalid(format!(
            "{}: truncated: the header places data up to byte {end} but the file has {file_len} bytes",
            path.display()
        )));
    }
    Ok(extent.streaming_records)
}

/// Where attributes live: the file, the group path (`""` for the root)
/// and the variable's short name (`None` for the group's own).
struct Owner<'a> {
    path: &'a Path,
    group: &'a str,
    var: Option<&'a str>,
    handle: Option<&'a super::netcdf_ffi::StorageHandle>,
    file_len: u64,
}

/// The attributes of `owner`; one of an enum type is read through the
/// second handle, one of another user-defined type refused by name.
fn attributes<'a>(
    owner: &Owner<'_>,
    what: &str,
    iter: impl Iterator<Item = netcdf::Attribute<'a>>,
) -> Result<Attrs, NetcdfError> {
    let mut out = Attrs::default();
    for a in iter {
        let name = a.name().to_string();
        let v = match (a.value(), owner.handle) {
            (Ok(v), _) => v,
            (Err(_), Some(h)) => {
                let e = h
                    .enum_attr(owner.group, owner.var, &name, owner.file_len)
                    .map_err(|e| {
                        NetcdfError::Invalid(format!(
                            "{}: {what} attribute {name}: {e}",
                            owner.path.display()
                        ))
                    })?;
                let v = super::netcdf_attrs::from_native(e.base, &e.bytes).ok_or_else(|| {
                    NetcdfError::Invalid(format!(
                        "{}: {what} attribute {name}: enum base type {} unknown",
                        owner.path.display(),
                        e.base
                    ))
                })?;
                out.enum_types.push((name.clone(), e.type_name));
                v
            }
            (Err(e), None) => {
                return Err(nc_err(
                    owner.path,
                    format_args!("{what} attribute {name}"),
                    e,
                ))
            }
        };
        out.list.push((name, v));
    }
    Ok(out)
}

/// The path name of `name` in group `group` (`""` for the root, else
/// `/a/b`): plain in the root group, `/a/b/name` in a sub-group.
pub fn path_name(group: &str, name: &str) -> String {
    if group.is_empty() {
        name.to_string()
    } else {
        format!("{group}/{name}")
    }
}

/// `read()`, a read of type definitions by the `netcdf` crate, which
/// panics where netCDF-C hands it what it does not expect (a name that is
/// not UTF-8): the panic becomes an error naming `what` in `path`.
fn unpanicked<T>(path: &Path, what: &str, read: impl FnOnce() -> T) -> Result<T, NetcdfError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).map_err(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        NetcdfError::Invalid(format!(
            "{}: {what}: the type definition cannot be read ({why})",
            path.display()
        ))
    })
}

/// What a walk over a file's groups collects.
#[derive(Default)]
struct Walk {
    file_len: u64,
    dims: Vec<Dim>,
    types: Vec<(String, NcVariableType)>,
    groups: Vec<GroupInfo>,
    vars: Vec<Var>,
    skipped: Vec<(String, String)>,
}

/// The groups from the root to the one being walked: each one's path and
/// the short names of the dimensions it defines.
type Scopes = Vec<(String, Vec<String>)>;

/// The path name of dimension `short` as seen from the innermost group of
/// `scopes`: the nearest group (itself, then its parents) defining it.
fn resolve_dim(scopes: &Scopes, short: &str) -> Option<String> {
    scopes
        .iter()
        .rev()
        .find(|(_, names)| names.iter().any(|n| n == short))
        .map(|(g, _)| path_name(g, short))
}

impl Walk {
    /// Adds the dimensions `dims` of group `group` and opens its scope.
    fn enter<'a>(
        &mut self,
        scopes: &mut Scopes,
        group: &str,
        dims: impl Iterator<Item = netcdf::Dimension<'a>>,
    ) {
        let mut names = Vec::new();
        for d in dims {
            let short = d.name();
            self.dims.push(Dim {
                name: path_name(group, &short),
                len: d.len(),
                unlimited: d.is_unlimited(),
            });
            names.push(short);
        }
        scopes.push((group.to_string(), names));
    }

    /// Adds variable `v` of the innermost group of `scopes`.
    fn variable(
        &mut self,
        path: &Path,
        scopes: &Scopes,
        v: &netcdf::Variable<'_>,
        handle: Option<&super::netcdf_ffi::StorageHandle>,
    ) -> Result<(), NetcdfError> {
        let group = scopes.last().map_or("", |(g, _)| g.as_str());
        let short = v.name();
        let name = path_name(group, &short);
        let vartype = unpanicked(path, &format!("variable {name}"), || v.vartype())?;
        let (ty, user) = match VarType::from_nc(&vartype) {
            Ok(t) => t,
            Err(why) => {
                self.skipped.push((name, why));
                return Ok(());
            }
        };
        let dims = v
            .dimensions()
            .iter()
            .map(|d| {
                let short = d.name();
                resolve_dim(scopes, &short).ok_or_else(|| {
                    NetcdfError::Invalid(format!(
                        "{}: variable {name}: dimension {short} is defined in no enclosing group",
                        path.display()
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let storage = match handle {
            None => None,
            Some(h) => Some(Storage {
                chunks: v
                    .chunking()
                    .map_err(|e| nc_err(path, format_args!("variable {name} chunking"), e))?,
                deflate: h.deflate(group, &short),
            }),
        };
        let owner = Owner {
            path,
            group,
            var: Some(&short),
            handle,
            file_len: self.file_len,
        };
        let attrs = attributes(&owner, &format!("variable {name}"), v.attributes())?;
        self.vars.push(Var {
            name,
            ty,
            dims,
            shape: v.dimensions().iter().map(|d| d.len()).collect(),
            attrs,
            storage,
            user,
        });
        Ok(())
    }

    /// Walks NetCDF-4 group `g` at path `group` and its sub-groups.
    fn group(
        &mut self,
        path: &Path,
        scopes: &mut Scopes,
        g: &netcdf::Group<'_>,
        group: &str,
        handle: Option<&super::netcdf_ffi::StorageHandle>,
    ) -> Result<(), NetcdfError> {
        self.enter(scopes, group, g.dimensions());
        let what = format!(
            "the types of group {}",
            if group.is_empty() { "/" } else { group }
        );
        for t in unpanicked(path, &what, || g.types().collect::<Vec<_>>())? {
            // Types that cannot be kept are refused with the variables
            // using them.
            if let Ok(t) = super::netcdf_udt::checked(&t) {
                self.types.push((group.to_string(), t));
            }
        }
        if !group.is_empty() {
            let owner = Owner {
                path,
                group,
                var: None,
                handle,
                file_len: self.file_len,
            };
            let attrs = attributes(&owner, &format!("group {group}"), g.attributes())?;
            self.groups.push(GroupInfo {
                path: group.to_string(),
                attrs,
            });
        }
        for v in g.variables() {
            self.variable(path, scopes, &v, handle)?;
        }
        for sub in g.groups() {
            let sub_path = format!("{group}/{}", sub.name());
            self.group(path, scopes, &sub, &sub_path, handle)?;
        }
        scopes.pop();
        Ok(())
    }
}

/// Sets the unlimited dimension of a streaming NetCDF-3 file (whose header
/// leaves the record count unknown, which netCDF-C reports as 2³²−1) to
/// the `records` its bytes hold, in the dimension list and in every record
/// variable's shape.
fn bound_records(dims: &mut [Dim], vars: &mut [Var], records: u64) {
    let records = usize::try_from(records).unwrap_or(usize::MAX);
    for d in dims.iter_mut().filter(|d| d.unlimited) {
        d.len = d.len.min(records);
        for v in vars.iter_mut() {
            for (name, len) in v.dims.iter().zip(v.shape.iter_mut()) {
                if name == &d.name {
                    *len = (*len).min(records);
                }
            }
        }
    }
}

impl Source {
    /// Opens `path` and reads its root-group structure.
    pub fn open(path: &Path) -> Result<Source, NetcdfError> {
        let (format, file_len) = sniff(path)?;
        let streaming_records = if format.is_netcdf3() {
            check_netcdf3_extent(path, file_len)?
        } else {
            None
        };
        let file = netcdf::open(path).map_err(|e| nc_err(path, "open", e))?;
        let raw = super::netcdf_ffi::StorageHandle::read_only(path)
            .map_err(|e| NetcdfError::Netcdf(format!("{}: {e}", path.display())))?;
        super::netcdf_names::check_names(&raw, format == Format::Netcdf4)
            .map_err(|e| NetcdfError::Invalid(format!("{}: {e}", path.display())))?;
        let handle = (format == Format::Netcdf4).then_some(raw);
        let owner = Owner {
            path,
            group: "",
            var: None,
            handle: handle.as_ref(),
            file_len,
        };
        let attrs = attributes(&owner, "global", file.attributes())?;
        let mut walk = Walk {
            file_len,
            ..Walk::default()
        };
        let mut scopes = Scopes::new();
        match file.root() {
            Some(root) => {
                walk.group(path, &mut scopes, &root, "", handle.as_ref())?;
            }
            None => {
                walk.enter(&mut scopes, "", file.dimensions());
                for v in file.variables() {
                    walk.variable(path, &scopes, &v, None)?;
                }
            }
        }
        let Walk {
            file_len: _,
            mut dims,
            types,
            groups,
            mut vars,
            skipped,
        } = walk;
        if let Some(n) = streaming_records {
            bound_records(&mut dims, &mut vars, n);
        }
        Ok(Source {
            path: path.to_path_buf(),
            format,
            dims,
            attrs,
            types,
            groups,
            vars,
            skipped,
            file_len,
            file,
        })
    }

    /// The first unlimited dimension.
    pub fn record_dim(&self) -> Option<&Dim> {
        self.dims.iter().find(|d| d.unlimited)
    }

    /// The native-endian bytes of `var`, whole or at index `record` of
    /// dimension `record_dim` (kept as a length-1 axis). Sizes are checked
    /// against [`MAX_VARIABLE_BYTES`] and, for NetCDF-3, the file length.
    pub fn read(
        &self,
        var: &Var,
        record: Option<(&str, usize)>,
        budget: &mut DecodeBudget,
    ) -> Result<Vec<u8>, NetcdfError> {
        let mut extents = Vec::with_capacity(var.shape.len());
        let mut count: u64 = 1;
        for (name, &len) in var.dims.iter().zip(&var.shape) {
            let (start, n) = match record {
                Some((rd, r)) if rd == name => (r, 1),
                _ => (0, len),
            };
            count = count
                .checked_mul(n as u64)
                .ok_or_else(|| self.too_big(var))?;
            extents.push(netcdf::Extent::SliceCount {
                start,
                stride: 1,
                count: n,
            });
        }
        let bytes = count
            .checked_mul(var.ty.raw_size() as u64)
            .filter(|&b| b <= MAX_VARIABLE_BYTES)
            .ok_or_else(|| self.too_big(var))?;
        if self.format.is_netcdf3() && bytes > self.file_len {
            return Err(NetcdfError::Invalid(format!(
                "{}: variable {} needs {bytes} bytes but the file holds {} (truncated?)",
                self.path.display(),
                var.name,
                self.file_len
            )));
        }
        let over = |e: super::budget::BudgetExceeded| {
            NetcdfError::Invalid(format!(
                "{}: variable {}: {e}",
                self.path.display(),
                var.name
            ))
        };
        budget.charge(Some(bytes)).map_err(over)?;
        let lookup = var.name.trim_start_matches('/');
        let v = self.file.variable(lookup).ok_or_else(|| {
            NetcdfError::Invalid(format!(
                "{}: variable {} vanished",
                self.path.display(),
                var.name
            ))
        })?;
        let mut buf = vec![0u8; bytes as usize];
        v.get_raw_values_into(&mut buf, extents)
            .map_err(|e| nc_err(&self.path, format_args!("reading variable {}", var.name), e))?;
        if let VarType::Vlen(base) = var.ty {
            return vlen_values(&buf, base, budget).map_err(over);
        }
        if var.ty != VarType::String {
            return Ok(buf);
        }
        // The elements' bytes, each followed by a NUL, charged as they come.
        let mut text = Vec::new();
        super::netcdf_ffi::take_strings(&buf, |s| {
            budget.charge(Some(s.len() as u64 + 1)).map_err(over)?;
            text.extend_from_slice(s);
            text.push(0);
            Ok::<(), NetcdfError>(())
        })?;
        Ok(text)
    }

    fn too_big(&self, var: &Var) -> NetcdfError {
        NetcdfError::Invalid(format!(
            "{}: variable {} of shape {:?} exceeds the {} byte limit of one variable",
            self.path.display(),
            var.name,
            var.shape,
            MAX_VARIABLE_BYTES
        ))
    }
}

/// The elements of a vlen variable of `base` values read raw into `raw`:
/// each element's length as a native u64, then every element's values
/// one after the other, charged to `budget` as they come.
fn vlen_values(
    raw: &[u8],
    base: NcNum,
    budget: &mut DecodeBudget,
) -> Result<Vec<u8>, super::budget::BudgetExceeded> {
    let n = raw.len() / super::netcdf_ffi::VLEN_ELEMENT;
    let mut lengths = Vec::with_capacity(n * 8);
    let mut values = Vec::new();
    super::netcdf_ffi::take_vlens(raw, base.size(), |v| {
        budget.charge(Some(v.len() as u64))?;
        lengths.extend_from_slice(&((v.len() / base.size()) as u64).to_ne_bytes());
        values.extend_from_slice(v);
        Ok(())
    })?;
    lengths.extend_from_slice(&values);
    Ok(lengths)
}
