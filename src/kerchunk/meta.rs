//! Dimension names of an object's array: its own or its message's
//! `dim_names`, else its grid's ([`crate::view::grid_coordinates`]), else
//! `<name>_dim_<i>`. See `spec/kerchunk.md` §2.

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

/// Dimension names of an object without listed ones: its grid's `grid`,
/// else `<name>_dim_<i>`.
pub fn grid_dims(ndim: usize, name: &str, grid: Option<&[&str]>) -> Vec<String> {
    match grid {
        Some(g) if g.len() == ndim => g.iter().map(|d| d.to_string()).collect(),
        _ => (0..ndim).map(|i| format!("{name}_dim_{i}")).collect(),
    }
}
