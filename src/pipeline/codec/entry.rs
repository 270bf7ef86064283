//! A registered codec: its wire name, kind, owned keys, cargo feature and
//! constructor. Each codec defines its entry in its own folder; the
//! registry (`super::registry`) lists the entries. See `spec/pipeline.md` §9.

use super::stage::{CompressionStage, EncodingStage, FilterStage, Params, StageKind};
use crate::dtype::Dtype;
use crate::error::{Error, Result};
use crate::pipeline::PipelineBuilder;

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

/// Defines `BUILD`, the constructor of a compression codec's
/// [`CodecEntry`]: when the cargo features that build the codec in are on
/// (`cfg`), a [`Builder::Compression`] that makes `$stage` from its
/// descriptor keys by its `from_params` (or, given `fn`, the constructor
/// named); when they are off, `None`, so that running the codec is the
/// disabled-codec error ([`disabled_error`]). See `spec/pipeline.md` §9.
macro_rules! compression_build {
    ($cfg:meta, fn $build:expr) => {
        #[cfg($cfg)]
        const BUILD: Option<$crate::pipeline::codec::entry::Builder> =
            Some($crate::pipeline::codec::entry::Builder::Compression($build));
        #[cfg(not($cfg))]
        const BUILD: Option<$crate::pipeline::codec::entry::Builder> = None;
    };
    ($cfg:meta, $stage:ty) => {
        $crate::pipeline::codec::entry::compression_build!(
            $cfg,
            fn |p| Ok(Box::new(<$stage>::from_params(p)?))
        );
    };
}
pub(crate) use compression_build;

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
    /// What `doctor` round-trips to show the codec works; `None` for a
    /// codec another entry's sample runs.
    pub sample: Option<Sample>,
}

/// A self-test case of `doctor` (`src/doctor.rs`): a small object of
/// `dtype` encoded through `pipeline` and decoded within `tolerance`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    /// The case's label in the doctor report.
    pub label: &'static str,
    /// The pipeline it runs.
    pub pipeline: fn() -> PipelineBuilder,
    /// `Float64` (a smooth field) or `Bitmask` (runs of bits).
    pub dtype: Dtype,
    /// The largest difference allowed per value (0: lossless).
    pub tolerance: f64,
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
