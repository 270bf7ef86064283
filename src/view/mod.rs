//! The dataset view of a file's objects: which variable each object
//! belongs to, the keys it is stacked along (cfgrib's times and levels),
//! its dimensions, attributes, grid coordinates and voxel geometry,
//! decided once for every door (kerchunk references here, the Python
//! xarray backend through its native module, `tgm view` through the
//! WebAssembly reader, the C API). See `spec/kerchunk.md` §2.

mod coord;
mod dims;
mod geometry;
mod grid;
mod latitude;
mod message;
mod object;
mod projection;
mod space_view;
mod taken;

pub use coord::{
    iso_time, reference_time, step_hours, valid_time, valid_times, Coord, MAX_VALID_TIMES,
};
pub use dims::{listed_dims, object_dims, object_dims_with_grid, unlisted_dims};
pub use geometry::{affine_from_value, Affine, VoxelGeometry};
pub use grid::{
    grid_coordinates, grid_dims, regular_axes, CfAttrs, GridCoordinate, GridCoordinates,
    MAX_GRID_COORDINATE_VALUES,
};
pub use latitude::latitude_axis;
pub use message::{
    message_view, message_view_json, object_summary, object_summary_with_grid, ObjectSummary,
};
pub use object::{
    attributes, coordinate_attributes, dataset_attributes, descending, object_view, stack_keys,
    stack_order, variable_name, ObjectView, GLOBAL_GRIB_ATTRS, GRIB_ATTRS, GRIB_CONVENTIONS,
    SCALAR_COORDINATE_KEYS, STACK_ORDER,
};
pub use taken::{TakenGrids, MAX_DATASET_COORDINATE_VALUES};
