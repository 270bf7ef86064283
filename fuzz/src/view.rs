//! The dataset view and kerchunk references of a message: what `tgm refs`,
//! `tgm view`, the C API's view and the xarray backend derive from
//! untrusted metadata and descriptors (grids, Gaussian rows, rotated
//! points, stacking keys, times).

use tgm::kerchunk::RefsBuilder;
use tgm::view::{grid_coordinates, message_view_json, TakenGrids};
use tgm::Message;

use super::common::fuzz_limits;

/// A message's view and references never panic, and a grid's coordinates
/// always fit the object's shape.
pub fn view(data: &[u8]) {
    let limits = fuzz_limits();
    let Ok(msg) = Message::parse_with(data, 0, &limits) else {
        return;
    };
    let Ok(meta) = msg.metadata() else {
        return;
    };
    let descriptors: Vec<_> = (0..msg.num_objects())
        .filter_map(|o| msg.object(o).ok().map(|obj| obj.descriptor().clone()))
        .collect();
    let _ = message_view_json(&meta, &descriptors, 0).to_string();
    let mut taken = TakenGrids::new();
    for (o, d) in descriptors.iter().enumerate() {
        let Some(geo) = meta.base.get(o).and_then(|e| e.get("geography")) else {
            continue;
        };
        let _ = taken.dims(geo, &d.shape);
        if let Some(g) = grid_coordinates(geo, &d.shape) {
            assert_eq!(g.dims.len(), d.shape.len(), "one name per dimension");
            for c in &g.coords {
                let cells: u64 = c.shape.iter().product();
                assert_eq!(c.values.len() as u64, cells, "{}", c.name);
                assert_eq!(c.dims.len(), c.shape.len(), "{}", c.name);
                assert!(c.dims.iter().all(|n| g.dims.contains(n)), "{}", c.name);
            }
        }
    }
    let mut refs = RefsBuilder::new("fuzz.tgm");
    if refs.add_message(0, &msg).is_ok() {
        let _ = refs.finish().to_json();
    }
}
