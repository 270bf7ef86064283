#!/usr/bin/env bash
# Runs the reference package's own Python test suite (python/tests of
# ecmwf/tensogram at a tag, 0.24.0 by default) twice: against the reference
# wheel, and against tgm built from this repository with `tensogram`
# aliased to `tgm`. Reports how many of the tests that pass on the reference
# wheel also pass on tgm, and lists the others (python/COMPAT.md explains
# them).
#
# Usage: python/compat/run_reference_suite.sh CHECKOUT [TAG]
#   CHECKOUT  a clone of https://github.com/ecmwf/tensogram (work tree or
#             bare git directory); nothing is downloaded from it
#   TAG       the tag or commit whose python/tests to run (default 0.24.0)
# Environment:
#   COMPAT_WORK  scratch directory (default /tmp/tgm-compat); holds the two
#                virtual environments, the extracted suite and the reports
#   PYTHON       interpreter for the virtual environments (default python3)
#   SKIP_BUILD=1 reuse the tgm already installed in the tgm environment
#   TGM_FEATURES cargo features of the tgm build, e.g. "grib,netcdf" (the
#                reference wheel has no converters, so its converter tests
#                that pass are those of a build without them)
set -euo pipefail

checkout="${1:?usage: $0 CHECKOUT [TAG]}"
tag="${2:-0.24.0}"
repo_root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(realpath -m "${COMPAT_WORK:-/tmp/tgm-compat}")"
py="${PYTHON:-python3}"
deps=(pytest pytest-timeout pytest-asyncio numpy xarray)
# The suite reads the repository's fixtures, golden files and notebooks
# relative to python/tests; they are extracted with it (not kept here).
paths=(python/tests tests/fixtures rust/tensogram/tests/golden examples/jupyter
    rust/tensogram-grib/testdata rust/tensogram-netcdf/testdata)

mkdir -p "$work"
echo "suite: $checkout @ $tag -> $work/suite"
rm -rf "$work/suite"
mkdir -p "$work/suite"
git -C "$checkout" archive "$tag" "${paths[@]}" | tar -x -C "$work/suite"

if [ ! -x "$work/ref/bin/python" ]; then
    "$py" -m venv "$work/ref"
    "$work/ref/bin/pip" install -q "tensogram==$tag" "${deps[@]}"
fi
"$work/ref/bin/pip" install -q "${deps[@]}"
if [ ! -x "$work/tgm/bin/python" ]; then
    "$py" -m venv "$work/tgm"
    "$work/tgm/bin/pip" install -q maturin "${deps[@]}"
fi
"$work/tgm/bin/pip" install -q "${deps[@]}"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    features="${TGM_FEATURES:+--features $TGM_FEATURES}"
    MATURIN_PEP517_ARGS="$features" \
        "$work/tgm/bin/pip" install -q --force-reinstall --no-deps "$repo_root/python"
fi
mkdir -p "$work/shim/tensogram"
echo 'import sys, tgm; sys.modules[__name__] = tgm' >"$work/shim/tensogram/__init__.py"

run() { # venv report [extra PYTHONPATH]
    (cd "$work/suite/python/tests" &&
        PYTHONPATH="${3:-}" "$work/$1/bin/python" -m pytest -q -p no:cacheprovider \
            --timeout=120 --junitxml="$work/$2.xml" . >"$work/$2.log" 2>&1) || true
}
run ref reference
run tgm tgm "$work/shim"

"$work/tgm/bin/python" "$repo_root/python/compat/compare_junit.py" "$work/reference.xml" "$work/tgm.xml"
