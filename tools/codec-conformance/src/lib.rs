//! Nothing but a home for `tests/conformance.rs`: blosc2, zfp and sz3 in
//! tgm against the reference crate with the same codecs, kept out of the
//! default `cargo test` because it builds their C/C++ libraries. Run with
//! `cargo test -p codec-conformance`.

/// Makes this process's SZ3 decodes run in `helper` (the test's
/// `CARGO_BIN_EXE_conformance-sz3-helper`), once.
pub fn use_sz3_helper(helper: &str) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| tgm::sz3_child::set_helper(Some(tgm::sz3_child::Helper::executable(helper))));
}
