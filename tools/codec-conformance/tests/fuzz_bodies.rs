//! Runs the fuzz target bodies of the optional compressors
//! (`fuzz/src/compressors.rs`, shared by path) on inputs built here, so
//! they are compiled and exercised with the features the default test
//! build lacks: untouched streams must round-trip, hostile edits and cuts
//! must fail cleanly.

#[path = "../../../tests/common/mod.rs"]
mod common;
#[path = "../../../fuzz/src/compressors.rs"]
mod compressors;

/// Deterministic inputs: a header, then raw bytes of varying length.
fn inputs() -> Vec<Vec<u8>> {
    (0u64..200)
        .map(|seed| {
            let len = 8 + (seed * 37) % 3000;
            common::sample_bytes(tgm::Dtype::Uint8, len, seed)
        })
        .collect()
}

#[test]
fn compressor_bodies_run_on_generated_inputs() {
    codec_conformance::use_sz3_helper(env!("CARGO_BIN_EXE_conformance-sz3-helper"));
    for data in inputs() {
        compressors::blosc2(&data);
        compressors::zfp(&data);
        compressors::sz3(&data);
    }
}

#[test]
fn an_untouched_blosc2_frame_round_trips_through_the_body() {
    // No edits (count 0), cut 0xffff, no size skew: the body asserts the
    // round trip itself.
    let mut data = vec![0u8, 7, 3, 0xff, 0xff, 0, 0, 0];
    data.extend((0..4000u32).map(|i| (i % 251) as u8));
    compressors::blosc2(&data);
}
