"""`format_text`: `pl.format`'s meaning, also on the frames where `pl.format` panics."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rating_core.text import format_text

TEXTS = st.lists(st.one_of(st.none(), st.text(max_size=6)), min_size=1, max_size=20)


def with_empty_first_chunk(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` behind a piece that an eager filter then removes: its columns start with an
    empty chunk (what the PGN scanner's chunks leave after the duplicate-id filter; Polars
    keeps the empty chunk for a frame of two rows or more)."""
    stacked = pl.concat([frame.head(1), frame], rechunk=False)
    kept = pl.Series([False] + [True] * frame.height)
    return stacked.filter(kept)


@given(texts=TEXTS, data=st.data())
def test_format_text_means_what_pl_format_means(texts: list[str | None], data) -> None:
    numbers = data.draw(st.lists(st.integers(-99, 99) | st.none(), min_size=len(texts)))
    frame = pl.DataFrame(
        {"s": texts, "n": numbers[: len(texts)]}, schema={"s": pl.String, "n": pl.Int64}
    )
    reference = pl.format("id '{}' on line {}", "s", pl.col("n"))  # noqa: TID251
    ours = format_text("id '{}' on line {}", "s", pl.col("n"))
    assert frame.select(ours).to_series().to_list() == frame.select(reference).to_series().to_list()


@given(
    texts=st.lists(st.one_of(st.none(), st.text(max_size=6)), min_size=2, max_size=20),
    numbers=st.lists(st.one_of(st.none(), st.integers(-(10**6), 10**6)), min_size=2, max_size=20),
)
def test_format_text_on_a_column_whose_first_chunk_is_empty(
    texts: list[str | None], numbers: list[int | None]
) -> None:
    size = min(len(texts), len(numbers))
    frame = pl.DataFrame(
        {"s": texts[:size], "n": numbers[:size]}, schema={"s": pl.String, "n": pl.Int64}
    )
    odd = with_empty_first_chunk(frame)
    assert odd.get_column("s").n_chunks() == 2
    got = odd.select(format_text("<{}|{}>", "s", "n")).to_series().to_list()
    wanted = [
        None if s is None or n is None else f"<{s}|{n}>"
        for s, n in zip(texts[:size], numbers[:size], strict=True)
    ]
    assert got == wanted


def test_other_types_read_as_pl_format_writes_them() -> None:
    frame = pl.DataFrame(
        {
            "f": [1.5, None, -0.0],
            "b": [True, None, False],
            "d": [dt.date(2020, 1, 2), None, dt.date(1999, 12, 31)],
            "e": pl.Series(["x", None, "y"], dtype=pl.Enum(["x", "y"])),
        }
    )
    for column in frame.columns:
        reference = pl.format("[{}]", column)  # noqa: TID251
        assert frame.select(format_text("[{}]", column)).equals(frame.select(reference)), column
    assert frame.select(format_text("no placeholder")).item() == "no placeholder"


def test_placeholders_and_arguments_must_match() -> None:
    with pytest.raises(ValueError, match="2 placeholders"):
        format_text("{} and {}", "a")
