#!/usr/bin/env bash
# Runs the reference's own plugin test suites (python/tensogram-earthkit/tests
# and python/tensogram-anemoi/tests of ecmwf/tensogram at a tag, 0.24.0 by
# default) twice each: against the reference's plugins, then — adapted by
# adapt_plugin_suite.py (renames of the reference's plugin, module, class
# and function names to tgm's, nothing else) — against the plugins of the
# tgm wheel built from this repository. Prints, per suite, how many of the
# tests that pass on the reference's plugin pass on tgm's, and lists the
# others. Then runs tgm's own python/tests/test_anemoi.py, which needs
# anemoi-inference (the CI's Python environment has none; see below).
# Exits non-zero when a test that passes on the reference's plugin fails on
# tgm's without being named in python/COMPAT.md, or test_anemoi.py fails.
#
# Not part of CI: tensogram-earthkit is not on PyPI and CI reaches only
# package registries, so its suite comes from a clone of the reference
# (python/tests/test_earthkit_reference.py runs its interface in CI).
# With TGM_WHEEL and the environments kept in COMPAT_WORK, the earthkit
# part takes about 15 s (about 2 minutes the first time):
#   SUITES=earthkit TGM_WHEEL=tgm-*.whl python/compat/run_plugin_suites.sh CHECKOUT
#
# Usage: python/compat/run_plugin_suites.sh CHECKOUT [TAG]
#   CHECKOUT  a clone of https://github.com/ecmwf/tensogram (work tree or
#             bare git directory); the reference's earthkit plugin is
#             installed from it (tensogram-earthkit is not on PyPI)
#   TAG       the tag or commit whose suites to run (default 0.24.0)
# Environment:
#   COMPAT_WORK  scratch directory (default /tmp/tgm-plugin-compat): the
#                virtual environments, the suites and the reports
#   PYTHON       interpreter for the virtual environments (default python3)
#   TGM_WHEEL    a built tgm wheel to install instead of building one
#   SUITES       which suites (default "earthkit anemoi")
#   ANEMOI_INFERENCE  the anemoi-inference version (default 0.10.1, the
#                newest the reference's tensogram-anemoi accepts)
#   TGM_S3S_FS   the s3s-fs binary for test_anemoi.py's bucket test (found
#                as python/tests/test_remote.py says; .ci/remote.sh installs
#                it; the test skips without it)
#
# anemoi-inference requires torch, which PyPI has only as its CUDA build
# (about 0.5 GB, plus some GB of nvidia-* wheels). The output interface the
# suite drives imports torch only when a model runs, so anemoi-inference is
# installed here with every dependency but torch. It also requires
# earthkit-data < 1 while both earthkit plugins need 1.x: each suite has
# its own environments.
set -euo pipefail

checkout="${1:?usage: $0 CHECKOUT [TAG]}"
tag="${2:-0.24.0}"
repo_root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(realpath -m "${COMPAT_WORK:-/tmp/tgm-plugin-compat}")"
py="${PYTHON:-python3}"
anemoi_version="${ANEMOI_INFERENCE:-0.10.1}"
test_deps=(pytest pytest-timeout)

status=0
mkdir -p "$work"
rm -rf "$work/src"
mkdir -p "$work/src"
git -C "$checkout" archive "$tag" python/tensogram-earthkit python/tensogram-anemoi | tar -x -C "$work/src"

venv() { # name -> creates $work/name once
    if [ ! -x "$work/$1/bin/python" ]; then
        "$py" -m venv "$work/$1"
        "$work/$1/bin/pip" install -q --upgrade pip
    fi
}

install_tgm() { # venv
    if [ -n "${TGM_WHEEL:-}" ]; then
        "$work/$1/bin/pip" install -q --force-reinstall --no-deps "$TGM_WHEEL"
    else
        "$work/$1/bin/pip" install -q maturin
        PATH="$work/$1/bin:$PATH" MATURIN_PEP517_ARGS="" \
            "$work/$1/bin/pip" install -q --force-reinstall --no-deps "$repo_root/python"
    fi
}

install_anemoi_without_torch() { # venv requirement
    "$work/$1/bin/pip" install -q --upgrade --no-deps "$2"
    mapfile -t deps < <("$work/$1/bin/python" -c '
import importlib.metadata as m
for r in m.requires("anemoi-inference") or []:
    if "extra ==" not in r and not r.split(";")[0].strip().startswith("torch"):
        print(r)')
    "$work/$1/bin/pip" install -q "${deps[@]}"
}

suite_copy() { # plugin side -> $work/suites/side/plugin
    rm -rf "$work/suites/$2/$1"
    mkdir -p "$work/suites/$2/$1"
    cp -r "$work/src/python/tensogram-$1/tests" "$work/suites/$2/$1/"
}

run() { # venv plugin side
    (cd "$work/suites/$3/$2" &&
        "$work/$1/bin/python" -m pytest -q -p no:cacheprovider --timeout=120 \
            --junitxml="$work/$2-$3.xml" tests >"$work/$2-$3.log" 2>&1) || true
    tail -1 "$work/$2-$3.log"
}

for suite in ${SUITES:-earthkit anemoi}; do
    echo "=== $suite: setting up"
    case "$suite" in
    earthkit)
        short=ek
        venv ek-ref
        "$work/ek-ref/bin/pip" install -q "${test_deps[@]}" entrypoints "tensogram==$tag" \
            "tensogram-xarray==$tag" "$work/src/python/tensogram-earthkit"
        venv ek-tgm
        "$work/ek-tgm/bin/pip" install -q "${test_deps[@]}" entrypoints numpy xarray \
            "earthkit-data>=1.0.2,<2" earthkit-utils
        install_tgm ek-tgm
        ;;
    anemoi)
        short=an
        venv an-ref
        install_anemoi_without_torch an-ref "anemoi-inference==$anemoi_version"
        "$work/an-ref/bin/pip" install -q "${test_deps[@]}" fsspec "tensogram==$tag"
        "$work/an-ref/bin/pip" install -q --no-deps "tensogram-anemoi==$tag"
        venv an-tgm
        install_anemoi_without_torch an-tgm "anemoi-inference==$anemoi_version"
        # The reference's plugin beside tgm's: test_anemoi.py compares them.
        "$work/an-tgm/bin/pip" install -q "${test_deps[@]}" fsspec numpy "tensogram==$tag"
        "$work/an-tgm/bin/pip" install -q --no-deps "tensogram-anemoi==$tag"
        install_tgm an-tgm
        ;;
    *)
        echo "unknown suite $suite (earthkit, anemoi)" >&2
        exit 2
        ;;
    esac
    suite_copy "$suite" reference
    suite_copy "$suite" tgm
    "$work/$short-tgm/bin/python" "$repo_root/python/compat/adapt_plugin_suite.py" "$work/suites/tgm/$suite"
    echo "=== $suite: the reference's plugin"
    run "$short-ref" "$suite" reference
    echo "=== $suite: tgm's plugin"
    run "$short-tgm" "$suite" tgm
    echo "=== $suite: compared"
    "$work/$short-tgm/bin/python" "$repo_root/python/compat/compare_junit.py" \
        "$work/$suite-reference.xml" "$work/$suite-tgm.xml" "$repo_root/python/COMPAT.md" || status=1
done

case " ${SUITES:-earthkit anemoi} " in
*" anemoi "*)
    # With the reference's range (beside the reference's plugin), then with
    # the newest anemoi-inference (its Output(context, metadata, ...)).
    venv an-new
    install_anemoi_without_torch an-new anemoi-inference
    "$work/an-new/bin/pip" install -q "${test_deps[@]}" fsspec numpy
    install_tgm an-new
    for env in an-tgm an-new; do
        echo "=== tgm's own anemoi-inference tests (python/tests/test_anemoi.py), $env"
        (cd "$repo_root/python" &&
            "$work/$env/bin/python" -m pytest -q -p no:cacheprovider --timeout=120 -rs tests/test_anemoi.py)
    done
    ;;
esac
exit "$status"
