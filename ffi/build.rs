//! Gives the shared library the SONAME it is installed under
//! (`libtgm.so.0`, see `install.sh`), so programs linked against the
//! installed `libtgm.so` find it at run time.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtgm.so.0");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
