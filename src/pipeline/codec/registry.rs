//! The table of built-in stages: one line per codec. See `spec/pipeline.md` §9.

use super::compression::{bitmask, blosc2, lz4, sz3, szip, zfp, zstd};
use super::encoding::simple_packing;
use super::filter::shuffle;
use super::none;
use super::stage::{CompressionStage, EncodingStage, FilterStage, Params, StageKind};
use crate::error::{Error, Result};

/// Builds a stage of one kind from its descriptor keys, validating every
/// one it owns.
pub(crate) type BuildFn<T> = fn(&Params<'_>) -> Result<Box<T>>;

/// A stage's constructor, typed by the kind of stage it builds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Builder {
    /// Builds an encoding.
    Encoding(BuildFn<dyn EncodingStage>),
    /// Builds a filter.
    Filter(BuildFn<dyn FilterStage>),
    /// Builds a compression.
    Compression(BuildFn<dyn CompressionStage>),
}

impl Builder {
    /// The kind of stage it builds.
    pub(crate) fn kind(&self) -> StageKind {
        match self {
            Builder::Encoding(_) => StageKind::Encoding,
            Builder::Filter(_) => StageKind::Filter,
            Builder::Compression(_) => StageKind::Compression,
        }
    }
}

/// One registered stage.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CodecEntry {
    /// Wire name, as the `encoding`, `filter` or `compression` value.
    pub name: &'static str,
    /// Which descriptor field names it.
    pub kind: StageKind,
    /// Descriptor keys the stage owns (all share the stage's key prefix).
    pub keys: &'static [&'static str],
    /// Cargo feature that builds it in, if it is optional.
    pub feature: Option<&'static str>,
    /// Constructor; `None` when the feature is disabled.
    pub build: Option<Builder>,
}

impl CodecEntry {
    /// Builds the stage with `f`, the constructor of the kind asked for,
    /// or explains which cargo feature is missing.
    fn built<T: ?Sized>(&self, f: Option<BuildFn<T>>, params: &Params<'_>) -> Result<Box<T>> {
        match (self.build, f) {
            (Some(_), Some(f)) => f(params),
            (Some(b), None) => Err(Error::invalid_argument(format!(
                "{} is a {} stage",
                self.name,
                b.kind().key()
            ))),
            (None, _) => Err(disabled_error(
                self.kind,
                self.name,
                self.feature.unwrap_or(self.name),
            )),
        }
    }

    /// Builds the encoding stage.
    pub(crate) fn encoding(&self, params: &Params<'_>) -> Result<Box<dyn EncodingStage>> {
        let f = match self.build {
            Some(Builder::Encoding(f)) => Some(f),
            _ => None,
        };
        self.built(f, params)
    }

    /// Builds the filter stage.
    pub(crate) fn filter(&self, params: &Params<'_>) -> Result<Box<dyn FilterStage>> {
        let f = match self.build {
            Some(Builder::Filter(f)) => Some(f),
            _ => None,
        };
        self.built(f, params)
    }

    /// Builds the compression stage.
    pub(crate) fn compression(&self, params: &Params<'_>) -> Result<Box<dyn CompressionStage>> {
        let f = match self.build {
            Some(Builder::Compression(f)) => Some(f),
            _ => None,
        };
        self.built(f, params)
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
pub(crate) static REGISTRY: &[CodecEntry] = &[
    none::ENCODING,
    simple_packing::ENTRY,
    none::FILTER,
    shuffle::ENTRY,
    none::COMPRESSION,
    zstd::ENTRY,
    lz4::ENTRY,
    szip::ENTRY,
    blosc2::ENTRY,
    zfp::ENTRY,
    sz3::ENTRY,
    bitmask::RLE,
    bitmask::ROARING,
];

pub(crate) use crate::pipeline_spec::codec_of_key;

/// The registered stage of `kind` called `name`.
pub(crate) fn lookup(kind: StageKind, name: &str) -> Result<&'static CodecEntry> {
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
            if let Some(b) = a.build {
                assert_eq!(b.kind(), a.kind, "{}", a.name);
            }
        }
    }

    #[test]
    fn a_disabled_codec_names_its_feature() {
        let entry = CodecEntry {
            build: None,
            ..*lookup(StageKind::Compression, "zstd").unwrap()
        };
        let e = entry
            .compression(&Params::new(&Map::new(), "zstd"))
            .unwrap_err();
        assert_eq!(*e.kind(), ErrorKind::UnsupportedCodec);
        assert!(e.detail().contains("cargo feature \"zstd\""), "{e}");
    }

    #[test]
    fn a_stage_is_built_only_as_its_own_kind() {
        let entry = lookup(StageKind::Filter, "shuffle").unwrap();
        let mut p = Map::new();
        p.insert(
            "shuffle_element_size".into(),
            crate::cbor::Value::from(4u64),
        );
        assert_eq!(
            entry.filter(&Params::new(&p, "shuffle")).unwrap().name(),
            "shuffle"
        );
        let e = entry.compression(&Params::new(&p, "shuffle")).unwrap_err();
        assert!(e.detail().contains("shuffle is a filter stage"), "{e}");
    }

    #[test]
    fn unknown_names() {
        let e = lookup(StageKind::Filter, "bitshuffle").unwrap_err();
        assert!(e.detail().contains("unknown filter"), "{e}");
        let e = lookup(StageKind::Compression, "sz4").unwrap_err();
        assert!(e.detail().contains("unknown compression"), "{e}");
    }
}
