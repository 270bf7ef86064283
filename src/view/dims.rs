//! Dimension names of an object's array: its own or its message's
//! `dim_names`, else its grid's ([`super::grid_dims`]), else
//! `<name>_dim_<i>`. See `spec/kerchunk.md` §2.

use super::grid::grid_dims;
use crate::cbor::Value;
use crate::descriptor::Map;

/// The entry's `dim_names`, else the message's, when it names `ndim`
/// dimensions.
pub fn listed_dims(entry: Option<&Map>, extra: &Map, ndim: usize) -> Option<Vec<String>> {
    let names: Vec<String> = entry
        .and_then(|e| e.get("dim_names"))
        .or_else(|| extra.get("dim_names"))
        .and_then(Value::as_array)?
        .iter()
        .map(|v| v.as_text().map(str::to_owned))
        .collect::<Option<_>>()?;
    (names.len() == ndim).then_some(names)
}

/// Dimension names of an object without listed ones: `grid`'s when it
/// names `ndim`, else `<name>_dim_<i>`.
pub fn unlisted_dims(ndim: usize, name: &str, grid: Option<&[&str]>) -> Vec<String> {
    match grid {
        Some(g) if g.len() == ndim => g.iter().map(|d| d.to_string()).collect(),
        _ => (0..ndim).map(|i| format!("{name}_dim_{i}")).collect(),
    }
}

/// The dimension names of an object of `shape` named `name` whose
/// metadata entry is `entry` in a message whose `_extra_` is `extra`:
/// listed, else its grid's, else `<name>_dim_<i>`.
pub fn object_dims(entry: Option<&Map>, extra: &Map, shape: &[u64], name: &str) -> Vec<String> {
    object_dims_with_grid(entry, extra, shape, name, grid_dims)
}

/// [`object_dims`] with the grid's dimension names decided by `grid`
/// (given the object's `geography` and shape), which is asked only when
/// no names are listed. Kerchunk references give a grid's names to the
/// first grid holding them only (`spec/kerchunk.md` §2.1).
pub fn object_dims_with_grid(
    entry: Option<&Map>,
    extra: &Map,
    shape: &[u64],
    name: &str,
    grid: impl FnOnce(&Value, &[u64]) -> Option<Vec<&'static str>>,
) -> Vec<String> {
    listed_dims(entry, extra, shape.len()).unwrap_or_else(|| {
        let grid = entry
            .and_then(|e| e.get("geography"))
            .and_then(|g| grid(g, shape));
        unlisted_dims(shape.len(), name, grid.as_deref())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pairs: &[(&str, Value)]) -> Map {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    fn names(v: &[&str]) -> Value {
        Value::Array(v.iter().map(|&s| s.into()).collect())
    }

    #[test]
    fn listed_names_win_over_the_grid_and_must_fit_the_rank() {
        let e = entry(&[("dim_names", names(&["k", "j", "i"]))]);
        assert_eq!(
            object_dims(Some(&e), &Map::new(), &[2, 3, 4], "v"),
            ["k", "j", "i"]
        );
        assert_eq!(
            object_dims(Some(&e), &Map::new(), &[3, 4], "v"),
            ["v_dim_0", "v_dim_1"]
        );
        let extra = entry(&[("dim_names", names(&["y", "x"]))]);
        assert_eq!(object_dims(None, &extra, &[3, 4], "v"), ["y", "x"]);
    }

    #[test]
    fn a_one_axis_field_with_a_geography_is_on_values() {
        let e = entry(&[(
            "geography",
            Value::text_map([("gridType", Value::from("unstructured_grid"))]),
        )]);
        assert_eq!(object_dims(Some(&e), &Map::new(), &[10], "v"), ["values"]);
        assert_eq!(
            object_dims(Some(&e), &Map::new(), &[2, 5], "v"),
            ["v_dim_0", "v_dim_1"]
        );
    }
}
