"""Rewrites a copy of the reference's plugin test suites
(``python/tensogram-earthkit/tests``, ``python/tensogram-anemoi/tests``)
in place for tgm's plugins, by renaming and nothing else
(run_plugin_suites.sh calls it on the extracted copy):

* the plugin name ``"tensogram"`` (earthkit-data source and encoder,
  xarray engine, entry point) becomes ``"tgm"``;
* ``import tensogram`` becomes ``import tgm as tensogram``;
* the reference's earthkit plugin package ``tensogram_earthkit`` becomes
  tgm's, ``tgm._earthkit``, whose modules have the same names and roles
  (``data``, ``detection``, ``encoder``, ``fieldlist``, ``mars``,
  ``source``, ``readers.file``, ``readers.memory``, ``readers.stream``);
* the names in ``NAMES`` (classes and functions of the reference's
  plugins) become the names of tgm's counterparts.

Usage: python adapt_plugin_suite.py DIRECTORY
"""

import pathlib
import re
import sys

#: The reference plugins' names -> tgm's names for the same thing.
NAMES = {
    "TensogramData": "TgmData",
    "TensogramEncodedData": "TgmEncodedData",
    "TensogramEncoder": "TgmEncoder",
    "TensogramFileReader": "TgmFileReader",
    "TensogramSimpleFieldList": "TgmSimpleFieldList",
    "TensogramSource": "TgmSource",
    "TENSOGRM_MAGIC": "TGM_MAGIC",
    "is_mars_tensogram": "is_mars_tgm",
}

RULES = [
    (re.compile(r"^from tensogram_anemoi\.output import TensogramOutput$", re.MULTILINE),
     "from tgm._anemoi import TgmOutput as TensogramOutput"),
    (re.compile(r"^(\s*)import tensogram$", re.MULTILINE), r"\1import tgm as tensogram"),
    (re.compile(r"([\"'])tensogram\1"), r"\1tgm\1"),
    (re.compile(r"\btensogram_earthkit\b"), "tgm._earthkit"),
    (re.compile(r"\b(" + "|".join(NAMES) + r")\b"), lambda m: NAMES[m.group(1)]),
]


def adapt(text):
    for pattern, replacement in RULES:
        text = pattern.sub(replacement, text)
    return text


def main(directory):
    for path in sorted(pathlib.Path(directory).rglob("*.py")):
        text = path.read_text()
        adapted = adapt(text)
        if adapted != text:
            path.write_text(adapted)
            print(f"adapted {path}")


if __name__ == "__main__":
    main(sys.argv[1])
