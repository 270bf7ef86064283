//! Reading GRIB1 and GRIB2 fields through ecCodes into typed values and
//! metadata maps.

use std::path::Path;

use tgm::cbor::Value;
use tgm::Map;

use super::budget::DecodeBudget;
use super::ffi::{skip, GribFile, Handle, KeyType};
pub use super::grib_pl::PlPlace;
use super::GribError;

/// Geography keys copied under `base[i].geography` when present, in the
/// order they must be set again (dimensions before coordinates).
pub const GEOGRAPHY_KEYS: &[&str] = &[
    "gridType",
    "Ni",
    "Nj",
    "N",
    "numberOfPoints",
    "latitudeOfFirstGridPointInDegrees",
    "longitudeOfFirstGridPointInDegrees",
    "latitudeOfLastGridPointInDegrees",
    "longitudeOfLastGridPointInDegrees",
    "iDirectionIncrementInDegrees",
    "jDirectionIncrementInDegrees",
    "iScansNegatively",
    "jScansPositively",
    "jPointsAreConsecutive",
    "latitudeOfSouthernPoleInDegrees",
    "longitudeOfSouthernPoleInDegrees",
    "angleOfRotationInDegrees",
];

/// The scanning flag of grids whose rows alternate direction, copied into
/// `base[i].geography` when it is 1.
pub(super) const ALTERNATE_ROWS: &str = "alternativeRowScanning";

/// Keys of a projected grid (`polar_stereographic`, `lambert`,
/// `lambert_azimuthal_equal_area`) copied
/// under `base[i].geography` as well, for the points the dataset view
/// computes (`spec/kerchunk.md` §2.1); `to-grib` takes them from the
/// header template, so they are not set again.
pub const PROJECTION_KEYS: &[&str] = &[
    "radius",
    "earthIsOblate",
    "DxInMetres",
    "DyInMetres",
    "DiInMetres",
    "DjInMetres",
    "LaDInDegrees",
    "LoVInDegrees",
    "orientationOfTheGridInDegrees",
    "Latin1InDegrees",
    "Latin2InDegrees",
    "southPoleOnProjectionPlane",
    "alternativeRowScanning",
    "standardParallelInDegrees",
    "centralLongitudeInDegrees",
    "xDirectionGridLengthInMillimetres",
    "yDirectionGridLengthInMillimetres",
    "earthMajorAxisInMetres",
    "earthMinorAxisInMetres",
    "earthMajorAxis",
    "earthMinorAxis",
    "latitudeOfSubSatellitePointInDegrees",
    "longitudeOfSubSatellitePointInDegrees",
    "dx",
    "dy",
    "XpInGridLengths",
    "YpInGridLengths",
    "NrInRadiusOfEarth",
    "Xo",
    "Yo",
];

/// The grid types whose geography carries [`PROJECTION_KEYS`].
const PROJECTED_GRIDS: &[&str] = &[
    "polar_stereographic",
    "lambert",
    "lambert_azimuthal_equal_area",
    "mercator",
    "space_view",
];

/// Coding keys copied under `base[i].grib`: what is needed to write the
/// field again with the same parameter, level and precision.
pub const GRIB_KEYS: &[&str] = &[
    "edition",
    "centre",
    "paramId",
    "shortName",
    "units",
    "typeOfLevel",
    "level",
    "productDefinitionTemplateNumber",
    "packingType",
    "bitsPerValue",
    "decimalScaleFactor",
    "binaryScaleFactor",
    "referenceValue",
    "bitmapPresent",
    "numberOfValues",
    "laplacianOperator",
];

/// A second-order field's ordering of alternate rows in reverse, recorded
/// under `base[i].grib` when set (`spec/convert.md` "GRIB write-back").
pub(super) const BOUSTROPHEDONIC_KEY: &str = "boustrophedonicOrdering";

/// Keys copied under `base[i].grib` for the dataset view (`tgm::view`):
/// the variable attributes and names cfgrib shows beside [`GRIB_KEYS`]
/// (its `DATA_ATTRIBUTES_KEYS`, `EXTRA_DATA_ATTRIBUTES_KEYS` and
/// `GLOBAL_ATTRIBUTES_KEYS`; `missingValue` is cfgrib's own marker, not
/// the field's). Never written back by `to-grib`.
pub const VIEW_KEYS: &[&str] = &[
    "cfVarName",
    "cfName",
    "name",
    "dataType",
    "stepUnits",
    "stepType",
    "uvRelativeToGrid",
    "totalNumber",
    "numberOfDirections",
    "numberOfFrequencies",
    "NV",
    "gridDefinitionDescription",
    "centreDescription",
    "subCentre",
];

/// Large arrays never copied into metadata.
const DATA_KEYS: &[&str] = &[
    "values",
    "codedValues",
    "packedValues",
    "bitmap",
    "pl",
    "pv",
];

/// Longest array key copied by `--all-keys`.
const MAX_KEY_ARRAY: usize = 4096;

/// How ecCodes packed a simple-packed field: `value = (R + q·2^E)·10^-D`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SourcePacking {
    /// Bits per packed value.
    pub bits_per_value: u32,
    /// Reference value R, as ecCodes decodes it.
    pub reference_value: f64,
    /// Binary scale factor E.
    pub binary_scale_factor: i32,
    /// Decimal scale factor D.
    pub decimal_scale_factor: i32,
    /// The CCSDS coder's parameters when the source is `grid_ccsds`.
    pub ccsds: Option<SourceCcsds>,
    /// The truncations and Laplacian operator when the source is GRIB2
    /// `spectral_complex`.
    pub spectral: Option<SourceSpectral>,
}

/// How ecCodes packed a `spectral_complex` field: pentagonal truncation
/// `J` (= K = M), the unpacked subset's `JS` (= KS = MS, kept as binary32:
/// GRIB2's IEEE floats, GRIB1's IBM floats where binary32 holds them), the
/// Laplacian operator scaling the packed coefficients, and GRIB1's GRIBEX
/// scaling of the subset's last row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SourceSpectral {
    /// Pentagonal truncation J.
    pub truncation: u32,
    /// Subset truncation JS.
    pub subset_truncation: u32,
    /// `laplacianOperator`, as ecCodes decodes it.
    pub laplacian: f64,
    /// `GRIBEXShBugPresent`: the subset's coefficients of n = JS scaled
    /// as the packed ones (GRIB1).
    pub subset_last_scaled: bool,
}

/// How ecCodes coded a `grid_ccsds` field's codes (its keys
/// `ccsdsBlockSize`, `ccsdsRsi` and `ccsdsFlags`, libaec's flag numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceCcsds {
    /// Samples per block.
    pub block_size: u32,
    /// Blocks per reference sample interval.
    pub rsi: u32,
    /// libaec flags.
    pub flags: u32,
}

/// One GRIB message: its decoded values and metadata.
#[derive(Debug, Clone)]
pub struct GribField {
    /// ecCodes' decoded values; NaN where the bitmap marks a point missing.
    pub values: Vec<f64>,
    /// `[Nj, Ni]` for regular grids, `[numberOfValues]` otherwise.
    pub shape: Vec<u64>,
    /// The MARS namespace (only keys present).
    pub mars: Map,
    /// Grid description ([`GEOGRAPHY_KEYS`] and `pl` for reduced grids).
    pub geography: Map,
    /// Coding keys ([`GRIB_KEYS`]).
    pub grib: Map,
    /// Every key of the message (scalars and short arrays), when asked for.
    pub all_keys: Option<Map>,
    /// The source message with its values made constant (`spec/convert.md`
    /// "GRIB write-back"): every header key (edition, grid, `pv`, `pl`,
    /// local definition, generating process, tables versions, packing type,
    /// which for a second-order source ecCodes makes `grid_simple`) exactly
    /// as it came, for `to-grib`; without the octets of `pl` when
    /// [`GribField::template_pl`] says where they were.
    pub template: Vec<u8>,
    /// Where the octets of `pl` (kept in `geography.pl`) were taken out of
    /// [`GribField::template`] (`spec/convert.md` "GRIB metadata layout").
    pub template_pl: Option<PlPlace>,
    /// Where a run of zero bytes was cut out of [`GribField::template`]
    /// (after the octets of `pl`), [`super::grib_zeros`].
    pub template_zeros: Option<super::grib_zeros::ZeroRun>,
    /// Packing parameters when the field's values are `(R + X·2^E)·10^-D`
    /// with integer codes X: simple-packed (`grid_simple`, `grid_ccsds`),
    /// or complex, second-order, JPEG or PNG packed, whose codes are
    /// grouped or compressed but decode by the same formula. For those,
    /// `bits_per_value` is the width of the largest code, not the header's
    /// `bitsPerValue` (a width of the packing's own).
    pub packing: Option<SourcePacking>,
}

/// The messages of the GRIB file at `path`, their structure checked by
/// [`super::grib_scan`] before ecCodes reads it.
fn scan_file(path: &Path) -> Result<Vec<super::grib_scan::Message>, GribError> {
    let io = |e: std::io::Error| GribError::Io(format!("{}: {e}", path.display()));
    let f = std::fs::File::open(path).map_err(io)?;
    if f.metadata().map_err(io)?.len() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the map is read-only and dropped before this function returns;
    // a file changed underneath yields wrong bytes, never unsafety in the
    // scanner, which only reads a byte slice with bounds checks.
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::Mmap::map(&f) }.map_err(io)?;
    super::grib_scan::scan(&map).map_err(|e| GribError::Invalid(format!("{}: {e}", path.display())))
}

/// Reads every GRIB message of `path`, charging each field's decoded size
/// to `budget` before it is decoded.
pub fn read_fields(
    path: &Path,
    all_keys: bool,
    budget: &mut DecodeBudget,
) -> Result<Vec<GribField>, GribError> {
    let mut out = Vec::new();
    for_each_field(path, all_keys, budget, |f| {
        out.push(f);
        Ok(())
    })?;
    Ok(out)
}

/// Reads the GRIB messages of `path` one at a time, as [`read_fields`]
/// does, handing each field to `each` before the next is read, so that
/// memory holds one field (and the coded message it came from) at a time.
pub fn for_each_field(
    path: &Path,
    all_keys: bool,
    budget: &mut DecodeBudget,
    mut each: impl FnMut(GribField) -> Result<(), GribError>,
) -> Result<(), GribError> {
    let spans = scan_file(path)?;
    let mut file = GribFile::open(path)?;
    let mut read = 0;
    while let Some(h) = file.next_handle()? {
        if read == spans.len() {
            return Err(GribError::Invalid(format!(
                "{}: ecCodes reads more than the {} GRIB message(s) whose structure was checked",
                path.display(),
                spans.len()
            )));
        }
        let field = read_field(&h, all_keys, budget)
            .map_err(|e| GribError::Invalid(format!("{} message {read}: {e}", path.display())))?;
        drop(h);
        read += 1;
        each(field)?;
    }
    if read != spans.len() {
        return Err(GribError::Invalid(format!(
            "{}: ecCodes reads {read} GRIB message(s) where the file's structure holds {}",
            path.display(),
            spans.len()
        )));
    }
    if read == 0 {
        return Err(GribError::Invalid(format!(
            "{} holds no GRIB message",
            path.display()
        )));
    }
    Ok(())
}

/// One message's values and metadata. The grid's point count is checked
/// against the budget, the coded values and the bitmap before any array is
/// read (`spec/convert.md` "Hostile files").
pub fn read_field(
    h: &Handle,
    all_keys: bool,
    budget: &mut DecodeBudget,
) -> Result<GribField, GribError> {
    checked_data_section(h, budget)?;
    let points = checked_points(h)?;
    budget.charge_values(points as u64)?;
    // The template first: its clone of the coded message is gone before
    // the values are decoded.
    let mut template = header_template(h, points)?;
    let mut values = h.get_double_array("values")?;
    if values.len() != points {
        return Err(GribError::Invalid(format!(
            "ecCodes decodes {} values for a grid of {points} points",
            values.len()
        )));
    }
    if key_long(h, "bitmapPresent") == Some(1) {
        let bitmap = h.get_long_array("bitmap")?;
        let present = bitmap.iter().filter(|&&b| b != 0).count();
        let coded = key_long(h, "numberOfCodedValues");
        if bitmap.len() != points || coded.is_some_and(|c| c != present as i64) {
            return Err(GribError::Invalid(format!(
                "the bitmap has {} points ({present} present) but the grid {points} \
                 and the data section {} coded values",
                bitmap.len(),
                coded.unwrap_or(-1)
            )));
        }
        for (v, b) in values.iter_mut().zip(&bitmap) {
            if *b == 0 {
                *v = f64::NAN;
            }
        }
    } else if key_long(h, "missingValueManagementUsed").is_some_and(|m| m != 0) {
        mark_coded_missing(h, &mut values)?;
    }
    // A constant field coded at a width that ecCodes would not pack again.
    if let Some(whole) = super::grib_constant::kept_whole(h, &values, &template)? {
        template = whole;
    }

    let mut mars = Map::new();
    for k in h.key_names(Some("mars"), 0)? {
        if let Some(v) = key_value(h, &k)? {
            mars.insert(k, v);
        }
    }
    let mut geography = Map::new();
    for k in GEOGRAPHY_KEYS {
        if let Some(v) = key_value(h, k)? {
            geography.insert(k.to_string(), v);
        }
    }
    // Rows that alternate direction place every second row's values the
    // other way (`spec/kerchunk.md` §2.1); kept only when they do, so that
    // other fields' metadata is unchanged.
    if key_long(h, ALTERNATE_ROWS) == Some(1) {
        geography.insert(ALTERNATE_ROWS.to_string(), Value::Uint(1));
    }
    let projected = geography
        .get("gridType")
        .and_then(Value::as_text)
        .is_some_and(|t| PROJECTED_GRIDS.contains(&t));
    if projected {
        for k in PROJECTION_KEYS {
            // A missing camera altitude (an orthographic view) scales to a
            // number all the same.
            if *k == "NrInRadiusOfEarth" && h.is_defined("Nr") && h.is_missing("Nr") {
                continue;
            }
            if let Some(v) = key_value(h, k)? {
                geography.insert(k.to_string(), v);
            }
        }
    }
    let mut template_pl = None;
    if h.is_defined("pl") && h.size("pl")? > 0 {
        let pl = h.get_long_array("pl")?;
        // GRIB1 codes each row length in 2 octets.
        let octets = key_long(h, "numberOfOctectsForNumberOfPoints").unwrap_or(2);
        let octets = usize::try_from(octets).unwrap_or(0);
        if let Some((rest, place)) = super::grib_pl::take_out(&template, &pl, octets) {
            template = rest;
            template_pl = Some(place);
        }
        geography.insert(
            "pl".into(),
            Value::Array(pl.into_iter().map(Value::from_i64).collect()),
        );
    }
    let mut template_zeros = None;
    if let Some((rest, run)) = super::grib_zeros::take_out(&template) {
        template = rest;
        template_zeros = Some(run);
    }
    let mut grib = Map::new();
    for k in GRIB_KEYS.iter().chain(VIEW_KEYS) {
        if let Some(v) = key_value(h, k)? {
            grib.insert(k.to_string(), v);
        }
    }
    // An order of spatial differencing other than 0 (which ecCodes writes
    // and `to-grib` takes as given for such a source) is recorded.
    // So is a second-order field's boustrophedonic ordering, which its
    // `packingType` does not tell.
    for k in [super::grib_complex_pack::ORDER_KEY, BOUSTROPHEDONIC_KEY] {
        if let Some(v) = key_value(h, k)?.filter(|v| v.as_i64() != Some(0)) {
            grib.insert(k.to_string(), v);
        }
    }
    let all = if all_keys {
        let mut m = Map::new();
        for k in h.key_names(None, skip::DUPLICATES | skip::FUNCTION)? {
            if DATA_KEYS.contains(&k.as_str()) || m.contains_key(&k) {
                continue;
            }
            if let Some(v) = key_value(h, &k)? {
                m.insert(k, v);
            }
        }
        Some(m)
    } else {
        None
    };

    let shape = grid_shape(h, values.len());
    let packing = source_packing(h, &values)?;
    // Lookups answer "absent" once ecCodes refuses this thread
    // (`spec/convert.md` "Hostile files"): a field read so is refused, not
    // kept without its keys.
    if super::eccodes_assertion::refused() {
        return Err(GribError::Invalid(format!(
            "ecCodes: {}",
            super::eccodes_assertion::REFUSED
        )));
    }
    Ok(GribField {
        template,
        template_pl,
        template_zeros,
        values,
        shape,
        mars,
        geography,
        grib,
        all_keys: all,
        packing,
    })
}

/// Points a complex-packed field codes as missing without a bitmap
/// (`missingValueManagementUsed`, code table 5.5) made NaN: ecCodes decodes
/// them as `missingValue` and counts them in `numberOfMissing`; when as
/// many values equal `missingValue`, those are the missing points.
pub(super) fn mark_coded_missing(h: &Handle, values: &mut [f64]) -> Result<(), GribError> {
    let missing = h.get_double("missingValue")?;
    let count = values.iter().filter(|&&v| v == missing).count();
    if key_long(h, "numberOfMissing") == Some(count as i64) {
        for v in values.iter_mut().filter(|v| **v == missing) {
            *v = f64::NAN;
        }
    }
    Ok(())
}

/// The message with its values replaced by zeros (no bitmap), so that it
/// carries the header at a few bytes of data; a GRIB1 constant field keeps
/// its count of unused bits ([`super::grib1_unused_bits`]). Spectral and bi-Fourier
/// packings keep their per-coefficient width, lowered to one bit.
fn header_template(h: &Handle, points: usize) -> Result<Vec<u8>, GribError> {
    let mut t = h.try_clone()?;
    let packing = t.get_string("packingType").unwrap_or_default();
    // ecCodes 2.28 cannot set the values of a GRIB1 second-order field
    // (its `bitsPerValue` refers to a key such a field lacks without a
    // bitmap): the copy's flag is made simple first, so that ecCodes lays
    // its section out as simple packing, and `to-grib` packs the field
    // second-order again. Its values are set before any bitmap is dropped:
    // dropping one decodes the values, and the second-order bytes read as
    // simple codes need not match the bitmap.
    if packing.starts_with("grid_second_order") && key_long(&t, "edition") == Some(1) {
        t.set_long("complexPacking", 0)?;
        t = Handle::from_message(t.message_bytes()?)?;
        t.set_double_array("values", &vec![0.0; points])?;
    }
    if key_long(&t, "bitmapPresent") == Some(1) {
        t.set_long("bitmapPresent", 0)?;
    }
    if packing.starts_with("spectral") || packing.starts_with("bifourier") {
        t.set_long("bitsPerValue", 1)?;
    }
    t.set_double_array("values", &vec![0.0; points])?;
    let source = super::grib1_unused_bits::constant_field_flag(h)?;
    Ok(super::grib1_unused_bits::with_source_count(t.message_bytes()?, &t, source)?.into_owned())
}

/// The grid's point count (`numberOfDataPoints`), checked against the size
/// ecCodes gives `values` and, without a bitmap, against the number of
/// coded values (`numberOfCodedValues`), so that a header announcing 0 or 1
/// value for a 160×320 grid, or a data section too short for its grid, is
/// refused.
fn checked_points(h: &Handle) -> Result<usize, GribError> {
    let points = h.get_long("numberOfDataPoints")?;
    let points = usize::try_from(points)
        .map_err(|_| GribError::Invalid(format!("numberOfDataPoints = {points}")))?;
    if points == 0 {
        return Err(GribError::Invalid("the grid has no points".into()));
    }
    let size = h.size("values")?;
    if size != points {
        return Err(GribError::Invalid(format!(
            "numberOfDataPoints is {points} but ecCodes sizes the values at {size}"
        )));
    }
    if key_long(h, "bitmapPresent") != Some(1) {
        if let Some(coded) = key_long(h, "numberOfCodedValues") {
            if coded != points as i64 {
                return Err(GribError::Invalid(format!(
                    "the grid has {points} points but the data section codes {coded} values \
                     and there is no bitmap"
                )));
            }
        }
    }
    Ok(points)
}

/// Packings whose ecCodes decoder reads its codes from the data section
/// without a bound of its own when the section is empty (ecCodes 2.28's
/// `data_simple_packing` checks the section's length only when it holds
/// something).
const UNBOUNDED_SIMPLE: &[&str] = &[
    "grid_simple",
    "grid_simple_matrix",
    "grid_simple_log_preprocessing",
];

/// GRIB2 complex packings, whose data sections ecCodes reads by their
/// group descriptors without a bound ([`super::grib_complex_extent`]).
const COMPLEX: &[&str] = &["grid_complex", "grid_complex_spatial_differencing"];

/// The byte range of the message's data (`offsetBeforeData` to
/// `offsetAfterData`), when ecCodes gives both and they are in order.
pub(super) fn data_range(h: &Handle) -> Option<std::ops::Range<usize>> {
    let at = |k| key_long(h, k).and_then(|v| usize::try_from(v).ok());
    let (before, after) = (at("offsetBeforeData")?, at("offsetAfterData")?);
    (before <= after).then_some(before..after)
}

/// Checks, before ecCodes decodes a field, that its data section holds
/// what ecCodes reads of it (`spec/convert.md` "Hostile files"): a
/// simple-packed one `⌈numberOfCodedValues · bitsPerValue / 8⌉` bytes,
/// which ecCodes would read past the end of an empty section, out of the
/// message; a GRIB2 complex-packed one its groups
/// ([`checked_complex_section`]); a spectral one its unpacked subset and
/// packed coefficients ([`checked_spectral_section`]); a second-order one
/// its groups ([`checked_second_order_section`]).
pub(super) fn checked_data_section(h: &Handle, budget: &DecodeBudget) -> Result<(), GribError> {
    if !h.is_defined("packingType") {
        return Ok(());
    }
    let packing = h.get_string("packingType")?;
    if packing.starts_with("grid_second_order") {
        return checked_second_order_section(h, &packing, budget);
    }
    checked_bitmap_count(h)?;
    if COMPLEX.contains(&packing.as_str()) && key_long(h, "edition") == Some(2) {
        return checked_complex_section(h);
    }
    if packing == "spectral_complex" {
        return checked_spectral_section(h);
    }
    if !UNBOUNDED_SIMPLE.contains(&packing.as_str()) {
        return Ok(());
    }
    let (Some(n), Some(bits)) = (
        key_long(h, "numberOfCodedValues"),
        key_long(h, "bitsPerValue"),
    ) else {
        return Ok(());
    };
    let need = (i128::from(n.max(0)) * i128::from(bits.max(0)) + 7) / 8;
    let (Some(before), Some(after)) = (
        key_long(h, "offsetBeforeData"),
        key_long(h, "offsetAfterData"),
    ) else {
        return Ok(());
    };
    let held = after - before;
    if i128::from(held) < need {
        return Err(GribError::Invalid(format!(
            "the data section holds {held} bytes but its header announces {n} values at \
             {bits} bits ({need} bytes)"
        )));
    }
    Ok(())
}

/// Checks a GRIB2 complex-packed field's data section against its group
/// descriptors before ecCodes decodes it.
fn checked_complex_section(h: &Handle) -> Result<(), GribError> {
    let key = |k: &str| {
        key_u64(h, k)
            .ok_or_else(|| GribError::Invalid(format!("complex packing without a count {k}")))
    };
    let optional = |k: &str| key_u64(h, k).unwrap_or(0);
    let layout = super::grib_complex_extent::ComplexLayout {
        values: key("numberOfCodedValues")?,
        groups: key("numberOfGroupsOfDataValues")?,
        reference_bits: key("bitsPerValue")?,
        width_reference: key("referenceForGroupWidths")?,
        width_bits: key("numberOfBitsUsedForTheGroupWidths")?,
        length_reference: key("referenceForGroupLengths")?,
        length_increment: key("lengthIncrementForTheGroupLengths")?,
        last_length: key("trueLengthOfLastGroup")?,
        length_bits: key("numberOfBitsForScaledGroupLengths")?,
        order: optional("orderOfSpatialDifferencing"),
        extra_octets: optional("numberOfOctetsExtraDescriptors"),
    };
    let msg = h.message_bytes()?;
    let data = data_range(h)
        .and_then(|r| msg.get(r))
        .ok_or_else(|| GribError::Invalid("the data section lies outside the message".into()))?;
    super::grib_complex_extent::check(data, &layout)
        .map_err(|e| GribError::Invalid(format!("complex packing: {e}")))
}

/// Checks that a bitmap marks no more points present than the data
/// section codes values (GRIB2's `numberOfValues`, GRIB1's
/// `numberOfCodedValues`, which ecCodes derives from the section's length):
/// ecCodes 2.28's `data_apply_bitmap` reads one value past the decoded ones
/// before it notices more (found under valgrind).
fn checked_bitmap_count(h: &Handle) -> Result<(), GribError> {
    if key_long(h, "bitmapPresent") != Some(1) {
        return Ok(());
    }
    let Some(edition) = key_u64(h, "edition") else {
        return Ok(());
    };
    let coded = match edition {
        1 => key_long(h, "numberOfCodedValues"),
        _ => key_long(h, "numberOfValues"),
    };
    let points = key_u64(h, "numberOfPoints");
    let (Some(coded), Some(points)) = (coded, points) else {
        return Ok(());
    };
    match bitmap_ones(h, edition, points)? {
        Some(present) if i128::from(present) > i128::from(coded) => {
            Err(GribError::Invalid(format!(
                "the bitmap marks {present} points present but the data section codes {coded} \
                 values"
            )))
        }
        _ => Ok(()),
    }
}

/// GRIB1 second-order packings other than ECMWF's general extended
/// form: ecCodes 2.28 cannot pack them again, and its decoders of them are
/// not bounded by their sections (one loops forever on a hostile
/// secondary bitmap).
const SECOND_ORDER_REFUSED: &[&str] = &[
    "grid_second_order_row_by_row",
    "grid_second_order_constant_width",
    "grid_second_order_general_grib1",
];

/// Checks a second-order field's data section against its group
/// descriptors before ecCodes decodes it ([`super::grib_second_order_extent`]),
/// and that ecCodes lays the section out where the check read it. The
/// section's offsets and the descriptors' widths and counts are header
/// octets ecCodes reads without decoding the data.
fn checked_second_order_section(
    h: &Handle,
    packing: &str,
    budget: &DecodeBudget,
) -> Result<(), GribError> {
    if SECOND_ORDER_REFUSED.contains(&packing) {
        return Err(GribError::Invalid(format!(
            "packingType {packing} is not converted: ecCodes 2.28 cannot pack it again for \
             `to-grib`, and its decoder of it is not bounded by the section (a hostile one \
             reads past the message or loops forever); repack it first, e.g. \
             `grib_set -r -s packingType=grid_second_order`"
        )));
    }
    let invalid = |what: String| GribError::Invalid(format!("second-order packing: {what}"));
    let key = |k: &str| key_u64(h, k).ok_or_else(|| invalid(format!("no {k}")));
    let edition = key("edition")?;
    let order = key("orderOfSPD")?;
    let spd_bits = match order {
        0 => 0,
        _ => key("widthOfSPD")?,
    };
    let (start, end) = match edition {
        // GRIB1's group widths follow octet 25 and, with differencing, its
        // width octet and values.
        1 => {
            let s4 = key("offsetSection4")?;
            let spd_bytes = match order {
                0 => 0,
                _ => 1 + ((order + 1) * spd_bits).div_ceil(8),
            };
            (s4 + 25 + spd_bytes, s4 + key("section4Length")?)
        }
        _ => {
            let s7 = key("offsetSection7")?;
            (s7 + 5, s7 + key("section7Length")?)
        }
    };
    let layout = super::grib_second_order_extent::SecondOrderLayout {
        groups: key("numberOfGroups")?,
        first_order_bits: key("widthOfFirstOrderValues")?,
        width_bits: key("widthOfWidths")?,
        length_bits: key("widthOfLengths")?,
        order,
        spd_bits,
    };
    let msg = h.message_bytes()?;
    let region = usize::try_from(start)
        .ok()
        .zip(usize::try_from(end).ok())
        .and_then(|(s, e)| msg.get(s..e))
        .ok_or_else(|| invalid("the data section lies outside the message".into()))?;
    let extent = super::grib_second_order_extent::check(region, &layout).map_err(invalid)?;
    let data = key("offsetBeforeData")?;
    if data != start + extent.descriptors {
        return Err(invalid(format!(
            "ecCodes reads the values from byte {data}, the descriptors end at byte {}",
            start + extent.descriptors
        )));
    }
    if key_long(h, BOUSTROPHEDONIC_KEY) == Some(1) {
        checked_boustrophedonic_rows(h, extent.values)?;
    }
    // Groups of no width cost no bits whatever their lengths: the values
    // they decode to are charged as the grid's points are.
    budget.allows_values(extent.values)?;
    // Only now is the grid's point count read: for a GRIB1 Gaussian grid
    // ecCodes derives it from `bitsPerValue`, which for this packing it
    // computes by decoding the field.
    let points = key("numberOfPoints")?;
    let present = match key_long(h, "bitmapPresent") {
        Some(1) => bitmap_ones(h, edition, points)?,
        _ => Some(points),
    };
    // GRIB2 announces its coded values (section 5); ecCodes' bitmap reader
    // reads one past the decoded values when the bitmap marks more present.
    let announced = match edition {
        1 => None,
        _ => Some(key("numberOfValues")?),
    };
    for (what, n) in [("points present", present), ("values announced", announced)] {
        if n.is_some_and(|n| n != extent.values) {
            return Err(invalid(format!(
                "the groups and the order of spatial differencing hold {} values, the {what} \
                 number {}",
                extent.values,
                n.unwrap_or(0)
            )));
        }
    }
    Ok(())
}

/// Checks the rows a boustrophedonic second-order field is reordered by
/// against the `values` its groups decode to, from header keys alone
/// (ecCodes decodes the field to give a Gaussian grid's point count, and
/// for a boustrophedonic reduced one recurses until the stack overflows):
/// ecCodes 2.28 writes every row of `numberOfColumns` points into an array
/// of the decoded values once they number `numberOfPoints`. A reduced grid
/// (`pl`) is refused: ecCodes 2.28 writes its reversed rows one point
/// further on, the last past the array; so is a GRIB1 Gaussian grid, whose
/// point count ecCodes asks of the decoding that asks for it. So is a
/// bitmap: ecCodes 2.28 decodes such a field with other points missing
/// than it packed.
pub(super) fn checked_boustrophedonic_rows(h: &Handle, values: u64) -> Result<(), GribError> {
    let invalid = |what: &str| {
        GribError::Invalid(format!(
            "second-order packing, boustrophedonic ordering: {what}"
        ))
    };
    if key_long(h, "bitmapPresent") == Some(1) {
        return Err(invalid(
            "with a bitmap it is not converted: ecCodes 2.28 decodes such a field with \
             other points missing than it packed",
        ));
    }
    if key_long(h, "PLPresent") == Some(1) || (h.is_defined("pl") && h.size("pl")? > 0) {
        return Err(invalid(
            "on a reduced grid it is not converted: ecCodes 2.28 decodes its reversed rows \
             one point further on, the last past its array",
        ));
    }
    let gaussian = h.get_string("gridType").is_ok_and(|g| g.contains("_gg"));
    if gaussian && key_long(h, "edition") == Some(1) {
        return Err(invalid(
            "on a GRIB1 Gaussian grid it is not converted: ecCodes 2.28 counts such a grid's \
             points by decoding the field, whose reordering asks for the count again, until \
             the stack overflows",
        ));
    }
    let key = |k: &str| key_u64(h, k).ok_or_else(|| invalid(&format!("no {k}")));
    let covered = key("numberOfRows")?.checked_mul(key("numberOfColumns")?);
    if covered != Some(values) {
        return Err(invalid(&format!(
            "its rows cover {} points, its groups {values}",
            covered.map_or("too many".to_string(), |c| c.to_string())
        )));
    }
    Ok(())
}

/// The points a bitmap marks present among the grid's `points`: GRIB1's
/// section 3 or GRIB2's section 6, each with its bits from octet 7. `None`
/// for a GRIB2 bitmap given elsewhere (indicator 254, a previous one);
/// refused when a GRIB1 bitmap refers to a predefined one or a bitmap holds
/// fewer bits than the grid has points.
fn bitmap_ones(h: &Handle, edition: u64, points: u64) -> Result<Option<u64>, GribError> {
    let invalid = |what: &str| GribError::Invalid(format!("bitmap: {what}"));
    let at = |k: &str| {
        key_long(h, k)
            .and_then(|v| usize::try_from(v).ok())
            .ok_or_else(|| invalid(&format!("no {k}")))
    };
    let (offset, len) = match edition {
        1 => (at("offsetSection3")?, at("section3Length")?),
        _ => (at("offsetSection6")?, at("section6Length")?),
    };
    let msg = h.message_bytes()?;
    let section = offset
        .checked_add(len)
        .and_then(|e| msg.get(offset..e))
        .filter(|s| s.len() >= 6)
        .ok_or_else(|| invalid("the section lies outside the message"))?;
    match edition {
        1 if section[4] != 0 || section[5] != 0 => {
            return Err(invalid("a predefined bitmap is not read"));
        }
        1 => {}
        _ if section[5] == 254 => return Ok(None),
        _ if section[5] != 0 => return Err(invalid(&format!("indicator {}", section[5]))),
        _ => {}
    }
    let bits = &section[6..];
    if (bits.len() as u64) * 8 < points {
        return Err(invalid(&format!(
            "{} bits for a grid of {points} points",
            bits.len() * 8
        )));
    }
    let whole = (points / 8) as usize;
    let mut ones: u64 = bits[..whole]
        .iter()
        .map(|b| u64::from(b.count_ones()))
        .sum();
    if !points.is_multiple_of(8) {
        ones += u64::from((bits[whole] >> (8 - points % 8)).count_ones());
    }
    Ok(Some(ones))
}

/// Checks a `spectral_complex` field's data section against its
/// truncations and width before ecCodes decodes it.
fn checked_spectral_section(h: &Handle) -> Result<(), GribError> {
    let key = |k: &str| {
        key_long(h, k).ok_or_else(|| GribError::Invalid(format!("spectral packing without {k}")))
    };
    // GRIB2's `unpackedSubsetPrecision` and GRIB1's `ieeeFloats`: 2 is
    // IEEE double; ecCodes reads 4-byte floats otherwise (or none).
    let precision = ["unpackedSubsetPrecision", "ieeeFloats"]
        .iter()
        .find_map(|k| key_long(h, k));
    let held = data_range(h)
        .ok_or_else(|| GribError::Invalid("the data section lies outside the message".into()))?;
    let layout = super::grib_spectral_extent::SpectralLayout {
        truncation: [key("J")?, key("K")?, key("M")?],
        subset: [key("JS")?, key("KS")?, key("MS")?],
        bits: key("bitsPerValue")?,
        float_bytes: if precision == Some(2) { 8 } else { 4 },
        held: held.len() as u64,
    };
    super::grib_spectral_extent::check(&layout)
        .map(|_| ())
        .map_err(|e| GribError::Invalid(format!("spectral packing: {e}")))
}

/// `key` as an integer when the message defines it and it is not missing.
pub(super) fn key_long(h: &Handle, key: &str) -> Option<i64> {
    if h.is_defined(key) && !h.is_missing(key) {
        h.get_long(key).ok()
    } else {
        None
    }
}

/// [`key_long`] when it is not negative: a count, width or offset.
pub(super) fn key_u64(h: &Handle, key: &str) -> Option<u64> {
    key_long(h, key).and_then(|v| u64::try_from(v).ok())
}

/// `[Nj, Ni]` (or `[Ni, Nj]` when j is the fast index) when the regular
/// dimensions cover every value, else one dimension.
fn grid_shape(h: &Handle, n: usize) -> Vec<u64> {
    let (ni, nj) = (key_long(h, "Ni"), key_long(h, "Nj"));
    if let (Some(ni), Some(nj)) = (ni, nj) {
        if ni > 0 && nj > 0 && ni.checked_mul(nj) == Some(n as i64) {
            return if key_long(h, "jPointsAreConsecutive") == Some(1) {
                vec![ni as u64, nj as u64]
            } else {
                vec![nj as u64, ni as u64]
            };
        }
    }
    vec![n as u64]
}

fn source_packing(h: &Handle, values: &[f64]) -> Result<Option<SourcePacking>, GribError> {
    if !h.is_defined("packingType") {
        return Ok(None);
    }
    let pt = h.get_string("packingType")?;
    let grouped = pt.starts_with("grid_complex")
        || pt.starts_with("grid_second_order")
        || matches!(pt.as_str(), "grid_jpeg" | "grid_png");
    if grouped {
        return grouped_packing(h, values);
    }
    if pt == "spectral_complex" {
        return spectral_packing(h);
    }
    if !matches!(pt.as_str(), "grid_simple" | "grid_ccsds") {
        return Ok(None);
    }
    let ccsds = if pt == "grid_ccsds" {
        Some(SourceCcsds {
            block_size: long_in_range(h, "ccsdsBlockSize")?,
            rsi: long_in_range(h, "ccsdsRsi")?,
            flags: long_in_range(h, "ccsdsFlags")?,
        })
    } else {
        None
    };
    Ok(Some(SourcePacking {
        bits_per_value: long_in_range(h, "bitsPerValue")?,
        reference_value: h.get_double("referenceValue")?,
        binary_scale_factor: long_in_range(h, "binaryScaleFactor")?,
        decimal_scale_factor: long_in_range(h, "decimalScaleFactor")?,
        ccsds,
        spectral: None,
    }))
}

/// The parameters of a field whose codes are grouped or compressed
/// ([`GribField::packing`]): the header's reference value and scales, and
/// the width of the largest code `⌊(max·10^D − R)·2^−E + 0.5⌋` of the
/// present values (`None` when that is not a code of at most 64 bits).
fn grouped_packing(h: &Handle, values: &[f64]) -> Result<Option<SourcePacking>, GribError> {
    let reference_value = h.get_double("referenceValue")?;
    let binary_scale_factor: i32 = long_in_range(h, "binaryScaleFactor")?;
    let decimal_scale_factor: i32 = long_in_range(h, "decimalScaleFactor")?;
    let present = values.iter().copied().filter(|v| !v.is_nan());
    let Some(max) = present.reduce(f64::max) else {
        return Ok(None);
    };
    let top = (max * 10f64.powi(decimal_scale_factor) - reference_value)
        * 2f64.powi(-binary_scale_factor)
        + 0.5;
    if !(0.0..18446744073709551616.0).contains(&top) {
        return Ok(None);
    }
    Ok(Some(SourcePacking {
        bits_per_value: 64 - (top as u64).leading_zeros(),
        reference_value,
        binary_scale_factor,
        decimal_scale_factor,
        ccsds: None,
        spectral: None,
    }))
}

/// The parameters of a GRIB1 or GRIB2 `spectral_complex` field: its
/// codes' simple_packing parameters and [`SourceSpectral`]. `None` for
/// what the layout does not describe (GRIB2 unpacked subsets that are not
/// IEEE binary32, truncations that are not pentagonal with J = K = M, a
/// subset as large as the field). A GRIB1 subset value beyond binary32's
/// range fails the encode, and the field is stored as float64.
fn spectral_packing(h: &Handle) -> Result<Option<SourcePacking>, GribError> {
    let long = |k: &str| key_long(h, k);
    let pentagonal = |a: &str, b: &str, c: &str| match (long(a), long(b), long(c)) {
        (Some(x), Some(y), Some(z)) if x == y && y == z => u32::try_from(x).ok(),
        _ => None,
    };
    let (Some(truncation), Some(subset_truncation)) =
        (pentagonal("J", "K", "M"), pentagonal("JS", "KS", "MS"))
    else {
        return Ok(None);
    };
    let subset_floats = match long("edition") {
        Some(1) => long("ieeeFloats") == Some(0),
        Some(2) => long("unpackedSubsetPrecision") == Some(1),
        _ => false,
    };
    let subset_last_scaled = match long("GRIBEXShBugPresent") {
        Some(0) => false,
        Some(1) => true,
        _ => return Ok(None),
    };
    if !subset_floats
        || subset_truncation >= truncation
        || truncation > tgm::pipeline_spec::SPECTRAL_MAX_TRUNCATION
    {
        return Ok(None);
    }
    Ok(Some(SourcePacking {
        bits_per_value: long_in_range(h, "bitsPerValue")?,
        reference_value: h.get_double("referenceValue")?,
        binary_scale_factor: long_in_range(h, "binaryScaleFactor")?,
        decimal_scale_factor: long_in_range(h, "decimalScaleFactor")?,
        ccsds: None,
        spectral: Some(SourceSpectral {
            truncation,
            subset_truncation,
            laplacian: h.get_double("laplacianOperator")?,
            subset_last_scaled,
        }),
    }))
}

/// The integer key `key`, refused when it does not fit `T`.
fn long_in_range<T: TryFrom<i64>>(h: &Handle, key: &str) -> Result<T, GribError> {
    let v = h.get_long(key)?;
    T::try_from(v).map_err(|_| GribError::Invalid(format!("{key} = {v} is out of range")))
}

/// A key as a CBOR value, or `None` when absent, missing or not a scalar
/// (or short array) of numbers or text.
fn key_value(h: &Handle, key: &str) -> Result<Option<Value>, GribError> {
    if !h.is_defined(key) || h.is_missing(key) {
        return Ok(None);
    }
    let Ok(t) = h.key_type(key) else {
        return Ok(None);
    };
    let n = h.size(key).unwrap_or(1);
    if n > MAX_KEY_ARRAY {
        return Ok(None);
    }
    let v = match (t, n) {
        (KeyType::Long, 1) => h.get_long(key).ok().map(Value::from_i64),
        (KeyType::Long, _) => h
            .get_long_array(key)
            .ok()
            .map(|a| Value::Array(a.into_iter().map(Value::from_i64).collect())),
        (KeyType::Double, 1) => h
            .get_double(key)
            .ok()
            .filter(|x| x.is_finite())
            .map(Value::Float),
        (KeyType::Double, _) => h.get_double_array(key).ok().and_then(|a| {
            a.iter()
                .all(|x| x.is_finite())
                .then(|| Value::Array(a.into_iter().map(Value::Float).collect()))
        }),
        (KeyType::String, _) => h
            .get_string(key)
            .ok()
            .filter(|s| s != "MISSING" && s != "not_found")
            .map(Value::Text),
        (KeyType::Other, _) => None,
    };
    Ok(v)
}
