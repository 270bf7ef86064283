#![no_main]
#[allow(dead_code)]
#[path = "../src/compressors.rs"]
mod compressors;
// SZ3 decodes run in a child: this binary again (spec/pipeline.md §4.7).
libfuzzer_sys::fuzz_target!(
    init: tgm::sz3_child::run_child_if_requested(),
    |data: &[u8]| compressors::sz3(data)
);
