//! `tgm plot`'s drawing: which planes of an object, oriented how, coloured
//! how, laid out how (`spec/plot.md`). The colour maps live here, not
//! shared with the browser viewer.

pub mod canvas;
pub mod colour;
pub mod geo;
pub mod medical;
pub mod panel;
pub mod render;
pub mod slice;
pub mod values;
