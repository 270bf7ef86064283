#!/usr/bin/env bash
# Makes docs/src/images/plot-t2m.png, the command-line guide's `tgm plot` picture: a synthetic
# ERA5-like 2 m temperature on a 1.5° global grid (121 × 240, stored north
# first as GRIB's regular_ll) with a band of missing values, imported with
# `tgm import` and drawn with `tgm plot`. Needs python3 (no packages); uses
# $TGM, else builds tgm (dev profile) and uses that. With --check, compares
# the picture with the committed one instead of replacing it (CI runs this):
# the same image, pixel for pixel, and the same chunks besides the
# compressed pixels, whose bytes depend on the deflate backend the build
# selected (flate2's zlib-rs or miniz_oxide, by cargo's feature unification).
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
    python3 - "$work/t2m.png" docs/src/images/plot-t2m.png <<'PY'
import struct, sys, zlib
def chunks(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG file")
    pos, idat, other = 8, b"", []
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IDAT":
            idat += body
        else:
            other.append((kind, body))
    return zlib.decompress(idat), other
made, committed = chunks(sys.argv[1]), chunks(sys.argv[2])
if made[1] != committed[1]:
    sys.exit(f"{sys.argv[2]}: its header, palette or text chunks differ from what tgm plot draws now")
if made[0] != committed[0]:
    sys.exit(f"{sys.argv[2]}: its pixels differ from what tgm plot draws now (run scripts/plot-example.sh)")
PY
    echo "docs/src/images/plot-t2m.png: reproduced pixel for pixel"
else
    mv "$work/t2m.png" docs/src/images/plot-t2m.png
    echo "docs/src/images/plot-t2m.png: $(wc -c < docs/src/images/plot-t2m.png) bytes"
fi
