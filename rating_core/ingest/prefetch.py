"""Reading an inbox's platform PGN files ahead, in a thread, while `ratings run` still imports
Dagster and opens the lake's instance: the ingest then takes the frames already read (issue 10).

The scan kernel and Polars release the GIL, so the reading overlaps the imports on the second
core. A file is taken only if it is still the file that was read (same size and modification
time); anything else, or a read that failed, is read again by the ingest as usual, so the result
never depends on the prefetch.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
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
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ratings-prefetch")
    with _lock:
        for path in files:
            name = path.relative_to(inbox).as_posix()
            _pending[(path.resolve(), name)] = (_stamp(path), pool.submit(read_pgn, path, name))
    pool.shutdown(wait=False)  # the thread ends once its files are read
    return len(files)


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
