"""Reading an inbox's platform PGN files ahead, in a thread, while `ratings run` still imports
Dagster and opens the lake's instance: the ingest then takes the frames already read (issue 10).

The scan kernel and Polars release the GIL, so the reading overlaps the imports on the second
core. A file is taken only if it is still the file that was read (same size and modification
time); anything else, or a read that failed, is read again by the ingest as usual, so the result
never depends on the prefetch.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path

from rating_core.ingest.common import IngestResult
from rating_core.ingest.pgn import PGN_SUFFIXES, read_pgn

_lock = threading.Lock()
_pending: dict[tuple[Path, str], tuple[tuple[int, int], Future[IngestResult]]] = {}


def _stamp(path: Path) -> tuple[int, int]:
    """What identifies the file read: its size and modification time (nanoseconds)."""
    info = path.stat()
    return info.st_size, info.st_mtime_ns


def prefetch_platform_pgn(inbox: Path) -> int:
    """Start reading every PGN file of `<inbox>/platform/` in one background thread (in name
    order); returns how many files it will read."""
    folder = inbox / "platform"
    if not folder.is_dir():
        return 0
    files = sorted(
        p for p in folder.iterdir() if p.is_file() and p.name.lower().endswith(PGN_SUFFIXES)
    )
    if not files:
        return 0
    work = []
    with _lock:
        for path in files:
            name = path.relative_to(inbox).as_posix()
            future: Future[IngestResult] = Future()
            _pending[(path.resolve(), name)] = (_stamp(path), future)
            work.append((path, name, future))
    # a daemon thread: a run interrupted while it reads exits at once, not after the read
    threading.Thread(target=_read_all, args=(work,), name="ratings-prefetch", daemon=True).start()
    return len(files)


def _read_all(work: list[tuple[Path, str, Future[IngestResult]]]) -> None:
    """Read each file in turn, each result (or error) into its future."""
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
