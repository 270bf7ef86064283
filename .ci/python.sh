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
VENV="$(realpath -m "${TGM_PYENV:-${TGM_CI_CACHE:-target}/pyenv}")"

# The wheel's default features include the optional compressors blosc2,
# zfp and sz3 (docs/src/guide/python.md); their C/C++ builds are cached with the
# rest of the release build under CARGO_TARGET_DIR (.ci/run sets
# $TGM_CI_CACHE/target). test_codecs.py fails, rather than skips, for a
# codec named here that the wheel lacks.
export TGM_WHEEL_CODECS="blosc2,zfp,sz3"
# The converters: NIfTI and DICOM need no system library; GRIB and NetCDF
# need ecCodes and netCDF-C (.ci/weather.sh installs them), without which
# their tests skip.
FEATURES="nifti,dicom"
if [ -e /usr/lib/x86_64-linux-gnu/libeccodes.so ] && [ -e /usr/include/netcdf.h ]; then
    FEATURES="grib,netcdf,nifti,dicom"
fi

step "python: clippy on the extension crate (default features, then $FEATURES)"
PYO3_PYTHON="$(command -v "$PY")" cargo clippy -p tgm-python --all-targets -- -D warnings
PYO3_PYTHON="$(command -v "$PY")" cargo clippy -p tgm-python --all-targets --features "$FEATURES" -- -D warnings

step "python: virtual environment $VENV"
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q maturin numpy xarray "dask[distributed]" cfgrib pytest pytest-timeout mypy "tensogram==0.24.0" \
    fsspec nibabel pydicom netCDF4 "zarr>=3" cfchecker "earthkit-data>=1,<2"

# cfchecker (the CF check of ds.to_netcdf in test_xarray_write.py) loads
# UDUNITS-2 at run time.
if ! ldconfig -p | grep libudunits2.so >/dev/null; then
    SUDO=""
    [ "$(id -u)" != "0" ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libudunits2-0 >/dev/null
fi

step "python: build and install (pip install ./python)"
export MATURIN_PEP517_ARGS="--features $FEATURES"
echo "wheel features: default + $FEATURES"
"$VENV/bin/python" -m pip install -q --force-reinstall --no-deps ./python
unset MATURIN_PEP517_ARGS

step "python: types (stubs against the built module, the package, a user's code)"
# The stubs declare every converter; those of features not built are
# absent from the module (and its __all__), which stubtest is told.
allowlist="$VENV/stubtest-allowlist.txt"
: >"$allowlist"
# The earthkit-data plugin classes derive from earthkit-data's (ABCMeta;
# earthkit-data ships no types, so mypy sees Any and no metaclass), and
# their attributes earthkit-data reads (a source's reader function, a data
# object's available_types) are descriptors mypy cannot type.
printf 'tgm\\._earthkit\\.[a-z_.]*Tgm[A-Za-z]*(\\.[a-z_]+)?\n' >>"$allowlist"
# The anemoi-inference output needs anemoi-inference, which this
# environment lacks (docs/src/guide/earthkit.md; run_plugin_suites.sh).
printf 'tgm._anemoi\n' >>"$allowlist"
for f in grib netcdf nifti dicom; do
    case ",$FEATURES," in
    *",$f,"*) ;;
    *) printf 'tgm._native.__all__\ntgm._native.convert_%s\ntgm._native.to_%s\n' "$f" "$f" >>"$allowlist" ;;
    esac
done
(cd python && export MYPY_CACHE_DIR="$VENV/mypy-cache" &&
    "$VENV/bin/python" -m mypy.stubtest --mypy-config-file pyproject.toml --allowlist "$allowlist" tgm &&
    "$VENV/bin/python" -m mypy -p tgm &&
    "$VENV/bin/python" -m mypy --strict tests/typing/usage.py)

step "python: the tgm binary (test_validate.py compares its reports; the weather-archive tests need grib and netcdf)"
bin_dir="${CARGO_TARGET_DIR:-$PWD/target}/release"
if [ -e /usr/lib/x86_64-linux-gnu/libeccodes.so ] && [ -e /usr/include/netcdf.h ]; then
    cargo build -q --release -p tgm-cli --features grib,netcdf
    export TGM_WEATHER_BIN="$bin_dir/tgm"
else
    cargo build -q --release -p tgm-cli
    echo "ecCodes or netCDF-C missing: the weather-archive tests will skip"
fi
export TGM_BIN="$bin_dir/tgm"
echo "TGM_BIN=$TGM_BIN"
# cfgrib's ERA5 samples (test_xarray_era5.py and test_earthkit.py compare
# with cfgrib's and earthkit's own views of them).
export TGM_CFGRIB_SAMPLES="$VENV/cfgrib-samples"
bash .ci/cfgrib-samples.sh "$VENV/bin/python" "$TGM_CFGRIB_SAMPLES"

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
