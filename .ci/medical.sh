#!/usr/bin/env bash
# Medical sample files from registry packages: the NIfTI test images shipped
# in nibabel's wheel and the DICOM test files shipped in pydicom's wheel
# (PyPI), unpacked under $TGM_CI_CACHE/medical-samples (target/ outside
# .ci/run) by .ci/medical-env.sh, and converted by
# `cargo test -p tgm-cli --test medical_samples` in debug and release.
# pydicom and nibabel re-read what to-dicom and to-nifti write.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=.ci/medical-env.sh
source .ci/medical-env.sh
# The tests that need the samples or pydicom and nibabel are ignored by a
# plain `cargo test` (their reason says so) and run here. In CI, the debug
# build is the debug stage's (TGM_CI_FEATURES, .ci/run).
features=()
[ -n "${TGM_CI_FEATURES:-}" ] && features=(--features "$TGM_CI_FEATURES")
cargo test -p tgm-cli "${features[@]}" --test medical_geometry --test medical_pixel_modules \
    --test medical_samples --test medical_nifti -- --include-ignored
# The converters' own unit tests (tgm-convert is not a default member).
cargo test -p tgm-convert --features nifti,dicom --lib medical::
cargo test -p tgm-cli --release --test medical_samples -- --include-ignored
