#![no_main]
#[allow(dead_code)]
#[path = "../src/weather.rs"]
mod weather;
libfuzzer_sys::fuzz_target!(|data: &[u8]| weather::grib(data));
