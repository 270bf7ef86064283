#!/usr/bin/env bash
# Weather-data converters: installs ecCodes (Debian libeccodes-dev,
# libeccodes-tools, libeccodes-data) when missing, then runs the GRIB tests
# of the command-line tool with its `grib` feature, in debug and release.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -e /usr/lib/x86_64-linux-gnu/libeccodes.so ] && ! ldconfig -p 2>/dev/null | grep -q 'libeccodes\.so '; then
    need=1
elif ! command -v grib_compare >/dev/null || [ ! -d /usr/share/eccodes/samples ]; then
    need=1
else
    need=0
fi
if [ "$need" = 1 ]; then
    SUDO=""
    [ "$(id -u)" != "0" ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
        libeccodes-dev libeccodes-tools libeccodes-data >/dev/null
fi

cargo clippy -p tgm-cli --features grib --all-targets -- -D warnings
cargo test -p tgm-cli --features grib --test grib_roundtrip
cargo test --release -p tgm-cli --features grib --test grib_roundtrip
