"""Dense integer codes for string ids, and the replay order: the shared front of the replays.

Both sequential kernels (site Elo, FIBS) work on integer-coded arrays. Coding 20M ids with a
Polars unique + sort + join costs several seconds; hashing once (Polars) and numbering the
hashes in one numba pass is about three times faster. Every result is checked against the
strings (a hash collision falls back to the exact Polars path), so results never depend on
hashing.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def _key_codes(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense codes 0..k-1 of int64 `keys` (equal keys, equal codes) and a row of each code.

    One pass over an open-addressing table (Fibonacci hashing, linear probing, doubled at half
    load; key and code side by side so a probe touches one cache line): linear time, no sort.
    Codes follow first appearance and `first[c]` is the first row holding code c. Best when
    the distinct keys are few relative to the rows (player ids); see `key_codes_bucketed`.
    """
    n = keys.shape[0]
    bits = 10
    table = np.full((1 << bits, 2), -1, dtype=np.int64)  # [key, code]; code -1: empty
    codes = np.empty(n, dtype=np.int32)
    first = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        k = keys[i]
        mask = (1 << bits) - 1
        j = np.int64((np.uint64(k) * _GOLDEN) >> np.uint64(64 - bits))
        while True:
            c = table[j, 1]
            if c < 0:
                table[j, 0] = k
                table[j, 1] = m
                codes[i] = m
                first[m] = i
                m += 1
                break
            if table[j, 0] == k:
                codes[i] = c
                break
            j = (j + 1) & mask
        if 2 * m > (1 << bits):  # grow and re-insert every distinct key
            bits += 1
            mask = (1 << bits) - 1
            table = np.full((1 << bits, 2), -1, dtype=np.int64)
            for c2 in range(m):
                k2 = keys[first[c2]]
                j2 = np.int64((np.uint64(k2) * _GOLDEN) >> np.uint64(64 - bits))
                while table[j2, 1] >= 0:
                    j2 = (j2 + 1) & mask
                table[j2, 0] = k2
                table[j2, 1] = c2
    return codes, first[:m].copy()


@njit(cache=True)
def key_codes_bucketed(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense codes 0..k-1 of int64 `keys` (equal keys, equal codes) and a row of each code.

    For many distinct keys (pairs of players), where one big table would miss the cache on
    every probe. Linear time, no sort: the keys are first split into 256 buckets by the top bits of their
    Fibonacci hash (one counting pass, one scatter pass), then each bucket is coded with a small
    open-addressing table that stays in cache. Codes are numbered bucket by bucket; within a
    bucket rows are visited in order, so `first[c]` is the first row holding code c.
    """
    n = keys.shape[0]
    pbits = 8
    n_parts = 1 << pbits
    start = np.zeros(n_parts + 1, dtype=np.int64)
    for i in range(n):
        h = np.uint64(keys[i]) * _GOLDEN
        start[np.int64(h >> np.uint64(64 - pbits)) + 1] += 1
    for p in range(n_parts):
        start[p + 1] += start[p]
    pos = start[:n_parts].copy()
    part_rows = np.empty(n, dtype=np.int64)
    part_keys = np.empty(n, dtype=np.int64)
    for i in range(n):
        h = np.uint64(keys[i]) * _GOLDEN
        p = np.int64(h >> np.uint64(64 - pbits))
        part_rows[pos[p]] = i
        part_keys[pos[p]] = keys[i]
        pos[p] += 1
    codes = np.empty(n, dtype=np.int32)
    first = np.empty(n, dtype=np.int64)
    m = 0
    table = np.full((1 << 20, 2), -1, dtype=np.int64)  # [key, code]; code -1: empty
    for p in range(n_parts):
        lo, hi = start[p], start[p + 1]
        m0 = m
        bits = 4
        table[: 1 << bits, 1] = -1
        for q in range(lo, hi):
            k = part_keys[q]
            mask = (1 << bits) - 1
            j = np.int64((np.uint64(k) * _GOLDEN) >> np.uint64(64 - pbits - bits)) & mask
            while True:
                c = table[j, 1]
                if c < 0:
                    table[j, 0] = k
                    table[j, 1] = m
                    codes[part_rows[q]] = m
                    first[m] = part_rows[q]
                    m += 1
                    break
                if table[j, 0] == k:
                    codes[part_rows[q]] = c
                    break
                j = (j + 1) & mask
            if 2 * (m - m0) > (1 << bits):  # grow and re-insert the bucket's distinct keys
                bits += 1
                if (1 << bits) > table.shape[0]:
                    table = np.full((1 << bits, 2), -1, dtype=np.int64)
                mask = (1 << bits) - 1
                table[: 1 << bits, 1] = -1
                for c2 in range(m0, m):
                    k2 = keys[first[c2]]
                    j2 = np.int64((np.uint64(k2) * _GOLDEN) >> np.uint64(64 - pbits - bits))
                    j2 &= mask
                    while table[j2, 1] >= 0:
                        j2 = (j2 + 1) & mask
                    table[j2, 0] = k2
                    table[j2, 1] = c2
    return codes, first[:m].copy()


def dense_codes(values: pl.Series) -> tuple[np.ndarray, pl.Series]:
    """Sorted distinct non-null `values` and the int32 code of each value in them (-1: null).

    Equivalent to `values.unique().sort()` plus a lookup, without the big sort or join: the
    values are hashed (Polars), coded in one numba pass, and only the distinct values are
    sorted. A hash collision is detected (every value is compared with the representative of
    its code) and then the exact slow path is taken, so the result never depends on hashing.
    """
    return _codes_from_keys(values, _hash_key)


def _hash_key(values: pl.Series) -> np.ndarray:
    """64-bit hash of each value (equal values, equal keys)."""
    return values.hash(seed=0x5EED).to_numpy().view(np.int64)


def _codes_from_keys(
    values: pl.Series, key_of: Callable[[pl.Series], np.ndarray]
) -> tuple[np.ndarray, pl.Series]:
    """`dense_codes` with the 64-bit key function `key_of` (tests pass a colliding one)."""
    values = values.rename("value")
    keys = key_of(values)
    if values.len() == 0:
        return np.zeros(0, dtype=np.int32), values.clear()
    keys = np.ascontiguousarray(keys).view(np.int64)
    codes, first = _key_codes(keys)
    distinct = values.gather(first)
    if not values.eq_missing(distinct.gather(codes)).all():  # a collision: exact path
        sorted_ids = values.drop_nulls().unique().sort()
        table = pl.DataFrame({"value": sorted_ids}).with_row_index("idx")
        joined = values.to_frame().join(table, on="value", how="left", maintain_order="left")
        return joined["idx"].fill_null(-1).cast(pl.Int32).to_numpy(), sorted_ids
    # The distinct values are now known to hash apart: sort them (a plain string sort is much
    # cheaper than an arg_sort) and find each one's position by coding [sorted, distinct].
    ordered = distinct.sort(nulls_last=True)
    k = ordered.len() - ordered.null_count()  # a null sorts last and gets code -1
    both, _ = _key_codes(np.concatenate([key_of(ordered), keys[first]]))
    position = np.empty(ordered.len(), dtype=np.int32)  # code -> position in `ordered`
    position[both[: ordered.len()]] = np.arange(ordered.len(), dtype=np.int32)
    rank = position[both[ordered.len() :]]
    rank[rank >= k] = -1
    return rank[codes], ordered.head(k)


def sort_permutation(keys: pl.DataFrame) -> np.ndarray | None:
    """The stable order of `keys` rows sorted by all its columns, or None if already sorted.

    Replay inputs usually arrive in time order: one vectorized comparison with the previous
    row is much cheaper than a multi-column sort (which includes a string tiebreak).
    """
    if keys.height < 2:
        return None
    in_order: pl.Expr = pl.lit(True)  # this row sorts at or after the previous one
    for name in reversed(keys.columns):
        c = pl.col(name)
        in_order = (c > c.shift()) | ((c == c.shift()) & in_order)
    no_nulls = pl.all_horizontal(pl.col(n).null_count() == 0 for n in keys.columns)
    if keys.select(in_order.slice(1).all(ignore_nulls=False) & no_nulls).item():
        return None
    return keys.select(pl.arg_sort_by(keys.columns, maintain_order=True)).to_series().to_numpy()
