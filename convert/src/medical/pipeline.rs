//! The small set of pipeline choices the medical converters accept
//! (spec/pipeline.md). The default is lossless: byte shuffle + zstd.

use tgm::pipeline::{StageError, StageOption};
use tgm::ObjectDescriptor;

use super::{MedicalError, MedicalResult};

/// Compression for converted volumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Raw payloads.
    None,
    /// Byte shuffle (element width) followed by zstd.
    Zstd,
    /// CCSDS 121.0 szip with preprocessing, integers only.
    Szip,
}

/// Pipeline flags shared by the medical converters.
#[derive(Clone, Debug)]
pub struct PipelineArgs {
    /// Compression: none, zstd (after byte shuffle) or szip (integers only).
    pub compression: Compression,
    /// zstd level.
    pub level: Option<i64>,
}

impl Default for PipelineArgs {
    fn default() -> Self {
        PipelineArgs {
            compression: Compression::Zstd,
            level: None,
        }
    }
}

impl PipelineArgs {
    /// The choice named by a door's options (`--compression`/`--level` of
    /// `convert-nifti` and `convert-dicom`, Python's keywords), checked
    /// once for both: compression `none`, `zstd` (default) or `szip`; a
    /// level only with zstd, within zstd's levels (`spec/pipeline.md`
    /// §10).
    pub fn from_names(compression: Option<&str>, level: Option<i64>) -> Result<Self, StageError> {
        let name = StageError::check_name(
            StageOption::Compression,
            Some(compression.unwrap_or("zstd")),
            &["none", "zstd", "szip"],
        )?;
        if let Some(l) = level {
            if name != "zstd" {
                return Err(StageError::new()
                    .option(StageOption::Level)
                    .text(" has no effect without ")
                    .option_is(StageOption::Compression, "zstd"));
            }
            StageError::check_zstd_level(l)?;
        }
        let compression = match name {
            "none" => Compression::None,
            "szip" => Compression::Szip,
            _ => Compression::Zstd,
        };
        Ok(PipelineArgs { compression, level })
    }

    /// Sets encoding, filter, compression and their parameters on a plain
    /// descriptor for `data` (its payload, in the descriptor's byte order).
    /// Every choice is lossless.
    pub fn apply(&self, d: &mut ObjectDescriptor, data: &[u8]) -> MedicalResult {
        let mut params = tgm::Map::new();
        let (mut filter, mut compression) = ("none", "none");
        match self.compression {
            Compression::None => {}
            Compression::Zstd => {
                if d.dtype.width() > 1 {
                    filter = "shuffle";
                    params.insert(
                        "shuffle_element_size".into(),
                        (d.dtype.width() as u64).into(),
                    );
                }
                compression = "zstd";
                if let Some(l) = self.level {
                    params.insert("zstd_level".into(), l.into());
                }
            }
            Compression::Szip => {
                if d.dtype.is_float() || d.dtype.width() > 4 {
                    return Err(MedicalError::invalid_argument(format!(
                        "szip compresses integers of up to 32 bits; {} needs --compression zstd or none",
                        d.dtype.name()
                    )));
                }
                // SIGNED only pays on negative samples (spec/szip.md §7).
                let negative = d.dtype.is_signed_int()
                    && tgm::szip::any_negative(
                        data,
                        d.dtype.width(),
                        d.byte_order == tgm::ByteOrder::Big,
                    );
                let flags = tgm::szip::flags::PREPROCESS
                    | if negative {
                        tgm::szip::flags::SIGNED
                    } else {
                        0
                    };
                compression = "szip";
                params.insert("szip_rsi".into(), 128u64.into());
                params.insert("szip_block_size".into(), 16u64.into());
                params.insert("szip_flags".into(), (flags as u64).into());
            }
        }
        *d = d
            .clone()
            .with_raw_pipeline("none", filter, compression, params)
            .map_err(MedicalError::from)?;
        Ok(())
    }
}

/// Encode options of the medical converters: NaN and ±Inf voxels (common
/// in float volumes outside the brain mask) are kept through the format's
/// non-finite masks (spec/pipeline.md) instead of being refused; decoding
/// restores them at their positions.
pub fn encode_options() -> tgm::EncodeOptions {
    let mut p = tgm::pipeline::PipelineOptions::default();
    p.allow_nan = true;
    p.allow_inf = true;
    tgm::EncodeOptions::new().pipeline(p)
}
