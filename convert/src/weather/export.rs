//! Tensogram objects written by [`super::convert`] back to GRIB2.
//!
//! Each object becomes one GRIB2 message built from an ecCodes sample for its
//! grid, with the geography, parameter, level, MARS keys and packing
//! precision its `base[i]` entry records. NaN elements become bitmap-missing
//! points.

use tgm::cbor::Value;
use tgm::{DecodedMessage, Dtype, Map};

use super::ffi::Handle;
use super::grib::GEOGRAPHY_KEYS;
use super::GribError;

/// MARS keys set on the output, in order, and the GRIB key each is set
/// through. `param`, `levtype` and `levelist` are written before these,
/// through `paramId`, `typeOfLevel` and `level` (from `base[i].grib`, or
/// `mars.param`/`mars.levelist` when those are absent); `domain` follows
/// from the local definition. This is the list the README documents.
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

/// The GRIB2 messages of every object of `msg`, concatenated.
pub fn message_to_grib(msg: &DecodedMessage) -> Result<Vec<u8>, GribError> {
    let mut out = Vec::new();
    for (i, obj) in msg.objects.iter().enumerate() {
        let entry = msg
            .metadata
            .base
            .get(i)
            .ok_or_else(|| GribError::Invalid(format!("object {i} has no base entry")))?;
        if obj.descriptor.dtype != Dtype::Float64 {
            return Err(GribError::Invalid(format!(
                "object {i} is {}, not float64",
                obj.descriptor.dtype
            )));
        }
        let values: Vec<f64> = obj
            .data
            .chunks_exact(8)
            .map(|c| {
                let mut a = [0u8; 8];
                a.copy_from_slice(c);
                match obj.descriptor.byte_order {
                    tgm::ByteOrder::Big => f64::from_be_bytes(a),
                    tgm::ByteOrder::Little => f64::from_le_bytes(a),
                }
            })
            .collect();
        let grib = field_to_grib(entry, &values)
            .map_err(|e| GribError::Invalid(format!("object {i}: {e}")))?;
        out.extend_from_slice(&grib);
    }
    Ok(out)
}

fn section<'a>(entry: &'a Map, name: &str) -> Result<&'a [(Value, Value)], GribError> {
    entry
        .get(name)
        .and_then(Value::as_map)
        .ok_or_else(|| GribError::Invalid(format!("base entry lacks a {name:?} map")))
}

fn get<'a>(map: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
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

/// One GRIB2 message for one field.
pub fn field_to_grib(entry: &Map, values: &[f64]) -> Result<Vec<u8>, GribError> {
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
    for key in GEOGRAPHY_KEYS {
        if matches!(*key, "gridType" | "numberOfPoints" | "N") {
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

    let expected = h.get_long("numberOfDataPoints")?;
    if usize::try_from(expected).ok() != Some(values.len()) {
        return Err(GribError::Invalid(format!(
            "the grid has {expected} points but the object {} values",
            values.len()
        )));
    }
    h.set_string("packingType", "grid_simple")?;
    // Decimal scaling is applied after the values, as ecCodes requantises
    // them to the 10^-D quantum and picks the bits that range needs; the
    // values are first set at 32 bits so that requantisation starts from
    // (nearly) the stored values.
    let decimal = get(grib, "decimalScaleFactor")
        .and_then(Value::as_i64)
        .filter(|&d| d != 0);
    if decimal.is_some() {
        h.set_long("bitsPerValue", 32)?;
    } else if let Some(b) = get(grib, "bitsPerValue") {
        set_value(&mut h, "bitsPerValue", b)?;
    }
    if values.iter().any(|v| v.is_nan()) {
        let missing = missing_value(values)?;
        h.set_long("bitmapPresent", 1)?;
        h.set_double("missingValue", missing)?;
        let filled: Vec<f64> = values
            .iter()
            .map(|&v| if v.is_nan() { missing } else { v })
            .collect();
        h.set_double_array("values", &filled)?;
    } else {
        h.set_double_array("values", values)?;
    }
    if let Some(d) = decimal {
        h.set_long("changeDecimalPrecision", d)?;
    }
    h.message()
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
