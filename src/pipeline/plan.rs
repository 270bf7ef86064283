//! A descriptor's pipeline as typed stages, parsed and validated once when
//! the descriptor is built. See `spec/pipeline.md` §1 and §9.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use super::codec::{Codec, Params, StageContext, StageKind};
use super::registry::{self, REGISTRY};
use crate::cbor::Value;
use crate::descriptor::{Map, ObjectDescriptor};
use crate::error::{Error, ErrorKind, Result};

/// The three stages of one object, each built from the registry with its
/// parameters validated, plus the codec keys exactly as the descriptor
/// holds them, so that a descriptor re-encodes to the bytes it was read
/// from (`spec/pipeline.md` §1).
#[derive(Clone)]
pub struct Pipeline {
    stages: [Arc<dyn Codec>; 3],
    params: Map,
}

impl fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pipeline")
            .field("encoding", &self.stages[0])
            .field("filter", &self.stages[1])
            .field("compression", &self.stages[2])
            .field("params", &self.params)
            .finish()
    }
}

impl PartialEq for Pipeline {
    fn eq(&self, other: &Self) -> bool {
        self.names() == other.names() && self.params == other.params
    }
}

impl Default for Pipeline {
    /// The identity pipeline (`none`/`none`/`none`).
    fn default() -> Self {
        let none = |kind| -> Arc<dyn Codec> {
            match registry::lookup(kind, "none")
                .and_then(|e| e.build(&Params::new(&Map::new(), "none")))
            {
                Ok(s) => s.into(),
                Err(error) => Arc::new(Unusable::new("none", &error)),
            }
        };
        Pipeline {
            stages: [
                none(StageKind::Encoding),
                none(StageKind::Filter),
                none(StageKind::Compression),
            ],
            params: Map::new(),
        }
    }
}

/// A stage this build cannot run: a name the registry does not know or
/// whose cargo feature is off. Descriptors naming one stay readable (their
/// metadata can be listed and re-written); running the stage fails with
/// the error the registry gave.
#[derive(Debug)]
struct Unusable {
    name: String,
    kind: ErrorKind,
    detail: String,
}

impl Unusable {
    fn new(name: &str, error: &Error) -> Self {
        Unusable {
            name: name.to_string(),
            kind: error.kind().clone(),
            detail: error.detail().to_string(),
        }
    }

    fn error(&self) -> Error {
        Error::new(self.kind.clone(), self.detail.clone())
    }
}

impl Codec for Unusable {
    fn name(&self) -> &str {
        &self.name
    }

    fn encoded_len(&self, _: u64, _: &StageContext) -> Result<Option<u64>> {
        Err(self.error())
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

/// Mutable stages of one encode run (encoding may derive parameters).
pub(crate) struct EncodeStages {
    pub(crate) stages: [Box<dyn Codec>; 3],
}

/// Builds one stage. `Ok(Err(e))`: the registry cannot build the name
/// (unknown or disabled); `Err(e)`: the stage's keys are invalid.
fn build(
    kind: StageKind,
    name: &str,
    params: &Map,
) -> Result<std::result::Result<Box<dyn Codec>, Error>> {
    let entry = match registry::lookup(kind, name) {
        Ok(e) => e,
        Err(e) => return Ok(Err(e)),
    };
    if entry.build.is_none() {
        return Ok(entry.build(&Params::new(params, entry.name)));
    }
    entry.build(&Params::new(params, entry.name)).map(Ok)
}

fn build_strict(names: [&str; 3], params: &Map) -> Result<[Box<dyn Codec>; 3]> {
    let one = |kind, name| build(kind, name, params)?;
    Ok([
        one(StageKind::Encoding, names[0])?,
        one(StageKind::Filter, names[1])?,
        one(StageKind::Compression, names[2])?,
    ])
}

impl Pipeline {
    /// Parses stage names and codec keys as a descriptor holds them
    /// (`spec/pipeline.md` §1). Every key a named stage owns is checked
    /// here, with an error naming the key. Codec keys no stage owns are
    /// kept verbatim (the encoder refuses them, readers ignore them); a
    /// stage name this build cannot run is kept too, and fails when run.
    pub(crate) fn from_parts(names: [&str; 3], params: Map) -> Result<Self> {
        let kinds = [
            StageKind::Encoding,
            StageKind::Filter,
            StageKind::Compression,
        ];
        let mut stages: Vec<Arc<dyn Codec>> = Vec::with_capacity(3);
        for (kind, name) in kinds.into_iter().zip(names) {
            let stage: Arc<dyn Codec> = match build(kind, name, &params)? {
                Ok(s) => s.into(),
                Err(error) => Arc::new(Unusable::new(name, &error)),
            };
            stages.push(stage);
        }
        let [e, f, c]: [Arc<dyn Codec>; 3] = stages
            .try_into()
            .map_err(|_| Error::metadata("a pipeline has three stages"))?;
        Ok(Pipeline {
            stages: [e, f, c],
            params,
        })
    }

    /// A pipeline whose stages all fail with `error` when run.
    pub(crate) fn unusable(names: [&str; 3], params: Map, error: Error) -> Self {
        let stage = |name: &str| -> Arc<dyn Codec> { Arc::new(Unusable::new(name, &error)) };
        Pipeline {
            stages: names.map(stage),
            params,
        }
    }

    /// The pipeline after an encode run: its stages, with the keys they
    /// derived from the data written over `params`.
    pub(crate) fn from_encoded(stages: [Box<dyn Codec>; 3], mut params: Map) -> Self {
        for s in &stages {
            for (k, v) in s.derived_params() {
                params.insert(k.to_string(), v);
            }
        }
        let [e, f, c] = stages;
        Pipeline {
            stages: [e.into(), f.into(), c.into()],
            params,
        }
    }

    /// The encoding stage.
    pub fn encoding(&self) -> &dyn Codec {
        &*self.stages[0]
    }

    /// The filter stage.
    pub fn filter(&self) -> &dyn Codec {
        &*self.stages[1]
    }

    /// The compression stage.
    pub fn compression(&self) -> &dyn Codec {
        &*self.stages[2]
    }

    /// The stage names in encode order, as the descriptor writes them.
    pub fn names(&self) -> [&str; 3] {
        self.stages().map(|s| s.name())
    }

    /// True when every stage is the identity.
    pub fn is_identity(&self) -> bool {
        self.stages.iter().all(|s| s.is_identity())
    }

    /// The codec keys (`sp_*`, `szip_*` …) as the descriptor writes them:
    /// the stages' parameters plus any codec key no stage owns.
    pub fn params(&self) -> &Map {
        &self.params
    }

    /// One codec key as written (see [`Self::params`]).
    pub fn param(&self, key: &str) -> Option<&Value> {
        self.params.get(key)
    }

    /// The context each stage sees when `d` is decoded (stored byte order,
    /// sequential), in encode order.
    pub fn contexts(&self, d: &ObjectDescriptor) -> Result<[StageContext; 3]> {
        let base = super::base_context(d, d.byte_order, 0)?;
        contexts(self.stages(), base, d.decoded_len()?, 0)
    }

    /// The stages in encode order.
    pub fn stages(&self) -> [&dyn Codec; 3] {
        [self.encoding(), self.filter(), self.compression()]
    }
}

impl EncodeStages {
    /// Fresh stages for encoding `p`: every key with a codec's prefix must
    /// be one the pipeline's stages own, and every stage must be runnable.
    pub(crate) fn parse_strict(p: &Pipeline) -> Result<Self> {
        let names = p.names();
        let stages = build_strict(names, &p.params)?;
        check_codec_keys(&p.params, &names)?;
        Ok(EncodeStages { stages })
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
