#!/usr/bin/env bash
# Makes docs/src/images/plot-t2m.png, the command-line guide's `tgm plot` picture: a synthetic
# ERA5-like 2 m temperature on a 1.5° global grid (121 × 240, stored north
# first as GRIB's regular_ll) with a band of missing values, imported with
# `tgm import` and drawn with `tgm plot`. Needs python3 (no packages); uses
# $TGM, else builds tgm (dev profile) and uses that. With --check, compares
# the picture with the committed one instead of replacing it (CI runs this:
# the same input gives the same bytes).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${TGM:-}" ]; then
    cargo build -q -p tgm-cli
    target_dir="$(cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
    TGM="$target_dir/debug/tgm"
fi
TGM="$(realpath "$TGM")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$work/t2m.npy" <<'PY'
import math, struct, sys
nj, ni = 121, 240
vals = []
for j in range(nj):
    lat = 90.0 - 1.5 * j
    for i in range(ni):
        lon = 1.5 * i
        t = 300.0 - 55.0 * math.sin(math.radians(lat)) ** 2
        t += 6.0 * math.cos(math.radians(2 * lon)) * math.cos(math.radians(lat))
        t -= 8.0 * math.exp(-((lat - 30.0) ** 2 + (lon - 90.0) ** 2) / 200.0)
        vals.append(float("nan") if -3.0 <= lat <= 3.0 and 200.0 <= lon <= 260.0 else t)
header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }" % (nj, ni)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%dd" % len(vals), *vals))
PY
"$TGM" import "$work/t2m.npy" -o "$work/t2m.tgm" --allow-nan \
    --meta name=2t --meta mars.param=167 --meta mars.levtype=sfc \
    --meta mars.date=20240115 --meta mars.time:=1200 --meta mars.step=0 \
    --meta geography.gridType=regular_ll --meta geography.Ni=240 --meta geography.Nj=121 \
    --meta geography.latitudeOfFirstGridPointInDegrees=90 \
    --meta geography.latitudeOfLastGridPointInDegrees=-90 \
    --meta geography.iDirectionIncrementInDegrees=1.5 \
    --meta geography.jDirectionIncrementInDegrees=1.5 >/dev/null 2>"$work/import.log" ||
    { cat "$work/import.log" >&2; exit 1; }
( cd "$work" && "$TGM" plot t2m.tgm -o t2m.png )
if [ "${1:-}" = "--check" ]; then
    cmp "$work/t2m.png" docs/src/images/plot-t2m.png
    echo "docs/src/images/plot-t2m.png: reproduced byte for byte"
else
    mv "$work/t2m.png" docs/src/images/plot-t2m.png
    echo "docs/src/images/plot-t2m.png: $(wc -c < docs/src/images/plot-t2m.png) bytes"
fi
