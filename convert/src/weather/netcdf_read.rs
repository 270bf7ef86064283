//! Reading NetCDF-3 (classic, 64-bit offset, CDF-5) and NetCDF-4 files
//! through netCDF-C: the dimensions, attributes and numeric variables of the
//! root group, and a variable's values (whole, or one record) as native
//! bytes with every size checked before anything is allocated.

use std::io::Read;
use std::path::{Path, PathBuf};

use netcdf::types::{FloatType, IntType, NcVariableType};
use netcdf::AttributeValue;
use tgm::Dtype;

use super::budget::DecodeBudget;
use super::netcdf::NetcdfError;

/// Largest variable (or record slice) read into memory, in bytes.
pub const MAX_VARIABLE_BYTES: u64 = 4 << 30;

/// The numeric NetCDF types, by CDL name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NcNum {
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
    const ALL: [NcNum; 10] = [
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
            NcNum::U8 => Dtype::Uint8,
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

    fn from_nc(t: &NcVariableType) -> Option<NcNum> {
        Some(match t {
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

/// A dimension of the root group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dim {
    pub name: String,
    pub len: usize,
    pub unlimited: bool,
}

/// A numeric variable of the root group.
#[derive(Debug, Clone)]
pub struct Var {
    pub name: String,
    pub ty: NcNum,
    pub dims: Vec<String>,
    pub shape: Vec<usize>,
    pub attrs: Vec<(String, AttributeValue)>,
}

impl Var {
    /// The value of attribute `name`.
    pub fn attr(&self, name: &str) -> Option<&AttributeValue> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }
}

/// An open NetCDF file and its root-group structure.
pub struct Source {
    pub path: PathBuf,
    pub format: Format,
    pub dims: Vec<Dim>,
    pub attrs: Vec<(String, AttributeValue)>,
    pub vars: Vec<Var>,
    /// Variables of other types (char, string, user-defined) with the reason.
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

fn attributes<'a>(
    path: &Path,
    owner: &str,
    iter: impl Iterator<Item = netcdf::Attribute<'a>>,
) -> Result<Vec<(String, AttributeValue)>, NetcdfError> {
    iter.map(|a| {
        let v = a
            .value()
            .map_err(|e| nc_err(path, format_args!("{owner} attribute {}", a.name()), e))?;
        Ok((a.name().to_string(), v))
    })
    .collect()
}

/// Refuses a NetCDF-4 file with variables in a sub-group: tgm converts the
/// root group only, and dropping the others would lose data silently.
fn refuse_group_variables(path: &Path, file: &netcdf::File) -> Result<(), NetcdfError> {
    fn walk(g: &netcdf::Group<'_>, prefix: &str, found: &mut Vec<String>) {
        let here = format!("{prefix}/{}", g.name());
        found.extend(g.variables().map(|v| format!("{here}/{}", v.name())));
        for sub in g.groups() {
            walk(&sub, &here, found);
        }
    }
    let mut found = Vec::new();
    let groups = file
        .groups()
        .map_err(|e| nc_err(path, "listing groups", e))?;
    for g in groups {
        walk(&g, "", &mut found);
    }
    if found.is_empty() {
        return Ok(());
    }
    Err(NetcdfError::Invalid(format!(
        "{}: variables in NetCDF-4 sub-groups are not converted (only the root group is): {}",
        path.display(),
        found.join(", ")
    )))
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
        refuse_group_variables(path, &file)?;
        let dims: Vec<Dim> = file
            .dimensions()
            .map(|d| Dim {
                name: d.name(),
                len: d.len(),
                unlimited: d.is_unlimited(),
            })
            .collect();
        let attrs = attributes(path, "global", file.attributes())?;
        let mut vars = Vec::new();
        let mut skipped = Vec::new();
        for v in file.variables() {
            let name = v.name();
            let Some(ty) = NcNum::from_nc(&v.vartype()) else {
                skipped.push((name, format!("type {:?} is not numeric", v.vartype())));
                continue;
            };
            let var_attrs = attributes(path, &format!("variable {name}"), v.attributes())?;
            vars.push(Var {
                name,
                ty,
                dims: v.dimensions().iter().map(|d| d.name()).collect(),
                shape: v.dimensions().iter().map(|d| d.len()).collect(),
                attrs: var_attrs,
            });
        }
        let mut dims = dims;
        if let Some(n) = streaming_records {
            bound_records(&mut dims, &mut vars, n);
        }
        Ok(Source {
            path: path.to_path_buf(),
            format,
            dims,
            attrs,
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
            .checked_mul(var.ty.size() as u64)
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
        budget.charge(Some(bytes)).map_err(|e| {
            NetcdfError::Invalid(format!(
                "{}: variable {}: {e}",
                self.path.display(),
                var.name
            ))
        })?;
        let v = self.file.variable(&var.name).ok_or_else(|| {
            NetcdfError::Invalid(format!(
                "{}: variable {} vanished",
                self.path.display(),
                var.name
            ))
        })?;
        let mut buf = vec![0u8; bytes as usize];
        v.get_raw_values_into(&mut buf, extents)
            .map_err(|e| nc_err(&self.path, format_args!("reading variable {}", var.name), e))?;
        Ok(buf)
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
