//! Typed construction of a pipeline with the reference's defaults, which
//! [`crate::ObjectDescriptor::with_pipeline`] installs in a descriptor.
//! See `spec/pipeline.md` §9.1.

use super::codec::compression::szip::Szip;
use super::codec::compression::zstd::{Zstd, ZSTD_DEFAULT_LEVEL};
use super::codec::encoding::simple_packing::SimplePacking;
use super::codec::filter::shuffle::Shuffle;
use crate::cbor::Value;
use crate::descriptor::{Map, ObjectDescriptor};
use crate::dtype::Dtype;
use crate::pipeline_spec::{Blosc2, CompressionSpec, PipelineSpec, Sz3, Zfp};

/// A typed pipeline request. `PipelineBuilder::new().simple_packing(16).szip()`
/// writes what the reference's pipeline helper writes for the same request
/// (`spec/pipeline.md` §2); parameters derived from the data are filled in
/// when the object is encoded.
///
/// ```
/// use tgm::{Dtype, EncodeOptions, GlobalMetadata, ObjectDescriptor, PipelineBuilder};
///
/// let desc = ObjectDescriptor::new(Dtype::Float32, vec![1000])
///     .with_pipeline(&PipelineBuilder::new().shuffle().zstd());
/// assert_eq!([desc.encoding(), desc.filter(), desc.compression()], ["none", "shuffle", "zstd"]);
/// let raw: Vec<u8> = (0..1000).flat_map(|i| (i as f32).to_ne_bytes()).collect();
/// let msg = tgm::encode(&GlobalMetadata::default(), &[(&desc, &raw)], &EncodeOptions::new())?;
/// assert!(msg.len() < raw.len());
/// # Ok::<(), tgm::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PipelineBuilder {
    encoding: Option<SimplePacking>,
    shuffle: Option<Option<usize>>,
    compression: CompressionSpec,
}

impl PipelineBuilder {
    /// The identity pipeline (`none`/`none`/`none`).
    pub fn new() -> Self {
        Self::default()
    }

    /// simple_packing at `bits` per value, R and E derived from the data.
    pub fn simple_packing(self, bits: u32) -> Self {
        self.simple_packing_params(SimplePacking::new(bits))
    }

    /// simple_packing with explicit parameters.
    pub fn simple_packing_params(mut self, p: SimplePacking) -> Self {
        self.encoding = Some(p);
        self
    }

    /// The byte shuffle; the element size is the width after encoding
    /// (⌈B/8⌉ after simple_packing, else the dtype's width), as the reference.
    pub fn shuffle(mut self) -> Self {
        self.shuffle = Some(None);
        self
    }

    /// The byte shuffle with an explicit element size.
    pub fn shuffle_element_size(mut self, size: usize) -> Self {
        self.shuffle = Some(Some(size));
        self
    }

    /// zstd at the reference's default level 3, written explicitly.
    pub fn zstd(self) -> Self {
        self.zstd_level(ZSTD_DEFAULT_LEVEL)
    }

    /// zstd at `level`.
    pub fn zstd_level(mut self, level: i32) -> Self {
        self.compression = CompressionSpec::Zstd(Zstd { level });
        self
    }

    /// lz4.
    pub fn lz4(mut self) -> Self {
        self.compression = CompressionSpec::Lz4;
        self
    }

    /// szip with the reference's defaults: RSI 128, block size 16,
    /// preprocessing.
    pub fn szip(self) -> Self {
        self.szip_params(Szip::default())
    }

    /// szip with explicit parameters.
    pub fn szip_params(mut self, p: Szip) -> Self {
        self.compression = CompressionSpec::Szip(Szip { offsets: None, ..p });
        self
    }

    /// blosc2 with explicit parameters (`Blosc2::default()`: lz4 at
    /// level 5, the reference's defaults, written explicitly).
    pub fn blosc2(mut self, p: Blosc2) -> Self {
        self.compression = CompressionSpec::Blosc2(p);
        self
    }

    /// zfp (float64, no encoding or filter).
    pub fn zfp(mut self, p: Zfp) -> Self {
        self.compression = CompressionSpec::Zfp(p);
        self
    }

    /// sz3 (float64, no encoding or filter).
    pub fn sz3(mut self, p: Sz3) -> Self {
        self.compression = CompressionSpec::Sz3(p);
        self
    }

    /// rle (bitmask objects only).
    pub fn rle(mut self) -> Self {
        self.compression = CompressionSpec::Rle;
        self
    }

    /// roaring (bitmask objects only).
    pub fn roaring(mut self) -> Self {
        self.compression = CompressionSpec::Roaring;
        self
    }

    /// The pipeline this request describes for elements of `dtype`: stage
    /// names and their parameters, each checked as a descriptor's are.
    /// A stage whose cargo feature is off is kept and fails when run.
    pub fn build(&self, dtype: Dtype) -> PipelineSpec {
        let mut params = Map::new();
        let mut put = |kv: Vec<(&'static str, Value)>| {
            for (k, v) in kv {
                params.insert(k.to_string(), v);
            }
        };
        let element_size = match &self.encoding {
            Some(sp) => {
                put(sp.params());
                (sp.bits_per_value as usize).div_ceil(8).max(1)
            }
            None => dtype.width().max(1),
        };
        if let Some(size) = self.shuffle {
            let s = Shuffle {
                element_size: size.unwrap_or(element_size),
            };
            put(s.params());
        }
        let compression = match &self.compression {
            CompressionSpec::None => "none",
            CompressionSpec::Zstd(z) => {
                put(z.params());
                "zstd"
            }
            CompressionSpec::Lz4 => "lz4",
            CompressionSpec::Szip(s) => {
                put(s.params());
                "szip"
            }
            CompressionSpec::Blosc2(b) => {
                put(b.params());
                "blosc2"
            }
            CompressionSpec::Zfp(z) => {
                put(z.params());
                "zfp"
            }
            CompressionSpec::Sz3(z) => {
                put(z.params());
                "sz3"
            }
            CompressionSpec::Rle => "rle",
            CompressionSpec::Roaring => "roaring",
            CompressionSpec::Unusable(u) => u.name(),
        };
        let encoding = if self.encoding.is_some() {
            "simple_packing"
        } else {
            "none"
        };
        let filter = if self.shuffle.is_some() {
            "shuffle"
        } else {
            "none"
        };
        let names = [encoding, filter, compression];
        // The builder writes only keys its typed parameters produce, which
        // every stage accepts; a stage that still refuses them is kept as
        // one that fails when run, with the refusal as its error.
        PipelineSpec::from_parts(names, params.clone())
            .unwrap_or_else(|e| PipelineSpec::unusable(names, params, e))
    }
}

impl ObjectDescriptor {
    /// Sets the pipeline: stage names and codec keys, with the reference's
    /// defaults for what the builder leaves open (`spec/pipeline.md` §9.1).
    /// Annotations are kept.
    pub fn with_pipeline(mut self, pipeline: &PipelineBuilder) -> Self {
        self.set_pipeline(pipeline);
        self
    }

    /// [`Self::with_pipeline`] in place.
    pub fn set_pipeline(&mut self, pipeline: &PipelineBuilder) {
        self.replace_pipeline(pipeline.build(self.dtype));
    }
}
