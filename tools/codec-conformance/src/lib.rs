//! Nothing but a home for `tests/conformance.rs`: blosc2, zfp and sz3 in
//! tgm against the reference crate with the same codecs, kept out of the
//! default `cargo test` because it builds their C/C++ libraries. Run with
//! `cargo test -p codec-conformance`.
