#!/usr/bin/env bash
# Peak resident memory of the tgm commands on one large float64 object.
#
# Builds the release `tgm`, writes a float64 .npy of TGM_MEM_MIB MiB
# (default 1024), runs each command under `/usr/bin/time -v` and prints a
# Markdown table: command, pipeline, peak RSS, ratio to the object, and
# whether it is within the bound of issue 25 (1.3 x object + 64 MiB), with
# the sizes of the input and the output.
# Not a test: its output is the table of docs/src/performance/memory.md,
# written there by `python3 docs/generated.py docs/src/performance/memory.md memory`.
#
#   benches/memory.sh                  # 1 GiB object
#   TGM_MEM_MIB=256 benches/memory.sh  # quick run
#   TGM_MEM_ROWS='lz4' benches/memory.sh  # only rows whose "command pipeline"
#                                         # matches this extended regex
#   TGM_MEM_BIN=target/debug/tgm benches/memory.sh  # measure this binary
#
# Needs python3 with NumPy (to write the input) and GNU time; the GRIB and
# NetCDF rows run when ecCodes and netCDF-C are installed (the tgm features
# grib and netcdf; nccopy from netcdf-bin). Scratch files go to a temporary
# directory (TGM_MEM_DIR to choose it), removed at exit.
set -euo pipefail

mib=${TGM_MEM_MIB:-1024}
case $mib in '' | *[!0-9]*) echo "TGM_MEM_MIB must be a whole number of MiB" >&2; exit 2 ;; esac
[ -x /usr/bin/time ] || { echo "GNU time (/usr/bin/time) is needed" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
weather=
libs=$(ldconfig -p)
if [[ $libs == *libeccodes* && $libs == *libnetcdf* ]] && command -v nccopy >/dev/null; then
    weather=--features=grib,netcdf
fi
if [ -n "${TGM_MEM_BIN:-}" ]; then
    tgm=$(realpath "$TGM_MEM_BIN")
else
    cargo build --release -p tgm-cli $weather --manifest-path "$root/Cargo.toml" >&2
    tgm="$root/target/release/tgm"
fi

dir=$(mktemp -d "${TGM_MEM_DIR:-${TMPDIR:-/tmp}}/tgm-memory.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"

python3 - "$mib" <<'EOF'
import sys
import numpy as np
n = int(sys.argv[1]) * (1 << 20) // 8
side = int(n ** 0.5)
rows = n // side
a = np.lib.format.open_memmap("a.npy", mode="w+", dtype="<f8", shape=(rows, side))
step = max(1, rows // 64)
for r in range(0, rows, step):
    block = np.arange(r * side, min(rows, r + step) * side, dtype="<f8")
    a[r:r + step] = (np.sin(block * 1e-4) * 40.0 + 273.15).reshape(-1, side)
a.flush()
EOF
object=$(python3 -c "import numpy as np; a = np.load('a.npy', mmap_mode='r'); print(a.nbytes)")

sp16=(--encoding simple_packing --bits 16)
bound=$(( object * 13 / 10 + (64 << 20) ))
echo "object: $object bytes ($(( object >> 20 )) MiB), bound: $(( bound >> 20 )) MiB" >&2

# The memory table's header, before its first row (none when TGM_MEM_ROWS
# selects no row of it).
headed=
table_header() {
    [ -n "$headed" ] && return
    headed=1
    echo
    echo "| command | pipeline | input (MiB) | output (MiB) | peak RSS (MiB) | × object | within 1.3 × object + 64 MiB |"
    echo "|---|---|---:|---:|---:|---:|---|"
}

# make_input FILE: writes an archive the rows read, the first time a
# selected row needs it.
make_input() {
    [ -e "$1" ] && return
    case $1 in
    none.tgm) "$tgm" import a.npy -o none.tgm ;;
    sp16.tgm) "$tgm" import a.npy -o sp16.tgm "${sp16[@]}" ;;
    zstd.tgm) "$tgm" import a.npy -o zstd.tgm --compression zstd ;;
    a.nii) make_input none.tgm && { "$tgm" to-nifti none.tgm -o a.nii || true; } ;;
    *) make_medical_input "$1" ;;
    esac 2>/dev/null
}

# make_medical_input FILE: the gzipped NIfTI, and a DICOM series of the
# same size as the float64 object: an int16 volume of 512 x 512 slices
# (DICOM has no float pixels), imported and written out by to-dicom.
make_medical_input() {
    case $1 in
    a.nii.gz) make_input a.nii && gzip -1 -c a.nii >a.nii.gz ;;
    i16.tgm)
        python3 - "$object" <<'PY'
import sys
import numpy as np
slices = max(1, int(sys.argv[1]) // (512 * 512 * 2))
a = np.lib.format.open_memmap("i16.npy", mode="w+", dtype="<i2", shape=(slices, 512, 512))
x = np.arange(512 * 512, dtype="<f8").reshape(512, 512)
for k in range(slices):
    a[k] = (np.sin(x * 1e-4 + k * 1e-2) * 2000.0 + (x * 7919 + k) % 61).astype("<i2")
a.flush()
PY
        "$tgm" import i16.npy -o i16.tgm && rm -f i16.npy
        ;;
    dcm) make_input i16.tgm && "$tgm" to-dicom i16.tgm -o dcm ;;
    # What to-nifti and to-dicom meet: the converters' default output.
    nifti.tgm) make_input a.nii && "$tgm" convert-nifti a.nii -o nifti.tgm ;;
    dicom.tgm) make_input dcm && "$tgm" convert-dicom dcm -o dicom.tgm ;;
    esac
}

# wanted TEXT: whether TEXT matches TGM_MEM_ROWS (every row when unset).
wanted() { [ -z "${TGM_MEM_ROWS:-}" ] || grep -Eq -- "$TGM_MEM_ROWS" <<<"$1"; }

# measure LABEL PIPELINE INPUT -- tgm arguments...
measure() {
    local label=$1 pipeline=$2 input=$3
    shift 4
    wanted "$label $pipeline" || return 0
    table_header
    make_input "$input"
    rm -rf out out.* out_*
    if ! /usr/bin/time -v -o time.txt "$tgm" "$@" >/dev/null 2>err.txt; then
        echo "| \`$label\` | $pipeline | | | failed: $(tail -n1 err.txt) | | |"
        return
    fi
    local kib rss in out
    kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' time.txt)
    rss=$(( kib * 1024 ))
    in=$(du -sb "$input" | cut -f1)
    out=$( (du -cb out out.* out_* 2>/dev/null || true) | tail -n1 | cut -f1)
    awk -v l="$label" -v p="$pipeline" -v i="$in" -v x="$out" -v r="$rss" -v o="$object" -v b="$bound" 'BEGIN {
        m = 1048576
        printf "| `%s` | %s | %.0f | %.0f | %.0f | %.2f | %s |\n", l, p, i / m, x / m, r / m, r / o, (r <= b ? "yes" : "**no**")
    }'
}

measure "import" "none" a.npy -- import a.npy -o out.tgm
measure "import" "sp16+szip" a.npy -- import a.npy -o out.tgm "${sp16[@]}" --compression szip
measure "import" "zstd" a.npy -- import a.npy -o out.tgm --compression zstd
measure "import" "lz4" a.npy -- import a.npy -o out.tgm --compression lz4
measure "recompress" "none → none" none.tgm -- recompress none.tgm out.tgm
measure "recompress" "none → sp16+szip" none.tgm -- recompress none.tgm out.tgm "${sp16[@]}" --compression szip
measure "recompress" "sp16 → lz4" sp16.tgm -- recompress sp16.tgm out.tgm --compression lz4
measure "recompress" "zstd → none" zstd.tgm -- recompress zstd.tgm out.tgm
measure "set" "none" none.tgm -- set -s mars.param=130 none.tgm out.tgm
measure "set" "zstd" zstd.tgm -- set -s mars.param=130 zstd.tgm out.tgm
measure "copy" "none" none.tgm -- copy none.tgm out.tgm
measure "copy --objects" "zstd (whole message, verbatim)" zstd.tgm -- copy --objects name=a zstd.tgm out.tgm
measure "merge" "none" none.tgm -- merge none.tgm -o out.tgm
measure "split" "zstd" zstd.tgm -- split zstd.tgm -o 'out_[index].tgm'
measure "reshuffle" "none" none.tgm -- reshuffle none.tgm -o out.tgm
measure "export" "none" none.tgm -- export none.tgm -o out
measure "export" "zstd" zstd.tgm -- export zstd.tgm -o out
measure "to-nifti" "shuffle+zstd (convert-nifti's default) → .nii" nifti.tgm -- to-nifti nifti.tgm -o out.nii
measure "to-nifti" "shuffle+zstd (convert-nifti's default) → .nii.gz" nifti.tgm -- to-nifti nifti.tgm -o out.nii.gz
measure "to-nifti" "none → .nii" none.tgm -- to-nifti none.tgm -o out.nii
measure "convert-nifti" ".nii → shuffle+zstd" a.nii -- convert-nifti a.nii -o out.tgm
measure "convert-nifti" ".nii → none" a.nii -- convert-nifti a.nii -o out.tgm --compression none
measure "convert-nifti" ".nii.gz → shuffle+zstd" a.nii.gz -- convert-nifti a.nii.gz -o out.tgm
measure "convert-nifti" ".nii.gz → none" a.nii.gz -- convert-nifti a.nii.gz -o out.tgm --compression none
measure "to-dicom" "int16 shuffle+zstd (convert-dicom's default) → a file per 512 × 512 slice" dicom.tgm -- to-dicom dicom.tgm -o out
measure "to-dicom" "int16 none → a file per 512 × 512 slice" i16.tgm -- to-dicom i16.tgm -o out
measure "convert-dicom" "int16 slices → shuffle+zstd" dcm -- convert-dicom dcm -o out.tgm
measure "convert-dicom" "int16 slices → none" dcm -- convert-dicom dcm -o out.tgm --compression none

# A .nii.gz written by to-nifti from convert-nifti's default output, and
# by nibabel from the same volume held in memory (its save only), in
# seconds of wall clock, one after the other in this run; nibabel from
# TGM_MEM_PYTHON (default python3). TGM_MEM_ROWS='nii.gz speed' prints
# only this table (the block nii-gz-speed of docs/src/performance/memory.md).
py=${TGM_MEM_PYTHON:-python3}
if wanted "to-nifti nii.gz speed" && "$py" -c "import nibabel" 2>/dev/null; then
    make_input nifti.tgm
    start=$(date +%s.%N)
    "$tgm" to-nifti nifti.tgm -o out.nii.gz 2>/dev/null
    end=$(date +%s.%N)
    tgm_s=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    tgm_mib=$(( $(stat -c %s out.nii.gz) >> 20 ))
    rm -f out.nii.gz
    read -r nib_s nib_mib < <("$py" - <<'PY'
import os, time
import nibabel as nib
import numpy as np
img = nib.load("a.nii")
data = np.asarray(img.dataobj)
out = nib.Nifti1Image(data, img.affine, img.header)
start = time.perf_counter()
nib.save(out, "nb.nii.gz")
print(f"{time.perf_counter() - start:.1f}", os.path.getsize("nb.nii.gz") >> 20)
os.remove("nb.nii.gz")
PY
)
    echo
    echo "| writer of the .nii.gz | seconds | output (MiB) |"
    echo "|---|---:|---:|"
    echo "| \`tgm to-nifti\` (decoding convert-nifti's shuffle+zstd output; deflating on $(nproc) cores) | $tgm_s | $tgm_mib |"
    echo "| nibabel $("$py" -c 'import nibabel; print(nibabel.__version__)') \`nib.save\` (the volume in memory) | $nib_s | $nib_mib |"
fi

# The weather converters: a NetCDF-4 file and a GRIB2 file of the same field.
if [ -n "$weather" ] && wanted 'netcdf|grib'; then
    make_input none.tgm
    read -r nj ni < <(python3 -c "import numpy as np; print(*np.load('a.npy', mmap_mode='r').shape)")
    # The metadata convert-netcdf writes for a double variable t(y, x).
    dims="[{\"len\":$nj,\"name\":\"y\",\"unlimited\":false},{\"len\":$ni,\"name\":\"x\",\"unlimited\":false}]"
    none='"attrs":{},"attr_order":[],"attr_types":{}'
    "$tgm" set -s "_extra_.netcdf={\"dims\":$dims,\"format\":\"netcdf4\",$none}" \
        -s '_extra_.dim_names=["y","x"]' -s 'dim_names=["y","x"]' -s name=t \
        -s "netcdf={\"type\":\"double\",$none}" none.tgm nc.tgm 2>/dev/null
    measure "to-netcdf" "none → NetCDF-4 (chunked, deflate 4 + shuffle)" nc.tgm -- to-netcdf nc.tgm -o out.nc
    [ -f out.nc ] && mv out.nc a.nc
    rm -f nc.tgm
    # Only when the to-netcdf row ran (TGM_MEM_ROWS may leave it out).
    if [ -f a.nc ]; then
        nccopy -d 0 a.nc a_plain.nc
        measure "convert-netcdf" "NetCDF-4 chunked, uncompressed → none" a_plain.nc -- convert-netcdf a_plain.nc -o out.tgm
        rm -f a_plain.nc
        measure "convert-netcdf" "NetCDF-4 chunked, deflate → none" a.nc -- convert-netcdf a.nc -o out.tgm
        rm -f a.nc
    fi
    # A regular lat/lon grid of the .npy's shape, written from ecCodes'
    # GRIB2 sample with 16-bit simple packing.
    geo=$(awk -v ni="$ni" -v nj="$nj" 'BEGIN {
        printf "{\"gridType\":\"regular_ll\",\"Ni\":%d,\"Nj\":%d,\"numberOfPoints\":%d,", ni, nj, ni * nj
        printf "\"latitudeOfFirstGridPointInDegrees\":90.0,\"latitudeOfLastGridPointInDegrees\":-90.0,"
        printf "\"longitudeOfFirstGridPointInDegrees\":0.0,\"longitudeOfLastGridPointInDegrees\":%.6f,", 360 - 360 / ni
        printf "\"iDirectionIncrementInDegrees\":%.6f,\"jDirectionIncrementInDegrees\":%.6f}", 360 / ni, 180 / (nj - 1)
    }')
    "$tgm" set -s "geography=$geo" -s 'mars={"param":167}' -s 'grib={"bitsPerValue":16}' none.tgm field.tgm 2>/dev/null
    wanted "to-grib zstd" && "$tgm" recompress field.tgm z.tgm --compression zstd >/dev/null 2>&1
    measure "to-grib" "zstd → GRIB2 grid_simple 16 bits" z.tgm -- to-grib z.tgm -o out.grib2
    rm -f z.tgm
    measure "to-grib" "none → GRIB2 grid_simple 16 bits" field.tgm -- to-grib field.tgm -o out.grib2
    rm -f field.tgm
    [ -f out.grib2 ] && mv out.grib2 a.grib2
    measure "convert-grib" "GRIB2 grid_simple 16 bits → sp16+szip (source)" a.grib2 -- convert-grib a.grib2 -o out.tgm
    # convert-grib's own output (sp16+szip, the source kept) written back.
    if wanted "to-grib sp16+szip"; then
        if [ -f out.tgm ]; then mv out.tgm sp.tgm; else "$tgm" convert-grib a.grib2 -o sp.tgm 2>/dev/null; fi
        rm -f a.grib2
        measure "to-grib" "sp16+szip (convert-grib's output) → GRIB2 grid_simple 16 bits" sp.tgm -- to-grib sp.tgm -o out.grib2
        rm -f sp.tgm
    fi
    rm -f a.grib2
fi
