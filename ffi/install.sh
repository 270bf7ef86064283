#!/usr/bin/env bash
# Installs the C library built by `cargo build --release -p tgm-ffi` under
# PREFIX (default /usr/local):
#   PREFIX/lib/libtgm.so.0.1.0, libtgm.so.0 (its SONAME), libtgm.so
#   PREFIX/lib/libtgm.a
#   PREFIX/include/tensogram.h and PREFIX/include/tensogram/tensogram.h
#   PREFIX/lib/pkgconfig/tgm.pc and tensogram.pc (the same file)
# The target directory is CARGO_TARGET_DIR, else target/ at the workspace root;
# TGM_FFI_PROFILE=debug installs the debug build instead; TGM_FFI_LIB_DIR
# names the folder holding libtgm_ffi.so and libtgm_ffi.a outright (.ci/ffi.sh
# installs the library its `cargo test` built, in target/debug/deps).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
prefix="${1:-/usr/local}"
profile="${TGM_FFI_PROFILE:-release}"
cargo_profile="$profile"
[ "$profile" = debug ] && cargo_profile=dev
target="${TGM_FFI_LIB_DIR:-${CARGO_TARGET_DIR:-$here/../target}/$profile}"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$here/Cargo.toml" | head -n1)"
major="${version%%.*}"

for f in libtgm_ffi.so libtgm_ffi.a; do
    if [ ! -f "$target/$f" ]; then
        echo "install.sh: $target/$f is missing; run: cargo build --profile $cargo_profile -p tgm-ffi" >&2
        exit 1
    fi
done

mkdir -p "$prefix/lib/pkgconfig" "$prefix/include/tensogram"
install -m 0755 "$target/libtgm_ffi.so" "$prefix/lib/libtgm.so.$version"
ln -sf "libtgm.so.$version" "$prefix/lib/libtgm.so.$major"
ln -sf "libtgm.so.$major" "$prefix/lib/libtgm.so"
install -m 0644 "$target/libtgm_ffi.a" "$prefix/lib/libtgm.a"
install -m 0644 "$here/include/tensogram.h" "$prefix/include/tensogram.h"
install -m 0644 "$here/include/tensogram.h" "$prefix/include/tensogram/tensogram.h"
# A library built with sz3 holds C++ code: a static link then needs the
# C++ runtime too.
cxx_libs=""
if nm "$target/libtgm_ffi.a" 2>/dev/null | grep "U __gxx_personality_v0" >/dev/null; then
    cxx_libs=" -lstdc++"
fi
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" -e "s|@CXX_LIBS@|$cxx_libs|" \
    "$here/tgm.pc.in" > "$prefix/lib/pkgconfig/tgm.pc"
cp "$prefix/lib/pkgconfig/tgm.pc" "$prefix/lib/pkgconfig/tensogram.pc"
echo "installed libtgm $version under $prefix"
