"""Dense integer codes for string ids, positions among unique keys and the replay order: the
shared front of the replays and of the FIDE lists.

Both sequential kernels (site Elo, FIBS) work on integer-coded arrays. Strings are coded in one
numba pass over Polars' Arrow string views, with no copy: a string of at most 12 bytes is stored
inside its 16-byte view, so the view itself is an exact key (no hashing risk); a longer string
is keyed by its first bytes and a 64-bit hash, and every such row is then compared with the
string of its code (a collision takes the exact Polars path). Results never depend on hashing.
The hash table, like the replays' state, is probed with software prefetches a few rows ahead,
so the cache misses of consecutive rows overlap instead of queueing.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl
from numba import njit

from rating_core.kernels.arrays import readonly
from rating_core.kernels.intrinsics import available_cpus, prefetch, table_bits

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xC2B2AE3D27D4EB4F)
_LOW32 = np.uint64(0xFFFFFFFF)
_INLINE = 12  # Arrow string views hold strings of up to 12 bytes inline
_AHEAD = 16  # rows between a prefetch and its use in the coding pass


# --- string keys and the coding pass ----------------------------------------------------------

# A key is two uint64 words. An inline string's key is its view (length in the low 32 bits of
# the first word, up to 4 bytes above it, 8 more bytes in the second word) with unused bytes
# zeroed; a long string's key is (first 4 bytes << 32 | _LONG, 64-bit hash of the string). The
# low 32 bits of a key's first word are thus at most 15, so a table slot stores the code in
# bits 4..31 of that word: one 16-byte slot per key (a 1M-id table is 32 MB, not 64).
_LONG = np.uint64(15)
_CODE_SHIFT = np.uint64(4)
_CODE_MASK = np.uint64((1 << 28) - 1)
_KEY_MASK = ~(_CODE_MASK << _CODE_SHIFT)
_FREE = np.uint64(0xFFFFFFFFFFFFFFFF)  # an empty slot's first word
MAX_CODES = (1 << 28) - 2  # distinct strings a table can code (the code field, minus _FREE)


@njit(cache=True, inline="always")
def _view_key(v0: np.uint64, v1: np.uint64) -> tuple[np.uint64, np.uint64]:
    """The exact key of an inline string view (length, then up to 12 bytes, unused bytes
    masked to zero whatever the writer left in them)."""
    length = v0 & _LOW32
    if length <= 4:
        keep0 = np.uint64(32 + 8 * length)
        k0 = v0 if keep0 == 64 else v0 & ((np.uint64(1) << keep0) - np.uint64(1))
        return k0, np.uint64(0)
    keep1 = np.uint64(8 * (length - 4))
    k1 = v1 if keep1 == 64 else v1 & ((np.uint64(1) << keep1) - np.uint64(1))
    return v0, k1


@njit(cache=True, inline="always")
def _slot(k0: np.uint64, k1: np.uint64, bits: int) -> np.int64:
    """Table slot of a key (multiplicative hashing, top `bits` bits)."""
    h = ((k0 * _GOLDEN) ^ k1) * _MIX
    return np.int64(h >> np.uint64(64 - bits))


@njit(cache=True)
def _code_views(
    views: np.ndarray,
    nulls: np.ndarray,
    hashes: np.ndarray,
    row0: int,
    start: int,
    codes: np.ndarray,
    table: np.ndarray,
    dkeys: np.ndarray,
    first: np.ndarray,
    m: int,
) -> tuple[int, int]:
    """Code the string views `views[start:]` (one Arrow chunk; rows row0 + i overall).

    Equal keys get equal codes, numbered by first appearance; `first[c]` is the overall row of
    code c's first appearance and `dkeys[c]` its key. A null row (nulls[i], when `nulls` is not
    empty) gets -1. The table is open addressing with linear probing, one 16-byte slot per key
    (see `_LONG`), kept at most half full; each row's slot is prefetched `_AHEAD` rows early.
    A row equal to the row before reuses its code (sorted columns cost almost nothing).

    Returns (stop, m): stop is -1 when the chunk is done, else the row where the pass stopped
    because the table is half full (the caller doubles it, with `dkeys` and `first`) or, with
    `hashes` empty, because the row holds a long string (the caller hashes the chunk); the
    caller then resumes there. Growing in the caller keeps every big array a numpy allocation,
    which numpy backs with huge pages (fewer TLB misses on random probes).
    """
    n = views.shape[0]
    has_nulls = nulls.shape[0] > 0
    has_hashes = hashes.shape[0] > 0
    bits = table_bits(table)
    mask = (1 << bits) - 1
    limit = min(table.shape[0] // 2, dkeys.shape[0])
    flat = table.reshape(-1)
    prev0 = prev1 = np.uint64(0)
    prev_code = -1
    for i in range(start, n):
        a = i + _AHEAD
        if a < n and (views[a, 0] & _LOW32) <= _INLINE:
            p0, p1 = _view_key(views[a, 0], views[a, 1])
            prefetch(flat, 2 * _slot(p0, p1, bits))
        if has_nulls and nulls[i]:
            codes[row0 + i] = -1
            continue
        v0 = views[i, 0]
        if prev_code >= 0 and v0 == prev0 and views[i, 1] == prev1 and (v0 & _LOW32) <= _INLINE:
            codes[row0 + i] = prev_code  # same inline string as the row before
            continue
        if m >= limit:
            return i, m
        if (v0 & _LOW32) <= _INLINE:
            k0, k1 = _view_key(v0, views[i, 1])
        else:
            if not has_hashes:
                return i, m
            k0, k1 = (v0 & ~_LOW32) | _LONG, np.uint64(hashes[i])
        j = _slot(k0, k1, bits)
        while True:
            s0 = table[j, 0]
            if s0 == _FREE:
                table[j, 0] = k0 | (np.uint64(m) << _CODE_SHIFT)
                table[j, 1] = k1
                dkeys[m, 0] = k0
                dkeys[m, 1] = k1
                first[m] = row0 + i
                codes[row0 + i] = m
                m += 1
                break
            if (s0 & _KEY_MASK) == k0 and table[j, 1] == k1:
                codes[row0 + i] = np.int64((s0 >> _CODE_SHIFT) & _CODE_MASK)
                break
            j = (j + 1) & mask
        prev0, prev1, prev_code = v0, views[i, 1], codes[row0 + i]
    return -1, m


@njit(cache=True)
def _rehash(table: np.ndarray, dkeys: np.ndarray, m: int) -> None:
    """Insert the m distinct keys `dkeys` (codes 0..m-1) into the empty `table`."""
    bits = table_bits(table)
    mask = (1 << bits) - 1
    for c in range(m):
        j = _slot(dkeys[c, 0], dkeys[c, 1], bits)
        while table[j, 0] != _FREE:
            j = (j + 1) & mask
        table[j, 0] = dkeys[c, 0] | (np.uint64(c) << _CODE_SHIFT)
        table[j, 1] = dkeys[c, 1]


@njit(cache=True)
def _lookup_views(
    views: np.ndarray, hashes: np.ndarray, table: np.ndarray, out: np.ndarray
) -> None:
    """out[i] = the code of the (non-null, already coded) string view i in `table`."""
    bits = table_bits(table)
    mask = (1 << bits) - 1
    for i in range(views.shape[0]):
        v0 = views[i, 0]
        if (v0 & _LOW32) <= _INLINE:
            k0, k1 = _view_key(v0, views[i, 1])
        else:
            k0, k1 = (v0 & ~_LOW32) | _LONG, np.uint64(hashes[i])
        j = _slot(k0, k1, bits)
        while not ((table[j, 0] & _KEY_MASK) == k0 and table[j, 1] == k1):
            j = (j + 1) & mask
        out[i] = np.int64((table[j, 0] >> _CODE_SHIFT) & _CODE_MASK)


@njit(cache=True)
def _count_long(views: np.ndarray, nulls: np.ndarray) -> int:
    """How many non-null views of this chunk hold a string over 12 bytes."""
    has_nulls = nulls.shape[0] > 0
    k = 0
    for i in range(views.shape[0]):
        if (views[i, 0] & _LOW32) > _INLINE and not (has_nulls and nulls[i]):
            k += 1
    return k


@njit(cache=True)
def _long_rows(views: np.ndarray, nulls: np.ndarray, row0: int, out: np.ndarray, k: int) -> int:
    """Append to `out` (from k) the overall rows of this chunk holding a string over 12 bytes."""
    has_nulls = nulls.shape[0] > 0
    for i in range(views.shape[0]):
        if (views[i, 0] & _LOW32) > _INLINE and not (has_nulls and nulls[i]):
            out[k] = row0 + i
            k += 1
    return k


@njit(cache=True)
def _apply_rank(codes: np.ndarray, rank: np.ndarray) -> None:
    """codes[i] = rank[codes[i]] in place, keeping -1 (null)."""
    for i in range(codes.shape[0]):
        c = codes[i]
        if c >= 0:
            codes[i] = rank[c]


def _hash_key(values: pl.Series) -> np.ndarray:
    """64-bit hash of each value (equal values, equal keys)."""
    return values.hash(seed=0x5EED).to_numpy().view(np.int64)


def _chunk_views(chunk: pl.Series) -> np.ndarray | None:
    """The (n, 2) uint64 Arrow string views of a one-chunk String series (no copy), or None
    when this Polars does not export string views."""
    arr = chunk.to_arrow(compat_level=pl.CompatLevel.newest())
    if str(arr.type) not in ("string_view", "binary_view"):
        return None
    buf = arr.buffers()[1]
    if buf is None:
        return np.zeros((0, 2), dtype=np.uint64)
    views = np.frombuffer(buf, dtype=np.uint64).reshape(-1, 2)
    return views[arr.offset : arr.offset + len(arr)]


def dense_codes(values: pl.Series) -> tuple[np.ndarray, pl.Series]:
    """Sorted distinct non-null `values` and the int32 code of each value in them (-1: null).

    Equivalent to `values.unique().sort()` plus a lookup, without the big sort or join: one
    numba pass over the string views (several chunks, e.g. a `pl.concat` of id columns, are
    coded together without copying), then only the distinct values are sorted.
    """
    return _dense_codes(values, _hash_key)


def _dense_codes(
    values: pl.Series, key_of: Callable[[pl.Series], np.ndarray]
) -> tuple[np.ndarray, pl.Series]:
    """`dense_codes` with the 64-bit hash `key_of` for long strings (tests pass a colliding one)."""
    values = values.cast(pl.String).rename("value")
    n = values.len()
    if n == 0:
        return np.zeros(0, dtype=np.int32), values.clear()
    coded = _code_chunks(values, key_of, 1 << 10)
    if coded is None:
        return _exact_codes(values)
    codes, table, first, hashed = coded
    m = first.shape[0]
    long_rows = _hashed_rows(hashed)
    if long_rows.shape[0]:  # long strings were keyed by a hash: compare each with its code's string
        same = values.gather(long_rows).eq_missing(values.gather(first[codes[long_rows]]))
        if not same.all():
            return _exact_codes(values)
    # Sort only the distinct strings (a plain sort is much cheaper than an arg_sort), then find
    # each one's code in the table: rank[code] is the code's position in the sorted ids.
    ordered = values.gather(first).sort().rechunk()
    views = _chunk_views(ordered)
    assert views is not None
    hashes = key_of(ordered) if long_rows.shape[0] else np.zeros(0, dtype=np.int64)
    at = np.empty(m, dtype=np.int32)
    _lookup_views(views, readonly(np.ascontiguousarray(hashes).view(np.int64)), table, at)
    rank = np.empty(m, dtype=np.int32)
    rank[at] = np.arange(m, dtype=np.int32)
    _apply_rank(codes, rank)
    return codes, ordered


# A chunk of a coded series whose long strings were hashed: its views, null mask, first row.
_Hashed = tuple[np.ndarray, np.ndarray, int]


def _nulls_of(chunk: pl.Series) -> np.ndarray:
    """The null mask of a one-chunk series (empty when it holds no null)."""
    return chunk.is_null().to_numpy() if chunk.null_count() else np.zeros(0, dtype=np.bool_)


def _code_chunks(
    values: pl.Series, key_of: Callable[[pl.Series], np.ndarray], slots: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[_Hashed]] | None:
    """Code the String series `values` chunk by chunk (`_code_views`), in a table of `slots`
    slots (a power of two) at first, doubled whenever it is half full.

    Returns (codes, table, first, hashed): the int32 code of each row (-1: null), the table,
    the first row of each code, and the chunks whose long strings were keyed by `key_of`; or
    None when Polars does not export string views or past MAX_CODES // 2 distinct keys. Long
    strings are keyed by a hash: two different ones may share a code (the caller checks).
    """
    codes = np.empty(values.len(), dtype=np.int32)
    table = np.full((slots, 2), _FREE, dtype=np.uint64)
    dkeys = np.empty((slots // 2, 2), dtype=np.uint64)
    first = np.empty(slots // 2, dtype=np.int64)
    m = row0 = 0
    hashed: list[_Hashed] = []
    for chunk in values.get_chunks():
        views = _chunk_views(chunk)
        if views is None:
            return None
        nulls = _nulls_of(chunk)
        hashes = np.zeros(0, dtype=np.int64)
        stop = 0
        while stop >= 0:
            stop, m = _code_views(
                views, nulls, readonly(hashes), row0, stop, codes, table, dkeys, first, m
            )
            if stop < 0:
                break
            if 2 * m >= table.shape[0]:  # half full: double the table and the key arrays
                if m >= MAX_CODES // 2:
                    return None
                table = np.full((2 * table.shape[0], 2), _FREE, dtype=np.uint64)
                _rehash(table, dkeys, m)
                dkeys = np.concatenate([dkeys, np.empty_like(dkeys)])
                first = np.concatenate([first, np.empty_like(first)])
            else:  # a long string: key the chunk's long strings by a hash from here on
                hashes = np.ascontiguousarray(key_of(chunk)).view(np.int64)
        if hashes.shape[0]:
            hashed.append((views, nulls, row0))
        row0 += chunk.len()
    return codes, table, first[:m], hashed


def _hashed_rows(hashed: list[_Hashed]) -> np.ndarray:
    """The overall rows (int64, increasing) of the non-null long strings of `hashed` chunks."""
    n_long = sum(_count_long(views, nulls) for views, nulls, _ in hashed)
    rows = np.empty(n_long, dtype=np.int64)
    k = 0
    for views, nulls, row0 in hashed:
        k = _long_rows(views, nulls, row0, rows, k)
    return rows


def _exact_codes(values: pl.Series) -> tuple[np.ndarray, pl.Series]:
    """The exact Polars path (unique, sort, join): after a hash collision, or when Polars does
    not export string views, or past MAX_CODES distinct strings."""
    sorted_ids = values.drop_nulls().unique().sort()
    table = pl.DataFrame({"value": sorted_ids}).with_row_index("idx")
    joined = values.to_frame().join(table, on="value", how="left", maintain_order="left")
    return joined["idx"].fill_null(-1).cast(pl.Int32).to_numpy(), sorted_ids


# --- positions of values among unique keys ---------------------------------------------------

_FIND_AHEAD = 32  # rows between a prefetch and its use in the lookup pass (measured: 16-64)
_SPLIT = 1 << 20  # rows of `values` per lookup task (big chunks are split into ranges)
_SERIAL = 1 << 16  # below this many values, look them up on the calling thread


@njit(cache=True)
def _codes_to_rows(table: np.ndarray, first: np.ndarray) -> None:
    """Replace the code stored in each used slot of `table` by its row, first[code]."""
    for j in range(table.shape[0]):
        s0 = table[j, 0]
        if s0 != _FREE:
            row = np.uint64(first[(s0 >> _CODE_SHIFT) & _CODE_MASK])
            table[j, 0] = (s0 & _KEY_MASK) | (row << _CODE_SHIFT)


@njit(cache=True, nogil=True)
def _find_views(
    views: np.ndarray,
    nulls: np.ndarray,
    hashes: np.ndarray,
    start: int,
    table: np.ndarray,
    out: np.ndarray,
) -> int:
    """out[i] = the number stored with the key of string view i in `table` (read only), -1 when
    the row is null (nulls[i], when `nulls` is not empty) or its key is not in the table; for
    i from `start`. Each row's slot is prefetched `_FIND_AHEAD` rows early.

    Returns -1 when done, or, with `hashes` empty, the first row holding a long string (the
    caller hashes the rows and resumes there).
    """
    n = views.shape[0]
    has_nulls = nulls.shape[0] > 0
    has_hashes = hashes.shape[0] > 0
    bits = table_bits(table)
    mask = (1 << bits) - 1
    flat = table.reshape(-1)
    for i in range(start, n):
        a = i + _FIND_AHEAD
        if a < n:
            if (views[a, 0] & _LOW32) <= _INLINE:
                p0, p1 = _view_key(views[a, 0], views[a, 1])
                prefetch(flat, 2 * _slot(p0, p1, bits))
            elif has_hashes:
                p0 = (views[a, 0] & ~_LOW32) | _LONG
                prefetch(flat, 2 * _slot(p0, np.uint64(hashes[a]), bits))
        if has_nulls and nulls[i]:
            out[i] = -1
            continue
        v0 = views[i, 0]
        if (v0 & _LOW32) <= _INLINE:
            k0, k1 = _view_key(v0, views[i, 1])
        else:
            if not has_hashes:
                return i
            k0, k1 = (v0 & ~_LOW32) | _LONG, np.uint64(hashes[i])
        j = _slot(k0, k1, bits)
        while True:
            s0 = table[j, 0]
            if s0 == _FREE:
                out[i] = -1
                break
            if (s0 & _KEY_MASK) == k0 and table[j, 1] == k1:
                out[i] = np.int64((s0 >> _CODE_SHIFT) & _CODE_MASK)
                break
            j = (j + 1) & mask
    return -1


def positions_in(keys: pl.Series, values: pl.Series) -> np.ndarray:
    """Position (row) in `keys` of each value of `values` (int64), -1 when the value is null or
    absent from `keys`. Null keys are ignored. Duplicate non-null keys raise
    ValueError(f"duplicate {keys.name} among the keys").

    Equivalent to a left join of `values` on the keys' row index, without the join: the keys
    alone are coded into a pre-sized table (`_code_views`), whose slots then hold each key's
    row, and the chunks of `values` (big ones cut into ranges) are looked up read-only on all
    cores. Long strings are keyed by a hash; every long value found is compared with its key's
    string (a collision takes the exact Polars path), and a long value not found is absent
    (equal strings have equal hashes). Other dtypes are compared as strings. `KeyTable` keeps
    the keys' table for many lookups.
    """
    return KeyTable(keys).positions(values)


class KeyTable:
    """The keys of `positions_in` coded once, looked up by `positions` as often as needed (a
    streamed replay codes every batch's players against the range's ids)."""

    def __init__(
        self, keys: pl.Series, key_of: Callable[[pl.Series], np.ndarray] = _hash_key
    ) -> None:
        self.name = keys.name
        self.keys = keys.cast(pl.String).rename("value")
        self.key_of = key_of
        self.table: np.ndarray | None = None  # None: the exact Polars path
        n_listed = self.keys.len() - self.keys.null_count()
        if self.keys.len() > MAX_CODES:  # rows must fit the code field of a slot
            return
        slots = 1 << 10  # at most a quarter full (probes then rarely leave the first slot)
        while slots < 4 * n_listed:
            slots *= 2
        coded = _code_chunks(self.keys, key_of, slots)
        if coded is None:
            return
        _, table, first, _ = coded
        if first.shape[0] < n_listed:  # equal keys (the exact path raises), or a hash collision
            _exact_positions(self.keys, self.keys.clear(), self.name)
            return
        if first.shape[0] < self.keys.len():  # null keys: code c is not row c
            _codes_to_rows(table, first)
        self.table = table

    def positions(self, values: pl.Series) -> np.ndarray:
        """Position in the keys of each value (int64, -1 when null or absent)."""
        keys, name, key_of, table = self.keys, self.name, self.key_of, self.table
        values = values.cast(pl.String).rename("value")
        if table is None:
            return _exact_positions(keys, values, name)
        out = np.empty(values.len(), dtype=np.int64)
        tasks: list[tuple[pl.Series, np.ndarray, np.ndarray, int]] = []
        row0 = 0
        for chunk in values.get_chunks():
            views = _chunk_views(chunk)
            if views is None:
                return _exact_positions(keys, values, name)
            nulls = _nulls_of(chunk)
            for lo in range(0, chunk.len(), _SPLIT):
                hi = min(lo + _SPLIT, chunk.len())
                part = chunk.slice(lo, hi - lo)
                tasks.append((part, views[lo:hi], nulls[lo:hi], row0 + lo))
            row0 += chunk.len()

        def find(task: tuple[pl.Series, np.ndarray, np.ndarray, int]) -> _Hashed | None:
            """Look up one range; returns it as a hashed chunk when it holds long strings."""
            part, views, nulls, start = task
            hashes = np.zeros(0, dtype=np.int64)
            stop = _find_views(views, nulls, hashes, 0, table, out[start : start + views.shape[0]])
            if stop < 0:
                return None
            hashes = np.ascontiguousarray(key_of(part)).view(np.int64)
            _find_views(views, nulls, hashes, stop, table, out[start : start + views.shape[0]])
            return views, nulls, start

        workers = available_cpus()
        if values.len() < _SERIAL or workers == 1 or len(tasks) == 1:
            found = [find(task) for task in tasks]
        else:
            with ThreadPoolExecutor(min(workers, len(tasks))) as pool:
                found = list(pool.map(find, tasks))
        long_rows = _hashed_rows([h for h in found if h is not None])
        long_rows = long_rows[out[long_rows] >= 0]
        if long_rows.shape[0]:  # found by hash: compare each long value with its key's string
            same = values.gather(long_rows).eq_missing(keys.gather(out[long_rows]))
            if not same.all():
                return _exact_positions(keys, values, name)
        return out


def _positions_in(
    keys: pl.Series, values: pl.Series, key_of: Callable[[pl.Series], np.ndarray]
) -> np.ndarray:
    """`positions_in` with the 64-bit hash `key_of` for long strings (tests pass a colliding one)."""
    return KeyTable(keys, key_of).positions(values)


def _exact_positions(keys: pl.Series, values: pl.Series, name: str) -> np.ndarray:
    """The exact Polars path of `positions_in` (a left join on the keys' row index): on equal
    keys (it raises), after a hash collision, or when Polars does not export string views, or
    past MAX_CODES keys."""
    table = keys.to_frame().with_row_index("row").drop_nulls("value")
    if table["value"].n_unique() < table.height:
        raise ValueError(f"duplicate {name} among the keys")
    joined = values.to_frame().join(table, on="value", how="left", maintain_order="left")
    return joined["row"].fill_null(-1).cast(pl.Int64).to_numpy()


# --- replay order -------------------------------------------------------------------------------


def read_only(values: np.ndarray, dtype: type) -> np.ndarray:
    """`values` as a C-contiguous read-only array of `dtype` (a view when it already is one; a
    bool array is read as uint8 without a copy). numba compiles a kernel once per argument type,
    and a writable and a read-only array (Polars' zero-copy exports) are two types: kernels that
    only read get every argument through this, so one compilation serves every caller."""
    if values.dtype == np.bool_ and np.dtype(dtype) == np.uint8:
        values = values.view(np.uint8)
    view: np.ndarray = np.ascontiguousarray(values, dtype=dtype).view()
    view.flags.writeable = False
    return view


def rows_where_both_zero(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The positions i (int64, increasing) where a[i] == 0 and b[i] == 0, in two passes.

    Bool flags are read as bytes: one compilation for the site and FIBS callers, whichever
    of bool or uint8 each passes (each dtype would otherwise be a compile on a first run)."""
    return _rows_where_both_zero(read_only(a, np.uint8), read_only(b, np.uint8))


@njit(cache=True)
def _rows_where_both_zero(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`rows_where_both_zero` (the kernel)."""
    k = 0
    for i in range(a.shape[0]):
        if a[i] == 0 and b[i] == 0:
            k += 1
    out = np.empty(k, dtype=np.int64)
    k = 0
    for i in range(a.shape[0]):
        if a[i] == 0 and b[i] == 0:
            out[k] = i
            k += 1
    return out


@njit(cache=True)
def _order_scan(rows: np.ndarray, period: np.ndarray, t: np.ndarray) -> tuple[bool, int]:
    """(whether (period, t) never decreases along `rows`, how many rows tie with the previous)."""
    ordered = True
    ties = 0
    for k in range(1, rows.shape[0]):
        p0, p1 = period[rows[k - 1]], period[rows[k]]
        t0, t1 = t[rows[k - 1]], t[rows[k]]
        if p1 < p0 or (p1 == p0 and t1 < t0):
            ordered = False
        elif p1 == p0 and t1 == t0:
            ties += 1
    return ordered, ties


@njit(cache=True)
def _tie_groups(rows: np.ndarray, period: np.ndarray, t: np.ndarray, ties: int) -> tuple:
    """Positions in `rows` that belong to a run of equal (period, t), and a run number each."""
    pos = np.empty(2 * ties, dtype=np.int64)
    grp = np.empty(2 * ties, dtype=np.int64)
    k = 0
    g = -1
    for i in range(1, rows.shape[0]):
        a, b = rows[i - 1], rows[i]
        if period[a] == period[b] and t[a] == t[b]:
            if k == 0 or pos[k - 1] != i - 1:  # a new run starts at i - 1
                g += 1
                pos[k] = i - 1
                grp[k] = g
                k += 1
            pos[k] = i
            grp[k] = g
            k += 1
    return pos[:k], grp[:k]


def replay_order(rows: np.ndarray, period: np.ndarray, t: np.ndarray, ids: pl.Series) -> np.ndarray:
    """`rows` sorted by (period[row], t[row], ids[row]), stably (may reorder `rows` in place).

    `period` and `t` are integer keys over all rows (period codes in period order, times in
    µs); the string `ids` only break ties. Replay inputs usually arrive in time order: one scan
    then finds the rows already ordered and only the runs of equal (period, t) are sorted by id.
    Otherwise the integer keys are sorted first (stable; `_key_order`), then the runs.
    """
    if rows.shape[0] < 2:
        return rows
    # one type for every caller (int32 period codes, int64 times, read-only or not): one compile
    period = read_only(period, np.int64)
    t = read_only(t, np.int64)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    ordered, ties = _order_scan(read_only(rows, np.int64), period, t)
    if ordered:
        if ties:
            pos, grp = _tie_groups(read_only(rows, np.int64), period, t, ties)
            _sort_runs_by_id(rows, pos, grp, ids)
        return rows
    perm, keys = _key_order(period[rows], t[rows])
    rows = rows[perm]
    if keys is None:  # unpacked: scan the sorted rows for ties
        _, ties = _order_scan(read_only(rows, np.int64), period, t)
        if ties:
            pos, grp = _tie_groups(read_only(rows, np.int64), period, t, ties)
            _sort_runs_by_id(rows, pos, grp, ids)
        return rows
    tied = keys[1:] == keys[:-1]  # the sorted keys say where runs of equal (period, t) are
    if tied.any():
        in_run = np.zeros(rows.shape[0], dtype=np.bool_)
        in_run[1:] = tied
        in_run[:-1] |= tied
        pos = np.flatnonzero(in_run)
        _sort_runs_by_id(rows, pos, keys[pos], ids)  # a run's key identifies it
    return rows


def _sort_runs_by_id(rows: np.ndarray, pos: np.ndarray, grp: np.ndarray, ids: pl.Series) -> None:
    """Sort, in place and stably, each run of rows[pos] (runs: equal `grp`, increasing along
    `pos`) by the ids of its rows."""
    ids = ids.rechunk() if ids.n_chunks() > 1 else ids  # a gather from chunks is ~10x slower
    sub = pl.DataFrame({"g": grp, "id": ids.gather(rows[pos])})
    within = sub.select(pl.arg_sort_by("g", "id", maintain_order=True)).to_series().to_numpy()
    rows[pos] = rows[pos[within]]


_TIME_UNITS = (1_000_000, 1_000)  # whole seconds, whole milliseconds (times are in µs)


def _key_order(period: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The stable permutation that sorts the int64 pairs (period[i], t[i]), and the sorted
    pairs as one int64 each (equal pairs, equal values), or None on the fallback path.

    Each pair and its position are packed into one int64 (period, then time in the coarsest
    unit that divides every time, then position), so one sort of distinct integers gives the
    order, ties broken by position: several times cheaper than a two-key stable arg sort,
    which is the fallback when the packed value would not fit in 63 bits.
    """
    n = period.shape[0]
    p_lo, t_lo = int(period.min()), int(t.min())
    p_span, t_span = int(period.max()) - p_lo + 1, int(t.max()) - t_lo + 1
    row_bits = max(n - 1, 1).bit_length()
    if t_span < 1 << 63:
        dt = t - t_lo
        unit = next((u for u in _TIME_UNITS if t_span > u and not (dt % u).any()), 1)
        t_span = (t_span - 1) // unit + 1
        if (p_span * t_span) << row_bits < 1 << 63:
            if unit > 1:
                dt //= unit
            key = ((period - p_lo) * t_span + dt) << row_bits
            key |= np.arange(n, dtype=np.int64)
            packed = pl.Series(key).sort().to_numpy()
            return packed & ((1 << row_bits) - 1), packed >> row_bits
    keys = pl.DataFrame({"p": period, "t": t})
    perm = keys.select(pl.arg_sort_by("p", "t", maintain_order=True)).to_series().to_numpy()
    return perm, None
