#!/usr/bin/env bash
# Remote archives against real servers on loopback: installs Debian's nginx
# (with its WebDAV module, for http:// outputs)
# and s3s-fs (crates.io), then runs the library's remote tests, the CLI's URL
# tests and a quick run of tools/remote-bench. Every server listens on
# 127.0.0.1 only and is started (and killed) by the tests themselves through
# tests/common/servers.rs. The tests that need a server are ignored by a
# plain `cargo test` (their reason says so) and run here with
# --include-ignored; TGM_NO_SKIPS=1 turns a missing server into a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
export TGM_NO_SKIPS=1

# The s3s-fs release installed into $TGM_CI_CACHE/tools (target/tools
# outside .ci/run): the newest whose rust-version this toolchain meets.
S3S_FS_VERSION=0.14.1
TOOLS="${TGM_CI_CACHE:-$PWD/target}/tools"

step() { printf '\n=== remote: %s ===\n' "$*"; }

step "nginx (Debian's package)"
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    SUDO=""
    [ "$(id -u)" != "0" ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nginx >/dev/null
fi
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
"$NGINX" -v
# The HTTP outputs are PUT to nginx's WebDAV module (tests/common/servers.rs, /dav/).
if ! "$NGINX" -V 2>&1 | grep -q -- --with-http_dav_module; then
    echo "nginx was built without http_dav_module (needed for the http:// output tests)" >&2
    exit 1
fi

step "s3s-fs $S3S_FS_VERSION (crates.io) into $TOOLS"
if [ ! -x "$TOOLS/bin/s3s-fs" ] \
    || ! "$TOOLS/bin/s3s-fs" --version 2>/dev/null | grep -qF "$S3S_FS_VERSION"; then
    cargo install --locked --root "$TOOLS" "s3s-fs@$S3S_FS_VERSION" --features binary
fi
"$TOOLS/bin/s3s-fs" --version
export TGM_S3S_FS="$TOOLS/bin/s3s-fs"

step "loopback harness self-test"
# In CI, the debug stage's feature set (.ci/run), whose build these share.
features=${TGM_CI_FEATURES:-remote}
cargo test --features "$features" --test remote_servers -- --include-ignored

step "library remote tests"
lib_tests=()
for t in tests/remote_*.rs; do
    [ -e "$t" ] || continue
    name=$(basename "$t" .rs)
    [ "$name" = remote_servers ] && continue
    lib_tests+=(--test "$name")
done
if [ "${#lib_tests[@]}" -gt 0 ]; then
    cargo test --features "$features" "${lib_tests[@]}" -- --include-ignored
else
    echo "no tests/remote_*.rs besides the harness self-test"
fi

step "CLI: URL inputs and outputs against nginx and s3s-fs"
# With ecCodes installed (libeccodes-dev), convert-grib/to-grib into a bucket too.
if [ -n "${TGM_CI_FEATURES:-}" ]; then
    cargo test -p tgm-cli --features "$TGM_CI_FEATURES" --test remote_cli -- --include-ignored
elif pkg-config --exists eccodes 2>/dev/null; then
    cargo test -p tgm-cli --features grib --test remote_cli -- --include-ignored
else
    cargo test -p tgm-cli --test remote_cli -- --include-ignored
fi

step "C ABI: tgm_writer_t into an s3s-fs bucket"
cargo test -p tgm-ffi --features "${TGM_CI_LIB_FEATURES:-remote}" --test c_programs c_writes_an_archive_to_s3 -- --include-ignored

step "remote-bench: clippy, then a quick run (tgm and the reference against one nginx)"
cargo clippy -p remote-bench --all-targets -- -D warnings
cargo run --release -p remote-bench -- --quick
