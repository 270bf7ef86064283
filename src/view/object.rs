//! What one object's metadata entry says about its place in a dataset:
//! its variable name, the keys it is stacked along and its attributes,
//! as cfgrib names and shows GRIB fields (`spec/kerchunk.md` §2).

use std::collections::BTreeMap;

use super::coord::{reference_time, step_hours, Coord};
use crate::cbor::Value;
use crate::descriptor::Map;

/// One object in the dataset view.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectView {
    /// Variable name ([`variable_name`]).
    pub name: String,
    /// Keys it is stacked along ([`stack_keys`]).
    pub keys: BTreeMap<String, Coord>,
    /// Variable attributes ([`attributes`]).
    pub attrs: Map,
}

/// The view of object `o` of message `m` whose metadata entry is `entry`.
pub fn object_view(entry: Option<&Map>, m: usize, o: usize) -> ObjectView {
    ObjectView {
        name: variable_name(entry, m, o),
        keys: stack_keys(entry),
        attrs: attributes(entry),
    }
}

fn section<'e>(entry: Option<&'e Map>, key: &str) -> Option<&'e Value> {
    entry.and_then(|e| e.get(key))
}

fn known_text(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_text)
        .filter(|s| !matches!(*s, "" | "unknown" | "~"))
}

/// The variable name of an object: GRIB's `grib.cfVarName` (cfgrib's
/// name) when known, else `grib.shortName`, else `mars.param`, else `name`,
/// else `object_<m>_<o>`; a `/` (a zarr path separator) becomes `_`, and
/// a leading `.` (zarr's metadata keys) becomes `_`.
pub fn variable_name(entry: Option<&Map>, m: usize, o: usize) -> String {
    let grib = section(entry, "grib");
    let cf = known_text(grib.and_then(|g| g.get("cfVarName")));
    let short = known_text(grib.and_then(|g| g.get("shortName")));
    let mars_param = section(entry, "mars").and_then(|v| v.get("param"));
    let raw = match (cf.or(short), mars_param, section(entry, "name")) {
        (Some(s), _, _) => s.to_owned(),
        (None, Some(p), _) => scalar_text(p),
        (None, None, Some(n)) => scalar_text(n),
        (None, None, None) => format!("object_{m}_{o}"),
    };
    let mut s = raw.replace('/', "_");
    if s.is_empty() || s.starts_with('.') {
        s.insert(0, '_');
    }
    s
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::Text(t) => t.clone(),
        other => match other.to_json_value() {
            serde_json::Value::String(s) => s,
            j => j.to_string(),
        },
    }
}

/// MARS keys named after GRIB's `typeOfLevel` (`isobaricInhPa`, `hybrid`)
/// as cfgrib names its level coordinate, with float values (cfgrib reads
/// `level:float`).
const LEVEL_KEYS: [&str; 1] = ["levelist"];

/// The keys an object is stacked along: its MARS keys but `param`, with
/// cfgrib's times: integer `date` and `time` become one `time` (the
/// forecast reference time, [`Coord::Time`]), an integer `step` (hours) a
/// [`Coord::Span`]; a level key is named after GRIB's `typeOfLevel` when
/// the object has one.
pub fn stack_keys(entry: Option<&Map>) -> BTreeMap<String, Coord> {
    let Some(mars) = section(entry, "mars").and_then(Value::as_map) else {
        return BTreeMap::new();
    };
    let level_type = known_text(section(entry, "grib").and_then(|g| g.get("typeOfLevel")));
    let mut out = BTreeMap::new();
    for (k, v) in mars {
        let Some(k) = k.as_text() else { continue };
        match k {
            "param" => {}
            "step" => {
                let c = step_hours(v).map_or_else(|| Coord::of(v), Coord::Span);
                out.insert(k.to_owned(), c);
            }
            _ if LEVEL_KEYS.contains(&k) && level_type.is_some() => {
                let c = v.as_f64().map_or_else(|| Coord::of(v), Coord::Float);
                out.insert(level_type.unwrap_or(k).to_owned(), c);
            }
            _ => {
                out.insert(k.to_owned(), Coord::of(v));
            }
        }
    }
    let date = out.get("date").and_then(int_of);
    let time = out.get("time").and_then(int_of);
    if let Some(t) = date.zip(time).and_then(|(d, t)| reference_time(d, t)) {
        out.remove("date");
        out.insert("time".into(), Coord::Time(t));
    }
    out
}

fn int_of(c: &Coord) -> Option<i64> {
    match c {
        Coord::Int(i) => Some(*i),
        _ => None,
    }
}

/// GRIB keys cfgrib shows on every variable as `GRIB_<key>`
/// (its `DATA_ATTRIBUTES_KEYS` and `EXTRA_DATA_ATTRIBUTES_KEYS`), looked
/// up in the `grib` section, then `geography`.
pub const GRIB_ATTRS: [&str; 19] = [
    "paramId",
    "dataType",
    "numberOfPoints",
    "typeOfLevel",
    "stepUnits",
    "stepType",
    "gridType",
    "uvRelativeToGrid",
    "shortName",
    "units",
    "name",
    "cfName",
    "cfVarName",
    "missingValue",
    "totalNumber",
    "numberOfDirections",
    "numberOfFrequencies",
    "NV",
    "gridDefinitionDescription",
];

/// Geography keys cfgrib shows as `GRIB_<key>` for a grid type (its
/// `GRID_TYPE_MAP`, for the grids `convert-grib` describes).
fn grid_attrs(grid_type: &str) -> &'static [&'static str] {
    match grid_type {
        "regular_ll" => &[
            "Nx",
            "iDirectionIncrementInDegrees",
            "iScansNegatively",
            "longitudeOfFirstGridPointInDegrees",
            "longitudeOfLastGridPointInDegrees",
            "Ny",
            "jDirectionIncrementInDegrees",
            "jPointsAreConsecutive",
            "jScansPositively",
            "latitudeOfFirstGridPointInDegrees",
            "latitudeOfLastGridPointInDegrees",
        ],
        "regular_gg" => &[
            "N",
            "Ni",
            "Nj",
            "iDirectionIncrementInDegrees",
            "iScansNegatively",
            "jScansPositively",
            "jPointsAreConsecutive",
            "longitudeOfFirstGridPointInDegrees",
            "longitudeOfLastGridPointInDegrees",
            "latitudeOfFirstGridPointInDegrees",
            "latitudeOfLastGridPointInDegrees",
        ],
        "reduced_gg" => &["N", "pl"],
        _ => &[],
    }
}

/// ecCodes' aliases of geography keys: `Nx`/`Ny` are `Ni`/`Nj`.
fn geography_key(key: &str) -> &str {
    match key {
        "Nx" => "Ni",
        "Ny" => "Nj",
        k => k,
    }
}

/// The variable attributes of an entry: its `cf` map, then cfgrib's:
/// `GRIB_<key>` for [`GRIB_ATTRS`] and the grid type's geography keys,
/// `units` (GRIB `units`), `long_name` (`name`) and `standard_name`
/// (`cfName`).
pub fn attributes(entry: Option<&Map>) -> Map {
    let mut out = Map::new();
    if let Some(cf) = section(entry, "cf").and_then(Value::as_map) {
        for (k, v) in cf {
            if let Some(k) = k.as_text() {
                out.insert(k.to_owned(), v.clone());
            }
        }
    }
    let grib = section(entry, "grib");
    let geo = section(entry, "geography");
    let lookup = |k: &str| {
        grib.and_then(|g| g.get(k))
            .or_else(|| geo.and_then(|g| g.get(k)))
    };
    for k in GRIB_ATTRS {
        if let Some(v) = lookup(k) {
            out.insert(format!("GRIB_{k}"), v.clone());
        }
    }
    let grid_type = geo.and_then(|g| g.get("gridType")).and_then(Value::as_text);
    for k in grid_attrs(grid_type.unwrap_or_default()) {
        if let Some(v) = geo.and_then(|g| g.get(geography_key(k))) {
            out.insert(format!("GRIB_{k}"), v.clone());
        }
    }
    for (attr, key) in [
        ("units", "units"),
        ("long_name", "name"),
        ("standard_name", "cfName"),
    ] {
        if let Some(v) = grib.and_then(|g| g.get(key)) {
            out.entry(attr.to_owned()).or_insert_with(|| v.clone());
        }
    }
    out
}

/// GRIB keys cfgrib shows on the dataset as `GRIB_<key>` (its
/// `GLOBAL_ATTRIBUTES_KEYS`).
pub const GLOBAL_GRIB_ATTRS: [&str; 4] = ["edition", "centre", "centreDescription", "subCentre"];

/// The `Conventions` attribute of a dataset of GRIB fields (cfgrib's).
pub const GRIB_CONVENTIONS: &str = "CF-1.7";

/// The dataset attributes one object's entry gives, as cfgrib's for a
/// GRIB field: `GRIB_<key>` for [`GLOBAL_GRIB_ATTRS`], `Conventions`
/// ([`GRIB_CONVENTIONS`]) and `institution` (`centreDescription`). A
/// dataset keeps those every GRIB object shares.
pub fn dataset_attributes(entry: Option<&Map>) -> Map {
    let mut out = Map::new();
    let Some(grib) = section(entry, "grib").filter(|g| g.as_map().is_some()) else {
        return out;
    };
    out.insert("Conventions".into(), Value::Text(GRIB_CONVENTIONS.into()));
    for k in GLOBAL_GRIB_ATTRS {
        if let Some(v) = grib.get(k) {
            out.insert(format!("GRIB_{k}"), v.clone());
        }
    }
    if let Some(v) = grib.get("centreDescription") {
        out.insert("institution".into(), v.clone());
    }
    out
}

/// CF attributes of a coordinate named `key`, as cfgrib gives them.
pub fn coordinate_attributes(key: &str) -> &'static [(&'static str, &'static str)] {
    match key {
        "number" => &[
            ("long_name", "ensemble member numerical id"),
            ("units", "1"),
            ("standard_name", "realization"),
        ],
        "time" => &[
            ("long_name", "initial time of forecast"),
            ("standard_name", "forecast_reference_time"),
        ],
        "step" => &[
            ("long_name", "time since forecast_reference_time"),
            ("standard_name", "forecast_period"),
        ],
        "valid_time" => &[("standard_name", "time"), ("long_name", "time")],
        "latitude" => &[
            ("units", "degrees_north"),
            ("standard_name", "latitude"),
            ("long_name", "latitude"),
        ],
        "longitude" => &[
            ("units", "degrees_east"),
            ("standard_name", "longitude"),
            ("long_name", "longitude"),
        ],
        "isobaricInhPa" => &[
            ("long_name", "pressure"),
            ("units", "hPa"),
            ("positive", "down"),
            ("stored_direction", "decreasing"),
            ("standard_name", "air_pressure"),
        ],
        "isobaricInPa" => &[
            ("long_name", "pressure"),
            ("units", "Pa"),
            ("positive", "down"),
            ("stored_direction", "decreasing"),
            ("standard_name", "air_pressure"),
        ],
        "hybrid" => &[
            ("units", "1"),
            ("positive", "down"),
            ("long_name", "hybrid level"),
            (
                "standard_name",
                "atmosphere_hybrid_sigma_pressure_coordinate",
            ),
        ],
        "heightAboveGround" => &[
            ("units", "m"),
            ("positive", "up"),
            ("long_name", "height above the surface"),
            ("standard_name", "height"),
        ],
        _ => &[],
    }
}

/// Stacking keys that, with one value in a variable, are scalar
/// coordinates (as cfgrib shows them) when every variable holding them
/// agrees, rather than `MARS_<key>` attributes.
pub const SCALAR_COORDINATE_KEYS: [&str; 3] = ["number", "time", "step"];

/// The stacking dimensions that come first, in cfgrib's order (ensemble
/// member, reference time, step); the level and other keys follow.
pub const STACK_ORDER: [&str; 4] = ["number", "date", "time", "step"];

/// The dimension order of the stacking keys `varying`: those named in
/// `order` (the caller's, else [`STACK_ORDER`]) in its order, then the
/// others sorted.
pub fn stack_order<S: AsRef<str>>(varying: &[S], order: Option<&[S]>) -> Vec<String> {
    let mut rest: Vec<&str> = varying.iter().map(AsRef::as_ref).collect();
    rest.sort_unstable();
    let first: Vec<&str> = match order {
        Some(o) => o.iter().map(AsRef::as_ref).collect(),
        None => STACK_ORDER.to_vec(),
    };
    let mut out: Vec<String> = Vec::with_capacity(rest.len());
    for k in first {
        if rest.contains(&k) && !out.iter().any(|o| o == k) {
            out.push(k.to_owned());
        }
    }
    for k in rest {
        if !out.iter().any(|o| o == k) {
            out.push(k.to_owned());
        }
    }
    out
}

/// Whether a stacking coordinate runs from its largest value (cfgrib
/// stores pressure levels top-down).
pub fn descending(key: &str) -> bool {
    matches!(key, "isobaricInhPa" | "isobaricInPa")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_zarr_paths() {
        let mut e = Map::new();
        e.insert("name".into(), Value::Text("a/b".into()));
        assert_eq!(variable_name(Some(&e), 0, 0), "a_b");
        e.insert("name".into(), Value::Text(".zarray".into()));
        assert_eq!(variable_name(Some(&e), 0, 0), "_.zarray");
        e.insert(
            "mars".into(),
            Value::text_map([("param", Value::Text("130".into()))]),
        );
        assert_eq!(variable_name(Some(&e), 0, 0), "130");
        e.insert(
            "grib".into(),
            Value::text_map([("shortName", Value::Text("2t".into()))]),
        );
        assert_eq!(variable_name(Some(&e), 0, 0), "2t");
        e.insert(
            "grib".into(),
            Value::text_map([
                ("shortName", Value::Text("2t".into())),
                ("cfVarName", Value::Text("t2m".into())),
            ]),
        );
        assert_eq!(variable_name(Some(&e), 0, 0), "t2m");
        e.insert(
            "grib".into(),
            Value::text_map([("shortName", Value::Text("unknown".into()))]),
        );
        assert_eq!(variable_name(Some(&e), 0, 0), "130");
        assert_eq!(variable_name(None, 2, 5), "object_2_5");
    }

    #[test]
    fn stacking_dimensions_come_in_cfgribs_order() {
        let varying = ["isobaricInhPa", "time", "number", "expver"];
        assert_eq!(
            stack_order(&varying, None),
            ["number", "time", "expver", "isobaricInhPa"]
        );
        assert_eq!(
            stack_order(&varying, Some(&["time", "isobaricInhPa"])),
            ["time", "isobaricInhPa", "expver", "number"]
        );
    }

    #[test]
    fn date_and_time_become_one_reference_time() {
        let mut e = Map::new();
        e.insert(
            "mars".into(),
            Value::text_map([
                ("param", Value::Text("130".into())),
                ("date", Value::Uint(20170102)),
                ("time", Value::Uint(1200)),
                ("step", Value::Uint(6)),
                ("levelist", Value::Uint(500)),
            ]),
        );
        e.insert(
            "grib".into(),
            Value::text_map([("typeOfLevel", Value::Text("isobaricInhPa".into()))]),
        );
        let keys = stack_keys(Some(&e));
        let want: BTreeMap<String, Coord> = [
            ("time".to_owned(), Coord::Time(1_483_358_400)),
            ("step".to_owned(), Coord::Span(6)),
            ("isobaricInhPa".to_owned(), Coord::Float(500.0)),
        ]
        .into_iter()
        .collect();
        assert_eq!(keys, want);
    }
}
