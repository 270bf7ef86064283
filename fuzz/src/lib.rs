//! Fuzz target bodies; also replayed by the main crate's `tests/fuzz_replay.rs`.
#[path = "targets.rs"]
pub mod targets;
