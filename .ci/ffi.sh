#!/usr/bin/env bash
# The C ABI (ffi/, package tgm-ffi): installs C, C++ and Fortran compilers,
# valgrind, pkg-config and GoogleTest from Debian when missing; lints the
# crate; runs its tests (the header is current; the C, C++ and Fortran
# programs of ffi/tests against the cdylib)
# plainly, under valgrind and under AddressSanitizer; then installs the
# library with ffi/install.sh into a scratch prefix and builds the book's
# example through pkg-config, shared and static. Last, the reference's own
# C++ wrapper (cpp/include/tensogram.hpp) and its GoogleTest suites for the
# synchronous API, from a clone of tensogram 0.24.0 cached in
# $TGM_CI_CACHE/tensogram-0.24.0 (read there, never copied into this
# repository), are compiled unchanged against ffi/include/tensogram.h and
# run against libtgm (TGM_REFERENCE_GIT overrides where it is cloned from).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v cc >/dev/null || need+=(gcc)
command -v c++ >/dev/null || need+=(g++)
command -v gfortran >/dev/null || need+=(gfortran)
command -v valgrind >/dev/null || need+=(valgrind)
command -v pkg-config >/dev/null || need+=(pkg-config)
[ -e /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
if [ "${#need[@]}" -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" != "0" ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

cargo fmt -p tgm-ffi --check
cargo clippy -p tgm-ffi --all-targets -- -D warnings
# In CI, the library features of the debug stage (.ci/run). Every step
# below uses the one library `cargo test` builds (its cdylib and staticlib
# land in target/debug/deps beside the tests), so tgm is built once here.
features=${TGM_CI_LIB_FEATURES:-remote}
cargo test -p tgm-ffi --features "$features"
TGM_FFI_CHECK=valgrind cargo test -p tgm-ffi --features "$features" --test c_programs
TGM_FFI_CHECK=asan cargo test -p tgm-ffi --features "$features" --test c_programs

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
TGM_FFI_LIB_DIR="${CARGO_TARGET_DIR:-target}/debug/deps" ffi/install.sh "$scratch/prefix"
export PKG_CONFIG_PATH="$scratch/prefix/lib/pkgconfig"
awk '/^```c$/ {c = 1; next} c && /^```$/ {exit} c {print}' \
    docs/src/guide/c-fortran.md > "$scratch/example.c"
cc -Wall -Wextra -Werror "$scratch/example.c" $(pkg-config --cflags --libs tgm) -o "$scratch/shared"
LD_LIBRARY_PATH="$scratch/prefix/lib" "$scratch/shared" "$scratch/shared.tgm"
sed 's|"tensogram.h"|<tensogram/tensogram.h>|' "$scratch/example.c" > "$scratch/static.c"
cc "$scratch/static.c" $(pkg-config --cflags tensogram) "$scratch/prefix/lib/libtgm.a" \
    $(pkg-config --static --libs-only-l tgm | sed 's/-ltgm//') -o "$scratch/static"
"$scratch/static" "$scratch/static.tgm"

reference="${TGM_CI_CACHE:-$HOME/.cache/tgm-ci}/tensogram-0.24.0"
if [ ! -f "$reference/cpp/include/tensogram.hpp" ]; then
    rm -rf "$reference"
    if ! timeout 120 git clone -q --depth 1 --branch 0.24.0 \
        "${TGM_REFERENCE_GIT:-https://github.com/ecmwf/tensogram}" "$reference"; then
        rm -rf "$reference"
        echo "SKIPPED: the reference's C++ wrapper suites: tensogram 0.24.0 could not be cloned" \
            "(set TGM_REFERENCE_GIT to a reachable copy, or pre-fill $reference)" >&2
        exit 0
    fi
fi
libdir="$scratch/prefix/lib"
suites=(allow_nan_inf decode_verify_hash descriptor edge_cases encode_decode
    encode_pre_encoded error file iterators meta_value metadata multi_dtype
    simple_packing streaming validate)
for suite in "${suites[@]}"; do
    c++ -std=c++17 -w -I"$reference/cpp/include" -I"$reference/cpp/tests" \
        $(pkg-config --cflags tgm) "$reference/cpp/tests/test_$suite.cpp" \
        $(pkg-config --libs tgm) -lgtest -lgtest_main -pthread -o "$scratch/ref_$suite"
    # The suites look for the reference's golden files relative to the clone.
    (cd "$reference" && LD_LIBRARY_PATH="$libdir" "$scratch/ref_$suite" --gtest_brief=1)
done
