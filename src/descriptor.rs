//! The per-object `DataObjectDescriptor` CBOR map. See `spec/format.md` §6.

use std::collections::BTreeMap;

use crate::cbor::{self, Value};
use crate::dtype::{ByteOrder, Dtype};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::pipeline_spec::{codec_of_key, PipelineSpec};

/// Text-keyed CBOR map, the shape of every free-form metadata map.
pub type Map = BTreeMap<String, Value>;

/// Where one NaN/Inf companion mask sits in a data frame's payload region.
#[derive(Debug, Clone, PartialEq)]
pub struct MaskInfo {
    /// Mask codec: `none`, `rle`, `roaring`, `lz4`, `zstd` or `blosc2`.
    pub method: String,
    /// Offset of the blob from the start of the payload region.
    pub offset: u64,
    /// Blob length in bytes.
    pub length: u64,
    /// Method parameters (`level` for zstd …); omitted when empty.
    pub params: Map,
}

/// The `masks` sub-map: one optional mask per non-finite kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Masks {
    /// Positions that held NaN.
    pub nan: Option<MaskInfo>,
    /// Positions that held +Inf.
    pub pos_inf: Option<MaskInfo>,
    /// Positions that held -Inf.
    pub neg_inf: Option<MaskInfo>,
}

impl Masks {
    /// True when no mask is present.
    pub fn is_empty(&self) -> bool {
        self.nan.is_none() && self.pos_inf.is_none() && self.neg_inf.is_none()
    }

    /// The masks present, with their wire keys, in blob order (nan, inf+, inf-).
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &MaskInfo)> {
        [
            ("nan", self.nan.as_ref()),
            ("inf+", self.pos_inf.as_ref()),
            ("inf-", self.neg_inf.as_ref()),
        ]
        .into_iter()
        .filter_map(|(k, m)| m.map(|m| (k, m)))
    }
}

/// Description of one data object: tensor shape and type plus its pipeline.
///
/// The pipeline is parsed and validated once, when the descriptor is built
/// (from CBOR, through [`Self::with_pipeline`] or
/// [`Self::with_raw_pipeline`]), and held as an inert, typed
/// [`PipelineSpec`]; codec parameters live in it, annotations in their own
/// map (`spec/pipeline.md` §1). The codec runtime (`tgm::pipeline`) builds
/// the running stages from it.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectDescriptor {
    /// Object type; the reference writes `"ntensor"`.
    pub obj_type: String,
    /// Extent of each dimension; empty for a scalar.
    pub shape: Vec<u64>,
    /// Element strides (metadata only; payloads are always in stored order).
    pub strides: Vec<u64>,
    /// Element type.
    pub dtype: Dtype,
    /// Byte order of the stored elements.
    pub byte_order: ByteOrder,
    /// NaN/Inf companion masks, if any were written.
    pub masks: Option<Masks>,
    pipeline: PipelineSpec,
    annotations: Map,
}

const KNOWN_KEYS: [&str; 10] = [
    "type",
    "ndim",
    "shape",
    "strides",
    "dtype",
    "byte_order",
    "encoding",
    "filter",
    "compression",
    "masks",
];

impl ObjectDescriptor {
    /// A plain (`none` pipeline) descriptor with row-major strides and native byte order.
    pub fn new(dtype: Dtype, shape: impl Into<Vec<u64>>) -> Self {
        let shape = shape.into();
        ObjectDescriptor {
            obj_type: "ntensor".to_string(),
            strides: row_major_strides(&shape),
            shape,
            dtype,
            byte_order: ByteOrder::native(),
            masks: None,
            pipeline: PipelineSpec::default(),
            annotations: Map::new(),
        }
    }

    /// Sets the byte order of the stored elements.
    pub fn with_byte_order(mut self, order: ByteOrder) -> Self {
        self.byte_order = order;
        self
    }

    /// Sets the pipeline from stage names and keys as another writer may
    /// have written them: keys with a codec prefix (`sp_`, `zstd_`, `szip_`
    /// …) become codec parameters, every other key an annotation. Checked
    /// as a descriptor read from a file is: a stage's own keys must be
    /// valid; codec keys no stage owns are kept (and refused by the
    /// encoder); a stage name this build cannot run fails when run.
    /// Prefer [`Self::with_pipeline`].
    pub fn with_raw_pipeline(
        mut self,
        encoding: &str,
        filter: &str,
        compression: &str,
        params: Map,
    ) -> Result<Self> {
        let (codec, other): (Map, Map) = params
            .into_iter()
            .partition(|(k, _)| codec_of_key(k).is_some());
        for (k, v) in other {
            self = self.with_annotation(&k, v)?;
        }
        self.pipeline = PipelineSpec::from_parts([encoding, filter, compression], codec)?;
        Ok(self)
    }

    /// Sets one key as another writer may have written it: a codec key
    /// (`sp_`, `zstd_`, `szip_` … prefix) is added to the pipeline, which is
    /// parsed again (see [`Self::with_raw_pipeline`]); any other key is an
    /// annotation ([`Self::with_annotation`]). Prefer [`Self::with_pipeline`].
    pub fn with_param(mut self, key: &str, value: impl Into<Value>) -> Result<Self> {
        if codec_of_key(key).is_none() {
            return self.with_annotation(key, value);
        }
        let mut params = self.pipeline.params().clone();
        params.insert(key.to_string(), value.into());
        self.pipeline = PipelineSpec::from_parts(self.pipeline.names(), params)?;
        Ok(self)
    }

    /// The pipeline as typed stage parameters, validated when the
    /// descriptor was built.
    pub fn pipeline(&self) -> &PipelineSpec {
        &self.pipeline
    }

    /// Replaces the pipeline (a builder's, or after an encode run derived
    /// parameters).
    pub(crate) fn replace_pipeline(&mut self, pipeline: PipelineSpec) {
        self.pipeline = pipeline;
    }

    /// The encoding stage's name (`none`, `simple_packing`).
    pub fn encoding(&self) -> &str {
        self.pipeline.encoding().name()
    }

    /// The filter stage's name (`none`, `shuffle`).
    pub fn filter(&self) -> &str {
        self.pipeline.filter().name()
    }

    /// The compression stage's name (`none`, `szip`, `zstd`, `lz4`, `rle`,
    /// `roaring`, or a name this build cannot decode).
    pub fn compression(&self) -> &str {
        self.pipeline.compression().name()
    }

    /// Adds an annotation: a key the pipeline never reads. Keys with a codec
    /// prefix (`sp_`, `zstd_`, `szip_` …) and the descriptor's own keys are
    /// refused, so an annotation can never be mistaken for a parameter.
    pub fn with_annotation(mut self, key: &str, value: impl Into<Value>) -> Result<Self> {
        if KNOWN_KEYS.contains(&key) {
            return Err(Error::metadata(format!(
                "annotation key {key:?} collides with a descriptor field"
            )));
        }
        if let Some(codec) = codec_of_key(key) {
            return Err(Error::metadata(format!(
                "annotation key {key:?} has the key prefix of codec {codec}"
            )));
        }
        self.annotations.insert(key.to_string(), value.into());
        Ok(self)
    }

    /// Keys that belong to no codec: the caller's annotations
    /// (`spec/pipeline.md` §1).
    pub fn annotations(&self) -> &Map {
        &self.annotations
    }

    /// Sets an annotation the library itself writes (`dlpack`).
    pub(crate) fn set_annotation(&mut self, key: &str, value: Value) {
        self.annotations.insert(key.to_string(), value);
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Element count: the product of the shape (1 for a scalar). Fails on overflow.
    pub fn num_elements(&self) -> Result<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| {
                Error::metadata(format!(
                    "shape {:?} element count overflows u64",
                    self.shape
                ))
            })
    }

    /// Size in bytes of the decoded payload (after the whole pipeline is undone).
    pub fn decoded_len(&self) -> Result<u64> {
        self.dtype.payload_len(self.num_elements()?)
    }

    /// True when the pipeline is the identity (`none`/`none`/`none`).
    pub fn is_raw(&self) -> bool {
        self.pipeline.is_identity()
    }

    /// Builds the CBOR map (canonical order is applied when writing).
    pub fn to_value(&self) -> Value {
        let params = self.pipeline.params();
        let mut m: Vec<(Value, Value)> =
            Vec::with_capacity(10 + params.len() + self.annotations.len());
        let [encoding, filter, compression] = self.pipeline.names();
        let uarr = |v: &[u64]| Value::Array(v.iter().map(|&x| Value::Uint(x)).collect());
        m.push(("type".into(), Value::Text(self.obj_type.clone())));
        m.push(("ndim".into(), Value::Uint(self.shape.len() as u64)));
        m.push(("shape".into(), uarr(&self.shape)));
        m.push(("strides".into(), uarr(&self.strides)));
        m.push(("dtype".into(), self.dtype.name().into()));
        m.push(("byte_order".into(), self.byte_order.name().into()));
        m.push(("encoding".into(), Value::Text(encoding.to_string())));
        m.push(("filter".into(), Value::Text(filter.to_string())));
        m.push(("compression".into(), Value::Text(compression.to_string())));
        if let Some(masks) = self.masks.as_ref().filter(|m| !m.is_empty()) {
            let entries = masks.iter().map(|(k, info)| {
                let mut e = vec![
                    ("method".into(), Value::Text(info.method.clone())),
                    ("offset".into(), Value::Uint(info.offset)),
                    ("length".into(), Value::Uint(info.length)),
                ];
                if !info.params.is_empty() {
                    e.push(("params".into(), Value::text_map(info.params.clone())));
                }
                (Value::Text(k.into()), Value::Map(e))
            });
            m.push(("masks".into(), Value::Map(entries.collect())));
        }
        for (k, v) in params.iter().chain(&self.annotations) {
            m.push((Value::Text(k.clone()), v.clone()));
        }
        Value::Map(m)
    }

    /// Canonical CBOR bytes of this descriptor.
    pub fn to_cbor(&self) -> Vec<u8> {
        cbor::encode_canonical(&self.to_value())
    }

    /// Checks the structural rules the encoder enforces before writing.
    pub fn validate_for_encode(&self) -> Result<()> {
        if self.obj_type.is_empty() {
            return Err(Error::metadata("descriptor type must not be empty"));
        }
        if self.strides.len() != self.shape.len() {
            return Err(Error::metadata(format!(
                "strides has {} entries but shape has {}",
                self.strides.len(),
                self.shape.len()
            )));
        }
        for k in self.annotations.keys() {
            if KNOWN_KEYS.contains(&k.as_str()) {
                return Err(Error::metadata(format!(
                    "param key {k:?} collides with a descriptor field"
                )));
            }
        }
        self.decoded_len()?;
        Ok(())
    }

    /// Parses descriptor CBOR bytes that start at absolute offset `base`.
    pub fn from_cbor(bytes: &[u8], base: u64, limits: &Limits) -> Result<Self> {
        if bytes.len() as u64 > limits.max_cbor_len {
            return Err(
                Error::limit("max_cbor_len", bytes.len() as u64, limits.max_cbor_len).at(base),
            );
        }
        let (v, _) = cbor::parse_one(bytes, base, limits.cbor())?;
        Self::from_owned_value(v, limits).map_err(|e| e.at(base))
    }

    /// Interprets a decoded CBOR map as a descriptor, parsing and
    /// validating its pipeline (an invalid codec key is an error naming it).
    pub fn from_value(v: &Value, limits: &Limits) -> Result<Self> {
        Self::from_owned_value(v.clone(), limits)
    }

    /// [`ObjectDescriptor::from_value`] taking the map, whose codec
    /// parameters and annotations (such as the thousands of
    /// `szip_block_offsets`) move into the descriptor uncopied.
    fn from_owned_value(v: Value, limits: &Limits) -> Result<Self> {
        let Value::Map(entries) = v else {
            return Err(Error::metadata(format!(
                "descriptor is a {}, not a map",
                v.type_name()
            )));
        };
        let mut d = ObjectDescriptor::new(Dtype::Uint8, Vec::new());
        let mut ndim = None;
        let mut seen = [false; 10];
        let mut byte_order = None;
        let mut names = ["none".to_string(), "none".to_string(), "none".to_string()];
        let mut codec_params = Map::new();
        for (k, val) in entries {
            let Value::Text(key) = k else {
                return Err(Error::metadata(format!(
                    "descriptor key is a {}, not text",
                    k.type_name()
                )));
            };
            let Some(idx) = KNOWN_KEYS.iter().position(|x| *x == key) else {
                let map = if codec_of_key(&key).is_some() {
                    &mut codec_params
                } else {
                    &mut d.annotations
                };
                map.insert(key, val);
                continue;
            };
            let (key, val) = (key.as_str(), &val);
            seen[idx] = true;
            match key {
                "type" => d.obj_type = text(val, key)?.to_string(),
                "ndim" => ndim = Some(uint(val, key)?),
                "shape" => d.shape = uint_array(val, key, limits)?,
                "strides" => d.strides = uint_array(val, key, limits)?,
                "dtype" => {
                    let name = text(val, key)?;
                    d.dtype = Dtype::from_name(name)
                        .ok_or_else(|| Error::metadata(format!("unknown dtype {name:?}")))?;
                }
                "byte_order" => {
                    let name = text(val, key)?;
                    byte_order =
                        Some(ByteOrder::from_name(name).ok_or_else(|| {
                            Error::metadata(format!("unknown byte_order {name:?}"))
                        })?);
                }
                "encoding" => names[0] = text(val, key)?.to_string(),
                "filter" => names[1] = text(val, key)?.to_string(),
                "compression" => names[2] = text(val, key)?.to_string(),
                _ => d.masks = Some(parse_masks(val)?),
            }
        }
        for (i, name) in KNOWN_KEYS.iter().enumerate() {
            if !seen[i] && !matches!(*name, "byte_order" | "masks") {
                return Err(Error::metadata(format!(
                    "descriptor lacks required key {name:?}"
                )));
            }
        }
        d.byte_order = byte_order.unwrap_or(ByteOrder::native());
        let ndim = ndim.unwrap_or(0);
        if ndim != d.shape.len() as u64 {
            return Err(Error::metadata(format!(
                "ndim {ndim} does not match shape of {} dimensions",
                d.shape.len()
            )));
        }
        if d.strides.len() != d.shape.len() {
            return Err(Error::metadata(format!(
                "strides has {} entries but shape has {}",
                d.strides.len(),
                d.shape.len()
            )));
        }
        if d.shape.len() > limits.max_ndim {
            return Err(Error::limit(
                "max_ndim",
                d.shape.len() as u64,
                limits.max_ndim as u64,
            ));
        }
        d.num_elements()?;
        let [e, f, c] = &names;
        d.pipeline = PipelineSpec::from_parts([e, f, c], codec_params)?;
        Ok(d)
    }
}

/// Row-major (C order) strides in elements for `shape`. Saturates on overflow
/// (such a shape is rejected elsewhere).
pub(crate) fn row_major_strides(shape: &[u64]) -> Vec<u64> {
    let mut strides = vec![1u64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(shape[i + 1]);
    }
    strides
}

fn text<'v>(v: &'v Value, key: &str) -> Result<&'v str> {
    v.as_text().ok_or_else(|| {
        Error::metadata(format!(
            "descriptor {key:?} is a {}, not text",
            v.type_name()
        ))
    })
}

fn uint(v: &Value, key: &str) -> Result<u64> {
    v.as_u64().ok_or_else(|| {
        Error::metadata(format!(
            "descriptor {key:?} is a {}, not an unsigned integer",
            v.type_name()
        ))
    })
}

fn uint_array(v: &Value, key: &str, limits: &Limits) -> Result<Vec<u64>> {
    let items = v.as_array().ok_or_else(|| {
        Error::metadata(format!(
            "descriptor {key:?} is a {}, not an array",
            v.type_name()
        ))
    })?;
    if items.len() > limits.max_ndim {
        return Err(Error::limit(
            "max_ndim",
            items.len() as u64,
            limits.max_ndim as u64,
        ));
    }
    items.iter().map(|x| uint(x, key)).collect()
}

fn parse_masks(v: &Value) -> Result<Masks> {
    let entries = v
        .as_map()
        .ok_or_else(|| Error::metadata("descriptor masks is not a map"))?;
    let mut masks = Masks::default();
    for (k, val) in entries {
        let slot = match k.as_text() {
            Some("nan") => &mut masks.nan,
            Some("inf+") => &mut masks.pos_inf,
            Some("inf-") => &mut masks.neg_inf,
            _ => {
                return Err(Error::metadata(format!(
                    "unknown mask kind {}",
                    k.to_json()
                )))
            }
        };
        let method = val
            .get("method")
            .and_then(Value::as_text)
            .ok_or_else(|| Error::metadata("mask lacks a text method"))?;
        let offset = val
            .get("offset")
            .and_then(Value::as_u64)
            .ok_or_else(|| Error::metadata("mask lacks an unsigned offset"))?;
        let length = val
            .get("length")
            .and_then(Value::as_u64)
            .ok_or_else(|| Error::metadata("mask lacks an unsigned length"))?;
        let params = match val.get("params") {
            None => Map::new(),
            Some(p) => text_keyed_map(p, "mask params")?,
        };
        *slot = Some(MaskInfo {
            method: method.to_string(),
            offset,
            length,
            params,
        });
    }
    Ok(masks)
}

/// Converts a CBOR map with text keys into a [`Map`].
pub(crate) fn text_keyed_map(v: &Value, what: &str) -> Result<Map> {
    let entries = v
        .as_map()
        .ok_or_else(|| Error::metadata(format!("{what} is a {}, not a map", v.type_name())))?;
    let mut m = Map::new();
    for (k, val) in entries {
        let key = k.as_text().ok_or_else(|| {
            Error::metadata(format!(
                "{what} has a {} key; keys must be text",
                k.type_name()
            ))
        })?;
        m.insert(key.to_string(), val.clone());
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_descriptor_bytes() {
        let d = ObjectDescriptor::new(Dtype::Float32, vec![4]).with_byte_order(ByteOrder::Big);
        let b = d.to_cbor();
        assert_eq!(b.len(), 110);
        assert_eq!(b[0], 0xa9);
        assert_eq!(&b[1..6], b"dndim");
        let back = ObjectDescriptor::from_cbor(&b, 0, &Limits::default()).unwrap();
        assert_eq!(back, d);
    }

    #[test]
    fn annotations_stay_apart_from_codec_keys() {
        use crate::pipeline::PipelineBuilder;
        let d = ObjectDescriptor::new(Dtype::Float64, vec![2])
            .with_annotation("units", "K")
            .unwrap();
        assert!(d.clone().with_annotation("zstd_level", 3u64).is_err());
        assert!(d.clone().with_annotation("shape", 3u64).is_err());
        let d = d.with_pipeline(&PipelineBuilder::new().simple_packing(8));
        let keys: Vec<_> = d.annotations().keys().map(String::as_str).collect();
        assert_eq!(keys, ["units"]);
        assert_eq!(
            d.pipeline().param("sp_bits_per_value"),
            Some(&Value::Uint(8))
        );
    }

    #[test]
    fn row_major() {
        assert_eq!(row_major_strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert!(row_major_strides(&[]).is_empty());
    }

    #[test]
    fn unknown_keys_survive() {
        let mut params = Map::new();
        params.insert("zz_custom".into(), "x".into());
        params.insert("zstd_custom".into(), 1u64.into());
        let d = ObjectDescriptor::new(Dtype::Int16, vec![2])
            .with_raw_pipeline("none", "none", "blosc2", params)
            .unwrap();
        let bytes = d.to_cbor();
        let back = ObjectDescriptor::from_cbor(&bytes, 0, &Limits::default()).unwrap();
        assert_eq!(
            back.annotations().get("zz_custom"),
            Some(&Value::Text("x".into()))
        );
        assert_eq!(back.pipeline().param("zstd_custom"), Some(&Value::Uint(1)));
        assert_eq!(back.compression(), "blosc2");
        assert_eq!(back.to_cbor(), bytes);
    }

    #[test]
    fn rejects_bad_descriptors() {
        let l = Limits::default();
        let base = ObjectDescriptor::new(Dtype::Int16, vec![2]).to_value();
        let edit = |key: &str, val: Option<Value>| {
            let Value::Map(mut m) = base.clone() else {
                unreachable!()
            };
            m.retain(|(k, _)| k.as_text() != Some(key));
            if let Some(v) = val {
                m.push((Value::Text(key.into()), v));
            }
            ObjectDescriptor::from_value(&Value::Map(m), &l)
        };
        assert!(edit("dtype", None).is_err());
        assert!(edit("dtype", Some("float128".into())).is_err());
        assert!(edit("ndim", Some(Value::Uint(3))).is_err());
        assert!(edit("ndim", Some(Value::from_i64(-1))).is_err());
        assert!(edit(
            "shape",
            Some(Value::Array(vec![
                Value::Uint(1 << 40),
                Value::Uint(1 << 40)
            ]))
        )
        .is_err());
        assert!(edit("byte_order", Some("middle".into())).is_err());
        assert!(edit("byte_order", None).is_ok());
        assert!(ObjectDescriptor::from_value(&Value::Array(vec![]), &l).is_err());
    }
}
