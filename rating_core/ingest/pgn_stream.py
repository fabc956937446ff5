"""A PGN file of any size read in windows cut at game boundaries, in bounded memory: the file is
decompressed (or read) ahead on a thread into a few reused buffers while the scanner works on
the previous window, and each window comes out as raw game rows and quarantine rows.

What a window yields is exactly what reading the whole file gives for the same games (the cut is
where `pgn_scan` would cut a chunk: a game start), with line numbers and game ordinals counted
from the start of the file; `read_pgn` is the concatenation of the windows. A game id seen
twice in one window is quarantined there; one seen in different windows is the caller's to
find: `pgn.read_pgn` keeps every repeat in the rows (`keep_repeats`) and finds them over the
whole file, the lake's ingest store finds the ids repeated across windows from their hashes and
reads the file again with them (`repeated`), so that every later record of an id names the
file's first record, in whichever window it is (`pgn_frames.EarlierLines`).
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from rating_core.budget import WINDOW_MAX, show_size
from rating_core.ingest.common import IngestResult, UnreadableFileError, quarantine_rows
from rating_core.ingest.pgn_files import ZSTD_WINDOW_MAX, open_stream
from rating_core.ingest.pgn_frames import EarlierLines, derive, games_window, split
from rating_core.ingest.pgn_scan import CHUNK_MAX, _next_game_start, default_chunks
from rating_core.progress import Progress, report

WINDOW_BYTES = WINDOW_MAX
"""Text scanned per window: large enough that the per-window cost (a few Polars expressions)
is small beside the scan, small enough that a few windows in flight stay a small part of the
memory budget."""

BUFFERS = 3
"""Windows in flight: one being scanned, one ready, one being filled."""

_BOM = b"\xef\xbb\xbf"
_WHITESPACE = np.zeros(256, dtype=np.bool_)
_WHITESPACE[list(b" \t\n\r\x0b\x0c")] = True


class NotUtf8(Exception):
    """The file is not UTF-8: it is read again from its start as Windows-1252."""


def last_game_start(buf: np.ndarray, n: int) -> int:
    """The start of the last game that begins in buf[:n] after its first byte (-1: none): where
    a window is cut, so that it holds whole games and the rest goes to the next one."""
    step = 1 << 20
    while True:
        pos = max(1, n - step)
        cut = _next_game_start(buf, pos, n)
        if cut > 0:
            while True:
                after = _next_game_start(buf, cut + 1, n)
                if after < 0:
                    return cut
                cut = after
        if pos == 1:
            return -1
        step *= 4


def _fill(stream: object, buf: bytearray, have: int) -> tuple[int, bool]:
    """Read from `stream` into buf[have:] until it is full or the stream ends."""
    view = memoryview(buf)
    while have < len(buf):
        count = stream.readinto(view[have:])  # type: ignore[attr-defined]
        if not count:
            return have, True
        have += count
    return have, False


def windows(
    stream: object, size: int = WINDOW_BYTES, stretch: int = CHUNK_MAX, label: str = "the file"
) -> Iterator[np.ndarray]:
    """The stream's bytes as windows ending at a game start (the last one at the end of the
    stream), read ahead on a thread into `BUFFERS` reused buffers. A window is valid until the
    next one is asked for. A stretch of more than `stretch` bytes without a game start (at most
    the scanner's CHUNK_MAX) is an UnreadableFileError naming that rule, never an unbounded
    buffer: a file that expands to gigabytes of anything but games is refused by it."""
    free: queue.Queue[bytearray | None] = queue.Queue()
    ready: queue.Queue[tuple[bytearray, int, bool] | BaseException] = queue.Queue(maxsize=1)
    for _ in range(BUFFERS - 1):
        free.put(bytearray(size))
    stop = threading.Event()

    def produce() -> None:
        try:
            buf, have = bytearray(size), 0
            while not stop.is_set():
                have, eof = _fill(stream, buf, have)
                if eof:
                    ready.put((buf, have, True))
                    return
                cut = last_game_start(np.frombuffer(buf, dtype=np.uint8), have)
                if cut <= 0:  # one game fills the window: a larger one for it
                    if len(buf) >= min(stretch, CHUNK_MAX):
                        raise UnreadableFileError(
                            f"{label}: over {show_size(len(buf))} of text without a game "
                            "boundary: not PGN games, or one game larger than this run allows "
                            "(--memory)"
                        )
                    buf = buf + bytearray(min(len(buf), stretch - len(buf)))
                    continue
                following = free.get()
                if following is None:
                    return
                if len(following) < have - cut + size // 2:
                    following = bytearray(max(size, 2 * (have - cut)))
                following[: have - cut] = buf[cut:have]
                ready.put((buf, cut, False))
                buf, have = following, have - cut
        except BaseException as error:  # handed to the consumer
            ready.put(error)

    thread = threading.Thread(target=produce, name="ratings-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            item = ready.get()
            if isinstance(item, BaseException):
                raise item
            buf, count, last = item
            window = np.frombuffer(buf, dtype=np.uint8, count=count)
            window.flags.writeable = False  # the scanner's one compiled type: read-only bytes
            yield window
            if last:
                return
            free.put(buf)
    finally:
        stop.set()
        free.put(None)
        while thread.is_alive():  # unblock a producer waiting to hand over a window
            with contextlib.suppress(queue.Empty):
                ready.get(timeout=0.05)
        thread.join()


@dataclass
class PgnStream:
    """One PGN file read window by window: `chunks()` yields each window's raw rows and
    quarantine rows; `notes` and `games` are complete once it is exhausted. `legacy` reads the
    file as Windows-1252 (after `NotUtf8` from a UTF-8 reading); `pieces` is how many parts
    each window is scanned in (default: by size and CPUs). `repeated` (hashes of the ids
    repeated across windows) and `keep_repeats` say what becomes of repeated ids
    (`EarlierLines`)."""

    path: Path
    source_file: str
    legacy: bool = False
    window: int = WINDOW_BYTES
    zstd_window: int = ZSTD_WINDOW_MAX
    stretch: int = CHUNK_MAX
    pieces: int | None = None
    repeated: frozenset[int] = frozenset()
    keep_repeats: bool = False
    notes: list[str] = field(default_factory=list)
    games: int = 0

    def chunks(self) -> Iterator[IngestResult]:
        source = self.source_file
        first_game, line_base, stray_line = 1, 0, 0
        any_text = False
        last_report = 0.0
        earlier = EarlierLines(self.repeated, self.keep_repeats)
        with open_stream(self.path, source, self.zstd_window) as stream:
            size = stream.size()
            # at once, so that a file's row shows while its first window is still being read
            report(Progress("ingest", source, 0, size, "bytes", 0))
            for k, buf in enumerate(windows(stream, self.window, self.stretch, source)):
                start = 3 if k == 0 and bytes(buf[:3]) == _BOM else 0
                text = buf
                if self.legacy:
                    decoded = str(buf.data[start:], "cp1252", errors="ratings_latin1")
                    text, start = np.frombuffer(decoded.encode("utf-8"), dtype=np.uint8), 0
                pieces = self.pieces or default_chunks(text.shape[0] - start)
                try:
                    games, stray, lines = games_window(text, start, pieces, first_game, line_base)
                except UnreadableFileError as exc:
                    raise UnreadableFileError(f"{source}: {exc}") from exc
                if stray < 0:
                    raise NotUtf8(source)
                if k == 0:
                    stray_line = stray
                any_text = (
                    any_text or bool(games.height) or bool((~_WHITESPACE[text[start:]]).any())
                )
                result = self._rows(games, text, line_base, earlier)
                if k == 0 and stray > 0:
                    extra = quarantine_rows(
                        [
                            {
                                "source_file": source,
                                "line": stray,
                                "record": None,
                                "value": "",
                                "reason": "text before the first game's tags is not part of "
                                "any game",
                            }
                        ]
                    )
                    result = IngestResult(result.rows, pl.concat([extra, result.quarantine]))
                first_game += games.height
                line_base = lines
                self.games = first_game - 1
                now = time.monotonic()
                if now - last_report > 0.5:
                    last_report = now
                    done = min(stream.position(), size)
                    report(Progress("ingest", source, done, size, "bytes", self.games))
                yield result
        if self.legacy:
            self.notes.append(f"{source}: not UTF-8, read as Windows-1252")
        if not self.games and not stray_line:  # nothing but blank lines (or `%` escape lines)
            self.notes.append(
                f"{source}: no games in the file" if any_text else f"{source}: empty, no games"
            )
        report(Progress("ingest", source, size, size, "bytes", self.games, finished=True))

    def _rows(
        self, games: pl.DataFrame, text: np.ndarray, line_base: int, earlier: EarlierLines
    ) -> IngestResult:
        """Raw rows and quarantine of one window's games (`line_base`: lines before it;
        `earlier`: what the windows before it found of the ids they repeat)."""
        nuls = None
        if games.height and _has_nul(text):
            newlines = np.flatnonzero(text == 10)
            nuls = np.searchsorted(newlines, np.flatnonzero(text == 0)) + 1 + line_base
        return split(derive(games, self.source_file, nuls), self.source_file, earlier)


def _has_nul(text: np.ndarray) -> bool:
    """Whether the window holds a NUL byte (a memchr over the bytes it views, no copy)."""
    owner = text.base.obj if isinstance(text.base, memoryview) else None
    if isinstance(owner, (bytes, bytearray)):
        return owner.find(b"\0", 0, text.shape[0]) >= 0
    return bool((text == 0).any())
