//! Typed construction of a pipeline with the reference's defaults, written
//! into a descriptor's `encoding`/`filter`/`compression` and codec keys.
//! See `spec/pipeline.md` §9.1.

use super::registry::codec_of_key;
use super::shuffle::Shuffle;
use super::simple_packing::SimplePacking;
use super::szip_stage::Szip;
use super::zstd_codec::{Zstd, ZSTD_DEFAULT_LEVEL};
use crate::cbor::Value;
use crate::descriptor::ObjectDescriptor;

/// Bits per value when `simple_packing` is asked for without a width, as
/// the reference's pipeline helper.
pub const DEFAULT_SIMPLE_PACKING_BITS: u32 = 16;

/// The compression stage a builder writes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CompressionChoice {
    /// No compression.
    #[default]
    None,
    /// zstd at a level (written as `zstd_level`).
    Zstd(Zstd),
    /// lz4.
    Lz4,
    /// szip with its parameters (offsets are computed on encode).
    Szip(Szip),
    /// Run lengths over a bitmask object.
    Rle,
    /// A roaring bitmap over a bitmask object.
    Roaring,
}

/// A typed pipeline request. `PipelineBuilder::new().simple_packing(16).szip()`
/// writes what the reference's pipeline helper writes for the same request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PipelineBuilder {
    encoding: Option<SimplePacking>,
    shuffle: Option<Option<usize>>,
    compression: CompressionChoice,
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
        self.compression = CompressionChoice::Zstd(Zstd { level });
        self
    }

    /// lz4.
    pub fn lz4(mut self) -> Self {
        self.compression = CompressionChoice::Lz4;
        self
    }

    /// szip with the reference's defaults: RSI 128, block size 16,
    /// preprocessing.
    pub fn szip(self) -> Self {
        self.szip_params(Szip::default())
    }

    /// szip with explicit parameters.
    pub fn szip_params(mut self, p: Szip) -> Self {
        self.compression = CompressionChoice::Szip(Szip { offsets: None, ..p });
        self
    }

    /// rle (bitmask objects only).
    pub fn rle(mut self) -> Self {
        self.compression = CompressionChoice::Rle;
        self
    }

    /// roaring (bitmask objects only).
    pub fn roaring(mut self) -> Self {
        self.compression = CompressionChoice::Roaring;
        self
    }

    /// Writes the stage names and parameters into `d`, replacing every
    /// codec key it held; annotations are kept.
    pub fn apply(&self, d: &mut ObjectDescriptor) {
        d.params.retain(|k, _| codec_of_key(k).is_none());
        let mut put = |params: Vec<(&'static str, Value)>| {
            for (k, v) in params {
                d.params.insert(k.to_string(), v);
            }
        };
        let element_size = match &self.encoding {
            Some(sp) => {
                put(sp.params());
                (sp.bits_per_value as usize).div_ceil(8).max(1)
            }
            None => d.dtype.width(),
        };
        if let Some(size) = self.shuffle {
            let s = Shuffle {
                element_size: size.unwrap_or(element_size),
            };
            put(s.params());
        }
        let compression = match &self.compression {
            CompressionChoice::None => "none",
            CompressionChoice::Zstd(z) => {
                put(z.params());
                "zstd"
            }
            CompressionChoice::Lz4 => "lz4",
            CompressionChoice::Szip(s) => {
                put(s.params());
                "szip"
            }
            CompressionChoice::Rle => "rle",
            CompressionChoice::Roaring => "roaring",
        };
        d.encoding = if self.encoding.is_some() {
            "simple_packing"
        } else {
            "none"
        }
        .to_string();
        d.filter = if self.shuffle.is_some() {
            "shuffle"
        } else {
            "none"
        }
        .to_string();
        d.compression = compression.to_string();
    }
}
