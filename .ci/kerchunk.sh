#!/usr/bin/env bash
# Kerchunk references (spec/kerchunk.md): `tgm refs` output read by stock
# xarray, zarr 3, fsspec, numcodecs and imagecodecs from PyPI in a virtual
# environment that does not have tgm, locally and over HTTP from Debian's
# nginx on loopback (started and stopped by the test itself; the HTTP test
# skips with a message when nginx is absent). Every expressible pipeline
# must give the values `tgm export` writes, bit for bit.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

step() { printf '\n=== kerchunk: %s ===\n' "$*"; }

PY="${PYTHON:-python3}"
VENV="$(realpath -m "${TGM_KERCHUNK_ENV:-${TGM_CI_CACHE:-target}/kerchunk-venv}")"

step "the tgm binary (the features .ci/python.sh builds it with, so neither rebuilds it)"
features=()
if [ -e /usr/lib/x86_64-linux-gnu/libeccodes.so ] && [ -e /usr/include/netcdf.h ]; then
    features=(--features grib,netcdf)
fi
cargo build -q --release -p tgm-cli "${features[@]}"
export TGM_BIN="${CARGO_TARGET_DIR:-$PWD/target}/release/tgm"
echo "TGM_BIN=$TGM_BIN"

step "virtual environment $VENV (no tgm in it)"
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q numpy xarray "zarr>=3" fsspec "numcodecs>=0.16.2" imagecodecs \
    requests aiohttp pytest pytest-timeout
"$VENV/bin/python" -m pip uninstall -q -y tgm >/dev/null 2>&1 || true
# cfgrib's ERA5 sample (test_era5_refs.py), converted by the tgm binary.
export TGM_CFGRIB_SAMPLES="$VENV/cfgrib-samples"
bash .ci/cfgrib-samples.sh "$VENV/bin/python" "$TGM_CFGRIB_SAMPLES"

step "pytest tests/kerchunk"
"$VENV/bin/python" -m pytest -q -rs -p no:cacheprovider --timeout=300 --rootdir tests/kerchunk tests/kerchunk
