"""Reading an inbox's platform PGN files ahead, in a thread, while `ratings run` still imports
Dagster and opens the lake's instance: the ingest then takes the frames already read (issue 10).

The scan kernel and Polars release the GIL, so the reading overlaps the imports on the second
core. A file is taken only if it is still the file that was read (same size and modification
time); anything else, or a read that failed, is read again by the ingest as usual, so the result
never depends on the prefetch.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from rating_core.ingest.common import IngestResult
from rating_core.ingest.pgn import read_pgn

_lock = threading.Lock()
_pending: dict[tuple[Path, str], tuple[tuple[int, int], Future[IngestResult]]] = {}


def _stamp(path: Path) -> tuple[int, int]:
    """What identifies the file read: its size and modification time (nanoseconds)."""
    info = path.stat()
    return info.st_size, info.st_mtime_ns


def prefetch(files: list[tuple[Path, str]], ready: Callable[[], None] | None = None) -> int:
    """Start reading the PGN `files` (path, name as the ingest records it; see
    `inbox.platform_pgn_files`) in one background thread, in order; returns how many. `ready`,
    when given, is called in that thread first (a first run waits there for the process that
    compiles the scanner, rather than compiling it a second time)."""
    work = []
    with _lock:
        for path, name in files:
            future: Future[IngestResult] = Future()
            _pending[(path.resolve(), name)] = (_stamp(path), future)
            work.append((path, name, future))
    if work:  # a daemon thread: a run interrupted while it reads exits at once, not after
        threading.Thread(
            target=_read_all, args=(work, ready), name="ratings-prefetch", daemon=True
        ).start()
    return len(work)


def _read_all(
    work: list[tuple[Path, str, Future[IngestResult]]], ready: Callable[[], None] | None
) -> None:
    """Read each file in turn (after `ready`), each result (or error) into its future."""
    if ready is not None:
        with contextlib.suppress(Exception):  # waiting is an optimisation: read anyway
            ready()
    for path, name, future in work:
        if not future.set_running_or_notify_cancel():
            continue
        try:
            future.set_result(read_pgn(path, name))
        except BaseException as error:  # handed to whoever takes the file
            future.set_exception(error)


def take_prefetched(path: Path, name: str) -> IngestResult | None:
    """The result of reading `path` as `name` ahead, waiting for it if needed; None when it was
    not read ahead, the file changed since, or the read failed (the caller reads it then)."""
    with _lock:
        entry = _pending.pop((path.resolve(), name), None)
    if entry is None:
        return None
    stamp, future = entry
    try:
        result = future.result()
    except Exception:  # the ingest reads the file again and reports what is wrong with it
        return None
    return result if _stamp(path) == stamp else None


def forget_prefetched() -> None:
    """Drop what was read ahead and not taken (a file the ingest did not read), once the ingest
    is done, so its memory is freed."""
    with _lock:
        _pending.clear()
