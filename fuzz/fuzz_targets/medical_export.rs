#![no_main]
#[allow(dead_code)]
#[path = "../src/medical.rs"]
mod medical;
libfuzzer_sys::fuzz_target!(|data: &[u8]| medical::export(data));
