//! The keys a weather user types, as convert-grib stores them
//! (`spec/convert.md`, GRIB): a field's parameter is named three ways
//! (`mars.param`, `grib.paramId`, `grib.shortName`), and GRIB1 writes
//! `mars.param` with its table (`130.128`) where users type `130`.

use tgm::cbor::Value;
use tgm::GlobalMetadata;

/// Clause keys that name a field's parameter: a clause on any of them
/// compares with every name the object's parameter has.
const PARAM_KEYS: [&str; 6] = [
    "param",
    "mars.param",
    "shortName",
    "grib.shortName",
    "paramId",
    "grib.paramId",
];

/// Where convert-grib keeps the names of a field's parameter.
const PARAM_NAMES: [&str; 3] = ["mars.param", "grib.paramId", "grib.shortName"];

/// The keys that tell the fields of a weather archive apart, in the order
/// `tgm ls` shows them: name, parameter, level, date and time, step,
/// ensemble member.
pub const DISTINGUISHING: [&str; 8] = [
    "name",
    "mars.param",
    "mars.levtype",
    "mars.levelist",
    "mars.date",
    "mars.time",
    "mars.step",
    "mars.number",
];

/// The [`DISTINGUISHING`] keys that some object of a message with `meta`
/// and `num_objects` objects has, in their order; `shown[i]` already
/// true keeps key `i`.
pub fn mark_distinguishing(meta: &GlobalMetadata, num_objects: usize, shown: &mut [bool]) {
    for (k, s) in DISTINGUISHING.iter().zip(shown.iter_mut()) {
        *s = *s || (0..num_objects).any(|o| meta.lookup(Some(o), k).is_some());
    }
}

/// Whether clause key `key` names the parameter.
pub fn is_param_key(key: &str) -> bool {
    PARAM_KEYS.contains(&key)
}

/// Every value naming object `object`'s parameter: `key` itself first,
/// then the names convert-grib stores.
pub fn param_names<'m>(
    meta: &'m GlobalMetadata,
    object: Option<usize>,
    key: &str,
) -> Vec<&'m Value> {
    std::iter::once(key)
        .chain(PARAM_NAMES.into_iter().filter(|k| *k != key))
        .filter_map(|k| meta.lookup(object, k))
        .collect()
}

/// A parameter as a paramId: `130`, GRIB1's `130.128` (ECMWF table 128)
/// is 130, `x.t` of another ECMWF table is `t·1000 + x`.
pub fn param_id(text: &str) -> Option<u64> {
    match text.split_once('.') {
        None => text.parse().ok(),
        Some((p, "128")) => p.parse().ok(),
        Some((p, t)) => t
            .parse::<u64>()
            .ok()?
            .checked_mul(1000)?
            .checked_add(p.parse().ok()?),
    }
}

/// Whether a stored parameter name `v` and typed text `want` name the
/// same parameter: equal as `value_matches` says, or the same paramId.
pub fn same_param(v: &Value, want: &str) -> bool {
    if tgm::file::value_matches(v, want) {
        return true;
    }
    let stored = match v {
        Value::Text(t) => param_id(t),
        other => other.as_u64(),
    };
    stored.is_some() && stored == param_id(want)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grib1_param_with_its_table_is_the_number_typed() {
        for (stored, want) in [
            (Value::from("130.128"), "130"),
            (Value::from(130u64), "130.128"),
            (Value::from("130"), "130.128"),
            (Value::from("3.228"), "228003"),
            (Value::from("t"), "t"),
        ] {
            assert!(same_param(&stored, want), "{stored:?} {want}");
        }
        for (stored, want) in [
            (Value::from("130.128"), "131"),
            (Value::from("130.129"), "130"),
            (Value::from("t"), "130"),
            (Value::from(130u64), "t"),
        ] {
            assert!(!same_param(&stored, want), "{stored:?} {want}");
        }
        assert_eq!(param_id("1.99999999999999999"), None);
    }
}
