//! The running stages of a descriptor's pipeline: each stage of the
//! inert [`PipelineSpec`] (held by the descriptor) resolved to the codec
//! that runs it, borrowed from the spec without allocating. See
//! `spec/pipeline.md` §1 and §9.

use std::borrow::Cow;

use super::codec::registry::{self, REGISTRY};
use super::codec::stage::{
    CompressionStage, EncodingStage, FilterStage, Params, Stage, StageContext, StageKind,
};
use crate::descriptor::{Map, ObjectDescriptor};
use crate::error::{Error, Result};
use crate::pipeline_spec::{
    CompressionSpec, EncodingSpec, FilterSpec, PipelineSpec, UnusableStage,
};

/// A stage tgm has no codec for, or whose keys were refused: every call
/// fails with the error the specification recorded.
impl Stage for UnusableStage {
    fn name(&self) -> &str {
        UnusableStage::name(self)
    }

    fn validate(&self, _: &StageContext) -> Result<()> {
        Err(self.error())
    }

    fn encode<'a>(&mut self, _: Cow<'a, [u8]>, _: &StageContext) -> Result<Cow<'a, [u8]>> {
        Err(self.error())
    }

    fn decode_into(&self, _: &[u8], _: &StageContext, _: &mut [u8]) -> Result<()> {
        Err(self.error())
    }
}

impl EncodingStage for UnusableStage {
    fn encoded_len(&self, _: u64, _: &StageContext) -> Result<u64> {
        Err(self.error())
    }
}

impl FilterStage for UnusableStage {
    fn encoded_len(&self, _: u64, _: &StageContext) -> Result<u64> {
        Err(self.error())
    }
}

impl CompressionStage for UnusableStage {}

/// The stage standing for a built-in compression whose cargo feature is
/// off in this build: running it fails, naming the feature.
#[cfg(not(all(
    any(feature = "zstd", feature = "zstd-decode-pure"),
    feature = "lz4",
    feature = "szip",
    feature = "blosc2",
    feature = "zfp",
    feature = "sz3"
)))]
fn disabled(name: &'static str) -> UnusableStage {
    let error = super::codec::entry::disabled_error(StageKind::Compression, name, name);
    UnusableStage::new(StageKind::Compression, name, &error)
}

#[cfg(not(any(feature = "zstd", feature = "zstd-decode-pure")))]
static NO_ZSTD: std::sync::LazyLock<UnusableStage> = std::sync::LazyLock::new(|| disabled("zstd"));
#[cfg(not(feature = "lz4"))]
static NO_LZ4: std::sync::LazyLock<UnusableStage> = std::sync::LazyLock::new(|| disabled("lz4"));
#[cfg(not(feature = "szip"))]
static NO_SZIP: std::sync::LazyLock<UnusableStage> = std::sync::LazyLock::new(|| disabled("szip"));
#[cfg(not(feature = "blosc2"))]
static NO_BLOSC2: std::sync::LazyLock<UnusableStage> =
    std::sync::LazyLock::new(|| disabled("blosc2"));
#[cfg(not(feature = "zfp"))]
static NO_ZFP: std::sync::LazyLock<UnusableStage> = std::sync::LazyLock::new(|| disabled("zfp"));
#[cfg(not(feature = "sz3"))]
static NO_SZ3: std::sync::LazyLock<UnusableStage> = std::sync::LazyLock::new(|| disabled("sz3"));

/// The codec running the encoding stage `e`.
fn encoding(e: &EncodingSpec) -> &dyn EncodingStage {
    match e {
        EncodingSpec::None => &super::codec::none::Identity,
        EncodingSpec::SimplePacking(sp) => sp,
        EncodingSpec::SpectralPacking(sp) => sp.as_ref(),
        EncodingSpec::Unusable(u) => u,
    }
}

/// The codec running the filter stage `f`.
fn filter(f: &FilterSpec) -> &dyn FilterStage {
    match f {
        FilterSpec::None => &super::codec::none::Identity,
        FilterSpec::Shuffle(s) => s,
        FilterSpec::Unusable(u) => u,
    }
}

/// The codec running the compression stage `c`: a codec whose cargo
/// feature is off fails when run, naming the feature.
fn compression(c: &CompressionSpec) -> &dyn CompressionStage {
    match c {
        CompressionSpec::None => &super::codec::none::Identity,
        #[cfg(any(feature = "zstd", feature = "zstd-decode-pure"))]
        CompressionSpec::Zstd(z) => z,
        #[cfg(not(any(feature = "zstd", feature = "zstd-decode-pure")))]
        CompressionSpec::Zstd(_) => &*NO_ZSTD,
        #[cfg(feature = "lz4")]
        CompressionSpec::Lz4 => &super::codec::compression::lz4::Lz4,
        #[cfg(not(feature = "lz4"))]
        CompressionSpec::Lz4 => &*NO_LZ4,
        #[cfg(feature = "szip")]
        CompressionSpec::Szip(s) => s,
        #[cfg(not(feature = "szip"))]
        CompressionSpec::Szip(_) => &*NO_SZIP,
        #[cfg(feature = "blosc2")]
        CompressionSpec::Blosc2(b) => b,
        #[cfg(not(feature = "blosc2"))]
        CompressionSpec::Blosc2(_) => &*NO_BLOSC2,
        #[cfg(feature = "zfp")]
        CompressionSpec::Zfp(z) => z,
        #[cfg(not(feature = "zfp"))]
        CompressionSpec::Zfp(_) => &*NO_ZFP,
        #[cfg(feature = "sz3")]
        CompressionSpec::Sz3(z) => z,
        #[cfg(not(feature = "sz3"))]
        CompressionSpec::Sz3(_) => &*NO_SZ3,
        CompressionSpec::Rle => &super::codec::compression::bitmask::BitSet::Rle,
        CompressionSpec::Roaring => &super::codec::compression::bitmask::BitSet::Roaring,
        CompressionSpec::Unusable(u) => u,
    }
}

/// The running stages of a pipeline: one typed slot per stage kind, so
/// that a stage can only stand where its kind belongs (`spec/pipeline.md`
/// §1).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stages<'a> {
    /// Values to the encoded stream.
    pub encoding: &'a dyn EncodingStage,
    /// The encoded stream rearranged.
    pub filter: &'a dyn FilterStage,
    /// The filtered stream to the stored payload.
    pub compression: &'a dyn CompressionStage,
}

impl<'a> Stages<'a> {
    /// The stages as their common kind, in encode order.
    pub(crate) fn all(&self) -> [&'a dyn Stage; 3] {
        [self.encoding, self.filter, self.compression]
    }
}

/// The running stages of `p`, borrowed from it.
pub(crate) fn stages(p: &PipelineSpec) -> Stages<'_> {
    Stages {
        encoding: encoding(p.encoding()),
        filter: filter(p.filter()),
        compression: compression(p.compression()),
    }
}

/// The context each stage sees when `d` is decoded (stored byte order,
/// sequential), in encode order.
pub(crate) fn contexts_of(d: &ObjectDescriptor) -> Result<[StageContext; 3]> {
    let base = super::base_context(d, d.byte_order, 0)?;
    contexts(stages(d.pipeline()), base, d.decoded_len()?, 0)
}

/// Mutable stages of one encode run (encoding may derive parameters).
pub(crate) struct EncodeStages {
    pub(crate) encoding: Box<dyn EncodingStage>,
    pub(crate) filter: Box<dyn FilterStage>,
    pub(crate) compression: Box<dyn CompressionStage>,
}

impl EncodeStages {
    /// Fresh stages for encoding `p`: every key with a codec's prefix must
    /// be one the pipeline's stages own, and every stage must be runnable.
    pub(crate) fn parse_strict(p: &PipelineSpec) -> Result<Self> {
        let names = p.names();
        let params = p.params();
        let entry =
            |kind, name| registry::lookup(kind, name).map(|e| (e, Params::new(params, e.name)));
        let (e, ep) = entry(StageKind::Encoding, names[0])?;
        let encoding = e.encoding(&ep)?;
        let (f, fp) = entry(StageKind::Filter, names[1])?;
        let filter = f.filter(&fp)?;
        let (c, cp) = entry(StageKind::Compression, names[2])?;
        let compression = c.compression(&cp)?;
        check_codec_keys(params, &names)?;
        Ok(EncodeStages {
            encoding,
            filter,
            compression,
        })
    }

    /// The stages, borrowed.
    pub(crate) fn as_stages(&self) -> Stages<'_> {
        Stages {
            encoding: &*self.encoding,
            filter: &*self.filter,
            compression: &*self.compression,
        }
    }

    /// The specification after the run: `p` with the keys the stages
    /// derived from the data written over its own.
    pub(crate) fn encoded_spec(&self, p: &PipelineSpec) -> Result<PipelineSpec> {
        p.with_derived(
            self.as_stages()
                .all()
                .iter()
                .flat_map(|s| s.derived_params()),
        )
    }
}

/// Rejects codec keys (`spec/pipeline.md` §1: a key starting with a codec
/// prefix) that no stage of the pipeline owns, listing the valid keys.
fn check_codec_keys(params: &Map, names: &[&str; 3]) -> Result<()> {
    let active = |kind: StageKind| match kind {
        StageKind::Encoding => names[0],
        StageKind::Filter => names[1],
        StageKind::Compression => names[2],
    };
    let owned: Vec<&'static str> = REGISTRY
        .iter()
        .filter(|e| active(e.kind) == e.name)
        .flat_map(|e| e.keys.iter().copied())
        .collect();
    for key in params.keys() {
        let Some(codec) = registry::codec_of_key(key) else {
            continue;
        };
        if owned.contains(&key.as_str()) {
            continue;
        }
        let entry = REGISTRY.iter().find(|e| e.name == codec);
        let in_use = names.contains(&codec);
        let valid = entry.map(|e| e.keys.join(", ")).unwrap_or_default();
        return Err(Error::metadata(if in_use {
            format!("unknown {codec} parameter {key:?}; valid keys: {valid}")
        } else {
            format!(
                "parameter {key:?} belongs to {codec}, which this pipeline ({}/{}/{}) does not use",
                names[0], names[1], names[2]
            )
        }));
    }
    Ok(())
}

/// The context of each stage, in encode order, checked by every stage.
/// `input_len` of the compression stage is `payload_len`.
pub(crate) fn contexts(
    stages: Stages<'_>,
    base: StageContext,
    decoded_len: u64,
    payload_len: u64,
) -> Result<[StageContext; 3]> {
    let mut cx = [base; 3];
    cx[0].decoded_len = decoded_len;
    stages.encoding.validate(&cx[0])?;
    cx[0].input_len = stages.encoding.encoded_len(decoded_len, &cx[0])?;
    (cx[1].sample_bits, cx[1].packed) = stages.encoding.output_form(&cx[0]);
    cx[1].decoded_len = cx[0].input_len;
    stages.filter.validate(&cx[1])?;
    cx[1].input_len = stages.filter.encoded_len(cx[1].decoded_len, &cx[1])?;
    (cx[2].sample_bits, cx[2].packed) = stages.filter.output_form(&cx[1]);
    cx[2].decoded_len = cx[1].input_len;
    stages.compression.validate(&cx[2])?;
    cx[2].input_len = payload_len;
    Ok(cx)
}
