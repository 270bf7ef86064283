//! The table of built-in stages: one line per codec. See `spec/pipeline.md` §9.

use super::codec::{Codec, Params, StageKind};
use super::{
    bitmask_codec, blosc2_codec, lz4_codec, none_codec, shuffle, simple_packing, sz3_codec,
    szip_stage, zfp_codec, zstd_codec,
};
use crate::error::{Error, Result};

/// Builds a stage from its descriptor keys, validating every one it owns.
pub type BuildFn = fn(&Params<'_>) -> Result<Box<dyn Codec>>;

/// One registered stage.
#[derive(Debug, Clone, Copy)]
pub struct CodecEntry {
    /// Wire name, as the `encoding`, `filter` or `compression` value.
    pub name: &'static str,
    /// Which descriptor field names it.
    pub kind: StageKind,
    /// Descriptor keys the stage owns (all share the stage's key prefix).
    pub keys: &'static [&'static str],
    /// Cargo feature that builds it in, if it is optional.
    pub feature: Option<&'static str>,
    /// Constructor; `None` when the feature is disabled.
    pub build: Option<BuildFn>,
}

impl CodecEntry {
    /// Builds the stage, or explains which cargo feature is missing.
    pub fn build(&self, params: &Params<'_>) -> Result<Box<dyn Codec>> {
        match self.build {
            Some(f) => f(params),
            None => Err(disabled_error(
                self.kind,
                self.name,
                self.feature.unwrap_or(self.name),
            )),
        }
    }
}

/// The error for running a stage whose cargo feature is off.
pub(crate) fn disabled_error(kind: StageKind, name: &str, feature: &str) -> Error {
    Error::unsupported_codec(format!(
        "{} {name:?} is disabled in this build of tgm (cargo feature {feature:?})",
        kind.key()
    ))
}

/// Every built-in stage. Adding a codec adds one line here.
pub static REGISTRY: &[CodecEntry] = &[
    none_codec::ENCODING,
    simple_packing::ENTRY,
    none_codec::FILTER,
    shuffle::ENTRY,
    none_codec::COMPRESSION,
    zstd_codec::ENTRY,
    lz4_codec::ENTRY,
    szip_stage::ENTRY,
    blosc2_codec::ENTRY,
    zfp_codec::ENTRY,
    sz3_codec::ENTRY,
    bitmask_codec::RLE,
    bitmask_codec::ROARING,
];

pub use crate::pipeline_spec::codec_of_key;

/// The registered stage of `kind` called `name`.
pub fn lookup(kind: StageKind, name: &str) -> Result<&'static CodecEntry> {
    if let Some(e) = REGISTRY.iter().find(|e| e.kind == kind && e.name == name) {
        return Ok(e);
    }
    Err(crate::pipeline_spec::unknown_stage_error(kind, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::Map;
    use crate::error::ErrorKind;

    #[test]
    fn names_are_unique_per_kind_and_keys_carry_the_codec_prefix() {
        for (i, a) in REGISTRY.iter().enumerate() {
            for b in &REGISTRY[i + 1..] {
                assert!(a.kind != b.kind || a.name != b.name, "{}", a.name);
            }
            for k in a.keys {
                assert_eq!(codec_of_key(k), Some(a.name), "{k}");
            }
        }
    }

    #[test]
    fn a_disabled_codec_names_its_feature() {
        let entry = CodecEntry {
            build: None,
            ..*lookup(StageKind::Compression, "zstd").unwrap()
        };
        let e = entry.build(&Params::new(&Map::new(), "zstd")).unwrap_err();
        assert_eq!(*e.kind(), ErrorKind::UnsupportedCodec);
        assert!(e.detail().contains("cargo feature \"zstd\""), "{e}");
    }

    #[test]
    fn unknown_names() {
        let e = lookup(StageKind::Filter, "bitshuffle").unwrap_err();
        assert!(e.detail().contains("unknown filter"), "{e}");
        let e = lookup(StageKind::Compression, "sz4").unwrap_err();
        assert!(e.detail().contains("unknown compression"), "{e}");
    }
}
