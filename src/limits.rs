//! Resource limits applied to every decode path. See `spec/format.md` §10.

use crate::cbor::CborLimits;

/// Caps on what untrusted input may make tgm do.
///
/// Every field is finite by default; exceeding one yields
/// [`crate::ErrorKind::LimitExceeded`] naming the field.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest message accepted, in bytes (default 4 GiB, as the reference's scanner).
    pub max_message_len: u64,
    /// Most data objects in one message (default 1,048,576).
    pub max_objects: usize,
    /// Most frames in one message (default 2,097,168).
    pub max_frames: usize,
    /// Largest metadata, index, hash or descriptor CBOR, in bytes (default 256 MiB).
    pub max_cbor_len: u64,
    /// Deepest CBOR nesting (default 256, the reference's own limit).
    pub max_cbor_depth: usize,
    /// Most CBOR items in one metadata or descriptor value (default 1,048,576).
    /// Each decoded item costs about 40 bytes, so this also caps the memory a
    /// small CBOR value can make the reader allocate.
    pub max_cbor_items: usize,
    /// Most dimensions of one tensor (default 64).
    pub max_ndim: usize,
    /// Largest decoded object, in bytes (default 16 GiB).
    pub max_object_bytes: u64,
    /// Largest total decoded size of one message, in bytes (default 64 GiB).
    pub max_message_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_len: 4 << 30,
            max_objects: 1 << 20,
            max_frames: (2 << 20) + 16,
            max_cbor_len: 256 << 20,
            max_cbor_depth: 256,
            max_cbor_items: 1 << 20,
            max_ndim: 64,
            max_object_bytes: 16 << 30,
            max_message_bytes: 64 << 30,
        }
    }
}

impl Limits {
    /// No practical limits: for trusted pipelines only.
    pub fn unlimited() -> Self {
        Limits {
            max_message_len: u64::MAX,
            max_objects: usize::MAX,
            max_frames: usize::MAX,
            max_cbor_len: u64::MAX,
            max_cbor_depth: 4096,
            max_cbor_items: usize::MAX,
            max_ndim: usize::MAX,
            max_object_bytes: u64::MAX,
            max_message_bytes: u64::MAX,
        }
    }

    pub(crate) fn cbor(&self) -> CborLimits {
        CborLimits {
            max_depth: self.max_cbor_depth,
            max_items: self.max_cbor_items,
        }
    }
}
