//! CBOR (RFC 8949) for Tensogram metadata and descriptors, on `ciborium`.
//!
//! The writer emits the canonical form the format requires
//! (`spec/format.md` §4.1): shortest integer heads, shortest lossless float
//! width, definite lengths, map keys ordered by their encoded bytes at every
//! depth. The reader accepts any well-formed CBOR within [`CborLimits`],
//! rejects duplicate text keys and invalid UTF-8, and reports byte offsets
//! (§4.2). [`Value`] converts to and from `ciborium::Value`, implements
//! `serde::Serialize`/`Deserialize`, and renders as JSON (§4.3).

mod interop;
mod read;
mod value;
mod write;

pub use read::{parse_one, CborLimits};
pub use value::Value;
pub use write::encode_canonical;
