#!/usr/bin/env bash
# The book's codec tables (docs/src/performance/codecs.md, written there by
# `python3 docs/generated.py docs/src/performance/codecs.md codecs`) from one run, on real data: fetches
# cfgrib's sdist (its ERA5 GRIB test file) and nibabel (its example4d EPI
# scan) from PyPI with pip, decodes them with ecCodes and nibabel
# (benches/codec_samples.py), then runs every codec row on them
# (benches/codecs.rs). Nothing fetched is committed.
#
#   benches/codecs.sh            # test profile: the C/C++ libraries and the
#                                # Rust dependencies optimised, tgm at
#                                # opt-level 1 (what .ci/codecs.sh caches)
#   benches/codecs.sh --release  # cargo bench: everything optimised
#
# Samples go to $TGM_CODEC_SAMPLES, default target/codec-samples.
#
# Needs python3 (venv, pip), ecCodes' command-line tools (Debian
# libeccodes-tools) and what the blosc2, zfp and sz3 features build with
# (docs/src/guide/codecs.md). A sample that cannot be fetched or decoded
# is replaced by the bench's generated stand-in, which it says.
set -euo pipefail
case "${1:-}" in
    "") run=(test -p tgm --bench codecs) ;;
    --release) run=(bench -p tgm --bench codecs) ;;
    *) echo "usage: $0 [--release]" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
dir="${TGM_CODEC_SAMPLES:-${CARGO_TARGET_DIR:-$root/target}/codec-samples}"
mkdir -p "$dir"

cfgrib=0.9.15.1
venv="$dir/pyenv"
sdist="$dir/cfgrib-$cfgrib.tar.gz"
rm -f "$dir"/era5.f64 "$dir"/era5.json "$dir"/mri.f64 "$dir"/mri.json
if { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } \
    && "$venv/bin/python" -m pip install --quiet numpy nibabel; then
    [ -e "$sdist" ] || "$venv/bin/python" -m pip download --quiet --no-deps \
        --no-binary :all: "cfgrib==$cfgrib" -d "$dir" \
        || echo "cfgrib $cfgrib not fetched from PyPI: no ERA5 sample" >&2
    "$venv/bin/python" "$root/benches/codec_samples.py" "$dir" "$sdist"
else
    echo "no Python environment with numpy and nibabel in $venv: no samples" >&2
fi

cd "$root"
TGM_CODEC_SAMPLES="$dir" cargo "${run[@]}" --features blosc2,zfp,sz3
