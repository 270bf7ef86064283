//! Dimension names of an object's array: its own or its message's
//! `dim_names`, else its grid's ([`crate::view::grid_coordinates`]), else
//! `<name>_dim_<i>`. See `spec/kerchunk.md` §2.

use crate::cbor::Value;
use crate::descriptor::Map;
use crate::view::GridCoordinates;

/// Dimension names: the entry's `dim_names`, else the message's, else
/// those of `grid`, else `<name>_dim_<i>`.
pub fn dim_names(
    entry: Option<&Map>,
    extra: &Map,
    ndim: usize,
    name: &str,
    grid: Option<&GridCoordinates>,
) -> Vec<String> {
    let listed = entry
        .and_then(|e| e.get("dim_names"))
        .or_else(|| extra.get("dim_names"))
        .and_then(Value::as_array)
        .and_then(|a| a.iter().map(|v| v.as_text().map(str::to_owned)).collect());
    match (listed, grid) {
        (Some(names), _) if Vec::len(&names) == ndim => names,
        (_, Some(g)) if g.dims.len() == ndim => g.dims.iter().map(|d| d.to_string()).collect(),
        _ => (0..ndim).map(|i| format!("{name}_dim_{i}")).collect(),
    }
}
