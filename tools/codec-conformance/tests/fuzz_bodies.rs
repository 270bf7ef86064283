//! Runs the fuzz target bodies of the optional compressors
//! (`fuzz/src/compressors.rs`, shared by path) on inputs built here, so
//! they are compiled and exercised with the features the default test
//! build lacks: untouched streams must round-trip, hostile edits and cuts
//! must fail cleanly.

#[path = "../../../fuzz/src/compressors.rs"]
mod compressors;

/// Deterministic inputs: a header, then raw bytes of varying length.
fn inputs() -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for seed in 0u64..200 {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let len = 8 + (seed as usize * 37) % 3000;
        let bytes = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        v.push(bytes);
    }
    v
}

#[test]
fn compressor_bodies_run_on_generated_inputs() {
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
