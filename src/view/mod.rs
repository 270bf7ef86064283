//! The dataset view of a file's objects: which variable each object
//! belongs to, the keys it is stacked along (cfgrib's times and levels),
//! attributes and grid coordinates, decided once for every door (kerchunk
//! references here, the Python xarray backend through its native module).
//! See `spec/kerchunk.md` §2.

mod coord;
mod grid;
mod object;

pub use coord::{iso_time, reference_time, step_hours, valid_times, Coord};
pub use grid::{grid_coordinates, CfAttrs, GridCoordinate, GridCoordinates};
pub use object::{
    attributes, coordinate_attributes, dataset_attributes, descending, object_view, stack_keys,
    stack_order, variable_name, ObjectView, GLOBAL_GRIB_ATTRS, GRIB_ATTRS, GRIB_CONVENTIONS,
    SCALAR_COORDINATE_KEYS, STACK_ORDER,
};
