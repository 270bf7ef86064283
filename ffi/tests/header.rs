//! The checked-in header is what cbindgen generates from the sources now;
//! `TGM_BLESS=1 cargo test -p tgm-ffi --test header` rewrites it.

use std::path::Path;

#[test]
fn header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let path = dir.join("include/tensogram.h");
    if std::env::var_os("TGM_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write include/tensogram.h");
        return;
    }
    let checked_in = std::fs::read(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "{} is stale: regenerate it with `TGM_BLESS=1 cargo test -p tgm-ffi --test header`",
        path.display()
    );
}
