//! Every construction of encoding pipelines and encode options from
//! command-line flags. See `spec/pipeline.md` §1 for the stages and their parameters.

use clap::builder::BoolishValueParser;
use tgm::pipeline::{MaskMethod, PipelineOptions, ZstdFrameSize};
use tgm::pipeline_spec::{Blosc2, Params, Sz3, Szip, Zfp};
use tgm::{Dtype, EncodeOptions, ObjectDescriptor, PipelineBuilder};

use crate::error::{usage, CliResult};

/// The levels zstd accepts: its fast levels down to -131072, 0 for its
/// default, and 1 to 22 (`spec/pipeline.md` §4.1). lz4, szip and the other
/// stages take no level.
pub const ZSTD_LEVELS: std::ops::RangeInclusive<i64> = -131_072..=22;

/// Checks a `--level` for zstd.
pub fn zstd_level(l: i64) -> CliResult<i32> {
    if !ZSTD_LEVELS.contains(&l) {
        return Err(usage(format!(
            "--level {l} is outside zstd's levels ({} to {})",
            ZSTD_LEVELS.start(),
            ZSTD_LEVELS.end()
        )));
    }
    Ok(l as i32)
}

/// Checks the `--level` of the medical converters like every other one.
#[cfg(any(feature = "nifti", feature = "dicom"))]
pub fn check_medical_level(p: &tgm_convert::medical::pipeline::PipelineArgs) -> CliResult {
    use tgm_convert::medical::pipeline::Compression;
    if let Some(l) = p.level {
        if p.compression != Compression::Zstd {
            return Err(usage("--level has no effect without --compression zstd"));
        }
        zstd_level(l)?;
    }
    Ok(())
}

/// `--threads`, which every command accepts (with the reference tool's
/// environment variable).
#[derive(clap::Args, Debug, Clone)]
pub struct ThreadArgs {
    /// Worker threads for encoding and decoding (0 = sequential).
    #[arg(long, global = true, default_value_t = 0, env = "TENSOGRAM_THREADS")]
    pub threads: usize,
}

/// Options of the commands that encode values (NaN and infinity handling,
/// mask codecs), with the reference tool's environment variables; commands
/// that only read or copy stored bytes do not offer them.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct EncodeFlags {
    /// Store NaN positions as a mask instead of refusing NaN input.
    #[arg(long, env = "TENSOGRAM_ALLOW_NAN",
          value_parser = BoolishValueParser::new(), default_value_t = false,
          num_args = 0..=1, default_missing_value = "true", require_equals = true,
          hide_default_value = true)]
    pub allow_nan: bool,
    /// Store ±Inf positions as masks instead of refusing infinite input.
    #[arg(long, env = "TENSOGRAM_ALLOW_INF",
          value_parser = BoolishValueParser::new(), default_value_t = false,
          num_args = 0..=1, default_missing_value = "true", require_equals = true,
          hide_default_value = true)]
    pub allow_inf: bool,
    /// Codec of the NaN mask: none, rle, roaring, lz4 or zstd.
    #[arg(long, env = "TENSOGRAM_NAN_MASK_METHOD")]
    pub nan_mask_method: Option<String>,
    /// Codec of the +Inf mask (see --nan-mask-method).
    #[arg(long, env = "TENSOGRAM_POS_INF_MASK_METHOD")]
    pub pos_inf_mask_method: Option<String>,
    /// Codec of the -Inf mask (see --nan-mask-method).
    #[arg(long, env = "TENSOGRAM_NEG_INF_MASK_METHOD")]
    pub neg_inf_mask_method: Option<String>,
    /// Masks of at most this many packed bytes are stored uncompressed (0 disables).
    #[arg(long, env = "TENSOGRAM_SMALL_MASK_THRESHOLD")]
    pub small_mask_threshold: Option<usize>,
    /// Record the content size in zstd frame headers, for readers that
    /// need it (numcodecs before 0.16.2); by default frames omit it, as
    /// the reference writes them.
    #[arg(long)]
    pub zstd_content_size: bool,
}

/// What an encoding command runs with: the thread count and its
/// [`EncodeFlags`].
#[derive(Debug, Clone)]
pub struct GlobalArgs {
    /// Worker threads (0 = sequential).
    pub threads: usize,
    /// NaN/Inf handling and mask codecs.
    pub flags: EncodeFlags,
}

/// Encoding flags of `import` and `recompress`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PipelineArgs {
    /// Encoding: none or simple_packing.
    #[arg(long)]
    pub encoding: Option<String>,
    /// Bits per value for simple_packing (default 16; requires --encoding simple_packing).
    #[arg(long)]
    pub bits: Option<u64>,
    /// Filter: none or shuffle.
    #[arg(long)]
    pub filter: Option<String>,
    /// Compression: none, zstd, lz4, szip, blosc2, zfp or sz3 (the last
    /// three when built in; zfp and sz3 are lossy, float64 only, without
    /// encoding or filter).
    #[arg(long)]
    pub compression: Option<String>,
    /// Level: zstd -131072 to 22 (default 3), blosc2 0 to 9 (default 5).
    #[arg(long, allow_negative_numbers = true)]
    pub level: Option<i64>,
    /// blosc2: inner coder blosclz, lz4, lz4hc, zlib or zstd (default lz4).
    #[arg(long)]
    pub blosc2_codec: Option<String>,
    /// zfp: fixed_rate (with --zfp-rate), fixed_precision (with
    /// --zfp-precision) or fixed_accuracy (with --zfp-tolerance).
    #[arg(long)]
    pub zfp_mode: Option<String>,
    /// zfp fixed_rate: bits per value, above 0 and at most 64.
    #[arg(long)]
    pub zfp_rate: Option<f64>,
    /// zfp fixed_precision: bit planes kept, 1 to 64.
    #[arg(long)]
    pub zfp_precision: Option<u64>,
    /// zfp fixed_accuracy: largest absolute error, above 0.
    #[arg(long)]
    pub zfp_tolerance: Option<f64>,
    /// sz3: abs, rel (relative to the value range) or psnr (dB).
    #[arg(long)]
    pub sz3_error_bound_mode: Option<String>,
    /// sz3: the bound of --sz3-error-bound-mode, above 0.
    #[arg(long)]
    pub sz3_error_bound: Option<f64>,
    /// szip: blocks per reference sample interval, 1..=4096 (default 128).
    #[arg(long)]
    pub szip_rsi: Option<u64>,
    /// szip: samples per block, 8, 16, 32 or 64 (default 16).
    #[arg(long)]
    pub szip_block_size: Option<u64>,
    /// szip: make exactly libaec's coding choices, including second-extension
    /// reference blocks that the reference's pure-Rust decoder misreads.
    #[arg(long)]
    pub szip_libaec_exact: bool,
    /// Write no frame hashes.
    #[arg(long)]
    pub no_hash: bool,
}

/// The stages named by the flags, checked for combinations without effect.
#[derive(Debug, Clone, PartialEq)]
pub struct Stages {
    /// simple_packing at this many bits per value, or no encoding.
    packing_bits: Option<u32>,
    shuffle: bool,
    compression: Compression,
}

/// The compression stage the flags ask for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Compression {
    None,
    Zstd { level: i32 },
    Lz4,
    Szip { rsi: u32, block_size: u32 },
    Blosc2(Blosc2),
    Zfp(Zfp),
    Sz3(Sz3),
}

impl PipelineArgs {
    /// Whether any stage flag was given.
    pub fn any_stage(&self) -> bool {
        self.encoding.is_some()
            || self.bits.is_some()
            || self.filter.is_some()
            || self.compression.is_some()
            || self.level.is_some()
            || self.szip_rsi.is_some()
            || self.szip_block_size.is_some()
            || self.szip_libaec_exact
            || !self.codec_keys("").is_empty()
    }

    /// The blosc2/zfp/sz3 flags given, as the descriptor keys they set,
    /// for the codec whose keys start with `prefix` ("" for all).
    fn codec_keys(&self, prefix: &str) -> tgm::Map {
        use tgm::cbor::Value;
        let text = |v: &Option<String>| v.as_ref().map(|t| Value::Text(t.clone()));
        let float = |v: Option<f64>| v.map(Value::Float);
        let keys = [
            ("blosc2_codec", text(&self.blosc2_codec)),
            ("zfp_mode", text(&self.zfp_mode)),
            ("zfp_rate", float(self.zfp_rate)),
            ("zfp_precision", self.zfp_precision.map(Value::Uint)),
            ("zfp_tolerance", float(self.zfp_tolerance)),
            ("sz3_error_bound_mode", text(&self.sz3_error_bound_mode)),
            ("sz3_error_bound", float(self.sz3_error_bound)),
        ];
        keys.into_iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .filter_map(|(k, v)| Some((k.to_string(), v?)))
            .collect()
    }

    /// The typed parameters of blosc2, zfp or sz3 from their flags, checked
    /// as a descriptor's keys are; a flag of another codec is a usage error.
    fn codec_params<T>(
        &self,
        codec: &'static str,
        parse: fn(&Params<'_>) -> tgm::Result<T>,
        mut keys: tgm::Map,
    ) -> CliResult<T> {
        let own = format!("{codec}_");
        let all = self.codec_keys("");
        if let Some(k) = all.keys().find(|k| !k.starts_with(&own)) {
            return Err(usage(format!(
                "--{} has no effect with --compression {codec}",
                k.replace('_', "-")
            )));
        }
        keys.extend(all);
        parse(&Params::new(&keys, codec)).map_err(|e| usage(flag_names(e.detail())))
    }

    /// Validates the flags: unknown names and flags without effect in
    /// their combination are usage errors.
    pub fn stages(&self) -> CliResult<Stages> {
        let encoding = self.encoding.as_deref().unwrap_or("none");
        let filter = self.filter.as_deref().unwrap_or("none");
        let compression = self.compression.as_deref().unwrap_or("none");
        if !matches!(encoding, "none" | "simple_packing") {
            return Err(usage(format!(
                "unknown encoding {encoding:?} (none, simple_packing)"
            )));
        }
        if !matches!(filter, "none" | "shuffle") {
            return Err(usage(format!("unknown filter {filter:?} (none, shuffle)")));
        }
        if !matches!(
            compression,
            "none" | "zstd" | "lz4" | "szip" | "blosc2" | "zfp" | "sz3"
        ) {
            return Err(usage(format!(
                "unknown compression {compression:?} (none, zstd, lz4, szip, blosc2, zfp, sz3)"
            )));
        }
        if self.bits.is_some() && encoding != "simple_packing" {
            return Err(usage(
                "--bits has no effect without --encoding simple_packing",
            ));
        }
        if self.level.is_some() && !matches!(compression, "zstd" | "blosc2") {
            return Err(usage(format!(
                "--level has no effect with compression {compression:?} (only zstd and blosc2 have levels)"
            )));
        }
        if !matches!(compression, "blosc2" | "zfp" | "sz3") {
            if let Some(k) = self.codec_keys("").keys().next() {
                return Err(usage(format!(
                    "--{} has no effect with compression {compression:?}",
                    k.replace('_', "-")
                )));
            }
        }
        if matches!(compression, "zfp" | "sz3") && (encoding != "none" || filter != "none") {
            return Err(usage(format!(
                "--compression {compression} codes float64 values itself: it needs --encoding none and --filter none"
            )));
        }
        if (self.szip_rsi.is_some() || self.szip_block_size.is_some() || self.szip_libaec_exact)
            && compression != "szip"
        {
            return Err(usage(
                "--szip-* flags have no effect without --compression szip",
            ));
        }
        let bits = self.bits.unwrap_or(16);
        if bits > 64 {
            return Err(usage(format!("--bits {bits} exceeds 64")));
        }
        let u32_flag = |flag: &str, v: u64| {
            u32::try_from(v).map_err(|_| usage(format!("{flag} {v} exceeds {}", u32::MAX)))
        };
        let compression = match compression {
            "zstd" => {
                // Written even when not asked for, as the reference writes it.
                let level = match self.level {
                    None => tgm::pipeline_spec::ZSTD_DEFAULT_LEVEL,
                    Some(l) => zstd_level(l)?,
                };
                Compression::Zstd { level }
            }
            "lz4" => Compression::Lz4,
            "blosc2" => {
                let mut level = tgm::Map::new();
                if let Some(l) = self.level {
                    level.insert("blosc2_clevel".into(), tgm::cbor::Value::from_i64(l));
                }
                let p = self.codec_params("blosc2", Blosc2::from_params, level)?;
                Compression::Blosc2(p)
            }
            "zfp" => {
                Compression::Zfp(self.codec_params("zfp", Zfp::from_params, tgm::Map::new())?)
            }
            "sz3" => {
                Compression::Sz3(self.codec_params("sz3", Sz3::from_params, tgm::Map::new())?)
            }
            "szip" => Compression::Szip {
                rsi: u32_flag("--szip-rsi", self.szip_rsi.unwrap_or(128))?,
                block_size: u32_flag("--szip-block-size", self.szip_block_size.unwrap_or(16))?,
            },
            _ => Compression::None,
        };
        Ok(Stages {
            packing_bits: (encoding == "simple_packing").then_some(bits as u32),
            shuffle: filter == "shuffle",
            compression,
        })
    }

    /// A descriptor for `dtype`/`shape` data carrying the chosen stages.
    /// Refuses settings that would destroy the field: simple_packing of a
    /// non-float type, and 0 bits on a field that is not constant.
    pub fn apply(&self, s: &Stages, d: &mut ObjectDescriptor, data: &[u8]) -> CliResult {
        d.masks = None;
        let mut b = PipelineBuilder::new();
        let element_bytes = match s.packing_bits {
            Some(bits) => {
                if d.dtype != Dtype::Float64 {
                    return Err(usage(format!(
                        "simple_packing quantises float64 fields, not {}",
                        d.dtype.name()
                    )));
                }
                if bits == 0 && !is_constant(d, data) {
                    return Err(usage(
                        "--bits 0 would store a constant in place of a field that varies",
                    ));
                }
                b = b.simple_packing(bits);
                (bits as usize).div_ceil(8)
            }
            None => d.dtype.width(),
        };
        if s.shuffle {
            b = b.shuffle_element_size(element_bytes.max(1));
        }
        b = match s.compression {
            Compression::None => b,
            Compression::Zstd { level } => b.zstd_level(level),
            Compression::Lz4 => b.lz4(),
            Compression::Blosc2(p) => b.blosc2(p),
            Compression::Zfp(p) => {
                float64_only("zfp", d.dtype)?;
                b.zfp(p)
            }
            Compression::Sz3(p) => {
                float64_only("sz3", d.dtype)?;
                b.sz3(p)
            }
            Compression::Szip { rsi, block_size } => {
                // SIGNED only pays on negative samples (spec/szip.md §7).
                let signed = s.packing_bits.is_none()
                    && !s.shuffle
                    && d.dtype.is_signed_int()
                    && tgm::szip::any_negative(
                        data,
                        d.dtype.width(),
                        d.byte_order == tgm::ByteOrder::Big,
                    );
                let flags = tgm::szip::flags::PREPROCESS
                    | if signed { tgm::szip::flags::SIGNED } else { 0 };
                b.szip_params(Szip {
                    rsi,
                    block_size,
                    flags,
                    offsets: None,
                })
            }
        };
        d.set_pipeline(&b);
        Ok(())
    }

    /// Encode options from these flags and the global ones.
    pub fn encode_options(&self, g: &GlobalArgs) -> CliResult<EncodeOptions> {
        let mut p = pipeline_options(g)?;
        if self.szip_libaec_exact {
            p.szip_profile = tgm::szip::SzipProfile::Libaec;
        }
        Ok(EncodeOptions::new().hashing(!self.no_hash).pipeline(p))
    }
}

/// `detail` with the descriptor keys the codec flags set named as those
/// flags.
fn flag_names(detail: &str) -> String {
    let mut s = detail.replace("blosc2_clevel", "--level");
    for k in CODEC_FLAG_KEYS {
        s = s.replace(k, &format!("--{}", k.replace('_', "-")));
    }
    s
}

/// Descriptor keys that have a flag of the same name.
const CODEC_FLAG_KEYS: [&str; 7] = [
    "blosc2_codec",
    "zfp_mode",
    "zfp_rate",
    "zfp_precision",
    "zfp_tolerance",
    "sz3_error_bound_mode",
    "sz3_error_bound",
];

/// zfp and sz3 code float64 values only.
fn float64_only(codec: &str, dtype: Dtype) -> CliResult {
    if dtype != Dtype::Float64 {
        return Err(usage(format!(
            "--compression {codec} codes float64 fields, not {}",
            dtype.name()
        )));
    }
    Ok(())
}

/// Pipeline options from the global flags.
pub fn pipeline_options(g: &GlobalArgs) -> CliResult<PipelineOptions> {
    let mut p = PipelineOptions::default();
    p.allow_nan = g.flags.allow_nan;
    p.allow_inf = g.flags.allow_inf;
    p.threads = g.threads;
    p.progress = crate::progress::object_hook("encoding");
    let method = |s: &Option<String>, default: MaskMethod| -> CliResult<MaskMethod> {
        match s {
            Some(name) => MaskMethod::from_name(name).map_err(|e| usage(e.to_string())),
            None => Ok(default),
        }
    };
    p.masks.nan = method(&g.flags.nan_mask_method, p.masks.nan)?;
    p.masks.pos_inf = method(&g.flags.pos_inf_mask_method, p.masks.pos_inf)?;
    p.masks.neg_inf = method(&g.flags.neg_inf_mask_method, p.masks.neg_inf)?;
    if let Some(t) = g.flags.small_mask_threshold {
        p.masks.small_mask_threshold = t;
    }
    if g.flags.zstd_content_size {
        p.zstd_frame_size = ZstdFrameSize::Recorded;
    }
    Ok(p)
}

/// Encode options that rewrite stored objects unchanged (set, merge,
/// split, reshuffle): masks are re-created wherever the data has them.
pub fn rewrite_options(g: &GlobalArgs) -> CliResult<EncodeOptions> {
    let mut p = pipeline_options(g)?;
    p.allow_nan = true;
    p.allow_inf = true;
    Ok(EncodeOptions::new().pipeline(p))
}

/// A stored descriptor made ready to re-encode its decoded data with the
/// same pipeline and parameters. Masks are dropped; what the stages derive
/// from the data (szip block offsets) is written again by the encoder.
pub fn rewrite_descriptor(stored: &ObjectDescriptor) -> ObjectDescriptor {
    let mut d = stored.clone();
    d.masks = None;
    d
}

/// A plain descriptor (no stages) for decoded data in `order`.
pub fn plain_descriptor(stored: &ObjectDescriptor, order: tgm::ByteOrder) -> ObjectDescriptor {
    let mut d = ObjectDescriptor::new(stored.dtype, stored.shape.clone()).with_byte_order(order);
    d.strides = stored.strides.clone();
    d
}

/// Whether every element of float data equals the first (NaN ignored).
fn is_constant(d: &ObjectDescriptor, data: &[u8]) -> bool {
    let big = d.byte_order == tgm::ByteOrder::Big;
    let mut first: Option<f64> = None;
    let mut check = |v: f64| {
        if v.is_nan() {
            return true;
        }
        match first {
            None => {
                first = Some(v);
                true
            }
            Some(f) => f == v,
        }
    };
    match d.dtype {
        Dtype::Float32 => data.chunks_exact(4).all(|c| {
            let b = [c[0], c[1], c[2], c[3]];
            check(f64::from(if big {
                f32::from_be_bytes(b)
            } else {
                f32::from_le_bytes(b)
            }))
        }),
        Dtype::Float64 => data.chunks_exact(8).all(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            check(if big {
                f64::from_be_bytes(b)
            } else {
                f64::from_le_bytes(b)
            })
        }),
        _ => false,
    }
}

/// Element values of decoded float/integer data as f64 (for error reports).
pub fn values_f64(dtype: Dtype, order: tgm::ByteOrder, data: &[u8]) -> Option<Vec<f64>> {
    let big = order == tgm::ByteOrder::Big;
    macro_rules! conv {
        ($t:ty, $n:expr) => {
            data.chunks_exact($n)
                .map(|c| {
                    let mut b = [0u8; $n];
                    b.copy_from_slice(c);
                    (if big {
                        <$t>::from_be_bytes(b)
                    } else {
                        <$t>::from_le_bytes(b)
                    }) as f64
                })
                .collect()
        };
    }
    Some(match dtype {
        Dtype::Float32 => conv!(f32, 4),
        Dtype::Float64 => conv!(f64, 8),
        Dtype::Int8 => conv!(i8, 1),
        Dtype::Int16 => conv!(i16, 2),
        Dtype::Int32 => conv!(i32, 4),
        Dtype::Int64 => conv!(i64, 8),
        Dtype::Uint8 => conv!(u8, 1),
        Dtype::Uint16 => conv!(u16, 2),
        Dtype::Uint32 => conv!(u32, 4),
        Dtype::Uint64 => conv!(u64, 8),
        _ => return None,
    })
}
