"""Files the command line writes for the user (`export --output`, `report --output`): never inside
published data, always whole.

Published lists are immutable, so an output path inside any lake's `lists/` (this command's lake or
another, named directly or reached through a symbolic link) is refused, and so is a lake's `.lock`
(replacing it would let two runs hold "the" lock at once). A lake is recognised by its markers
(its lock, its Dagster instance, a published version's manifest), not by its name.

The file is written beside its target under a temporary name that carries the writer's process
id, fsynced and renamed over the target; a writer killed half-way leaves that temporary file, and
the next output written to the same folder removes every one whose process is gone.
"""

from __future__ import annotations

import errno
import os
import re
import uuid
from pathlib import Path

from pipelines.cli.errors import UserError

LISTS_DIR = "lists"
"""`<lake>/lists/`: the published versions (rating_core.lake.publishing.lists_root)."""

LAKE_MARKERS = (".lock", ".dagster", "ingest_files", ".staging")
"""Entries only a lake has beside its `lists/` (its lock, its Dagster instance, its ingest
catalogue, its staging folder): a folder holding `lists/` and one of these is a lake."""

TEMPORARY = re.compile(r"^\..+\.ratings-(?P<pid>\d+)-[0-9a-f]{32}\.partial$")
"""A temporary output file: `.<name>.ratings-<pid>-<random>.partial`."""

_DISK_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


MANIFEST_FILE = "manifest.json"
"""Every published version's manifest (rating_core.lake.publishing.MANIFEST_FILE)."""


def is_lake(folder: Path) -> bool:
    """Whether `folder` is a lake: it holds `lists/` and one of the LAKE_MARKERS, or a published
    version (`lists/<list>/<period>/v<N>/manifest.json`, a lake copied without its lock)."""
    try:
        lists = folder / LISTS_DIR
        if not lists.is_dir():
            return False
        if any((folder / marker).exists() for marker in LAKE_MARKERS):
            return True
        return next(lists.glob(f"*/*/v*/{MANIFEST_FILE}"), None) is not None
    except OSError:  # unreadable: not a lake we can tell
        return False


def _forms(path: Path) -> list[Path]:
    """`path` as written (made absolute) and as the file system resolves it (symbolic links
    followed, including the last part), without duplicates."""
    lexical = Path(os.path.abspath(path))
    resolved = path.resolve()
    return [lexical] if lexical == resolved else [lexical, resolved]


def refuse_published(path: Path, option: str = "--output") -> None:
    """Refuse an output inside any lake's `lists/` or a lake's `.lock`, with one sentence that
    says which lake and where to write instead."""
    from rating_core.lake.lock import LOCK_FILE

    for form in _forms(path):
        if form.name == LOCK_FILE and is_lake(form.parent):
            raise UserError(
                f"{option} '{path}' is the lock of the lake '{form.parent}', which keeps two runs "
                "apart; give another file name"
            )
        for folder in form.parents:
            if folder.name == LISTS_DIR and is_lake(folder.parent):
                via = "" if form == Path(os.path.abspath(path)) else f" (through a link: {form})"
                raise UserError(
                    f"{option} '{path}' is inside the published lists of the lake "
                    f"'{folder.parent}'{via}, which are never modified; write it elsewhere, "
                    f"e.g. {folder.parent / path.name}"
                )


def check_output(path: Path, option: str = "--output") -> None:
    """Refuse, before any work, an output we must not or cannot write: published data, a folder,
    a missing folder, a denied permission."""
    refuse_published(path, option)
    if path.is_dir():
        raise UserError(f"{option} '{path}' is a folder; give a file name")
    folder = path.parent
    for above in (folder, *folder.parents):
        if above.exists() and not above.is_dir():
            raise UserError(f"cannot write '{path}': '{above}' is a file, not a folder")
    if not folder.is_dir():
        raise UserError(f"cannot write '{path}': the folder '{folder}' does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UserError(f"cannot write '{path}': permission denied")


def _alive(pid: int) -> bool:
    """Whether process `pid` still runs (ours counts as running)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Remove the temporary output files in `folder` whose writer is gone (killed half-way)."""
    removed: list[Path] = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = TEMPORARY.match(entry.name)
        if match and not _alive(int(match["pid"])):
            try:
                entry.unlink()
            except FileNotFoundError:  # another command removed it first
                continue
            removed.append(entry)
    return removed


def temporary_for(target: Path) -> Path:
    """A fresh temporary name beside `target`, carrying this process's id."""
    return target.parent / f".{target.name}.ratings-{os.getpid()}-{uuid.uuid4().hex}.partial"


def write_atomically(target: Path, data: bytes) -> None:
    """Write `data` to `target` through a temporary file in the same folder, fsync and a rename,
    after removing what killed writers left there. A full disk is the machine's fault (the
    command line says so, exit 1); another failure to write is one sentence."""
    from rating_core.lake.storage import fsync_dir

    check_output(target)
    folder = target.parent
    remove_stale_temporaries(folder)
    temporary = temporary_for(target)
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except PermissionError as error:
        raise UserError(f"cannot write '{target}': permission denied") from error
    except OSError as error:
        if error.errno in _DISK_FULL:
            raise
        raise UserError(f"cannot write '{target}': {error.strerror or error}") from error
    finally:
        temporary.unlink(missing_ok=True)
    fsync_dir(folder)
