//! Every construction of encoding pipelines and encode options from
//! command-line flags. See `spec/pipeline.md` §1 for the stages and their parameters.

use clap::builder::BoolishValueParser;
use tgm::pipeline::{
    MaskMethod, PipelineOptions, StageChoice, StageError, StageRequest, ZstdFrameSize,
};
use tgm::{Dtype, EncodeOptions, ObjectDescriptor};

use crate::error::{usage, CliResult};

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

/// The stages named by the flags, checked (`tgm::pipeline::StageChoice`).
pub type Stages = StageChoice;

/// A refusal of the core's stage rules, with each option spelled as its
/// flag (`--szip-rsi 5000`).
pub fn stage_usage(e: StageError) -> crate::error::CliError {
    usage(e.render(|o, value| {
        let flag = format!("--{}", o.name().replace('_', "-"));
        match value {
            Some(v) => format!("{flag} {v}"),
            None => flag,
        }
    }))
}

impl PipelineArgs {
    /// Whether any stage flag was given.
    pub fn any_stage(&self) -> bool {
        self.request().any()
    }

    /// The flags as the core's request.
    pub fn request(&self) -> StageRequest {
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
        StageRequest {
            encoding: self.encoding.clone(),
            bits: self.bits,
            filter: self.filter.clone(),
            compression: self.compression.clone(),
            level: self.level,
            codec_keys: keys
                .into_iter()
                .filter_map(|(k, v)| Some((k.to_string(), v?)))
                .collect(),
            szip_rsi: self.szip_rsi,
            szip_block_size: self.szip_block_size,
            szip_libaec_exact: self.szip_libaec_exact,
        }
    }

    /// Validates the flags (the core's rules, `spec/pipeline.md` §10):
    /// unknown names and flags without effect in their combination are
    /// usage errors.
    pub fn stages(&self) -> CliResult<Stages> {
        self.request().choice().map_err(stage_usage)
    }

    /// Sets the chosen stages on the descriptor of `data`
    /// ([`StageChoice::apply`]).
    pub fn apply(&self, s: &Stages, d: &mut ObjectDescriptor, data: &[u8]) -> CliResult {
        s.apply(d, data).map_err(stage_usage)
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

/// Element values of decoded real data as f64 (for error reports;
/// [`Dtype::element_f64`]); None for the complex types.
pub fn values_f64(dtype: Dtype, order: tgm::ByteOrder, data: &[u8]) -> Option<Vec<f64>> {
    if matches!(dtype, Dtype::Complex64 | Dtype::Complex128) {
        return None;
    }
    let n = match dtype {
        Dtype::Bitmask => data.len() * 8,
        d => data.len() / d.width().max(1),
    };
    Some((0..n).map(|i| dtype.element_f64(data, order, i)).collect())
}
