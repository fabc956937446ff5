"""The fair-play window's pair table (RULES §5, 24 hours): an open-addressing hash table, inside
numba, of the pairs with recent rating-changing matches, each with the times of its last few;
stale pairs are purged or recycled, the table rebuilt when it fills, and the pair state saved
from it and loaded into it between periods.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rating_core.kernels.intrinsics import table_bits

SENTINEL = np.iinfo(np.int64).min // 2  # "no rating-changing match yet" in a pair slot
EMPTY = -1  # an unused pair-table slot (pair keys are >= 0)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def home_slot(key: int, bits: int) -> int:
    """Home slot of a pair key in a table of 2**bits slots (Fibonacci hashing)."""
    home = (np.uint64(key) * _GOLDEN) >> np.uint64(64 - bits)
    return np.int64(home)  # type: ignore[return-value]  # an int64 slot index inside the kernel


@njit(cache=True)
def _find(table: np.ndarray, key: int, bits: int) -> int:
    """The slot holding `key`, or the empty slot where it would go (linear probing)."""
    mask = (1 << bits) - 1
    j = home_slot(key, bits)
    while table[j, 0] != key and table[j, 0] != EMPTY:
        j = (j + 1) & mask
    return j


@njit(cache=True, inline="always")
def latest_in(table: np.ndarray, j: int) -> int:
    """The latest rating-changing match time held in slot j."""
    latest = table[j, 1]
    for q in range(2, table.shape[1]):
        latest = max(latest, table[j, q])
    return latest


@njit(cache=True)
def _delete(table: np.ndarray, j: int, bits: int) -> None:
    """Empty slot j, moving later entries of its probe run back (linear-probing deletion, no
    tombstones: every remaining key stays reachable from its home slot)."""
    mask = (1 << bits) - 1
    k = j
    while True:
        k = (k + 1) & mask
        key = table[k, 0]
        if key == EMPTY:
            break
        h = home_slot(key, bits)
        # The entry at k may fill the hole at j unless its home lies cyclically in (j, k].
        if (j < k and (h <= j or h > k)) or (j > k and h <= j and h > k):
            table[j] = table[k]
            j = k
    table[j, 0] = EMPTY


@njit(cache=True)
def _purge(table: np.ndarray, now: int, window: int) -> int:
    """Delete in place every pair that is stale at `now`; returns the pairs left.

    One pass from an empty slot round the table: a deletion only moves entries of the same
    run back towards the hole, so each entry is checked once it reaches its final slot.
    """
    bits = table_bits(table)
    mask = (1 << bits) - 1
    e = 0
    while table[e, 0] != EMPTY:
        e += 1
    live = 0
    i = (e + 1) & mask
    for _ in range(table.shape[0] - 1):
        while table[i, 0] != EMPTY and now - latest_in(table, i) >= window:
            _delete(table, i, bits)
        if table[i, 0] != EMPTY:
            live += 1
        i = (i + 1) & mask
    return live


@njit(cache=True)
def _reinsert(table: np.ndarray, new: np.ndarray) -> None:
    """Copy every entry of `table` into the empty table `new`."""
    bits = table_bits(new)
    for s in range(table.shape[0]):
        if table[s, 0] != EMPTY:
            new[_find(new, table[s, 0], bits)] = table[s]


def rebuilt(
    table: np.ndarray, used: int, now: int, window: int, gc: bool, room: int = 0
) -> tuple[np.ndarray, int]:
    """(pair table, pairs in it) with room for new pairs: stale pairs purged in place (with
    `gc`: no later match ends before `now`), then, if still over a quarter full or unable to
    take `room` more pairs below half full, copied into a table twice as large or more
    (numpy-allocated, so backed by huge pages: fewer TLB misses on random probes)."""
    if gc:
        used = _purge(table, now, window)
    size = table.shape[0]

    def short(size: int) -> bool:
        return 4 * (used + 1) > size or 2 * (used + room + 1) > size

    if not short(size):
        return table, used
    while short(size):
        size *= 2
    new = np.full((size, table.shape[1]), EMPTY, dtype=np.int64)
    _reinsert(table, new)
    return new, used


@njit(cache=True)
def load_pairs(table: np.ndarray, keys: np.ndarray, times: np.ndarray) -> int:
    """Insert a saved pair state (keys and times sorted by key then time) into an empty table
    with room for all: each pair keeps its last `cap` times, newest in the last column, no
    match in the slots before. Returns the number of pairs."""
    cap = table.shape[1] - 1
    bits = table_bits(table)
    live = 0
    i = 0
    while i < keys.shape[0]:
        e = i
        while e < keys.shape[0] and keys[e] == keys[i]:
            e += 1
        j = _find(table, keys[i], bits)
        table[j, 0] = keys[i]
        table[j, 1:] = SENTINEL
        for q in range(max(i, e - cap), e):
            table[j, cap - (e - q) + 1] = times[q]
        live += 1
        i = e
    return live


@njit(cache=True)
def pair_times(table: np.ndarray, after: int) -> tuple[np.ndarray, np.ndarray]:
    """(pair key, time) of every rating-changing match time in the table later than `after`."""
    cap = table.shape[1] - 1
    k = 0
    for s in range(table.shape[0]):
        if table[s, 0] != EMPTY:
            for q in range(1, cap + 1):
                if table[s, q] > after:
                    k += 1
    keys = np.empty(k, dtype=np.int64)
    times = np.empty(k, dtype=np.int64)
    k = 0
    for s in range(table.shape[0]):
        if table[s, 0] != EMPTY:
            for q in range(1, cap + 1):
                if table[s, q] > after:
                    keys[k] = table[s, 0]
                    times[k] = table[s, q]
                    k += 1
    return keys, times


@njit(cache=True)
def keep_recent(table: np.ndarray, after: int) -> None:
    """Reduce every pair to its rating-changing match times later than `after`, oldest first
    and newest in the last column: what saving the pair state (`pair_times`) and loading it
    again (`load_pairs`) does between two periods, so that a range replay goes on exactly as
    one replay per period. A pair left without a time counts as a new pair."""
    cap = table.shape[1] - 1
    kept = np.empty(cap, dtype=np.int64)
    for s in range(table.shape[0]):
        if table[s, 0] == EMPTY:
            continue
        k = 0
        for q in range(1, cap + 1):
            t = table[s, q]
            if t > after:  # insertion sort: a pair holds at most `cap` (3) times
                at = k
                while at > 0 and kept[at - 1] > t:
                    kept[at] = kept[at - 1]
                    at -= 1
                kept[at] = t
                k += 1
        table[s, 1:] = SENTINEL
        for q in range(k):
            table[s, cap - k + 1 + q] = kept[q]
