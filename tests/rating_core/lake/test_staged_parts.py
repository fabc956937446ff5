"""Streamed Parquet files (`StagedParts.append`): what is written reads back as it was given,
whatever the column types, and only the columns a dictionary page holds are dictionary-encoded."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rating_core import tables
from rating_core.lake.storage import DICTIONARY_PAGE_BYTES, StagedParts, read_table

HISTORY = tables.history("site")


def _staged(lake: Path, *batches: pl.DataFrame) -> Path:
    """The file of period 2024-01 of the site history, streamed from `batches`."""
    staged = StagedParts(lake)
    for batch in batches:
        staged.append(HISTORY, "2024-01", batch)
    (path,) = staged.commit()
    return path


def _encodings(path: Path) -> dict[str, set[str]]:
    """Each column's encodings, over every row group of a file."""
    metadata = pq.ParquetFile(path).metadata
    found: dict[str, set[str]] = {}
    for group in range(metadata.num_row_groups):
        for column in range(metadata.num_columns):
            chunk = metadata.row_group(group).column(column)
            found.setdefault(chunk.path_in_schema, set()).update(chunk.encodings)
    return found


def test_every_kind_of_column_reads_back_as_written(tmp_path: Path) -> None:
    """Strings and binaries (passed to Arrow as views), enums, categoricals, lists, structs,
    nulls and numbers, over two batches (the second cast to the first's schema)."""
    first = pl.DataFrame(
        {
            "game_id": ["g1", None, "g3"],
            "number": pl.Series(["blitz", "elo", "blitz"], dtype=pl.Enum(["elo", "blitz"])),
            "kind": pl.Series(["a", "b", None], dtype=pl.Categorical),
            "raw": [b"x", None, b"zz"],
            "moves": [[1, 2], None, []],
            "pair": [{"a": 1, "b": "x"}, None, {"a": 3, "b": None}],
            "nothing": [None, None, None],
            "rating": [1500.5, None, 1400.0],
            "played_at": pl.Series([1, 2, 3]).cast(pl.Datetime("us", "UTC")),
        }
    )
    second = first.reverse().with_columns(pl.col("game_id").str.to_uppercase())
    _staged(tmp_path, first, second)
    back = read_table(tmp_path, HISTORY, ["2024-01"]).collect().drop("period")
    expected = pl.concat([first, second]).with_columns(pl.col("kind").cast(pl.String))
    assert back.with_columns(pl.col("kind").cast(pl.String)).equals(expected)
    assert back.schema["number"] == first.schema["number"]


def test_ids_are_written_plainly_and_few_values_in_a_dictionary(tmp_path: Path) -> None:
    """A column of distinct ids whose values overflow a dictionary page is written plainly
    from the start; a period or a number, a handful of values, keeps its dictionary."""
    rows = 100_000
    ids = [f"game-{n:012d}" for n in range(rows)]
    assert rows * len(ids[0]) > DICTIONARY_PAGE_BYTES
    batch = pl.DataFrame(
        {"game_id": ids, "number": ["elo", "blitz"] * (rows // 2), "rating": [1500.0] * rows}
    )
    path = _staged(tmp_path, batch)
    encodings = _encodings(path)
    assert "RLE_DICTIONARY" not in encodings["game_id"]
    assert "RLE_DICTIONARY" in encodings["number"]
    assert pl.read_parquet(path).equals(batch)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.text(max_size=20)), min_size=1, max_size=40),
    st.integers(min_value=1, max_value=4),
)
def test_strings_round_trip_in_any_batches(
    tmp_path_factory: pytest.TempPathFactory,
    values: list[str | None],
    batches: int,
) -> None:
    """Any strings (empty, long, non-ASCII, nulls), split into any batches, read back equal."""
    lake = tmp_path_factory.mktemp("lake")
    frame = pl.DataFrame({"player_id": values}, schema={"player_id": pl.String})
    size = -(-frame.height // batches)
    parts = [frame.slice(start, size) for start in range(0, frame.height, size)]
    back = pl.read_parquet(_staged(lake, *parts))
    assert back.equals(frame)
