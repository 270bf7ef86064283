#!/usr/bin/env bash
# Fetches cfgrib's ERA5 GRIB samples (tests/sample-data in its sdist, the
# files the README's measurements use) with pip into DIR, once, and
# extracts them there; prints nothing. The weather tests of the python and
# kerchunk stages find them through TGM_CFGRIB_SAMPLES=DIR and skip with a
# message when they are absent (no network).
#
#   .ci/cfgrib-samples.sh PYTHON DIR
set -euo pipefail
py="$1"
dir="$2"
version=0.9.15.1
files=(era5-levels-members.grib era5-single-level-scalar-time.grib)
mkdir -p "$dir"
have=1
for f in "${files[@]}"; do [ -s "$dir/$f" ] || have=0; done
[ "$have" = 1 ] && exit 0
sdist="$dir/cfgrib-$version.tar.gz"
if [ ! -e "$sdist" ] && ! "$py" -m pip download -q --no-deps --no-binary :all: "cfgrib==$version" -d "$dir"; then
    echo "cfgrib $version not fetched from PyPI: the ERA5 sample tests will skip" >&2
    exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$sdist" -C "$tmp" "${files[@]/#/cfgrib-$version/tests/sample-data/}"
for f in "${files[@]}"; do mv "$tmp/cfgrib-$version/tests/sample-data/$f" "$dir/$f.part" && mv "$dir/$f.part" "$dir/$f"; done
rm -f "$sdist"
