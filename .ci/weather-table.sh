#!/usr/bin/env bash
# Prints the size and speed table of docs/src/performance/weather.md
# (Markdown; `python3 docs/generated.py docs/src/performance/weather.md
# weather-table` writes it there) for a
# sample set built at run time from ecCodes' samples: smooth fields written
# with grib_filter on ecCodes' grids, and their NetCDF form from
# grib_to_netcdf (packed shorts, as ERA5 downloads are) and nccopy (float,
# deflate level 4 + shuffle). Times are medians of 5 runs of the whole
# command (process start included): tgm convert-*, `tgm validate --full`
# (decodes every object) against `grib_get -p max` (decodes the field) and
# `nccopy -k nc4` (reads and rewrites the file). Needs the tools .ci/weather.sh installs; builds
# the release binary with the grib and netcdf features.
#
#   bash .ci/weather-table.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SAMPLES=/usr/share/eccodes/samples
for t in grib_filter grib_get grib_set grib_to_netcdf nccopy awk; do
    command -v "$t" >/dev/null || { echo "$t missing: run .ci/weather.sh first" >&2; exit 1; }
done
cargo build -q --release -p tgm-cli --features grib,netcdf
TGM="${CARGO_TARGET_DIR:-$PWD/target}/release/tgm"
W="$(mktemp -d)"
trap 'rm -rf "$W"' EXIT

now() { date +%s.%N; }
# Median wall time in ms of 5 runs of a command (output discarded).
ms() {
    local ts=()
    for _ in 1 2 3 4 5; do
        local a b
        a=$(now); "$@" >/dev/null 2>&1; b=$(now)
        ts+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", (b - a) * 1000 }')")
    done
    printf '%s\n' "${ts[@]}" | sort -g | sed -n 3p | xargs printf '%.1f'
}
size() { stat -c %s "$1"; }

# A smooth field of n points (temperature-like, 0.01 K features), as a
# grib_filter values list.
field() {
    awk -v n="$1" -v o="$2" 'BEGIN { for (i = 0; i < n; i++) {
        v = o + 15 * sin(i * 0.0021) + 4 * cos(i * 0.037) + (i % 13) * 0.01
        printf "%s%.4f", (i ? "," : ""), v } }'
}

make_grib() { # name sample points bits
    printf 'set bitsPerValue=%s; set values={%s}; write;\n' "$4" "$(field "$3" 280)" >"$W/$1.rules"
    grib_filter -o "$W/$1" "$W/$1.rules" "$SAMPLES/$2.tmpl"
}
make_grib ll_1deg.grib1 GRIB1 65160 16           # 360x181 regular_ll, GRIB1
grib_set -s edition=2 "$W/ll_1deg.grib1" "$W/ll_1deg.grib2"   # the same field, GRIB2
make_grib n320.grib2 reduced_gg_pl_320_grib2 542080 12   # reduced Gaussian N320
grib_to_netcdf -o "$W/ll_1deg.nc" "$W/ll_1deg.grib2" >/dev/null
nccopy -k nc4 -d 4 -s "$W/ll_1deg.nc" "$W/ll_1deg_deflate.nc"

echo "| file | native bytes | pipeline | .tgm bytes | convert ms | decode ms (tgm) | decode ms (native) |"
echo "|---|---|---|---|---|---|---|"
for f in ll_1deg.grib2 ll_1deg.grib1 n320.grib2; do
    native_ms=$(ms grib_get -p max "$W/$f")
    for p in "source:" "none+zstd:--encoding none --compression zstd" "sp16+szip:--encoding simple_packing --bits 16 --compression szip"; do
        label=${p%%:*}; flags=${p#*:}
        # shellcheck disable=SC2086
        conv=$(ms "$TGM" convert-grib "$W/$f" -o "$W/out.tgm" --force $flags)
        # shellcheck disable=SC2086
        "$TGM" convert-grib "$W/$f" -o "$W/out.tgm" --force $flags 2>/dev/null
        dec=$(ms "$TGM" validate --full "$W/out.tgm")
        echo "| $f | $(size "$W/$f") | $label | $(size "$W/out.tgm") | $conv | $dec | $native_ms |"
    done
done
for f in ll_1deg.nc ll_1deg_deflate.nc; do
    native_ms=$(ms nccopy -k nc4 "$W/$f" "$W/copy.nc")
    for p in "raw:" "cf+zstd:--cf --compression zstd" "cf+sp16+szip:--cf --encoding simple_packing --bits 16 --compression szip"; do
        label=${p%%:*}; flags=${p#*:}
        # shellcheck disable=SC2086
        conv=$(ms "$TGM" convert-netcdf "$W/$f" -o "$W/out.tgm" --force $flags)
        # shellcheck disable=SC2086
        "$TGM" convert-netcdf "$W/$f" -o "$W/out.tgm" --force $flags 2>/dev/null
        dec=$(ms "$TGM" validate --full "$W/out.tgm")
        echo "| $f | $(size "$W/$f") | $label | $(size "$W/out.tgm") | $conv | $dec | $native_ms |"
    done
done
