"""One run at a time on a lake: an exclusive lock on `<lake>/.lock` (DESIGN §5).

A run ingests into the lake, computes per-period digests, publishes and records those digests; if
two runs interleaved, the lake could record one inbox's digests beside the other's lists. The lock
file holds the holder's pid and command so that a waiting run can say whom it waits for. The lock
is `fcntl.flock`: the kernel releases it when the holder exits, even after a kill -9, so a stale
`.lock` file never blocks a lake.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rating_core.lake.storage import as_local_path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: runs on one lake are not serialised there
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".lock"
HELD_VAR = "RATINGS_LAKES_HELD"
"""The lakes (resolved paths, `os.pathsep`-separated) whose lock this process or its parent holds:
a step process of the holder's run inherits it and does not wait for its own parent."""


@dataclass(frozen=True)
class LockHolder:
    """Who holds a lake's lock, as its lock file says (pid None when it has not written it yet)."""

    pid: int | None
    command: str
    since: str


def read_holder(lake: Path | str) -> LockHolder:
    """The holder recorded in `<lake>/.lock` (fields empty when the file is empty or unreadable)."""
    try:
        record = json.loads((as_local_path(lake) / LOCK_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return LockHolder(None, "", "")
    if not isinstance(record, dict):
        return LockHolder(None, "", "")
    pid = record.get("pid")
    return LockHolder(
        pid if isinstance(pid, int) else None,
        str(record.get("command", "")),
        str(record.get("since", "")),
    )


@contextlib.contextmanager
def hold_lake(
    lake: Path | str, command: str, on_wait: Callable[[LockHolder], None] | None = None
) -> Iterator[None]:
    """Hold the lake's exclusive lock for the block; if another process holds it, call
    `on_wait(holder)` once, then wait until it is released.

    Creates the lake folder. The lock file is rewritten with this process's pid and `command`
    while held and emptied on release.
    """
    folder = as_local_path(lake)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LOCK_FILE, "a+", encoding="utf-8") as handle:
        if fcntl is not None:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None:
                    on_wait(read_holder(folder))
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        record = {
            "pid": os.getpid(),
            "command": command,
            "since": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(record) + "\n")
        handle.flush()
        saved = os.environ.get(HELD_VAR)
        os.environ[HELD_VAR] = os.pathsep.join(filter(None, [saved, str(folder.resolve())]))
        try:
            yield
        finally:
            if saved is None:
                os.environ.pop(HELD_VAR, None)
            else:
                os.environ[HELD_VAR] = saved
            handle.seek(0)
            handle.truncate()
            handle.flush()
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def is_held_here(lake: Path | str) -> bool:
    """True when this process, or the run that started it, holds the lake's lock."""
    held = os.environ.get(HELD_VAR, "")
    return str(as_local_path(lake).resolve()) in held.split(os.pathsep) if held else False


@contextlib.contextmanager
def hold_lake_unless_held(
    lake: Path | str, command: str, on_wait: Callable[[LockHolder], None] | None = None
) -> Iterator[None]:
    """`hold_lake`, unless this process's run already holds it: a run launched from the UI, the
    sensor or the schedule takes the lake like `ratings run`, while the steps of `ratings run`
    itself (in its process or its step processes) go ahead."""
    if is_held_here(lake):
        yield
        return
    with hold_lake(lake, command, on_wait):
        yield
