//! NumPy `.npy` files (format versions 1.0–3.0) to and from tgm objects.
//! See `spec/format.md` §13.

use crate::descriptor::ObjectDescriptor;
use crate::dtype::{ByteOrder, Dtype};
use crate::error::{Error, Result};

const NPY_MAGIC: &[u8; 6] = b"\x93NUMPY";

/// An array read from a `.npy` file, in C order.
#[derive(Debug, Clone, PartialEq)]
pub struct NpyArray {
    /// Element type.
    pub dtype: Dtype,
    /// Byte order of `data`.
    pub byte_order: ByteOrder,
    /// Shape (row-major).
    pub shape: Vec<u64>,
    /// Element bytes in C order.
    pub data: Vec<u8>,
    /// True when the file held NumPy booleans (stored as uint8 0/1).
    pub was_bool: bool,
}

impl NpyArray {
    /// A descriptor for this array with the `none` pipeline.
    pub fn descriptor(&self) -> ObjectDescriptor {
        ObjectDescriptor::new(self.dtype, self.shape.clone()).with_byte_order(self.byte_order)
    }
}

fn parse_descr(descr: &str) -> Result<(Dtype, ByteOrder, bool)> {
    let bad = || Error::invalid_input(format!("unsupported .npy dtype {descr:?}"));
    let mut chars = descr.chars();
    let order_char = chars.next().ok_or_else(bad)?;
    let rest = chars.as_str();
    let order = match order_char {
        '<' => ByteOrder::Little,
        '>' => ByteOrder::Big,
        '|' | '=' => ByteOrder::native(),
        _ => return Err(bad()),
    };
    let (dtype, is_bool) = match rest {
        "b1" => (Dtype::Uint8, true),
        code => (Dtype::from_numpy_code(code).ok_or_else(bad)?, false),
    };
    Ok((dtype, order, is_bool))
}

/// Finds `'key': value` in the header dict and returns the raw value text.
fn dict_value<'h>(header: &'h str, key: &str) -> Result<&'h str> {
    let pat = format!("'{key}'");
    let start = header
        .find(&pat)
        .ok_or_else(|| Error::invalid_input(format!(".npy header lacks {key:?}")))?
        + pat.len();
    let rest = header[start..].trim_start();
    let rest = rest
        .strip_prefix(':')
        .ok_or_else(|| Error::invalid_input(format!(".npy header: no ':' after {key:?}")))?
        .trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')').map(|i| i + 1)
    } else if let Some(quoted) = rest.strip_prefix('\'') {
        quoted.find('\'').map(|i| i + 2)
    } else {
        rest.find([',', '}'])
    }
    .ok_or_else(|| Error::invalid_input(format!(".npy header: unterminated {key:?}")))?;
    Ok(rest[..end].trim())
}

/// What a `.npy` header says, with where the element bytes start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyHeader {
    /// Element type.
    pub dtype: Dtype,
    /// Byte order of the elements.
    pub byte_order: ByteOrder,
    /// Shape.
    pub shape: Vec<u64>,
    /// Elements are stored column-major.
    pub fortran_order: bool,
    /// The file held NumPy booleans (stored as uint8 0/1).
    pub was_bool: bool,
    /// Offset of the first element byte.
    pub data_offset: usize,
}

/// Parses and checks the header of a whole `.npy` file held in `bytes`: the
/// bytes after the header must be exactly the elements the shape needs.
/// Nothing is copied, so a caller may pass a memory map.
pub fn read_npy_header(bytes: &[u8]) -> Result<NpyHeader> {
    if bytes.len() < 10 || &bytes[..6] != NPY_MAGIC {
        return Err(Error::invalid_input("not a .npy file (bad magic)").at(0));
    }
    let major = bytes[6];
    let (hlen, hstart) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
        2 | 3 => {
            let b = bytes
                .get(8..12)
                .ok_or_else(|| Error::truncated(".npy header truncated").at(8))?;
            (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize, 12)
        }
        v => {
            return Err(
                Error::invalid_input(format!(".npy format version {v} is not supported")).at(6),
            )
        }
    };
    let header = bytes
        .get(hstart..hstart.saturating_add(hlen))
        .ok_or_else(|| Error::truncated(".npy header truncated").at(hstart as u64))?;
    let header =
        std::str::from_utf8(header).map_err(|_| Error::invalid_input(".npy header is not text"))?;
    let descr = dict_value(header, "descr")?.trim_matches('\'');
    let (dtype, byte_order, was_bool) = parse_descr(descr)?;
    let fortran = match dict_value(header, "fortran_order")? {
        "True" => true,
        "False" => false,
        v => return Err(Error::invalid_input(format!(".npy fortran_order {v:?}"))),
    };
    let shape_txt = dict_value(header, "shape")?;
    let inner = shape_txt.trim_start_matches('(').trim_end_matches(')');
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<u64>())
        .collect::<std::result::Result<Vec<u64>, _>>()
        .map_err(|_| {
            Error::invalid_input(format!(
                ".npy shape {shape_txt:?} is not a tuple of integers"
            ))
        })?;
    let data_offset = hstart + hlen;
    let data = &bytes[data_offset..];
    let d = ObjectDescriptor::new(dtype, shape.clone());
    let need = d.decoded_len()?;
    if data.len() as u64 != need {
        return Err(Error::invalid_input(format!(
            ".npy data is {} bytes but shape {shape:?} of {dtype} needs {need}",
            data.len()
        ))
        .at(data_offset as u64));
    }
    Ok(NpyHeader {
        dtype,
        byte_order,
        shape,
        fortran_order: fortran,
        was_bool,
        data_offset,
    })
}

/// Parses a whole `.npy` file.
pub fn read_npy(bytes: &[u8]) -> Result<NpyArray> {
    let NpyHeader {
        dtype,
        byte_order,
        shape,
        fortran_order: fortran,
        was_bool,
        data_offset,
    } = read_npy_header(bytes)?;
    let data = &bytes[data_offset..];
    let data = if fortran && shape.len() > 1 {
        fortran_to_c(data, &shape, dtype.width())
    } else {
        data.to_vec()
    };
    Ok(NpyArray {
        dtype,
        byte_order,
        shape,
        data,
        was_bool,
    })
}

/// Reorders column-major element bytes into row-major order.
fn fortran_to_c(data: &[u8], shape: &[u64], width: usize) -> Vec<u8> {
    let n = data.len() / width.max(1);
    let mut out = vec![0u8; data.len()];
    let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    let mut idx = vec![0usize; dims.len()];
    for c_pos in 0..n {
        let mut f_pos = 0usize;
        for k in (0..dims.len()).rev() {
            f_pos = f_pos * dims[k] + idx[k];
        }
        out[c_pos * width..(c_pos + 1) * width]
            .copy_from_slice(&data[f_pos * width..(f_pos + 1) * width]);
        for k in (0..dims.len()).rev() {
            idx[k] += 1;
            if idx[k] < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

/// How an object's bytes are presented to NumPy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpyLayout {
    /// NumPy descr, e.g. `<f4`.
    pub descr: String,
    /// Shape written in the header.
    pub shape: Vec<u64>,
    /// Set when NumPy has no equivalent type and raw storage is written.
    pub note: Option<&'static str>,
}

/// The `.npy` layout of a decoded object in byte order `order`.
pub fn npy_layout(dtype: Dtype, shape: &[u64], order: ByteOrder) -> NpyLayout {
    let e = match order {
        ByteOrder::Little => '<',
        ByteOrder::Big => '>',
    };
    let code = dtype.numpy_storage_code();
    let note = match dtype {
        Dtype::Bfloat16 => Some("bfloat16 written as its raw 16-bit storage (uint16)"),
        Dtype::Bitmask => Some("bitmask written as packed bytes (MSB first), ceil(n/8) uint8"),
        _ => None,
    };
    let descr = if dtype.width() <= 1 {
        format!("|{code}")
    } else {
        format!("{e}{code}")
    };
    let shape = if dtype == Dtype::Bitmask {
        let n: u64 = shape.iter().product();
        vec![n.div_ceil(8)]
    } else {
        shape.to_vec()
    };
    NpyLayout { descr, shape, note }
}

/// Serialises a `.npy` (format 1.0) file.
pub fn write_npy(layout: &NpyLayout, data: &[u8]) -> Vec<u8> {
    let shape = match layout.shape.len() {
        1 => format!("({},)", layout.shape[0]),
        _ => format!(
            "({})",
            layout
                .shape
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        layout.descr
    );
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + data.len());
    out.extend_from_slice(NPY_MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_every_numpy_type() {
        for &dtype in &Dtype::ALL {
            if matches!(dtype, Dtype::Bitmask | Dtype::Bfloat16) {
                continue;
            }
            for order in [ByteOrder::Little, ByteOrder::Big] {
                let shape = vec![2, 3];
                let data: Vec<u8> = (0..6 * dtype.width()).map(|i| i as u8).collect();
                let l = npy_layout(dtype, &shape, order);
                let file = write_npy(&l, &data);
                assert_eq!((file.len() - data.len()) % 64, 0);
                let a = read_npy(&file).unwrap();
                assert_eq!(a.dtype, dtype);
                assert_eq!(a.shape, shape);
                assert_eq!(a.data, data);
                if dtype.width() > 1 {
                    assert_eq!(a.byte_order, order);
                }
            }
        }
    }

    #[test]
    fn scalar_and_fortran_order() {
        let l = npy_layout(Dtype::Int32, &[], ByteOrder::Little);
        let a = read_npy(&write_npy(&l, &7i32.to_le_bytes())).unwrap();
        assert!(a.shape.is_empty());
        // A 2x3 Fortran-ordered uint8 array [[0,1,2],[3,4,5]] stores columns: 0 3 1 4 2 5.
        let h = "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }";
        let mut f = Vec::from(&b"\x93NUMPY\x01\x00"[..]);
        f.extend_from_slice(&(h.len() as u16).to_le_bytes());
        f.extend_from_slice(h.as_bytes());
        f.extend_from_slice(&[0, 3, 1, 4, 2, 5]);
        assert_eq!(read_npy(&f).unwrap().data, vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn rejects_bad_files() {
        assert!(read_npy(b"not numpy").is_err());
        let l = npy_layout(Dtype::Float32, &[4], ByteOrder::Little);
        let f = write_npy(&l, &[0u8; 16]);
        assert!(read_npy(&f[..f.len() - 1]).is_err());
        let mut g = f.clone();
        g.extend_from_slice(&[0]);
        assert!(read_npy(&g).is_err());
        let h = "{'descr': '<U8', 'fortran_order': False, 'shape': (1,), }";
        let mut f = Vec::from(&b"\x93NUMPY\x01\x00"[..]);
        f.extend_from_slice(&(h.len() as u16).to_le_bytes());
        f.extend_from_slice(h.as_bytes());
        assert!(read_npy(&f).is_err());
    }
}
