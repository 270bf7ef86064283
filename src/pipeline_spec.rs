//! A descriptor's pipeline as an inert, typed specification: the three
//! stage names with one parameter struct per stage, parsed and checked once
//! from the descriptor's keys, and the codec keys kept verbatim so that a
//! descriptor re-encodes to the bytes it was read from. Part of the data
//! model: it runs nothing, and nothing here imports the codec runtime
//! (`src/pipeline/`), which builds the running stages from it. See
//! `spec/pipeline.md` §1 and §9.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::cbor::Value;
use crate::error::{Error, ErrorKind, Result};

type Map = BTreeMap<String, Value>;

/// Which of the three descriptor fields names a stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StageKind {
    /// `encoding`: element values → a byte stream.
    Encoding,
    /// `filter`: a reversible byte permutation.
    Filter,
    /// `compression`: a byte stream → a shorter one.
    Compression,
}

impl StageKind {
    /// The descriptor key naming a stage of this kind.
    pub fn key(self) -> &'static str {
        match self {
            StageKind::Encoding => "encoding",
            StageKind::Filter => "filter",
            StageKind::Compression => "compression",
        }
    }
}

/// Key prefixes of the codecs the format defines, built in or not, with the
/// codec each belongs to; a key with one of these prefixes is a codec key,
/// never an annotation (`spec/pipeline.md` §1).
pub(crate) const CODEC_KEY_PREFIXES: [(&str, &str); 8] = [
    ("sp_", "simple_packing"),
    ("shuffle_", "shuffle"),
    ("zstd_", "zstd"),
    ("lz4_", "lz4"),
    ("szip_", "szip"),
    ("blosc2_", "blosc2"),
    ("zfp_", "zfp"),
    ("sz3_", "sz3"),
];

/// The codec whose prefix `key` carries, if any.
pub(crate) fn codec_of_key(key: &str) -> Option<&'static str> {
    CODEC_KEY_PREFIXES
        .iter()
        .find(|(p, _)| key.starts_with(p))
        .map(|&(_, c)| c)
}

/// The error for a stage name tgm has no codec for.
pub(crate) fn unknown_stage_error(kind: StageKind, name: &str) -> Error {
    Error::unsupported_codec(format!("unknown {} {name:?}", kind.key()))
}

/// Typed read access to the parameter keys of one stage.
#[derive(Debug, Clone, Copy)]
pub struct Params<'m> {
    map: &'m Map,
    stage: &'static str,
}

impl<'m> Params<'m> {
    /// The keys of `map`, read on behalf of `stage`.
    pub fn new(map: &'m Map, stage: &'static str) -> Self {
        Params { map, stage }
    }

    /// The raw value of `key`.
    pub fn get(&self, key: &str) -> Option<&'m Value> {
        self.map.get(key)
    }

    fn missing(&self, key: &str) -> Error {
        Error::metadata(format!("{} needs parameter {key:?}", self.stage))
    }

    /// An optional signed integer.
    pub fn opt_i64(&self, key: &str) -> Result<Option<i64>> {
        match self.map.get(key) {
            None => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| {
                Error::metadata(format!("{key} is a {}, not an integer", v.type_name()))
            }),
        }
    }

    /// An optional integer that must fit an `i32`.
    pub fn opt_i32(&self, key: &str) -> Result<Option<i32>> {
        match self.opt_i64(key)? {
            None => Ok(None),
            Some(v) => i32::try_from(v)
                .map(Some)
                .map_err(|_| Error::metadata(format!("{key} {v} is outside the i32 range"))),
        }
    }

    /// A required unsigned integer.
    pub fn req_u64(&self, key: &str) -> Result<u64> {
        let v = self.map.get(key).ok_or_else(|| self.missing(key))?;
        v.as_u64().ok_or_else(|| {
            Error::metadata(format!(
                "{key} is a {}, not an unsigned integer",
                v.type_name()
            ))
        })
    }

    /// A required unsigned integer that must fit a `u32`.
    pub fn req_u32(&self, key: &str) -> Result<u32> {
        let v = self.req_u64(key)?;
        u32::try_from(v).map_err(|_| Error::metadata(format!("{key} {v} exceeds u32")))
    }

    /// An optional text value.
    pub fn opt_text(&self, key: &str) -> Result<Option<&'m str>> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::Text(t)) => Ok(Some(t.as_str())),
            Some(v) => Err(Error::metadata(format!(
                "{key} is a {}, not text",
                v.type_name()
            ))),
        }
    }

    /// A required text value.
    pub fn req_text(&self, key: &str) -> Result<&'m str> {
        self.opt_text(key)?.ok_or_else(|| self.missing(key))
    }

    /// A required finite, positive number (a float or an integer).
    pub fn req_positive_f64(&self, key: &str) -> Result<f64> {
        let v = self.map.get(key).ok_or_else(|| self.missing(key))?;
        let f = match v {
            Value::Float(f) => Some(*f),
            Value::Uint(_) | Value::Nint(_) => v.as_f64(),
            _ => None,
        }
        .ok_or_else(|| Error::metadata(format!("{key} is a {}, not a number", v.type_name())))?;
        if !(f.is_finite() && f > 0.0) {
            return Err(Error::metadata(format!(
                "{key} {f} must be a finite number above 0"
            )));
        }
        Ok(f)
    }

    /// An optional array of unsigned integers.
    pub fn opt_u64_array(&self, key: &str) -> Result<Option<Vec<u64>>> {
        let Some(v) = self.map.get(key) else {
            return Ok(None);
        };
        let items = v
            .as_array()
            .ok_or_else(|| Error::metadata(format!("{key} is not an array")))?;
        items
            .iter()
            .map(|x| {
                x.as_u64()
                    .ok_or_else(|| Error::metadata(format!("{key} entry is not a uint")))
            })
            .collect::<Result<Vec<u64>>>()
            .map(Some)
    }
}

/// The simple_packing encoding with its four parameters (`spec/pipeline.md`
/// §2). R and E may be absent before encoding derives them; decoding needs
/// all four.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SimplePacking {
    /// `sp_bits_per_value`, 0..=64.
    pub bits_per_value: u32,
    /// `sp_reference_value`, if given.
    pub reference_value: Option<f64>,
    /// `sp_binary_scale_factor`, if given.
    pub binary_scale_factor: Option<i32>,
    /// `sp_decimal_scale_factor`, if given (encoding defaults it to 0).
    pub decimal_scale_factor: Option<i32>,
    /// `sp_grib_reference_value`, a tgm extension: when given, values are
    /// evaluated in GRIB's order, `(R_grib + q·2^E)·10^−D`, from this
    /// reference value, as ecCodes evaluates them (`spec/pipeline.md`
    /// §2.5); `sp_reference_value` is then what other readers use.
    pub grib_reference_value: Option<f64>,
    /// R and E were derived from the data by the last encode run.
    #[serde(skip)]
    pub(crate) derived: bool,
}

impl SimplePacking {
    /// `bits` per value; R and E derived from the data, D = 0.
    pub fn new(bits_per_value: u32) -> Self {
        SimplePacking {
            bits_per_value,
            reference_value: None,
            binary_scale_factor: None,
            decimal_scale_factor: None,
            grib_reference_value: None,
            derived: false,
        }
    }

    /// Reads and checks the `sp_*` keys.
    pub fn from_params(p: &Params<'_>) -> Result<Self> {
        let bits = p.req_u64("sp_bits_per_value")?;
        if bits > 64 {
            return Err(Error::metadata(format!(
                "sp_bits_per_value {bits} exceeds 64"
            )));
        }
        Ok(SimplePacking {
            bits_per_value: bits as u32,
            reference_value: number(p, "sp_reference_value")?,
            binary_scale_factor: p.opt_i32("sp_binary_scale_factor")?,
            decimal_scale_factor: p.opt_i32("sp_decimal_scale_factor")?,
            grib_reference_value: number(p, "sp_grib_reference_value")?,
            derived: false,
        })
    }

    /// The parameters the builder writes.
    pub fn params(&self) -> Vec<(&'static str, Value)> {
        let mut v = vec![("sp_bits_per_value", Value::Uint(self.bits_per_value as u64))];
        if let Some(r) = self.reference_value {
            v.push(("sp_reference_value", Value::Float(r)));
        }
        if let Some(e) = self.binary_scale_factor {
            v.push(("sp_binary_scale_factor", Value::from_i64(e as i64)));
        }
        if let Some(d) = self.decimal_scale_factor {
            v.push(("sp_decimal_scale_factor", Value::from_i64(d as i64)));
        }
        if let Some(r) = self.grib_reference_value {
            v.push(("sp_grib_reference_value", Value::Float(r)));
        }
        v
    }
}

/// The keys of simple_packing's spherical-harmonic layout.
pub(crate) const SPECTRAL_KEYS: [&str; 5] = [
    "sp_spectral_truncation",
    "sp_spectral_subset_truncation",
    "sp_spectral_laplacian",
    "sp_spectral_subset",
    "sp_spectral_subset_last_scaled",
];

/// True when simple_packing's `params` name the spherical-harmonic layout:
/// any of [`SPECTRAL_KEYS`] is present (spec/pipeline.md §2.6).
pub(crate) fn names_spectral_layout(params: &Params<'_>) -> bool {
    SPECTRAL_KEYS.iter().any(|k| params.get(k).is_some())
}

/// The largest pentagonal truncation J accepted (GRIB2 stores J in two
/// octets).
pub const SPECTRAL_MAX_TRUNCATION: u32 = 65_535;

/// simple_packing over spherical-harmonic coefficients as GRIB's
/// `spectral_complex` packing stores them, a tgm extension
/// (`spec/pipeline.md` §2.6): the coefficients of total wavenumber up to
/// the subset truncation JS kept as IEEE binary32 values
/// (`sp_spectral_subset`), every other one as a code evaluated in GRIB's
/// order (§2.5) and scaled by `1 / (n(n+1))^P`. Its wire name is
/// `simple_packing`: a reader without the extension decodes the codes
/// without the scaling.
#[derive(Debug, Clone, PartialEq)]
pub struct SpectralPacking {
    /// The codes' simple_packing parameters; R, E and
    /// `sp_grib_reference_value` are required.
    pub packing: SimplePacking,
    /// `sp_spectral_truncation`: the pentagonal truncation J = K = M; the
    /// object holds `(J+1)(J+2)` float64 values.
    pub truncation: u32,
    /// `sp_spectral_subset_truncation`: JS < J.
    pub subset_truncation: u32,
    /// `sp_spectral_laplacian`: the Laplacian operator P.
    pub laplacian: f64,
    /// `sp_spectral_subset`: the `(JS+1)(JS+2)` unpacked values in order,
    /// as big-endian binary32 on the wire; derived from the values when
    /// encoding, required when decoding.
    pub subset: Option<Vec<f32>>,
    /// `sp_spectral_subset_last_scaled` (default false): the subset's
    /// coefficients of total wavenumber JS are scaled by the Laplacian
    /// operator as the packed ones are (GRIB1's GRIBEX scaling).
    pub subset_last_scaled: bool,
}

impl SpectralPacking {
    /// Values of a truncation `t`: `(t+1)(t+2)`.
    pub fn values_of(t: u32) -> u64 {
        (u64::from(t) + 1) * (u64::from(t) + 2)
    }

    /// Reads and checks the `sp_*` keys, `sp_spectral_*` included.
    pub fn from_params(p: &Params<'_>) -> Result<Self> {
        let packing = SimplePacking::from_params(p)?;
        if packing.grib_reference_value.is_none() {
            return Err(Error::metadata(
                "sp_spectral_* keys need sp_grib_reference_value: the coefficients' codes \
                 are evaluated in GRIB's order",
            ));
        }
        let truncation = p.req_u32("sp_spectral_truncation")?;
        let subset_truncation = p.req_u32("sp_spectral_subset_truncation")?;
        if truncation > SPECTRAL_MAX_TRUNCATION {
            return Err(Error::metadata(format!(
                "sp_spectral_truncation {truncation} exceeds {SPECTRAL_MAX_TRUNCATION}"
            )));
        }
        if subset_truncation >= truncation {
            return Err(Error::metadata(format!(
                "sp_spectral_subset_truncation {subset_truncation} is not below \
                 sp_spectral_truncation {truncation}"
            )));
        }
        let laplacian = number(p, "sp_spectral_laplacian")?
            .ok_or_else(|| p.missing("sp_spectral_laplacian"))?;
        if !laplacian.is_finite() {
            return Err(Error::metadata(format!(
                "sp_spectral_laplacian {laplacian} is not finite"
            )));
        }
        let subset = match p.get("sp_spectral_subset") {
            None => None,
            Some(Value::Bytes(b)) => {
                let want = Self::values_of(subset_truncation) * 4;
                if b.len() as u64 != want {
                    return Err(Error::metadata(format!(
                        "sp_spectral_subset holds {} bytes where truncation {subset_truncation} \
                         needs {want}",
                        b.len()
                    )));
                }
                Some(
                    b.chunks_exact(4)
                        .map(|c| f32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                        .collect(),
                )
            }
            Some(other) => {
                return Err(Error::metadata(format!(
                    "sp_spectral_subset is a {}, not a byte string",
                    other.type_name()
                )))
            }
        };
        let subset_last_scaled = match p.get("sp_spectral_subset_last_scaled") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                return Err(Error::metadata(format!(
                    "sp_spectral_subset_last_scaled is a {}, not a boolean",
                    other.type_name()
                )))
            }
        };
        Ok(SpectralPacking {
            packing,
            truncation,
            subset_truncation,
            laplacian,
            subset,
            subset_last_scaled,
        })
    }

    /// The parameters the builder writes: simple_packing's, then the
    /// layout's.
    pub fn params(&self) -> Vec<(&'static str, Value)> {
        let mut v = self.packing.params();
        v.push((
            "sp_spectral_truncation",
            Value::Uint(u64::from(self.truncation)),
        ));
        v.push((
            "sp_spectral_subset_truncation",
            Value::Uint(u64::from(self.subset_truncation)),
        ));
        v.push(("sp_spectral_laplacian", Value::Float(self.laplacian)));
        if self.subset_last_scaled {
            v.push(("sp_spectral_subset_last_scaled", Value::Bool(true)));
        }
        if let Some(s) = &self.subset {
            v.push(("sp_spectral_subset", Value::Bytes(subset_bytes(s))));
        }
        v
    }
}

/// Big-endian binary32 bytes of `values` (`sp_spectral_subset`).
pub(crate) fn subset_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_be_bytes()).collect()
}

/// The number at `key`, if given: a float, or an integer that a float64
/// holds exactly.
fn number(p: &Params<'_>, key: &str) -> Result<Option<f64>> {
    match p.get(key) {
        None => Ok(None),
        Some(Value::Float(f)) => Ok(Some(*f)),
        Some(r @ (Value::Uint(_) | Value::Nint(_))) => Ok(Some(
            r.as_f64()
                .filter(|f| f.abs() <= (1u64 << 53) as f64)
                .ok_or_else(|| {
                    Error::metadata(format!("{key} integer is not exactly representable"))
                })?,
        )),
        Some(other) => Err(Error::metadata(format!(
            "{key} is a {}, not a number",
            other.type_name()
        ))),
    }
}

/// The byte shuffle filter with its element size (`spec/pipeline.md` §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shuffle {
    /// `shuffle_element_size`, in bytes.
    pub element_size: usize,
}

impl Shuffle {
    /// Reads and checks `shuffle_element_size`.
    pub fn from_params(p: &Params<'_>) -> Result<Self> {
        let size = p.req_u64("shuffle_element_size")?;
        if size == 0 {
            return Err(Error::metadata("shuffle_element_size must be positive"));
        }
        let element_size = usize::try_from(size)
            .map_err(|_| Error::metadata("shuffle_element_size is too large"))?;
        Ok(Shuffle { element_size })
    }

    /// The parameters the builder writes.
    pub fn params(&self) -> Vec<(&'static str, Value)> {
        vec![(
            "shuffle_element_size",
            Value::Uint(self.element_size as u64),
        )]
    }
}

/// Default zstd level when `zstd_level` is absent; the builder writes it.
pub const ZSTD_DEFAULT_LEVEL: i32 = 3;

/// zstd compression with its level (`spec/pipeline.md` §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zstd {
    /// Compression level (`zstd_level`).
    pub level: i32,
}

impl Zstd {
    /// Reads and checks `zstd_level`.
    pub fn from_params(p: &Params<'_>) -> Result<Self> {
        let level = p.opt_i32("zstd_level")?.unwrap_or(ZSTD_DEFAULT_LEVEL);
        Ok(Zstd { level })
    }

    /// The parameters the builder writes.
    pub fn params(&self) -> Vec<(&'static str, Value)> {
        vec![("zstd_level", Value::from_i64(self.level as i64))]
    }
}

/// The reference's szip defaults: 128 blocks per RSI, 16 samples per block,
/// preprocessing on.
pub(crate) const DEFAULT_RSI: u32 = 128;
/// See [`DEFAULT_RSI`].
pub(crate) const DEFAULT_BLOCK_SIZE: u32 = 16;
/// See [`DEFAULT_RSI`]: libaec's PREPROCESS flag.
pub(crate) const DEFAULT_FLAGS: u32 = 8;

/// szip compression with its stored parameters (`spec/pipeline.md` §4.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Szip {
    /// `szip_rsi`: blocks per reference sample interval.
    pub rsi: u32,
    /// `szip_block_size`: samples per block.
    pub block_size: u32,
    /// `szip_flags` as stored (run-time flags are added from the context).
    pub flags: u32,
    /// `szip_block_offsets`: bit offset of every RSI, when stored.
    pub offsets: Option<Vec<u64>>,
}

impl Default for Szip {
    fn default() -> Self {
        Szip {
            rsi: DEFAULT_RSI,
            block_size: DEFAULT_BLOCK_SIZE,
            flags: DEFAULT_FLAGS,
            offsets: None,
        }
    }
}

impl Szip {
    /// Reads and checks the `szip_*` keys.
    pub fn from_params(p: &Params<'_>) -> Result<Self> {
        let offsets = p.opt_u64_array("szip_block_offsets")?;
        if let Some(o) = &offsets {
            if o.windows(2).any(|w| w[0] >= w[1]) {
                return Err(Error::metadata(
                    "szip_block_offsets must be strictly increasing",
                ));
            }
        }
        Ok(Szip {
            rsi: p.req_u32("szip_rsi")?,
            block_size: p.req_u32("szip_block_size")?,
            flags: p.req_u32("szip_flags")?,
            offsets,
        })
    }

    /// The parameters the builder writes.
    pub fn params(&self) -> Vec<(&'static str, Value)> {
        vec![
            ("szip_rsi", Value::Uint(self.rsi as u64)),
            ("szip_block_size", Value::Uint(self.block_size as u64)),
            ("szip_flags", Value::Uint(self.flags as u64)),
        ]
    }
}

/// The inner coder of blosc2 (`blosc2_codec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Blosc2Codec {
    /// `blosclz`.
    Blosclz,
    /// `lz4` (the default).
    Lz4,
    /// `lz4hc`.
    Lz4hc,
    /// `zlib`.
    Zlib,
    /// `zstd`.
    Zstd,
}

impl Blosc2Codec {
    /// Every inner coder, in wire-name order.
    pub const ALL: [Blosc2Codec; 5] = [
        Blosc2Codec::Blosclz,
        Blosc2Codec::Lz4,
        Blosc2Codec::Lz4hc,
        Blosc2Codec::Zlib,
        Blosc2Codec::Zstd,
    ];

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Blosc2Codec::Blosclz => "blosclz",
            Blosc2Codec::Lz4 => "lz4",
            Blosc2Codec::Lz4hc => "lz4hc",
            Blosc2Codec::Zlib => "zlib",
            Blosc2Codec::Zstd => "zstd",
        }
    }

    /// The coder called `name`.
    pub fn parse(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| {
                Error::metadata(format!(
                    "blosc2_codec {name:?} is not one of blosclz, lz4, lz4hc, zlib, zstd"
                ))
            })
    }
}

/// Default `blosc2_codec`; the builder writes it.
pub(crate) const BLOSC2_DEFAULT_CODEC: Blosc2Codec = Blosc2Codec::Lz4;
/// Default `blosc2_clevel`; the builder writes it.
pub(crate) const BLOSC2_DEFAULT_CLEVEL: i32 = 5;

/// blosc2 compression (`spec/pipeline.md` §4.5). Its type size is not a
/// key: it follows from the stream the stage sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blosc2 {
    /// `blosc2_codec`.
    pub codec: Blosc2Codec,
    /// `blosc2_clevel`, 0..=9.
    pub clevel: i32,
}

impl Default for Blosc2 {
    fn default() -> Self {
        Blosc2 {
            codec: BLOSC2_DEFAULT_CODEC,
            clevel: BLOSC2_DEFAULT_CLEVEL,
        }
    }
}

impl Blosc2 {
    /// Reads and checks `blosc2_codec` and `blosc2_clevel`.
    pub fn from_params(p: &Params<'_>) -> Result<Self> {
        let codec = match p.opt_text("blosc2_codec")? {
            Some(name) => Blosc2Codec::parse(name)?,
            None => BLOSC2_DEFAULT_CODEC,
        };
        let clevel = p.opt_i32("blosc2_clevel")?.unwrap_or(BLOSC2_DEFAULT_CLEVEL);
        if !(0..=9).contains(&clevel) {
            return Err(Error::metadata(format!(
                "blosc2_clevel {clevel} is outside 0..=9"
            )));
        }
        Ok(Blosc2 { codec, clevel })
    }

    /// The parameters the builder writes.
    pub fn params(&self) -> Vec<(&'static str, Value)> {
        vec![
            ("blosc2_clevel", Value::from_i64(self.clevel as i64)),
            ("blosc2_codec", Value::Text(self.codec.name().to_string())),
        ]
    }
}

/// zfp's coding mode with its one parameter (`zfp_mode` and `zfp_rate`,
/// `zfp_precision` or `zfp_tolerance`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum ZfpMode {
    /// `fixed_rate`: `zfp_rate` bits per value; every block of 4 values
    /// takes the same number of bits, so ranges decode block by block.
    FixedRate(f64),
    /// `fixed_precision`: `zfp_precision` bit planes, 1..=64.
    FixedPrecision(u32),
    /// `fixed_accuracy`: absolute error at most `zfp_tolerance`.
    FixedAccuracy(f64),
}

/// zfp compression of float64 values as one 1-D array without a header
/// (`spec/pipeline.md` §4.6).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Zfp {
    /// The mode and its parameter.
    pub mode: ZfpMode,
}

impl Zfp {
    /// Reads and checks `zfp_mode` and the key the mode needs.
    pub fn from_params(p: &Params<'_>) -> Result<Self> {
        let mode = match p.req_text("zfp_mode")? {
            "fixed_rate" => ZfpMode::FixedRate(p.req_positive_f64("zfp_rate")?),
            "fixed_precision" => {
                let bits = p.req_u32("zfp_precision")?;
                if !(1..=64).contains(&bits) {
                    return Err(Error::metadata(format!(
                        "zfp_precision {bits} is outside 1..=64"
                    )));
                }
                ZfpMode::FixedPrecision(bits)
            }
            "fixed_accuracy" => ZfpMode::FixedAccuracy(p.req_positive_f64("zfp_tolerance")?),
            other => {
                return Err(Error::metadata(format!(
                    "zfp_mode {other:?} is not one of fixed_rate, fixed_precision, fixed_accuracy"
                )))
            }
        };
        if let ZfpMode::FixedRate(r) = mode {
            if r > 64.0 {
                return Err(Error::metadata(format!("zfp_rate {r} exceeds 64")));
            }
        }
        Ok(Zfp { mode })
    }

    /// The parameters the builder writes.
    pub fn params(&self) -> Vec<(&'static str, Value)> {
        match self.mode {
            ZfpMode::FixedRate(r) => vec![
                ("zfp_mode", Value::Text("fixed_rate".into())),
                ("zfp_rate", Value::Float(r)),
            ],
            ZfpMode::FixedPrecision(b) => vec![
                ("zfp_mode", Value::Text("fixed_precision".into())),
                ("zfp_precision", Value::Uint(b as u64)),
            ],
            ZfpMode::FixedAccuracy(t) => vec![
                ("zfp_mode", Value::Text("fixed_accuracy".into())),
                ("zfp_tolerance", Value::Float(t)),
            ],
        }
    }
}

/// SZ3's error bound (`sz3_error_bound_mode` with `sz3_error_bound`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Sz3Bound {
    /// `abs`: absolute error at most the bound.
    Abs(f64),
    /// `rel`: error at most the bound times the value range.
    Rel(f64),
    /// `psnr`: peak signal-to-noise ratio at least the bound, in dB.
    Psnr(f64),
}

/// SZ3 compression of float64 values as one 1-D array
/// (`spec/pipeline.md` §4.7).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sz3 {
    /// The error bound.
    pub bound: Sz3Bound,
}

impl Sz3 {
    /// Reads and checks `sz3_error_bound_mode` and `sz3_error_bound`.
    pub fn from_params(p: &Params<'_>) -> Result<Self> {
        let mode = p.req_text("sz3_error_bound_mode")?;
        let v = p.req_positive_f64("sz3_error_bound")?;
        let bound = match mode {
            "abs" => Sz3Bound::Abs(v),
            "rel" => Sz3Bound::Rel(v),
            "psnr" => Sz3Bound::Psnr(v),
            other => {
                return Err(Error::metadata(format!(
                    "sz3_error_bound_mode {other:?} is not one of abs, rel, psnr"
                )))
            }
        };
        Ok(Sz3 { bound })
    }

    /// The parameters the builder writes.
    pub fn params(&self) -> Vec<(&'static str, Value)> {
        let (mode, v) = match self.bound {
            Sz3Bound::Abs(v) => ("abs", v),
            Sz3Bound::Rel(v) => ("rel", v),
            Sz3Bound::Psnr(v) => ("psnr", v),
        };
        vec![
            ("sz3_error_bound", Value::Float(v)),
            ("sz3_error_bound_mode", Value::Text(mode.into())),
        ]
    }
}

/// A stage this build cannot run: a name tgm has no codec for, or keys a
/// builder wrote that the stage refuses. A descriptor naming one stays
/// readable (its metadata can be listed and re-written); running the stage
/// fails with [`UnusableStage::error`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnusableStage {
    name: String,
    kind: StageKind,
    error_kind: ErrorKind,
    detail: String,
}

impl UnusableStage {
    /// The stage `name` of `kind`, failing with `error`.
    pub(crate) fn new(kind: StageKind, name: &str, error: &Error) -> Self {
        UnusableStage {
            name: name.to_string(),
            kind,
            error_kind: error.kind().clone(),
            detail: error.detail().to_string(),
        }
    }

    /// The stage name as written.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Which field names it.
    pub fn kind(&self) -> StageKind {
        self.kind
    }

    /// Why it cannot run.
    pub fn error(&self) -> Error {
        Error::new(self.error_kind.clone(), self.detail.clone())
    }
}

/// The `encoding` stage.
#[derive(Debug, Clone, PartialEq)]
pub enum EncodingSpec {
    /// `none`.
    None,
    /// `simple_packing`.
    SimplePacking(SimplePacking),
    /// `simple_packing` with the spherical-harmonic keys (`sp_spectral_*`,
    /// a tgm extension).
    SpectralPacking(Box<SpectralPacking>),
    /// A stage this build cannot run.
    Unusable(UnusableStage),
}

/// The `filter` stage.
#[derive(Debug, Clone, PartialEq)]
pub enum FilterSpec {
    /// `none`.
    None,
    /// `shuffle`.
    Shuffle(Shuffle),
    /// A stage this build cannot run.
    Unusable(UnusableStage),
}

/// The `compression` stage. Which of these this build can run depends on
/// its cargo features (`zstd`, `lz4`, `szip`, `blosc2`, `zfp`, `sz3`); the specification parses
/// either way.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum CompressionSpec {
    /// `none`.
    #[default]
    None,
    /// `zstd`.
    Zstd(Zstd),
    /// `lz4`, which has no parameters.
    Lz4,
    /// `szip`.
    Szip(Szip),
    /// `blosc2`.
    Blosc2(Blosc2),
    /// `zfp`.
    Zfp(Zfp),
    /// `sz3`.
    Sz3(Sz3),
    /// `rle` over a bitmask object.
    Rle,
    /// `roaring` over a bitmask object.
    Roaring,
    /// A stage this build cannot run.
    Unusable(UnusableStage),
}

impl EncodingSpec {
    fn parse(name: &str, params: &Map) -> Result<Self> {
        Ok(match name {
            "none" => EncodingSpec::None,
            "simple_packing" => {
                let p = Params::new(params, "simple_packing");
                if names_spectral_layout(&p) {
                    EncodingSpec::SpectralPacking(Box::new(SpectralPacking::from_params(&p)?))
                } else {
                    EncodingSpec::SimplePacking(SimplePacking::from_params(&p)?)
                }
            }
            _ => EncodingSpec::Unusable(unknown(StageKind::Encoding, name)),
        })
    }

    /// The wire name.
    pub fn name(&self) -> &str {
        match self {
            EncodingSpec::None => "none",
            EncodingSpec::SimplePacking(_) | EncodingSpec::SpectralPacking(_) => "simple_packing",
            EncodingSpec::Unusable(u) => u.name(),
        }
    }
}

impl FilterSpec {
    fn parse(name: &str, params: &Map) -> Result<Self> {
        Ok(match name {
            "none" => FilterSpec::None,
            "shuffle" => {
                FilterSpec::Shuffle(Shuffle::from_params(&Params::new(params, "shuffle"))?)
            }
            _ => FilterSpec::Unusable(unknown(StageKind::Filter, name)),
        })
    }

    /// The wire name.
    pub fn name(&self) -> &str {
        match self {
            FilterSpec::None => "none",
            FilterSpec::Shuffle(_) => "shuffle",
            FilterSpec::Unusable(u) => u.name(),
        }
    }
}

impl CompressionSpec {
    fn parse(name: &str, params: &Map) -> Result<Self> {
        Ok(match name {
            "none" => CompressionSpec::None,
            "zstd" => CompressionSpec::Zstd(Zstd::from_params(&Params::new(params, "zstd"))?),
            "lz4" => CompressionSpec::Lz4,
            "szip" => CompressionSpec::Szip(Szip::from_params(&Params::new(params, "szip"))?),
            "blosc2" => {
                CompressionSpec::Blosc2(Blosc2::from_params(&Params::new(params, "blosc2"))?)
            }
            "zfp" => CompressionSpec::Zfp(Zfp::from_params(&Params::new(params, "zfp"))?),
            "sz3" => CompressionSpec::Sz3(Sz3::from_params(&Params::new(params, "sz3"))?),
            "rle" => CompressionSpec::Rle,
            "roaring" => CompressionSpec::Roaring,
            _ => CompressionSpec::Unusable(unknown(StageKind::Compression, name)),
        })
    }

    /// The wire name.
    pub fn name(&self) -> &str {
        match self {
            CompressionSpec::None => "none",
            CompressionSpec::Zstd(_) => "zstd",
            CompressionSpec::Lz4 => "lz4",
            CompressionSpec::Szip(_) => "szip",
            CompressionSpec::Blosc2(_) => "blosc2",
            CompressionSpec::Zfp(_) => "zfp",
            CompressionSpec::Sz3(_) => "sz3",
            CompressionSpec::Rle => "rle",
            CompressionSpec::Roaring => "roaring",
            CompressionSpec::Unusable(u) => u.name(),
        }
    }
}

fn unknown(kind: StageKind, name: &str) -> UnusableStage {
    UnusableStage::new(kind, name, &unknown_stage_error(kind, name))
}

/// The pipeline of one object: each stage's typed parameters, checked when
/// the descriptor was built, plus the codec keys exactly as the descriptor
/// holds them (`spec/pipeline.md` §1). Serializes as its stage names and
/// keys; deserializing parses them again.
#[derive(Clone)]
pub struct PipelineSpec {
    encoding: EncodingSpec,
    filter: FilterSpec,
    compression: CompressionSpec,
    params: Map,
}

impl fmt::Debug for PipelineSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PipelineSpec")
            .field("encoding", &self.encoding)
            .field("filter", &self.filter)
            .field("compression", &self.compression)
            .field("params", &self.params)
            .finish()
    }
}

impl PartialEq for PipelineSpec {
    /// Equal when the descriptor would write the same names and keys.
    fn eq(&self, other: &Self) -> bool {
        self.names() == other.names() && self.params == other.params
    }
}

impl Default for PipelineSpec {
    /// The identity pipeline (`none`/`none`/`none`).
    fn default() -> Self {
        PipelineSpec {
            encoding: EncodingSpec::None,
            filter: FilterSpec::None,
            compression: CompressionSpec::None,
            params: Map::new(),
        }
    }
}

impl PipelineSpec {
    /// Parses stage names and codec keys as a descriptor holds them
    /// (`spec/pipeline.md` §1). Every key a named stage owns is checked
    /// here, with an error naming the key. Codec keys no stage owns are
    /// kept verbatim (the encoder refuses them, readers ignore them); a
    /// stage name tgm has no codec for is kept too, and fails when run.
    pub fn from_parts(names: [&str; 3], params: Map) -> Result<Self> {
        Ok(PipelineSpec {
            encoding: EncodingSpec::parse(names[0], &params)?,
            filter: FilterSpec::parse(names[1], &params)?,
            compression: CompressionSpec::parse(names[2], &params)?,
            params,
        })
    }

    /// This pipeline with no filter: the stages that run before the
    /// filter when decoding, and the encoding after it.
    pub(crate) fn without_filter(&self) -> Self {
        PipelineSpec {
            filter: FilterSpec::None,
            ..self.clone()
        }
    }

    /// A pipeline whose stages all fail with `error` when run.
    pub(crate) fn unusable(names: [&str; 3], params: Map, error: Error) -> Self {
        let stage = |kind, name| UnusableStage::new(kind, name, &error);
        PipelineSpec {
            encoding: EncodingSpec::Unusable(stage(StageKind::Encoding, names[0])),
            filter: FilterSpec::Unusable(stage(StageKind::Filter, names[1])),
            compression: CompressionSpec::Unusable(stage(StageKind::Compression, names[2])),
            params,
        }
    }

    /// The encoding stage.
    pub fn encoding(&self) -> &EncodingSpec {
        &self.encoding
    }

    /// The filter stage.
    pub fn filter(&self) -> &FilterSpec {
        &self.filter
    }

    /// The compression stage.
    pub fn compression(&self) -> &CompressionSpec {
        &self.compression
    }

    /// Whether every stage gives back the bytes it was given: no encoding,
    /// at most a shuffle, and a compression that is neither error-bounded
    /// (zfp, sz3) nor configurable with lossy filters (blosc2). Decoding
    /// such a payload returns exactly the encoded values.
    pub fn is_lossless(&self) -> bool {
        matches!(self.encoding, EncodingSpec::None)
            && matches!(self.filter, FilterSpec::None | FilterSpec::Shuffle(_))
            && matches!(
                self.compression,
                CompressionSpec::None
                    | CompressionSpec::Zstd(_)
                    | CompressionSpec::Lz4
                    | CompressionSpec::Szip(_)
                    | CompressionSpec::Rle
                    | CompressionSpec::Roaring
            )
    }

    /// The stage names in encode order, as the descriptor writes them.
    pub fn names(&self) -> [&str; 3] {
        [
            self.encoding.name(),
            self.filter.name(),
            self.compression.name(),
        ]
    }

    /// True when every stage is `none`.
    pub fn is_identity(&self) -> bool {
        matches!(
            (&self.encoding, &self.filter, &self.compression),
            (EncodingSpec::None, FilterSpec::None, CompressionSpec::None)
        )
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

    /// This pipeline with `derived` (keys an encode run computed from the
    /// data) written over its keys, parsed again.
    pub(crate) fn with_derived(
        &self,
        derived: impl IntoIterator<Item = (&'static str, Value)>,
    ) -> Result<Self> {
        let mut params = self.params.clone();
        for (k, v) in derived {
            params.insert(k.to_string(), v);
        }
        PipelineSpec::from_parts(self.names(), params)
    }
}

/// The serialized form: names and keys, as the descriptor writes them.
#[derive(Serialize, Deserialize)]
struct Wire {
    encoding: String,
    filter: String,
    compression: String,
    params: Map,
}

impl Serialize for PipelineSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let [e, f, c] = self.names();
        Wire {
            encoding: e.to_string(),
            filter: f.to_string(),
            compression: c.to_string(),
            params: self.params.clone(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for PipelineSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let w = Wire::deserialize(d)?;
        let names = [w.encoding.as_str(), &w.filter, &w.compression];
        PipelineSpec::from_parts(names, w.params).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_typed_stages_and_keeps_keys_verbatim() {
        let mut params = Map::new();
        params.insert("sp_bits_per_value".into(), Value::Uint(12));
        params.insert("szip_rsi".into(), Value::Uint(32));
        params.insert("szip_block_size".into(), Value::Uint(8));
        params.insert("szip_flags".into(), Value::Uint(8));
        params.insert("zstd_custom".into(), Value::Uint(1));
        let p =
            PipelineSpec::from_parts(["simple_packing", "none", "szip"], params.clone()).unwrap();
        assert!(matches!(p.encoding(), EncodingSpec::SimplePacking(s) if s.bits_per_value == 12));
        assert!(matches!(p.compression(), CompressionSpec::Szip(s) if s.rsi == 32));
        assert_eq!(p.params(), &params);
        assert_eq!(p.names(), ["simple_packing", "none", "szip"]);
    }

    #[test]
    fn bad_keys_fail_and_unknown_names_are_kept() {
        let mut params = Map::new();
        params.insert("sp_bits_per_value".into(), Value::Uint(65));
        let e = PipelineSpec::from_parts(["simple_packing", "none", "none"], params).unwrap_err();
        assert!(e.detail().contains("exceeds 64"), "{e}");
        let p = PipelineSpec::from_parts(["none", "bitshuffle", "sz4"], Map::new()).unwrap();
        let FilterSpec::Unusable(u) = p.filter() else {
            panic!("{p:?}")
        };
        assert!(u.error().detail().contains("unknown filter"));
        let CompressionSpec::Unusable(u) = p.compression() else {
            panic!("{p:?}")
        };
        assert!(u.error().detail().contains("unknown compression"));
        assert_eq!(p.names(), ["none", "bitshuffle", "sz4"]);
    }

    fn parse_compression(name: &str, keys: &[(&str, Value)]) -> Result<PipelineSpec> {
        let params = keys
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        PipelineSpec::from_parts(["none", "none", name], params)
    }

    #[test]
    fn blosc2_zfp_sz3_keys_parse_with_defaults_and_bad_keys_are_named() {
        let p = parse_compression("blosc2", &[("blosc2_extra", Value::Uint(1))]).unwrap();
        assert_eq!(p.compression(), &CompressionSpec::Blosc2(Blosc2::default()));
        assert_eq!(p.param("blosc2_extra"), Some(&Value::Uint(1)));
        let text = |s: &str| Value::Text(s.into());
        let p = parse_compression(
            "blosc2",
            &[
                ("blosc2_codec", text("zstd")),
                ("blosc2_clevel", Value::Uint(9)),
            ],
        )
        .unwrap();
        let want = Blosc2 {
            codec: Blosc2Codec::Zstd,
            clevel: 9,
        };
        assert_eq!(p.compression(), &CompressionSpec::Blosc2(want));
        for (keys, named) in [
            (vec![("blosc2_codec", text("snappy"))], "blosc2_codec"),
            (vec![("blosc2_clevel", Value::Uint(10))], "blosc2_clevel"),
            (vec![("blosc2_codec", Value::Uint(1))], "blosc2_codec"),
        ] {
            let e = parse_compression("blosc2", &keys).unwrap_err();
            assert!(e.detail().contains(named), "{e}");
        }
        let p = parse_compression(
            "zfp",
            &[
                ("zfp_mode", text("fixed_rate")),
                ("zfp_rate", Value::Uint(16)),
            ],
        )
        .unwrap();
        assert_eq!(
            p.compression(),
            &CompressionSpec::Zfp(Zfp {
                mode: ZfpMode::FixedRate(16.0)
            })
        );
        for (keys, named) in [
            (vec![], "zfp_mode"),
            (vec![("zfp_mode", text("fixed_rate"))], "zfp_rate"),
            (vec![("zfp_mode", text("reversible"))], "zfp_mode"),
            (
                vec![
                    ("zfp_mode", text("fixed_precision")),
                    ("zfp_precision", Value::Uint(0)),
                ],
                "zfp_precision",
            ),
            (
                vec![
                    ("zfp_mode", text("fixed_accuracy")),
                    ("zfp_tolerance", Value::Float(-1.0)),
                ],
                "zfp_tolerance",
            ),
        ] {
            let e = parse_compression("zfp", &keys).unwrap_err();
            assert!(e.detail().contains(named), "{e}");
        }
        let p = parse_compression(
            "sz3",
            &[
                ("sz3_error_bound_mode", text("psnr")),
                ("sz3_error_bound", Value::Float(60.0)),
            ],
        )
        .unwrap();
        let sz3 = Sz3 {
            bound: Sz3Bound::Psnr(60.0),
        };
        assert_eq!(p.compression(), &CompressionSpec::Sz3(sz3));
        let back = parse_compression("sz3", &sz3.params()).unwrap();
        assert_eq!(back.compression(), p.compression());
        let e = parse_compression("sz3", &[("sz3_error_bound_mode", text("l2"))]).unwrap_err();
        assert!(e.detail().contains("sz3_error_bound"), "{e}");
    }

    #[test]
    fn serde_round_trip_parses_again() {
        let mut params = Map::new();
        params.insert("zstd_level".into(), Value::Uint(7));
        let p = PipelineSpec::from_parts(["none", "none", "zstd"], params).unwrap();
        let json = serde_json::to_string(&p).unwrap();
        let back: PipelineSpec = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
        assert_eq!(
            back.compression(),
            &CompressionSpec::Zstd(Zstd { level: 7 })
        );
        let bad = json.replace("\"zstd_level\":7", "\"zstd_level\":\"x\"");
        assert!(serde_json::from_str::<PipelineSpec>(&bad).is_err());
    }
}
