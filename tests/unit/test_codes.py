"""The replays' shared front (rating_core.codes): exact id coding and the replay order."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core import codes as coding


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


def test_dense_codes_short_and_long_strings_around_the_12_byte_view() -> None:
    values = [
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


def test_rows_where_both_zero() -> None:
    a = np.array([0, 1, 0, 0, 2], dtype=np.uint8)
    b = np.array([0, 0, 3, 0, 0], dtype=np.uint8)
    assert coding.rows_where_both_zero(a, b).tolist() == [0, 3]


def test_aligned_empty_starts_on_the_boundary() -> None:
    for align in (64, 128):
        arr = coding.aligned_empty((1000, 16), np.float64, align=align)
        assert arr.ctypes.data % align == 0
        assert arr.shape == (1000, 16) and arr.flags.c_contiguous
