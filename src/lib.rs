//! tgm: Tensogram v3 tensor messages.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod cbor;
pub mod dtype;
pub mod error;
pub mod szip;

pub use dtype::{ByteOrder, Dtype};
pub use error::{Error, ErrorKind, Result};
pub mod descriptor;
pub mod limits;
pub mod metadata;
pub mod pipeline;
