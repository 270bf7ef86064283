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
# `bash .ci/weather-sizes.sh era5` prints instead the table of cfgrib's
# ERA5 sample (160 GRIB1 fields, fetched by .ci/cfgrib-samples.sh into
# $TGM_CFGRIB_SAMPLES, default target/cfgrib-samples) against the same
# fields as GRIB2 CCSDS (`grib_set -r -s edition=2,packingType=grid_ccsds`),
# converted from each (`weather-era5` in the same page), and the same
# fields as GRIB2 in the complex packings, written by ecCodes and by
# `tgm to-grib --packing`.
#
# `bash .ci/weather-sizes.sh cfgrib` prints the table of every GRIB file
# of cfgrib's test data (`weather-cfgrib` in the same page): real files
# from several centres, each converted with the defaults, and the size of
# the GRIB `to-grib` writes back from it.
#
#   bash .ci/weather-sizes.sh [era5|cfgrib]
set -euo pipefail
cd "$(dirname "$0")/.."
SAMPLES=/usr/share/eccodes/samples
for t in grib_filter grib_get grib_set grib_count awk; do
    command -v "$t" >/dev/null || { echo "$t missing: run .ci/weather.sh first" >&2; exit 1; }
done
cargo build -q -p tgm-cli --features grib,netcdf
TGM="${CARGO_TARGET_DIR:-$PWD/target}/debug/tgm"
W="$(mktemp -d)"
trap 'rm -rf "$W"' EXIT

# The sum of a key over the messages of a GRIB file.
key_sum() { grib_get -p "$1" "$2" | awk '{ s += $1 } END { print s }'; }

if [ "${1:-}" = cfgrib ]; then
    dir="${TGM_CFGRIB_SAMPLES:-$PWD/target/cfgrib-samples}"
    bash .ci/cfgrib-samples.sh python3 "$dir"
    [ -s "$dir/ds.waveh.5.grib" ] || { echo "cfgrib's samples not fetched into $dir" >&2; exit 1; }
    echo "| file | fields | GRIB bytes | .tgm bytes | .tgm / GRIB | .tgm bytes per field beyond the payload | \`to-grib\` bytes |"
    echo "|---|---|---|---|---|---|---|"
    for f in "$dir"/*.grib; do
        name=$(basename "$f")
        if ! "$TGM" convert-grib "$f" -o "$W/out.tgm" --force >/dev/null 2>&1; then
            echo "| $name | | $(stat -c %s "$f") | refused | | | |"
            continue
        fi
        "$TGM" to-grib "$W/out.tgm" -o "$W/back.grib" --force >/dev/null 2>&1
        back_bytes=$(stat -c %s "$W/back.grib")
        n=$(grib_count "$f")
        grib_bytes=$(stat -c %s "$f")
        tgm_bytes=$(stat -c %s "$W/out.tgm")
        payload=$("$TGM" ls "$W/out.tgm" | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
            NR > 1 { s += $c["stored_bytes"] } END { print s }')
        ratio=$(awk -v a="$tgm_bytes" -v b="$grib_bytes" 'BEGIN { printf "%.2f", a / b }')
        echo "| $name | $n | $grib_bytes | $tgm_bytes | $ratio | $(((tgm_bytes - payload) / n)) | $back_bytes |"
    done
    exit 0
fi

if [ "${1:-}" = era5 ]; then
    dir="${TGM_CFGRIB_SAMPLES:-$PWD/target/cfgrib-samples}"
    bash .ci/cfgrib-samples.sh python3 "$dir"
    src="$dir/era5-levels-members.grib"
    [ -s "$src" ] || { echo "$src missing (cfgrib's sample not fetched)" >&2; exit 1; }
    cp "$src" "$W/era5.grib1"
    grib_set -r -s edition=2,packingType=grid_ccsds "$W/era5.grib1" "$W/era5_ccsds.grib2"
    grib_set -r -s packingType=grid_second_order "$W/era5.grib1" "$W/era5_second_order.grib1"
    echo "| file | fields | GRIB bytes | .tgm bytes | .tgm payload bytes | .tgm bytes per field beyond the payload | \`to-grib\` of the archive |"
    echo "|---|---|---|---|---|---|---|"
    for f in era5.grib1 era5_ccsds.grib2 era5_second_order.grib1; do
        "$TGM" convert-grib "$W/$f" -o "$W/out.tgm" --force >/dev/null 2>&1
        "$TGM" to-grib "$W/out.tgm" -o "$W/back.grib" --force >/dev/null 2>&1
        if cmp -s "$W/$f" "$W/back.grib"; then
            back="the source's bytes"
        elif grib_compare "$W/$f" "$W/back.grib" >/dev/null 2>&1; then
            back="grib_compare equal"
        else
            back="grib_compare finds differences"
        fi
        n=$(grib_count "$W/$f")
        tgm_bytes=$(stat -c %s "$W/out.tgm")
        payload=$("$TGM" ls "$W/out.tgm" | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
            NR > 1 { s += $c["stored_bytes"] } END { print s }')
        echo "| $f | $n | $(stat -c %s "$W/$f") | $tgm_bytes | $payload | $(((tgm_bytes - payload) / n)) | $back |"
    done
    echo
    echo "GRIB2 CCSDS: data sections $(($(key_sum section7Length "$W/era5_ccsds.grib2") - 5 * n)) bytes," \
        "headers $((($(stat -c %s "$W/era5_ccsds.grib2") - $(key_sum section7Length "$W/era5_ccsds.grib2") + 5 * n) / n)) bytes per field."
    # Complex packings of the same fields as GRIB2, written by ecCodes
    # (`grib_set -r`) and by `to-grib --packing` from the archive.
    grib_set -r -s edition=2 "$W/era5.grib1" "$W/era5.grib2"
    "$TGM" convert-grib "$W/era5.grib2" -o "$W/era5_2.tgm" --force >/dev/null 2>&1
    echo
    echo "| packing of the GRIB2 fields | written by ecCodes | written by \`tgm to-grib\` | values |"
    echo "|---|---|---|---|"
    for p in grid_complex grid_complex_spatial_differencing; do
        grib_set -r -s packingType=$p "$W/era5.grib2" "$W/ec_$p.grib2"
        "$TGM" to-grib "$W/era5_2.tgm" -o "$W/tgm_$p.grib2" --packing $p --force >/dev/null 2>&1
        same=$(grib_compare -c values "$W/era5.grib2" "$W/tgm_$p.grib2" >/dev/null 2>&1 && echo equal || echo differ)
        label=$p
        if [ "$p" = grid_complex_spatial_differencing ]; then
            orders() { grib_get -p orderOfSpatialDifferencing "$1" | sort -u | tr '\n' ' ' | sed 's/ $//'; }
            label="$p (order: ecCodes $(orders "$W/ec_$p.grib2"), tgm $(orders "$W/tgm_$p.grib2"))"
        fi
        echo "| $label | $(stat -c %s "$W/ec_$p.grib2") | $(stat -c %s "$W/tgm_$p.grib2") | $same |"
    done
    exit 0
fi

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
# Decimal-scaled: D = 1 set over the simple field's header (its codes
# unchanged), and the complex field repacked with D = 1.
grib_set -s decimalScaleFactor=1 "$W/n320.grib2" "$W/n320_d1.grib2"
grib_set -r -s packingType=grid_complex,decimalScaleFactor=1 "$W/n320.grib2" "$W/n320_complex_d1.grib2"
cp "$SAMPLES/sh_ml_grib2.tmpl" "$W/sh_ml.grib2"
# A T255 spectral field on the same header: near-normal coefficients (sums
# of four uniform draws) whose amplitude falls as n^-1.6, as atmospheric
# spectra do; the m = 0 imaginary parts zero.
spectral() {
    awk -v j="$1" 'BEGIN { srand(7); first = 1
        for (m = 0; m <= j; m++) for (n = m; n <= j; n++) {
            a = (n == 0) ? 300 : 40 / ((n + 1) ^ 1.6)
            re = a * (rand() + rand() + rand() + rand() - 2)
            im = (m == 0) ? 0 : a * (rand() + rand() + rand() + rand() - 2)
            printf "%s%.9f,%.9f", (first ? "" : ","), re, im; first = 0 } }'
}
printf 'set J=255; set K=255; set M=255; set values={%s}; write;\n' "$(spectral 255)" >"$W/sh_t255.rules"
grib_filter -o "$W/sh_t255.grib2" "$W/sh_t255.rules" "$SAMPLES/sh_ml_grib2.tmpl"

echo "| file | packing | GRIB bytes | data section bytes | --encoding | .tgm bytes | pipeline | .tgm payload bytes |"
echo "|---|---|---|---|---|---|---|---|"
for f in ll_1deg.grib2 ll_1deg_ccsds.grib2 n320.grib2 n320_ccsds.grib2 n320_ccsds_16_64.grib2 \
    n320_complex.grib2 n320_second_order.grib2 n320_d1.grib2:codes n320_complex_d1.grib2:codes \
    sh_ml.grib2:codes sh_t255.grib2:codes; do
  encodings=source
  case "$f" in *:codes) f=${f%:codes}; encodings="source codes" ;; esac
  for encoding in $encodings; do
    "$TGM" convert-grib "$W/$f" -o "$W/out.tgm" --encoding "$encoding" --force >/dev/null 2>&1
    packing=$(grib_get -p packingType "$W/$f")
    section=$(grib_get -p section7Length "$W/$f")
    # tgm ls: columns found by their header (the key columns vary)
    row=$("$TGM" ls "$W/out.tgm" | awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
        NR == 2 { print $c["pipeline"] " | " $c["stored_bytes"] }')
    echo "| $f | $packing | $(stat -c %s "$W/$f") | $((section - 5)) | $encoding | $(stat -c %s "$W/out.tgm") | $row |"
  done
done
