"""`rating_core.kernels.memory.populate_behind`: pages mapped in ahead of a kernel, contents
never changed, and a site replay that uses it gives exactly what one without it gives."""

from __future__ import annotations

import ctypes
import mmap

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from rating_core.kernels import memory
from rating_core.schemas import GAMES_SCHEMA, conform
from rating_core.systems.site.periods import site_replay_periods


def _resident_pages(array: np.ndarray) -> int:
    """How many of the whole pages of `array` are in memory (mincore), without touching them."""
    libc = ctypes.CDLL(None, use_errno=True)
    start = -(-array.ctypes.data // mmap.PAGESIZE) * mmap.PAGESIZE
    pages = (array.ctypes.data + array.nbytes - start) // mmap.PAGESIZE
    flags = (ctypes.c_ubyte * pages)()
    libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
    assert libc.mincore(ctypes.c_void_p(start), pages * mmap.PAGESIZE, flags) == 0
    return sum(f & 1 for f in flags)


def _can_populate() -> bool:
    """Whether this system has MADV_POPULATE_WRITE (Linux 5.14 and later)."""
    if memory._MADVISE is None:
        return False
    probe = mmap.mmap(-1, mmap.PAGESIZE)
    address = ctypes.addressof(ctypes.c_char.from_buffer(probe))
    return memory._MADVISE(address, mmap.PAGESIZE, memory.MADV_POPULATE_WRITE) == 0


def test_spans_cover_every_whole_page_once_from_the_ends_back() -> None:
    arrays = [np.empty(3 * memory.STEP // 8 + 1000), np.empty(2 * memory.STEP // 8 + 3)]
    spans = memory._spans(arrays)
    ends = [(a.ctypes.data + a.nbytes) // memory.PAGE * memory.PAGE for a in arrays]
    # the first spans are each array's last step, then the steps before them
    assert [spans[0][1], spans[1][1]] == ends
    assert spans[2][1] == spans[0][0] and spans[3][1] == spans[1][0]
    for array in arrays:
        low = -(-array.ctypes.data // memory.PAGE) * memory.PAGE
        high = (array.ctypes.data + array.nbytes) // memory.PAGE * memory.PAGE
        mine = sorted(s for s in spans if low <= s[0] < high)
        assert mine[0][0] == low and mine[-1][1] == high
        assert all(a[1] == b[0] for a, b in zip(mine, mine[1:], strict=False))  # no gap, no overlap
        assert all(s[0] % memory.PAGE == 0 and s[1] % memory.PAGE == 0 for s in mine)


def test_small_or_strided_arrays_start_nothing() -> None:
    assert isinstance(memory.populate_behind([np.empty(10)]), memory._Nothing)
    strided = np.empty((2, 8 << 20))[:, ::2]  # 64 MB of memory behind a view of half of it
    assert isinstance(memory.populate_behind([strided]), memory._Nothing)


@pytest.mark.skipif(not _can_populate(), reason="no MADV_POPULATE_WRITE on this system")
def test_populate_maps_pages_in_and_changes_nothing() -> None:
    # a mapping of its own, never written: no page in memory yet (a `np.empty` may reuse pages
    # an earlier test freed, already resident)
    mapping = mmap.mmap(-1, 48 << 20)
    fresh = np.frombuffer(mapping, dtype=np.uint8)
    written = np.arange(4 << 20, dtype=np.int64)  # 32 MB, every page written
    before = _resident_pages(fresh)
    populating = memory.populate_behind([fresh, written])
    assert isinstance(populating, memory._Populating)
    populating._thread.join()  # to the end (`join()` would stop it after the current span)
    populating.join()
    assert _resident_pages(fresh) > before + (40 << 20) // mmap.PAGESIZE
    np.testing.assert_array_equal(written, np.arange(4 << 20, dtype=np.int64))


def _games(count: int) -> pl.DataFrame:
    """`count` rated blitz, rapid and bullet games among 300 players in one month (seeded)."""
    rng = np.random.default_rng(7)
    white = rng.integers(0, 300, count)
    black = (white + rng.integers(1, 300, count)) % 300
    return conform(
        pl.DataFrame(
            {
                "game_id": [f"g{i:07d}" for i in range(count)],
                "source": "platform",
                "played_at": pl.datetime_range(
                    pl.datetime(2024, 1, 1, time_zone="UTC"),
                    pl.datetime(2024, 1, 28, time_zone="UTC"),
                    interval="1s",
                    eager=True,
                )[:count],
                "period": "2024-01",
                "white_id": [f"p{w:03d}" for w in white],
                "black_id": [f"p{b:03d}" for b in black],
                "white_score": rng.choice([0.0, 0.5, 1.0], count),
                "category": rng.choice(["blitz", "rapid", "bullet"], count),
                "rated": True,
                "status": "finished",
                "plies": 40,
                "termination": "normal",
                "kind": "live",
            }
        ),
        GAMES_SCHEMA,
    )


def test_site_replay_is_the_same_with_and_without_populating(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    games = _games(20_000)
    monkeypatch.setattr(memory, "_MADVISE", None)
    without = site_replay_periods(games, None, None, None, ["2024-01"])["2024-01"]
    monkeypatch.undo()
    monkeypatch.setattr(memory, "MIN_BYTES", 0)
    monkeypatch.setattr(memory, "STEP", memory.PAGE)  # many spans: the thread races the kernel
    with_populate = site_replay_periods(games, None, None, None, ["2024-01"])["2024-01"]
    assert with_populate.history.height == 80_000
    assert_frame_equal(with_populate.history, without.history, check_exact=True)
    assert_frame_equal(with_populate.state, without.state, check_exact=True)
