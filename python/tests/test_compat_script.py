"""A script written for the reference API gives the same output with tgm."""

import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("tensogram")

SCRIPT = pathlib.Path(__file__).with_name("reference_script.py")
AS_TGM = "import sys, tgm; sys.modules['tensogram'] = tgm; import runpy; runpy.run_path(sys.argv[1], run_name='__main__')"


def run(prelude):
    cmd = [sys.executable, "-c", prelude, str(SCRIPT)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_reference_script_runs_unchanged_with_tgm():
    reference = run("import sys, runpy; runpy.run_path(sys.argv[1], run_name='__main__')")
    ours = run(AS_TGM)
    assert reference.count("\n") > 25
    assert ours == reference
