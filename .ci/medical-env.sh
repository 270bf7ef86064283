# Sourced by .ci/run (before the test stages) and .ci/medical.sh: the
# medical sample files from registry packages, the NIfTI test images shipped
# in nibabel's wheel and the DICOM test files shipped in pydicom's wheel
# (PyPI), unpacked under $TGM_CI_CACHE/medical-samples (target/ outside
# .ci/run), and a virtual environment there with pydicom and nibabel for the
# strict re-reading checks. Exports TGM_MEDICAL_SAMPLES and
# TGM_MEDICAL_PYTHON. Nothing downloaded here is committed.

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
# extensions, affines) and pydicom (strict validation of what to-dicom
# writes; with pylibjpeg-libjpeg, JPEG-LS decoding).
venv="$dir/pyenv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet nibabel pydicom pylibjpeg pylibjpeg-libjpeg numpy
export TGM_MEDICAL_PYTHON="$venv/bin/python"

export TGM_MEDICAL_SAMPLES="$dir"
