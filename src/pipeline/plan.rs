//! A descriptor's pipeline as typed stages, parsed and validated once.
//! See `spec/pipeline.md` §1 and §9.

use std::fmt;
use std::sync::Arc;

use super::codec::{Codec, Params, StageContext, StageKind};
use super::registry::{self, REGISTRY};
use crate::descriptor::ObjectDescriptor;
use crate::error::{Error, Result};

/// The three stages of one object, each built from the registry with its
/// parameters validated. Keys no stage owns stay in the descriptor untouched.
#[derive(Clone)]
pub struct Pipeline {
    encoding: Arc<dyn Codec>,
    filter: Arc<dyn Codec>,
    compression: Arc<dyn Codec>,
}

impl fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pipeline")
            .field("encoding", &self.encoding)
            .field("filter", &self.filter)
            .field("compression", &self.compression)
            .finish()
    }
}

/// Mutable stages of one encode run (encoding may derive parameters).
pub(crate) struct EncodeStages {
    pub(crate) stages: [Box<dyn Codec>; 3],
}

fn build(kind: StageKind, name: &str, d: &ObjectDescriptor) -> Result<Box<dyn Codec>> {
    let entry = registry::lookup(kind, name)?;
    entry.build(&Params::new(&d.params, entry.name))
}

fn build_all(d: &ObjectDescriptor) -> Result<[Box<dyn Codec>; 3]> {
    Ok([
        build(StageKind::Encoding, &d.encoding, d)?,
        build(StageKind::Filter, &d.filter, d)?,
        build(StageKind::Compression, &d.compression, d)?,
    ])
}

impl Pipeline {
    /// Parses the stages a descriptor names. Lenient about keys: a key no
    /// stage owns is left alone, as the reference writes some of its own.
    pub fn parse(d: &ObjectDescriptor) -> Result<Self> {
        let [encoding, filter, compression] = build_all(d)?;
        Ok(Pipeline {
            encoding: encoding.into(),
            filter: filter.into(),
            compression: compression.into(),
        })
    }

    /// The encoding stage.
    pub fn encoding(&self) -> &dyn Codec {
        &*self.encoding
    }

    /// The filter stage.
    pub fn filter(&self) -> &dyn Codec {
        &*self.filter
    }

    /// The compression stage.
    pub fn compression(&self) -> &dyn Codec {
        &*self.compression
    }

    /// The context each stage sees when `d` is decoded (stored byte order,
    /// sequential), in encode order.
    pub fn contexts(&self, d: &ObjectDescriptor) -> Result<[StageContext; 3]> {
        let base = super::base_context(d, d.byte_order, 0, Default::default())?;
        contexts(self.stages(), base, d.decoded_len()?, 0)
    }

    /// The stages in encode order.
    pub fn stages(&self) -> [&dyn Codec; 3] {
        [self.encoding(), self.filter(), self.compression()]
    }
}

impl EncodeStages {
    /// Parses the stages for encoding: like [`Pipeline::parse`], and every
    /// key with a codec's prefix must be one the pipeline's stages own.
    pub(crate) fn parse_strict(d: &ObjectDescriptor) -> Result<Self> {
        let stages = build_all(d)?;
        check_codec_keys(d, &stages.iter().map(|s| s.name()).collect::<Vec<_>>())?;
        Ok(EncodeStages { stages })
    }
}

/// Rejects codec keys (`spec/pipeline.md` §1: a key starting with a codec
/// prefix) that no stage of the pipeline owns, listing the valid keys.
fn check_codec_keys(d: &ObjectDescriptor, names: &[&str]) -> Result<()> {
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
    for key in d.params.keys() {
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
    stages: [&dyn Codec; 3],
    base: StageContext,
    decoded_len: u64,
    payload_len: u64,
) -> Result<[StageContext; 3]> {
    let mut cx = [base; 3];
    let mut len = decoded_len;
    for (i, s) in stages.iter().enumerate() {
        if i > 0 {
            let (bits, packed) = stages[i - 1].output_form(&cx[i - 1]);
            cx[i].sample_bits = bits;
            cx[i].packed = packed;
        }
        cx[i].decoded_len = len;
        s.validate(&cx[i])?;
        match s.encoded_len(len, &cx[i])? {
            Some(n) => {
                cx[i].input_len = n;
                len = n;
            }
            None => cx[i].input_len = payload_len,
        }
    }
    Ok(cx)
}
