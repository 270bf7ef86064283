#!/usr/bin/env bash
# Weather-data converters: installs ecCodes (Debian libeccodes-dev,
# libeccodes-tools, libeccodes-data) and netCDF-C (libnetcdf-dev, netcdf-bin)
# when missing, then runs the GRIB and NetCDF tests of the command-line tool
# with its `grib` and `netcdf` features, in debug and release, and replays
# the weather fuzz corpora and regression files.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
if [ ! -e /usr/lib/x86_64-linux-gnu/libeccodes.so ] && ! ldconfig -p 2>/dev/null | grep -q 'libeccodes\.so '; then
    need+=(libeccodes-dev)
fi
command -v grib_compare >/dev/null || need+=(libeccodes-tools)
[ -d /usr/share/eccodes/samples ] || need+=(libeccodes-data)
[ -e /usr/include/netcdf.h ] || need+=(libnetcdf-dev)
command -v ncdump >/dev/null || need+=(netcdf-bin)
if [ "${#need[@]}" -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" != "0" ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

features=grib,netcdf
# cfgrib's real GRIB files, which grib_roundtrip writes back and compares.
export TGM_CFGRIB_SAMPLES="${TGM_CFGRIB_SAMPLES:-${TGM_CI_CACHE:-$PWD/target}/cfgrib-samples}"
bash .ci/cfgrib-samples.sh python3 "$TGM_CFGRIB_SAMPLES"
cargo clippy -p tgm-cli --features "$features" --all-targets -- -D warnings
cargo clippy -p tgm-convert --features "$features" --all-targets -- -D warnings
for profile in "" "--release"; do
    # In CI, the debug build is the debug stage's (.ci/run); the release one
    # is the tgm binary the kerchunk and Python stages use.
    cli_features=$features
    [ -z "$profile" ] && cli_features=${TGM_CI_FEATURES:-$features}
    # shellcheck disable=SC2086
    cargo test $profile -p tgm-cli --features "$cli_features" \
        --test grib_roundtrip --test netcdf_roundtrip --test netcdf_names --test cli_reference
    # shellcheck disable=SC2086
    cargo test $profile -p tgm-convert --features "$features" --lib --test weather_fuzz_replay
done
