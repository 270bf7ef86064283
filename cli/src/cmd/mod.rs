//! One module per subcommand.

pub mod copy;
pub mod demo;
pub mod dump;
pub mod export;
pub mod get;
pub mod import;
pub mod index;
pub mod info;
pub mod ls;
pub mod merge;
pub mod plot;
pub mod recompress;
pub mod refs;
pub mod reshuffle;
pub mod salvage;
pub mod set;
pub mod split;
pub mod stats;
pub mod validate;
pub mod view;
