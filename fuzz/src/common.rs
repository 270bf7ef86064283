//! Limits and option sets shared by the targets.

use tgm::{DecodeOptions, Limits, Verify};

/// Limits small enough that no fuzz input can make tgm allocate much.
pub fn fuzz_limits() -> Limits {
    let mut l = Limits::default();
    l.max_object_bytes = 64 << 20;
    l.max_message_bytes = 128 << 20;
    l.max_cbor_items = 1 << 16;
    l
}

/// One of the 32 decode option sets, chosen by `selector`.
pub fn options(selector: u8) -> DecodeOptions {
    let verify = match selector % 3 {
        0 => Verify::Off,
        1 => Verify::IfPresent,
        _ => Verify::Require,
    };
    DecodeOptions::default()
        .verify(verify)
        .native_byte_order(selector & 4 != 0)
        .restore_non_finite(selector & 8 != 0)
        .threads(if selector & 16 != 0 { 2 } else { 0 })
        .limits(fuzz_limits())
}

/// Reads a little-endian u16 at `at`, 0 past the end.
pub fn u16_at(b: &[u8], at: usize) -> u16 {
    match b.get(at..at + 2) {
        Some(s) => u16::from_le_bytes([s[0], s[1]]),
        None => 0,
    }
}
