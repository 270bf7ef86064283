#![no_main]
#[allow(dead_code)]
#[path = "../src/compressors.rs"]
mod compressors;
libfuzzer_sys::fuzz_target!(|data: &[u8]| compressors::blosc2(data));
