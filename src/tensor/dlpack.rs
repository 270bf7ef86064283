//! DLPack data types and their mapping onto tgm storage. See `spec/tensor-model.md` §1–§2.

use crate::cbor::Value;
use crate::descriptor::ObjectDescriptor;
use crate::dtype::Dtype;
use crate::error::{Error, Result};

/// Descriptor key recording a DLPack type that the format lacks.
pub const DLPACK_ANNOTATION: &str = "dlpack";

/// DLPack type codes (DLPack 1.x `DLDataTypeCode`).
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DLDataTypeCode {
    Int = 0,
    UInt = 1,
    Float = 2,
    OpaqueHandle = 3,
    Bfloat = 4,
    Complex = 5,
    Bool = 6,
    Float8E3M4 = 7,
    Float8E4M3 = 8,
    Float8E4M3B11Fnuz = 9,
    Float8E4M3Fn = 10,
    Float8E4M3Fnuz = 11,
    Float8E5M2 = 12,
    Float8E5M2Fnuz = 13,
    Float8E8M0Fnu = 14,
    Float6E2M3Fn = 15,
    Float6E3M2Fn = 16,
    Float4E2M1Fn = 17,
}

impl DLDataTypeCode {
    /// Decodes a code; unknown codes are an error.
    pub fn from_u8(c: u8) -> Result<Self> {
        use DLDataTypeCode::*;
        const ALL: [DLDataTypeCode; 18] = [
            Int,
            UInt,
            Float,
            OpaqueHandle,
            Bfloat,
            Complex,
            Bool,
            Float8E3M4,
            Float8E4M3,
            Float8E4M3B11Fnuz,
            Float8E4M3Fn,
            Float8E4M3Fnuz,
            Float8E5M2,
            Float8E5M2Fnuz,
            Float8E8M0Fnu,
            Float6E2M3Fn,
            Float6E3M2Fn,
            Float4E2M1Fn,
        ];
        ALL.get(c as usize)
            .copied()
            .ok_or_else(|| Error::invalid_argument(format!("unsupported DLPack dtype code {c}")))
    }
}

/// A DLPack element type: code, bits per lane, lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct DLDataType {
    /// Type code ([`DLDataTypeCode`] as u8).
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes (vector width); at least 1.
    pub lanes: u16,
}

impl DLDataType {
    /// Creates a type, checking the code and that lanes > 0.
    pub fn new(code: DLDataTypeCode, bits: u8, lanes: u16) -> Result<Self> {
        let t = DLDataType {
            code: code as u8,
            bits,
            lanes,
        };
        t.validate()?;
        Ok(t)
    }

    /// Rejects unknown codes, zero bits and zero lanes.
    pub fn validate(&self) -> Result<DLDataTypeCode> {
        let code = DLDataTypeCode::from_u8(self.code)?;
        if self.lanes == 0 {
            return Err(Error::invalid_argument("DLPack lanes must be at least 1"));
        }
        if self.bits == 0 {
            return Err(Error::invalid_argument("DLPack bits must be at least 1"));
        }
        if code == DLDataTypeCode::OpaqueHandle {
            return Err(Error::invalid_argument(
                "DLPack opaque handles carry no data tgm can store",
            ));
        }
        Ok(code)
    }

    /// Bytes per element: `ceil(bits * lanes / 8)` (DLPack's rule).
    pub fn element_bytes(&self) -> usize {
        (self.bits as usize * self.lanes as usize).div_ceil(8)
    }

    /// Bytes of `shape`: `prod(shape) * element_bytes`, overflow-checked.
    pub fn size_of(&self, shape: &[u64]) -> Result<u64> {
        shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .and_then(|n| n.checked_mul(self.element_bytes() as u64))
            .ok_or_else(|| {
                Error::invalid_argument(format!("tensor of shape {shape:?} overflows u64 bytes"))
            })
    }

    /// The tgm dtype storing one lane natively, if the format has one.
    fn native(&self) -> Option<Dtype> {
        use DLDataTypeCode as C;
        Some(
            match (DLDataTypeCode::from_u8(self.code).ok()?, self.bits) {
                (C::Int, 8) => Dtype::Int8,
                (C::Int, 16) => Dtype::Int16,
                (C::Int, 32) => Dtype::Int32,
                (C::Int, 64) => Dtype::Int64,
                (C::UInt, 8) => Dtype::Uint8,
                (C::UInt, 16) => Dtype::Uint16,
                (C::UInt, 32) => Dtype::Uint32,
                (C::UInt, 64) => Dtype::Uint64,
                (C::Float, 16) => Dtype::Float16,
                (C::Float, 32) => Dtype::Float32,
                (C::Float, 64) => Dtype::Float64,
                (C::Bfloat, 16) => Dtype::Bfloat16,
                (C::Complex, 64) => Dtype::Complex64,
                (C::Complex, 128) => Dtype::Complex128,
                _ => return None,
            },
        )
    }

    /// The DLPack type of a tgm dtype (bitmask has none).
    pub fn from_dtype(d: Dtype) -> Result<Self> {
        use DLDataTypeCode as C;
        let (code, bits) = match d {
            Dtype::Int8 => (C::Int, 8),
            Dtype::Int16 => (C::Int, 16),
            Dtype::Int32 => (C::Int, 32),
            Dtype::Int64 => (C::Int, 64),
            Dtype::Uint8 => (C::UInt, 8),
            Dtype::Uint16 => (C::UInt, 16),
            Dtype::Uint32 => (C::UInt, 32),
            Dtype::Uint64 => (C::UInt, 64),
            Dtype::Float16 => (C::Float, 16),
            Dtype::Float32 => (C::Float, 32),
            Dtype::Float64 => (C::Float, 64),
            Dtype::Bfloat16 => (C::Bfloat, 16),
            Dtype::Complex64 => (C::Complex, 64),
            Dtype::Complex128 => (C::Complex, 128),
            Dtype::Bitmask => {
                return Err(Error::invalid_argument(
                    "bitmask has no DLPack type; unpack it to bool first",
                ))
            }
        };
        DLDataType::new(code, bits, 1)
    }

    /// How a tensor of this type and `shape` is stored in a tgm object:
    /// the storage dtype, the stored shape, and whether an annotation is needed.
    ///
    /// Native single-lane types are stored as themselves; native types with
    /// lanes > 1 gain a trailing dimension of `lanes`; every other type is
    /// stored as uint8 with a trailing dimension of its element bytes (omitted
    /// when 1).
    pub fn storage(&self, shape: &[u64]) -> Result<(Dtype, Vec<u64>, bool)> {
        self.validate()?;
        let mut s = shape.to_vec();
        if let Some(d) = self.native() {
            if self.lanes > 1 {
                s.push(self.lanes as u64);
            }
            return Ok((d, s, self.lanes > 1));
        }
        let eb = self.element_bytes() as u64;
        if eb > 1 {
            s.push(eb);
        }
        Ok((Dtype::Uint8, s, true))
    }

    /// The annotation value stored in the descriptor.
    pub fn annotation(&self) -> Value {
        Value::text_map([
            ("code", Value::Uint(self.code as u64)),
            ("bits", Value::Uint(self.bits as u64)),
            ("lanes", Value::Uint(self.lanes as u64)),
        ])
    }

    /// Recovers the DLPack type and logical shape of a stored object.
    pub fn of_descriptor(d: &ObjectDescriptor) -> Result<(Self, Vec<u64>)> {
        let Some(a) = d.annotations().get(DLPACK_ANNOTATION) else {
            return Ok((Self::from_dtype(d.dtype)?, d.shape.clone()));
        };
        let field = |k: &str, max: u64| -> Result<u64> {
            a.get(k)
                .and_then(Value::as_u64)
                .filter(|&v| v <= max)
                .ok_or_else(|| Error::metadata(format!("dlpack annotation lacks a valid {k:?}")))
        };
        let t = DLDataType {
            code: field("code", u8::MAX as u64)? as u8,
            bits: field("bits", u8::MAX as u64)? as u8,
            lanes: field("lanes", u16::MAX as u64)? as u16,
        };
        let (storage, _, _) = t.storage(&[])?;
        if storage != d.dtype {
            return Err(Error::metadata(format!(
                "dlpack annotation {t:?} does not match stored dtype {}",
                d.dtype
            )));
        }
        let mut shape = d.shape.clone();
        let trailing = if t.native().is_some() {
            t.lanes as u64
        } else {
            t.element_bytes() as u64
        };
        if trailing > 1 {
            if shape.last() != Some(&trailing) {
                return Err(Error::metadata(
                    "dlpack annotation does not match the stored shape",
                ));
            }
            shape.pop();
        }
        Ok((t, shape))
    }

    /// A descriptor storing a tensor of this type and `shape` (row-major,
    /// native byte order), annotated when the format lacks the type.
    pub fn descriptor(&self, shape: &[u64]) -> Result<ObjectDescriptor> {
        let (dtype, stored, annotate) = self.storage(shape)?;
        let mut d = ObjectDescriptor::new(dtype, stored);
        if annotate {
            d.set_annotation(DLPACK_ANNOTATION, self.annotation());
        }
        Ok(d)
    }
}
