//! Typed access to descriptor parameters. See `spec/pipeline.md` §1.

use crate::descriptor::ObjectDescriptor;
use crate::error::{Error, Result};

/// A required unsigned-integer parameter.
pub fn req_uint(d: &ObjectDescriptor, key: &str) -> Result<u64> {
    match d.params.get(key) {
        None => Err(Error::metadata(format!(
            "{} needs parameter {key:?}",
            pipeline_name(d)
        ))),
        Some(v) => v.as_u64().ok_or_else(|| {
            Error::metadata(format!(
                "{key} is a {}, not an unsigned integer",
                v.type_name()
            ))
        }),
    }
}

/// An optional integer parameter.
pub fn opt_int(d: &ObjectDescriptor, key: &str) -> Result<Option<i64>> {
    match d.params.get(key) {
        None => Ok(None),
        Some(v) => v.as_i64().map(Some).ok_or_else(|| {
            Error::metadata(format!("{key} is a {}, not an integer", v.type_name()))
        }),
    }
}

fn pipeline_name(d: &ObjectDescriptor) -> String {
    format!("{}/{}/{}", d.encoding, d.filter, d.compression)
}
