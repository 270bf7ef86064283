//! Fuzz target bodies. Each takes arbitrary bytes and must never panic,
//! hang, or allocate beyond the limits it passes to tgm. The fuzz binaries
//! call them, and the main crate's `tests/fuzz_replay.rs` includes this
//! file by path to replay the corpora under plain `cargo test`.

#[path = "common.rs"]
pub mod common;

#[path = "message.rs"]
pub mod message;

#[path = "cbor.rs"]
pub mod cbor;

#[path = "codecs.rs"]
pub mod codecs;

#[path = "io.rs"]
pub mod io;

#[path = "files.rs"]
pub mod files;

#[path = "tensor.rs"]
pub mod tensor;

#[path = "view.rs"]
pub mod view;

/// Every target by name, as the fuzz binaries and corpus directories name them.
pub fn target(name: &str) -> Option<fn(&[u8])> {
    Some(match name {
        "decode" => message::decode,
        "scan" => message::scan,
        "chunked" => message::chunked,
        "cbor" => cbor::cbor,
        "descriptor" => cbor::descriptor,
        "metadata" => cbor::metadata,
        "codecs" => codecs::codecs,
        "szip" => codecs::szip,
        "prefilled" => codecs::prefilled,
        "roundtrip" => io::roundtrip,
        "npy" => io::npy,
        "file" => files::file,
        "catalogue" => files::catalogue,
        "catalogue_recorder" => files::catalogue_recorder,
        "archive_catalogue" => files::archive_catalogue,
        "tensor" => tensor::tensor,
        "view" => view::view,
        _ => return None,
    })
}

/// The names accepted by [`target`].
pub const TARGETS: [&str; 17] = [
    "decode",
    "scan",
    "chunked",
    "cbor",
    "descriptor",
    "metadata",
    "codecs",
    "szip",
    "prefilled",
    "roundtrip",
    "npy",
    "file",
    "tensor",
    "catalogue",
    "catalogue_recorder",
    "archive_catalogue",
    "view",
];
