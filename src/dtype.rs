//! Element types and byte order of stored tensors. See `spec/format.md` §5.

use crate::error::{Error, Result};

/// The 15 element types of Tensogram v3.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// IEEE 754 binary16.
    Float16,
    /// Brain floating point (8-bit exponent, 7-bit mantissa).
    Bfloat16,
    /// IEEE 754 binary32.
    Float32,
    /// IEEE 754 binary64.
    Float64,
    /// Two float32 values (real, imaginary).
    Complex64,
    /// Two float64 values (real, imaginary).
    Complex128,
    /// Signed 8-bit integer.
    Int8,
    /// Signed 16-bit integer.
    Int16,
    /// Signed 32-bit integer.
    Int32,
    /// Signed 64-bit integer.
    Int64,
    /// Unsigned 8-bit integer.
    Uint8,
    /// Unsigned 16-bit integer.
    Uint16,
    /// Unsigned 32-bit integer.
    Uint32,
    /// Unsigned 64-bit integer.
    Uint64,
    /// Packed bits, MSB first, `ceil(n/8)` bytes.
    Bitmask,
}

impl Dtype {
    /// Every dtype, in wire-name order of the specification.
    pub const ALL: [Dtype; 15] = [
        Dtype::Float16,
        Dtype::Bfloat16,
        Dtype::Float32,
        Dtype::Float64,
        Dtype::Complex64,
        Dtype::Complex128,
        Dtype::Int8,
        Dtype::Int16,
        Dtype::Int32,
        Dtype::Int64,
        Dtype::Uint8,
        Dtype::Uint16,
        Dtype::Uint32,
        Dtype::Uint64,
        Dtype::Bitmask,
    ];

    /// The lowercase wire name (`"float32"`, …).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Float16 => "float16",
            Dtype::Bfloat16 => "bfloat16",
            Dtype::Float32 => "float32",
            Dtype::Float64 => "float64",
            Dtype::Complex64 => "complex64",
            Dtype::Complex128 => "complex128",
            Dtype::Int8 => "int8",
            Dtype::Int16 => "int16",
            Dtype::Int32 => "int32",
            Dtype::Int64 => "int64",
            Dtype::Uint8 => "uint8",
            Dtype::Uint16 => "uint16",
            Dtype::Uint32 => "uint32",
            Dtype::Uint64 => "uint64",
            Dtype::Bitmask => "bitmask",
        }
    }

    /// Parses an exact lowercase wire name.
    pub fn from_name(name: &str) -> Option<Dtype> {
        Dtype::ALL.iter().copied().find(|d| d.name() == name)
    }

    /// Bytes per element; 0 for `bitmask`, whose payload is bit-packed.
    pub fn width(self) -> usize {
        match self {
            Dtype::Int8 | Dtype::Uint8 => 1,
            Dtype::Float16 | Dtype::Bfloat16 | Dtype::Int16 | Dtype::Uint16 => 2,
            Dtype::Float32 | Dtype::Int32 | Dtype::Uint32 => 4,
            Dtype::Float64 | Dtype::Complex64 | Dtype::Int64 | Dtype::Uint64 => 8,
            Dtype::Complex128 => 16,
            Dtype::Bitmask => 0,
        }
    }

    /// Size of the unit whose bytes are reversed on a byte-order change
    /// (the component width for complex types); 1 when nothing swaps.
    pub fn swap_unit(self) -> usize {
        match self {
            Dtype::Complex64 => 4,
            Dtype::Complex128 => 8,
            Dtype::Bitmask => 1,
            d => d.width(),
        }
    }

    /// True for the signed integer types.
    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            Dtype::Int8 | Dtype::Int16 | Dtype::Int32 | Dtype::Int64
        )
    }

    /// True for the floating and complex types (those that can hold NaN/Inf).
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Dtype::Float16
                | Dtype::Bfloat16
                | Dtype::Float32
                | Dtype::Float64
                | Dtype::Complex64
                | Dtype::Complex128
        )
    }

    /// Exact payload bytes of `n` elements: `n * width`, or `ceil(n/8)` for
    /// bitmask. Fails on overflow.
    pub fn payload_len(self, n: u64) -> Result<u64> {
        match self {
            Dtype::Bitmask => Ok(n.div_ceil(8)),
            d => n.checked_mul(d.width() as u64).ok_or_else(|| {
                Error::metadata(format!(
                    "payload size of {n} {} elements overflows u64",
                    d.name()
                ))
            }),
        }
    }
}

/// NumPy's type codes (without the byte-order character) of the dtypes
/// that have one; bfloat16 and bitmask have none.
const NUMPY_CODES: [(Dtype, &str); 13] = [
    (Dtype::Float16, "f2"),
    (Dtype::Float32, "f4"),
    (Dtype::Float64, "f8"),
    (Dtype::Complex64, "c8"),
    (Dtype::Complex128, "c16"),
    (Dtype::Int8, "i1"),
    (Dtype::Int16, "i2"),
    (Dtype::Int32, "i4"),
    (Dtype::Int64, "i8"),
    (Dtype::Uint8, "u1"),
    (Dtype::Uint16, "u2"),
    (Dtype::Uint32, "u4"),
    (Dtype::Uint64, "u8"),
];

impl Dtype {
    /// NumPy's type code (`"f8"`, `"i2"`, `"c16"`), without the byte-order
    /// character; None for bfloat16 and bitmask, which NumPy lacks. `.npy`
    /// files and kerchunk references write it.
    pub fn numpy_code(self) -> Option<&'static str> {
        NUMPY_CODES
            .iter()
            .find(|(d, _)| *d == self)
            .map(|(_, c)| *c)
    }

    /// NumPy's code of the stored elements: [`Dtype::numpy_code`], else
    /// bfloat16's raw 16 bits as `"u2"` and a bitmask's packed bytes as
    /// `"u1"`, as `.npy` files and Python's arrays give them.
    pub fn numpy_storage_code(self) -> &'static str {
        match self {
            Dtype::Bfloat16 => "u2",
            d => d.numpy_code().unwrap_or("u1"),
        }
    }

    /// The dtype of NumPy type code `code` ([`Dtype::numpy_code`]).
    pub fn from_numpy_code(code: &str) -> Option<Dtype> {
        NUMPY_CODES
            .iter()
            .find(|(_, c)| *c == code)
            .map(|(d, _)| *d)
    }

    /// Element `i` of `data`, elements of this dtype in `order`, as
    /// float64: a bitmask's bits as 0 and 1; NaN past the end and for the
    /// complex types, which have two values per element. int64 and uint64
    /// round to the nearest float64. Every door that shows or compares
    /// values one at a time (`tgm plot`, `recompress`'s error report)
    /// reads them here; `stats` has its own vectorised loops.
    pub fn element_f64(self, data: &[u8], order: ByteOrder, i: usize) -> f64 {
        if self == Dtype::Bitmask {
            return data
                .get(i / 8)
                .map_or(f64::NAN, |b| f64::from((b >> (7 - i % 8)) & 1));
        }
        let w = self.width();
        if w > 8 || matches!(self, Dtype::Complex64 | Dtype::Complex128) {
            return f64::NAN;
        }
        let Some(bytes) = i
            .checked_mul(w)
            .and_then(|at| data.get(at..at.checked_add(w)?))
        else {
            return f64::NAN;
        };
        let mut b = [0u8; 8];
        b[..w].copy_from_slice(bytes);
        if order != ByteOrder::native() {
            b[..w].reverse();
        }
        macro_rules! ne {
            ($t:ty, $w:expr) => {
                <$t>::from_ne_bytes(b[..$w].try_into().unwrap_or_default())
            };
        }
        match self {
            Dtype::Float16 => half::f16::from_bits(ne!(u16, 2)).to_f64(),
            Dtype::Bfloat16 => half::bf16::from_bits(ne!(u16, 2)).to_f64(),
            Dtype::Float32 => f64::from(ne!(f32, 4)),
            Dtype::Float64 => ne!(f64, 8),
            Dtype::Int8 => f64::from(ne!(i8, 1)),
            Dtype::Int16 => f64::from(ne!(i16, 2)),
            Dtype::Int32 => f64::from(ne!(i32, 4)),
            Dtype::Int64 => ne!(i64, 8) as f64,
            Dtype::Uint8 => f64::from(b[0]),
            Dtype::Uint16 => f64::from(ne!(u16, 2)),
            Dtype::Uint32 => f64::from(ne!(u32, 4)),
            Dtype::Uint64 => ne!(u64, 8) as f64,
            _ => f64::NAN,
        }
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Byte order of stored multi-byte elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Most significant byte first.
    Big,
    /// Least significant byte first.
    Little,
}

impl ByteOrder {
    /// The order of the machine running this code.
    pub const fn native() -> ByteOrder {
        if cfg!(target_endian = "big") {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        }
    }

    /// Wire name: `"big"` or `"little"`.
    pub fn name(self) -> &'static str {
        match self {
            ByteOrder::Big => "big",
            ByteOrder::Little => "little",
        }
    }

    /// Parses a wire name.
    pub fn from_name(name: &str) -> Option<ByteOrder> {
        match name {
            "big" => Some(ByteOrder::Big),
            "little" => Some(ByteOrder::Little),
            _ => None,
        }
    }
}

/// Reverses the bytes of every `unit`-sized group of `data` in place.
/// A trailing partial group (never produced for valid payloads) is left alone.
pub fn swap_in_place(data: &mut [u8], unit: usize) {
    match unit {
        2 => data.chunks_exact_mut(2).for_each(|c| c.swap(0, 1)),
        4 => data.chunks_exact_mut(4).for_each(|c| {
            let v = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]).swap_bytes();
            c.copy_from_slice(&v.to_ne_bytes());
        }),
        8 => data.chunks_exact_mut(8).for_each(|c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            c.copy_from_slice(&u64::from_ne_bytes(a).swap_bytes().to_ne_bytes());
        }),
        u if u > 1 => data.chunks_exact_mut(u).for_each(|c| c.reverse()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_codes_name_every_dtype_numpy_has_both_ways() {
        for (d, c) in NUMPY_CODES {
            assert_eq!(d.numpy_code(), Some(c));
            assert_eq!(Dtype::from_numpy_code(c), Some(d));
            // The code's size is the dtype's width.
            assert_eq!(c[1..].parse::<usize>().ok(), Some(d.width()));
        }
        assert_eq!(Dtype::Bfloat16.numpy_code(), None);
        assert_eq!(Dtype::Bitmask.numpy_code(), None);
        assert_eq!(Dtype::from_numpy_code("b1"), None);
    }

    #[test]
    fn elements_read_as_float64_in_either_byte_order() {
        let be: Vec<u8> = [-2i16, 300].iter().flat_map(|v| v.to_be_bytes()).collect();
        assert_eq!(Dtype::Int16.element_f64(&be, ByteOrder::Big, 0), -2.0);
        assert_eq!(Dtype::Int16.element_f64(&be, ByteOrder::Big, 1), 300.0);
        assert!(Dtype::Int16.element_f64(&be, ByteOrder::Big, 2).is_nan());
        let le = 1.5f32.to_le_bytes();
        assert_eq!(Dtype::Float32.element_f64(&le, ByteOrder::Little, 0), 1.5);
        let h = half::f16::from_f64(0.25).to_bits().to_ne_bytes();
        assert_eq!(Dtype::Float16.element_f64(&h, ByteOrder::native(), 0), 0.25);
        assert_eq!(
            Dtype::Bitmask.element_f64(&[0b0100_0000], ByteOrder::Big, 1),
            1.0
        );
        assert_eq!(
            Dtype::Bitmask.element_f64(&[0b0100_0000], ByteOrder::Big, 0),
            0.0
        );
        assert!(Dtype::Bitmask.element_f64(&[0], ByteOrder::Big, 8).is_nan());
        assert!(Dtype::Complex128
            .element_f64(&[0; 16], ByteOrder::Big, 0)
            .is_nan());
        assert!(Dtype::Uint64
            .element_f64(&[0; 8], ByteOrder::Big, usize::MAX)
            .is_nan());
        assert_eq!(Dtype::Uint8.element_f64(&[7], ByteOrder::Big, 0), 7.0);
    }
}
