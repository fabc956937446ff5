"""A full disk during `ratings run`, told as the one sentence the README promises.

When the lake's disk fills up, the first write to fail is often the Dagster instance's sqlite
database, which says "database or disk is full" or only "disk I/O error", and Dagster writes
"Exception while writing logger call to event log: ..." straight to stderr before the run fails.
This module keeps those lines off the terminal (`RATINGS_DEBUG=1` shows them) and turns a failure met while the lake's disk has no room left into the
full-disk error, naming the lake.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from pipelines.cli.errors import debug_enabled, describe_exception, is_internal

NEARLY_FULL_BYTES = 16 * 1024 * 1024
"""A disk with less room than this (or than NEARLY_FULL_SHARE of its size) is full for a run:
sqlite, Parquet and the staging of a list version each need more than that at once."""
NEARLY_FULL_SHARE = 0.005

DAGSTER_LOG_FAILURE = "Exception while writing logger call to event log"
"""How Dagster starts the line it writes to stderr when its event log cannot be written."""


def nearly_full(path: Path) -> bool:
    """Whether the file system holding `path` (or its nearest existing parent) has no room
    left for a run."""
    for folder in (path, *path.parents):
        if folder.exists():
            try:
                usage = shutil.disk_usage(folder)
            except OSError:
                return False
            return usage.free < max(NEARLY_FULL_BYTES, usage.total * NEARLY_FULL_SHARE)
    return False


def as_disk_full(error: BaseException, lake: Path, where: str) -> BaseException:
    """`error` as the full-disk OSError naming the lake when it has no explanation of its own
    (a bug-like "disk I/O error") and the lake's disk is full, or when it says the disk is full
    without saying where (sqlite's "database or disk is full"); otherwise `error` itself."""
    sentence = describe_exception(error, where)
    unplaced = sentence.startswith("the disk is full") and " writing in " not in sentence
    if not unplaced and not (is_internal(sentence) and nearly_full(lake)):
        return error
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(lake))
    full.__cause__ = error
    return full


class _FilteredStream:
    """A text stream that passes every write on to `stream` except Dagster's event-log failure
    lines (the failure itself reaches the command line as the run's error)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if text.startswith(DAGSTER_LOG_FAILURE):
            return len(text)
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, flush, encoding...
        return getattr(self._stream, name)


@contextlib.contextmanager
def without_dagster_log_failures() -> Iterator[None]:
    """Keep Dagster's "Exception while writing logger call to event log" lines off stderr
    for the block (a full disk is said once, by the command line); `RATINGS_DEBUG=1` shows
    them."""
    if debug_enabled():
        yield
        return
    original = sys.stderr
    sys.stderr = _FilteredStream(original)
    try:
        yield
    finally:
        sys.stderr = original
