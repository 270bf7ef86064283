#!/usr/bin/env bash
# Sizes and speeds for the tables of docs/src/performance/medical.md
# (`python3 docs/generated.py docs/src/performance/medical.md medical-sizes`).
#
#   cli/tests/medical_sizes.sh TGM SAMPLES WORKDIR
#
# TGM is the tgm binary (a release build for speeds), SAMPLES the directory
# .ci/medical.sh fills (target/medical-samples), WORKDIR a scratch directory.
# Prints two markdown tables: sizes of NIfTI and DICOM inputs against tgm,
# and import/export throughput over the voxel bytes (best of 5 runs).
set -euo pipefail
tgm=$(realpath "$1")
samples=$(realpath "$2")
work=$3
here=$(dirname "$(realpath "$0")")
mkdir -p "$work"
cd "$work"

python3 "$here/medical_sizes.py"
python3 "$here/medical_sizes.py" 256 256 128 big

size() { stat -c %s "$1"; }
dirsize() { find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print s}'; }
raw_nii() { # uncompressed bytes of a .nii or .nii.gz
    case "$1" in *.gz) gzip -dc "$1" | wc -c ;; *) size "$1" ;; esac
}
fmt() { echo "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }
conv() { "$tgm" "$@" --force >/dev/null 2>&1; }

echo "| input | as shipped | raw | gzip -6 | tgm (shuffle+zstd) | tgm szip |"
echo "|---|---:|---:|---:|---:|---:|"
for f in ct.nii "$samples"/nibabel/anatomical.nii "$samples"/nibabel/functional.nii \
    "$samples"/nibabel/example4d.nii.gz "$samples"/nibabel/example_nifti2.nii.gz; do
    name=$(basename "$f")
    case "$f" in *.gz) gzip -dc "$f" >plain.nii ;; *) cp "$f" plain.nii ;; esac
    gzip -6 -c plain.nii >plain.nii.gz
    conv convert-nifti "$f" -o z.tgm
    if conv convert-nifti "$f" -o s.tgm --compression szip; then
        szip=$(fmt "$(size s.tgm)")
    else
        szip="n/a (float)"
    fi
    echo "| \`$name\` | $(fmt "$(size "$f")") | $(fmt "$(raw_nii "$f")") |" \
        "$(fmt "$(size plain.nii.gz)") | $(fmt "$(size z.tgm)") | $szip |"
done
# DICOM: the synthetic CT written as a 64-slice series, then pydicom samples.
conv convert-nifti ct.nii -o ct.tgm
rm -rf series && conv to-dicom ct.tgm -o series
conv convert-dicom series -o series.tgm
conv convert-dicom series -o series_szip.tgm --compression szip
tar -cf series.tar series && gzip -6 -c series.tar >series.tar.gz
echo "| \`ct\` as a DICOM series (64 files) | $(fmt "$(dirsize series)") | – |" \
    "$(fmt "$(size series.tar.gz)") (tar.gz) | $(fmt "$(size series.tgm)") |" \
    "$(fmt "$(size series_szip.tgm)") |"
for f in CT_small.dcm MR_small.dcm MR_small_RLE.dcm MR_small_jp2klossless.dcm rtdose.dcm; do
    p="$samples/pydicom/$f"
    gzip -6 -c "$p" >one.gz
    conv convert-dicom "$p" -o d.tgm
    if conv convert-dicom "$p" -o ds.tgm --compression szip; then
        szip=$(fmt "$(size ds.tgm)")
    else
        szip="n/a"
    fi
    echo "| \`$f\` | $(fmt "$(size "$p")") | – | $(fmt "$(size one.gz)") |" \
        "$(fmt "$(size d.tgm)") | $szip |"
done

# Throughput: best wall time of 5 runs, over the voxel bytes.
best() {
    local b=999999999999 t0 t1
    for _ in 1 2 3 4 5; do
        t0=$(date +%s%N)
        "$tgm" "$@" --force >/dev/null 2>&1
        t1=$(date +%s%N)
        [ $((t1 - t0)) -lt "$b" ] && b=$((t1 - t0))
    done
    echo "$b"
}
mbps() { awk -v n="$1" -v ns="$2" 'BEGIN {printf "%.0f", n / 1e6 / (ns / 1e9)}'; }
voxels=$(($(size big.nii) - 352))
conv convert-nifti big.nii -o big.tgm
rm -rf bigseries && conv to-dicom big.tgm -o bigseries
echo
echo "| operation (256×256×128 int16, $(fmt "$voxels") voxel bytes) | MB/s |"
echo "|---|---:|"
echo "| \`convert-nifti big.nii\` (shuffle+zstd) | $(mbps "$voxels" "$(best convert-nifti big.nii -o b1.tgm)") |"
echo "| \`convert-nifti big.nii.gz\` | $(mbps "$voxels" "$(best convert-nifti big.nii.gz -o b2.tgm)") |"
echo "| \`convert-nifti big.nii --compression szip\` | $(mbps "$voxels" "$(best convert-nifti big.nii -o b3.tgm --compression szip)") |"
echo "| \`to-nifti\` → .nii | $(mbps "$voxels" "$(best to-nifti big.tgm -o back.nii)") |"
echo "| \`to-nifti\` → .nii.gz | $(mbps "$voxels" "$(best to-nifti big.tgm -o back.nii.gz)") |"
echo "| \`convert-dicom\` (128-file series) | $(mbps "$voxels" "$(best convert-dicom bigseries -o b4.tgm)") |"
echo "| \`to-dicom\` (128 files) | $(mbps "$voxels" "$(best to-dicom big.tgm -o bigseries2)") |"
