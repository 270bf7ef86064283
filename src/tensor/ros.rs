//! The ROS 2 `ExperimentalTensor` message and its conversions.
//! See `spec/tensor-model.md` §5.

use super::dlpack::DLDataType;
use super::view::{gather_with, StridedView};
use crate::descriptor::ObjectDescriptor;
use crate::error::{Error, Result};
use crate::limits::Limits;

/// Fields of the DLPack-aligned ROS 2 tensor message. `data` may be larger
/// than the tensor; `strides` empty means row-major contiguous. Elements are
/// in the host's byte order (big-endian hosts are out of scope).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExperimentalTensor {
    /// DLPack type code.
    pub dtype_code: u8,
    /// Bits per lane.
    pub dtype_bits: u8,
    /// Lanes.
    pub dtype_lanes: u16,
    /// Extents.
    pub shape: Vec<i64>,
    /// Strides in elements; empty = row-major.
    pub strides: Vec<i64>,
    /// Offset of the first element in `data`, in bytes.
    pub byte_offset: u64,
    /// Element storage.
    pub data: Vec<u8>,
}

impl ExperimentalTensor {
    /// The DLPack type.
    pub fn dtype(&self) -> DLDataType {
        DLDataType {
            code: self.dtype_code,
            bits: self.dtype_bits,
            lanes: self.dtype_lanes,
        }
    }

    /// A tgm object holding exactly the tensor's elements in row-major order,
    /// under the default [`Limits`].
    pub fn to_object(&self) -> Result<(ObjectDescriptor, Vec<u8>)> {
        self.to_object_with(&Limits::default())
    }

    /// [`Self::to_object`] under explicit limits: a message from an
    /// untrusted peer can describe a huge tensor in a few bytes with strides
    /// of 0, so the gathered size is checked against
    /// `limits.max_object_bytes` before anything is allocated.
    pub fn to_object_with(&self, limits: &Limits) -> Result<(ObjectDescriptor, Vec<u8>)> {
        let t = self.dtype();
        t.validate()?;
        let view = StridedView {
            data: &self.data,
            shape: &self.shape,
            strides: if self.strides.is_empty() {
                None
            } else {
                Some(&self.strides)
            },
            byte_offset: self.byte_offset,
            element_bytes: t.element_bytes(),
        };
        let bytes = gather_with(&view, limits)?;
        let shape: Vec<u64> = self.shape.iter().map(|&d| d as u64).collect();
        Ok((t.descriptor(&shape)?, bytes))
    }

    /// The message for a decoded object (native-order bytes): contiguous,
    /// empty strides, zero offset.
    pub fn from_object(d: &ObjectDescriptor, bytes: &[u8]) -> Result<Self> {
        let (t, shape) = DLDataType::of_descriptor(d)?;
        if t.size_of(&shape)? != bytes.len() as u64 {
            return Err(Error::invalid_argument(
                "decoded bytes do not match the tensor size",
            ));
        }
        Ok(ExperimentalTensor {
            dtype_code: t.code,
            dtype_bits: t.bits,
            dtype_lanes: t.lanes,
            shape: shape
                .iter()
                .map(|&x| {
                    i64::try_from(x).map_err(|_| Error::invalid_argument("extent exceeds i64"))
                })
                .collect::<Result<_>>()?,
            strides: Vec::new(),
            byte_offset: 0,
            data: bytes.to_vec(),
        })
    }
}
