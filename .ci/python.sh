#!/usr/bin/env bash
# Python package checks: builds tgm-python into a fresh virtual environment
# with `pip install ./python` (the README's command), installs the test
# dependencies and the reference wheel (tensogram==0.24.0, tests only), and
# runs the pytest suite. Exits non-zero on any failure, including "no tests
# collected".
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

step() { printf '\n=== %s ===\n' "$*"; }

PY="${PYTHON:-python3}"
VENV="$(realpath -m "${TGM_PYENV:-target/pyenv}")"

step "python: clippy on the extension crate"
PYO3_PYTHON="$(command -v "$PY")" cargo clippy -p tgm-python --all-targets -- -D warnings

step "python: virtual environment $VENV"
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q maturin numpy xarray "dask[distributed]" pytest pytest-timeout "tensogram==0.24.0"

step "python: build and install (pip install ./python)"
"$VENV/bin/python" -m pip install -q --force-reinstall --no-deps ./python

step "python: the tgm binary (tests/test_validate.py compares its reports)"
cargo build -p tgm-cli
export TGM_BIN="$PWD/target/debug/tgm"

step "python: pytest"
set +e
(cd python && "$VENV/bin/python" -m pytest -q -p no:cacheprovider --timeout=300 tests)
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
    echo "pytest collected no tests" >&2
    exit 1
fi
exit "$rc"
