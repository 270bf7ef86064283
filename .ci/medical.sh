#!/usr/bin/env bash
# Medical sample files from registry packages: the NIfTI test images shipped
# in nibabel's wheel and the DICOM test files shipped in pydicom's wheel
# (PyPI), unpacked under $TGM_CI_CACHE/medical-samples (target/ outside
# .ci/run) and converted by
# `cargo test -p tgm-cli --test medical_samples` in debug and release.
# Nothing downloaded here is committed. A virtual environment there holds
# pydicom and nibabel for the strict re-reading checks.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${TGM_CI_CACHE:-$PWD/target}/medical-samples"
mkdir -p "$dir"
if [ ! -d "$dir/nibabel" ] || [ ! -d "$dir/pydicom" ]; then
    python3 -m pip download --quiet --no-deps --only-binary=:all: \
        nibabel pydicom -d "$dir/wheels"
    python3 - "$dir" <<'PY'
import pathlib, sys, zipfile
out = pathlib.Path(sys.argv[1])
for wheel in sorted((out / "wheels").glob("*.whl")):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith("nibabel/tests/data/") and ".nii" in name:
                dest = out / "nibabel" / pathlib.Path(name).name
            elif name.startswith("pydicom/data/test_files/") and name.endswith(".dcm") \
                    and name.count("/") == 3:
                dest = out / "pydicom" / pathlib.Path(name).name
            else:
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(z.read(name))
PY
fi
echo "samples: $(ls "$dir/nibabel" | wc -l) NIfTI, $(ls "$dir/pydicom" | wc -l) DICOM in $dir"

# The independent readers the tests compare with: nibabel (qform,
# extensions) and pydicom with pylibjpeg-libjpeg (JPEG-LS decoding).
venv="$dir/pyenv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet nibabel pydicom pylibjpeg pylibjpeg-libjpeg
export TGM_MEDICAL_PYTHON="$venv/bin/python"

export TGM_MEDICAL_SAMPLES="$dir"

# pydicom (strict validation) and nibabel check what to-dicom and to-nifti
# write: medical_geometry and medical_pixel_modules skip those checks
# without TGM_MEDICAL_PYTHON.
venv="$dir/venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q pydicom nibabel numpy
export TGM_MEDICAL_PYTHON="$venv/bin/python"
cargo test -p tgm-cli --test medical_geometry --test medical_pixel_modules
cargo test -p tgm-cli --test medical_samples -- --nocapture
# Again with nibabel at hand: it reads the extensions to-nifti writes.
cargo test -p tgm-cli --test medical_nifti header_extensions -- --nocapture
cargo test -p tgm-cli --release --test medical_samples -- --nocapture
