#!/usr/bin/env bash
# The WebAssembly reader and tgm view (spec/wasm.md): rebuilds the reader
# package for wasm32-unknown-unknown with the wasm-bindgen CLI of the
# crate's version (installed once under $TGM_CI_CACHE/tools) and checks
# that it is byte for byte the committed wasm/pkg that tgm embeds, runs the
# reader's Rust and Node tests, then drives Debian's chromium through the
# DevTools protocol (puppeteer-core from npm) against `tgm view` (its
# built-in page) on an ERA5-like archive.
# Prints the bundle size and the decode speeds; leaves the screenshot in
# $VIEWER_SCREENSHOT (default target/viewer.png). Last, builds the book
# (docs/) with mdbook.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${TGM_CI_CACHE:-$HOME/.cache/tgm-ci}
SUDO=""
[ "$(id -u)" != "0" ] && SUDO="sudo"

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
fi
version=$(sed -n 's/^wasm-bindgen = "=\(.*\)"$/\1/p' wasm/Cargo.toml)
bindgen="$CACHE/tools/bin/wasm-bindgen"
if ! "$bindgen" --version 2>/dev/null | grep -qx "wasm-bindgen $version"; then
    cargo install --root "$CACHE/tools" wasm-bindgen-cli --version "$version"
fi
if ! command -v chromium >/dev/null; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
node_major=$(node --version | sed 's/^v\([0-9]*\).*/\1/')
if [ "$node_major" -lt 20 ]; then
    echo "viewer.sh: Node $node_major; the tests need Node 20 or later" >&2
    exit 1
fi

cargo clippy -p tgm-wasm --target wasm32-unknown-unknown -- -D warnings
cargo clippy -p tgm-wasm --all-targets -- -D warnings
cargo test -p tgm-wasm
fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
# Without the wasm-bindgen CLI, wasm/build.sh names the command that installs it.
if WASM_BINDGEN="$fresh/absent" bash wasm/build.sh --out "$fresh/pkg" 2>"$fresh/err"; then
    echo "viewer.sh: wasm/build.sh ran without a wasm-bindgen CLI" >&2
    exit 1
fi
grep -q "cargo install wasm-bindgen-cli --version $version" "$fresh/err" || {
    echo "viewer.sh: wasm/build.sh without wasm-bindgen did not name the install command:" >&2
    cat "$fresh/err" >&2
    exit 1
}
WASM_BINDGEN="$bindgen" bash wasm/build.sh --out "$fresh/pkg"
if ! diff -rq wasm/pkg "$fresh/pkg" >&2; then
    echo "viewer.sh: the committed wasm/pkg (embedded in tgm) is not what the sources build;" \
        "run wasm/build.sh and commit wasm/pkg" >&2
    exit 1
fi
# In CI, the debug stage's build (TGM_CI_FEATURES, .ci/run): the test
# profile writes target/debug/tgm too.
features=()
[ -n "${TGM_CI_FEATURES:-}" ] && features=(--features "$TGM_CI_FEATURES")
cargo build --profile test -p tgm-cli "${features[@]}"

TGM_BIN="${CARGO_TARGET_DIR:-target}/debug/tgm"
export TGM_BIN
node --test wasm/test/reader.test.mjs

(cd wasm/test/browser && npm ci --no-audit --no-fund --cache "$CACHE/npm" >/dev/null)
node --test wasm/test/browser/viewer.test.mjs

# The book (docs/): mdbook, pinned, installed once under $CACHE/tools, builds
# it with every page and link of docs/src/SUMMARY.md. Its Rust examples are
# doc tests of the library (src/lib.rs), its shell, C, Fortran and Python
# examples tests of their own (readme_examples, remote_cli, c_programs,
# test_earthkit, test_anemoi), and its command-line reference is checked
# by cli_reference (.ci/weather.sh, with every subcommand).
mdbook_version=0.4.52
mdbook="$CACHE/tools/bin/mdbook"
if ! "$mdbook" --version 2>/dev/null | grep -qx "mdbook v$mdbook_version"; then
    cargo install --locked --root "$CACHE/tools" mdbook --version "$mdbook_version" \
        --no-default-features --features search
fi
book_out="$(mktemp -d)"
"$mdbook" build docs --dest-dir "$book_out"
test -s "$book_out/index.html"
rm -rf "$book_out"
