//! GRIB fields to Tensogram objects and messages.
//!
//! Each field becomes one float64 object whose `base[i]` entry carries
//! `mars`, `geography`, `grib` (and `grib_keys` with `--all-keys`). Missing
//! points (GRIB bitmaps) are NaN, stored with the NaN mask
//! (`spec/pipeline.md` §3). By default every field is stored bit-identical
//! to ecCodes' values: simple-packed, CCSDS, and complex, second-order,
//! JPEG and PNG fields without decimal scaling in their own codes
//! (simple_packing, `spec/pipeline.md` §2, with the source's reference value
//! and scales, in the smallest whole-byte width holding its codes, then
//! szip, `spec/szip.md`) when tgm decodes those to exactly ecCodes'
//! values, every other field (decimal-scaled grouped codes, spectral,
//! bi-Fourier) as float64 behind a byte shuffle and zstd
//! (`spec/convert.md` "Stored exactly"); [`EncodingChoice::Codes`] stores
//! decimal-scaled and spectral fields in their codes too, through
//! tgm extensions (`spec/pipeline.md` §2.5, §2.6).

use std::io::Write;
use std::path::PathBuf;

use tgm::cbor::Value;
use tgm::metadata::BaseLayout;
use tgm::pipeline::PipelineOptions;
use tgm::{ByteOrder, Dtype, EncodeOptions, GlobalMetadata, Map, ObjectDescriptor};

use super::budget::DecodeBudget;
use super::grib::{for_each_field, GribField, SourceCcsds, SourcePacking};
use super::GribError;
use tgm::pipeline::{StageError, StageOption};

/// How values are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodingChoice {
    /// Bit-identical to ecCodes' values (see the module docs).
    Source,
    /// As [`EncodingChoice::Source`], and a decimal-scaled field whose
    /// codes do not give ecCodes' values in `R + q·2^E·10^−D` stored as its
    /// own codes evaluated in GRIB's order (`sp_grib_reference_value`, a tgm
    /// extension: `spec/pipeline.md` §2.5) instead of float64. tgm decodes
    /// them bit for bit as ecCodes does; the reference reads values that
    /// may differ from ecCodes' in the last bit. GRIB1 and GRIB2
    /// `spectral_complex` fields are stored as their codes and unpacked subset
    /// (`sp_spectral_*`, §2.6): tgm decodes ecCodes' values, the
    /// reference the codes without the Laplacian scaling.
    Codes,
    /// Raw float64.
    None,
    /// simple_packing at `bits`, parameters computed from the data.
    SimplePacking {
        /// Bits per value (0..=64).
        bits: u32,
    },
}

/// The compression stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressionChoice {
    /// szip after whole-byte simple_packing, zstd otherwise, none for
    /// constant fields.
    Auto,
    /// No compression.
    None,
    /// szip (CCSDS 121.0-B-3).
    Szip,
    /// zstd at an optional level.
    Zstd(Option<i64>),
    /// lz4.
    Lz4,
}

/// The pipeline applied to every field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipelineChoice {
    /// Encoding stage.
    pub encoding: EncodingChoice,
    /// Byte shuffle before compression.
    pub shuffle: bool,
    /// Compression stage.
    pub compression: CompressionChoice,
}

impl Default for PipelineChoice {
    fn default() -> Self {
        PipelineChoice {
            encoding: EncodingChoice::Source,
            shuffle: false,
            compression: CompressionChoice::Auto,
        }
    }
}

impl PipelineChoice {
    /// The choice named by a door's options (`tgm convert-grib`'s flags,
    /// Python's `convert_grib` keywords), checked once for both: encoding
    /// `source` (default), `codes`, `none` or `simple_packing` (at `bits`,
    /// default 16, at most 64); filter `none` or `shuffle`; compression
    /// `auto` (default), `none`, `szip`, `zstd` (at `level`) or `lz4`.
    /// Bits without simple_packing, and a level without zstd, are refused
    /// (`spec/pipeline.md` §10).
    pub fn from_names(
        encoding: Option<&str>,
        bits: Option<u64>,
        filter: Option<&str>,
        compression: Option<&str>,
        level: Option<i64>,
    ) -> Result<Self, StageError> {
        use StageOption as O;
        let encoding = StageError::check_name(
            O::Encoding,
            Some(encoding.unwrap_or("source")),
            &["source", "codes", "none", "simple_packing"],
        )?;
        let filter = StageError::check_name(O::Filter, filter, &["none", "shuffle"])?;
        let compression = StageError::check_name(
            O::Compression,
            Some(compression.unwrap_or("auto")),
            &["auto", "none", "szip", "zstd", "lz4"],
        )?;
        if bits.is_some() && encoding != "simple_packing" {
            return Err(StageError::new()
                .option(O::Bits)
                .text(" has no effect without ")
                .option_is(O::Encoding, "simple_packing"));
        }
        let bits = bits.unwrap_or(16);
        if bits > 64 {
            return Err(StageError::new()
                .option_is(O::Bits, bits)
                .text(" exceeds 64"));
        }
        if let Some(l) = level {
            if compression != "zstd" {
                return Err(StageError::new().option(O::Level).text(format!(
                    " has no effect with compression {compression:?} (only zstd has levels)"
                )));
            }
            StageError::check_zstd_level(l)?;
        }
        Ok(PipelineChoice {
            encoding: match encoding {
                "codes" => EncodingChoice::Codes,
                "none" => EncodingChoice::None,
                "simple_packing" => EncodingChoice::SimplePacking { bits: bits as u32 },
                _ => EncodingChoice::Source,
            },
            shuffle: filter == "shuffle",
            compression: match compression {
                "none" => CompressionChoice::None,
                "szip" => CompressionChoice::Szip,
                "zstd" => CompressionChoice::Zstd(level),
                "lz4" => CompressionChoice::Lz4,
                _ => CompressionChoice::Auto,
            },
        })
    }
}

/// Options of a GRIB → Tensogram conversion.
#[derive(Debug, Clone)]
pub struct ConvertOptions {
    /// One message per GRIB message instead of one per input file.
    pub split: bool,
    /// Copy every GRIB key under `base[i].grib_keys`.
    pub all_keys: bool,
    /// The pipeline of every object.
    pub pipeline: PipelineChoice,
    /// Write no frame hashes.
    pub no_hash: bool,
    /// The decoded-bytes budget of the conversion; `None` for
    /// [`DecodeBudget::for_input`] of the inputs' total size.
    pub max_decoded_bytes: Option<u64>,
    /// How the fields' entries are written: by default the keys every field
    /// of a message shares (geography, centre, class…) once
    /// (`spec/format.md` §7.3); [`BaseLayout::PerObject`] writes every
    /// entry whole, as the reference does.
    pub layout: BaseLayout,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            split: false,
            all_keys: false,
            pipeline: PipelineChoice::default(),
            no_hash: false,
            max_decoded_bytes: None,
            layout: BaseLayout::SharedOnce,
        }
    }
}

/// One field ready for `tgm::encode`.
#[derive(Debug, Clone)]
pub struct GribObject {
    /// The descriptor, with its pipeline parameters.
    pub descriptor: ObjectDescriptor,
    /// The float64 values (NaN where missing); [`GribObject::data`] is
    /// their native-endian bytes.
    pub values: Vec<f64>,
    /// The object's `base[i]` entry.
    pub metadata: Map,
    /// The largest difference between ecCodes' values and what tgm decodes
    /// from this object (0 when stored exactly).
    pub max_abs_error: f64,
}

impl GribObject {
    /// The native-endian bytes of the values, borrowed (no copy).
    pub fn data(&self) -> &[u8] {
        bytemuck::cast_slice(&self.values)
    }
}

/// The key of `base[i].grib` holding the source's header
/// ([`GribField::template`]).
pub const TEMPLATE_KEY: &str = "template";

/// The key of `base[i].grib` holding where the octets of `pl` were taken
/// out of the template (`[offset, octets]`, [`super::grib::PlPlace`]).
pub const TEMPLATE_PL_KEY: &str = "template_pl";

/// szip parameters of converted fields that were not `grid_ccsds`
/// (ecCodes' defaults for `grid_ccsds`).
const SZIP_DEFAULT: SourceCcsds = SourceCcsds {
    block_size: 32,
    rsi: 128,
    flags: tgm::szip::flags::PREPROCESS,
};

/// The source's `ccsdsFlags` kept in `szip_flags`: the container flags
/// (MSB, 3-byte) are set by the szip stage from the packed width, SIGNED
/// never applies to packed codes, and PAD_RSI is not written by tgm's coder
/// (`spec/convert.md` "Stored exactly").
const KEPT_CCSDS_FLAGS: u32 = tgm::szip::flags::PREPROCESS | tgm::szip::flags::NOT_ENFORCE;

/// float64 behind a byte shuffle and zstd: exact for every field.
const LOSSLESS: PipelineChoice = PipelineChoice {
    encoding: EncodingChoice::None,
    shuffle: true,
    compression: CompressionChoice::Zstd(None),
};

/// The descriptor, bytes and metadata of one field. With
/// [`EncodingChoice::Source`] the field is stored bit-identical to ecCodes'
/// values: in the source's codes when tgm decodes them to exactly those
/// values (checked here, field by field), else as [`LOSSLESS`] float64.
/// Other choices record the largest error in [`GribObject::max_abs_error`].
/// The field's values are copied; [`field_into_object`] moves them.
pub fn field_to_object(
    field: &GribField,
    choice: &PipelineChoice,
) -> Result<GribObject, GribError> {
    let (descriptor, metadata) = object_head(field, choice)?;
    let o = GribObject {
        descriptor,
        values: field.values.clone(),
        metadata,
        max_abs_error: 0.0,
    };
    checked(o, field, choice)
}

/// [`field_to_object`] taking the field, whose values become the object's
/// without a copy.
pub fn field_into_object(
    mut field: GribField,
    choice: &PipelineChoice,
) -> Result<GribObject, GribError> {
    let (descriptor, metadata) = object_head(&field, choice)?;
    let o = GribObject {
        descriptor,
        values: std::mem::take(&mut field.values),
        metadata,
        max_abs_error: 0.0,
    };
    checked(o, &field, choice)
}

/// `o` with its error measured, or with [`EncodingChoice::Source`] and
/// codes that do not decode exactly, rebuilt as [`LOSSLESS`] float64.
fn checked(
    mut o: GribObject,
    field: &GribField,
    choice: &PipelineChoice,
) -> Result<GribObject, GribError> {
    if !matches!(
        choice.encoding,
        EncodingChoice::Source | EncodingChoice::Codes
    ) {
        o.max_abs_error = max_abs_error(&o)?;
        return Ok(o);
    }
    // Spherical harmonics have codes only in GRIB's order (§2.6).
    let spectral = field.packing.is_some_and(|p| p.spectral.is_some());
    let decimal = field.packing.is_some_and(|p| p.decimal_scale_factor != 0);
    // The source's own codes first, when §2.2's order gives its values.
    if decimal && !spectral {
        let (descriptor, _) = object_head_in(field, choice, Order::TensogramAtSourceScales)?;
        let finest = std::mem::replace(&mut o.descriptor, descriptor);
        if matches!(max_abs_error(&o), Ok(e) if e == 0.0) {
            return smallest_layout(o, field, choice);
        }
        o.descriptor = finest;
    }
    if field.packing.is_some() && !spectral && max_abs_error(&o)? == 0.0 {
        return smallest_layout(o, field, choice);
    }
    // Codes asked for, and §2.2's order is not exact: GRIB's order. A
    // spectral field whose values the layout cannot hold (an unpacked
    // coefficient that is not binary32) fails to encode: float64.
    if choice.encoding == EncodingChoice::Codes && (decimal || spectral) {
        let (descriptor, _) = object_head_in(field, choice, Order::Grib)?;
        let descriptor = std::mem::replace(&mut o.descriptor, descriptor);
        if matches!(max_abs_error(&o), Ok(e) if e == 0.0) {
            return Ok(o);
        }
        o.descriptor = descriptor;
    }
    // LOSSLESS reads no value: the field's values may already be moved.
    let (descriptor, _) = object_head(field, &LOSSLESS)?;
    o.descriptor = descriptor;
    Ok(o)
}

/// The most bytes a field's codes may take for [`smallest_layout`] to
/// weigh storing them without compression.
const SMALL_CODES: u64 = 64 << 10;

/// `o`, exact simple_packing codes in whole-byte containers compressed
/// with szip by default, or, when its codes take at most [`SMALL_CODES`]
/// bytes and that frame is smaller, the same codes uncompressed: at the
/// source's `bitsPerValue` when that holds them exactly, else in the
/// containers (`spec/convert.md` "Stored exactly"). A field of a few
/// hundred points gains little from szip, whose keys the descriptor then
/// carries, and whose block padding and RSI references can outweigh it.
fn smallest_layout(
    o: GribObject,
    field: &GribField,
    choice: &PipelineChoice,
) -> Result<GribObject, GribError> {
    let Some(source) = field.packing else {
        return Ok(o);
    };
    let container = o
        .descriptor
        .pipeline()
        .params()
        .get("sp_bits_per_value")
        .and_then(Value::as_u64);
    let (Some(container), CompressionChoice::Auto, false, "szip") = (
        container,
        choice.compression,
        choice.shuffle,
        o.descriptor.compression(),
    ) else {
        return Ok(o);
    };
    let points = o.values.len() as u64;
    if points.saturating_mul(container) / 8 > SMALL_CODES {
        return Ok(o);
    }
    let szip = o.descriptor.clone();
    let szip_size = frame_size(&o)?;
    let narrow = u64::from(source.bits_per_value);
    let mut o = o;
    // The container width holds the codes (szip is lossless); a narrower
    // one is checked.
    let widths = if 0 < narrow && narrow < container {
        vec![narrow, container]
    } else {
        vec![container]
    };
    for bits in widths {
        let mut params = szip.pipeline().params().clone();
        params.retain(|k, _| k.starts_with("sp_"));
        params.insert("sp_bits_per_value".into(), Value::Uint(bits));
        o.descriptor = szip
            .clone()
            .with_raw_pipeline(szip.encoding(), "none", "none", params)?;
        if bits != container && !matches!(max_abs_error(&o), Ok(e) if e == 0.0) {
            continue;
        }
        if frame_size(&o)? < szip_size {
            return Ok(o);
        }
        break;
    }
    o.descriptor = szip;
    Ok(o)
}

/// The bytes `o` takes as a message of its own (its frame and the fixed
/// parts, which are the same whatever the pipeline), metadata aside.
fn frame_size(o: &GribObject) -> Result<u64, GribError> {
    let meta = GlobalMetadata::with_base(vec![Map::new()]);
    Ok(tgm::encode_to(
        &meta,
        &[(&o.descriptor, o.data())],
        &encode_options(true),
        &mut std::io::sink(),
    )?)
}

/// Elements decoded at a time when measuring an encoding's error.
const ERROR_STEP: u64 = 1 << 20;

/// The largest difference between the values tgm decodes from `o`'s
/// encoding and `o.values`; infinite when a present point comes back
/// missing or a value differs in a way subtraction cannot measure (±0,
/// infinities). Only the encoding stage is run (the filter and compression
/// stages are lossless), into no output, and its codes are decoded
/// [`ERROR_STEP`] elements at a time, so memory holds the codes and one
/// step besides the values. Missing points (NaN) are restored by the NaN
/// mask, exactly, and skipped.
fn max_abs_error(o: &GribObject) -> Result<f64, GribError> {
    if o.descriptor.encoding() == "none" {
        return Ok(0.0);
    }
    // The encoding stage's own keys (simple_packing's `sp_*`) only: the
    // encoder refuses keys of stages that are not there.
    let mut params = Map::new();
    for (k, v) in o.descriptor.pipeline().params() {
        if k.starts_with("sp_") {
            params.insert(k.clone(), v.clone());
        }
    }
    let stage =
        o.descriptor
            .clone()
            .with_raw_pipeline(o.descriptor.encoding(), "none", "none", params)?;
    let meta = GlobalMetadata::with_base(vec![Map::new()]);
    let mut popts = PipelineOptions::default();
    popts.allow_nan = true;
    let opts = EncodeOptions::new().hashing(false).pipeline(popts);
    let mut worst = 0.0f64;
    let mut measure = |_: usize, d: &ObjectDescriptor, codes: Option<&[u8]>| {
        // A simple_packing payload is built in memory, never streamed.
        let codes = codes.ok_or_else(|| {
            tgm::Error::invalid_argument("simple_packing codes were streamed, not handed over")
        })?;
        worst = codes_error(d, codes, &o.values)?;
        Ok(())
    };
    tgm::encode_to_inspecting(
        &meta,
        &[(&stage, o.data())],
        &opts,
        &mut std::io::sink(),
        &mut measure,
    )?;
    Ok(worst)
}

/// [`max_abs_error`] of the codes `codes` of descriptor `d` (its masks
/// aside) against `values`.
fn codes_error(d: &ObjectDescriptor, codes: &[u8], values: &[f64]) -> tgm::Result<f64> {
    let mut d = d.clone();
    d.masks = None;
    let mut popts = tgm::pipeline::PipelineDecodeOptions::default();
    popts.restore_non_finite = false;
    let limits = tgm::Limits::default();
    let mut worst = 0.0f64;
    let mut first = 0u64;
    for want in values.chunks(ERROR_STEP as usize) {
        let count = want.len() as u64;
        let got = tgm::pipeline::decode_range(&d, codes, 0, &[(first, count)], &popts, &limits)?
            .pop()
            .unwrap_or_default();
        if got.len() != want.len() * 8 {
            return Ok(f64::INFINITY);
        }
        let got = got
            .chunks_exact(8)
            .map(|c| f64::from_ne_bytes(c.try_into().unwrap_or_default()));
        for (b, &v) in got.zip(want) {
            if v.is_nan() || b.to_bits() == v.to_bits() {
                continue;
            }
            let e = (b - v).abs();
            worst = worst.max(if e.is_nan() || e == 0.0 {
                f64::INFINITY
            } else {
                e
            });
        }
        first += count;
    }
    Ok(worst)
}

/// The descriptor and metadata of one field in `choice`'s pipeline.
fn object_head(
    field: &GribField,
    choice: &PipelineChoice,
) -> Result<(ObjectDescriptor, Map), GribError> {
    object_head_in(field, choice, Order::Tensogram)
}

/// How a decimal-scaled field's codes are evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    /// `R + q·2^E·10^−D` (`spec/pipeline.md` §2.2), which every reader
    /// evaluates, at the finest quantum the codes' whole bytes hold.
    Tensogram,
    /// §2.2's order at the source's own scales: `R = R_grib·10^−D`, its
    /// `E` and `D`, so that the codes are the source's (which compress as
    /// the source's do; a finer quantum gives codes with low bits that are
    /// always zero).
    TensogramAtSourceScales,
    /// GRIB's `(R + q·2^E)·10^−D` (§2.5, a tgm extension).
    Grib,
}

/// [`object_head`] with decimal-scaled source codes evaluated in `order`.
fn object_head_in(
    field: &GribField,
    choice: &PipelineChoice,
    order: Order,
) -> Result<(ObjectDescriptor, Map), GribError> {
    let mut d = ObjectDescriptor::new(Dtype::Float64, field.shape.clone());
    let width = apply_encoding(&mut d, field, choice.encoding, order)?;
    let encoding = d.encoding().to_string();
    let mut params = d.pipeline().params().clone();
    let mut filter = "none";
    if choice.shuffle {
        filter = "shuffle";
        params.insert("shuffle_element_size".into(), Value::Uint(width.max(1)));
    }
    let compression = match choice.compression {
        CompressionChoice::Auto => {
            let packed_bits = params.get("sp_bits_per_value").and_then(Value::as_u64);
            // Spherical-harmonic codes are near white noise, which szip's
            // neighbour prediction does not help: zstd's entropy coder
            // takes them smaller (sh_ml: 6,854 B against 7,495).
            let spectral = params.contains_key("sp_spectral_truncation");
            match packed_bits {
                Some(0) => CompressionChoice::None,
                Some(_) if spectral => CompressionChoice::Zstd(None),
                Some(8 | 16 | 24 | 32) if !choice.shuffle => CompressionChoice::Szip,
                _ => CompressionChoice::Zstd(None),
            }
        }
        c => c,
    };
    let compression = match compression {
        CompressionChoice::Auto | CompressionChoice::None => "none",
        CompressionChoice::Szip => {
            let source = field.packing.and_then(|p| p.ccsds);
            let c = match (choice.encoding, source) {
                (EncodingChoice::Source | EncodingChoice::Codes, Some(c)) => SourceCcsds {
                    flags: c.flags & KEPT_CCSDS_FLAGS,
                    ..c
                },
                _ => SZIP_DEFAULT,
            };
            params.insert("szip_rsi".into(), Value::Uint(c.rsi.into()));
            params.insert("szip_block_size".into(), Value::Uint(c.block_size.into()));
            params.insert("szip_flags".into(), Value::Uint(c.flags.into()));
            "szip"
        }
        CompressionChoice::Zstd(level) => {
            if let Some(l) = level {
                params.insert("zstd_level".into(), Value::from_i64(l));
            }
            "zstd"
        }
        CompressionChoice::Lz4 => "lz4",
    };
    let d = d.with_raw_pipeline(&encoding, filter, compression, params)?;
    let mut metadata = Map::new();
    metadata.insert("mars".into(), Value::from(field.mars.clone()));
    metadata.insert("geography".into(), Value::from(field.geography.clone()));
    let mut grib = field.grib.clone();
    grib.insert(TEMPLATE_KEY.into(), Value::Bytes(field.template.clone()));
    if let Some(place) = field.template_pl {
        grib.insert(TEMPLATE_PL_KEY.into(), place.to_value());
    }
    if let Some(run) = field.template_zeros {
        grib.insert(super::grib_zeros::TEMPLATE_ZEROS_KEY.into(), run.to_value());
    }
    metadata.insert("grib".into(), Value::from(grib));
    if let Some(all) = &field.all_keys {
        metadata.insert("grib_keys".into(), Value::from(all.clone()));
    }
    Ok((d, metadata))
}

/// Sets the encoding stage; returns the width in bytes of the stage's elements.
fn apply_encoding(
    d: &mut ObjectDescriptor,
    field: &GribField,
    choice: EncodingChoice,
    order: Order,
) -> Result<u64, GribError> {
    let bits = match choice {
        EncodingChoice::None => return Ok(8),
        EncodingChoice::SimplePacking { bits } => {
            if bits > 64 {
                return Err(GribError::Invalid(format!("--bits {bits} exceeds 64")));
            }
            (bits, 0)
        }
        EncodingChoice::Source | EncodingChoice::Codes => {
            let first = field.values.iter().copied().find(|v| !v.is_nan());
            match (field.packing, first) {
                // Spherical harmonics: their codes in GRIB's order with the
                // layout's keys (§2.6), else float64.
                (Some(p), _) if p.spectral.is_some() => {
                    if order != Order::Grib || p.bits_per_value == 0 || p.bits_per_value > 32 {
                        return Ok(8);
                    }
                    let w = whole_bytes(p.bits_per_value);
                    set_spectral_packing(d, w, &p)?;
                    return Ok(u64::from(w / 8));
                }
                // Constant (or entirely missing) field: zero bits, R = the value.
                (Some(p), first) if p.bits_per_value == 0 => {
                    set_packing(d, 0, first.unwrap_or(0.0), 0, 0);
                    return Ok(0);
                }
                // value = R + q·2^E exactly as ecCodes evaluates it, so the
                // field is stored without a second quantisation.
                (Some(p), _) if p.decimal_scale_factor == 0 && p.bits_per_value <= 64 => {
                    let w = whole_bytes(p.bits_per_value);
                    set_packing(d, w, p.reference_value, p.binary_scale_factor, 0);
                    return Ok(u64::from(w / 8));
                }
                (Some(p), _)
                    if order == Order::TensogramAtSourceScales && p.bits_per_value <= 64 =>
                {
                    let w = whole_bytes(p.bits_per_value);
                    let reference = p.reference_value * 10f64.powi(-p.decimal_scale_factor);
                    set_packing(
                        d,
                        w,
                        reference,
                        p.binary_scale_factor,
                        p.decimal_scale_factor,
                    );
                    return Ok(u64::from(w / 8));
                }
                // Decimal scaling in GRIB's order: the field's own codes and
                // parameters.
                (Some(p), _) if order == Order::Grib && p.bits_per_value <= 64 => {
                    let w = whole_bytes(p.bits_per_value);
                    set_grib_order_packing(d, w, &p);
                    return Ok(u64::from(w / 8));
                }
                // Decimal scaling: the same 10^-D quantum (or a finer one).
                (Some(p), _) => (whole_bytes(p.bits_per_value), p.decimal_scale_factor),
                (None, _) => return Ok(8),
            }
        }
    };
    let (bits, decimal) = bits;
    // Parameters from the present values only: missing points are NaN.
    let present: std::borrow::Cow<'_, [u8]> = if field.values.iter().any(|v| v.is_nan()) {
        let present = field.values.iter().filter(|v| !v.is_nan());
        present.flat_map(|v| v.to_ne_bytes()).collect()
    } else {
        bytemuck::cast_slice(&field.values).into()
    };
    let p = tgm::pipeline::compute_packing_params(&present, ByteOrder::native(), bits, decimal)?;
    set_packing(d, bits, p.reference_value, p.binary_scale_factor, decimal);
    Ok(u64::from(bits.div_ceil(8)))
}

/// `bits` rounded up to a whole number of bytes (at most 64).
fn whole_bytes(bits: u32) -> u32 {
    (bits.div_ceil(8) * 8).min(64)
}

fn set_packing(d: &mut ObjectDescriptor, bits: u32, reference: f64, binary: i32, decimal: i32) {
    let p = tgm::pipeline::PackingParams {
        reference_value: reference,
        binary_scale_factor: binary,
        decimal_scale_factor: decimal,
        bits_per_value: bits,
        grib_reference_value: None,
    };
    d.set_pipeline(&tgm::PipelineBuilder::new().simple_packing_params(p.into()));
}

/// simple_packing at `bits` with the field's own reference value, scale
/// factors and GRIB's evaluation order (`spec/pipeline.md` §2.5). Other
/// readers get `sp_reference_value = R·10^−D`, the reference value in the
/// values' units.
fn set_grib_order_packing(d: &mut ObjectDescriptor, bits: u32, p: &SourcePacking) {
    let decimal = p.decimal_scale_factor;
    let p = tgm::pipeline::PackingParams {
        reference_value: p.reference_value * 10f64.powi(-decimal),
        binary_scale_factor: p.binary_scale_factor,
        decimal_scale_factor: decimal,
        bits_per_value: bits,
        grib_reference_value: Some(p.reference_value),
    };
    d.set_pipeline(&tgm::PipelineBuilder::new().simple_packing_params(p.into()));
}

/// [`set_grib_order_packing`] with the keys of the spherical-harmonic
/// layout (`spec/pipeline.md` §2.6) from the field's
/// [`super::grib::SourceSpectral`]; the unpacked subset is derived from the
/// values when the object is encoded.
fn set_spectral_packing(
    d: &mut ObjectDescriptor,
    bits: u32,
    p: &SourcePacking,
) -> Result<(), GribError> {
    let Some(s) = p.spectral else {
        return Ok(());
    };
    set_grib_order_packing(d, bits, p);
    let mut params = d.pipeline().params().clone();
    params.insert(
        "sp_spectral_truncation".into(),
        Value::Uint(s.truncation.into()),
    );
    params.insert(
        "sp_spectral_subset_truncation".into(),
        Value::Uint(s.subset_truncation.into()),
    );
    params.insert("sp_spectral_laplacian".into(), Value::Float(s.laplacian));
    if s.subset_last_scaled {
        params.insert("sp_spectral_subset_last_scaled".into(), Value::Bool(true));
    }
    *d = d
        .clone()
        .with_raw_pipeline("simple_packing", "none", "none", params)?;
    Ok(())
}

/// Reads every input and groups the objects into messages: one per input
/// file, or one per GRIB message with `split`.
pub fn convert_files(
    inputs: &[PathBuf],
    opts: &ConvertOptions,
) -> Result<Vec<Vec<GribObject>>, GribError> {
    let mut messages = Vec::new();
    each_message(inputs, opts, |objects| {
        messages.push(objects);
        Ok(())
    })?;
    Ok(messages)
}

/// What [`convert_files_to`] wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Written {
    /// Messages written.
    pub messages: usize,
    /// Objects written.
    pub objects: usize,
    /// Bytes written.
    pub bytes: u64,
    /// The largest [`GribObject::max_abs_error`] of the objects.
    pub max_abs_error: f64,
}

/// [`convert_files`] with each message encoded straight into `out` as soon
/// as its fields are read (the bytes of [`encode_message`], in the same
/// order), so that memory holds one message's fields at a time: with
/// `split`, one field. On error part of the output may have been written.
pub fn convert_files_to(
    inputs: &[PathBuf],
    opts: &ConvertOptions,
    out: &mut dyn Write,
) -> Result<Written, GribError> {
    let mut w = Written::default();
    each_message(inputs, opts, |objects| {
        w.bytes += encode_message_to(&objects, opts, out)?;
        w.messages += 1;
        w.objects += objects.len();
        let worst = objects.iter().map(|o| o.max_abs_error);
        w.max_abs_error = worst.fold(w.max_abs_error, f64::max);
        Ok(())
    })?;
    Ok(w)
}

/// Reads the inputs field by field and hands `each` every message's
/// objects: one message per input file, or one per field with `split`.
fn each_message(
    inputs: &[PathBuf],
    opts: &ConvertOptions,
    mut each: impl FnMut(Vec<GribObject>) -> Result<(), GribError>,
) -> Result<(), GribError> {
    let mut budget = match opts.max_decoded_bytes {
        Some(b) => DecodeBudget::new(b),
        None => {
            let mut total = 0u64;
            for path in inputs {
                let meta = std::fs::metadata(path)
                    .map_err(|e| GribError::Io(format!("{}: {e}", path.display())))?;
                total = total.saturating_add(meta.len());
            }
            DecodeBudget::for_input(total)
        }
    };
    for path in inputs {
        let mut objects = Vec::new();
        for_each_field(path, opts.all_keys, &mut budget, |f| {
            let o = field_into_object(f, &opts.pipeline)?;
            if opts.split {
                each(vec![o])
            } else {
                objects.push(o);
                Ok(())
            }
        })?;
        if !opts.split {
            each(objects)?;
        }
    }
    Ok(())
}

/// The encoder's options for converted objects (NaN stored as a mask).
fn encode_options(no_hash: bool) -> EncodeOptions {
    let mut popts = PipelineOptions::default();
    popts.allow_nan = true;
    EncodeOptions::new().hashing(!no_hash).pipeline(popts)
}

/// The message's metadata and (descriptor, bytes) pairs: the objects'
/// entries, with the headers fields share stored once in `_extra_`
/// ([`super::grib_shared`]), in `layout`.
fn message_parts(
    objects: &[GribObject],
    layout: BaseLayout,
) -> (GlobalMetadata, Vec<(&ObjectDescriptor, &[u8])>) {
    let mut base: Vec<Map> = objects.iter().map(|o| o.metadata.clone()).collect();
    let extra = super::grib_shared::share(&mut base);
    let pairs = objects.iter().map(|o| (&o.descriptor, o.data())).collect();
    let mut meta = GlobalMetadata::with_base(base);
    meta.extra = extra;
    meta.layout = layout;
    (meta, pairs)
}

/// Encodes one message from its objects (NaN stored as a mask), with
/// `opts`' hashing and metadata layout.
pub fn encode_message(objects: &[GribObject], opts: &ConvertOptions) -> Result<Vec<u8>, GribError> {
    let (meta, pairs) = message_parts(objects, opts.layout);
    Ok(tgm::encode(&meta, &pairs, &encode_options(opts.no_hash))?)
}

/// [`encode_message`] written straight to `out` (`tgm::encode_to`: the
/// payloads are not gathered into a message buffer); returns its length.
pub fn encode_message_to(
    objects: &[GribObject],
    opts: &ConvertOptions,
    out: &mut dyn Write,
) -> Result<u64, GribError> {
    let (meta, pairs) = message_parts(objects, opts.layout);
    Ok(tgm::encode_to(
        &meta,
        &pairs,
        &encode_options(opts.no_hash),
        out,
    )?)
}
