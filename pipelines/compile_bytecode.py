"""Compile the installed packages and the project to bytecode once, at install, saying how far
it has got every few seconds (`make run` on a fresh clone is never silent for long).

Where PYTHONDONTWRITEBYTECODE is set (containers, CI) Python would otherwise compile each import
from source on every run. Usage: `python pipelines/compile_bytecode.py FOLDER...` (each folder's
entries are compiled one by one, on every core).
"""

from __future__ import annotations

import compileall
import sys
import time
from pathlib import Path

SAY_EVERY_S = 3.0
"""Seconds between two progress lines."""


def main(folders: list[str]) -> int:
    """Compile every entry of `folders`, printing progress; 0 when every file compiled."""
    entries = sorted(
        entry
        for folder in map(Path, folders)
        for entry in (folder.iterdir() if folder.name == "site-packages" else [folder])
        if entry.is_dir() or entry.suffix == ".py"
    )
    started = said = time.monotonic()
    ok = True
    for number, entry in enumerate(entries, 1):
        if entry.is_dir():
            ok &= bool(compileall.compile_dir(entry, quiet=1, workers=0))
        else:
            ok &= bool(compileall.compile_file(entry, quiet=1))
        now = time.monotonic()
        if now - said >= SAY_EVERY_S:
            print(
                f"  compiling bytecode: {number} of {len(entries)} packages "
                f"({now - started:.0f} s so far)",
                flush=True,
            )
            said = now
    print(f"  bytecode compiled in {time.monotonic() - started:.0f} s", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
