//! The core's dataset view (`tgm::view`) for the xarray backend: what
//! each object is in a dataset, computed natively so that `tgm refs` and
//! `xr.open_dataset(engine="tgm")` follow one rule.

use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use tgm::view::{self, Coord};

use crate::convert::{map_to_py, py_to_map, py_to_value, KeyPath};

/// A stacking key's value as `(kind, value)`: kind `float`, `int`,
/// `text`, `time` (seconds since 1970) or `span` (hours).
fn coord_to_py(py: Python<'_>, c: &Coord) -> PyResult<PyObject> {
    let pair = match c {
        Coord::Float(f) => ("float", f.into_pyobject(py)?.into_any()),
        Coord::Int(i) => ("int", i.into_pyobject(py)?.into_any()),
        Coord::Text(t) => ("text", t.into_pyobject(py)?.into_any()),
        Coord::Time(t) => ("time", t.into_pyobject(py)?.into_any()),
        Coord::Span(s) => ("span", s.into_pyobject(py)?.into_any()),
    };
    Ok(
        PyTuple::new(py, [pair.0.into_pyobject(py)?.into_any(), pair.1])?
            .into_any()
            .unbind(),
    )
}

/// `(name, keys, attrs, dataset_attrs)` of object `o` of message `m`
/// with metadata entry `entry`: `keys` maps each stacking key to
/// `(kind, value)` (`tgm::view`).
#[pyfunction]
#[pyo3(signature = (entry, m, o))]
pub fn view_object(
    py: Python<'_>,
    entry: Option<&Bound<'_, PyAny>>,
    m: usize,
    o: usize,
) -> PyResult<(String, PyObject, PyObject, PyObject)> {
    let entry = entry
        .filter(|e| !e.is_none())
        .map(|e| py_to_map(e, &KeyPath::root("base")))
        .transpose()?;
    let v = view::object_view(entry.as_ref(), m, o);
    let keys = PyDict::new(py);
    for (k, c) in &v.keys {
        keys.set_item(k, coord_to_py(py, c)?)?;
    }
    Ok((
        v.name,
        keys.into_any().unbind(),
        map_to_py(py, &v.attrs)?,
        map_to_py(py, &view::dataset_attributes(entry.as_ref()))?,
    ))
}

/// The dimension names an object of `ndim` axes lists: its entry's
/// `dim_names`, else the message's (`extra`), when they name `ndim`
/// strings; else None (`tgm::view::listed_dims`).
#[pyfunction]
#[pyo3(signature = (entry, extra, ndim))]
pub fn view_listed_dims(
    entry: Option<&Bound<'_, PyAny>>,
    extra: Option<&Bound<'_, PyAny>>,
    ndim: usize,
) -> PyResult<Option<Vec<String>>> {
    let map = |v: Option<&Bound<'_, PyAny>>, at: &str| {
        v.filter(|e| !e.is_none())
            .map(|e| py_to_map(e, &KeyPath::root(at)))
            .transpose()
    };
    let entry = map(entry, "base")?;
    let extra = map(extra, "_extra_")?.unwrap_or_default();
    Ok(view::listed_dims(entry.as_ref(), &extra, ndim))
}

/// One grid coordinate as Python sees it: `(name, dims, values, attrs)`,
/// `values` a float64 array of the coordinate's shape.
type PyGridCoordinate = (&'static str, Vec<&'static str>, PyObject, PyObject);

/// `(dims, [(name, dims, values, attrs)])`: the grid of a field of `shape`
/// whose `geography` section is `geography` (values float64 arrays), or
/// None where the core gives the field no grid dimensions
/// (`tgm::view::grid_coordinates`).
#[pyfunction]
pub fn view_grid(
    py: Python<'_>,
    geography: &Bound<'_, PyAny>,
    shape: Vec<u64>,
) -> PyResult<Option<(Vec<&'static str>, Vec<PyGridCoordinate>)>> {
    let geo = py_to_value(geography, &KeyPath::root("geography"))?;
    let Some(g) = py.allow_threads(|| view::grid_coordinates(&geo, &shape)) else {
        return Ok(None);
    };
    let coords = g
        .coords
        .iter()
        .map(|c| grid_coordinate_to_py(py, c))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Some((g.dims, coords)))
}

/// One grid coordinate as Python sees it.
fn grid_coordinate_to_py(py: Python<'_>, c: &view::GridCoordinate) -> PyResult<PyGridCoordinate> {
    let a = PyDict::new(py);
    for (k, val) in &c.attrs {
        a.set_item(k, val)?;
    }
    let shape: Vec<usize> = c.shape.iter().map(|&n| n as usize).collect();
    let values = PyArray1::from_slice(py, &c.values)
        .reshape(shape)?
        .into_any()
        .unbind();
    Ok((c.name, c.dims.clone(), values, a.into_any().unbind()))
}

/// The grids of one dataset: a grid's coordinate names go to the first
/// grid holding them (`tgm::view::TakenGrids`, `spec/kerchunk.md` §2.1),
/// as in `tgm refs`.
#[pyclass(name = "ViewGrids", module = "tgm._native")]
#[derive(Default)]
pub struct ViewGrids(view::TakenGrids);

#[pymethods]
impl ViewGrids {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// The dimension names a field of `shape` with geography `geography`
    /// takes from its grid, taking its coordinates; None when it has no
    /// grid or its grid's names are taken with other values.
    fn dims(
        &mut self,
        py: Python<'_>,
        geography: &Bound<'_, PyAny>,
        shape: Vec<u64>,
    ) -> PyResult<Option<Vec<&'static str>>> {
        let geo = py_to_value(geography, &KeyPath::root("geography"))?;
        let taken = &mut self.0;
        Ok(py.allow_threads(|| taken.dims(&geo, &shape)))
    }

    /// `[(name, dims, values, attrs)]`: the coordinates taken, by name.
    fn coordinates(&self, py: Python<'_>) -> PyResult<Vec<PyGridCoordinate>> {
        self.0
            .coordinates()
            .map(|c| grid_coordinate_to_py(py, c))
            .collect()
    }
}

/// The `2n` Gaussian latitudes of Gaussian number `n` (degrees, north to
/// south, as ecCodes computes them) as a float64 array, or None when the
/// core computes none for `n` (`tgm::geography::gaussian_latitudes`).
#[pyfunction]
pub fn gaussian_latitudes(py: Python<'_>, n: u64) -> Option<PyObject> {
    let lats = py.allow_threads(|| tgm::geography::gaussian_latitudes(n))?;
    Some(PyArray1::from_vec(py, lats).into_any().unbind())
}

/// `(attrs, descending)` of a stacking coordinate named `key`: cfgrib's
/// attributes and whether its values run from the largest.
#[pyfunction]
pub fn view_coordinate(py: Python<'_>, key: &str) -> PyResult<(PyObject, bool)> {
    let a = PyDict::new(py);
    for (k, v) in view::coordinate_attributes(key) {
        a.set_item(k, v)?;
    }
    Ok((a.into_any().unbind(), view::descending(key)))
}

/// cfgrib's `valid_time` in seconds since 1970: every time (seconds)
/// plus every step (hours), times first; None when there are more than
/// the dataset's `objects` and `view::MAX_VALID_TIMES`.
#[pyfunction]
pub fn view_valid_times(times: Vec<i64>, steps: Vec<i64>, objects: usize) -> Option<Vec<i64>> {
    view::valid_times(&times, &steps, objects)
}

/// The dimension order of the stacking keys `varying`: those of `order`
/// (default: cfgrib's, `number`, `date`, `time`, `step`) first, then the
/// others sorted.
#[pyfunction]
#[pyo3(signature = (varying, order=None))]
pub fn view_stack_order(varying: Vec<String>, order: Option<Vec<String>>) -> Vec<String> {
    view::stack_order(&varying, order.as_deref())
}

/// Registers the view functions, `ViewGrids`, `gaussian_latitudes` and
/// `VIEW_SCALAR_COORDINATE_KEYS`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(view_object, m)?)?;
    m.add_function(wrap_pyfunction!(view_listed_dims, m)?)?;
    m.add_function(wrap_pyfunction!(view_grid, m)?)?;
    m.add_class::<ViewGrids>()?;
    m.add_function(wrap_pyfunction!(gaussian_latitudes, m)?)?;
    m.add_function(wrap_pyfunction!(view_coordinate, m)?)?;
    m.add_function(wrap_pyfunction!(view_valid_times, m)?)?;
    m.add_function(wrap_pyfunction!(view_stack_order, m)?)?;
    m.add(
        "VIEW_SCALAR_COORDINATE_KEYS",
        PyTuple::new(m.py(), view::SCALAR_COORDINATE_KEYS)?,
    )?;
    Ok(())
}
