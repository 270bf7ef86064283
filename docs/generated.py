#!/usr/bin/env python3
"""Regenerates a block of a book page from the run that makes it.

    python3 docs/generated.py docs/src/performance/weather.md weather-sizes

A generated block of a page is written between two markers, the first of
which names the block and the command that prints it (run from the
repository's root by `sh -c`):

    <!-- generated: weather-sizes; command: bash .ci/weather-sizes.sh -->
    | file | ... |
    <!-- end generated: weather-sizes -->

The command's standard output replaces what is between the markers; its
standard error passes through. The page is rewritten only when the command
succeeds and printed something, through a temporary file renamed into
place, so a failed or interrupted run leaves the page as it was.
`--list PAGE` prints each block's name and command. Standard library only.
"""

import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = re.compile(r"^<!-- generated: ([a-z0-9-]+); command: (.+) -->$")
END = "<!-- end generated: {} -->"


class BlockError(Exception):
    pass


def blocks(text, page):
    """(name, command, first line, end line) of every generated block."""
    lines = text.split("\n")
    found = []
    i = 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        if m:
            name, command = m.group(1), m.group(2)
            end = END.format(name)
            try:
                j = lines.index(end, i + 1)
            except ValueError:
                raise BlockError(f"{page}:{i + 1}: block {name!r} has no line {end!r}")
            inner = [k + 1 for k in range(i + 1, j) if BEGIN.match(lines[k])]
            if inner:
                raise BlockError(f"{page}:{inner[0]}: a block starts inside block {name!r}")
            if any(b[0] == name for b in found):
                raise BlockError(f"{page}:{i + 1}: block {name!r} appears twice")
            found.append((name, command, i, j))
            i = j
        elif lines[i].startswith("<!-- end generated:"):
            raise BlockError(f"{page}:{i + 1}: an end marker without its block")
        i += 1
    return found


def regenerate(page, name):
    with open(page, encoding="utf-8") as f:
        text = f.read()
    match = [b for b in blocks(text, page) if b[0] == name]
    if not match:
        raise BlockError(f"{page}: no generated block named {name!r}")
    _, command, first, last = match[0]
    print(f"{page}: {name}: running {command}", file=sys.stderr)
    run = subprocess.run(["sh", "-c", command], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if run.returncode != 0:
        raise BlockError(f"{page}: {name}: `{command}` failed with exit status "
                         f"{run.returncode}; the page is unchanged")
    output = run.stdout.strip("\n")
    if not output:
        raise BlockError(f"{page}: {name}: `{command}` printed nothing; the page is unchanged")
    lines = text.split("\n")
    new = "\n".join(lines[:first + 1] + output.split("\n") + lines[last:])
    folder = os.path.dirname(os.path.abspath(page))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".generated-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(new)
        os.chmod(tmp, os.stat(page).st_mode & 0o777)
        os.replace(tmp, page)
    except BaseException:
        os.unlink(tmp)
        raise
    print(output)
    print(f"{page}: block {name} rewritten", file=sys.stderr)


def main(argv):
    try:
        if len(argv) == 2 and argv[0] == "--list":
            with open(argv[1], encoding="utf-8") as f:
                for name, command, _, _ in blocks(f.read(), argv[1]):
                    print(f"{name}\t{command}")
            return 0
        if len(argv) != 2:
            print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
            return 2
        regenerate(argv[0], argv[1])
        return 0
    except (BlockError, OSError) as e:
        print(f"generated.py: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
