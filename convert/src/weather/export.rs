//! Tensogram objects written by [`super::convert`] back to GRIB
//! (`spec/convert.md` "GRIB write-back").
//!
//! Each object becomes one GRIB message built on its source's header
//! (`base[i].grib.template`), with the edited MARS keys set over it, the
//! source's packing precision, and NaN elements as bitmap-missing points;
//! ecCodes reads every message back before it is returned. Entries without
//! a template are written as GRIB2 from an ecCodes sample.

use std::borrow::Cow;
use std::io::Write;

use tgm::cbor::Value;
use tgm::{DecodedMessage, Dtype, Map, ObjectDescriptor};

use super::budget::DecodeBudget;
use super::convert::{TEMPLATE_KEY, TEMPLATE_PL_KEY};
use super::ffi::Handle;
use super::field_values::{FieldValues, Pieces, STEP};
use super::grib::GEOGRAPHY_KEYS;
use super::grib1_unused_bits;
use super::grib_complex_pack::{self, Missing};
use super::grib_constant;
use super::grib_decimal::{self, SourceSimple};
use super::grib_pl::{self, PlPlace};
use super::grib_scales::{self, SourceScales};
use super::grib_shared::{patched, shared_header, TEMPLATE_PATCH_KEY, TEMPLATE_REF_KEY};
use super::grib_simple;
use super::grib_zeros::{self, ZeroRun, TEMPLATE_ZEROS_KEY};
use super::GribError;

/// MARS keys set on the output, in order, and the GRIB key each is set
/// through. `param`, `levtype` and `levelist` are written before these,
/// through `paramId`, `typeOfLevel` and `level` (from `base[i].grib`, or
/// `mars.param`/`mars.levelist` when those are absent); `domain` follows
/// from the local definition. This is the list docs/src/guide/weather.md documents.
pub const MARS_KEYS: &[(&str, &str)] = &[
    ("class", "class"),
    ("type", "type"),
    ("stream", "stream"),
    ("expver", "expver"),
    ("date", "dataDate"),
    ("time", "dataTime"),
    ("step", "step"),
    ("number", "number"),
];

/// Choices for writing GRIB back (`spec/convert.md` "GRIB write-back").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// The ecCodes `packingType` to write every field with, in place of
    /// the source's (`base[i].grib.packingType`).
    pub packing: Option<String>,
}

/// The GRIB messages of every object of `msg`, concatenated, each in its
/// source's packing.
pub fn message_to_grib(msg: &DecodedMessage) -> Result<Vec<u8>, GribError> {
    message_to_grib_with(msg, &WriteOptions::default())
}

/// [`message_to_grib`] with the choices of `opts`.
pub fn message_to_grib_with(
    msg: &DecodedMessage,
    opts: &WriteOptions,
) -> Result<Vec<u8>, GribError> {
    let mut out = Vec::new();
    for (i, obj) in msg.objects.iter().enumerate() {
        let entry = msg
            .metadata
            .base
            .get(i)
            .ok_or_else(|| GribError::Invalid(format!("object {i} has no base entry")))?;
        with_header(entry, &msg.metadata.extra)
            .and_then(|e| object_to_grib(&e, &obj.descriptor, &obj.data, opts, &mut out))
            .map_err(|e| in_object(i, e))?;
    }
    Ok(out)
}

/// `entry` holding its source's header under `grib.template`: when it
/// names a header its message shares (`grib.template_ref`, `spec/convert.md`
/// "GRIB metadata layout"), a copy with that header from the message's
/// `extra`, else `entry` itself. Every writer below reads `grib.template`.
pub fn with_header<'e>(entry: &'e Map, extra: &Map) -> Result<Cow<'e, Map>, GribError> {
    let Some(grib) = entry.get("grib").and_then(Value::as_map) else {
        return Ok(Cow::Borrowed(entry));
    };
    let patch = get(grib, TEMPLATE_PATCH_KEY);
    let Some(reference) = get(grib, TEMPLATE_REF_KEY) else {
        return match patch {
            None => Ok(Cow::Borrowed(entry)),
            Some(_) => Err(GribError::Invalid(format!(
                "grib.{TEMPLATE_PATCH_KEY} without grib.{TEMPLATE_REF_KEY}: \
                 a patch applies to a shared header"
            ))),
        };
    };
    if get(grib, TEMPLATE_KEY).is_some() {
        return Err(GribError::Invalid(format!(
            "grib.{TEMPLATE_KEY} and grib.{TEMPLATE_REF_KEY} both given: an entry holds its \
             header or names a shared one"
        )));
    }
    let shared = shared_header(reference, extra)?;
    let header = match patch {
        Some(p) => patched(shared, p)?,
        None => shared.to_vec(),
    };
    let mut grib = grib.to_vec();
    grib.retain(|(k, _)| {
        k.as_text() != Some(TEMPLATE_REF_KEY) && k.as_text() != Some(TEMPLATE_PATCH_KEY)
    });
    grib.push((Value::Text(TEMPLATE_KEY.into()), Value::Bytes(header)));
    let mut entry = entry.clone();
    entry.insert("grib".into(), Value::Map(grib));
    Ok(Cow::Owned(entry))
}

/// `e` as an error of object `i` (a failed write stays one).
pub fn in_object(i: usize, e: GribError) -> GribError {
    match e {
        GribError::Write(e) => GribError::Write(e),
        e => GribError::Invalid(format!("object {i}: {e}")),
    }
}

/// One object (its base entry `entry`, descriptor `d` and decoded bytes
/// `data`) written to `out` as a GRIB message, as [`field_to_grib_with`]
/// makes it; returns the message length. The values are borrowed from
/// `data` when they are native-endian and aligned, else converted.
pub fn object_to_grib(
    entry: &Map,
    d: &ObjectDescriptor,
    data: &[u8],
    opts: &WriteOptions,
    out: &mut dyn Write,
) -> Result<u64, GribError> {
    if d.dtype != Dtype::Float64 {
        return Err(GribError::Invalid(format!("{}, not float64", d.dtype)));
    }
    let borrowed = (d.byte_order == tgm::ByteOrder::native())
        .then(|| bytemuck::try_cast_slice::<u8, f64>(data).ok())
        .flatten();
    let values: Cow<'_, [f64]> = match borrowed {
        Some(v) => v.into(),
        None => data
            .chunks_exact(8)
            .map(|c| {
                let a: [u8; 8] = c.try_into().unwrap_or_default();
                match d.byte_order {
                    tgm::ByteOrder::Big => f64::from_be_bytes(a),
                    tgm::ByteOrder::Little => f64::from_le_bytes(a),
                }
            })
            .collect(),
    };
    field_to_grib_to(entry, &values, opts, out)
}

/// [`object_to_grib`] of an undecoded float64 object whose pipeline decodes
/// in pieces ([`tgm::Object::decodes_in_pieces`]: an szip-compressed one, as
/// `convert-grib` writes, or zstd over none or simple_packing): each pass
/// over the values (extremes, codes, read-back) decodes it again a step at
/// a time into one reused buffer, so that its decoded values are never held
/// whole (`spec/convert.md` "GRIB write-back", "Memory"); a field that
/// ecCodes packs whole gets them whole. `None`, with nothing written, when
/// the object is not such an object (decode it and use [`object_to_grib`]).
/// The message is the one [`object_to_grib`] writes.
pub fn object_pieces_to_grib(
    entry: &Map,
    obj: &tgm::Object<'_>,
    decode: &tgm::DecodeOptions,
    opts: &WriteOptions,
    out: &mut dyn Write,
) -> Option<Result<u64, GribError>> {
    let values = Pieces::of(obj, decode)?;
    Some(write_field(entry, &values, opts, out))
}

fn section<'a>(entry: &'a Map, name: &str) -> Result<&'a [(Value, Value)], GribError> {
    entry
        .get(name)
        .and_then(Value::as_map)
        .ok_or_else(|| GribError::Invalid(format!("base entry lacks a {name:?} map")))
}

/// The value of `key` in the map `map` (a `base[i]` section).
pub(super) fn get<'a>(map: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    map.iter()
        .find(|(k, _)| k.as_text() == Some(key))
        .map(|(_, v)| v)
}

/// Sets `key` from a CBOR scalar of the matching kind.
fn set_value(h: &mut Handle, key: &str, v: &Value) -> Result<(), GribError> {
    match v {
        Value::Text(s) => h.set_string(key, s),
        Value::Float(f) => h.set_double(key, *f),
        other => match other.as_i64() {
            Some(i) => h.set_long(key, i),
            None => Err(GribError::Invalid(format!(
                "{key} is a {}, not a number or text",
                other.type_name()
            ))),
        },
    }
}

/// The ecCodes sample for a grid.
fn sample_for(geo: &[(Value, Value)]) -> Result<Handle, GribError> {
    let grid = get(geo, "gridType")
        .and_then(Value::as_text)
        .ok_or_else(|| GribError::Invalid("geography lacks gridType".into()))?;
    match grid {
        "regular_ll" => Handle::from_sample("regular_ll_sfc_grib2"),
        "regular_gg" => Handle::from_sample("regular_gg_sfc_grib2"),
        "reduced_gg" => {
            let n = get(geo, "N").and_then(Value::as_i64).unwrap_or(0);
            Handle::from_sample(&format!("reduced_gg_pl_{n}_grib2"))
                .or_else(|_| Handle::from_sample("reduced_gg_sfc_grib2"))
        }
        other => Err(GribError::Invalid(format!(
            "gridType {other:?} is not supported (regular_ll, regular_gg, reduced_gg)"
        ))),
    }
}

/// One GRIB message for one field: from the source's header
/// (`grib.template`) when the entry has one, else from an ecCodes sample.
/// The message is read back by ecCodes before it is returned.
pub fn field_to_grib(entry: &Map, values: &[f64]) -> Result<Vec<u8>, GribError> {
    field_to_grib_with(entry, values, &WriteOptions::default())
}

/// [`field_to_grib`] with the choices of `opts`.
pub fn field_to_grib_with(
    entry: &Map,
    values: &[f64],
    opts: &WriteOptions,
) -> Result<Vec<u8>, GribError> {
    let mut out = Vec::new();
    field_to_grib_to(entry, values, opts, &mut out)?;
    Ok(out)
}

/// [`field_to_grib_with`] written to `out` from ecCodes' own buffer (no
/// copy of the message); returns its length.
pub fn field_to_grib_to(
    entry: &Map,
    values: &[f64],
    opts: &WriteOptions,
    out: &mut dyn Write,
) -> Result<u64, GribError> {
    write_field(entry, values, opts, out)
}

/// [`field_to_grib_to`] of values read as [`FieldValues`].
fn write_field(
    entry: &Map,
    values: &(impl FieldValues + ?Sized),
    opts: &WriteOptions,
    out: &mut dyn Write,
) -> Result<u64, GribError> {
    let grib = section(entry, "grib")?;
    let mut source_flag = None;
    let h = match get(grib, TEMPLATE_KEY) {
        Some(Value::Bytes(t)) => {
            let t = whole_template(t, entry)?;
            let (h, flag) = from_template(&t, entry, values, opts)?;
            source_flag = flag;
            h
        }
        Some(other) => {
            return Err(GribError::Invalid(format!(
                "grib.{TEMPLATE_KEY} is a {}, not a byte string",
                other.type_name()
            )))
        }
        // A shared header is the message's: an entry naming one reaches
        // here only through `with_header`, never written from a sample.
        None if get(grib, TEMPLATE_REF_KEY).is_some()
            || get(grib, TEMPLATE_PATCH_KEY).is_some() =>
        {
            return Err(GribError::Invalid(format!(
                "grib.{TEMPLATE_REF_KEY} names a header of the message's _extra_, \
                 which was not looked up"
            )))
        }
        None => from_sample(entry, values, opts)?,
    };
    let msg = h.message_bytes()?;
    let msg = grib1_unused_bits::with_source_count(msg, &h, source_flag)?;
    read_back(&msg, values)?;
    out.write_all(&msg).map_err(GribError::Write)?;
    Ok(msg.len() as u64)
}

/// The source's header `stored` (`grib.template`) whole: with the zeros
/// `grib.template_zeros` records and the octets of `geography.pl` put back
/// where `grib.template_pl` places them, when it does (`spec/convert.md`
/// "GRIB metadata layout"). Whatever its form, the header is untrusted
/// input: it must be one GRIB message whose structure passes the file
/// checks ("Hostile files") before ecCodes reads it.
fn whole_template<'t>(stored: &'t [u8], entry: &Map) -> Result<Cow<'t, [u8]>, GribError> {
    let grib = section(entry, "grib")?;
    let mut header: Cow<'t, [u8]> = Cow::Borrowed(stored);
    let mut restored = Vec::new();
    if let Some(run) = get(grib, TEMPLATE_ZEROS_KEY) {
        let run = ZeroRun::from_value(run).ok_or_else(|| {
            GribError::Invalid(format!("grib.{TEMPLATE_ZEROS_KEY} is not [offset, length]"))
        })?;
        header = Cow::Owned(grib_zeros::put_back(&header, run)?);
        restored.push(format!("grib.{TEMPLATE_ZEROS_KEY}"));
    }
    let pl = match get(grib, TEMPLATE_PL_KEY) {
        None => None,
        Some(place) => {
            let place = PlPlace::from_value(place).ok_or_else(|| {
                GribError::Invalid(format!(
                    "grib.{TEMPLATE_PL_KEY} is not [offset, octets] with 1 to 4 octets"
                ))
            })?;
            let pl = get(section(entry, "geography")?, "pl").ok_or_else(|| {
                GribError::Invalid(format!("grib.{TEMPLATE_PL_KEY} without geography.pl"))
            })?;
            let pl = grib_pl::pl_of(pl)?;
            header = Cow::Owned(grib_pl::put_back(&header, &pl, place)?);
            restored.push("geography.pl".to_string());
            Some(pl)
        }
    };
    one_message(&header).map_err(|e| match restored.is_empty() {
        true => GribError::Invalid(format!("grib.{TEMPLATE_KEY}: {e}")),
        false => GribError::Invalid(format!(
            "grib.{TEMPLATE_KEY} with {} put back: {e}",
            restored.join(" and ")
        )),
    })?;
    if let Some(pl) = pl {
        let h = Handle::from_message(&header)?;
        if h.get_long_array("pl")? != pl {
            return Err(GribError::Invalid(
                "geography.pl put back into grib.template is not the header's pl \
                 (a pl of another length or grid)"
                    .into(),
            ));
        }
    }
    Ok(header)
}

/// Checks that `header` is exactly one GRIB message whose structure passes
/// [`super::grib_scan::scan`].
fn one_message(header: &[u8]) -> Result<(), String> {
    let found = super::grib_scan::scan(header).map_err(|e| e.to_string())?;
    match found.as_slice() {
        [m] if m.offset == 0 && m.len == header.len() as u64 => Ok(()),
        [] => Err("no GRIB message".into()),
        [_] => Err("bytes outside its one GRIB message".into()),
        _ => Err(format!("{} GRIB messages, not one", found.len())),
    }
}

/// The field written on the source's own header, with the edited MARS keys
/// set over it (`spec/convert.md` "GRIB write-back"), and the header's
/// flag octet when it is a GRIB1 constant field's.
fn from_template(
    template: &[u8],
    entry: &Map,
    values: &(impl FieldValues + ?Sized),
    opts: &WriteOptions,
) -> Result<(Handle, Option<u8>), GribError> {
    let mars = section(entry, "mars")?;
    let grib = section(entry, "grib")?;
    let mut h = Handle::from_message(template)?;
    // The stored header is untrusted: a second-order one (which
    // `convert-grib` never stores, ecCodes packing a constant field simply)
    // is checked as a source is before any key that could decode it is
    // read; a GRIB1 one's `bitsPerValue` decodes it.
    if h.get_string("packingType")?
        .starts_with("grid_second_order")
    {
        let budget = DecodeBudget::for_input(template.len() as u64);
        super::grib::checked_data_section(&h, &budget)
            .map_err(|e| GribError::Invalid(format!("grib.{TEMPLATE_KEY}: {e}")))?;
    }
    let source_flag = grib1_unused_bits::constant_field_flag(&h)?;
    apply_mars_edits(&mut h, mars)?;
    // The template's own packing is not always the source's: ecCodes packs
    // its constant field simply when the source was second-order.
    let packing = match (
        &opts.packing,
        get(grib, "packingType").and_then(Value::as_text),
    ) {
        (Some(p), _) => p.clone(),
        (None, Some(p)) => p.to_string(),
        (None, None) => h.get_string("packingType")?,
    };
    let bits = get(grib, "bitsPerValue").and_then(Value::as_i64);
    if !grib_constant::still_holds(&h, values, &packing, bits)? {
        pack(&mut h, grib, values, &packing)?;
    }
    Ok((h, source_flag))
}

/// MARS keys in the order they are written: the level type before the level
/// (which it rescales), both before the parameter (whose defaults depend on
/// them), then the rest in their stored order.
const MARS_ORDER: &[&str] = &["levtype", "levelist", "param"];

/// The GRIB key through which a MARS key is set (ecCodes makes some MARS
/// keys read-only aliases).
fn grib_key_of(mars_key: &str) -> &str {
    match mars_key {
        "levelist" => "level",
        "param" => "paramId",
        "date" => "dataDate",
        "time" => "dataTime",
        other => other,
    }
}

/// A value as ecCodes prints it, for comparing a stored key with the
/// header's (`130.128` text and `130` integers compare by their text).
fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::Text(s) => Some(s.clone()),
        Value::Float(f) => Some(f.to_string()),
        other => other.as_i64().map(|i| i.to_string()),
    }
}

/// The header's MARS value of `key`, as text.
fn header_mars(h: &Handle, key: &str) -> Option<String> {
    let k = format!("mars.{key}");
    if !h.is_defined(&k) || h.is_missing(&k) {
        return None;
    }
    h.get_string(&k).ok()
}

/// `param` as a paramId: GRIB1's `130.128` (table 128) is 130, `x.t` of
/// another ECMWF table is `t·1000 + x`.
fn param_id(v: &Value) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    let s = v.as_text()?;
    match s.split_once('.') {
        None => s.parse().ok(),
        Some((p, "128")) => p.parse().ok(),
        Some((p, t)) => Some(t.parse::<i64>().ok()? * 1000 + p.parse::<i64>().ok()?),
    }
}

/// The header `template` with the MARS keys `mars` set over it as
/// `to-grib` sets them (step 1 of `spec/convert.md` "GRIB write-back").
pub(super) fn template_with_mars(
    template: &[u8],
    mars: &[(Value, Value)],
) -> Result<Vec<u8>, GribError> {
    let mut h = Handle::from_message(template)?;
    apply_mars_edits(&mut h, mars)?;
    h.message()
}

/// Sets every stored MARS key whose value differs from the header's, then
/// checks that ecCodes reads back what was stored; a key it cannot write is
/// refused by name.
fn apply_mars_edits(h: &mut Handle, mars: &[(Value, Value)]) -> Result<(), GribError> {
    let mut keys: Vec<&str> = MARS_ORDER
        .iter()
        .copied()
        .filter(|k| get(mars, k).is_some())
        .collect();
    keys.extend(
        mars.iter()
            .filter_map(|(k, _)| k.as_text())
            .filter(|k| !MARS_ORDER.contains(k)),
    );
    for key in keys {
        let Some(v) = get(mars, key) else { continue };
        if text_of(v).is_none() || same_text(key, v, header_mars(h, key).as_deref()) {
            continue;
        }
        let set = match key {
            "param" => match param_id(v) {
                Some(id) => h.set_long("paramId", id),
                None => Err(GribError::Invalid(format!(
                    "mars.param {v:?} is not a parameter"
                ))),
            },
            k => set_value(h, grib_key_of(k), v),
        };
        set.map_err(|e| GribError::Invalid(format!("mars.{key} cannot be written: {e}")))?;
    }
    for (k, v) in mars {
        let Some(key) = k.as_text() else { continue };
        let want = text_of(v);
        let got = header_mars(h, key);
        if want.is_some() && !same_text(key, v, got.as_deref()) {
            return Err(GribError::Invalid(format!(
                "mars.{key} = {} cannot be written: ecCodes reads back {}",
                want.unwrap_or_default(),
                got.unwrap_or_else(|| "nothing".into())
            )));
        }
    }
    Ok(())
}

/// Whether a stored MARS value and the header's text name the same thing:
/// equal text, equal numbers (`600` and `0600`), or for `param` the same
/// paramId (`130.128` and `130`).
fn same_text(key: &str, stored: &Value, header: Option<&str>) -> bool {
    let (Some(want), Some(got)) = (text_of(stored), header) else {
        return false;
    };
    if want == got {
        return true;
    }
    if key == "param" {
        return param_id(stored).is_some()
            && param_id(&Value::Text(got.to_string())) == param_id(stored);
    }
    match (want.parse::<f64>(), got.parse::<f64>()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Sets `packingType` to `packing`, the precision, the bitmap and the
/// values, and refuses the field when ecCodes writes another packing,
/// naming `packingType`, rather than change it silently. A second-order
/// packing is set after the values, as `grib_set -r` does: set over the
/// template's constant field, ecCodes keeps `grid_simple`; set over a
/// constant field of values, too (refused).
fn pack(
    h: &mut Handle,
    grib: &[(Value, Value)],
    values: &(impl FieldValues + ?Sized),
    packing: &str,
) -> Result<(), GribError> {
    let expected = h.get_long("numberOfDataPoints")?;
    if usize::try_from(expected).ok() != Some(values.len()) {
        return Err(GribError::Invalid(format!(
            "the grid has {expected} points but the object {} values",
            values.len()
        )));
    }
    let missing = grib_complex_pack::source_missing(h, grib, packing)?;
    let second_order = packing.starts_with("grid_second_order");
    // ecCodes cannot repack a template's constant field as complex
    // ("Encoding invalid"): such a packing is set after the values too.
    let late_packing = second_order
        || (grib_scales::scales_by_width(packing) && h.get_string("packingType")? != packing);
    if !late_packing {
        set_packing(h, packing)?;
    }
    if let Some(source) = SourceSimple::of(grib).filter(|_| packing == "grid_simple") {
        if grib_decimal::pack_at_source(h, source, values)? {
            return Ok(());
        }
        if source.has_binary_scale() {
            // ecCodes would drop E and keep D: a coarser quantum.
            grib_decimal::drop_decimal_scaling(h, grib)?;
            return set_values(h, values, false);
        }
    }
    let decimal_ccsds = packing == "grid_ccsds"
        && h.is_defined("decimalScaleFactor")
        && h.get_long("decimalScaleFactor")? != 0;
    if !decimal_ccsds {
        pack_by_eccodes(h, grib, values, packing, second_order)?;
        return recode_complex(h, grib, values, packing, missing);
    }
    // Some ecCodes versions (2.28) pick a CCSDS field's binary scale
    // factor without its decimal one, so that the codes overflow; the
    // message is read back, and when it does not hold the values the field
    // is packed without decimal scaling, wide enough for the source's
    // quantum.
    let mut trial = h.try_clone()?;
    pack_by_eccodes(&mut trial, grib, values, packing, second_order)?;
    if read_back(trial.message_bytes()?, values).is_ok() {
        *h = trial;
        return Ok(());
    }
    grib_decimal::drop_decimal_scaling(h, grib)?;
    set_values(h, values, false)
}

/// A complex-packed field's data section coded again by tgm at the
/// source's order of spatial differencing and bits per value
/// ([`grib_complex_pack`]) when ecCodes' own cannot serve: at an order
/// other than 0 (ecCodes 2.28 writes none; at order 0 when the source's
/// cannot be coded), with missing points coded in the data, or when it
/// does not read the values back. ecCodes' section is kept otherwise, so that a message it
/// wrote comes back as its bytes; tgm's is kept when ecCodes reads the
/// values back from it.
fn recode_complex(
    h: &mut Handle,
    grib: &[(Value, Value)],
    values: &(impl FieldValues + ?Sized),
    packing: &str,
    missing: Missing,
) -> Result<(), GribError> {
    let Some(order) = grib_complex_pack::order_for(grib, packing)? else {
        return Ok(());
    };
    let source_bits = get(grib, "bitsPerValue").and_then(Value::as_i64);
    let bits = source_bits.filter(|b| (1..=62).contains(b)).unwrap_or(1) as u32;
    if order == 0 && missing == Missing::Bitmap && read_back(h.message_bytes()?, values).is_ok() {
        return Ok(());
    }
    // Without differencing when the source's order cannot be coded (codes
    // too wide for the extra descriptors, no more points than the order).
    let mut orders = vec![order];
    if order != 0 {
        orders.push(0);
    }
    for order in orders {
        if let Some(msg) = grib_complex_pack::recode(h, values, order, bits, missing)? {
            if read_back(&msg, values).is_ok() {
                *h = Handle::from_message(&msg)?;
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The rest of [`pack`]: ecCodes packs the values.
fn pack_by_eccodes(
    h: &mut Handle,
    grib: &[(Value, Value)],
    values: &(impl FieldValues + ?Sized),
    packing: &str,
    second_order: bool,
) -> Result<(), GribError> {
    let scales = SourceScales::of(grib).filter(|_| grib_scales::scales_by_width(packing));
    // Decimal scaling is applied after the values, as ecCodes requantises
    // them to the 10^-D quantum and picks the bits that range needs; the
    // values are first set at 32 bits so that requantisation starts from
    // (nearly) the stored values.
    let decimal = get(grib, "decimalScaleFactor")
        .and_then(Value::as_i64)
        .filter(|&d| d != 0 && packing == "grid_simple");
    if decimal.is_some() {
        h.set_long("bitsPerValue", 32)?;
    } else if let Some(b) = get(grib, "bitsPerValue") {
        set_value(h, "bitsPerValue", b)?;
    }
    // spectral_complex scales coefficients by the source's Laplacian
    // operator; outside GRIBEX mode ecCodes fits a new one unless its
    // transient `computeLaplacianOperator` is cleared.
    if packing == "spectral_complex" {
        if let Some(l) = get(grib, "laplacianOperator") {
            if h.is_defined("computeLaplacianOperator") {
                h.set_long("computeLaplacianOperator", 0)?;
            }
            set_value(h, "laplacianOperator", l)?;
        }
        spectral_codes_fill_whole_bytes(h)?;
    }
    // Decimal scaling repacks the values after they are set: ecCodes sets
    // them. A complex field is set once, at its source's scales, below.
    if scales.is_none() || second_order || h.get_string("packingType")? != packing {
        set_values(h, values, decimal.is_none())?;
        keep_constant_width(h, grib, values)?;
    }
    if let Some(d) = decimal {
        h.set_long("changeDecimalPrecision", d)?;
    }
    if h.get_string("packingType")? != packing {
        // As `grib_set -r` repacks: the values read, the packing set, the
        // values set again (ecCodes otherwise packs its codes as values).
        let set = h.get_double_array("values")?;
        set_packing(h, packing)?;
        h.set_double_array("values", &set)?;
    }
    let written = h.get_string("packingType")?;
    if written != packing {
        return Err(GribError::Invalid(format!(
            "packingType {packing} cannot be written for this field: ecCodes packs it as \
             {written} (as it does any constant field); \
             `to-grib --packing {written}` writes it so"
        )));
    }
    if let Some(scales) = scales {
        let extremes = grib_scales::present_extremes(values)?;
        grib_scales::pack_at_source_scales(h, scales, extremes, |h| set_values(h, values, false))?;
    }
    if second_order {
        keep_boustrophedonic(h, grib, values.len())?;
        packed_once_from_simple(h, grib, values, packing)?;
    }
    Ok(())
}

/// ecCodes 2.28's second-order encoder is not idempotent: packed again over
/// its own output (as setting the values at the source's scales does), a
/// section can grow (a byte, at order 3 in GRIB2). The field is packed
/// once more from simple packing, as `grib_set -r` packs a simple source,
/// and that message is kept when it is smaller, reads the values back and
/// keeps every scale.
fn packed_once_from_simple(
    h: &mut Handle,
    grib: &[(Value, Value)],
    values: &(impl FieldValues + ?Sized),
    packing: &str,
) -> Result<(), GribError> {
    let mut fresh = h.try_clone()?;
    let set = fresh.get_double_array("values")?;
    for p in ["grid_simple", packing] {
        fresh.set_string("packingType", p)?;
        fresh.set_double_array("values", &set)?;
    }
    keep_boustrophedonic(&mut fresh, grib, values.len())?;
    for k in ["bitsPerValue", "binaryScaleFactor", "decimalScaleFactor"] {
        if fresh.get_long(k)? != h.get_long(k)? {
            return Ok(());
        }
    }
    let reference = |h: &Handle| h.get_double("referenceValue").map(f64::to_bits);
    if reference(&fresh)? != reference(h)? {
        return Ok(());
    }
    let msg = fresh.message_bytes()?;
    if msg.len() < h.message_bytes()?.len()
        && fresh.get_string("packingType")? == packing
        && read_back(msg, values).is_ok()
    {
        *h = fresh;
    }
    Ok(())
}

/// A second-order source's boustrophedonic ordering, set again: ecCodes
/// packs the field's rows again in that order when the flag is set. Only
/// where `convert-grib` accepts such a field (the stored keys are
/// untrusted): not on a reduced or GRIB1 Gaussian grid, not with a bitmap,
/// and with rows covering the values.
fn keep_boustrophedonic(
    h: &mut Handle,
    grib: &[(Value, Value)],
    points: usize,
) -> Result<(), GribError> {
    let key = super::grib::BOUSTROPHEDONIC_KEY;
    if get(grib, key).and_then(Value::as_i64) != Some(1)
        || !h.is_defined(key)
        || h.get_long(key)? == 1
    {
        return Ok(());
    }
    super::grib::checked_boustrophedonic_rows(h, points as u64)?;
    h.set_long(key, 1)
}

/// Refuses a `spectral_complex` field whose packed coefficients (those
/// outside the unpacked subset, at `bitsPerValue` bits) do not fill whole
/// bytes: ecCodes 2.28 sizes its buffer for the whole bytes only and
/// writes the last partial one past it (a T63 field with a T20 subset at 9
/// bits corrupts the heap; found under valgrind), and writes such a
/// section a byte short, which `convert-grib` refuses.
fn spectral_codes_fill_whole_bytes(h: &Handle) -> Result<(), GribError> {
    let key = |k: &str| h.get_long(k).ok().and_then(|v| u64::try_from(v).ok());
    let (Some(j), Some(js), Some(bits)) = (key("J"), key("JS"), key("bitsPerValue")) else {
        return Ok(());
    };
    let coefficients = |t: u64| (t + 1).checked_mul(t + 2);
    let packed = coefficients(j)
        .zip(coefficients(js))
        .and_then(|(all, subset)| all.checked_sub(subset))
        .and_then(|n| n.checked_mul(bits));
    match packed {
        Some(p) if p % 8 == 0 => Ok(()),
        _ => Err(GribError::Invalid(format!(
            "packingType spectral_complex cannot be written for a T{j} field with a T{js} \
             unpacked subset at {bits} bits: its packed coefficients do not fill whole bytes, \
             and ecCodes 2.28 then writes past its buffer; a width that is a multiple of 8 \
             (or of 4 when the coefficients are even in number) can be written"
        ))),
    }
}

/// Sets the field's values, NaN as bitmap-missing points: a step at a time
/// when `stream` and [`grib_simple::pack_streamed`] packs them, else
/// through ecCodes whole.
fn set_values(
    h: &mut Handle,
    values: &(impl FieldValues + ?Sized),
    stream: bool,
) -> Result<(), GribError> {
    if stream && grib_simple::pack_streamed(h, values)? {
        return Ok(());
    }
    let values = &values.whole()?[..];
    if values.iter().any(|v| v.is_nan()) {
        let missing = missing_value(values)?;
        h.set_long("bitmapPresent", 1)?;
        h.set_double("missingValue", missing)?;
        let filled: Vec<f64> = values
            .iter()
            .map(|&v| if v.is_nan() { missing } else { v })
            .collect();
        h.set_double_array("values", &filled)
    } else {
        h.set_double_array("values", values)
    }
}

/// Packs a constant simple-packed field again at its source's width when
/// ecCodes packed it with no data bits (as it packs any constant field
/// unless its transient `produceLargeConstantFields` is set), so that the
/// source's `bitsPerValue` comes back (`spec/convert.md` "GRIB
/// write-back"). That mode writes E = 0 and D = 0, so only a source
/// without decimal scaling is repacked so, and it is kept only when
/// ecCodes reads back exactly the values the field had with no data bits.
fn keep_constant_width(
    h: &mut Handle,
    grib: &[(Value, Value)],
    values: &(impl FieldValues + ?Sized),
) -> Result<(), GribError> {
    let int = |k| get(grib, k).and_then(Value::as_i64);
    let Some(bits) = int("bitsPerValue").filter(|&b| b > 0) else {
        return Ok(());
    };
    // Other packings code the constant field at another size or scale
    // (JPEG 2000 in 2.6 times the bytes, with D and R reset).
    let simple = h.get_string("packingType")? == "grid_simple";
    let undecimal = int("decimalScaleFactor").unwrap_or(0) == 0;
    if !simple
        || !undecimal
        || h.get_long("bitsPerValue")? != 0
        || !h.is_defined("produceLargeConstantFields")
    {
        return Ok(());
    }
    let mut wide = h.try_clone()?;
    wide.set_long("produceLargeConstantFields", 1)?;
    wide.set_long("bitsPerValue", bits)?;
    set_values(&mut wide, values, false)?;
    wide.set_long("produceLargeConstantFields", 0)?;
    let narrow = h.get_double_array("values")?;
    let back = wide.get_double_array("values")?;
    let same = back.len() == narrow.len()
        && back
            .iter()
            .zip(&narrow)
            .all(|(a, b)| a.to_bits() == b.to_bits());
    if same {
        *h = wide;
    }
    Ok(())
}

/// Sets `packingType` to `packing` when the message has another.
fn set_packing(h: &mut Handle, packing: &str) -> Result<(), GribError> {
    if h.get_string("packingType")? == packing {
        return Ok(());
    }
    h.set_string("packingType", packing)
        .map_err(|e| GribError::Invalid(format!("packingType {packing} cannot be written: {e}")))
}

/// Parses `msg` with ecCodes and checks it decodes to as many values as
/// were written, missing exactly where the object is NaN, each within
/// ecCodes' `packingError` of the value written.
fn read_back(msg: &[u8], values: &(impl FieldValues + ?Sized)) -> Result<(), GribError> {
    let h = Handle::over(msg)?;
    let bitmap = h.is_defined("bitmapPresent") && h.get_long("bitmapPresent")? == 1;
    let tolerance = match h.is_defined("packingError") {
        true => Some(h.get_double("packingError")? * (1.0 + 1e-9)),
        false if grib_scales::scales_by_width(&h.get_string("packingType")?) => {
            Some(grib_scales::half_quantum(&h)? * (1.0 + 1e-9))
        }
        false => None,
    };
    // ecCodes counts a constant GRIB1 field's values from its grid for
    // every element it reads (a pass over `pl` each on a reduced grid), so
    // such a field is read whole.
    let by_elements = !bitmap
        && h.get_string("packingType")? == "grid_simple"
        && h.get_long("bitsPerValue")? != 0
        && h.size("values")? == values.len();
    if by_elements {
        return read_back_by_elements(&h, values, tolerance);
    }
    let values = &values.whole()?[..];
    let mut back = h.get_double_array("values")?;
    let coded_missing = !bitmap
        && h.is_defined("missingValueManagementUsed")
        && h.get_long("missingValueManagementUsed")? != 0;
    if coded_missing {
        super::grib::mark_coded_missing(&h, &mut back)?;
    }
    if bitmap {
        let bitmap = h.get_long_array("bitmap")?;
        for (v, b) in back.iter_mut().zip(&bitmap) {
            if *b == 0 {
                *v = f64::NAN;
            }
        }
    }
    let same_mask = back.len() == values.len()
        && back
            .iter()
            .zip(values)
            .all(|(a, b)| a.is_nan() == b.is_nan());
    if !same_mask {
        return Err(other_mask(back.len(), values.len()));
    }
    compare(&back, values, 0, tolerance)
}

/// The error of a message read back with another count of values or other
/// missing points than were written.
fn other_mask(back: usize, written: usize) -> GribError {
    GribError::Invalid(format!(
        "ecCodes reads the written message back as {back} values, not the {written} written \
         (or with other missing points)"
    ))
}

/// [`read_back`] of a simple-packed message without missing points,
/// [`STEP`] values at a time (ecCodes decodes single elements of simple
/// packing), so that no second copy of the field is held; `values` are
/// read a step at a time too. A NaN among `values` is missing points the
/// message lacks.
fn read_back_by_elements(
    h: &Handle,
    values: &(impl FieldValues + ?Sized),
    tolerance: Option<f64>,
) -> Result<(), GribError> {
    let len = values.len();
    let mut index: Vec<usize> = Vec::with_capacity(STEP.min(len));
    let mut back = vec![0.0; STEP.min(len)];
    values.each_step(&mut |first, want| {
        if want.iter().any(|v| v.is_nan()) {
            return Err(other_mask(len, len));
        }
        index.clear();
        index.extend(first..first + want.len());
        let back = &mut back[..want.len()];
        h.get_double_elements("values", &index, back)?;
        compare(back, want, first, tolerance)
    })
}

/// Refuses a present value of `back` (element `first` onwards) further from
/// `values` than `tolerance` (ecCodes' `packingError`; no check without it).
fn compare(
    back: &[f64],
    values: &[f64],
    first: usize,
    tolerance: Option<f64>,
) -> Result<(), GribError> {
    let Some(tolerance) = tolerance else {
        return Ok(());
    };
    let off = back
        .iter()
        .zip(values)
        .position(|(a, b)| !a.is_nan() && (a - b).abs() > tolerance);
    match off {
        None => Ok(()),
        Some(i) => Err(GribError::Invalid(format!(
            "ecCodes reads value {} of the written message back as {}, not {} \
             (packing error {tolerance})",
            first + i,
            back[i],
            values[i]
        ))),
    }
}

fn from_sample(
    entry: &Map,
    values: &(impl FieldValues + ?Sized),
    opts: &WriteOptions,
) -> Result<Handle, GribError> {
    let geo = section(entry, "geography")?;
    let mars = section(entry, "mars")?;
    let grib = section(entry, "grib")?;
    let mut h = sample_for(geo)?;
    let mut template = get(grib, "productDefinitionTemplateNumber").and_then(Value::as_i64);
    // Set before the grid, which ecCodes resets when the template changes.
    // An ensemble member needs a template that carries `number`: a GRIB1
    // source (whose template ecCodes reports as 0) or a deterministic
    // template is mapped to its ensemble form (0 → 1, 8 → 11).
    if get(mars, "number").is_some() {
        template = Some(match template {
            None | Some(0) => 1,
            Some(8) => 11,
            Some(t) => t,
        });
    }
    if let Some(t) = template {
        h.set_long("productDefinitionTemplateNumber", t)?;
    }

    if let Some(pl) = get(geo, "pl").and_then(Value::as_array) {
        let pl: Vec<i64> = pl
            .iter()
            .map(|v| {
                v.as_i64()
                    .ok_or_else(|| GribError::Invalid("pl holds a non-integer".into()))
            })
            .collect::<Result<_, _>>()?;
        if h.get_long_array("pl")? != pl {
            if let Some(n) = get(geo, "N") {
                set_value(&mut h, "N", n)?;
            }
            h.set_long_array("pl", &pl)?;
        }
    }
    for key in GEOGRAPHY_KEYS.iter().chain(&[super::grib::ALTERNATE_ROWS]) {
        if matches!(*key, "gridType" | "numberOfPoints")
            || (*key == "N" && get(geo, "pl").is_some())
        {
            continue;
        }
        if let Some(v) = get(geo, key) {
            set_value(&mut h, key, v)?;
        }
    }
    // ecCodes keeps the sample's point count when Ni/Nj change.
    if let Some(n) = get(geo, "numberOfPoints").and_then(Value::as_i64) {
        if h.get_long("numberOfDataPoints")? != n {
            h.set_long("numberOfDataPoints", n)?;
        }
    }

    // Level first: setting paramId may pick a default level, never the reverse.
    for key in ["typeOfLevel", "level", "paramId"] {
        if let Some(v) = get(grib, key) {
            set_value(&mut h, key, v)?;
        }
    }
    if get(grib, "paramId").is_none() {
        if let Some(p) = get(mars, "param") {
            set_value(&mut h, "paramId", p)?;
        }
    }
    if get(grib, "level").is_none() {
        if let Some(l) = get(mars, "levelist") {
            set_value(&mut h, "level", l)?;
        }
    }
    if let Some(c) = get(grib, "centre") {
        set_value(&mut h, "centre", c)?;
    }
    let local = ["class", "type", "stream", "expver"];
    if local.iter().any(|k| get(mars, k).is_some()) && !h.is_defined("class") {
        h.set_long("setLocalDefinition", 1)?;
        h.set_long("localDefinitionNumber", 1)?;
    }
    for (mkey, gkey) in MARS_KEYS {
        if let Some(v) = get(mars, mkey) {
            set_value(&mut h, gkey, v)?;
        }
    }

    let packing = opts.packing.as_deref().unwrap_or("grid_simple");
    pack(&mut h, grib, values, packing)?;
    Ok(h)
}

/// A missing-value marker that no present value equals: 9999, or a number
/// larger in magnitude than every value.
fn missing_value(values: &[f64]) -> Result<f64, GribError> {
    let mut present = values.iter().copied().filter(|v| !v.is_nan());
    if !present.clone().any(|v| v == 9999.0) {
        return Ok(9999.0);
    }
    let m = present.try_fold(0.0f64, |m, v| v.is_finite().then(|| m.max(v.abs())));
    m.map(|m| m * 2.0 + 1.0)
        .filter(|c| c.is_finite())
        .ok_or_else(|| GribError::Invalid("no free missing-value marker for the bitmap".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_map(pairs: &[(&str, Value)]) -> Value {
        Value::text_map(pairs.iter().map(|(k, v)| (*k, v.clone())))
    }

    /// An entry without `grib.template` (hand-made, or from an older tgm)
    /// on a regular Gaussian N80 grid.
    fn n80_entry() -> Map {
        let geography = text_map(&[
            ("gridType", Value::from("regular_gg")),
            ("Ni", Value::from(320u64)),
            ("Nj", Value::from(160u64)),
            ("N", Value::from(80u64)),
            ("numberOfPoints", Value::from(51200u64)),
            ("latitudeOfFirstGridPointInDegrees", Value::Float(89.142)),
            ("longitudeOfFirstGridPointInDegrees", Value::Float(0.0)),
            ("latitudeOfLastGridPointInDegrees", Value::Float(-89.142)),
            ("longitudeOfLastGridPointInDegrees", Value::Float(358.875)),
            ("iDirectionIncrementInDegrees", Value::Float(1.125)),
        ]);
        let mut entry = Map::new();
        entry.insert("geography".into(), geography);
        entry.insert("mars".into(), text_map(&[("param", Value::from(167u64))]));
        entry.insert(
            "grib".into(),
            text_map(&[("bitsPerValue", Value::from(16u64))]),
        );
        entry
    }

    #[test]
    fn a_sample_based_gaussian_grid_keeps_its_n() {
        let values: Vec<f64> = (0..51200).map(|i| 270.0 + (i % 97) as f64 * 0.25).collect();
        let msg = field_to_grib(&n80_entry(), &values).unwrap();
        let h = Handle::from_message(&msg).unwrap();
        assert_eq!(h.get_long("N").unwrap(), 80);
        assert_eq!(h.get_long("numberOfDataPoints").unwrap(), 51200);
        assert_eq!(h.get_double_array("values").unwrap().len(), 51200);
    }

    #[test]
    fn a_template_that_is_not_bytes_is_refused_by_name() {
        let mut entry = n80_entry();
        entry.insert(
            "grib".into(),
            text_map(&[(TEMPLATE_KEY, Value::from("not a message"))]),
        );
        let e = field_to_grib(&entry, &[0.0; 4]).unwrap_err().to_string();
        assert!(e.contains("grib.template"), "{e}");
    }

    /// An entry whose template is ecCodes' regular_ll sample with a
    /// constant field (as a second-order source's template is) and whose
    /// source was packed `packing`.
    fn template_entry(packing: &str) -> (Map, usize) {
        let mut h = Handle::from_sample("regular_ll_sfc_grib2").unwrap();
        let n = h.get_long("numberOfDataPoints").unwrap() as usize;
        h.set_double_array("values", &vec![0.0; n]).unwrap();
        let mut entry = Map::new();
        entry.insert("mars".into(), text_map(&[]));
        entry.insert(
            "grib".into(),
            text_map(&[
                (TEMPLATE_KEY, Value::Bytes(h.message().unwrap())),
                ("packingType", Value::from(packing)),
                ("bitsPerValue", Value::from(16u64)),
            ]),
        );
        (entry, n)
    }

    fn packing_of(msg: &[u8]) -> String {
        let h = Handle::from_message(msg).unwrap();
        h.get_string("packingType").unwrap()
    }

    #[test]
    fn a_second_order_source_is_written_second_order() {
        let (entry, n) = template_entry("grid_second_order");
        let values: Vec<f64> = (0..n).map(|i| 270.0 + (i % 23) as f64 * 0.5).collect();
        let msg = field_to_grib(&entry, &values).unwrap();
        assert_eq!(packing_of(&msg), "grid_second_order");
    }

    /// A stored header that is a second-order message (which `convert-grib`
    /// never stores) is checked before any key that could decode it is
    /// read: one whose group widths run past its section is refused, and
    /// is written from when it is whole.
    #[test]
    fn a_second_order_stored_header_is_checked_before_it_is_read() {
        let (mut entry, n) = template_entry("grid_second_order");
        let values: Vec<f64> = (0..n).map(|i| 270.0 + (i % 23) as f64 * 0.5).collect();
        let packed = field_to_grib(&entry, &values).unwrap();
        assert_eq!(packing_of(&packed), "grid_second_order");
        let h = Handle::from_message(&packed).unwrap();
        let s7 = h.get_long("offsetSection7").unwrap() as usize;
        let mut hostile = packed.clone();
        hostile[s7 + 5..s7 + 40].fill(0xff);
        for (header, refused) in [(packed, false), (hostile, true)] {
            let Value::Map(grib) = entry.get_mut("grib").unwrap() else {
                unreachable!()
            };
            grib.retain(|(k, _)| k.as_text() != Some(TEMPLATE_KEY));
            grib.push((Value::from(TEMPLATE_KEY), Value::Bytes(header)));
            match field_to_grib(&entry, &values) {
                Ok(msg) => {
                    assert!(!refused, "a hostile header was written from");
                    assert_eq!(packing_of(&msg), "grid_second_order");
                }
                Err(e) => {
                    let e = e.to_string();
                    assert!(refused, "{e}");
                    assert!(e.contains("grib.template: second-order packing"), "{e}");
                }
            }
        }
    }

    /// A recorded boustrophedonic ordering is set again only where
    /// `convert-grib` accepts it: a field with missing points (a bitmap)
    /// is refused, one without comes back so ordered.
    #[test]
    fn a_recorded_boustrophedonic_ordering_is_set_only_where_it_decodes() {
        let (mut entry, n) = template_entry("grid_second_order");
        let Value::Map(grib) = entry.get_mut("grib").unwrap() else {
            unreachable!()
        };
        grib.push((
            Value::from(super::super::grib::BOUSTROPHEDONIC_KEY),
            Value::from(1u64),
        ));
        let mut values: Vec<f64> = (0..n).map(|i| 270.0 + (i % 23) as f64 * 0.5).collect();
        let msg = field_to_grib(&entry, &values).unwrap();
        let h = Handle::from_message(&msg).unwrap();
        assert_eq!(h.get_long("boustrophedonicOrdering").unwrap(), 1);
        values[3] = f64::NAN;
        let e = field_to_grib(&entry, &values).unwrap_err().to_string();
        assert!(e.contains("boustrophedonic ordering: with a bitmap"), "{e}");
    }

    /// A spectral field whose packed coefficients would not fill whole
    /// bytes is refused before ecCodes packs it (its encoder writes past
    /// its buffer); at 16 bits it is written.
    #[test]
    fn spectral_codes_that_do_not_fill_whole_bytes_are_refused() {
        // The sample's own coefficients, and its header with none.
        let mut h = Handle::from_sample("sh_ml_grib2").unwrap();
        let values = h.get_double_array("values").unwrap();
        let laplacian = h.get_double("laplacianOperator").unwrap();
        h.set_double_array("values", &vec![0.0; values.len()])
            .unwrap();
        let mut entry = Map::new();
        entry.insert("mars".into(), text_map(&[]));
        for (bits, written) in [(16u64, true), (9, false)] {
            entry.insert(
                "grib".into(),
                text_map(&[
                    (TEMPLATE_KEY, Value::Bytes(h.message().unwrap())),
                    ("packingType", Value::from("spectral_complex")),
                    ("bitsPerValue", Value::from(bits)),
                    ("laplacianOperator", Value::Float(laplacian)),
                ]),
            );
            match field_to_grib(&entry, &values) {
                Ok(msg) => assert!(written, "{bits} bits: {} bytes written", msg.len()),
                Err(e) => {
                    let e = e.to_string();
                    assert!(!written, "{bits} bits: {e}");
                    assert!(e.contains("do not fill whole bytes"), "{e}");
                }
            }
        }
    }

    #[test]
    fn a_constant_second_order_field_is_refused_unless_another_packing_is_asked() {
        let (entry, n) = template_entry("grid_second_order");
        let values = vec![280.0; n];
        let e = field_to_grib(&entry, &values).unwrap_err().to_string();
        assert!(e.contains("packingType grid_second_order"), "{e}");
        let opts = WriteOptions {
            packing: Some("grid_simple".into()),
        };
        let msg = field_to_grib_with(&entry, &values, &opts).unwrap();
        assert_eq!(packing_of(&msg), "grid_simple");
    }

    #[test]
    fn a_message_that_reads_back_other_values_is_refused() {
        let (entry, n) = template_entry("grid_simple");
        let values: Vec<f64> = (0..n).map(|i| 270.0 + (i % 23) as f64 * 0.5).collect();
        let msg = field_to_grib(&entry, &values).unwrap();
        assert!(read_back(&msg, &values[..]).is_ok());
        let shifted: Vec<f64> = values.iter().map(|v| v + 1.0).collect();
        let e = read_back(&msg, &shifted[..]).unwrap_err().to_string();
        assert!(e.contains("packing error"), "{e}");
    }

    /// Object 0 of a message holding `values` through `pipeline`.
    fn encoded(values: &[f64], pipeline: tgm::PipelineBuilder) -> Vec<u8> {
        let desc = ObjectDescriptor::new(Dtype::Float64, vec![values.len() as u64])
            .with_pipeline(&pipeline);
        let data: &[u8] = bytemuck::cast_slice(values);
        let opts = tgm::EncodeOptions::new();
        tgm::encode(&tgm::GlobalMetadata::default(), &[(&desc, data)], &opts).unwrap()
    }

    #[test]
    fn a_compressed_object_read_a_step_at_a_time_writes_the_same_message() {
        use tgm::PipelineBuilder;
        let (entry, n) = template_entry("grid_simple");
        let fields = [
            (0..n)
                .map(|i| 270.0 + (i as f64 * 0.1).sin() * 30.0)
                .collect::<Vec<_>>(),
            (0..n).map(|i| -3e-3 + (i % 17) as f64 * 1e-4).collect(),
        ];
        let opts = WriteOptions::default();
        let pipelines = [
            PipelineBuilder::new().simple_packing(16).szip(),
            PipelineBuilder::new().simple_packing(24).szip(),
            PipelineBuilder::new().zstd(),
            PipelineBuilder::new().simple_packing(16).zstd(),
            PipelineBuilder::new().simple_packing(24).zstd(),
        ];
        for values in &fields {
            for pipeline in &pipelines {
                let msg = encoded(values, pipeline.clone());
                let m = tgm::Message::parse(&msg).unwrap();
                let obj = m.object(0).unwrap();
                let decode = tgm::DecodeOptions::default();
                let data = obj.decode(&decode).unwrap();
                let mut whole = Vec::new();
                object_to_grib(&entry, obj.descriptor(), &data, &opts, &mut whole).unwrap();
                let mut pieces = Vec::new();
                let len = object_pieces_to_grib(&entry, &obj, &decode, &opts, &mut pieces)
                    .expect("the pipeline decodes in pieces")
                    .unwrap();
                assert_eq!(len, pieces.len() as u64);
                assert!(whole == pieces, "{pipeline:?}: another message");
                let h = Handle::from_message(&pieces).unwrap();
                assert_eq!(h.get_long("bitsPerValue").unwrap(), 16);
            }
        }
    }

    #[test]
    fn objects_without_pieces_or_compression_are_left_to_the_whole_path() {
        use tgm::PipelineBuilder;
        let (entry, n) = template_entry("grid_simple");
        let values: Vec<f64> = (0..n).map(|i| 280.0 + (i % 9) as f64).collect();
        let pipelines = [
            PipelineBuilder::new().lz4(),
            PipelineBuilder::new().shuffle().zstd(),
            PipelineBuilder::new(),
        ];
        for pipeline in pipelines {
            let msg = encoded(&values, pipeline);
            let m = tgm::Message::parse(&msg).unwrap();
            let obj = m.object(0).unwrap();
            let mut out = Vec::new();
            let decode = tgm::DecodeOptions::default();
            let opts = WriteOptions::default();
            assert!(object_pieces_to_grib(&entry, &obj, &decode, &opts, &mut out).is_none());
            assert!(out.is_empty());
        }
    }

    #[test]
    fn a_compressed_object_that_reads_back_other_values_is_refused() {
        let (entry, n) = template_entry("grid_simple");
        let values: Vec<f64> = (0..n).map(|i| 270.0 + (i % 23) as f64 * 0.5).collect();
        let msg = field_to_grib(&entry, &values).unwrap();
        let shifted: Vec<f64> = values.iter().map(|v| v + 1.0).collect();
        let stored = encoded(
            &shifted,
            tgm::PipelineBuilder::new().simple_packing(16).szip(),
        );
        let m = tgm::Message::parse(&stored).unwrap();
        let obj = m.object(0).unwrap();
        let decode = tgm::DecodeOptions::default();
        let pieces = Pieces::of(&obj, &decode).unwrap();
        let e = read_back(&msg, &pieces).unwrap_err().to_string();
        assert!(e.contains("packing error"), "{e}");
        assert!(read_back(&msg, &values[..]).is_ok());
    }

    #[test]
    fn params_name_the_same_parameter_across_editions() {
        assert_eq!(param_id(&Value::from("130.128")), Some(130));
        assert_eq!(param_id(&Value::from("167")), Some(167));
        assert_eq!(param_id(&Value::from("44.228")), Some(228044));
        assert!(same_text("param", &Value::from(130u64), Some("130.128")));
        assert!(same_text("time", &Value::from(600u64), Some("0600")));
        assert!(!same_text("levelist", &Value::from(850u64), Some("500")));
    }
}
