#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| tgm_fuzz::view::view(data));
