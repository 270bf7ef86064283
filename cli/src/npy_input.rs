//! `.npy` input without copying the array: the file is memory-mapped and
//! the element bytes are borrowed from the mapping. See `spec/format.md` §13.

use std::borrow::Cow;
use std::fs::File;
use std::path::Path;

use tgm::{ByteOrder, Dtype, ObjectDescriptor};

use crate::error::{CliError, CliResult, WithPath};

/// A `.npy` file opened for import.
pub struct NpyInput {
    map: Option<memmap2::Mmap>,
    owned: Option<Vec<u8>>,
    data_start: usize,
    /// Element type.
    pub dtype: Dtype,
    /// Byte order of the elements.
    pub order: ByteOrder,
    /// Shape (row-major).
    pub shape: Vec<u64>,
    /// The file held NumPy booleans.
    pub was_bool: bool,
}

fn bad(path: &Path, why: impl std::fmt::Display) -> CliError {
    CliError::Failed(format!("{}: {why}", path.display()))
}

fn dict_value<'h>(header: &'h str, key: &str) -> Option<&'h str> {
    let pat = format!("'{key}'");
    let rest = header[header.find(&pat)? + pat.len()..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')')? + 1
    } else if let Some(q) = rest.strip_prefix('\'') {
        q.find('\'')? + 2
    } else {
        rest.find([',', '}'])?
    };
    Some(rest[..end].trim())
}

fn parse_descr(d: &str) -> Option<(Dtype, ByteOrder, bool)> {
    let (o, code) = d.split_at(1.min(d.len()));
    let order = match o {
        "<" => ByteOrder::Little,
        ">" => ByteOrder::Big,
        "|" | "=" => ByteOrder::native(),
        _ => return None,
    };
    let (t, b) = match code {
        "f2" => (Dtype::Float16, false),
        "f4" => (Dtype::Float32, false),
        "f8" => (Dtype::Float64, false),
        "c8" => (Dtype::Complex64, false),
        "c16" => (Dtype::Complex128, false),
        "i1" => (Dtype::Int8, false),
        "i2" => (Dtype::Int16, false),
        "i4" => (Dtype::Int32, false),
        "i8" => (Dtype::Int64, false),
        "u1" => (Dtype::Uint8, false),
        "u2" => (Dtype::Uint16, false),
        "u4" => (Dtype::Uint32, false),
        "u8" => (Dtype::Uint64, false),
        "b1" => (Dtype::Uint8, true),
        _ => return None,
    };
    Some((t, order, b))
}

impl NpyInput {
    /// Opens and checks `path`; the data is not read.
    pub fn open(path: &Path) -> CliResult<Self> {
        if path.is_dir() {
            return Err(bad(path, "is a directory"));
        }
        let file = File::open(path).at(path)?;
        let len = file.metadata().at(path)?.len();
        if len < 10 {
            return Err(bad(path, "not a .npy file (too short)"));
        }
        // SAFETY: the mapping is read-only; a concurrent truncation by another
        // process is outside what the tool defends against (as for any mmap reader).
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(&file) }.at(path)?;
        let bytes: &[u8] = &map;
        if &bytes[..6] != b"\x93NUMPY" {
            return Err(bad(path, "not a .npy file (bad magic)"));
        }
        let (hlen, hstart) = match bytes[6] {
            1 => (
                usize::from(u16::from_le_bytes([bytes[8], bytes[9]])),
                10usize,
            ),
            2 | 3 => {
                let b = bytes
                    .get(8..12)
                    .ok_or_else(|| bad(path, ".npy header truncated"))?;
                (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize, 12)
            }
            v => {
                return Err(bad(
                    path,
                    format!(".npy format version {v} is not supported"),
                ))
            }
        };
        let end = hstart
            .checked_add(hlen)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| bad(path, ".npy header truncated"))?;
        let header = std::str::from_utf8(&bytes[hstart..end])
            .map_err(|_| bad(path, ".npy header is not text"))?;
        let descr =
            dict_value(header, "descr").ok_or_else(|| bad(path, ".npy header lacks descr"))?;
        let (dtype, order, was_bool) = parse_descr(descr.trim_matches('\''))
            .ok_or_else(|| bad(path, format!("unsupported .npy dtype {descr}")))?;
        let fortran = match dict_value(header, "fortran_order") {
            Some("False") => false,
            Some("True") => true,
            _ => return Err(bad(path, ".npy header: bad fortran_order")),
        };
        let shape_txt =
            dict_value(header, "shape").ok_or_else(|| bad(path, ".npy header lacks shape"))?;
        let shape = shape_txt
            .trim_start_matches('(')
            .trim_end_matches(')')
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse::<u64>())
            .collect::<Result<Vec<u64>, _>>()
            .map_err(|_| {
                bad(
                    path,
                    format!(".npy shape {shape_txt} is not a tuple of integers"),
                )
            })?;
        let need = ObjectDescriptor::new(dtype, shape.clone())
            .decoded_len()
            .at(path)?;
        if (bytes.len() - end) as u64 != need {
            return Err(bad(
                path,
                format!(
                    ".npy data is {} bytes but shape {shape:?} of {dtype} needs {need}",
                    bytes.len() - end
                ),
            ));
        }
        if fortran && shape.len() > 1 {
            // Column-major input is reordered in memory by the library reader.
            let arr = tgm::npy::read_npy(bytes).at(path)?;
            return Ok(NpyInput {
                map: None,
                owned: Some(arr.data),
                data_start: 0,
                dtype,
                order,
                shape,
                was_bool,
            });
        }
        Ok(NpyInput {
            map: Some(map),
            owned: None,
            data_start: end,
            dtype,
            order,
            shape,
            was_bool,
        })
    }

    /// The element bytes, in C order.
    pub fn data(&self) -> Cow<'_, [u8]> {
        match (&self.map, &self.owned) {
            (Some(m), _) => Cow::Borrowed(&m[self.data_start..]),
            (None, Some(v)) => Cow::Borrowed(v),
            (None, None) => Cow::Borrowed(&[]),
        }
    }

    /// A plain descriptor for the array.
    pub fn descriptor(&self) -> ObjectDescriptor {
        ObjectDescriptor::new(self.dtype, self.shape.clone()).with_byte_order(self.order)
    }
}
