#!/usr/bin/env bash
# Prints the GRIB against .tgm sizes table of docs/src/performance/weather.md
# (Markdown; `python3 docs/generated.py docs/src/performance/weather.md
# weather-sizes` writes it there): fields
# built at run time from ecCodes' samples in each packing the default
# conversion (`--encoding source`) handles differently, converted with
# `tgm convert-grib`, with the sizes of the GRIB file, its data section
# (GRIB2 section 7 without its 5-byte header), the .tgm file and its object
# payload. Sizes do not depend on the build profile, so the debug binary is
# used. Needs the tools .ci/weather.sh installs.
#
#   bash .ci/weather-sizes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SAMPLES=/usr/share/eccodes/samples
for t in grib_filter grib_get grib_set awk; do
    command -v "$t" >/dev/null || { echo "$t missing: run .ci/weather.sh first" >&2; exit 1; }
done
cargo build -q -p tgm-cli --features grib,netcdf
TGM="${CARGO_TARGET_DIR:-$PWD/target}/debug/tgm"
W="$(mktemp -d)"
trap 'rm -rf "$W"' EXIT

# A smooth temperature-like field of n points as a grib_filter values list.
field() {
    awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) {
        v = 280 + 15 * sin(i * 0.0021) + 4 * cos(i * 0.037) + (i % 13) * 0.01
        printf "%s%.4f", (i ? "," : ""), v } }'
}
make_grib() { # name sample points bits
    printf 'set bitsPerValue=%s; set values={%s}; write;\n' "$4" "$(field "$3")" >"$W/$1.rules"
    grib_filter -o "$W/$1" "$W/$1.rules" "$SAMPLES/$2.tmpl"
}
make_grib ll_1deg.grib2 GRIB2 65160 16
make_grib n320.grib2 reduced_gg_pl_320_grib2 542080 12
grib_set -r -s packingType=grid_ccsds "$W/ll_1deg.grib2" "$W/ll_1deg_ccsds.grib2"
grib_set -r -s packingType=grid_ccsds "$W/n320.grib2" "$W/n320_ccsds.grib2"
grib_set -r -s packingType=grid_ccsds,ccsdsBlockSize=16,ccsdsRsi=64 "$W/n320.grib2" "$W/n320_ccsds_16_64.grib2"
grib_set -r -s packingType=grid_complex "$W/n320.grib2" "$W/n320_complex.grib2"
grib_set -r -s packingType=grid_second_order "$W/n320.grib2" "$W/n320_second_order.grib2"
cp "$SAMPLES/sh_ml_grib2.tmpl" "$W/sh_ml.grib2"

echo "| file | packing | GRIB bytes | data section bytes | .tgm bytes | pipeline | .tgm payload bytes |"
echo "|---|---|---|---|---|---|---|"
for f in ll_1deg.grib2 ll_1deg_ccsds.grib2 n320.grib2 n320_ccsds.grib2 n320_ccsds_16_64.grib2 \
    n320_complex.grib2 n320_second_order.grib2 sh_ml.grib2; do
    "$TGM" convert-grib "$W/$f" -o "$W/out.tgm" --force >/dev/null 2>&1
    packing=$(grib_get -p packingType "$W/$f")
    section=$(grib_get -p section7Length "$W/$f")
    # tgm ls: columns found by their header (the key columns vary)
    row=$("$TGM" ls "$W/out.tgm" | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
        NR == 2 { print $c["pipeline"] " | " $c["stored_bytes"] }')
    echo "| $f | $packing | $(stat -c %s "$W/$f") | $((section - 5)) | $(stat -c %s "$W/out.tgm") | $row |"
done
