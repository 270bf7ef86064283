"""Rewrites a copy of the reference's plugin test suites
(``python/tensogram-earthkit/tests``, ``python/tensogram-anemoi/tests``)
in place for tgm's plugins, by the textual rules below and nothing else
(run_plugin_suites.sh calls it on the extracted copy):

* the plugin name ``"tensogram"`` (earthkit-data source, encoder, entry
  point) becomes ``"tgm"``, and ``"tensogram_earthkit"`` (the module a
  plugin class lives in) ``"tgm._earthkit"``;
* ``import tensogram`` becomes ``import tgm as tensogram``;
* ``from tensogram_anemoi.output import TensogramOutput`` becomes tgm's
  output class under the reference's name;
* an import from the reference's earthkit plugin (``tensogram_earthkit.*``)
  binds a name that plays a part in earthkit-data (the encoder and its
  encoded data, the readers earthkit-data calls, the data and reader
  classes) to tgm's class or function playing that part (``COUNTERPARTS``)
  and any other name to a placeholder that fails the test using it (tgm
  has no such private module), so that the module's other tests still
  run.

Usage: python adapt_plugin_suite.py DIRECTORY
"""

import pathlib
import re
import sys

PLACEHOLDER = '''
class _NoTgmCounterpart:
    """A private name of the reference plugin ({0}); tgm has none."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        raise NotImplementedError(f"{{self._name}}.{{attr}}: the reference plugin's private API, not tgm's")

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"{{self._name}}: the reference plugin's private API, not tgm's")
'''

#: ``tensogram_earthkit`` names -> tgm._earthkit's names for the same part.
COUNTERPARTS = {
    "tensogram_earthkit.TensogramData": "TgmData",
    "tensogram_earthkit.encoder.TensogramEncoder": "TgmEncoder",
    "tensogram_earthkit.encoder.TensogramEncodedData": "TgmEncodedData",
    "tensogram_earthkit.readers.file.TensogramFileReader": "TgmReader",
    "tensogram_earthkit.readers.file.reader": "_reader",
    "tensogram_earthkit.readers.memory.memory_reader": "_memory_reader",
}

PRIVATE_IMPORT = re.compile(
    r"^from (tensogram_earthkit[\w.]*) import (\(([^)]*)\)|[^\n]*)$", re.MULTILINE
)


def _placeholders(match):
    module = match.group(1)
    names = match.group(3) if match.group(3) is not None else match.group(2)
    lines = []
    for item in names.replace("\n", " ").split(","):
        item = item.split("#")[0].strip()
        if not item:
            continue
        name, _, alias = item.partition(" as ")
        name, bound = name.strip(), (alias or name).strip()
        counterpart = COUNTERPARTS.get(f"{module}.{name}")
        if counterpart:
            lines.append(f"from tgm._earthkit import {counterpart} as {bound}")
        else:
            lines.append(f"{bound} = _NoTgmCounterpart('{module}.{name}')")
    return "\n".join(lines)


RULES = [
    (re.compile(r"^from tensogram_anemoi\.output import TensogramOutput$", re.MULTILINE),
     "from tgm._anemoi import TgmOutput as TensogramOutput"),
    (re.compile(r"^(\s*)import tensogram$", re.MULTILINE), r"\1import tgm as tensogram"),
    (re.compile(r"([\"'])tensogram\1"), r"\1tgm\1"),
    (re.compile(r"([\"'])tensogram_earthkit\1"), r"\1tgm._earthkit\1"),
]


def adapt(text):
    for pattern, replacement in RULES:
        text = pattern.sub(replacement, text)
    adapted = PRIVATE_IMPORT.sub(_placeholders, text)
    if adapted != text:
        # After the module docstring and ``from __future__`` imports.
        head = re.match(r'(\s*(#[^\n]*\n)*\s*("""[\s\S]*?"""\n)?(\s*from __future__ import [^\n]*\n)?)',
                        adapted)
        cut = head.end() if head else 0
        adapted = adapted[:cut] + PLACEHOLDER.format("tensogram_earthkit") + adapted[cut:]
    return adapted


def main(directory):
    for path in sorted(pathlib.Path(directory).rglob("*.py")):
        text = path.read_text()
        adapted = adapt(text)
        if adapted != text:
            path.write_text(adapted)
            print(f"adapted {path}")


if __name__ == "__main__":
    main(sys.argv[1])
