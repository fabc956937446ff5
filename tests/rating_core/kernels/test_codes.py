"""The shared front (rating_core.kernels.codes): exact id coding, positions among keys, replay order."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core.kernels import codes as coding
from rating_core.kernels import intrinsics


def _reference_codes(values: pl.Series) -> tuple[list[int], list[str]]:
    ids = sorted({v for v in values.to_list() if v is not None})
    pos = {v: i for i, v in enumerate(ids)}
    return [pos[v] if v is not None else -1 for v in values.to_list()], ids


def _check(values: pl.Series) -> None:
    codes, ids = coding.dense_codes(values)
    assert codes.dtype == np.int32
    assert (codes.tolist(), ids.to_list()) == _reference_codes(values)


def test_dense_codes_are_sorted_ranks_and_null_is_minus_one() -> None:
    _check(pl.Series(["p10", "p9", None, "bot", "p10", "é", "p9", "p1"], dtype=pl.String))


_AROUND_THE_VIEW = [
    "",
    "a",
    "ab",
    "ab\x00",  # same bytes as "ab" once padded with zeros: only the length differs
    "abcd",
    "abcde",
    "123456789012",  # 12 bytes: inline in the Arrow view
    "1234567890123",  # 13 bytes: stored out of line, keyed by a hash
    "1234567890124",
    "a much longer identifier, well past twelve bytes",
    "ğüşiöç",  # multi-byte UTF-8
    "ğüşiöçx",
]


def test_dense_codes_short_and_long_strings_around_the_12_byte_view() -> None:
    values = _AROUND_THE_VIEW
    _check(pl.Series(values * 3 + [None] + values[::-1]))


def test_dense_codes_across_chunks_and_slices() -> None:
    a = pl.Series([f"player-{i % 50:04d}-long-suffix" for i in range(300)])
    b = pl.Series([f"p{i % 70}" for i in range(300)])
    c = pl.Series(["x", None, "player-0003-long-suffix", "p5"])
    values = pl.concat([a.slice(17, 200), b, c.slice(1, 3), a.head(0)])
    assert values.n_chunks() > 1
    _check(values)


def test_dense_codes_empty_and_all_null() -> None:
    codes, ids = coding.dense_codes(pl.Series([], dtype=pl.String))
    assert codes.shape == (0,) and ids.len() == 0
    _check(pl.Series([None, None], dtype=pl.String))


def test_dense_codes_many_values_grow_the_table() -> None:
    rng = np.random.default_rng(3)
    _check(pl.Series([f"p{i}" for i in rng.integers(0, 5000, 40_000)]))


def test_dense_codes_hash_collision_falls_back_to_exact_path() -> None:
    long = [f"an identifier longer than twelve bytes #{i}" for i in range(4)]
    values = pl.Series([long[1], long[0], "short", long[2], long[0], None, long[3], "short"])

    def colliding(v: pl.Series) -> np.ndarray:
        return np.zeros(v.len(), dtype=np.int64)  # every long string collides

    codes, ids = coding._dense_codes(values, colliding)
    assert (codes.tolist(), ids.to_list()) == _reference_codes(values)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.none(),
            st.text(max_size=4),
            st.text(alphabet="ab\x00é", max_size=16),
            st.sampled_from(["p1", "p10", "an id over twelve bytes", "an id over twelve bytez"]),
        ),
        max_size=60,
    )
)
def test_dense_codes_property(values: list[str | None]) -> None:
    _check(pl.Series(values, dtype=pl.String))


def _reference_positions(keys: pl.Series, values: pl.Series) -> list[int]:
    pos = {k: i for i, k in enumerate(keys.to_list()) if k is not None}
    return [pos.get(v, -1) if v is not None else -1 for v in values.to_list()]


def _colliding(v: pl.Series) -> np.ndarray:
    return np.zeros(v.len(), dtype=np.int64)  # every long string collides


def _check_positions(keys: pl.Series, values: pl.Series, colliding: bool = False) -> None:
    """Compare with the reference; without forced collisions, also check that the fast path
    gave the answer (the exact path would hide its mistakes on long strings)."""
    exact = coding._exact_positions
    used: list[bool] = []

    def spy(keys: pl.Series, values: pl.Series, name: str) -> np.ndarray:
        used.append(True)
        return exact(keys, values, name)

    coding._exact_positions = spy
    try:
        if colliding:
            positions = coding._positions_in(keys, values, _colliding)
        else:
            positions = coding.positions_in(keys, values)
    finally:
        coding._exact_positions = exact
    assert positions.dtype == np.int64
    assert positions.tolist() == _reference_positions(keys, values)
    assert colliding or not used


def _chunked(values: Sequence[str | None], cuts: list[int]) -> pl.Series:
    """`values` as a String series of several chunks, cut at `cuts`."""
    bounds = [0, *sorted(cuts), len(values)]
    parts = [pl.Series(values[a:b], dtype=pl.String) for a, b in itertools.pairwise(bounds)]
    return pl.concat(parts, rechunk=False)


def test_positions_in_short_and_long_strings_nulls_and_chunks() -> None:
    keys = _chunked([None, *_AROUND_THE_VIEW[::2], None, "p10", *_AROUND_THE_VIEW[1::4]], [3, 7])
    values = _chunked(
        [*_AROUND_THE_VIEW, None, "p10", "p1", "1234567890125", "ab\x00\x00"] * 3, [5, 20]
    )
    assert keys.n_chunks() > 1 and values.n_chunks() > 1
    _check_positions(keys, values)
    _check_positions(keys, values, colliding=True)


def test_positions_in_keys_without_nulls_and_other_dtypes() -> None:
    keys = pl.Series("player_id", [30, 10, 20, 1234567890123456])
    values = pl.Series([10, 1234567890123456, None, 99, 30, 10, 20])
    assert coding.positions_in(keys, values).tolist() == [1, 3, -1, -1, 0, 1, 2]
    _check_positions(keys.cast(pl.String), values.cast(pl.String))


def test_positions_in_empty_keys_and_values() -> None:
    empty = pl.Series([], dtype=pl.String)
    some = pl.Series(["a", None, "an id over twelve bytes"])
    _check_positions(empty, some)
    _check_positions(some, empty)
    _check_positions(empty, empty)
    _check_positions(pl.Series([None, None], dtype=pl.String), some)
    assert coding.positions_in(some, empty).shape == (0,)


def test_positions_in_duplicate_keys_raise() -> None:
    for keys in (
        ["a", None, "b", "a"],
        ["b", "b"],  # consecutive
        ["an id over twelve bytes", "x", "an id over twelve bytes"],
        ["123456789012", "123456789012"],
    ):
        for colliding in (False, True):
            key_of = _colliding if colliding else coding._hash_key
            series = _chunked(keys, [1]).rename("player_id")
            with pytest.raises(ValueError, match="duplicate player_id among the keys"):
                coding._positions_in(series, pl.Series(["a"]), key_of)
    # repeated null keys are no duplicates
    _check_positions(pl.Series([None, "a", None, "b"]), pl.Series(["b", None, "a"]))


def test_positions_in_hash_collision_is_exact() -> None:
    long = [f"an identifier longer than twelve bytes #{i}" for i in range(4)]
    # different long keys of equal hash (and first bytes): not duplicates
    keys = pl.Series([long[1], "short", long[0], None, long[3]])
    values = pl.Series([long[0], long[2], "short", None, long[3], long[1], "x"])
    _check_positions(keys, values, colliding=True)
    # only a value collides with a key: found by its hash, then told apart by its string
    keys = pl.Series(["short", long[0], None])
    values = pl.Series([long[1], long[0], "short", long[2], None])
    _check_positions(keys, values, colliding=True)
    _check_positions(keys.head(1), values, colliding=True)  # no long key: long values absent


def test_positions_in_sliced_series() -> None:
    ids = [f"p{i}" if i % 3 else f"a player id over twelve bytes #{i}" for i in range(40)]
    base = pl.Series([None, *ids, None, "zz"])
    keys = base.slice(5, 20)  # nonzero Arrow offset
    values = pl.concat([base.slice(1, 30), base.slice(17, 25)], rechunk=False)
    _check_positions(keys, values)
    _check_positions(keys, values, colliding=True)


def test_positions_in_many_values_over_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coding, "_SPLIT", 1000)  # ranges of 1000 rows, looked up on a pool
    monkeypatch.setattr(coding, "_SERIAL", 0)
    rng = np.random.default_rng(5)
    names = [f"p{i}" if i % 7 else f"a long player id #{i:06d}" for i in range(3000)]
    keys = pl.Series(names).gather(rng.permutation(3000)[:2500])
    white = pl.Series([names[i] for i in rng.integers(0, 3000, 4500)])
    black = pl.Series([names[i] if i % 50 else None for i in rng.integers(0, 3000, 6000)])
    values = pl.concat([white, black.head(3200), black.tail(2800)], rechunk=False)
    _check_positions(keys, values)
    _check_positions(keys, values, colliding=True)
    short = [f"p{i}" for i in range(3000)]  # no long string: no byte comparison behind the kernel
    _check_positions(keys.replace_strict(names, short), values.replace_strict(names, short))


_ids = st.one_of(
    st.text(max_size=4),
    st.text(alphabet="ab\x00é", max_size=16),
    st.sampled_from(
        ["123456789012", "1234567890123", "an id over twelve bytes", "an id over twelve bytez"]
    ),
)


@st.composite
def _keys_and_values(draw: st.DrawFn) -> tuple[pl.Series, pl.Series, bool]:
    keys: list[str | None] = list(draw(st.lists(_ids, unique=True, max_size=30)))
    for at in draw(st.lists(st.integers(0, len(keys)), max_size=3)):
        keys.insert(at, None)
    known = st.sampled_from(keys) if keys else st.none()
    values = draw(st.lists(st.one_of(st.none(), _ids, known, known), max_size=60))
    key_cuts = draw(st.lists(st.integers(0, len(keys)), max_size=2))
    value_cuts = draw(st.lists(st.integers(0, len(values)), max_size=3))
    return _chunked(keys, key_cuts), _chunked(values, value_cuts), draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(_keys_and_values())
def test_positions_in_property(case: tuple[pl.Series, pl.Series, bool]) -> None:
    keys, values, colliding = case
    _check_positions(keys, values, colliding)


def test_replay_order_keeps_ordered_rows_and_breaks_ties_by_id_string() -> None:
    period = np.array([0, 0, 0, 1], dtype=np.int32)
    t = np.array([5, 5, 6, 0], dtype=np.int64)
    ids = pl.Series(["g9", "g10", "g1", "g0"])
    rows = np.arange(4, dtype=np.int64)
    assert coding.replay_order(rows, period, t, ids).tolist() == [1, 0, 2, 3]  # "g10" < "g9"


def test_replay_order_sorts_by_period_then_time_then_id_stably() -> None:
    rng = np.random.default_rng(11)
    n = 500
    period = rng.integers(0, 3, n).astype(np.int32)
    t = rng.integers(0, 20, n).astype(np.int64)
    names = [None, "a", "b", "b", "c"]
    ids = pl.Series([names[i] for i in rng.integers(0, len(names), n)], dtype=pl.String)
    rows = np.flatnonzero(rng.random(n) < 0.7)
    expected = (
        pl.DataFrame({"row": rows, "p": period[rows], "t": t[rows], "id": ids.gather(rows)})
        .sort("p", "t", "id", maintain_order=True)["row"]
        .to_list()
    )  # nulls first, as a Polars sort
    assert coding.replay_order(rows.copy(), period, t, ids).tolist() == expected


@pytest.mark.parametrize(
    "periods, times",
    [
        (3, lambda rng, n: rng.integers(0, 20, n)),  # packed, µs
        (60, lambda rng, n: 1_700_000_000_000_000 + rng.integers(0, 10**6, n) * 1_000_000),  # s
        (5, lambda rng, n: rng.integers(0, 7, n) * 1000),  # packed, ms
        (2, lambda rng, n: rng.integers(-(2**62), 2**62, n)),  # too wide to pack: fallback
        (1, lambda rng, n: rng.choice(np.array([-(2**63), 2**63 - 1, 0]), n)),  # fallback
    ],
)
def test_replay_order_of_unordered_rows_packed_or_not_is_the_sort(
    periods: int, times: Callable[[np.random.Generator, int], np.ndarray]
) -> None:
    # unordered rows are sorted on (period, time, position) packed in one int64 when it fits
    # (the time in the coarsest unit that divides every time), else by a two-key arg sort
    rng = np.random.default_rng(periods)
    n = 3000
    period = rng.integers(0, periods, n).astype(np.int32)
    t = np.asarray(times(rng, n), dtype=np.int64)
    names = [None, "a", "b", "c", "a-game-id-longer-than-12-1", "a-game-id-longer-than-12-0"]
    half = [[names[i] for i in rng.integers(0, len(names), n // 2)] for _ in range(2)]
    ids = pl.concat([pl.Series(h, dtype=pl.String) for h in half], rechunk=False)  # two chunks
    rows = np.flatnonzero(rng.random(n) < 0.7)
    expected = (
        pl.DataFrame({"row": rows, "p": period[rows], "t": t[rows], "id": ids.gather(rows)})
        .sort("p", "t", "id", maintain_order=True)["row"]
        .to_list()
    )
    assert coding.replay_order(rows.copy(), period, t, ids).tolist() == expected


def test_rows_where_both_zero() -> None:
    a = np.array([0, 1, 0, 0, 2], dtype=np.uint8)
    b = np.array([0, 0, 3, 0, 0], dtype=np.uint8)
    assert coding.rows_where_both_zero(a, b).tolist() == [0, 3]


def test_one_compiled_kernel_serves_every_dtype_the_callers_pass() -> None:
    # before: bool and uint8 flags, int32 and int64 period codes were one compile each on a
    # first run (seconds of a cold start for the same machine code)
    a = np.array([0, 1, 0, 0, 2], dtype=np.uint8)
    flags = np.array([False, False, True, False, False])
    assert coding.rows_where_both_zero(a, flags).tolist() == [0, 3]
    assert coding.rows_where_both_zero(a, flags.view(np.uint8)).tolist() == [0, 3]
    a.flags.writeable = False
    assert coding.rows_where_both_zero(a, flags).tolist() == [0, 3]
    assert len(coding._rows_where_both_zero.signatures) == 1
    ids = pl.Series(["b", "a", "c"])
    t = np.array([5, 5, 7], dtype=np.int64)
    for dtype in (np.int32, np.int64):
        for writable in (True, False):  # Polars' zero-copy exports are read-only
            rows = np.arange(3, dtype=np.int64)
            period = np.zeros(3, dtype=dtype)
            period.flags.writeable = writable
            assert coding.replay_order(rows, period, t, ids).tolist() == [1, 0, 2]
    assert len(coding._order_scan.signatures) == 1
    assert len(coding._tie_groups.signatures) == 1


def test_aligned_empty_starts_on_the_boundary() -> None:
    for align in (64, 128):
        arr = intrinsics.aligned_empty((1000, 16), np.float64, align=align)
        assert arr.ctypes.data % align == 0
        assert arr.shape == (1000, 16) and arr.flags.c_contiguous
