"""The README's Python example ("Python and xarray"), run as written."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_readme_xarray_example(tmp_path, monkeypatch):
    pytest.importorskip("xarray")
    text = (ROOT / "README.md").read_text()
    section = text[text.index("\n## Python and xarray\n"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    assert (tmp_path / "t2m.tgm").read_bytes()[:8] == b"TENSOGRM"
