//! The stages a caller asks for by name — an encoding, a filter, a
//! compression and their options — checked once into a [`StageChoice`]
//! that sets them on each object's descriptor. Every door that encodes
//! values from its own options (`tgm import`, `recompress`,
//! `convert-netcdf`, the Python converters) parses through here, so an
//! option means the same thing, and is refused for the same reason,
//! everywhere. See `spec/pipeline.md` §10.

use std::fmt;

use crate::cbor::Value;
use crate::descriptor::{Map, ObjectDescriptor};
use crate::dtype::{ByteOrder, Dtype};
use crate::error::Error;
use crate::pipeline_spec::{Blosc2, Params, SimplePacking, Sz3, Szip, Zfp, ZSTD_DEFAULT_LEVEL};

use super::builder::PipelineBuilder;

/// The levels zstd accepts: its fast levels down to -131072, 0 for its
/// default, and 1 to 22 (`spec/pipeline.md` §4.1).
pub const ZSTD_LEVELS: std::ops::RangeInclusive<i64> = -131_072..=22;

/// One option of a [`StageRequest`], as a door names it in its errors
/// (`--szip-rsi` on the command line, `szip_rsi` in Python).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageOption {
    /// The encoding's name.
    Encoding,
    /// simple_packing's bits per value.
    Bits,
    /// The filter's name.
    Filter,
    /// The compression's name.
    Compression,
    /// zstd's or blosc2's level.
    Level,
    /// A blosc2, zfp or sz3 option, named as its descriptor key.
    CodecKey(&'static str),
    /// szip's blocks per reference sample interval.
    SzipRsi,
    /// szip's samples per block.
    SzipBlockSize,
    /// szip coded exactly as libaec codes it.
    SzipLibaecExact,
}

/// The descriptor keys of blosc2, zfp and sz3 that a request may set.
pub const CODEC_KEYS: [&str; 7] = [
    "blosc2_codec",
    "zfp_mode",
    "zfp_rate",
    "zfp_precision",
    "zfp_tolerance",
    "sz3_error_bound_mode",
    "sz3_error_bound",
];

impl StageOption {
    /// The option's name in snake case (`szip_rsi`, `zfp_mode`).
    pub fn name(self) -> &'static str {
        match self {
            StageOption::Encoding => "encoding",
            StageOption::Bits => "bits",
            StageOption::Filter => "filter",
            StageOption::Compression => "compression",
            StageOption::Level => "level",
            StageOption::CodecKey(k) => k,
            StageOption::SzipRsi => "szip_rsi",
            StageOption::SzipBlockSize => "szip_block_size",
            StageOption::SzipLibaecExact => "szip_libaec_exact",
        }
    }
}

/// Why a request or a choice was refused: text with the options it names,
/// which each door spells its own way ([`StageError::render`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StageError {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(String),
    /// An option, with the value it was given when that matters.
    Option(StageOption, Option<String>),
}

impl StageError {
    /// An empty message, to be built with [`StageError::text`] and
    /// [`StageError::option`] (the converters' own stage rules refuse
    /// with these, in the same words).
    pub fn new() -> Self {
        StageError { parts: Vec::new() }
    }

    /// Appends text.
    pub fn text(mut self, t: impl Into<String>) -> Self {
        self.parts.push(Part::Text(t.into()));
        self
    }

    /// Appends the name of option `o`.
    pub fn option(mut self, o: StageOption) -> Self {
        self.parts.push(Part::Option(o, None));
        self
    }

    /// Appends option `o` given `value`.
    pub fn option_is(mut self, o: StageOption, value: impl fmt::Display) -> Self {
        self.parts.push(Part::Option(o, Some(value.to_string())));
        self
    }

    /// `given` (none when unset) when it is one of `names`, else the
    /// refusal listing them.
    pub fn check_name<'a>(
        option: StageOption,
        given: Option<&'a str>,
        names: &[&'a str],
    ) -> Result<&'a str, StageError> {
        one_of(option, given, names)
    }

    /// `level` when it is one of zstd's, else the refusal.
    pub fn check_zstd_level(level: i64) -> Result<i32, StageError> {
        if ZSTD_LEVELS.contains(&level) {
            return Ok(level as i32);
        }
        Err(StageError::new()
            .option_is(StageOption::Level, level)
            .text(format!(
                " is outside zstd's levels ({} to {})",
                ZSTD_LEVELS.start(),
                ZSTD_LEVELS.end()
            )))
    }

    /// A codec's own error text, with the descriptor keys its options set
    /// named as those options.
    fn codec_detail(detail: &str) -> Self {
        let keys = CODEC_KEYS
            .iter()
            .map(|&k| (k, StageOption::CodecKey(k)))
            .chain([("blosc2_clevel", StageOption::Level)]);
        let mut parts = vec![Part::Text(detail.to_string())];
        for (key, option) in keys {
            parts = parts
                .into_iter()
                .flat_map(|p| match p {
                    Part::Text(t) if t.contains(key) => {
                        let mut out = Vec::new();
                        for (i, piece) in t.split(key).enumerate() {
                            if i > 0 {
                                out.push(Part::Option(option, None));
                            }
                            if !piece.is_empty() {
                                out.push(Part::Text(piece.to_string()));
                            }
                        }
                        out
                    }
                    p => vec![p],
                })
                .collect();
        }
        StageError { parts }
    }

    /// The message, with each option spelled by `name` (given the option
    /// and, when the message is about its value, that value).
    pub fn render(&self, name: impl Fn(StageOption, Option<&str>) -> String) -> String {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => t.clone(),
                Part::Option(o, v) => name(*o, v.as_deref()),
            })
            .collect()
    }
}

impl fmt::Display for StageError {
    /// Options spelled as keyword arguments: `bits`, `bits=70`,
    /// `compression='zfp'`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(|o, v| match v {
            None => o.name().to_string(),
            Some(v) if v.parse::<f64>().is_ok() => format!("{}={v}", o.name()),
            Some(v) => format!("{}='{v}'", o.name()),
        }))
    }
}

impl std::error::Error for StageError {}

impl From<StageError> for Error {
    fn from(e: StageError) -> Self {
        Error::invalid_argument(e.to_string())
    }
}

/// The stages asked for by name, with their options; unset means the
/// default (no encoding, no filter, no compression, zstd at level 3,
/// simple_packing at 16 bits, szip with 128 blocks of 16 samples).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StageRequest {
    /// `none` or `simple_packing`.
    pub encoding: Option<String>,
    /// simple_packing's bits per value.
    pub bits: Option<u64>,
    /// `none` or `shuffle`.
    pub filter: Option<String>,
    /// `none`, `zstd`, `lz4`, `szip`, `blosc2`, `zfp` or `sz3`.
    pub compression: Option<String>,
    /// zstd's level (-131072 to 22) or blosc2's (0 to 9).
    pub level: Option<i64>,
    /// blosc2, zfp and sz3 options as their descriptor keys
    /// ([`CODEC_KEYS`]).
    pub codec_keys: Map,
    /// szip's blocks per reference sample interval, 1 to 4096.
    pub szip_rsi: Option<u64>,
    /// szip's samples per block: 8, 16, 32 or 64.
    pub szip_block_size: Option<u64>,
    /// szip coded exactly as libaec codes it (`spec/szip.md`).
    pub szip_libaec_exact: bool,
}

/// The compression stage of a [`StageChoice`].
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

/// A checked [`StageRequest`]: what every object it is applied to gets.
#[derive(Debug, Clone, PartialEq)]
pub struct StageChoice {
    /// simple_packing at this many bits per value, or no encoding.
    packing_bits: Option<u32>,
    shuffle: bool,
    compression: Compression,
    libaec_exact: bool,
}

type StageResult<T> = std::result::Result<T, StageError>;

fn one_of<'a>(option: StageOption, given: Option<&'a str>, names: &[&str]) -> StageResult<&'a str> {
    let name = given.unwrap_or("none");
    if names.contains(&name) {
        return Ok(name);
    }
    Err(StageError::new().text(format!(
        "unknown {} {name:?} ({})",
        option.name(),
        names.join(", ")
    )))
}

impl StageRequest {
    /// Whether any option is set.
    pub fn any(&self) -> bool {
        *self != StageRequest::default()
    }

    /// Checks the request: unknown names, and options without effect in
    /// their combination, are refused.
    pub fn choice(&self) -> StageResult<StageChoice> {
        use StageOption as O;
        let encoding = one_of(
            O::Encoding,
            self.encoding.as_deref(),
            &["none", "simple_packing"],
        )?;
        let filter = one_of(O::Filter, self.filter.as_deref(), &["none", "shuffle"])?;
        if let Some(k) = self
            .codec_keys
            .keys()
            .find(|k| !CODEC_KEYS.contains(&k.as_str()))
        {
            return Err(StageError::new().text(format!(
                "unknown codec option {k:?} ({})",
                CODEC_KEYS.join(", ")
            )));
        }
        let compression = one_of(
            O::Compression,
            self.compression.as_deref(),
            &["none", "zstd", "lz4", "szip", "blosc2", "zfp", "sz3"],
        )?;
        if self.bits.is_some() && encoding != "simple_packing" {
            return Err(StageError::new()
                .option(O::Bits)
                .text(" has no effect without ")
                .option_is(O::Encoding, "simple_packing"));
        }
        if self.level.is_some() && !matches!(compression, "zstd" | "blosc2") {
            return Err(StageError::new().option(O::Level).text(format!(
                " has no effect with compression {compression:?} (only zstd and blosc2 have levels)"
            )));
        }
        if !matches!(compression, "blosc2" | "zfp" | "sz3") {
            if let Some(k) = self.codec_key_given("") {
                return Err(StageError::new()
                    .option(O::CodecKey(k))
                    .text(format!(" has no effect with compression {compression:?}")));
            }
        }
        if matches!(compression, "zfp" | "sz3") && (encoding != "none" || filter != "none") {
            return Err(StageError::new()
                .option_is(O::Compression, compression)
                .text(" codes float64 values itself: it needs ")
                .option_is(O::Encoding, "none")
                .text(" and ")
                .option_is(O::Filter, "none"));
        }
        let szip_option = [
            (self.szip_rsi.is_some(), O::SzipRsi),
            (self.szip_block_size.is_some(), O::SzipBlockSize),
            (self.szip_libaec_exact, O::SzipLibaecExact),
        ]
        .into_iter()
        .find_map(|(given, o)| given.then_some(o));
        if let (Some(o), false) = (szip_option, compression == "szip") {
            return Err(StageError::new()
                .option(o)
                .text(" has no effect without ")
                .option_is(O::Compression, "szip"));
        }
        let bits = self.bits.unwrap_or(16);
        if bits > 64 {
            return Err(StageError::new()
                .option_is(O::Bits, bits)
                .text(" exceeds 64"));
        }
        let small = |o: StageOption, v: u64| {
            u32::try_from(v).map_err(|_| {
                StageError::new()
                    .option_is(o, v)
                    .text(format!(" exceeds {}", u32::MAX))
            })
        };
        let compression = match compression {
            "zstd" => Compression::Zstd {
                // Written even when not asked for, as the reference writes it.
                level: match self.level {
                    None => ZSTD_DEFAULT_LEVEL,
                    Some(l) => StageError::check_zstd_level(l)?,
                },
            },
            "lz4" => Compression::Lz4,
            "blosc2" => {
                let mut level = Map::new();
                if let Some(l) = self.level {
                    level.insert("blosc2_clevel".into(), Value::from_i64(l));
                }
                Compression::Blosc2(self.codec_params("blosc2", Blosc2::from_params, level)?)
            }
            "zfp" => Compression::Zfp(self.codec_params("zfp", Zfp::from_params, Map::new())?),
            "sz3" => Compression::Sz3(self.codec_params("sz3", Sz3::from_params, Map::new())?),
            "szip" => Compression::Szip {
                rsi: small(O::SzipRsi, self.szip_rsi.unwrap_or(128))?,
                block_size: small(O::SzipBlockSize, self.szip_block_size.unwrap_or(16))?,
            },
            _ => Compression::None,
        };
        Ok(StageChoice {
            packing_bits: (encoding == "simple_packing").then_some(bits as u32),
            shuffle: filter == "shuffle",
            compression,
            libaec_exact: self.szip_libaec_exact,
        })
    }

    /// The first codec key given whose name starts with `prefix` ("" for
    /// any).
    fn codec_key_given(&self, prefix: &str) -> Option<&'static str> {
        CODEC_KEYS
            .into_iter()
            .find(|k| k.starts_with(prefix) && self.codec_keys.contains_key(*k))
    }

    /// The typed parameters of blosc2, zfp or sz3 from the codec keys,
    /// checked as a descriptor's keys are; another codec's key, or a key
    /// no codec has, is refused.
    fn codec_params<T>(
        &self,
        codec: &'static str,
        parse: fn(&Params<'_>) -> crate::Result<T>,
        mut keys: Map,
    ) -> StageResult<T> {
        let own = format!("{codec}_");
        if let Some(k) = CODEC_KEYS
            .into_iter()
            .find(|k| !k.starts_with(&own) && self.codec_keys.contains_key(*k))
        {
            return Err(StageError::new()
                .option(StageOption::CodecKey(k))
                .text(" has no effect with ")
                .option_is(StageOption::Compression, codec));
        }
        keys.extend(self.codec_keys.clone());
        parse(&Params::new(&keys, codec)).map_err(|e| StageError::codec_detail(e.detail()))
    }
}

impl StageChoice {
    /// The same choice without an encoding: what a door gives the objects
    /// that simple_packing cannot quantise (`convert-netcdf`'s integer
    /// variables).
    pub fn without_encoding(&self) -> StageChoice {
        StageChoice {
            packing_bits: None,
            ..self.clone()
        }
    }

    /// Whether the choice quantises with simple_packing.
    pub fn packs(&self) -> bool {
        self.packing_bits.is_some()
    }

    /// Whether szip is to be coded exactly as libaec codes it, an encode
    /// option ([`crate::pipeline::PipelineOptions::szip_profile`]).
    pub fn szip_libaec_exact(&self) -> bool {
        self.libaec_exact
    }

    /// Sets the chosen stages on `d`, the descriptor of `data` (its
    /// payload in `d`'s byte order), dropping any masks. Refuses what
    /// would destroy the values: simple_packing of anything but float64,
    /// 0 bits for values that are not all one, zfp or sz3 of anything but
    /// float64.
    pub fn apply(&self, d: &mut ObjectDescriptor, data: &[u8]) -> StageResult<()> {
        use StageOption as O;
        d.masks = None;
        let mut b = PipelineBuilder::new();
        let element_bytes = match self.packing_bits {
            Some(bits) => {
                if d.dtype != Dtype::Float64 {
                    return Err(StageError::new().text(format!(
                        "simple_packing quantises float64 values, not {}",
                        d.dtype.name()
                    )));
                }
                if bits == 0 && !is_constant(d, data) {
                    return Err(StageError::new()
                        .option_is(O::Bits, 0)
                        .text(" would store a constant in place of values that vary"));
                }
                b = b.simple_packing_params(packing_for(bits, d, data)?);
                (bits as usize).div_ceil(8)
            }
            None => d.dtype.width(),
        };
        if self.shuffle {
            b = b.shuffle_element_size(element_bytes.max(1));
        }
        let float64_only = |codec: &str| {
            if d.dtype == Dtype::Float64 {
                return Ok(());
            }
            Err(StageError::new()
                .option_is(O::Compression, codec)
                .text(format!(" codes float64 values, not {}", d.dtype.name())))
        };
        b = match self.compression {
            Compression::None => b,
            Compression::Zstd { level } => b.zstd_level(level),
            Compression::Lz4 => b.lz4(),
            Compression::Blosc2(p) => b.blosc2(p),
            Compression::Zfp(p) => {
                float64_only("zfp")?;
                b.zfp(p)
            }
            Compression::Sz3(p) => {
                float64_only("sz3")?;
                b.sz3(p)
            }
            Compression::Szip { rsi, block_size } => {
                // SIGNED only pays on negative samples (spec/szip.md §7).
                let signed = self.packing_bits.is_none()
                    && !self.shuffle
                    && d.dtype.is_signed_int()
                    && any_negative(data, d.dtype.width(), d.byte_order == ByteOrder::Big);
                let defaults = Szip::default();
                b.szip_params(Szip {
                    rsi,
                    block_size,
                    flags: defaults.flags | if signed { SZIP_SIGNED } else { 0 },
                    offsets: None,
                })
            }
        };
        d.set_pipeline(&b);
        Ok(())
    }
}

/// simple_packing at `bits` for float64 `data` (in `d`'s byte order).
/// When it holds NaN or infinities — kept in masks when the encode options
/// allow them (§5) — R and E are computed here from the finite values, as
/// the encoder cannot derive them with those present; D is 0.
fn packing_for(bits: u32, d: &ObjectDescriptor, data: &[u8]) -> StageResult<SimplePacking> {
    let finite = |c: &&[u8]| {
        let b: [u8; 8] = (*c).try_into().unwrap_or_default();
        match d.byte_order {
            ByteOrder::Big => f64::from_be_bytes(b),
            ByteOrder::Little => f64::from_le_bytes(b),
        }
        .is_finite()
    };
    if data.chunks_exact(8).all(|c| finite(&c)) {
        return Ok(SimplePacking::new(bits));
    }
    let present: Vec<u8> = data
        .chunks_exact(8)
        .filter(finite)
        .flatten()
        .copied()
        .collect();
    let (reference, binary) = if present.is_empty() {
        (0.0, 0)
    } else {
        let p = super::compute_packing_params(&present, d.byte_order, bits, 0)
            .map_err(|e| StageError::new().text(e.to_string()))?;
        (p.reference_value, p.binary_scale_factor)
    };
    Ok(SimplePacking {
        reference_value: Some(reference),
        binary_scale_factor: Some(binary),
        decimal_scale_factor: Some(0),
        ..SimplePacking::new(bits)
    })
}

/// szip's flag for signed samples (`spec/szip.md` §7).
const SZIP_SIGNED: u32 = 1;

/// Whether a sample of `data` (`width`-byte signed integers) is negative.
#[cfg(feature = "szip")]
fn any_negative(data: &[u8], width: usize, big_endian: bool) -> bool {
    crate::szip::any_negative(data, width, big_endian)
}

/// Without the szip coder the flag is moot: encoding refuses szip.
#[cfg(not(feature = "szip"))]
fn any_negative(_: &[u8], _: usize, _: bool) -> bool {
    false
}

/// Whether every element of float data equals the first (NaN ignored).
fn is_constant(d: &ObjectDescriptor, data: &[u8]) -> bool {
    let big = d.byte_order == ByteOrder::Big;
    let mut first: Option<f64> = None;
    let mut same = |v: f64| {
        if v.is_nan() {
            return true;
        }
        *first.get_or_insert(v) == v
    };
    match d.dtype {
        Dtype::Float32 => data.chunks_exact(4).all(|c| {
            let b = [c[0], c[1], c[2], c[3]];
            same(f64::from(if big {
                f32::from_be_bytes(b)
            } else {
                f32::from_le_bytes(b)
            }))
        }),
        Dtype::Float64 => data.chunks_exact(8).all(|c| {
            let b: [u8; 8] = c.try_into().unwrap_or_default();
            same(if big {
                f64::from_be_bytes(b)
            } else {
                f64::from_le_bytes(b)
            })
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(o: StageOption, v: Option<&str>) -> String {
        let f = format!("--{}", o.name().replace('_', "-"));
        match v {
            Some(v) => format!("{f} {v}"),
            None => f,
        }
    }

    fn refused(r: StageRequest) -> String {
        r.choice().expect_err("refused").render(flag)
    }

    #[test]
    fn defaults_choose_no_stage_and_zstd_gets_its_default_level() {
        let plain = StageRequest::default().choice().unwrap();
        assert!(!plain.packs());
        let mut d = ObjectDescriptor::new(Dtype::Float64, vec![2]);
        let zstd = StageRequest {
            compression: Some("zstd".into()),
            ..Default::default()
        };
        zstd.choice().unwrap().apply(&mut d, &[0; 16]).unwrap();
        assert_eq!(d.pipeline().names(), ["none", "none", "zstd"]);
        assert_eq!(
            d.pipeline().param("zstd_level"),
            Some(&Value::from_i64(i64::from(ZSTD_DEFAULT_LEVEL)))
        );
    }

    #[test]
    fn options_without_effect_are_refused_naming_them_as_the_door_does() {
        let cases = [
            (
                StageRequest {
                    bits: Some(12),
                    ..Default::default()
                },
                "--bits has no effect without --encoding simple_packing",
            ),
            (
                StageRequest {
                    compression: Some("lz4".into()),
                    level: Some(3),
                    ..Default::default()
                },
                "--level has no effect with compression \"lz4\"",
            ),
            (
                StageRequest {
                    szip_block_size: Some(8),
                    ..Default::default()
                },
                "--szip-block-size has no effect without --compression szip",
            ),
            (
                StageRequest {
                    encoding: Some("simple_packing".into()),
                    compression: Some("zfp".into()),
                    ..Default::default()
                },
                "--compression zfp codes float64 values itself: it needs --encoding none and --filter none",
            ),
            (
                StageRequest {
                    encoding: Some("simple_packing".into()),
                    bits: Some(65),
                    ..Default::default()
                },
                "--bits 65 exceeds 64",
            ),
            (
                StageRequest {
                    compression: Some("zstd".into()),
                    level: Some(23),
                    ..Default::default()
                },
                "--level 23 is outside zstd's levels",
            ),
            (
                StageRequest {
                    compression: Some("snappy".into()),
                    ..Default::default()
                },
                "unknown compression \"snappy\"",
            ),
        ];
        for (request, want) in cases {
            let got = refused(request);
            assert!(got.starts_with(want), "{got:?} does not start {want:?}");
        }
    }

    #[test]
    fn codec_errors_name_the_options_that_set_their_keys() {
        let mut keys = Map::new();
        keys.insert("zfp_mode".into(), Value::Text("fixed_rate".into()));
        let r = StageRequest {
            compression: Some("blosc2".into()),
            codec_keys: keys.clone(),
            ..Default::default()
        };
        assert_eq!(
            refused(r),
            "--zfp-mode has no effect with --compression blosc2"
        );
        let e = StageError::codec_detail("zfp: zfp_mode fixed_rate needs zfp_rate");
        assert_eq!(
            e.render(flag),
            "zfp: --zfp-mode fixed_rate needs --zfp-rate"
        );
        assert_eq!(e.to_string(), "zfp: zfp_mode fixed_rate needs zfp_rate");
    }

    #[cfg(feature = "szip")]
    #[test]
    fn szip_flags_are_the_coders() {
        assert_eq!(SZIP_SIGNED, crate::szip::flags::SIGNED);
        assert_eq!(Szip::default().flags, crate::szip::flags::PREPROCESS);
        let choice = StageRequest {
            compression: Some("szip".into()),
            ..Default::default()
        }
        .choice()
        .unwrap();
        let mut d = ObjectDescriptor::new(Dtype::Int16, vec![2]);
        let negative: Vec<u8> = [-1i16, 2].iter().flat_map(|v| v.to_ne_bytes()).collect();
        choice.apply(&mut d, &negative).unwrap();
        let flags = crate::szip::flags::PREPROCESS | crate::szip::flags::SIGNED;
        assert_eq!(
            d.pipeline().param("szip_flags"),
            Some(&Value::Uint(flags.into()))
        );
    }

    #[test]
    fn packing_around_missing_values_takes_its_range_from_the_finite_ones() {
        let pack = StageRequest {
            encoding: Some("simple_packing".into()),
            ..Default::default()
        }
        .choice()
        .unwrap();
        let values = [1000.0f64, f64::NAN, 1001.0, f64::INFINITY];
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let data: Vec<u8> = values
                .iter()
                .flat_map(|v| match order {
                    ByteOrder::Big => v.to_be_bytes(),
                    ByteOrder::Little => v.to_le_bytes(),
                })
                .collect();
            let mut d = ObjectDescriptor::new(Dtype::Float64, vec![4]).with_byte_order(order);
            pack.apply(&mut d, &data).unwrap();
            let p = d.pipeline();
            assert_eq!(p.param("sp_reference_value"), Some(&Value::Float(1000.0)));
            // 16 bits over a range of 1: 2^E just above 1/65535.
            assert_eq!(
                p.param("sp_binary_scale_factor"),
                Some(&Value::from_i64(-15))
            );
            assert_eq!(
                p.param("sp_decimal_scale_factor"),
                Some(&Value::from_i64(0))
            );
        }
        // Finite values only: R and E are left to the encoder.
        let mut d = ObjectDescriptor::new(Dtype::Float64, vec![1]);
        pack.apply(&mut d, &1.0f64.to_ne_bytes()).unwrap();
        assert_eq!(d.pipeline().param("sp_reference_value"), None);
    }

    #[test]
    fn apply_refuses_what_would_destroy_the_values() {
        let pack = StageRequest {
            encoding: Some("simple_packing".into()),
            bits: Some(0),
            ..Default::default()
        }
        .choice()
        .unwrap();
        let mut ints = ObjectDescriptor::new(Dtype::Int32, vec![2]);
        let e = pack.apply(&mut ints, &[0; 8]).unwrap_err();
        assert!(e.to_string().contains("not int32"), "{e}");
        let mut d = ObjectDescriptor::new(Dtype::Float64, vec![2]);
        let varying: Vec<u8> = [1.0f64, 2.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let e = pack.apply(&mut d, &varying).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bits=0 would store a constant in place of values that vary"
        );
        let constant: Vec<u8> = [f64::NAN, 2.0, 2.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let mut d = ObjectDescriptor::new(Dtype::Float64, vec![3]);
        pack.apply(&mut d, &constant).unwrap();
        assert_eq!(d.encoding(), "simple_packing");
        let plain = pack.without_encoding();
        plain.apply(&mut ints, &[0; 8]).unwrap();
        assert_eq!(ints.encoding(), "none");
    }
}
